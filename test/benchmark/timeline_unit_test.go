//go:build bench

package benchmark

import (
	"strings"
	"testing"
	"time"
)

// TestRSSTimelineKeepsStepsAndMax: rows are kept only when VmRSS moved by timelineStepKiB since the last kept
// row (either way), and the maximum is the largest VmRSS with its time even when it was not kept as a row.
func TestRSSTimelineKeepsStepsAndMax(t *testing.T) {
	var tl rssTimeline
	for _, s := range []struct {
		ms       int
		rss, hwm int64
	}{{0, 1000, 1000}, {5, 1100, 1100}, {10, 1300, 1300}, {15, 1400, 1400}, {20, 1200, 1400}, {25, 900, 1400}} {
		tl.add(rssSample{elapsed: time.Duration(s.ms) * time.Millisecond, mem: memory{RSSKiB: s.rss, PeakKiB: s.hwm}})
	}
	var kept []int64
	for _, r := range tl.rows {
		kept = append(kept, r.mem.RSSKiB)
	}
	// 1000 kept first; 1100 (+100) not; 1300 (+300) kept; 1400 (+100) not; 1200 (-100) not; 900 (-400) kept.
	if want := []int64{1000, 1300, 900}; len(kept) != len(want) || kept[0] != want[0] || kept[1] != want[1] || kept[2] != want[2] {
		t.Fatalf("rows %v, want %v", kept, want)
	}
	if tl.max.mem.RSSKiB != 1400 || tl.max.elapsed != 15*time.Millisecond {
		t.Fatalf("max %d KiB at %s, want 1400 KiB at 15ms", tl.max.mem.RSSKiB, tl.max.elapsed)
	}
	text := tl.render("test", time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC))
	for _, want := range []string{"max: VmRSS 1400 KiB (1.4 MiB; RssAnon 0, RssFile 0) at 15 ms (wall 21:00:00.015)", "last: 25 ms VmRSS 900 KiB VmHWM 1400 KiB (6 samples)", "        10       1300       1300            0            0\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("render lacks %q:\n%s", want, text)
		}
	}
}
