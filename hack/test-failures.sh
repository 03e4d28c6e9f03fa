#!/usr/bin/env bash
# Prints, from a `go test` log (not -v), each failed test's and subtest's name and its own messages (the
# file.go:line lines, cut to 400 characters; their continuation lines and the component log tails the test framework
# adds are left out), then the failed packages and any panic: what a reader of a long log's last
# lines needs to know which test failed and why.
# Usage: hack/test-failures.sh LOG
set -euo pipefail
log="${1:?usage: hack/test-failures.sh LOG}"
awk '
	/^ *--- FAIL: / {
		print
		match($0, /^ */)
		msg = sprintf("%" (RLENGTH + 4) "s", "")
		next
	}
	msg != "" && index($0, msg) == 1 {
		rest = substr($0, length(msg) + 1)
		if (rest ~ /^[A-Za-z0-9_]+\.go:[0-9]+: / && rest !~ /^process\.go:[0-9]+: log /) print substr($0, 1, 400)
		next
	}
	{ msg = "" }
	/^(FAIL|panic:)/ { print }
' "$log"
