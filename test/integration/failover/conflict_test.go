package failover_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/lease"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	// idClaim is the reserved claim holding the spoke's kube-system namespace UID.
	idClaim = "id.k8s.io"
	// secondAgentName is the agent name of the second spoke's agent.
	secondAgentName = "agent2"
	// conflictWindow is how long the second agent is watched for writes after it reported the conflict.
	conflictWindow = 15 * time.Second
)

// TestSameClusterNameOnTwoSpokes is FC-06: agent X is registered as cluster1 on hub A; agent Y on another spoke
// (another kube-system UID, so another id.k8s.io claim) starts with the same cluster name, and the hub
// auto-approves its CSR. Y reports the conflict (event) and never starts renewing the lease; the ManagedCluster
// keeps X's id.k8s.io claim and stays Available; X reports no conflict.
func TestSameClusterNameOnTwoSpokes(t *testing.T) {
	t.Parallel()
	b := newBed(t, bedOptions{noFailoverConfig: true, noHubB: true})
	ctx := context.Background()
	// Renew often, so that the lease is fresh whenever Y looks at it and a renewal by Y would show quickly.
	patch := fmt.Sprintf(`{"spec":{"leaseDurationSeconds":%d}}`, shortLeaseSeconds)
	if _, err := b.hubA.Cluster.ClusterV1().ManagedClusters().Patch(ctx, clusterName, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	xID := kubeSystemUID(t, b.spoke)
	idOnHub := func() (string, error) {
		mc, err := b.hubA.Cluster.ClusterV1().ManagedClusters().Get(ctx, clusterName, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return util.ClaimValue(mc, idClaim), nil
	}
	framework.Eventually(t, statusTimeout, util.PollInterval, func() (bool, error) {
		id, err := idOnHub()
		return id == xID, err
	}, "ManagedCluster %s carries X's %s claim %s", clusterName, idClaim, xID)

	spokeY := framework.StartSpoke(t)
	yID := kubeSystemUID(t, spokeY)
	if yID == xID {
		t.Fatalf("both spokes have kube-system UID %s", xID)
	}
	util.StartAgent(t, spokeY, util.AgentConfig{
		Bootstrap: b.hubA.BootstrapKubeconfig(),
		Mutate: func(o *klusterlet.FailoverAgentOptions) {
			o.ClusterName, o.AgentName = clusterName, secondAgentName
			o.FailoverConfigName = ""
		},
	})
	util.WaitForEventCount(t, spokeY, managedcluster.ReasonManagedClusterIdentityConflict, 1, joinTimeout)
	t.Logf("Y's conflict event: %v", util.EventMessages(t, spokeY, managedcluster.ReasonManagedClusterIdentityConflict))

	framework.Consistently(t, conflictWindow, time.Second, func() (bool, error) {
		id, err := idOnHub()
		if err != nil {
			return false, err
		}
		if id != xID {
			return false, fmt.Errorf("ManagedCluster %s %s claim is %q, want X's %q (Y wrote status)", clusterName, idClaim, id, xID)
		}
		if ok, err := util.ClusterAvailable(b.hubA, clusterName); !ok {
			return false, err
		}
		if n := util.EventReasons(t, spokeY)[lease.ReasonLeaseUpdateStarted]; n != 0 {
			return false, fmt.Errorf("Y started renewing the lease (%d %s events)", n, lease.ReasonLeaseUpdateStarted)
		}
		return true, nil
	}, "X unaffected and Y silent while the names conflict")
	if n := util.EventReasons(t, b.spoke)[managedcluster.ReasonManagedClusterIdentityConflict]; n != 0 {
		t.Errorf("X reported %d identity conflicts; it is the registered cluster", n)
	}
	if s := util.HubKubeconfigSecret(t, spokeY); s != nil {
		t.Logf("Y holds a hub kubeconfig secret for %s/%s", s.Data["cluster-name"], s.Data["agent-name"])
	}
}

// kubeSystemUID returns the UID of the spoke's kube-system namespace, the value of its id.k8s.io claim.
func kubeSystemUID(t *testing.T, spoke *framework.Spoke) string {
	t.Helper()
	ns, err := spoke.Kube.CoreV1().Namespaces().Get(context.Background(), "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get namespace kube-system: %v", err)
	}
	return string(ns.UID)
}

// TestStandbyHubHoldsAnotherSpokesCluster: hub B holds a ManagedCluster of this cluster's name that the replicator
// keeps for another spoke (a copy whose failover.open-cluster-management.io/cluster-id names another identity:
// two clusters of one name, e.g. local-cluster). Joining B would make OCM's work agent run that spoke's
// ManifestWorks here. The standby probe reports B IdentityConflict, naming both identities; the agent sends no
// CSR there (no standby credentials) and writes nothing on that ManagedCluster; when hub A is cut off the cluster
// stays (Degraded NoViableHub) rather than move to B. Once B's copy names this spoke, B is Ready and the
// cluster moves there.
func TestStandbyHubHoldsAnotherSpokesCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBed(t, bedOptions{
		spec: spec(noViableTimeout),
		beforeAgent: func(b *bed) {
			_, err := b.hubB.Cluster.ClusterV1().ManagedClusters().Create(ctx, &clusterv1.ManagedCluster{
				ObjectMeta: metav1.ObjectMeta{Name: clusterName, Labels: map[string]string{failoverv1alpha1.LabelReplicatedFrom: "hub-c"},
					Annotations: map[string]string{failoverv1alpha1.AnnotationClusterID: "another-spoke"}},
				Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		},
	})
	ourID := kubeSystemUID(t, b.spoke)
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "hub-b probe IdentityConflict", probeIs(hubB, failoverv1alpha1.HubProbeIdentityConflict,
		fmt.Sprintf(`copy for another spoke (%s "another-spoke", this spoke's identity is %q)`, failoverv1alpha1.AnnotationClusterID, ourID)))
	b.waitEvent(t, failover.ReasonStandbyProbeFailed)

	b.hubA.Proxy.Cut()
	util.WaitForFailoverConfig(t, b.spoke, 2*noViableTimeout+skipPeriod+failoverSlack, "Degraded NoViableHub, still on hub A",
		func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
			c := metaCondition(fc, failoverv1alpha1.ConditionDegraded)
			ok := c != nil && c.Status == metav1.ConditionTrue && c.Reason == failover.ReasonNoViableHub && fc.Status.ActiveHub == primary
			return ok, util.DescribeFailoverStatus(fc)
		})
	if got := util.EventReasons(t, b.spoke)[failover.ReasonFailoverStarted]; got != 0 {
		t.Errorf("%d %s events: the agent started a move to a hub whose ManagedCluster is another spoke's", got, failover.ReasonFailoverStarted)
	}
	// Nothing was asked of hub B in that cluster's name: no CSR (no standby credentials), nothing written on its
	// ManagedCluster (no claims, no epoch).
	csrs, err := b.hubB.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{LabelSelector: "open-cluster-management.io/cluster-name=" + clusterName})
	if err != nil {
		t.Fatal(err)
	}
	if len(csrs.Items) != 0 {
		t.Errorf("hub-b holds %d CSRs of cluster %s (%s first), want none: its ManagedCluster is another spoke's", len(csrs.Items), clusterName, csrs.Items[0].Name)
	}
	if mc, err := b.hubB.Cluster.ClusterV1().ManagedClusters().Get(ctx, clusterName, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if len(mc.Status.ClusterClaims) != 0 || mc.Annotations[failoverv1alpha1.AnnotationEpoch] != "" {
		t.Errorf("hub-b's ManagedCluster %s got claims %v and epoch %q from this agent, want none", clusterName, mc.Status.ClusterClaims, mc.Annotations[failoverv1alpha1.AnnotationEpoch])
	}

	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, failoverv1alpha1.AnnotationClusterID, ourID)
	if _, err := b.hubB.Cluster.ClusterV1().ManagedClusters().Patch(ctx, clusterName, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	util.WaitForFailoverConfig(t, b.spoke, probeInterval+skipPeriod+2*failoverSlack, "on hub-b and Available once its copy names this spoke", util.ActiveAndAvailable(hubB))
}
