//go:build demo

package demo

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// EnvTimelineFile names the file the demo appends its timeline to (hack/demo.sh shows that file on the terminal
// and keeps go test's whole output in the log folder).
const EnvTimelineFile = "DEMO_TIMELINE_FILE"

// timeline prints each step with the time since the demo started, to stdout and to $DEMO_TIMELINE_FILE. It is
// safe for concurrent use: watchers print from their own goroutines.
type timeline struct {
	start time.Time
	mu    sync.Mutex
	out   *os.File
}

func newTimeline(t *testing.T) *timeline {
	tl := &timeline{start: time.Now()}
	if name := os.Getenv(EnvTimelineFile); name != "" {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatalf("open the timeline file: %v", err)
		}
		t.Cleanup(func() { _ = f.Close() })
		tl.out = f
	}
	return tl
}

// step prints one line of the timeline.
func (tl *timeline) step(format string, args ...any) {
	tl.print(fmt.Sprintf("[%6.1fs] %s", time.Since(tl.start).Seconds(), fmt.Sprintf(format, args...)))
}

// detail prints an indented line under the previous step.
func (tl *timeline) detail(format string, args ...any) {
	tl.print("          " + fmt.Sprintf(format, args...))
}

// plain prints a line without the time.
func (tl *timeline) plain(format string, args ...any) { tl.print(fmt.Sprintf(format, args...)) }

func (tl *timeline) print(line string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	fmt.Println(line)
	if tl.out != nil {
		fmt.Fprintln(tl.out, line)
	}
}

// demoT is the test's testing.TB for the framework: a failure is also printed on the timeline, so that the
// terminal (which shows only the timeline) says which step failed and why.
type demoT struct {
	*testing.T
	tl *timeline
}

func (d *demoT) Fatalf(format string, args ...any) {
	d.T.Helper()
	d.tl.step("FAILED: %s", fmt.Sprintf(format, args...))
	d.T.Fatalf(format, args...)
}

func (d *demoT) Fatal(args ...any) {
	d.T.Helper()
	d.tl.step("FAILED: %s", strings.TrimSuffix(fmt.Sprintln(args...), "\n"))
	d.T.Fatal(args...)
}

func (d *demoT) Errorf(format string, args ...any) {
	d.T.Helper()
	d.tl.step("FAILED: %s", fmt.Sprintf(format, args...))
	d.T.Errorf(format, args...)
}

func (d *demoT) Error(args ...any) {
	d.T.Helper()
	d.tl.step("FAILED: %s", strings.TrimSuffix(fmt.Sprintln(args...), "\n"))
	d.T.Error(args...)
}

// lags collects replication-lag samples (write on the source hub -> seen on the other hub).
type lags struct {
	mu      sync.Mutex
	samples []time.Duration
}

func (l *lags) add(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.samples = append(l.samples, d)
}

// p99 returns the 99th percentile (nearest rank) and the number of samples; with fewer than 100 samples it is
// the maximum.
func (l *lags) p99() (time.Duration, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.samples) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), l.samples...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := (99*len(s) + 99) / 100 // ceil(0.99 n)
	return s[rank-1], len(s)
}

// seconds formats d as seconds with one decimal, or two below one second.
func seconds(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
