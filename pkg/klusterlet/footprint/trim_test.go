//go:build linux

package footprint

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestParseStatmShared: the third field of a statm line is the resident shared pages; short or non-numeric
// lines are rejected.
func TestParseStatmShared(t *testing.T) {
	cases := []struct {
		line string
		want int64
		ok   bool
	}{
		{line: "312345 13620 8801 10200 0 40000 0\n", want: 8801, ok: true},
		{line: "1 2", ok: false},
		{line: "1 2 x 4 0 5 0", ok: false},
		{line: "1 2 -3 4 0 5 0", ok: false},
		{line: "", ok: false},
	}
	for _, tc := range cases {
		got, ok := parseStatmShared(tc.line)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseStatmShared(%q) = %d, %t; want %d, %t", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

// TestShouldTrim: a drop is due once the file-backed resident set grew by step or more since the last one.
func TestShouldTrim(t *testing.T) {
	const step = 16 << 20
	if shouldTrim(10<<20, 10<<20+step-1, step) {
		t.Error("trimmed below the step")
	}
	if !shouldTrim(10<<20, 10<<20+step, step) {
		t.Error("did not trim at the step")
	}
	if shouldTrim(30<<20, 2<<20, step) {
		t.Error("trimmed after the resident set shrank")
	}
}

// TestFileResidentReadsThisProcess: the test process has file-backed resident pages (its own code).
func TestFileResidentReadsThisProcess(t *testing.T) {
	n, ok := fileResident(int64(os.Getpagesize()))
	if !ok || n <= 0 {
		t.Fatalf("fileResident = %d, %t; want > 0, true", n, ok)
	}
}

// TestStartupTrimDropsAndKeepsRunning: with a step of 0 the trimmer drops the test binary's read-only pages at
// every reading until the window ends; the code and read-only data still work afterwards.
func TestStartupTrimDropsAndKeepsRunning(t *testing.T) {
	var drops int
	var bytes int64
	start := time.Now()
	startupTrim(0, 50*time.Millisecond, time.Millisecond, 0, func(n int64) { drops++; bytes += n })
	if drops == 0 || bytes <= 0 {
		t.Fatalf("%d drops of %d bytes, want at least one of more than 0", drops, bytes)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("returned after %s, before its window of 50ms", took)
	}
	if s := strings.Repeat("ab", 3); s != "ababab" {
		t.Errorf("after the drops: %q", s)
	}
}

// TestStopStartupTrimEndsTheLoop: after StopStartupTrim (twice: it is idempotent) the loop returns at its next
// reading, long before its window. It closes the package's stop channel, so it runs last in this file.
func TestStopStartupTrimEndsTheLoop(t *testing.T) {
	StopStartupTrim()
	StopStartupTrim()
	start := time.Now()
	startupTrim(0, 10*time.Second, time.Millisecond, 0, nil)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("returned after %s, want at once", took)
	}
}
