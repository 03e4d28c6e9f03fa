package failover

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

// TestBuildStatus: the status content for the orchestrator's states: hubs, active hub, count and conditions.
func TestBuildStatus(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	hubs := []HubStatusView{
		{Name: "primary", Server: "https://a", Usable: true, FailedAt: now.Add(-time.Minute)},
		{Name: "hub-b", Server: "https://b", Usable: true, Probed: true, Probe: ProbeResult{Result: failoverv1alpha1.HubProbeReady, Message: "ok"},
			ProbeTime: now, ProbeChange: now.Add(-time.Hour), ProbeSuccess: now},
		{Name: "hub-c", LoadError: "secret ns/c: not found"},
	}
	type cond struct {
		status metav1.ConditionStatus
		reason string
	}
	cases := []struct {
		name                           string
		view                           StatusView
		wantAvailable, wantProgressing cond
		wantDegraded                   cond
		wantActiveResult               failoverv1alpha1.HubProbeResult
		wantCount                      int32
	}{
		{
			name: "Active and healthy; an unusable hub makes Degraded BootstrapKubeconfigInvalid",
			view: StatusView{Active: "primary", ActiveServer: "https://a", State: StateActive, Phase: hubsession.PhaseRegistered,
				Available: metav1.ConditionTrue, Verdict: Verdict{Reason: ReasonHubHealthy}, UnrecordedFailovers: 2},
			wantAvailable: cond{metav1.ConditionTrue, ConditionReasonHubAvailable}, wantProgressing: cond{metav1.ConditionFalse, ConditionReasonStable},
			wantDegraded: cond{metav1.ConditionTrue, ReasonBootstrapKubeconfigInvalid}, wantActiveResult: failoverv1alpha1.HubProbeReady, wantCount: 3,
		},
		{
			name: "Switching: Progressing True, Available False with the phase",
			view: StatusView{Active: "primary", State: StateJoining, Phase: hubsession.PhaseBootstrapping, PhaseMessage: "waiting for the CSR",
				Switch: &Switch{From: "hub-b", To: "primary", Message: "hub lost"}, Verdict: Verdict{Reason: ReasonHubHealthy}},
			wantAvailable: cond{metav1.ConditionFalse, string(hubsession.PhaseBootstrapping)}, wantProgressing: cond{metav1.ConditionTrue, ConditionReasonSwitching},
			wantDegraded: cond{metav1.ConditionTrue, ReasonBootstrapKubeconfigInvalid}, wantActiveResult: failoverv1alpha1.HubProbeReady, wantCount: 1,
		},
		{
			name: "a planned switch waiting for its target's catch-up: Progressing True PlannedSwitchWaiting",
			view: StatusView{Active: "primary", ActiveServer: "https://a", State: StateActive, Phase: hubsession.PhaseRegistered,
				Available: metav1.ConditionTrue, Verdict: Verdict{Reason: ReasonHubHealthy},
				PlannedWait: &PlannedWait{Target: "hub-b", Since: now.Add(-time.Hour)}},
			wantAvailable: cond{metav1.ConditionTrue, ConditionReasonHubAvailable}, wantProgressing: cond{metav1.ConditionTrue, ReasonPlannedSwitchWaiting},
			wantDegraded: cond{metav1.ConditionTrue, ReasonBootstrapKubeconfigInvalid}, wantActiveResult: failoverv1alpha1.HubProbeReady, wantCount: 1,
		},
		{
			name: "NoViableHub: Degraded NoViableHub, the lost hub Unreachable",
			view: StatusView{Active: "primary", State: StateNoViableHub, Phase: hubsession.PhaseRegistered, Degraded: "hub lost; no other hub is viable",
				Verdict: Verdict{Trigger: failoverv1alpha1.FailoverReasonHubConnectionLost, Reason: ReasonHubLost, Message: "gone"}},
			wantAvailable: cond{metav1.ConditionFalse, string(hubsession.PhaseRegistered)}, wantProgressing: cond{metav1.ConditionFalse, ConditionReasonStable},
			wantDegraded: cond{metav1.ConditionTrue, ReasonNoViableHub}, wantActiveResult: failoverv1alpha1.HubProbeUnreachable, wantCount: 1,
		},
		{
			name: "no credentials: Degraded NoValidCredentials",
			view: StatusView{Active: "primary", State: StateActive, Phase: hubsession.PhaseNoCredentials, Degraded: "no credentials",
				Verdict: Verdict{Reason: ReasonNoValidCredentials}},
			wantAvailable: cond{metav1.ConditionFalse, string(hubsession.PhaseNoCredentials)}, wantProgressing: cond{metav1.ConditionFalse, ConditionReasonStable},
			wantDegraded: cond{metav1.ConditionTrue, ReasonNoValidCredentials}, wantActiveResult: failoverv1alpha1.HubProbeUnauthorized, wantCount: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			current := &failoverv1alpha1.FailoverConfigStatus{FailoverCount: 1}
			tc.view.Now, tc.view.Generation, tc.view.ClusterName, tc.view.FailedHubSkipPeriod = now, 4, "cluster1", 10*time.Minute
			tc.view.Hubs = hubs
			got := BuildStatus(current, tc.view)
			if current.FailoverCount != 1 || len(current.Conditions) != 0 {
				t.Errorf("BuildStatus modified its input: %+v", current)
			}
			for typ, want := range map[string]cond{failoverv1alpha1.ConditionAvailable: tc.wantAvailable,
				failoverv1alpha1.ConditionProgressing: tc.wantProgressing, failoverv1alpha1.ConditionDegraded: tc.wantDegraded} {
				c := meta.FindStatusCondition(got.Conditions, typ)
				if c == nil || c.Status != want.status || c.Reason != want.reason || c.ObservedGeneration != 4 {
					t.Errorf("condition %s = %+v, want %s/%s at generation 4", typ, c, want.status, want.reason)
				}
			}
			if got.ActiveHub != "primary" || got.ObservedGeneration != 4 || got.FailoverCount != tc.wantCount {
				t.Errorf("activeHub %q, observedGeneration %d, failoverCount %d; want primary, 4, %d", got.ActiveHub, got.ObservedGeneration, got.FailoverCount, tc.wantCount)
			}
			if len(got.Hubs) != 3 {
				t.Fatalf("%d hubs, want 3", len(got.Hubs))
			}
			if r := got.Hubs[0].ProbeResult; r != tc.wantActiveResult {
				t.Errorf("active hub's result %s, want %s", r, tc.wantActiveResult)
			}
			if s := got.Hubs[0].SkippedUntil; s == nil || !s.Time.Equal(now.Add(9*time.Minute)) {
				t.Errorf("primary skippedUntil %v, want %s", s, now.Add(9*time.Minute))
			}
			if b := got.Hubs[1]; b.ProbeResult != failoverv1alpha1.HubProbeReady || b.LastTransitionTime == nil || !b.LastTransitionTime.Time.Equal(now.Add(-time.Hour)) {
				t.Errorf("standby hub-b %+v, want Ready since an hour", b)
			}
			if c := got.Hubs[2]; c.ProbeResult != failoverv1alpha1.HubProbeUnknown || c.Server != "" {
				t.Errorf("unusable hub-c %+v, want Unknown without server", c)
			}
		})
	}
}

// TestStatusWriteDue: a change of anything but the refresh fields is written at once; a change of refresh fields
// only (a message naming a new transport error, a probe time, a skip period pushed back) waits until
// StatusRefreshInterval has passed since the last write.
func TestStatusWriteDue(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { mt := metav1.NewTime(now.Add(d)); return &mt }
	base := &failoverv1alpha1.FailoverConfigStatus{
		ActiveHub: "hub-b",
		Conditions: []metav1.Condition{{Type: failoverv1alpha1.ConditionDegraded, Status: metav1.ConditionTrue,
			Reason: ReasonNoViableHub, Message: "last transport error at 12:00:00: EOF", LastTransitionTime: *at(-time.Minute)}},
		Hubs: []failoverv1alpha1.HubStatus{
			{Name: "primary", ProbeResult: failoverv1alpha1.HubProbeUnreachable, Message: "EOF", LastProbeTime: at(-5 * time.Second),
				LastTransitionTime: at(-time.Minute), SkippedUntil: at(4 * time.Minute),
				StandbyCredentials: &failoverv1alpha1.StandbyCredentialsStatus{State: "Ready", Message: "renewed"}},
			{Name: "hub-b", ProbeResult: failoverv1alpha1.HubProbeUnreachable, Message: "active hub: EOF"},
		},
	}
	change := func(f func(s *failoverv1alpha1.FailoverConfigStatus)) *failoverv1alpha1.FailoverConfigStatus {
		s := base.DeepCopy()
		f(s)
		return s
	}
	refreshOnly := change(func(s *failoverv1alpha1.FailoverConfigStatus) {
		s.Conditions[0].Message = "last transport error at 12:00:05: connection reset by peer"
		s.Hubs[0].Message, s.Hubs[0].LastProbeTime, s.Hubs[0].LastSuccessTime = "connection reset by peer", at(0), at(0)
		s.Hubs[0].SkippedUntil = at(5 * time.Minute)
		s.Hubs[0].StandbyCredentials.Message = "renewed again"
		s.Hubs[1].Message = "active hub: connection reset by peer"
	})
	cases := []struct {
		name      string
		desired   *failoverv1alpha1.FailoverConfigStatus
		lastWrite time.Time
		wantWrite bool
		wantRetry time.Duration
	}{
		{name: "nothing differs", desired: base.DeepCopy(), lastWrite: now.Add(-time.Hour)},
		{name: "refresh fields only, written 3s ago: in 7s", desired: refreshOnly, lastWrite: now.Add(-3 * time.Second), wantRetry: 7 * time.Second},
		{name: "refresh fields only, written 10s ago", desired: refreshOnly, lastWrite: now.Add(-StatusRefreshInterval), wantWrite: true},
		{name: "refresh fields only, never written by this process", desired: refreshOnly, wantWrite: true},
		{name: "a condition's reason", lastWrite: now, wantWrite: true,
			desired: change(func(s *failoverv1alpha1.FailoverConfigStatus) { s.Conditions[0].Reason = ConditionReasonAsExpected })},
		{name: "a condition's status", lastWrite: now, wantWrite: true,
			desired: change(func(s *failoverv1alpha1.FailoverConfigStatus) { s.Conditions[0].Status = metav1.ConditionFalse })},
		{name: "a probe result", lastWrite: now, wantWrite: true,
			desired: change(func(s *failoverv1alpha1.FailoverConfigStatus) { s.Hubs[0].ProbeResult = failoverv1alpha1.HubProbeReady })},
		{name: "a probe result's transition time", lastWrite: now, wantWrite: true,
			desired: change(func(s *failoverv1alpha1.FailoverConfigStatus) { s.Hubs[0].LastTransitionTime = at(0) })},
		{name: "a skip period ends", lastWrite: now, wantWrite: true,
			desired: change(func(s *failoverv1alpha1.FailoverConfigStatus) { s.Hubs[0].SkippedUntil = nil })},
		{name: "a skip period starts", lastWrite: now, wantWrite: true,
			desired: change(func(s *failoverv1alpha1.FailoverConfigStatus) { s.Hubs[1].SkippedUntil = at(time.Minute) })},
		{name: "standby credentials state", lastWrite: now, wantWrite: true,
			desired: change(func(s *failoverv1alpha1.FailoverConfigStatus) { s.Hubs[0].StandbyCredentials.State = "Refused" })},
		{name: "the active hub", lastWrite: now, wantWrite: true,
			desired: change(func(s *failoverv1alpha1.FailoverConfigStatus) { s.ActiveHub = "primary" })},
		{name: "the failover count", lastWrite: now, wantWrite: true,
			desired: change(func(s *failoverv1alpha1.FailoverConfigStatus) { s.FailoverCount++ })},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			current := base.DeepCopy()
			write, retry := StatusWriteDue(current, tc.desired, tc.lastWrite, now, StatusRefreshInterval)
			if write != tc.wantWrite || retry != tc.wantRetry {
				t.Errorf("StatusWriteDue = %v, %s; want %v, %s", write, retry, tc.wantWrite, tc.wantRetry)
			}
			if !reflect.DeepEqual(current, base) {
				t.Errorf("StatusWriteDue modified current: %+v", current)
			}
		})
	}
}

// TestHubReplicationStatus: the replicator's report on the active hub's ManagedCluster becomes
// status.hubs[].replication of the other hubs; the active hub and hubs named nowhere show none.
func TestHubReplicationStatus(t *testing.T) {
	steps := stepsOf(map[string]string{
		failoverv1alpha1.AnnotationHubsInStep: "hub-b, hub-x",
		failoverv1alpha1.AnnotationHubsBehind: "hub-c,",
		"unrelated":                           "primary",
	})
	for hub, want := range map[string]failoverv1alpha1.HubReplicationState{
		"hub-b": failoverv1alpha1.HubInStep, "hub-c": failoverv1alpha1.HubBehind, "hub-d": "", "primary": "",
	} {
		if got := steps.State(hub, t0); got != want {
			t.Errorf("State(%s) = %q, want %q", hub, got, want)
		}
	}
	if got := stepsOf(nil); got.State("hub-b", t0) != "" {
		t.Errorf("no annotations: State = %q, want none", got.State("hub-b", t0))
	}
	status := BuildStatus(&failoverv1alpha1.FailoverConfigStatus{}, StatusView{Active: "primary", State: StateActive, Now: t0,
		Hubs: []HubStatusView{
			{Name: "primary", Usable: true, Replication: failoverv1alpha1.HubInStep},
			{Name: "hub-b", Usable: true, Replication: steps.State("hub-b", t0)},
			{Name: "hub-c", Usable: true, Replication: steps.State("hub-c", t0)},
			{Name: "hub-d", Usable: true, Replication: steps.State("hub-d", t0)},
		}})
	want := map[string]failoverv1alpha1.HubReplicationState{"primary": "", "hub-b": failoverv1alpha1.HubInStep, "hub-c": failoverv1alpha1.HubBehind, "hub-d": ""}
	for _, h := range status.Hubs {
		if h.Replication != want[h.Name] {
			t.Errorf("status.hubs[%s].replication = %q, want %q", h.Name, h.Replication, want[h.Name])
		}
	}
}

// TestReplicationReportConfirmations: the agent times how long it has seen one value of the replicator's report
// (AnnotationHubsReported) on its own clock, never reading the report's time: past ReportStaleConfirmations of
// the report's intervals without a new value, the hubs it names in step are Unknown (those it names behind stay
// Behind); a new value makes them known again.
func TestReplicationReportConfirmations(t *testing.T) {
	mc := func(report string) *clusterv1.ManagedCluster {
		return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster1", Annotations: map[string]string{
			failoverv1alpha1.AnnotationHubsInStep: "hub-b", failoverv1alpha1.AnnotationHubsBehind: "hub-c",
			failoverv1alpha1.AnnotationHubsReported: report}}}
	}
	// The report's time is a year off the agent's clock: nothing reads it.
	first := failoverv1alpha1.HubsReport{Writer: "fleet", Time: t0.Add(-365 * 24 * time.Hour), Every: time.Minute}
	facts := &sessionFacts{}
	gen := facts.begin()
	steps := func(at time.Time, report string) HubSteps {
		t.Helper()
		if !facts.setManagedCluster(gen, mc(report), at) {
			t.Fatalf("setManagedCluster refused the current session")
		}
		return facts.snapshot().steps
	}
	check := func(s HubSteps, at time.Time, inStep, behind failoverv1alpha1.HubReplicationState) {
		t.Helper()
		if got := s.State("hub-b", at); got != inStep {
			t.Errorf("at %s: State(hub-b) = %q, want %q", at.Sub(t0), got, inStep)
		}
		if got := s.State("hub-c", at); got != behind {
			t.Errorf("at %s: State(hub-c) = %q, want %q", at.Sub(t0), got, behind)
		}
		if got := s.State("hub-d", at); got != "" {
			t.Errorf("at %s: State(hub-d) = %q, want none (not named)", at.Sub(t0), got)
		}
	}
	s := steps(t0, first.String())
	if s.Every != time.Minute || !s.SeenSince.Equal(t0) {
		t.Fatalf("first report: Every %s SeenSince %s, want 1m and t0", s.Every, s.SeenSince)
	}
	check(s, t0, failoverv1alpha1.HubInStep, failoverv1alpha1.HubBehind)
	// The same value seen again (another ManagedCluster update) is no confirmation.
	s = steps(t0.Add(2*time.Minute), first.String())
	if !s.SeenSince.Equal(t0) {
		t.Errorf("same value again: SeenSince %s, want t0", s.SeenSince)
	}
	check(s, t0.Add(3*time.Minute), failoverv1alpha1.HubInStep, failoverv1alpha1.HubBehind)
	stale := t0.Add(3*time.Minute + time.Second)
	// In step turns unknown; behind stays behind (time only takes a hub further behind).
	check(s, stale, failoverv1alpha1.HubReplicationUnknown, failoverv1alpha1.HubBehind)
	// A new value, whatever its time says (here: older), confirms.
	second := first
	second.Time = first.Time.Add(-time.Hour)
	s = steps(stale, second.String())
	if !s.SeenSince.Equal(stale) {
		t.Errorf("new value: SeenSince %s, want %s", s.SeenSince, stale)
	}
	check(s, stale, failoverv1alpha1.HubInStep, failoverv1alpha1.HubBehind)
	// Without AnnotationHubsReported (a replicator that writes none) or with a malformed one, the report never
	// goes stale.
	for _, report := range []string{"", "writer=fleet,time=yesterday,every=1m"} {
		s = steps(stale, report)
		check(s, stale.Add(24*time.Hour), failoverv1alpha1.HubInStep, failoverv1alpha1.HubBehind)
	}
}
