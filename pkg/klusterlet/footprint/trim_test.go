//go:build linux

package footprint

import (
	"os"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
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

// runTrim runs startupTrim on a fake clock, stepping it by interval until the loop returns, and returns the
// drops it reported and the fake time that passed.
func runTrim(t *testing.T, stop <-chan struct{}, window, interval time.Duration) (drops int, bytes int64, took time.Duration) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	start := clk.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		startupTrim(clk, stop, 0, window, interval, 0, func(n int64) { drops++; bytes += n })
	}()
	safety := time.After(30 * time.Second)
	for {
		select {
		case <-done:
			return drops, bytes, clk.Since(start)
		case <-safety:
			t.Fatalf("startupTrim did not return; fake time passed %s of a %s window", clk.Since(start), window)
		case <-time.After(100 * time.Microsecond):
			if clk.HasWaiters() {
				clk.Step(interval)
			}
		}
	}
}

// TestStartupTrimDropsAndKeepsRunning: with a step of 0 the trimmer drops the test binary's read-only pages at
// its readings until the window has passed on its clock; the code and read-only data still work afterwards.
func TestStartupTrimDropsAndKeepsRunning(t *testing.T) {
	drops, bytes, took := runTrim(t, make(chan struct{}), 50*time.Millisecond, time.Millisecond)
	if drops == 0 || bytes <= 0 {
		t.Fatalf("%d drops of %d bytes, want at least one of more than 0", drops, bytes)
	}
	if took < 50*time.Millisecond {
		t.Errorf("returned after %s of its clock, before its window of 50ms", took)
	}
	if s := strings.Repeat("ab", 3); s != "ababab" {
		t.Errorf("after the drops: %q", s)
	}
}

// TestStopStartupTrimEndsTheLoop: once its stop channel is closed the loop returns at its next select, and
// StopStartupTrim (which closes the package's channel) may be called more than once.
func TestStopStartupTrimEndsTheLoop(t *testing.T) {
	stopped := make(chan struct{})
	close(stopped)
	if _, _, took := runTrim(t, stopped, 10*time.Second, time.Millisecond); took >= 10*time.Second {
		t.Errorf("after stop: returned after %s of its clock, want long before its 10s window", took)
	}
	StopStartupTrim()
	StopStartupTrim()
	select {
	case <-trimStop:
	default:
		t.Error("StopStartupTrim did not close the stop channel")
	}
}
