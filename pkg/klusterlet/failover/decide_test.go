package failover

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

var decideNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// decideView is a view of two hubs, primary and hub-b, both usable and Ready, with no session.
func decideView(mutate ...func(*View)) View {
	v := View{
		Spec:        failoverv1alpha1.WithDefaults(failoverv1alpha1.FailoverConfigSpec{}),
		ClusterName: "cluster1",
		Hubs: []HubView{
			{Name: "primary", Usable: true, Probed: true, Probe: failoverv1alpha1.HubProbeReady},
			{Name: "hub-b", Usable: true, Probed: true, Probe: failoverv1alpha1.HubProbeReady},
		},
	}
	for _, m := range mutate {
		m(&v)
	}
	return v
}

// onHub makes hub the active one, registered on a hub that answers and accepts the cluster.
func onHub(hub string) func(*View) {
	return func(v *View) {
		v.Active = hub
		v.Phase, v.PhaseMessage = hubsession.PhaseRegistered, "registered"
		v.Acceptance = HubAcceptance{Observed: true, HubAcceptsClient: true, AcceptedCondition: metav1.ConditionTrue}
		v.Available = metav1.ConditionTrue
		v.Connectivity = ConnectivitySnapshot{TrackingSince: decideNow.Add(-time.Hour), LastSuccess: decideNow.Add(-time.Second),
			LastResponse: decideNow.Add(-time.Second), LastResponseCode: 200}
		v.Memory.LastVerdict = Verdict{Reason: ReasonHubHealthy}
		v.Memory.LastAcceptance = v.Acceptance
	}
}

// lost makes the active hub silent for longer than the connection timeout.
func lost(v *View) {
	v.Connectivity = ConnectivitySnapshot{TrackingSince: decideNow.Add(-time.Hour), LastSuccess: decideNow.Add(-10 * time.Minute),
		LastError: "dial tcp: connection refused", LastErrorTime: decideNow.Add(-time.Second)}
}

func hubAt(v *View, name string) *HubView {
	for i := range v.Hubs {
		if v.Hubs[i].Name == name {
			return &v.Hubs[i]
		}
	}
	panic("no hub " + name)
}

// actionList renders actions compactly: "Kind[ detail]", events as "Event:Reason" or "Warning:Reason".
func actionList(actions []Action) []string {
	var out []string
	for _, a := range actions {
		switch a.Kind {
		case ActEvent:
			kind := "Event"
			if a.Warning {
				kind = "Warning"
			}
			out = append(out, kind+":"+a.EventReason)
		case ActStartSession, ActRestartSession, ActStopSession, ActMarkFailed:
			out = append(out, fmt.Sprintf("%s %s", a.Kind, a.Hub))
		case ActReleaseHold:
			kind := string(a.Kind)
			if a.DiscardHeld {
				kind += "(discard)"
			}
			out = append(out, fmt.Sprintf("%s %s->%s", kind, a.HeldOn, a.Hub))
		case ActNoViable:
			if a.Warning {
				out = append(out, "NoViable(entered)")
			} else {
				out = append(out, "NoViable")
			}
		case ActSwitch, ActFinishSwitch:
			out = append(out, fmt.Sprintf("%s %s->%s %s", a.Kind, a.Switch.From, a.Switch.To, a.Switch.Reason))
		default:
			out = append(out, string(a.Kind))
		}
	}
	return out
}

// TestDecide walks every transition of State (see its doc comment) and the events and actions of each.
func TestDecide(t *testing.T) {
	switching := func(from, to string, start time.Time) func(*View) {
		return func(v *View) {
			v.Memory.Switch = &Switch{From: from, To: to, Reason: failoverv1alpha1.FailoverReasonHubConnectionLost, Message: "hub lost", Start: start}
		}
	}
	joining := func(v *View) {
		v.Phase, v.PhaseMessage = hubsession.PhaseBootstrapping, "waiting for the CSR"
		v.Available = ""
		v.Memory.LastVerdict = Verdict{}
	}
	cases := []struct {
		name         string
		state        State
		view         View
		wantNext     State
		wantActions  []string
		wantDegraded string
		// wantRecheck, when set, is the expected RecheckAfter.
		wantRecheck time.Duration
		// check, when set, checks more of the decision.
		check func(t *testing.T, d Decision)
	}{
		{
			name: "Selecting: first usable hub in order", state: StateSelecting,
			view:     decideView(func(v *View) { hubAt(v, "primary").Usable = false }),
			wantNext: StateJoining, wantActions: []string{"StartSession hub-b"},
		},
		{
			name: "Selecting: the hub the stored hub kubeconfig belongs to comes first", state: StateSelecting,
			view:     decideView(func(v *View) { hubAt(v, "hub-b").HoldsCredentials = true; v.Spec.SwitchTo = "primary" }),
			wantNext: StateJoining, wantActions: []string{"StartSession hub-b"},
		},
		{
			name: "Selecting: spec.switchTo before the order", state: StateSelecting,
			view:     decideView(func(v *View) { v.Spec.SwitchTo = "hub-b" }),
			wantNext: StateJoining, wantActions: []string{"StartSession hub-b"},
		},
		{
			name: "Selecting: no usable hub is NoViableHub", state: StateSelecting,
			view: decideView(func(v *View) {
				hubAt(v, "primary").Usable = false
				hubAt(v, "hub-b").Usable = false
			}),
			wantNext: StateNoViableHub, wantActions: []string{"NoViable(entered)"}, wantDegraded: "no hub has a usable bootstrap kubeconfig",
		},
		{
			name: "NoViableHub: still no usable hub, no second warning", state: StateNoViableHub,
			view: decideView(func(v *View) {
				hubAt(v, "primary").Usable = false
				hubAt(v, "hub-b").Usable = false
				v.Memory.Degraded = "no hub has a usable bootstrap kubeconfig"
			}),
			wantNext: StateNoViableHub, wantActions: []string{"NoViable"}, wantDegraded: "no hub has a usable bootstrap kubeconfig",
		},
		{
			name: "Selecting: a hub whose session cannot be built is not started", state: StateSelecting,
			view:     decideView(func(v *View) { hubAt(v, "primary").SessionError = "spoke client is required" }),
			wantNext: StateJoining, wantActions: []string{"StartSession hub-b"}, wantRecheck: time.Second,
		},
		{
			name: "Selecting: no session can be built anywhere is NoViableHub, with the reasons", state: StateSelecting,
			view: decideView(func(v *View) {
				hubAt(v, "primary").SessionError = "x"
				hubAt(v, "hub-b").Usable = false
			}),
			wantNext: StateNoViableHub, wantActions: []string{"NoViable(entered)"},
			wantDegraded: "no session can be started on any hub with a usable bootstrap kubeconfig: hub primary: x",
		},
		{
			name: "Joining without a session: a move whose target cannot be started failed; back to the hub of the stored credentials", state: StateJoining,
			view: decideView(switching("primary", "hub-b", decideNow.Add(-time.Second)), func(v *View) {
				hubAt(v, "hub-b").SessionError = "x"
				hubAt(v, "primary").HoldsCredentials = true
			}),
			wantNext: StateJoining, wantActions: []string{"Warning:FailoverFailed", "MarkFailed hub-b", "StartSession primary"},
			check: func(t *testing.T, d Decision) {
				if d.Memory.Switch != nil {
					t.Errorf("failed move %+v still recorded", d.Memory.Switch)
				}
			},
		},
		{
			name: "Active: the active hub was removed: its session stops, the next hub starts", state: StateActive,
			view:     decideView(onHub("hub-c")),
			wantNext: StateJoining, wantActions: []string{"StopSession hub-c", "StartSession primary"},
		},
		{
			name: "Active -> Joining: the active hub's bootstrap kubeconfig changed: the session restarts", state: StateActive,
			view: decideView(onHub("primary"), func(v *View) {
				v.ActiveBootstrapChanged = true
				v.Memory.ForcedBootstrap = true
			}),
			wantNext: StateJoining, wantActions: []string{"RestartSession primary"}, wantRecheck: time.Second,
			check: func(t *testing.T, d Decision) {
				if d.Memory.ForcedBootstrap || d.Memory.LastAcceptance.Observed {
					t.Errorf("memory of the old session kept: %+v", d.Memory)
				}
			},
		},
		{
			name: "NoViableHub: a restart on the active hub keeps NoViableHub", state: StateNoViableHub,
			view: decideView(onHub("primary"), func(v *View) {
				v.ActiveBootstrapChanged = true
				v.Memory.Degraded = "hub lost; no other hub is viable"
			}),
			wantNext: StateNoViableHub, wantActions: []string{"RestartSession primary"}, wantDegraded: "hub lost; no other hub is viable",
		},
		{
			name: "NoViableHub without a session: starts one but stays NoViableHub", state: StateNoViableHub,
			view:     decideView(func(v *View) { v.Memory.Degraded = "no hub has a usable bootstrap kubeconfig" }),
			wantNext: StateNoViableHub, wantActions: []string{"StartSession primary"}, wantDegraded: "no hub has a usable bootstrap kubeconfig",
		},
		{
			name: "Joining: bootstrapping stays Joining", state: StateJoining,
			view:     decideView(onHub("primary"), joining),
			wantNext: StateJoining, wantActions: []string{"Heartbeat"},
		},
		{
			name: "Joining -> Active: Registered and healthy clears Degraded", state: StateJoining,
			view:     decideView(onHub("primary"), func(v *View) { v.Memory.Degraded = "hub lost; no other hub is viable" }),
			wantNext: StateActive, wantActions: []string{"ResetBackoff", "Heartbeat"},
		},
		{
			name: "Active: an invalid FailoverConfig stays Degraded while the hub is healthy", state: StateActive,
			view:     decideView(onHub("primary"), func(v *View) { v.ConfigError = "FailoverConfig ns/failover is invalid: x" }),
			wantNext: StateActive, wantActions: []string{"ResetBackoff", "Heartbeat"}, wantDegraded: "FailoverConfig ns/failover is invalid: x",
			check: func(t *testing.T, d Decision) {
				if d.Degraded != "FailoverConfig ns/failover is invalid: x" || d.Memory.Degraded != "" {
					t.Errorf("Degraded %q, Memory.Degraded %q; want the FailoverConfig error in the condition only", d.Degraded, d.Memory.Degraded)
				}
			},
		},
		{
			name: "NoViableHub with an invalid FailoverConfig: both in Degraded", state: StateActive,
			view: decideView(onHub("primary"), lost, func(v *View) {
				v.Hubs = v.Hubs[:1]
				v.ConfigError = "FailoverConfig ns/failover is invalid: x"
			}),
			wantNext: StateNoViableHub, wantActions: []string{"MarkFailed primary", "NoViable(entered)"},
			check: func(t *testing.T, d Decision) {
				if !strings.HasPrefix(d.Degraded, "FailoverConfig ns/failover is invalid: x; ") || !strings.HasSuffix(d.Degraded, "no other hub is viable") {
					t.Errorf("Degraded %q", d.Degraded)
				}
			},
		},
		{
			name: "Active: healthy stays, rechecks at the connection timeout", state: StateActive,
			view:     decideView(onHub("primary")),
			wantNext: StateActive, wantActions: []string{"ResetBackoff", "Heartbeat"}, wantRecheck: DefaultHubConnectionTimeout - time.Second,
		},
		{
			name: "Active: unreachable is reported, stays until the timeout", state: StateActive,
			view: decideView(onHub("primary"), func(v *View) {
				v.Connectivity.LastError, v.Connectivity.LastErrorTime = "connection refused", decideNow
			}),
			wantNext: StateActive, wantActions: []string{"Warning:HubUnreachable", "Heartbeat"},
		},
		{
			name: "Active: acceptance revoked is reported, rejection pending", state: StateActive,
			view: decideView(onHub("primary"), func(v *View) {
				v.Acceptance.HubAcceptsClient = false
				v.RejectedSince = decideNow
			}),
			wantNext: StateActive, wantActions: []string{"Warning:HubAcceptanceRevoked", "Warning:HubRejectionPending", "Heartbeat"},
		},
		{
			name: "Active -> Joining: hub lost, next hub selected", state: StateActive,
			view:     decideView(onHub("primary"), lost, func(v *View) { v.TransportHint = " (HubCANotTrusted: x)" }),
			wantNext: StateJoining, wantActions: []string{"MarkFailed primary", "Event:FailoverStarted", "Switch primary->hub-b HubConnectionLost"},
			wantRecheck: time.Second,
			check: func(t *testing.T, d Decision) {
				if d.Memory.Switch == nil || d.Memory.Switch.To != "hub-b" || !d.Memory.Switch.Start.Equal(decideNow) {
					t.Errorf("Memory.Switch = %+v, want the move to hub-b started now", d.Memory.Switch)
				}
				if !strings.HasSuffix(d.Memory.Switch.Message, " (HubCANotTrusted: x)") {
					t.Errorf("switch message %q lacks the transport hint", d.Memory.Switch.Message)
				}
			},
		},
		{
			name: "Active -> NoViableHub: hub lost, the other hub's probe failed; the session stays", state: StateActive,
			view:     decideView(onHub("primary"), lost, func(v *View) { hubAt(v, "hub-b").Probe = failoverv1alpha1.HubProbeUnreachable }),
			wantNext: StateNoViableHub, wantActions: []string{"MarkFailed primary", "NoViable(entered)"},
			check: func(t *testing.T, d Decision) {
				if !strings.HasSuffix(d.Memory.Degraded, "; no other hub is viable") {
					t.Errorf("Degraded %q", d.Memory.Degraded)
				}
				// The lost hub itself is skipped now; the skip period's end is the next deadline.
				if want := failoverv1alpha1.DefaultFailedHubSkipPeriod; d.RecheckAfter != want {
					t.Errorf("RecheckAfter = %s, want the skip period %s", d.RecheckAfter, want)
				}
			},
		},
		{
			name: "Active -> NoViableHub: only hub answers 401, a new certificate is requested once", state: StateActive,
			view: decideView(onHub("primary"), func(v *View) {
				v.Hubs = v.Hubs[:1]
				v.Connectivity.UnauthorizedSince = decideNow.Add(-10 * time.Minute)
				v.Connectivity.LastUnauthorized, v.Connectivity.LastResponseCode = decideNow, 401
			}),
			wantNext: StateNoViableHub, wantActions: []string{"MarkFailed primary", "ForceBootstrap", "Warning:HubRejected", "NoViable(entered)"},
			check: func(t *testing.T, d Decision) {
				if !d.Memory.ForcedBootstrap {
					t.Error("ForcedBootstrap not remembered")
				}
			},
		},
		{
			name: "Active: a forced bootstrap is not asked twice", state: StateNoViableHub,
			view: decideView(onHub("primary"), func(v *View) {
				v.Hubs = v.Hubs[:1]
				v.Memory.ForcedBootstrap = true
				v.Connectivity.UnauthorizedSince = decideNow.Add(-10 * time.Minute)
				v.Connectivity.LastUnauthorized, v.Connectivity.LastResponseCode = decideNow, 401
			}),
			wantNext: StateNoViableHub, wantActions: []string{"MarkFailed primary", "NoViable"},
			check: func(t *testing.T, d Decision) {
				if !strings.Contains(d.Memory.Degraded, "has rejected this cluster") || !d.Memory.ForcedBootstrap {
					t.Errorf("Degraded %q, ForcedBootstrap %t", d.Memory.Degraded, d.Memory.ForcedBootstrap)
				}
			},
		},
		{
			name: "Active -> Joining: planned switch to a Ready hub", state: StateActive,
			view:     decideView(onHub("primary"), func(v *View) { v.Spec.SwitchTo = "hub-b" }),
			wantNext: StateJoining, wantActions: []string{"Event:PlannedSwitchRequested", "Event:FailoverStarted", "Switch primary->hub-b PlannedSwitch"},
		},
		// The replicator's report (HubSteps) on the active hub's ManagedCluster.
		{
			name: "Active -> Joining: hub lost, a hub in step beats an earlier one reported behind", state: StateActive,
			view: decideView(onHub("primary"), lost, func(v *View) {
				v.Hubs = append(v.Hubs, HubView{Name: "hub-c", Usable: true, Probed: true, Probe: failoverv1alpha1.HubProbeReady})
				v.Steps = HubSteps{InStep: map[string]bool{"hub-c": true}, Behind: map[string]bool{"hub-b": true}}
			}),
			wantNext: StateJoining, wantActions: []string{"MarkFailed primary", "Event:FailoverStarted", "Switch primary->hub-c HubConnectionLost"},
		},
		{
			name: "Active -> Joining: hub lost, only a hub reported behind is viable: moves there with a warning", state: StateActive,
			view: decideView(onHub("primary"), lost, func(v *View) {
				v.Steps = HubSteps{Behind: map[string]bool{"hub-b": true}}
			}),
			wantNext: StateJoining, wantActions: []string{"MarkFailed primary", "Warning:HubBehind", "Warning:WorkAgentHeld", "Event:FailoverStarted", "Switch primary->hub-b HubConnectionLost"},
			check: func(t *testing.T, d Decision) {
				if h := d.Memory.Hold; h == nil || h.Hub != "primary" || !h.Since.Equal(decideNow) {
					t.Errorf("Hold = %+v, want the work agent held on primary since now", h)
				}
			},
		},
		{
			name: "Active: planned switch to a hub reported behind waits, reported once", state: StateActive,
			view: decideView(onHub("primary"), func(v *View) {
				v.Spec.SwitchTo = "hub-b"
				v.Steps = HubSteps{Behind: map[string]bool{"hub-b": true}}
			}),
			wantNext: StateActive, wantActions: []string{"Event:PlannedSwitchWaiting", "Heartbeat"}, wantRecheck: plannedWaitRecheck,
			check: func(t *testing.T, d Decision) {
				if w := d.Memory.PlannedWait; w == nil || w.Target != "hub-b" || !w.Since.Equal(decideNow) {
					t.Errorf("PlannedWait = %+v, want hub-b since now", w)
				}
			},
		},
		{
			name: "Active: planned switch still waiting after an hour: no second event, no switch", state: StateActive,
			view: decideView(onHub("primary"), func(v *View) {
				v.Spec.SwitchTo = "hub-b"
				v.Steps = HubSteps{Behind: map[string]bool{"hub-b": true}}
				v.Memory.PlannedWait = &PlannedWait{Target: "hub-b", Since: decideNow.Add(-time.Hour)}
			}),
			wantNext: StateActive, wantActions: []string{"Heartbeat"}, wantRecheck: plannedWaitRecheck,
			check: func(t *testing.T, d Decision) {
				if w := d.Memory.PlannedWait; w == nil || !w.Since.Equal(decideNow.Add(-time.Hour)) {
					t.Errorf("PlannedWait = %+v, want the wait kept since an hour ago", w)
				}
			},
		},
		{
			name: "Active: failback to a primary reported behind waits", state: StateActive,
			view: decideView(onHub("hub-b"), func(v *View) {
				v.Spec.Failback = &failoverv1alpha1.FailbackSpec{Policy: failoverv1alpha1.FailbackPolicyPrimary, HealthyFor: &metav1.Duration{Duration: time.Minute}}
				hubAt(v, "primary").HealthySince = decideNow.Add(-25 * time.Hour)
				v.Steps = HubSteps{Behind: map[string]bool{"primary": true}}
				v.Memory.PlannedWait = &PlannedWait{Target: "primary", Since: decideNow.Add(-24 * time.Hour)}
			}),
			wantNext: StateActive, wantActions: []string{"Heartbeat"}, wantRecheck: plannedWaitRecheck,
		},
		{
			name: "Active: planned switch to a hub reported in step by a report unconfirmed past three intervals waits", state: StateActive,
			view: decideView(onHub("primary"), func(v *View) {
				v.Spec.SwitchTo = "hub-b"
				v.Steps = HubSteps{InStep: map[string]bool{"hub-b": true}, Report: "writer=fleet,time=2026-01-01T00:00:00Z,every=1m0s",
					Every: time.Minute, SeenSince: decideNow.Add(-3*time.Minute - time.Second)}
			}),
			wantNext: StateActive, wantActions: []string{"Event:PlannedSwitchWaiting", "Heartbeat"}, wantRecheck: plannedWaitRecheck,
			check: func(t *testing.T, d Decision) {
				if msg := eventMessage(d, ReasonPlannedSwitchWaiting); !strings.Contains(msg, "has not been confirmed for 3m1s") ||
					!strings.Contains(msg, "a running replicator confirms hub hub-b in step") {
					t.Errorf("PlannedSwitchWaiting message = %q, want the unconfirmed report named", msg)
				}
			},
		},
		{
			name: "Active -> Joining: planned switch to a hub in step by a report seen within three intervals goes ahead", state: StateActive,
			view: decideView(onHub("primary"), func(v *View) {
				v.Spec.SwitchTo = "hub-b"
				v.Steps = HubSteps{InStep: map[string]bool{"hub-b": true}, Report: "writer=fleet,time=2026-01-01T00:00:00Z,every=1m0s",
					Every: time.Minute, SeenSince: decideNow.Add(-3 * time.Minute)}
			}),
			wantNext: StateJoining, wantActions: []string{"Event:PlannedSwitchRequested", "Event:FailoverStarted", "Switch primary->hub-b PlannedSwitch"},
		},
		{
			name: "Active -> Joining: hub lost, the hub in step by an unconfirmed report ranks like one not reported", state: StateActive,
			view: decideView(onHub("primary"), lost, func(v *View) {
				// In step, hub-b never probed would beat hub-c probed Ready; unknown, it ranks with hub-c and after it.
				hubAt(v, "hub-b").Probed, hubAt(v, "hub-b").Probe = false, ""
				v.Hubs = append(v.Hubs, HubView{Name: "hub-c", Usable: true, Probed: true, Probe: failoverv1alpha1.HubProbeReady})
				v.Steps = HubSteps{InStep: map[string]bool{"hub-b": true}, Every: time.Minute, Report: "writer=fleet,time=2026-01-01T00:00:00Z,every=1m0s",
					SeenSince: decideNow.Add(-time.Hour)}
			}),
			wantNext: StateJoining, wantActions: []string{"MarkFailed primary", "Event:FailoverStarted", "Switch primary->hub-c HubConnectionLost"},
		},
		{
			name: "Active -> Joining: hub lost, a hub in step by an unconfirmed report still beats one reported behind", state: StateActive,
			view: decideView(onHub("primary"), lost, func(v *View) {
				// Unknown ranked like behind would pick hub-c (probed Ready before never probed); like not reported, hub-b.
				hubAt(v, "hub-b").Probed, hubAt(v, "hub-b").Probe = false, ""
				v.Hubs = append(v.Hubs, HubView{Name: "hub-c", Usable: true, Probed: true, Probe: failoverv1alpha1.HubProbeReady})
				v.Steps = HubSteps{InStep: map[string]bool{"hub-b": true}, Behind: map[string]bool{"hub-c": true}, Every: time.Minute,
					Report: "writer=fleet,time=2026-01-01T00:00:00Z,every=1m0s", SeenSince: decideNow.Add(-time.Hour)}
			}),
			wantNext: StateJoining, wantActions: []string{"MarkFailed primary", "Warning:HubReplicationUnknown", "Warning:WorkAgentHeld", "Event:FailoverStarted", "Switch primary->hub-b HubConnectionLost"},
		},
		{
			name: "Active: a report seen 2m30s ago brings the next look back when it goes unconfirmed", state: StateActive,
			view: decideView(onHub("primary"), func(v *View) {
				v.Steps = HubSteps{InStep: map[string]bool{"hub-b": true}, Every: time.Minute, SeenSince: decideNow.Add(-150 * time.Second)}
			}),
			wantNext: StateActive, wantActions: []string{"ResetBackoff", "Heartbeat"}, wantRecheck: 30*time.Second + time.Millisecond,
		},
		{
			name: "Active: spec.forceSwitch naming another hub forces nothing", state: StateActive,
			view: decideView(onHub("primary"), func(v *View) {
				v.Spec.SwitchTo = "hub-b"
				v.Spec.ForceSwitch = "hub-c"
				v.Steps = HubSteps{Behind: map[string]bool{"hub-b": true}}
				v.Memory.PlannedWait = &PlannedWait{Target: "hub-b", Since: decideNow.Add(-time.Hour)}
			}),
			wantNext: StateActive, wantActions: []string{"Heartbeat"}, wantRecheck: plannedWaitRecheck,
		},
		{
			name: "Active -> Joining: planned switch forced by spec.forceSwitch goes ahead, with a warning", state: StateActive,
			view: decideView(onHub("primary"), func(v *View) {
				v.Spec.SwitchTo = "hub-b"
				v.Spec.ForceSwitch = "hub-b"
				v.Steps = HubSteps{Behind: map[string]bool{"hub-b": true}}
				v.Memory.PlannedWait = &PlannedWait{Target: "hub-b", Since: decideNow.Add(-time.Hour)}
			}),
			wantNext: StateJoining, wantActions: []string{"Warning:HubBehind", "Event:PlannedSwitchRequested", "Event:FailoverStarted", "Switch primary->hub-b PlannedSwitch"},
			check: func(t *testing.T, d Decision) {
				if d.Memory.PlannedWait != nil {
					t.Errorf("PlannedWait = %+v after the switch, want nil", d.Memory.PlannedWait)
				}
			},
		},
		{
			name: "Active -> Joining: planned switch to a hub in step once it caught up", state: StateActive,
			view: decideView(onHub("primary"), func(v *View) {
				v.Spec.SwitchTo = "hub-b"
				v.Steps = HubSteps{InStep: map[string]bool{"hub-b": true}}
				v.Memory.PlannedWait = &PlannedWait{Target: "hub-b", Since: decideNow.Add(-time.Minute)}
			}),
			wantNext: StateJoining, wantActions: []string{"Event:PlannedSwitchRequested", "Event:FailoverStarted", "Switch primary->hub-b PlannedSwitch"},
		},
		{
			name: "Active: switchTo removed while waiting: the wait is forgotten", state: StateActive,
			view: decideView(onHub("primary"), func(v *View) {
				v.Steps = HubSteps{Behind: map[string]bool{"hub-b": true}}
				v.Memory.PlannedWait = &PlannedWait{Target: "hub-b", Since: decideNow.Add(-time.Minute)}
			}),
			wantNext: StateActive, wantActions: []string{"ResetBackoff", "Heartbeat"},
			check: func(t *testing.T, d Decision) {
				if d.Memory.PlannedWait != nil {
					t.Errorf("PlannedWait = %+v, want nil", d.Memory.PlannedWait)
				}
			},
		},
		{
			name: "Active: no move to a hub whose session cannot be built", state: StateActive,
			view:     decideView(onHub("primary"), lost, func(v *View) { hubAt(v, "hub-b").SessionError = "x" }),
			wantNext: StateNoViableHub, wantActions: []string{"MarkFailed primary", "NoViable(entered)"},
			check: func(t *testing.T, d Decision) {
				if d.Memory.Switch != nil {
					t.Errorf("move %+v to a hub whose session cannot be built", d.Memory.Switch)
				}
			},
		},
		{
			name: "Active: planned switch to a hub whose probe failed waits", state: StateActive,
			view: decideView(onHub("primary"), func(v *View) {
				v.Spec.SwitchTo = "hub-b"
				hubAt(v, "hub-b").Probe = failoverv1alpha1.HubProbeUnreachable
			}),
			wantNext: StateActive, wantActions: []string{"ResetBackoff", "Heartbeat"},
		},
		{
			name: "Active -> Joining: failback to a primary healthy for healthyFor", state: StateActive,
			view: decideView(onHub("hub-b"), func(v *View) {
				v.Spec.Failback = &failoverv1alpha1.FailbackSpec{Policy: failoverv1alpha1.FailbackPolicyPrimary, HealthyFor: &metav1.Duration{Duration: time.Minute}}
				hubAt(v, "primary").HealthySince = decideNow.Add(-time.Minute)
			}),
			wantNext: StateJoining, wantActions: []string{"Event:FailbackStarted", "Event:FailoverStarted", "Switch hub-b->primary Failback"},
		},
		{
			name: "Active: failback waits for healthyFor", state: StateActive,
			view: decideView(onHub("hub-b"), func(v *View) {
				v.Spec.Failback = &failoverv1alpha1.FailbackSpec{Policy: failoverv1alpha1.FailbackPolicyPrimary, HealthyFor: &metav1.Duration{Duration: time.Minute}}
				hubAt(v, "primary").HealthySince = decideNow.Add(-20 * time.Second)
			}),
			wantNext: StateActive, wantActions: []string{"ResetBackoff", "Heartbeat"}, wantRecheck: 40 * time.Second,
		},
		{
			name: "moving: joining the target, rechecks at the switch deadline", state: StateJoining,
			view:     decideView(onHub("hub-b"), joining, switching("primary", "hub-b", decideNow.Add(-time.Minute))),
			wantNext: StateJoining, wantActions: []string{"Heartbeat"}, wantRecheck: DefaultHubConnectionTimeout - time.Minute,
		},
		{
			name: "moving -> Active: target Registered and Available", state: StateJoining,
			view:     decideView(onHub("hub-b"), switching("primary", "hub-b", decideNow.Add(-time.Minute))),
			wantNext: StateActive, wantActions: []string{"FinishSwitch primary->hub-b HubConnectionLost", "ResetBackoff", "Heartbeat"},
			check: func(t *testing.T, d Decision) {
				if d.Memory.Switch != nil {
					t.Errorf("switch %+v still recorded", d.Memory.Switch)
				}
			},
		},
		{
			name: "moving: the move completes even while the latest request failed; Active once healthy", state: StateJoining,
			view: decideView(onHub("hub-b"), switching("primary", "hub-b", decideNow.Add(-time.Minute)), func(v *View) {
				v.Connectivity.LastError, v.Connectivity.LastErrorTime = "connection refused", decideNow
			}),
			wantNext: StateJoining, wantActions: []string{"FinishSwitch primary->hub-b HubConnectionLost", "Warning:HubUnreachable", "Heartbeat"},
		},
		{
			name: "moving: Registered but not Available stays Joining with the move", state: StateJoining,
			view: decideView(onHub("hub-b"), switching("primary", "hub-b", decideNow.Add(-time.Minute)), func(v *View) {
				v.Available = metav1.ConditionUnknown
			}),
			wantNext: StateJoining, wantActions: []string{"ResetBackoff", "Heartbeat"},
		},
		{
			name: "moving: Registered but not Available past the timeout: the move is done, the hub kept (it answers and accepts)", state: StateJoining,
			view: decideView(onHub("hub-b"), switching("primary", "hub-b", decideNow.Add(-6*time.Minute)), func(v *View) {
				v.Available = metav1.ConditionUnknown
			}),
			wantNext: StateActive, wantActions: []string{"FinishSwitch primary->hub-b HubConnectionLost", "ResetBackoff", "Heartbeat"},
		},
		{
			name: "moving: target not registered within the timeout fails, the next hub is tried", state: StateJoining,
			view: decideView(onHub("hub-b"), joining, switching("primary", "hub-b", decideNow.Add(-6*time.Minute)), func(v *View) {
				v.Connectivity.TrackingSince = decideNow.Add(-time.Minute)
			}),
			wantNext:    StateJoining,
			wantActions: []string{"Warning:FailoverFailed", "MarkFailed hub-b", "Event:FailoverStarted", "Switch hub-b->primary HubConnectionLost"},
		},
		{
			name: "NoViableHub: the session's hub is healthy again", state: StateNoViableHub,
			view:     decideView(onHub("primary"), func(v *View) { v.Memory.Degraded = "hub lost; no other hub is viable" }),
			wantNext: StateActive, wantActions: []string{"ResetBackoff", "Heartbeat"},
		},
		{
			name: "NoViableHub: a move left unfinished completes but NoViableHub stays until healthy", state: StateNoViableHub,
			view: decideView(onHub("hub-b"), switching("primary", "hub-b", decideNow.Add(-time.Minute)), func(v *View) {
				v.Memory.Degraded = "hub lost; no other hub is viable"
				v.Connectivity.LastError, v.Connectivity.LastErrorTime = "connection refused", decideNow
			}),
			wantNext: StateNoViableHub, wantActions: []string{"FinishSwitch primary->hub-b HubConnectionLost", "Warning:HubUnreachable", "Heartbeat"},
			wantDegraded: "hub lost; no other hub is viable",
		},
		{
			name: "NoViableHub: a viable hub again is switched to", state: StateNoViableHub,
			view: decideView(onHub("primary"), lost, func(v *View) {
				v.Memory.Degraded = "hub lost; no other hub is viable"
				v.Memory.LastVerdict = Verdict{Trigger: failoverv1alpha1.FailoverReasonHubConnectionLost, Reason: ReasonHubLost}
			}),
			wantNext: StateJoining, wantActions: []string{"MarkFailed primary", "Event:FailoverStarted", "Switch primary->hub-b HubConnectionLost"},
			wantDegraded: "hub lost; no other hub is viable",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.state, tc.view, decideNow)
			if d.Next != tc.wantNext {
				t.Errorf("Next = %s, want %s", d.Next, tc.wantNext)
			}
			if diff := cmp.Diff(tc.wantActions, actionList(d.Actions)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if d.Degraded != tc.wantDegraded && tc.check == nil {
				t.Errorf("Degraded = %q, want %q", d.Degraded, tc.wantDegraded)
			}
			if tc.wantRecheck != 0 && d.RecheckAfter != tc.wantRecheck {
				t.Errorf("RecheckAfter = %s, want %s", d.RecheckAfter, tc.wantRecheck)
			}
			if tc.check != nil {
				tc.check(t, d)
			}
		})
	}
}

// eventMessage returns the message of d's first event of reason, "" when it has none.
func eventMessage(d Decision, reason string) string {
	for _, a := range d.Actions {
		if a.Kind == ActEvent && a.EventReason == reason {
			return a.Message
		}
	}
	return ""
}
