package failover_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	// acceptFlips is how many hubAcceptsClient true→false→true flips FC-12 makes.
	acceptFlips = 3
	// acceptGracePeriod is spec.hubRejectionGracePeriod of FC-12: longer than the longest revocation the loop
	// below can make (the wait for the HubAcceptanceRevoked event, statusTimeout, plus two API calls), so that no
	// flip may legitimately trigger a failover however slow the machine is.
	acceptGracePeriod = 2 * statusTimeout
)

// TestQuickAcceptFlipsThenPlannedSwitch is FC-12 followed by a planned switch. The hub admin flips
// hubAcceptsClient true→false→true on hub A several times, each flip much shorter than hubRejectionGracePeriod,
// with hub B configured: the cluster does not hop, the hub kubeconfig Secret is never deleted, every transition
// is one event (HubAcceptanceRevoked / HubAcceptanceRestored), and the cluster is Available on hub A again.
// Then spec.switchTo: hub-b moves the cluster to hub B with reason PlannedSwitch. Standby credentials are off
// (--disable-standby-credentials): hub B is a cold standby, sees no CSR before the switch, and the switch
// bootstraps there. The planned switch first waits while the replicator's report on hub A's ManagedCluster says
// hub B is behind (status.hubs[hub-b].replication Behind, event PlannedSwitchWaiting), and goes once hub B is
// reported in step. A planned switch back to the primary while hub B's report says it is behind waits until
// spec.forceSwitch names it, then goes with a HubBehind warning.
func TestQuickAcceptFlipsThenPlannedSwitch(t *testing.T) {
	t.Parallel()
	s := spec(shortConnectionTimeout)
	s.HubRejectionGracePeriod = &metav1.Duration{Duration: acceptGracePeriod}
	b := newBed(t, bedOptions{spec: s, mutate: func(o *klusterlet.FailoverAgentOptions) { o.DisableStandbyCredentials = true }})
	secret := util.HubKubeconfigSecret(t, b.spoke)
	uid := secret.UID

	// secretKept fails the test when the hub kubeconfig Secret is gone or was re-created.
	secretKept := func(when string) {
		t.Helper()
		s := util.HubKubeconfigSecret(t, b.spoke)
		if s == nil || s.UID != uid {
			t.Fatalf("%s: the hub kubeconfig secret was deleted or re-created (uid %v, want %s)", when, uidOf(s), uid)
		}
	}

	// Each revocation, not the whole loop, must be shorter than the grace period (the rejection resets on
	// acceptance); the loop may take longer than the grace period on a slow machine.
	first := time.Now()
	var longest time.Duration
	for i := 1; i <= acceptFlips; i++ {
		revoked := time.Now()
		util.SetHubAcceptsClient(t, b.hubA, clusterName, false)
		util.WaitForEventCount(t, b.spoke, failover.ReasonHubAcceptanceRevoked, i, statusTimeout)
		secretKept("after revoking acceptance")
		util.SetHubAcceptsClient(t, b.hubA, clusterName, true)
		longest = max(longest, time.Since(revoked))
		util.WaitForEventCount(t, b.spoke, failover.ReasonHubAcceptanceRestored, i, statusTimeout)
		secretKept("after restoring acceptance")
	}
	flipping := time.Since(first)
	t.Logf("%d accept flips took %s, the longest revocation %s (grace period %s)", acceptFlips, flipping.Round(100*time.Millisecond),
		longest.Round(100*time.Millisecond), acceptGracePeriod)
	if longest >= acceptGracePeriod {
		t.Fatalf("a revocation lasted %s, not shorter than the grace period %s: the test proves nothing", longest, acceptGracePeriod)
	}

	// Until well past the grace period counted from the first flip (and at least a while after the last one):
	// no hop, Secret kept.
	framework.Consistently(t, max(acceptGracePeriod-flipping, 0)+10*time.Second, time.Second, func() (bool, error) {
		fc, err := util.GetFailoverConfig(b.spoke)
		if err != nil {
			return false, err
		}
		secretKept("after the flips")
		return fc.Status.ActiveHub == primary && fc.Status.FailoverCount == 0, nil
	}, "cluster stays on hub A after quick accept flips")
	got := util.EventReasons(t, b.spoke)
	if got[failover.ReasonHubAcceptanceRevoked] != acceptFlips || got[failover.ReasonHubAcceptanceRestored] != acceptFlips {
		t.Errorf("events: %d %s and %d %s, want %d each (one per transition)", got[failover.ReasonHubAcceptanceRevoked],
			failover.ReasonHubAcceptanceRevoked, got[failover.ReasonHubAcceptanceRestored], failover.ReasonHubAcceptanceRestored, acceptFlips)
	}
	if got[failover.ReasonFailoverStarted] != 0 {
		t.Errorf("%d FailoverStarted events after quick accept flips", got[failover.ReasonFailoverStarted])
	}
	util.WaitForClusterAvailable(t, b.hubA, clusterName, statusTimeout)
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "primary Available", util.ActiveAndAvailable(primary))

	// A cold standby: no CSR on hub B and no standby Secret before the switch.
	if csrs := util.CSRNames(t, b.hubB, clusterName); len(csrs) != 0 {
		t.Errorf("CSRs %v on hub B before the switch with standby credentials off", csrs)
	}
	if s := util.Secret(t, b.spoke, hubsession.StandbySecretName(klusterlet.DefaultHubKubeconfigSecret, hubB)); s != nil {
		t.Errorf("standby Secret %s exists with standby credentials off", s.Name)
	}

	// Planned switch, while the replicator's report on hub A's ManagedCluster (written here as the replicator
	// writes it) says hub B is behind: the switch waits, and goes once hub B is reported in step.
	b.plannedSwitchWaits(t, b.hubA, primary, hubB, "waits until the replicator reports hub hub-b in step with hub primary")
	annotateManagedCluster(t, b.hubA, clusterName, map[string]any{failoverv1alpha1.AnnotationHubsInStep: hubB, failoverv1alpha1.AnnotationHubsBehind: ""})
	util.WaitForClusterAvailable(t, b.hubB, clusterName, failoverSlack)
	if csrs := util.CSRNames(t, b.hubB, clusterName); len(csrs) == 0 {
		t.Errorf("no CSR on hub B after a switch to a cold standby: the switch did not bootstrap there")
	}
	fc := util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "planned switch primary -> hub-b",
		lastFailoverIs(primary, hubB, failoverv1alpha1.FailoverReasonPlannedSwitch, 1))
	if !util.ConditionIs(fc, failoverv1alpha1.ConditionAvailable, "True") {
		t.Errorf("after the planned switch: %s", util.DescribeFailoverStatus(fc))
	}
	b.expectSecretFor(t, b.hubB)
	b.expectEvents(t, failover.ReasonPlannedSwitchRequested, failover.ReasonFailoverSucceeded)
	if n := util.EventReasons(t, b.spoke)[failover.ReasonHubBehind]; n != 0 {
		t.Errorf("%d HubBehind events: the switch went to a hub reported in step", n)
	}

	// A planned switch back to the primary, reported behind on hub B's ManagedCluster, waits (there is no time
	// after which it goes ahead on its own: the decision's table test holds it an hour and a day) until a person
	// forces it with spec.forceSwitch; it then goes ahead with a HubBehind warning.
	b.plannedSwitchWaits(t, b.hubB, hubB, primary, "set FailoverConfig spec.forceSwitch: primary to switch now")
	util.UpdateFailoverConfigSpec(t, b.spoke, func(s *failoverv1alpha1.FailoverConfigSpec) { s.ForceSwitch = primary })
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout+failoverSlack, "forced planned switch hub-b -> primary",
		lastFailoverIs(hubB, primary, failoverv1alpha1.FailoverReasonPlannedSwitch, 2))
	util.WaitForClusterAvailable(t, b.hubA, clusterName, failoverSlack)
	util.WaitForEvent(t, b.spoke, failover.ReasonHubBehind, "forced by FailoverConfig spec.forceSwitch", statusTimeout)
	b.expectNotExited(t)
}

// annotateManagedCluster merge-patches the annotations of ManagedCluster name on hub.
func annotateManagedCluster(t *testing.T, hub *framework.Hub, name string, annotations map[string]any) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		t.Fatal(err)
	}
	mcs := dynamic.NewForConfigOrDie(hub.AdminConfig).Resource(schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1", Resource: "managedclusters"})
	if _, err := mcs.Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("annotating ManagedCluster %s on hub %s: %v", name, hub.Name, err)
	}
}

func uidOf(s *corev1.Secret) types.UID {
	if s == nil {
		return ""
	}
	return s.GetUID()
}

// plannedSwitchWaits writes, on hub's ManagedCluster (the active hub's, as the replicator would), a report that
// names target behind, asks for a planned switch to target and checks that it waits: the status shows target
// Behind, the PlannedSwitchWaiting event (containing eventText) and condition come, and the cluster stays on
// active for 10 s.
func (b *bed) plannedSwitchWaits(t *testing.T, hub *framework.Hub, active, target, eventText string) {
	t.Helper()
	annotateManagedCluster(t, hub, clusterName, map[string]any{failoverv1alpha1.AnnotationHubsInStep: "", failoverv1alpha1.AnnotationHubsBehind: target})
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout, target+" reported Behind", func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		h := util.HubProbe(fc, target)
		return h != nil && h.Replication == failoverv1alpha1.HubBehind, util.DescribeFailoverStatus(fc)
	})
	util.UpdateFailoverConfigSpec(t, b.spoke, func(s *failoverv1alpha1.FailoverConfigSpec) { s.SwitchTo = target })
	util.WaitForEvent(t, b.spoke, failover.ReasonPlannedSwitchWaiting, eventText, statusTimeout)
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "Progressing True PlannedSwitchWaiting", func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		c := meta.FindStatusCondition(fc.Status.Conditions, failoverv1alpha1.ConditionProgressing)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == failover.ReasonPlannedSwitchWaiting, util.DescribeFailoverStatus(fc)
	})
	framework.Consistently(t, 10*time.Second, time.Second, func() (bool, error) {
		fc, err := util.GetFailoverConfig(b.spoke)
		if err != nil {
			return false, err
		}
		return fc.Status.ActiveHub == active, nil
	}, "the planned switch to %s waits while it is reported behind", target)
}
