package replicator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/replication"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/status"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// identityWatch is how long TestClusterNameOfTwoSpokes watches the hubs once the replicator reported the
// conflict: longer than the agents' lease duration (60 s), so that each agent renews its lease on its own hub
// at least once while the replicator decides the cluster's direction again on every renewal.
const identityWatch = 75 * time.Second

// TestClusterNameOfTwoSpokes: two spokes, each with its own agent, join two hubs under one name, local-cluster,
// as ACM registers every hub's own cluster; each hub holds a ManifestWork for its own spoke. The replicator,
// configured for both hubs, must not hand either spoke the other's ManifestWork, turn either ManagedCluster into
// a copy, or fence either cluster's namespace: it reports the name (event, Degraded condition) and leaves it alone,
// while each agent keeps renewing its lease. Each agent reports its spoke's kube-system UID as its id.k8s.io claim.
func TestClusterNameOfTwoSpokes(t *testing.T) {
	const cluster = "local-cluster"
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", HubController: true, Signer: framework.SignerInProcess})
	hubBHub := framework.StartHub(t, framework.HubOptions{Name: hubB, HubController: true, Signer: framework.SignerInProcess})
	ctx := context.Background()
	ids := map[string]string{}
	for i, h := range []*framework.Hub{hubA, hubBHub} {
		spoke := framework.StartSpoke(t, framework.SpokeOptions{})
		util.EnsureAgentNamespace(t, spoke)
		util.StartAgent(t, spoke, util.AgentConfig{
			Bootstrap: h.BootstrapKubeconfig(),
			Mutate: func(o *klusterlet.FailoverAgentOptions) {
				o.ClusterName, o.AgentName = cluster, fmt.Sprintf("agent%d", i+1)
			},
		})
		util.WaitForClusterAvailable(t, h, cluster, 90*time.Second)
		mc := waitObj(t, h, failoverv1alpha1.KindManagedCluster, "", cluster, replicationTimeout, "the agent's id.k8s.io claim",
			func(o *unstructured.Unstructured) bool {
				claim, _ := mirror.ClusterIdentity(o)
				return claim != ""
			})
		ids[h.Name], _ = mirror.ClusterIdentity(mc)
	}
	if ids["hub-a"] == ids[hubB] {
		t.Fatalf("both spokes report the identity %s: the test needs two", ids["hub-a"])
	}
	createWork(t, hubA, configMapWork(t, cluster, "work-a", map[string]string{"cm-a": "for spoke 1"}))
	createWork(t, hubBHub, configMapWork(t, cluster, "work-b", map[string]string{"cm-b": "for spoke 2"}))

	r := setUpReplicator(t, hubBHub, failoverv1alpha1.ReplicationConfigSpec{},
		namedHub{name: "hub-a", hub: hubA}, namedHub{name: hubB, hub: hubBHub})
	r.start()
	expectEvent(t, r, replication.ReasonClusterIdentityConflict, fmt.Sprintf("hub-a: %s (claim); %s: %s (claim)", ids["hub-a"], hubB, ids[hubB]))
	r.waitStatus(replicationTimeout, "Degraded naming the cluster", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		for _, c := range s.Conditions {
			if c.Type == failoverv1alpha1.ReplicationConditionDegraded {
				return c.Reason == status.ReasonClusterIdentityConflict && strings.Contains(c.Message, cluster)
			}
		}
		return false
	})

	// Each agent renews its lease on its own hub meanwhile; nothing crosses, whichever lease is the freshest.
	mcKind, mwKind := mustKind(failoverv1alpha1.KindManagedCluster), mustKind(failoverv1alpha1.KindManifestWork)
	deadline := time.Now().Add(identityWatch)
	checks := 0
	for time.Now().Before(deadline) {
		for _, c := range []struct {
			hub   *framework.Hub
			other string
		}{{hubA, "work-b"}, {hubBHub, "work-a"}} {
			if w, err := getObj(c.hub, mwKind, cluster, c.other); err != nil || w != nil {
				t.Fatalf("hub %s holds the other spoke's ManifestWork %s: %s (err %v)", c.hub.Name, c.other, describe(w), err)
			}
			mc, err := getObj(c.hub, mcKind, "", cluster)
			if err != nil || mc == nil || mirror.IsCopy(mc) {
				t.Fatalf("hub %s's ManagedCluster %s: %s (err %v), want its own, not a copy", c.hub.Name, cluster, describe(mc), err)
			}
			ns, err := c.hub.Kube.CoreV1().Namespaces().Get(ctx, cluster, metav1.GetOptions{})
			if err != nil || ns.Labels[fence.LabelClusterHub] != "" {
				t.Fatalf("hub %s's namespace %s: labels %v (err %v), want no fence mark", c.hub.Name, cluster, ns.GetLabels(), err)
			}
		}
		checks++
		time.Sleep(2 * time.Second)
	}
	// Each hub's users still manage their own cluster of that name: the fence lets a create through.
	createWork(t, hubBHub, configMapWork(t, cluster, "work-b2", map[string]string{"cm-b2": "for spoke 2"}))
	if got := r.events(replication.ReasonClusterSourceChanged); len(got) != 0 {
		t.Errorf("source changes of a name of two spokes: %q, want none", got)
	}
	if got := r.events(replication.ReasonClusterIdentityConflict); len(got) != 1 {
		t.Errorf("ClusterIdentityConflict events: %q, want one", got)
	}
	t.Logf("measured: identities hub-a %s, hub-b %s; %d checks over %s: no ManifestWork crossed, no copy, no fence mark",
		ids["hub-a"], ids[hubB], checks, identityWatch)
}
