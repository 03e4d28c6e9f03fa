//go:build bench

package benchmark

import "testing"

// TestRatioTargetMet: a "≤ X× OCM's…" target is met when the ratio is at most X; other targets and figures
// without a ratio have no verdict. Run with `go test -tags bench -run TestRatioTargetMet ./test/benchmark/`.
func TestRatioTargetMet(t *testing.T) {
	r := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		target string
		ratio  *float64
		want   string
	}{
		{"≤ 0.6× OCM's", r(0.58), "yes"},
		{"≤ 0.6× OCM's, flat in Secrets", r(0.61), "no"},
		{"≤ 0.4× OCM's (idle machine)", r(0.4), "yes"},
		{"≤ OCM's", r(0.5), ""},
		{"≤ 5 s and below OCM's", r(0.5), ""},
		{"≤ 0.6× OCM's", nil, ""},
	} {
		if got := ratioTargetMet(&figure{Target: c.target, Ratio: c.ratio}); got != c.want {
			t.Errorf("ratioTargetMet(%q, %v) = %q, want %q", c.target, c.ratio, got, c.want)
		}
	}
}

// TestSetScaleRequests: each kind's per-agent counts of a batch size land in one table, a later call for the
// same kind replaces that kind's column, and batch sizes stay sorted.
func TestSetScaleRequests(t *testing.T) {
	rep := &report{}
	rep.setScaleRequests(50, ours, map[string]float64{"get leases": 1})
	rep.setScaleRequests(10, ours, map[string]float64{"get managedclusters": 1, "create events": 0.5})
	rep.setScaleRequests(10, ocm, map[string]float64{"create events": 1.2})
	rep.setScaleRequests(10, ours, map[string]float64{"get managedclusters": 2})
	if len(rep.ScaleRequests) != 2 || rep.ScaleRequests[0].N != 10 || rep.ScaleRequests[1].N != 50 {
		t.Fatalf("batches = %+v, want N=10 then N=50", rep.ScaleRequests)
	}
	rows := map[string]breakdownRow{}
	for _, row := range rep.ScaleRequests[0].Rows {
		rows[row.Request] = row
	}
	if len(rows) != 2 || rows["get managedclusters"].Ours != 2 || rows["create events"].Ours != 0 || rows["create events"].OCM != 1.2 {
		t.Errorf("N=10 rows = %+v, want ours' second counts and OCM's events", rep.ScaleRequests[0].Rows)
	}
}
