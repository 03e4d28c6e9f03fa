package klusterlet

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openshift/library-go/pkg/operator/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"
	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
)

// TestSessionControllers: the builders handed to the hub sessions carry the agent's settings: the ManagedCluster
// they create has the flags' spoke URL, the spoke's CA bundle and the filtered annotations; add-on management
// follows --disable-addon-management; the hosted mode's add-on Secrets go to the cluster hosting the agent.
func TestSessionControllers(t *testing.T) {
	spokeKube, agentKube := fake.NewSimpleClientset(), fake.NewSimpleClientset()
	spoke := &SpokeClients{CABundle: []byte("ca-pem"), Kube: spokeKube, AgentKube: agentKube}
	recorder := events.NewInMemoryRecorder("test", clock.RealClock{})
	annotations := map[string]string{"agent.open-cluster-management.io/owner": "team-a"}

	o := NewFailoverAgentOptions()
	o.ClusterName, o.AgentName = "cluster1", "agent1"
	o.SpokeExternalServerURLs = []string{"https://spoke.example.com:6443"}
	c := sessionControllers{o: o, spoke: spoke, identity: managedcluster.NewSpokeIdentityReader(spokeKube.CoreV1()), annotations: annotations, clock: clock.RealClock{}, recorder: recorder}
	built := c.controllers()
	if built.AddOns == nil {
		t.Errorf("AddOns = nil with add-on management on (the default)")
	}
	if c.hosting() != spokeKube {
		t.Errorf("add-on hosting cluster = %v, want the managed cluster's client when not hosted", c.hosting())
	}
	registered := built.Registered(testRegisteredInputs())
	if n := len(registered); n != 3 {
		t.Errorf("Registered built %d controllers, want 3 (lease, creating, status)", n)
	}
	var names []string
	for _, r := range registered {
		names = append(names, r.Name())
	}
	if want := []string{"ManagedClusterLeaseController", "ManagedClusterCreatingController", "ManagedClusterStatusController"}; !slices.Equal(names, want) {
		t.Errorf("Registered built %v, want %v, in the order they start", names, want)
	}

	hub := clusterfake.NewSimpleClientset()
	created, err := built.EnsureManagedCluster(context.Background(), hub.ClusterV1())
	if err != nil || !created {
		t.Fatalf("EnsureManagedCluster = %v, %v; want created", created, err)
	}
	mc, err := hub.ClusterV1().ManagedClusters().Get(context.Background(), "cluster1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantConfigs := []clusterv1.ClientConfig{{URL: "https://spoke.example.com:6443", CABundle: []byte("ca-pem")}}
	if diff := cmp.Diff(wantConfigs, mc.Spec.ManagedClusterClientConfigs); diff != "" {
		t.Errorf("spec.managedClusterClientConfigs (-want +got):\n%s", diff)
	}
	if got := mc.Annotations["agent.open-cluster-management.io/owner"]; got != "team-a" {
		t.Errorf("annotation owner = %q, want team-a", got)
	}

	o.DisableAddOnManagement = true
	o.SpokeKubeconfig = "/spoke/kubeconfig"
	c = sessionControllers{o: o, spoke: spoke, identity: managedcluster.NewSpokeIdentityReader(spokeKube.CoreV1()), annotations: annotations, clock: clock.RealClock{}, recorder: recorder}
	if c.controllers().AddOns != nil {
		t.Errorf("AddOns set with --disable-addon-management")
	}
	if c.hosting() != agentKube {
		t.Errorf("add-on hosting cluster in hosted mode = %v, want the agent's cluster client", c.hosting())
	}
}

// testRegisteredInputs are main-phase inputs on fake clients and informers (not started).
func testRegisteredInputs() hubsession.RegisteredInputs {
	hubKube, hubCluster := fake.NewSimpleClientset(), clusterfake.NewSimpleClientset()
	clusters := clusterinformers.NewSharedInformerFactory(hubCluster, 0)
	spoke := kubeinformers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	return hubsession.RegisteredInputs{
		HubKube:         hubKube,
		HubCluster:      hubCluster,
		ManagedClusters: clusters.Cluster().V1().ManagedClusters(),
		Nodes:           spoke.Core().V1().Nodes(),
		Claims:          clusters.Cluster().V1alpha1().ClusterClaims(),
		Conflicts:       managedcluster.NewConflictTracker(),
		EpochRecorded:   func(failoverv1alpha1.AgentEpoch) {},
		LeaseRenewed:    func(time.Time) {},
	}
}
