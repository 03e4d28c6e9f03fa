package replicator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
// Then a second name, late-cluster, whose second spoke registers on hub B only after the replicator copied the
// first spoke's ManagedCluster and ManifestWork there: the second spoke joins the copy, its lease must not move
// the first spoke's cluster to hub B, and once both agents renew their leases after the conflict the replicator
// must withdraw the copied ManifestWork (OCM's work agent on the second spoke keeps none of it) and leave the
// ManagedCluster to the second spoke, touching nothing on hub A.
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

	// A name whose second spoke registers on hub B only after the replicator copied the first spoke's
	// ManagedCluster and ManifestWork there (a hub rebuilt, or given the replicator's access, before its own
	// cluster of that name registered). The second spoke joins the copy; the replicator withdraws what it copied
	// there for the first spoke once that spoke is seen alive on hub A, and OCM's work agent on the second spoke
	// removes whatever it applied of it.
	const late = "late-cluster"
	spoke3 := framework.StartSpoke(t, framework.SpokeOptions{})
	util.EnsureAgentNamespace(t, spoke3)
	util.StartAgent(t, spoke3, util.AgentConfig{
		Bootstrap: hubA.BootstrapKubeconfig(),
		Mutate:    func(o *klusterlet.FailoverAgentOptions) { o.ClusterName, o.AgentName = late, "agent3" },
	})
	util.WaitForClusterAvailable(t, hubA, late, 90*time.Second)
	createWork(t, hubA, configMapWork(t, late, "late-work", map[string]string{"cm-late": "for spoke 3"}))
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, late, "late-work", replicationTimeout, "a copy from hub-a", copiedFrom("hub-a"))
	copied := waitObj(t, hubBHub, failoverv1alpha1.KindManagedCluster, "", late, replicationTimeout, "a copy recording spoke 3's identity",
		func(o *unstructured.Unstructured) bool {
			_, recorded := mirror.ClusterIdentity(o)
			return mirror.IsCopy(o) && recorded != ""
		})
	_, id3 := mirror.ClusterIdentity(copied)
	spoke4 := framework.StartSpoke(t, framework.SpokeOptions{WorkCRD: true})
	util.EnsureAgentNamespace(t, spoke4)
	agent4 := util.StartAgent(t, spoke4, util.AgentConfig{
		Bootstrap: hubBHub.BootstrapKubeconfig(),
		Mutate:    func(o *klusterlet.FailoverAgentOptions) { o.ClusterName, o.AgentName = late, "agent4" },
	})
	startWorkAgent(t, spoke4, agent4, late, evictionGracePeriod)
	// The withdrawal waits for a renewal of spoke 3's lease on hub A seen after the conflict, then one of spoke
	// 4's on hub B (each every 60 s to 75 s): until then spoke 4's work agent may apply spoke 3's ManifestWork.
	appliedBefore := false
	joined := waitObj(t, hubBHub, failoverv1alpha1.KindManagedCluster, "", late, 5*replicationTimeout, "spoke 4's own ManagedCluster, no copy",
		func(o *unstructured.Unstructured) bool {
			if _, err := spoke4.Kube.CoreV1().ConfigMaps("default").Get(ctx, "cm-late", metav1.GetOptions{}); err == nil {
				appliedBefore = true
			}
			claim, recorded := mirror.ClusterIdentity(o)
			return o != nil && !mirror.IsCopy(o) && recorded == "" && claim != "" && claim != id3
		})
	id4, _ := mirror.ClusterIdentity(joined)
	expectEvent(t, r, replication.ReasonCopiesWithdrawn, fmt.Sprintf("joined by spoke %s, but the replicator had copied it there for spoke %s: 1 copies withdrawn [ManifestWork/%s/late-work]", id4, id3, late))
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, late, "late-work", replicationTimeout, "withdrawn", absent)
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		_, err := spoke4.Kube.CoreV1().ConfigMaps("default").Get(ctx, "cm-late", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	}, "spoke 4 holds no ConfigMap of spoke 3's ManifestWork")
	// Spoke 3's cluster on hub A is untouched; spoke 4's agent stays Available on hub B.
	if w, err := getObj(hubA, mwKind, late, "late-work"); err != nil || w == nil || w.GetDeletionTimestamp() != nil || mirror.IsCopy(w) {
		t.Errorf("hub-a's late-work: %s (err %v), want the original, untouched", describe(w), err)
	}
	if mc, err := getObj(hubA, mcKind, "", late); err != nil || mirror.IsCopy(mc) {
		t.Errorf("hub-a's %s: %s (err %v), want its own", late, describe(mc), err)
	} else if claim, _ := mirror.ClusterIdentity(mc); claim != id3 {
		t.Errorf("hub-a's %s reports claim %q, want spoke 3's %q", late, claim, id3)
	}
	util.WaitForClusterAvailable(t, hubBHub, late, 90*time.Second)
	t.Logf("measured: %s copied to hub-b for spoke 3 (%s), joined there by spoke 4 (%s): the copy of late-work withdrawn (applied on spoke 4 before: %t), spoke 4 holds none of it, hub-a untouched",
		late, id3, id4, appliedBefore)
}
