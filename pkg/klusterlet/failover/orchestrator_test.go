package failover

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/json"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

func TestActiveHubResult(t *testing.T) {
	cases := []struct {
		reason string
		want   failoverv1alpha1.HubProbeResult
	}{
		{reason: "", want: failoverv1alpha1.HubProbeReady},
		{reason: ReasonHubHealthy, want: failoverv1alpha1.HubProbeReady},
		{reason: ReasonHubAcceptancePending, want: failoverv1alpha1.HubProbeReady},
		{reason: ReasonHubUnreachable, want: failoverv1alpha1.HubProbeUnreachable},
		{reason: ReasonHubLost, want: failoverv1alpha1.HubProbeUnreachable},
		{reason: ReasonFailoverFailed, want: failoverv1alpha1.HubProbeUnreachable},
		{reason: ReasonHubRejectionPending, want: failoverv1alpha1.HubProbeRejected},
		{reason: ReasonHubRejected, want: failoverv1alpha1.HubProbeRejected},
		{reason: ReasonNoValidCredentials, want: failoverv1alpha1.HubProbeUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			if got := activeHubResult(tc.reason); got != tc.want {
				t.Errorf("activeHubResult(%q) = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}

// TestAPITimeRoundTrips checks that a status time built in memory equals the same time read back from the API
// (whole seconds), so writeStatus does not rewrite an unchanged status.
func TestAPITimeRoundTrips(t *testing.T) {
	now := time.Date(2026, 11, 30, 14, 53, 17, 987654321, time.UTC)
	built := failoverv1alpha1.HubStatus{Name: "hub-b", LastProbeTime: timePtr(now)}
	data, err := json.Marshal(built)
	if err != nil {
		t.Fatal(err)
	}
	var read failoverv1alpha1.HubStatus
	if err := json.Unmarshal(data, &read); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(built, read) {
		t.Errorf("status time does not survive a round trip: built %v, read %v", built.LastProbeTime, read.LastProbeTime)
	}
	if timePtr(time.Time{}) != nil {
		t.Errorf("timePtr(zero) is not nil")
	}
	if got, want := apiTime(now), metav1.NewTime(time.Date(2026, 11, 30, 14, 53, 17, 0, time.UTC)); !got.Equal(&want) {
		t.Errorf("apiTime = %v, want %v", got, want)
	}
}

// TestContestedCondition: absent until the Secret is first taken over, True with the session's message for an
// hour after a takeover, then False.
func TestContestedCondition(t *testing.T) {
	at := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	const msg = `hub kubeconfig secret ns/s was replaced by credentials this agent did not write (agent "other")`
	cases := []struct {
		name       string
		at, now    time.Time
		wantOK     bool
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
		existing   *metav1.Condition
	}{
		{name: "never taken over", now: at, wantOK: false},
		{name: "True from before a restart, less than an hour old: kept", now: at.Add(30 * time.Minute), wantOK: false,
			existing: &metav1.Condition{Type: "HubKubeconfigContested", Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}},
		{name: "True from before a restart, an hour old: False", now: at.Add(time.Hour), wantOK: true,
			existing:   &metav1.Condition{Type: "HubKubeconfigContested", Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)},
			wantStatus: metav1.ConditionFalse, wantReason: ConditionReasonAsExpected, wantMsg: "not contested since 2026-12-01T15:00:00Z"},
		{name: "just taken over", at: at, now: at, wantOK: true, wantStatus: metav1.ConditionTrue, wantReason: "HubKubeconfigContested", wantMsg: msg},
		{name: "59 minutes later", at: at, now: at.Add(59 * time.Minute), wantOK: true, wantStatus: metav1.ConditionTrue, wantReason: "HubKubeconfigContested", wantMsg: msg},
		{name: "an hour later", at: at, now: at.Add(time.Hour), wantOK: true, wantStatus: metav1.ConditionFalse, wantReason: ConditionReasonAsExpected,
			wantMsg: "not contested since 2026-12-01T15:00:00Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := ContestedCondition(msg, tc.at, tc.now, 3, tc.existing)
			if ok != tc.wantOK {
				t.Fatalf("ok = %t, want %t", ok, tc.wantOK)
			}
			if !ok {
				return
			}
			if c.Type != "HubKubeconfigContested" || c.Status != tc.wantStatus || c.Reason != tc.wantReason || c.Message != tc.wantMsg || c.ObservedGeneration != 3 {
				t.Errorf("condition %+v, want %s/%s %q", c, tc.wantStatus, tc.wantReason, tc.wantMsg)
			}
		})
	}
}
