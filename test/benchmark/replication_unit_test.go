//go:build bench

package benchmark

import (
	"strings"
	"testing"
	"time"
)

// TestReplicationReportAuditGapNotMeasured: a standby whose audit log holds no event of the replicator in the
// change phases' window (here its log holds only later requests, as a rotated log did) has its requests per
// change reported as not measured, with the reason, and that target counts neither as met nor in the total of
// "N of M targets met"; nor does a standby whose log holds only watches there (no write, though every change is
// written to it). A standby whose log holds the phase gets its figure and verdict as before. No control plane:
// synthetic audit events. Run with `go test -tags bench -run TestReplicationReportAuditGapNotMeasured ./test/benchmark/`.
func TestReplicationReportAuditGapNotMeasured(t *testing.T) {
	start := time.Date(2026, 12, 3, 15, 50, 0, 0, time.UTC)
	from, to := start, start.Add(288*time.Second)
	ev := func(verb, resource string, at time.Time) *auditEvent {
		e := &auditEvent{Verb: verb, RequestReceivedTimestamp: at}
		e.ObjectRef = &struct {
			Resource    string `json:"resource"`
			Namespace   string `json:"namespace"`
			Name        string `json:"name"`
			Subresource string `json:"subresource"`
			APIGroup    string `json:"apiGroup"`
		}{Resource: resource}
		return e
	}
	const changes = 4
	// hub-b: one write per change in the window, and requests before and after it that must not count.
	hubB := []*auditEvent{ev("list", "manifestworks", from.Add(-time.Second)), ev("watch", "manifestworks", from.Add(-time.Second))}
	for k := 0; k < changes; k++ {
		hubB = append(hubB, ev("patch", "manifestworks", from.Add(time.Duration(k+1)*time.Second)))
	}
	hubB = append(hubB, ev("patch", "manifestworks", to), ev("list", "leases", to.Add(time.Minute)))
	// hub-c: its log starts after the phase (rotated): no event in the window at all.
	hubC := []*auditEvent{ev("patch", "managedclusters", to.Add(10*time.Minute)), ev("list", "leases", to.Add(11*time.Minute))}
	// hub-d: only watches opened in the window (logged when they closed, after the rotation), no write.
	hubD := []*auditEvent{ev("watch", "manifestworks", from.Add(time.Second)), ev("watch", "namespaces", from.Add(2*time.Second)),
		ev("create", "manifestworks", to.Add(10*time.Minute))}

	rep := (&replReportFile{}).addSize("3x4x3", "test")
	hubs := []string{"hub-b", "hub-c", "hub-d"}
	for _, hub := range hubs {
		rep.declare(changeReqsID(hub), "requests to "+hub+" per change", "requests", replPerChangeTarget, replPerChangeLimit)
	}
	var rows []replRequestRow
	for i, events := range [][]*auditEvent{hubB, hubC, hubD} {
		row, _ := phaseRequests(events, hubs[i], "changes (create, update, delete phases)", from, to)
		setRequestFigure(rep, changeReqsID(hubs[i]), &row, changes, "changes")
		rows = append(rows, row)
	}
	rep.setRequests(rows, nil)
	rep.judge()

	// hub-b: measured, 4 requests for 4 changes, met.
	if rows[0].Requests != changes || rows[0].Writes != changes || rows[0].Missing != "" {
		t.Errorf("hub-b row = %+v, want %d requests, %d writes, measured", rows[0], changes, changes)
	}
	if v, ok := rep.value(changeReqsID("hub-b")); !ok || v != 1 {
		t.Errorf("hub-b requests per change = %v (measured %v), want 1", v, ok)
	}
	if got := rep.cell(changeReqsID("hub-b")); got != "1.00 requests ✓" {
		t.Errorf("hub-b cell = %q, want %q", got, "1.00 requests ✓")
	}
	// hub-c and hub-d: not measured, with the reason, no verdict.
	for i, want := range map[int]string{1: "no audit event in the phase's window", 2: "no write among the 2 audit events in the phase's window"} {
		hub := hubs[i]
		fig := rep.figure(changeReqsID(hub))
		if fig.Value != nil || fig.Pass != nil || fig.Failed {
			t.Errorf("%s figure: value %v, pass %v, failed %v; want not measured and no verdict", hub, fig.Value, fig.Pass, fig.Failed)
		}
		if !strings.Contains(fig.Missing, want) {
			t.Errorf("%s figure's reason %q lacks %q", hub, fig.Missing, want)
		}
		if !strings.Contains(rows[i].Missing, want) {
			t.Errorf("%s row's reason %q lacks %q", hub, rows[i].Missing, want)
		}
		if got := rep.cell(changeReqsID(hub)); got != "not measured" {
			t.Errorf("%s cell = %q, want %q", hub, got, "not measured")
		}
	}

	line := rep.targetsLine()
	if !strings.HasPrefix(line, "1 of 1 targets met; not measured, counted neither way: ") {
		t.Errorf("targets line = %q, want 1 of 1 met and the others not measured", line)
	}
	for _, hub := range hubs[1:] {
		if !strings.Contains(line, "requests to "+hub+" per change (") {
			t.Errorf("targets line %q does not list %s's figure as not measured", line, hub)
		}
	}
	if strings.Contains(line, "missed") {
		t.Errorf("targets line %q counts a target not measured as missed", line)
	}

	var b strings.Builder
	rep.markdown(&b)
	md := b.String()
	for _, want := range []string{
		"| hub-b | changes (create, update, delete phases) | 288 | 4 | 0 | 0 | 4 | 0 | 0.0 |",
		"| hub-c | changes (create, update, delete phases) | 288 | not measured ² | — | — | — | — | — |",
		"² hub-c, changes (create, update, delete phases): not measured: no audit event in the phase's window",
		"- requests to hub-c per change: no audit event in the phase's window",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the size's section lacks %q:\n%s", want, md)
		}
	}
}
