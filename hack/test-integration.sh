#!/usr/bin/env bash
# Runs the integration suites (test/integration/...) in lanes: the packages of one lane one after the other
# (-p 1: each starts several apiservers, and the machine has 2 cores), the lanes at once. The node suite waits
# most of its time on the kubelet and containerd (pods starting, Secret volumes refreshed), so its lane, with
# the two short suites and the klusterlet suite, runs beside the replicator and failover suites, which keep the
# CPU busy with control planes and failover timing; the lanes end within minutes of each other. Each lane's `go test` output is printed whole when the
# lane ends (never interleaved), so a reader or hack/test-failures.sh finds each package's result in one block.
# Exits 1 when a package of any lane fails, after every lane has ended; every package of the tree must be in
# exactly one lane (checked first, so a new suite cannot be left out).
# Usage: KUBEBUILDER_ASSETS=<dir> hack/test-integration.sh   (GO, INTEGRATION_TIMEOUT: as in the Makefile)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO="${GO:-go}"
timeout="${INTEGRATION_TIMEOUT:-40m}"
module="$("$GO" list -m)"

# The lanes, as package directories under test/integration; "util" holds no tests.
lanes=(
	"replicator failover manifests"
	"node agent testbed klusterlet"
)
helpers=(util)

want="$(for l in "${lanes[@]}" "${helpers[@]}"; do printf '%s\n' $l; done | sort)"
have="$("$GO" list ./test/integration/... | sed "s|^${module}/test/integration/||" | sort)"
if [[ "$want" != "$have" ]]; then
	echo "hack/test-integration.sh: the lanes name $(echo $want), the tree has $(echo $have): put each package in one lane" >&2
	exit 1
fi

dir="$(mktemp -d)"
printed=()
finish() {
	# A run cut short (a signal, a timeout) still shows what its lanes wrote.
	for i in "${!lanes[@]}"; do
		if [[ -z "${printed[$i]:-}" && -s "$dir/lane$i.log" ]]; then
			echo "== integration lane $((i + 1)) did not end: its output so far"
			cat "$dir/lane$i.log"
		fi
	done
	rm -rf "$dir"
}
trap finish EXIT
# Ctrl-C or a kill stops the lanes too (background jobs of a script ignore SIGINT otherwise).
trap 'trap - INT TERM; kill 0' INT TERM
for i in "${!lanes[@]}"; do
	pkgs=()
	for p in ${lanes[$i]}; do pkgs+=("./test/integration/$p/"); done
	echo "== integration lane $((i + 1)): ${lanes[$i]}"
	# The exit status is written whole, then moved into place: the loop below never reads half of it.
	( rc=0; "$GO" test -count=1 -p 1 -timeout "$timeout" "${pkgs[@]}" > "$dir/lane$i.log" 2>&1 || rc=$?
	  echo "$rc" > "$dir/lane$i.rc.tmp" && mv "$dir/lane$i.rc.tmp" "$dir/lane$i.rc" ) &
done

failed=0
remaining=("${!lanes[@]}")
while ((${#remaining[@]} > 0)); do
	# Print each lane as soon as it ends, whichever ends first.
	sleep 2
	next=()
	for i in "${remaining[@]}"; do
		if [[ -f "$dir/lane$i.rc" ]]; then
			echo "== integration lane $((i + 1)) ended (exit $(cat "$dir/lane$i.rc")): ${lanes[$i]}"
			cat "$dir/lane$i.log"
			printed[$i]=1
			[[ "$(cat "$dir/lane$i.rc")" == 0 ]] || failed=1
		else
			next+=("$i")
		fi
	done
	remaining=("${next[@]+"${next[@]}"}")
done
wait
exit "$failed"
