package failover_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// TestCutShorterThanTimeoutThenFailback cuts hub A off behind its proxy for less than hubConnectionTimeout: the
// agent notices (HubUnreachable) but does not move, and stays put on the healed hub well past the timeout. Then
// hub A is cut off for longer: the cluster fails over to hub B; once hub A is healed and has been Ready for
// failback.healthyFor, failback policy Primary returns the cluster to hub A.
func TestCutShorterThanTimeoutThenFailback(t *testing.T) {
	t.Parallel()
	s := spec(shortConnectionTimeout)
	s.Failback = &failoverv1alpha1.FailbackSpec{Policy: failoverv1alpha1.FailbackPolicyPrimary, HealthyFor: &metav1.Duration{Duration: healthyFor}}
	b := newBed(t, bedOptions{spec: s})

	// Phase 1: a cut shorter than the timeout moves nothing.
	cut := time.Now()
	b.hubA.Proxy.Cut()
	framework.Consistently(t, shortConnectionTimeout/2, time.Second, func() (bool, error) {
		fc, err := util.GetFailoverConfig(b.spoke)
		return err == nil && fc.Status.ActiveHub == primary, err
	}, "active hub stays primary while hub A is cut off for less than the timeout")
	// Healed right after the window, before anything else is asked of the spoke, so that the cut stays well
	// below the timeout on a loaded machine.
	b.hubA.Proxy.Heal()
	if d := time.Since(cut); d >= shortConnectionTimeout {
		t.Fatalf("hub A was cut off for %s, not shorter than the timeout %s: the machine is too slow for this test", d, shortConnectionTimeout)
	}
	// The agent noticed the cut (the cut closed its connections), so staying put is a decision. The event was
	// recorded during the cut; it is looked for after the heal.
	if util.EventReasons(t, b.spoke)[failover.ReasonHubUnreachable] == 0 {
		t.Errorf("no %s event while hub A was cut off", failover.ReasonHubUnreachable)
	}
	// Well past the timeout counted from the cut: the healed hub is not judged lost.
	framework.Consistently(t, shortConnectionTimeout+5*time.Second, time.Second, func() (bool, error) {
		fc, err := util.GetFailoverConfig(b.spoke)
		if err != nil {
			return false, err
		}
		return fc.Status.ActiveHub == primary && fc.Status.FailoverCount == 0 && fc.Status.LastFailover == nil, nil
	}, "no failover after a cut shorter than the timeout")
	if n := util.EventReasons(t, b.spoke)[failover.ReasonFailoverStarted]; n != 0 {
		t.Fatalf("%d FailoverStarted events after a cut shorter than the timeout", n)
	}
	util.WaitForClusterAvailable(t, b.hubA, clusterName, statusTimeout)
	b.expectSecretFor(t, b.hubA)

	// Phase 2: a cut longer than the timeout fails over to B; healed, A takes the cluster back.
	b.hubA.Proxy.Cut()
	util.WaitForClusterAvailable(t, b.hubB, clusterName, shortConnectionTimeout+failoverSlack)
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "failover primary -> hub-b",
		lastFailoverIs(primary, hubB, failoverv1alpha1.FailoverReasonHubConnectionLost, 1))
	b.expectSecretFor(t, b.hubB)

	healed := time.Now()
	b.hubA.Proxy.Heal()
	fc := util.WaitForFailoverConfig(t, b.spoke, healthyFor+2*probeInterval+failoverSlack, "failback hub-b -> primary",
		lastFailoverIs(hubB, primary, failoverv1alpha1.FailoverReasonFailback, 2))
	t.Logf("failback completed %s after hub A was healed (healthyFor %s)", time.Since(healed).Round(100*time.Millisecond), healthyFor)
	if d := fc.Status.LastFailover.StartTime.Sub(healed); d < healthyFor-time.Second {
		t.Errorf("failback started %s after hub A was healed, before failback.healthyFor %s", d, healthyFor)
	}
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "active primary and Available", util.ActiveAndAvailable(primary))
	util.WaitForClusterAvailable(t, b.hubA, clusterName, statusTimeout)
	b.expectSecretFor(t, b.hubA)
	b.expectEvents(t, failover.ReasonFailbackStarted, failover.ReasonFailoverSucceeded)
	b.expectNotExited(t)
}
