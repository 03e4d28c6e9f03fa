package managedcluster

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/internal/synctesting"
)

// statusFixture wires a status controller to fake hub and spoke clients, informer stores,
// a fake clock and a fake spoke API server.
type statusFixture struct {
	t             *testing.T
	clusterClient *clusterfake.Clientset
	hubKube       *kubefake.Clientset
	spokeKube     *kubefake.Clientset
	clusters      clusterinformers.SharedInformerFactory
	spokeClusters clusterinformers.SharedInformerFactory
	nodes         kubeinformers.SharedInformerFactory
	clock         *clocktesting.FakeClock
	tracker       *ConflictTracker
	server        *spokeServer
	controller    *managedClusterStatusController
	recorder      events.InMemoryRecorder
	syncCtx       *synctesting.SyncContext
}

type fixtureConfig struct {
	cluster      *clusterv1.ManagedCluster
	nodes        []*corev1.Node
	claims       []*clusterv1alpha1.ClusterClaim
	hubObjects   []runtime.Object // hub leases
	spokeObjects []runtime.Object // spoke namespaces; when set, SpokeIdentity is wired
	server       *spokeServer
	modify       func(*StatusOptions)
}

func newStatusFixture(t *testing.T, config fixtureConfig) *statusFixture {
	t.Helper()
	f := &statusFixture{
		t:             t,
		clusterClient: clusterfake.NewSimpleClientset(config.cluster),
		hubKube:       kubefake.NewSimpleClientset(config.hubObjects...),
		spokeKube:     kubefake.NewSimpleClientset(config.spokeObjects...),
		clock:         clocktesting.NewFakeClock(testNow),
		tracker:       NewConflictTracker(),
		server:        config.server,
		recorder:      newTestRecorder(),
	}
	f.syncCtx = synctesting.New("key", f.recorder)
	if f.server == nil {
		f.server = healthy(t)
	}
	f.clusters = clusterinformers.NewSharedInformerFactory(f.clusterClient, 0)
	f.spokeClusters = clusterinformers.NewSharedInformerFactory(clusterfake.NewSimpleClientset(), 0)
	f.nodes = kubeinformers.NewSharedInformerFactory(f.spokeKube, 0)
	f.refreshCache()
	for _, node := range config.nodes {
		f.add(f.nodes.Core().V1().Nodes().Informer().GetStore().Add(node))
	}
	for _, claim := range config.claims {
		f.add(f.spokeClusters.Cluster().V1alpha1().ClusterClaims().Informer().GetStore().Add(claim))
	}
	opts := StatusOptions{
		ClusterName:               testCluster,
		HubClusterClient:          f.clusterClient.ClusterV1(),
		HubClusterInformer:        f.clusters.Cluster().V1().ManagedClusters(),
		HubLeaseClient:            f.hubKube.CoordinationV1(),
		SpokeDiscoveryClient:      f.server.discovery(t),
		NodeInformer:              f.nodes.Core().V1().Nodes(),
		ClaimInformer:             f.spokeClusters.Cluster().V1alpha1().ClusterClaims(),
		MaxCustomClusterClaims:    20,
		ClusterHealthCheckPeriod:  time.Minute,
		HealthCheckRetryInterval:  5 * time.Second,
		AvailableFailureThreshold: 1,
		ConflictTracker:           f.tracker,
		Clock:                     f.clock,
	}
	if len(config.spokeObjects) > 0 {
		opts.SpokeIdentity = NewSpokeIdentityReader(f.spokeKube.CoreV1())
	}
	if config.modify != nil {
		config.modify(&opts)
	}
	f.controller = newStatusController(opts)
	return f
}

func (f *statusFixture) add(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// sync runs one sync with the given queue key ("key" is the periodic resync).
func (f *statusFixture) sync(key string) {
	f.t.Helper()
	if err := f.controller.sync(context.Background(), f.syncCtx.WithKey(key)); err != nil {
		f.t.Fatalf("sync(%q): %v", key, err)
	}
}

// refreshCache copies the hub object into the informer store, as the informer would after
// a write.
func (f *statusFixture) refreshCache() {
	f.t.Helper()
	cluster, err := f.clusterClient.ClusterV1().ManagedClusters().Get(context.Background(), testCluster, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.add(f.clusters.Cluster().V1().ManagedClusters().Informer().GetStore().Update(cluster))
}

// hubCluster returns the ManagedCluster as stored on the fake hub.
func (f *statusFixture) hubCluster() *clusterv1.ManagedCluster {
	f.t.Helper()
	cluster, err := f.clusterClient.ClusterV1().ManagedClusters().Get(context.Background(), testCluster, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return cluster
}

// statusPatches returns the decoded merge patches sent on the status subresource; any other
// write fails the test.
func (f *statusFixture) statusPatches() []map[string]any {
	f.t.Helper()
	var patches []map[string]any
	for _, action := range f.clusterClient.Actions() {
		switch action.GetVerb() {
		case "get", "list", "watch":
			continue
		case "patch":
			patch := action.(clienttesting.PatchAction)
			if patch.GetSubresource() != "status" || patch.GetPatchType() != "application/merge-patch+json" {
				f.t.Fatalf("unexpected patch %s on subresource %q", patch.GetPatchType(), patch.GetSubresource())
			}
			var body map[string]any
			if err := json.Unmarshal(patch.GetPatch(), &body); err != nil {
				f.t.Fatal(err)
			}
			patches = append(patches, body)
		default:
			f.t.Fatalf("unexpected hub write %q", action.GetVerb())
		}
	}
	return patches
}

func (f *statusFixture) events() []string {
	return eventReasons(f.recorder)
}

func newNode(name string, unschedulable bool, capacity, allocatable corev1.ResourceList) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{Unschedulable: unschedulable},
		Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: allocatable},
	}
}

func resources(pairs ...string) corev1.ResourceList {
	list := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		list[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return list
}

func clusterResources(pairs ...string) clusterv1.ResourceList {
	list := clusterv1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		list[clusterv1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return list
}

func newClaim(name, value string, labels map[string]string) *clusterv1alpha1.ClusterClaim {
	return &clusterv1alpha1.ClusterClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       clusterv1alpha1.ClusterClaimSpec{Value: value},
	}
}
