package failover

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

// TestSessionObserver: what the active session reports becomes the loop's facts and wakes it; the reports of a
// replaced session change nothing, except a contested Secret, which is the same Secret for every session.
func TestSessionObserver(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, _ := newFileHubsOrchestrator(t, ctx, nil, nil, 0)
	clk := r.o.Agent.Clock.(*clocktesting.FakeClock)
	r.facts.generation = 2
	active := &sessionObserver{r: r, gen: 2, hub: "primary"}
	replaced := &sessionObserver{r: r, gen: 1, hub: "hub-b"}
	woken := func() bool {
		q := r.syncCtx.Queue()
		if q.Len() == 0 {
			return false
		}
		key, _ := q.Get()
		q.Done(key)
		return true
	}
	woken() // drain

	replaced.PhaseChanged(hubsession.PhaseNoCredentials, "old")
	replaced.ManagedClusterChanged(&clusterv1.ManagedCluster{Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}})
	replaced.AddOnsChanged([]failoverv1alpha1.AddOnRegistrationStatus{{Name: "old"}})
	if r.facts.cur.phase != "" || r.facts.cur.acceptance.Observed || len(r.facts.cur.addOns) != 0 || woken() {
		t.Fatalf("a replaced session's reports changed the facts: phase %q, acceptance %+v, add-ons %v", r.facts.cur.phase, r.facts.cur.acceptance, r.facts.cur.addOns)
	}

	start := clk.Now()
	active.PhaseChanged(hubsession.PhaseBootstrapping, "requesting")
	clk.Step(time.Minute)
	active.PhaseChanged(hubsession.PhaseBootstrapping, "waiting for approval")
	if r.facts.cur.phase != hubsession.PhaseBootstrapping || r.facts.cur.phaseMsg != "waiting for approval" || !r.facts.cur.phaseSince.Equal(start) || !woken() {
		t.Errorf("phase %q %q since %s, want Bootstrapping \"waiting for approval\" since %s (a new message is not a new phase), and a wake-up",
			r.facts.cur.phase, r.facts.cur.phaseMsg, r.facts.cur.phaseSince, start)
	}

	active.ManagedClusterChanged(&clusterv1.ManagedCluster{
		Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
		Status: clusterv1.ManagedClusterStatus{Conditions: []metav1.Condition{
			{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue},
			{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionUnknown},
		}},
	})
	want := HubAcceptance{Observed: true, HubAcceptsClient: true, AcceptedCondition: metav1.ConditionTrue}
	if r.facts.cur.acceptance != want || r.facts.cur.available != metav1.ConditionUnknown || !woken() {
		t.Errorf("acceptance %+v, Available %q, want %+v, Unknown and a wake-up", r.facts.cur.acceptance, r.facts.cur.available, want)
	}
	active.ManagedClusterChanged(nil)
	if r.facts.cur.acceptance != (HubAcceptance{}) || r.facts.cur.available != "" || !woken() {
		t.Errorf("after deletion: acceptance %+v, Available %q, want neither, and a wake-up", r.facts.cur.acceptance, r.facts.cur.available)
	}

	active.AddOnsChanged([]failoverv1alpha1.AddOnRegistrationStatus{{Name: "work"}})
	if got := r.facts.cur.addOns["primary"]; len(got) != 1 || got[0].Name != "work" || !woken() {
		t.Errorf("add-ons of primary = %v, want [work], and a wake-up", got)
	}

	replaced.Contested("taken over")
	if r.facts.cur.contested != "taken over" || !r.facts.cur.contestedAt.Equal(clk.Now()) || !woken() {
		t.Errorf("contested %q at %s, want \"taken over\" at %s, and a wake-up", r.facts.cur.contested, r.facts.cur.contestedAt, clk.Now())
	}
}
