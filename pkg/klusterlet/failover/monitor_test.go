package failover

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// healthyInput is an active hub "primary" that answered 10 s ago and accepts the cluster; now is t0+1h.
func healthyInput() MonitorInput {
	now := t0.Add(time.Hour)
	return MonitorInput{
		Now:                  now,
		ActiveHub:            "primary",
		ConnectionTimeout:    5 * time.Minute,
		RejectionGracePeriod: 5 * time.Minute,
		Connectivity: ConnectivitySnapshot{
			TrackingSince:    t0,
			LastSuccess:      now.Add(-10 * time.Second),
			LastResponse:     now.Add(-10 * time.Second),
			LastResponseCode: 200,
		},
		Acceptance:  HubAcceptance{Observed: true, HubAcceptsClient: true, AcceptedCondition: metav1.ConditionTrue},
		Credentials: CredentialsState{Usable: true},
	}
}

func TestEvaluate(t *testing.T) {
	cases := []struct {
		name   string
		modify func(in *MonitorInput)
		// want is compared without Message; wantMessage lists substrings Message must contain.
		want        Verdict
		wantMessage []string
	}{
		{
			name:        "healthy hub: recheck when the connection timeout could expire",
			want:        Verdict{Trigger: NoFailover, Reason: ReasonHubHealthy, RecheckAfter: 5*time.Minute - 10*time.Second},
			wantMessage: []string{`hub "primary"`},
		},
		{
			name: "no success for exactly the timeout: lost",
			modify: func(in *MonitorInput) {
				in.Connectivity.LastSuccess = in.Now.Add(-5 * time.Minute)
				in.Connectivity.LastResponse = in.Connectivity.LastSuccess
				in.Connectivity.LastError = `Get "https://hub-a:6443/api": dial tcp: connect: connection refused`
				in.Connectivity.LastErrorTime = in.Now.Add(-time.Second)
			},
			want:        Verdict{Trigger: failoverv1alpha1.FailoverReasonHubConnectionLost, Reason: ReasonHubLost},
			wantMessage: []string{`hub "primary"`, "5m0s", "connection refused", "last success at"},
		},
		{
			name: "one second before the timeout: unreachable, recheck in one second",
			modify: func(in *MonitorInput) {
				in.Connectivity.LastSuccess = in.Now.Add(-5*time.Minute + time.Second)
				in.Connectivity.LastError = "connection refused"
				in.Connectivity.LastErrorTime = in.Now.Add(-time.Second)
			},
			want:        Verdict{Trigger: NoFailover, Reason: ReasonHubUnreachable, RecheckAfter: time.Second},
			wantMessage: []string{"failover in 1s", "connection refused"},
		},
		{
			name: "5xx answers are not successes",
			modify: func(in *MonitorInput) {
				in.Connectivity.LastSuccess = in.Now.Add(-6 * time.Minute)
				in.Connectivity.LastResponse = in.Now.Add(-time.Second)
				in.Connectivity.LastResponseCode = 503
			},
			want:        Verdict{Trigger: failoverv1alpha1.FailoverReasonHubConnectionLost, Reason: ReasonHubLost},
			wantMessage: []string{"HTTP 503"},
		},
		{
			name: "a 5xx answer within the timeout reads as unreachable",
			modify: func(in *MonitorInput) {
				in.Connectivity.LastResponse = in.Now.Add(-time.Second)
				in.Connectivity.LastResponseCode = 500
			},
			want: Verdict{Trigger: NoFailover, Reason: ReasonHubUnreachable, RecheckAfter: 5*time.Minute - 10*time.Second},
		},
		{
			name: "a transport error followed by a 401/403 answer is not reported as unreachable",
			modify: func(in *MonitorInput) {
				in.Acceptance = HubAcceptance{Observed: true, HubAcceptsClient: false}
				in.Connectivity.LastErrorTime = in.Now.Add(-5 * time.Second)
				in.Connectivity.LastError = "connection refused"
				in.Connectivity.UnauthorizedSince = in.Now.Add(-time.Second)
				in.Connectivity.LastUnauthorized = in.Now.Add(-time.Second)
			},
			want: Verdict{Trigger: NoFailover, Reason: ReasonHubAcceptancePending, RecheckAfter: 5*time.Minute - time.Second},
		},
		{
			name: "never succeeded since tracking began a timeout ago, a request failed: lost",
			modify: func(in *MonitorInput) {
				in.Connectivity = ConnectivitySnapshot{TrackingSince: in.Now.Add(-5 * time.Minute),
					LastError: "connection refused", LastErrorTime: in.Now.Add(-time.Minute)}
			},
			want:        Verdict{Trigger: failoverv1alpha1.FailoverReasonHubConnectionLost, Reason: ReasonHubLost},
			wantMessage: []string{"no successful request since tracking began", "connection refused"},
		},
		{
			name: "silent past the timeout with no request failed since the last success (the agent's own stall): wait for one",
			modify: func(in *MonitorInput) {
				in.Connectivity.LastSuccess = in.Now.Add(-6 * time.Minute)
				in.Connectivity.LastError = "connection refused"
				in.Connectivity.LastErrorTime = in.Now.Add(-7 * time.Minute) // before the last success: no evidence
			},
			want:        Verdict{Trigger: NoFailover, Reason: ReasonHubUnreachable, RecheckAfter: unconfirmedRecheck},
			wantMessage: []string{"has not answered for 6m0s", "no request has failed since"},
		},
		{
			name: "silent for ten times the timeout, no request failed (the agent's round held up): still waiting for one",
			modify: func(in *MonitorInput) {
				in.Connectivity.LastSuccess = in.Now.Add(-50 * time.Minute)
			},
			want:        Verdict{Trigger: NoFailover, Reason: ReasonHubUnreachable, RecheckAfter: unconfirmedRecheck},
			wantMessage: []string{"has not answered for 50m0s"},
		},
		{
			name: "silent past the timeout, a request timed out since: lost",
			modify: func(in *MonitorInput) {
				in.Connectivity.LastSuccess = in.Now.Add(-6 * time.Minute)
				in.Connectivity.LastError = "context deadline exceeded"
				in.Connectivity.LastErrorTime = in.Now.Add(-time.Second)
			},
			want:        Verdict{Trigger: failoverv1alpha1.FailoverReasonHubConnectionLost, Reason: ReasonHubLost},
			wantMessage: []string{"deadline exceeded"},
		},
		{
			name: "a fresh hub is not judged by the previous hub's stale success",
			modify: func(in *MonitorInput) {
				in.Connectivity = ConnectivitySnapshot{TrackingSince: in.Now.Add(-time.Minute)}
			},
			want: Verdict{Trigger: NoFailover, Reason: ReasonHubHealthy, RecheckAfter: 4 * time.Minute},
		},
		{
			name: "a zero snapshot counts from now",
			modify: func(in *MonitorInput) {
				in.Connectivity = ConnectivitySnapshot{}
			},
			want: Verdict{Trigger: NoFailover, Reason: ReasonHubHealthy, RecheckAfter: 5 * time.Minute},
		},
		{
			name: "a zero timeout means the default, never an instant failover",
			modify: func(in *MonitorInput) {
				in.ConnectionTimeout = 0
				in.Connectivity.LastSuccess = in.Now.Add(-time.Minute)
			},
			want: Verdict{Trigger: NoFailover, Reason: ReasonHubHealthy, RecheckAfter: DefaultHubConnectionTimeout - time.Minute},
		},
		{
			name: "hubAcceptsClient=false shorter than the grace period: pending, recheck when it ends",
			modify: func(in *MonitorInput) {
				in.Connectivity.LastSuccess = in.Now
				in.Acceptance.HubAcceptsClient = false
				in.RejectedSince = in.Now.Add(-5*time.Minute + time.Second)
			},
			want:        Verdict{Trigger: NoFailover, Reason: ReasonHubRejectionPending, RecheckAfter: time.Second},
			wantMessage: []string{"hubAcceptsClient is false", "failover in 1s"},
		},
		{
			name: "hubAcceptsClient=false for the grace period: rejected",
			modify: func(in *MonitorInput) {
				in.Acceptance.HubAcceptsClient = false
				in.RejectedSince = in.Now.Add(-5 * time.Minute)
			},
			want:        Verdict{Trigger: failoverv1alpha1.FailoverReasonHubRejected, Reason: ReasonHubRejected},
			wantMessage: []string{`hub "primary"`, "hubAcceptsClient is false", "grace period 5m0s"},
		},
		{
			name: "HubAcceptedManagedCluster=False without a recorded start counts from now",
			modify: func(in *MonitorInput) {
				in.Connectivity.LastSuccess = in.Now
				in.Acceptance.AcceptedCondition = metav1.ConditionFalse
			},
			want:        Verdict{Trigger: NoFailover, Reason: ReasonHubRejectionPending, RecheckAfter: 5 * time.Minute},
			wantMessage: []string{"HubAcceptedManagedCluster is False"},
		},
		{
			name: "HubAcceptedManagedCluster=False for the grace period: rejected",
			modify: func(in *MonitorInput) {
				in.Acceptance = HubAcceptance{Observed: true, HubAcceptsClient: false, AcceptedCondition: metav1.ConditionFalse}
				in.RejectedSince = in.Now.Add(-10 * time.Minute)
			},
			want:        Verdict{Trigger: failoverv1alpha1.FailoverReasonHubRejected, Reason: ReasonHubRejected},
			wantMessage: []string{"hubAcceptsClient is false", "HubAcceptedManagedCluster is False"},
		},
		{
			name: "401/403 answers for the grace period: rejected, not lost",
			modify: func(in *MonitorInput) {
				in.Connectivity.LastSuccess = in.Now.Add(-6 * time.Minute)
				in.Connectivity.UnauthorizedSince = in.Now.Add(-5*time.Minute - time.Second)
				in.Connectivity.LastUnauthorized = in.Now.Add(-time.Second)
			},
			want:        Verdict{Trigger: failoverv1alpha1.FailoverReasonHubRejected, Reason: ReasonHubRejected},
			wantMessage: []string{"401/403"},
		},
		{
			name: "401/403 answers prove the hub is there: a 30 s timeout does not fire within the grace period (FC-12)",
			modify: func(in *MonitorInput) {
				in.ConnectionTimeout = 30 * time.Second
				in.Connectivity.LastSuccess = in.Now.Add(-2 * time.Minute)
				in.Connectivity.UnauthorizedSince = in.Now.Add(-2 * time.Minute)
				in.Connectivity.LastUnauthorized = in.Now.Add(-5 * time.Second)
			},
			want: Verdict{Trigger: NoFailover, Reason: ReasonHubRejectionPending, RecheckAfter: 25 * time.Second},
		},
		{
			name: "the rejection starts at the earliest ongoing signal",
			modify: func(in *MonitorInput) {
				in.Connectivity.LastSuccess = in.Now
				in.Acceptance.HubAcceptsClient = false
				in.RejectedSince = in.Now.Add(-time.Minute)
				in.Connectivity.UnauthorizedSince = in.Now.Add(-3 * time.Minute)
			},
			want: Verdict{Trigger: NoFailover, Reason: ReasonHubRejectionPending, RecheckAfter: 2 * time.Minute},
		},
		{
			name: "never accepted (no HubAcceptedManagedCluster condition): pending acceptance, 403s ignored",
			modify: func(in *MonitorInput) {
				in.Acceptance = HubAcceptance{Observed: true, HubAcceptsClient: false}
				in.RejectedSince = time.Time{}
				in.Connectivity.LastSuccess = in.Now.Add(-time.Minute)
				in.Connectivity.UnauthorizedSince = in.Now.Add(-30 * time.Minute)
				in.Connectivity.LastUnauthorized = in.Now
			},
			want: Verdict{Trigger: NoFailover, Reason: ReasonHubAcceptancePending, RecheckAfter: 5 * time.Minute},
		},
		{
			name: "403 before the ManagedCluster was ever read (approved, not yet accepted): not a rejection",
			modify: func(in *MonitorInput) {
				in.Acceptance = HubAcceptance{}
				in.Connectivity.UnauthorizedSince = in.Now.Add(-30 * time.Minute)
				in.Connectivity.LastUnauthorized = in.Now
				in.Connectivity.LastResponse = in.Now
				in.Connectivity.LastResponseCode = http.StatusForbidden
			},
			want: Verdict{Trigger: NoFailover, Reason: ReasonHubHealthy, RecheckAfter: 5 * time.Minute},
		},
		{
			name: "401 before the ManagedCluster was ever read: a rejection once the grace period is over",
			modify: func(in *MonitorInput) {
				in.Acceptance = HubAcceptance{}
				in.Connectivity.UnauthorizedSince = in.Now.Add(-30 * time.Minute)
				in.Connectivity.LastUnauthorized = in.Now
				in.Connectivity.LastResponse = in.Now
				in.Connectivity.LastResponseCode = http.StatusUnauthorized
			},
			want: Verdict{Trigger: failoverv1alpha1.FailoverReasonHubRejected, Reason: ReasonHubRejected},
		},
		{
			name: "an unobserved ManagedCluster is not a rejection",
			modify: func(in *MonitorInput) {
				in.Acceptance = HubAcceptance{}
				in.RejectedSince = in.Now.Add(-time.Hour)
			},
			want: Verdict{Trigger: NoFailover, Reason: ReasonHubHealthy, RecheckAfter: 5*time.Minute - 10*time.Second},
		},
		{
			name: "no usable credentials: at once (scenario 4)",
			modify: func(in *MonitorInput) {
				in.Credentials = CredentialsState{Message: "bootstrap kubeconfig: client certificate expired"}
			},
			want:        Verdict{Trigger: failoverv1alpha1.FailoverReasonCredentialsInvalid, Reason: ReasonNoValidCredentials},
			wantMessage: []string{`hub "primary"`, "client certificate expired"},
		},
		{
			name: "planned switch to another hub",
			modify: func(in *MonitorInput) {
				in.PlannedTarget = "hub-b"
			},
			want:        Verdict{Trigger: failoverv1alpha1.FailoverReasonPlannedSwitch, Reason: ReasonPlannedSwitchRequested},
			wantMessage: []string{`"primary"`, `"hub-b"`},
		},
		{
			name: "planned switch to the active hub: nothing to do",
			modify: func(in *MonitorInput) {
				in.PlannedTarget = "primary"
			},
			want: Verdict{Trigger: NoFailover, Reason: ReasonHubHealthy, RecheckAfter: 5*time.Minute - 10*time.Second},
		},
		{
			name: "planned switch to a hub that failed recently waits for its skip period",
			modify: func(in *MonitorInput) {
				in.PlannedTarget = "hub-b"
				in.PlannedTargetBlockedUntil = in.Now.Add(30 * time.Second)
			},
			want:        Verdict{Trigger: NoFailover, Reason: ReasonPlannedSwitchRequested, RecheckAfter: 30 * time.Second},
			wantMessage: []string{`"hub-b"`, "failed recently"},
		},
		{
			name: "a planned switch wins over every other trigger",
			modify: func(in *MonitorInput) {
				in.PlannedTarget = "hub-b"
				in.Credentials = CredentialsState{}
				in.Acceptance.AcceptedCondition = metav1.ConditionFalse
				in.RejectedSince = in.Now.Add(-time.Hour)
				in.Connectivity.LastSuccess = in.Now.Add(-time.Hour)
			},
			want: Verdict{Trigger: failoverv1alpha1.FailoverReasonPlannedSwitch, Reason: ReasonPlannedSwitchRequested},
		},
		{
			name: "no credentials wins over rejection and loss",
			modify: func(in *MonitorInput) {
				in.Credentials = CredentialsState{}
				in.Acceptance.AcceptedCondition = metav1.ConditionFalse
				in.RejectedSince = in.Now.Add(-time.Hour)
				in.Connectivity.LastSuccess = in.Now.Add(-time.Hour)
			},
			want: Verdict{Trigger: failoverv1alpha1.FailoverReasonCredentialsInvalid, Reason: ReasonNoValidCredentials},
		},
		{
			name: "rejection wins over loss",
			modify: func(in *MonitorInput) {
				in.Acceptance.AcceptedCondition = metav1.ConditionFalse
				in.RejectedSince = in.Now.Add(-time.Hour)
				in.Connectivity.LastSuccess = in.Now.Add(-time.Hour)
			},
			want: Verdict{Trigger: failoverv1alpha1.FailoverReasonHubRejected, Reason: ReasonHubRejected},
		},
		{
			name: "the earliest pending deadline sets the recheck",
			modify: func(in *MonitorInput) {
				in.Connectivity.LastSuccess = in.Now.Add(-4 * time.Minute) // lost in 1m
				in.Acceptance.HubAcceptsClient = false
				in.RejectedSince = in.Now.Add(-3 * time.Minute) // rejected in 2m
			},
			want: Verdict{Trigger: NoFailover, Reason: ReasonHubRejectionPending, RecheckAfter: time.Minute},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := healthyInput()
			if tc.modify != nil {
				tc.modify(&in)
			}
			got := Evaluate(in)
			for _, s := range tc.wantMessage {
				if !strings.Contains(got.Message, s) {
					t.Errorf("Message %q does not contain %q", got.Message, s)
				}
			}
			if got.Message == "" {
				t.Errorf("empty Message")
			}
			got.Message = ""
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

// FC-12: hubAcceptsClient true → false → true within 3 minutes, five times in a row, must not move the
// cluster; every transition is observable; a rejection that outlasts the grace period does move it.
func TestEvaluateQuickAcceptFlipsDoNotTrigger(t *testing.T) {
	var tracker RejectionTracker
	now := t0
	transitions := 0
	// While accepted every request succeeds; while denied the hub has removed the cluster's RBAC and answers
	// 403 to everything, so there is no success at all during a denial.
	connectivity := ConnectivitySnapshot{TrackingSince: t0}
	step := func(accepts bool, hold time.Duration) Verdict {
		t.Helper()
		var last Verdict
		for end := now.Add(hold); now.Before(end); now = now.Add(10 * time.Second) {
			if accepts {
				connectivity.LastSuccess, connectivity.UnauthorizedSince = now, time.Time{}
			} else {
				if connectivity.UnauthorizedSince.IsZero() {
					connectivity.UnauthorizedSince = now
				}
				connectivity.LastUnauthorized = now
			}
			acceptance := HubAcceptance{Observed: true, HubAcceptsClient: accepts, AcceptedCondition: metav1.ConditionTrue}
			if tracker.Observe(acceptance.Rejected(), now) {
				transitions++
			}
			last = Evaluate(MonitorInput{
				Now:                  now,
				ActiveHub:            "primary",
				ConnectionTimeout:    30 * time.Second,
				RejectionGracePeriod: 5 * time.Minute,
				Connectivity:         connectivity,
				Acceptance:           acceptance,
				RejectedSince:        tracker.Since(),
				Credentials:          CredentialsState{Usable: true},
			})
			if last.Trigger != NoFailover {
				return last
			}
		}
		return last
	}

	for i := range 5 {
		if v := step(true, time.Minute); v.Trigger != NoFailover {
			t.Fatalf("flip %d, accepted: unexpected %+v", i, v)
		}
		if v := step(false, 2*time.Minute); v.Trigger != NoFailover || v.Reason != ReasonHubRejectionPending {
			t.Fatalf("flip %d, denied for 2m: got %+v, want a pending rejection", i, v)
		}
	}
	if v := step(true, time.Minute); v.Reason != ReasonHubHealthy {
		t.Fatalf("accepted again: got %+v", v)
	}
	if transitions != 10 {
		t.Errorf("transitions = %d, want 10 (one per flip edge)", transitions)
	}
	if v := step(false, 6*time.Minute); v.Trigger != failoverv1alpha1.FailoverReasonHubRejected {
		t.Errorf("denied for longer than the grace period: got %+v, want HubRejected", v)
	}
}

func TestHubAcceptance(t *testing.T) {
	cases := []struct {
		name        string
		acceptance  HubAcceptance
		wantReject  bool
		wantPending bool
	}{
		{name: "not observed", acceptance: HubAcceptance{}},
		{name: "accepted", acceptance: HubAcceptance{Observed: true, HubAcceptsClient: true, AcceptedCondition: metav1.ConditionTrue}},
		{name: "accepted, condition not yet set", acceptance: HubAcceptance{Observed: true, HubAcceptsClient: true}},
		{name: "never accepted", acceptance: HubAcceptance{Observed: true}, wantPending: true},
		{name: "denied after acceptance, hub not caught up", acceptance: HubAcceptance{Observed: true, AcceptedCondition: metav1.ConditionTrue}, wantReject: true},
		{name: "denied after acceptance", acceptance: HubAcceptance{Observed: true, AcceptedCondition: metav1.ConditionFalse}, wantReject: true},
		{name: "condition False while hubAcceptsClient is true", acceptance: HubAcceptance{Observed: true, HubAcceptsClient: true, AcceptedCondition: metav1.ConditionFalse}, wantReject: true},
		{name: "condition Unknown while denied", acceptance: HubAcceptance{Observed: true, AcceptedCondition: metav1.ConditionUnknown}, wantReject: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.acceptance.Rejected(); got != tc.wantReject {
				t.Errorf("Rejected() = %v, want %v", got, tc.wantReject)
			}
			if got := tc.acceptance.PendingAcceptance(); got != tc.wantPending {
				t.Errorf("PendingAcceptance() = %v, want %v", got, tc.wantPending)
			}
		})
	}
}

func TestRejectionTracker(t *testing.T) {
	type observation struct {
		rejected    bool
		at          int
		wantChanged bool
		wantSince   time.Time
	}
	cases := []struct {
		name         string
		observations []observation
	}{
		{
			name: "accepted throughout",
			observations: []observation{
				{rejected: false, at: 1},
				{rejected: false, at: 2},
			},
		},
		{
			name: "a rejection keeps its first start",
			observations: []observation{
				{rejected: true, at: 1, wantChanged: true, wantSince: at(1)},
				{rejected: true, at: 5, wantSince: at(1)},
			},
		},
		{
			name: "acceptance resets; a new rejection starts anew",
			observations: []observation{
				{rejected: true, at: 1, wantChanged: true, wantSince: at(1)},
				{rejected: false, at: 2, wantChanged: true},
				{rejected: true, at: 3, wantChanged: true, wantSince: at(3)},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var tracker RejectionTracker
			for i, o := range tc.observations {
				if changed := tracker.Observe(o.rejected, at(o.at)); changed != o.wantChanged {
					t.Errorf("observation %d: changed = %v, want %v", i, changed, o.wantChanged)
				}
				if got := tracker.Since(); !got.Equal(o.wantSince) {
					t.Errorf("observation %d: Since() = %v, want %v", i, got, o.wantSince)
				}
			}
		})
	}

	var tracker RejectionTracker
	tracker.Observe(true, at(1))
	tracker.Reset()
	if !tracker.Since().IsZero() {
		t.Errorf("Since() after Reset = %v, want zero", tracker.Since())
	}
}
