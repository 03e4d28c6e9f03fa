//go:build bench

package benchmark

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMergeEarlier: a partial run replaces the figures it measured and keeps the others from the earlier report,
// each with its run; a figure the run tried and could not measure keeps the earlier samples with the reason as a
// note, one it skipped keeps them silently; the run under way is not changed; the report lists both runs and
// draws the failover chart from the kept samples.
func TestMergeEarlier(t *testing.T) {
	dir := t.TempDir()
	earlier := newReport(dir, "make bench", map[string]string{"BENCH_REPS": "3"},
		map[string]string{"ours (klusterlet-failover version)": "klusterlet-failover v0 (commit 1111111, built …)"})
	earlier.Date = "2026-12-01T10:00:00Z"
	earlier.declare("join_latency", scenarioJoin, "join", "s", "")
	earlier.declare("failover_total", scenarioFailover, "failover", "s", "")
	earlier.declare("rss_peak_small", scenarioMemory, "peak", "MiB", "")
	for _, v := range []float64{1, 2, 3} {
		earlier.add("join_latency", ours, v)
		earlier.add("failover_total", ours, v*10)
		earlier.add("failover_total", ocm, v*20)
		earlier.add("rss_peak_small", ours, v*100)
	}
	earlier.method(scenarioFailover, "the failover method of the earlier run")
	earlier.declare("traffic_requests", scenarioTraffic, "requests", "req/h", "")
	earlier.add("traffic_requests", ours, 132)
	earlier.Traffic = []breakdownRow{{Request: "PUT leases", Ours: 60, OCM: 60}}
	if err := earlier.write(); err != nil {
		t.Fatal(err)
	}
	loaded, err := loadEarlier(dir)
	if err != nil || loaded == nil {
		t.Fatalf("loadEarlier: %v, %v", loaded, err)
	}

	now := newReport(dir, "BENCH_SCENARIOS=join make bench", map[string]string{"BENCH_SCENARIOS": "join"},
		map[string]string{"ours (klusterlet-failover version)": "klusterlet-failover v0 (commit 2222222, built …)"})
	now.Date = "2026-12-06T10:00:00Z"
	now.declare("join_latency", scenarioJoin, "join", "s", "")
	now.declare("failover_total", scenarioFailover, "failover", "s", "")
	now.declare("rss_peak_small", scenarioMemory, "peak", "MiB", "")
	now.add("join_latency", ours, 5)
	now.missing("failover_total", ours, skippedReason)
	now.missing("rss_peak_small", ours, "the memory scenario failed")
	now.declare("traffic_requests", scenarioTraffic, "requests", "req/h", "")
	now.missing("traffic_requests", ours, skippedReason)
	// A report of a later run (a clock off, or BENCH_MERGE_FROM) never replaces what the run under way measured.
	later := newReport(dir, "make bench", nil, nil)
	later.Date = "2026-12-07T10:00:00Z"
	later.declare("join_latency", scenarioJoin, "join", "s", "")
	later.add("join_latency", ours, 9)
	for _, f := range later.Figures {
		f.Run = later.Date
	}
	now.earlier = []*report{loaded, later}
	if err := now.write(); err != nil {
		t.Fatal(err)
	}
	merged, err := loadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	check := func(id, run string, samples []float64, note string) {
		t.Helper()
		f := merged.byID[id]
		if f == nil {
			t.Fatalf("figure %s missing from the merged report", id)
		}
		if f.Run != run || !slices.Equal(f.samples[ours], samples) {
			t.Errorf("%s: run %q, ours %v; want %q and %v", id, f.Run, f.samples[ours], run, samples)
		}
		if joined := strings.Join(f.Notes, " | "); (note == "") != (joined == "") || !strings.Contains(joined, note) {
			t.Errorf("%s: notes %q, want %q", id, joined, note)
		}
	}
	check("join_latency", now.Date, []float64{5}, "")
	check("failover_total", earlier.Date, []float64{10, 20, 30}, "")
	check("rss_peak_small", earlier.Date, []float64{100, 200, 300}, "not measured again on 2026-12-06T10:00:00Z (ours): the memory scenario failed")
	if got := merged.byID["failover_total"].samples[ocm]; !slices.Equal(got, []float64{20, 40, 60}) {
		t.Errorf("failover_total OCM samples %v, want the earlier run's", got)
	}
	var runs []string
	for _, r := range merged.Runs {
		runs = append(runs, r.Date+" "+r.Commit)
	}
	if want := []string{"2026-12-06T10:00:00Z 2222222", "2026-12-01T10:00:00Z 1111111"}; !slices.Equal(runs, want) {
		t.Errorf("runs %v, want %v", runs, want)
	}
	if len(merged.Traffic) != 1 || merged.Traffic[0].Request != "PUT leases" {
		t.Errorf("traffic breakdown %v, want the earlier run's (its figures come from it)", merged.Traffic)
	}
	if merged.Scenarios[scenarioFailover] != "the failover method of the earlier run" {
		t.Errorf("failover method %q, want the earlier run's (its figures come from it)", merged.Scenarios[scenarioFailover])
	}
	if len(now.byID["failover_total"].samples[ours]) != 0 {
		t.Error("the run under way got the earlier samples: its own would be mixed with them")
	}
	md, err := os.ReadFile(filepath.Join(dir, "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 2026-12-01 10:00 1111111 |", "| 2026-12-06 10:00 2222222 |", "## Runs", "benchmarks-charts/failover-total.svg"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("benchmarks.md lacks %q", want)
		}
	}
	svg, err := os.ReadFile(filepath.Join(dir, chartsDir, "failover-total.svg"))
	if err != nil || !strings.Contains(string(svg), "<svg") {
		t.Errorf("failover chart: %v (%d bytes)", err, len(svg))
	}
	if _, err := os.Stat(filepath.Join(dir, chartsDir, "mass-failover-cdf.svg")); !os.IsNotExist(err) {
		t.Errorf("a chart without measured figures was written (err %v)", err)
	}
}

// TestCDFChart: the mass failover's CDF is drawn from the per-cluster figure of the largest agent count, and the
// Markdown sums up its samples instead of listing them.
func TestCDFChart(t *testing.T) {
	dir := t.TempDir()
	r := newReport(dir, "make bench", nil, nil)
	r.declare(massPerClusterID(50), scenarioMassFailover, "50 per cluster", "s", "")
	r.declare(massPerClusterID(200), scenarioMassFailover, "200 per cluster", "s", "")
	r.add(massPerClusterID(50), ours, 1)
	for i := range 200 {
		r.add(massPerClusterID(200), ours, float64(i))
		r.add(massPerClusterID(200), ocm, float64(2*i))
	}
	if err := r.write(); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, chartsDir, "mass-failover-cdf.svg"))
	if err != nil || !strings.Contains(string(svg), "OCM") {
		t.Fatalf("CDF chart: %v, want one with both agents", err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "(200 samples, in benchmarks.json)") || !strings.Contains(string(md), "benchmarks-charts/mass-failover-cdf.svg") {
		t.Error("benchmarks.md neither sums up the 200 samples nor shows the CDF chart")
	}
}
