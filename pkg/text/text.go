// Package text holds the text forms the agent and the replicator put in statuses, conditions and events: a
// message cut to an API length limit, a time, an error. They live here once so that every status and event
// writes them alike.
package text

import (
	"time"
	"unicode/utf8"
)

// truncatedMarker ends a message Truncate has cut.
const truncatedMarker = "..."

// Truncate returns s if it has at most n bytes; otherwise s cut so that, with "..." appended, it has at most
// n bytes. The cut falls on a UTF-8 character boundary, so the result stays valid UTF-8 when s is. n is a byte
// count, e.g. a CRD field's maxLength (the API server counts bytes of the JSON string); n <= 3 gives the first
// n bytes (at a character boundary) with no marker, and n <= 0 gives "".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= len(truncatedMarker) {
		return s[:runeStart(s, max(n, 0))]
	}
	return s[:runeStart(s, n-len(truncatedMarker))] + truncatedMarker
}

// runeStart returns the largest i <= cut at which a UTF-8 character of s starts (0 if none does).
func runeStart(s string, cut int) int {
	for cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return cut
}

// Time formats t as RFC 3339 in UTC, e.g. "2026-03-04T05:06:07Z", the form of times in messages.
func Time(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// Error returns err's message, "" for a nil err.
func Error(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
