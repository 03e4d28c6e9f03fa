package failover

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

// TestDecideWorkHold walks the rules of WorkHold: when a move holds OCM's work agent on the hub left, when a
// hold carries over a move or ends with it, and what releases it on the active hub.
func TestDecideWorkHold(t *testing.T) {
	// heldOnPrimary: held on the primary for 10 minutes; the first Registered round on the active hub saw the report
	// written at 00:00.
	heldOnPrimary := func(v *View) {
		v.Memory.Hold = &WorkHold{Hub: "primary", Since: decideNow.Add(-10 * time.Minute), ReportSeen: true, Report: reportAt("00:00")}
	}
	withHubC := func(v *View) {
		v.Hubs = append(v.Hubs, HubView{Name: "hub-c", Usable: true, Probed: true, Probe: failoverv1alpha1.HubProbeReady})
	}
	// confirmed is a report written at 00:01, seen a second ago.
	confirmed := func(inStep, behind []string) func(*View) {
		return func(v *View) {
			v.Steps = HubSteps{InStep: map[string]bool{}, Behind: map[string]bool{}, Every: time.Minute,
				Report: reportAt("00:01"), SeenSince: decideNow.Add(-time.Second)}
			for _, h := range inStep {
				v.Steps.InStep[h] = true
			}
			for _, h := range behind {
				v.Steps.Behind[h] = true
			}
		}
	}
	cases := []struct {
		name        string
		view        View
		wantActions []string
		// wantHold is the hub the work agent is held on after the decision, "" for none.
		wantHold string
		// wantMessage is a substring of the WorkAgentHeld or WorkAgentReleased event's message.
		wantMessage string
		// wantDiscard and wantReport are the hold's Discard and Report after the decision.
		wantDiscard bool
		wantReport  string
		// check, when set, looks at the decision further.
		check func(*testing.T, Decision)
	}{
		{
			name:        "rule 1: a failover to a hub in step holds nothing",
			view:        decideView(onHub("primary"), lost, confirmed([]string{"hub-b"}, nil)),
			wantActions: []string{"MarkFailed primary", "Event:FailoverStarted", "Switch primary->hub-b HubConnectionLost"},
		},
		{
			name:        "rule 1: without a replicator's report nothing is held",
			view:        decideView(onHub("primary"), lost),
			wantActions: []string{"MarkFailed primary", "Event:FailoverStarted", "Switch primary->hub-b HubConnectionLost"},
		},
		{
			name: "rule 1: a failover to a hub reported behind holds the work agent on the hub left",
			view: decideView(onHub("primary"), lost, confirmed(nil, []string{"hub-b"})),
			wantActions: []string{"MarkFailed primary", "Warning:HubBehind", "Warning:WorkAgentHeld", "Event:FailoverStarted",
				"Switch primary->hub-b HubConnectionLost"},
			wantHold: "primary", wantMessage: "spec.forceSwitch: hub-b",
		},
		{
			name:        "rule 1: a failover to a hub spec.forceSwitch names holds nothing",
			view:        decideView(onHub("primary"), lost, confirmed(nil, []string{"hub-b"}), func(v *View) { v.Spec.ForceSwitch = "hub-b" }),
			wantActions: []string{"MarkFailed primary", "Warning:HubBehind", "Event:FailoverStarted", "Switch primary->hub-b HubConnectionLost"},
		},
		{
			name: "rule 1: a failover away from a hub that rejects the credentials holds them, to be discarded at the release",
			view: decideView(onHub("primary"), confirmed(nil, []string{"hub-b"}), func(v *View) {
				v.Acceptance = HubAcceptance{Observed: true, HubAcceptsClient: false, AcceptedCondition: metav1.ConditionFalse}
				v.RejectedSince = decideNow.Add(-time.Hour)
			}),
			wantActions: []string{"Warning:HubAcceptanceRevoked", "MarkFailed primary", "Warning:HubBehind", "Warning:WorkAgentHeld", "Event:FailoverStarted",
				"Switch primary->hub-b HubRejected"},
			wantHold: "primary", wantDiscard: true,
		},
		{
			name: "rule 1: a planned switch a person forced to a hub reported behind holds nothing",
			view: decideView(onHub("primary"), confirmed(nil, []string{"hub-b"}), func(v *View) {
				v.Spec.SwitchTo, v.Spec.ForceSwitch = "hub-b", "hub-b"
			}),
			wantActions: []string{"Warning:HubBehind", "Event:PlannedSwitchRequested", "Event:FailoverStarted", "Switch primary->hub-b PlannedSwitch"},
		},
		{
			name: "rule 2: a move while held keeps the hold on the same hub",
			view: decideView(onHub("hub-b"), lost, withHubC, heldOnPrimary, func(v *View) {
				hubAt(v, "primary").FailedAt = decideNow.Add(-time.Minute)
				confirmed([]string{"hub-c"}, []string{"primary"})(v)
			}),
			wantActions: []string{"MarkFailed hub-b", "Warning:WorkAgentHeld", "Event:FailoverStarted", "Switch hub-b->hub-c HubConnectionLost"},
			wantHold:    "primary", wantMessage: "stays held on hub primary",
			check: func(t *testing.T, d Decision) {
				if h := d.Memory.Hold; h.ReportSeen || h.Report != "" {
					t.Errorf("hold carried to hub-c %+v, want hub-b's report forgotten: hub-c's is seen anew", h)
				}
			},
		},
		{
			name:        "rule 2: a move to the hub held on ends the hold",
			view:        decideView(onHub("hub-b"), lost, heldOnPrimary, confirmed(nil, []string{"primary"})),
			wantActions: []string{"MarkFailed hub-b", "Warning:HubBehind", "Event:WorkAgentReleased", "Event:FailoverStarted", "Switch hub-b->primary HubConnectionLost"},
			wantMessage: "moves back to hub primary",
		},
		{
			name:        "rule 3: held while the hub held on is reported behind",
			view:        decideView(onHub("hub-b"), heldOnPrimary, confirmed(nil, []string{"primary"})),
			wantActions: []string{"ResetBackoff", "Heartbeat"},
			wantHold:    "primary",
		},
		{
			name: "rule 3: held while the report naming the hub held on in step is unconfirmed",
			view: decideView(onHub("hub-b"), heldOnPrimary, confirmed([]string{"primary"}, nil), func(v *View) {
				v.Steps.SeenSince = decideNow.Add(-time.Hour)
			}),
			wantActions: []string{"ResetBackoff", "Heartbeat"},
			wantHold:    "primary",
		},
		{
			name:        "rule 3: released once the replicator reports the hub held on in step",
			view:        decideView(onHub("hub-b"), heldOnPrimary, confirmed([]string{"primary"}, nil)),
			wantActions: []string{"ReleaseHold primary->hub-b", "Event:WorkAgentReleased"},
			wantMessage: "after a hold of 10m0s: the replicator reports hub primary in step with hub hub-b",
		},
		{
			name: "rule 3: the first Registered round records the report: one left from an earlier stay releases nothing",
			view: decideView(onHub("hub-b"), confirmed([]string{"primary"}, nil), func(v *View) {
				v.Memory.Hold = &WorkHold{Hub: "primary", Since: decideNow.Add(-time.Minute)}
			}),
			wantActions: []string{"ResetBackoff", "Heartbeat"},
			wantHold:    "primary", wantReport: reportAt("00:01"),
		},
		{
			name: "rule 3: no report is recorded before the session has seen its ManagedCluster",
			view: decideView(onHub("hub-b"), confirmed([]string{"primary"}, nil), func(v *View) {
				v.Acceptance = HubAcceptance{}
				v.Memory.Hold = &WorkHold{Hub: "primary", Since: decideNow.Add(-time.Minute)}
			}),
			wantActions: []string{"ResetBackoff", "Heartbeat"},
			wantHold:    "primary",
			check: func(t *testing.T, d Decision) {
				if d.Memory.Hold.ReportSeen {
					t.Errorf("hold %+v, want no report recorded yet", d.Memory.Hold)
				}
			},
		},
		{
			name: "rule 3: a failback to the hub held on switches, with no release first",
			view: decideView(onHub("hub-b"), heldOnPrimary, confirmed([]string{"primary"}, nil), func(v *View) {
				v.Spec.Failback = &failoverv1alpha1.FailbackSpec{Policy: failoverv1alpha1.FailbackPolicyPrimary, HealthyFor: &metav1.Duration{Duration: time.Minute}}
				hubAt(v, "primary").HealthySince = decideNow.Add(-time.Hour)
			}),
			wantActions: []string{"Event:WorkAgentReleased", "Event:FailbackStarted", "Event:FailoverStarted", "Switch hub-b->primary Failback"},
		},
		{
			name: "rule 3: held while the report naming the hub held on in step is the one the hold began with",
			view: decideView(onHub("hub-b"), confirmed([]string{"primary"}, nil), func(v *View) {
				v.Memory.Hold = &WorkHold{Hub: "primary", Since: decideNow.Add(-time.Minute), ReportSeen: true, Report: reportAt("00:01")}
			}),
			wantActions: []string{"ResetBackoff", "Heartbeat"},
			wantHold:    "primary", wantReport: reportAt("00:01"),
		},
		{
			name: "rule 3: a report without hubs-reported releases nothing",
			view: decideView(onHub("hub-b"), heldOnPrimary, func(v *View) {
				v.Steps = HubSteps{InStep: map[string]bool{"primary": true}}
			}),
			wantActions: []string{"ResetBackoff", "Heartbeat"},
			wantHold:    "primary",
		},
		{
			name: "rule 3: a planned switch that waits does not delay the release",
			view: decideView(onHub("hub-b"), heldOnPrimary, withHubC, confirmed([]string{"primary"}, []string{"hub-c"}), func(v *View) {
				v.Spec.SwitchTo = "hub-c"
			}),
			wantActions: []string{"ReleaseHold primary->hub-b", "Event:WorkAgentReleased"},
		},
		{
			name: "rule 3: the release of credentials the held-on hub rejected discards them",
			view: decideView(onHub("hub-b"), confirmed([]string{"primary"}, nil), func(v *View) {
				v.Memory.Hold = &WorkHold{Hub: "primary", Since: decideNow.Add(-time.Minute), Discard: true, ReportSeen: true, Report: reportAt("00:00")}
			}),
			wantActions: []string{"ReleaseHold(discard) primary->hub-b", "Event:WorkAgentReleased"},
		},
		{
			name: "rule 4: a restart during a hold starts on the hub the agent was on, held",
			view: decideView(func(v *View) {
				hubAt(v, "primary").HoldsCredentials = true
				v.LastActive = "hub-b"
				v.RecordedHold = &WorkHold{Hub: "primary", Since: decideNow.Add(-time.Hour)}
			}),
			wantActions: []string{"StartSession hub-b"},
			wantHold:    "primary",
		},
		{
			name: "rule 4: a recorded hold whose hub was last active ends: the Secret holds that hub's credentials",
			view: decideView(func(v *View) {
				hubAt(v, "primary").HoldsCredentials = true
				v.LastActive = "primary"
				v.RecordedHold = &WorkHold{Hub: "primary", Since: decideNow.Add(-time.Hour)}
			}),
			wantActions: []string{"StartSession primary"},
		},
		{
			name: "rule 4: a recorded hold whose release the status missed is over: the Secret holds another hub's credentials",
			view: decideView(func(v *View) {
				hubAt(v, "hub-b").HoldsCredentials = true
				v.LastActive = "hub-b"
				v.RecordedHold = &WorkHold{Hub: "primary", Since: decideNow.Add(-time.Hour)}
			}),
			wantActions: []string{"StartSession hub-b"},
		},
		{
			name: "rule 3: released when spec.forceSwitch names the active hub",
			view: decideView(onHub("hub-b"), heldOnPrimary, confirmed(nil, []string{"primary"}), func(v *View) {
				v.Spec.ForceSwitch = "hub-b"
			}),
			wantActions: []string{"ReleaseHold primary->hub-b", "Event:WorkAgentReleased"},
			wantMessage: "spec.forceSwitch names hub hub-b",
		},
		{
			name: "rule 3: released when the hub held on is no longer configured",
			view: decideView(onHub("hub-b"), func(v *View) {
				v.Memory.Hold = &WorkHold{Hub: "hub-x", Since: decideNow.Add(-time.Minute)}
			}),
			wantActions: []string{"ReleaseHold hub-x->hub-b", "Event:WorkAgentReleased"},
			wantMessage: "hub hub-x was removed from the configuration",
		},
		{
			name: "rule 3: not released while the move to the active hub is in progress",
			view: decideView(onHub("hub-b"), heldOnPrimary, confirmed([]string{"primary"}, nil), func(v *View) {
				v.Phase, v.Available = hubsession.PhaseBootstrapping, ""
				v.Memory.Switch = &Switch{From: "primary", To: "hub-b", Reason: failoverv1alpha1.FailoverReasonHubConnectionLost, Start: decideNow.Add(-time.Second)}
			}),
			wantActions: []string{"Heartbeat"},
			wantHold:    "primary",
		},
		{
			name: "a start without a session on the hub whose credentials the Secret holds ends the hold",
			view: decideView(heldOnPrimary, func(v *View) {
				hubAt(v, "primary").HoldsCredentials = true
			}),
			wantActions: []string{"StartSession primary"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(StateActive, tc.view, decideNow)
			if diff := cmp.Diff(tc.wantActions, actionList(d.Actions)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			var held string
			if d.Memory.Hold != nil {
				held = d.Memory.Hold.Hub
			}
			if held != tc.wantHold {
				t.Errorf("held on %q, want %q", held, tc.wantHold)
			}
			if h := d.Memory.Hold; h != nil && (h.Discard != tc.wantDiscard || (tc.wantReport != "" && (!h.ReportSeen || h.Report != tc.wantReport))) {
				t.Errorf("hold %+v, want Discard %t and the report %q seen", h, tc.wantDiscard, tc.wantReport)
			}
			if tc.check != nil {
				tc.check(t, d)
			}
			if tc.wantMessage != "" {
				msg := eventMessage(d, ReasonWorkAgentHeld) + eventMessage(d, ReasonWorkAgentReleased)
				if !strings.Contains(msg, tc.wantMessage) {
					t.Errorf("event message %q does not contain %q", msg, tc.wantMessage)
				}
			}
		})
	}
}

// reportAt is a hubs-reported value written at hh:mm on 2026-01-01, confirmed every minute.
func reportAt(hhmm string) string {
	return "writer=fleet,time=2026-01-01T" + hhmm + ":00Z,every=1m0s"
}

// TestBuildStatusWorkHold: the status records the hold — the hub held on, and in the condition's reason whether
// its credentials were rejected — so that a restarted agent can resume it.
func TestBuildStatusWorkHold(t *testing.T) {
	for _, discard := range []bool{false, true} {
		st := BuildStatus(&failoverv1alpha1.FailoverConfigStatus{}, StatusView{Now: decideNow, Active: "hub-b",
			Hold: &WorkHold{Hub: "primary", Since: decideNow.Add(-time.Minute), Discard: discard}})
		c := condition(*st, failoverv1alpha1.ConditionWorkAgentHeld)
		wantReason := ReasonWorkAgentHeld
		if discard {
			wantReason = ConditionReasonHeldCredentialsRejected
		}
		if st.WorkAgentHeldOn != "primary" || c == nil || c.Status != metav1.ConditionTrue || c.Reason != wantReason {
			t.Errorf("discard %t: workAgentHeldOn %q, condition %+v; want primary, True with reason %s", discard, st.WorkAgentHeldOn, c, wantReason)
		}
		st = BuildStatus(st, StatusView{Now: decideNow, Active: "hub-b"})
		if c := condition(*st, failoverv1alpha1.ConditionWorkAgentHeld); st.WorkAgentHeldOn != "" || c == nil || c.Status != metav1.ConditionFalse {
			t.Errorf("after the hold: workAgentHeldOn %q, condition %+v; want none and False", st.WorkAgentHeldOn, c)
		}
	}
}
