package failover_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	// watchReaction bounds the wait for the agent to act on a change of the watched Secret. It is a timeout
	// for a loaded 2-core machine, not a measure of how the change was noticed (the log line reports the
	// delay).
	watchReaction = statusTimeout
	// controlWindow is how long the control (a label change) is watched for any reaction.
	controlWindow = 10 * time.Second
	// shortLeaseSeconds is spec.leaseDurationSeconds set on hub A's ManagedCluster, so that the agent renews
	// its lease often enough for the test to see the renewals stop.
	shortLeaseSeconds = 3
)

// TestBootstrapSecretReplaced is FC-02 with the primary's bootstrap kubeconfig in the watched Secret
// bootstrap-hub-kubeconfig. Control: changing only a label of the Secret changes nothing. Then its data is
// replaced by hub B's bootstrap kubeconfig (another server and CA): the agent reacts through the watch (event
// BootstrapKubeconfigChanged at once), stops renewing its lease on hub A and joins hub B with the same cluster and
// agent name. No FailoverConfig: the primary is the only hub.
func TestBootstrapSecretReplaced(t *testing.T) {
	t.Parallel()
	b := newBed(t, bedOptions{
		noFailoverConfig: true,
		beforeAgent: func(b *bed) {
			util.ApplyBootstrapSecret(t, b.spoke, klusterlet.DefaultBootstrapKubeconfigSecret, b.hubA.BootstrapKubeconfig())
		},
		// The file names hub B: the Secret, when present, wins; the cluster must join hub A.
		primaryBootstrap: func(b *bed) []byte { return b.hubB.BootstrapKubeconfig() },
	})
	b.expectSecretFor(t, b.hubA)
	ctx := context.Background()

	// Renew often on hub A, so that the renewals can be seen to stop.
	patch := fmt.Sprintf(`{"spec":{"leaseDurationSeconds":%d}}`, shortLeaseSeconds)
	if _, err := b.hubA.Cluster.ClusterV1().ManagedClusters().Patch(ctx, clusterName, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	leaseRenewTime := func() time.Time {
		lease, err := b.hubA.Kube.CoordinationV1().Leases(clusterName).Get(ctx, framework.ClusterLeaseName, metav1.GetOptions{})
		if err != nil || lease.Spec.RenewTime == nil {
			return time.Time{}
		}
		return lease.Spec.RenewTime.Time
	}
	first := leaseRenewTime()
	framework.Eventually(t, statusTimeout, util.PollInterval, func() (bool, error) {
		return leaseRenewTime().After(first), nil
	}, "lease on hub A renewed every %ds", shortLeaseSeconds)

	// Control: a label change is not a new bootstrap kubeconfig.
	started := util.EventReasons(t, b.spoke)[hubsession.ReasonHubControllersStarted]
	hubSecret := util.HubKubeconfigSecret(t, b.spoke)
	util.LabelSecret(t, b.spoke, klusterlet.DefaultBootstrapKubeconfigSecret, "example.com/touched", "yes")
	framework.Consistently(t, controlWindow, 500*time.Millisecond, func() (bool, error) {
		got := util.EventReasons(t, b.spoke)
		if got[failover.ReasonBootstrapKubeconfigChanged] != 0 || got[hubsession.ReasonHubControllersStarted] != started {
			return false, fmt.Errorf("events after a label change: %v", got)
		}
		now := util.HubKubeconfigSecret(t, b.spoke)
		if now == nil || now.ResourceVersion != hubSecret.ResourceVersion {
			return false, fmt.Errorf("the hub kubeconfig secret changed after a label change of the bootstrap secret")
		}
		return true, nil
	}, "nothing happens when only a label of the bootstrap secret changes")

	// The data is replaced by hub B's bootstrap kubeconfig.
	replaced := time.Now()
	util.ApplyBootstrapSecret(t, b.spoke, klusterlet.DefaultBootstrapKubeconfigSecret, b.hubB.BootstrapKubeconfig())
	util.WaitForEventCount(t, b.spoke, failover.ReasonBootstrapKubeconfigChanged, 1, watchReaction)
	t.Logf("BootstrapKubeconfigChanged %s after the Secret was replaced", time.Since(replaced).Round(100*time.Millisecond))
	mc := util.WaitForClusterAvailable(t, b.hubB, clusterName, joinTimeout)
	t.Logf("cluster Available on hub B %s after the Secret was replaced", time.Since(replaced).Round(100*time.Millisecond))
	if mc.Name != clusterName {
		t.Errorf("ManagedCluster on hub B is %q, want %q", mc.Name, clusterName)
	}
	b.expectSecretFor(t, b.hubB)
	if n := util.EventReasons(t, b.spoke)[failover.ReasonBootstrapKubeconfigChanged]; n != 1 {
		t.Errorf("%d BootstrapKubeconfigChanged events for one replacement, want 1", n)
	}

	// Hub A's lease is no longer renewed.
	last := leaseRenewTime()
	framework.Consistently(t, 3*shortLeaseSeconds*time.Second, time.Second, func() (bool, error) {
		return leaseRenewTime().Equal(last), nil
	}, "no lease renewal on hub A after the move to hub B")
	b.expectNotExited(t)
}
