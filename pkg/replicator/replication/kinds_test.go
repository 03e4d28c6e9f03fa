package replication

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// testObject returns an object of apiVersion and kind named name in namespace ("" cluster-scoped) with a spec.
func testObject(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"size": int64(1)}}}
	if namespace != "" {
		o.SetNamespace(namespace)
	}
	return o
}

// Custom kinds follow their scope: a ClusterByNamespace Widget in the cluster's namespace and a ClusterByName
// ClusterWidget named after the cluster are copied; one in a namespace that is no cluster's, or named after no
// cluster, is not, and does not keep the standby from being caught up. A copy an earlier version made of what
// is a generated object now (a ClusterPermission's ManifestWork) is deleted from the standby.
func TestControllerCustomKindsAndStaleCopiesOfGeneratedObjects(t *testing.T) {
	widgets := mirror.CustomKindOf(failoverv1alpha1.CustomKind{Group: "example.com", Version: "v1", Resource: "widgets",
		Namespaced: true, Scope: failoverv1alpha1.ScopeClusterByNamespace})
	clusterWidgets := mirror.CustomKindOf(failoverv1alpha1.CustomKind{Group: "example.com", Version: "v1", Resource: "clusterwidgets",
		Scope: failoverv1alpha1.ScopeClusterByName})
	mcKind, mwKind := testKind(t, failoverv1alpha1.KindManagedCluster), testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind, widgets, clusterWidgets}

	controller := true
	generated := testObject("work.open-cluster-management.io/v1", "ManifestWork", testCluster, "cp-work")
	generated.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "rbac.open-cluster-management.io/v1alpha1", Kind: "ClusterPermission",
		Name: "cp", UID: "0f7a3a34-1111-4222-8333-944455556666", Controller: &controller}})
	staleCopy := testObject("work.open-cluster-management.io/v1", "ManifestWork", testCluster, "cp-work")
	staleCopy.SetLabels(map[string]string{mirror.LabelReplicatedFrom: testHubA})
	staleCopy.SetAnnotations(map[string]string{mirror.AnnotationContentHash: "0123456789abcdef"})

	handler := &proxyHandler{}
	a := newTestHub(t, testHubA, handler, kinds,
		managedCluster(testCluster, nil),
		testObject("example.com/v1", "Widget", testCluster, "w1"),
		testObject("example.com/v1", "Widget", "not-a-cluster", "w2"),
		testObject("example.com/v1", "ClusterWidget", "", testCluster),
		testObject("example.com/v1", "ClusterWidget", "", "nobody"),
		generated,
	)
	b := newTestHub(t, testHubB, handler, kinds, staleCopy)
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: 100 * time.Millisecond}, a, b)

	eventually(t, "hub-b holds copies of the cluster's Widget and ClusterWidget", func() bool {
		w, _ := b.hub.Peek(widgets.Name, testCluster, "w1")
		cw, _ := b.hub.Peek(clusterWidgets.Name, "", testCluster)
		return w != nil && cw != nil && mirror.IsCopy(w) && mirror.IsCopy(cw)
	})
	eventually(t, "hub-b is caught up", func() bool { return c.Snapshot().CaughtUp[testHubB] })
	eventually(t, "the stale copy of the ClusterPermission's ManifestWork is gone from hub-b", func() bool {
		return b.get(t, mwKind, testCluster, "cp-work") == nil
	})
	quiesce(t, c, a, b)
	if got := b.get(t, widgets, "not-a-cluster", "w2"); got != nil {
		t.Errorf("hub-b holds Widget not-a-cluster/w2, in a namespace that is no cluster's: %v", got.Object)
	}
	if got := b.get(t, clusterWidgets, "", "nobody"); got != nil {
		t.Errorf("hub-b holds ClusterWidget nobody, named after no cluster: %v", got.Object)
	}
	if slices.Contains(b.writes(mwKind), "create "+testCluster+"/cp-work") || slices.Contains(b.writes(mwKind), "update "+testCluster+"/cp-work") {
		t.Errorf("the replicator wrote the ClusterPermission's ManifestWork on hub-b: %v", b.writes(mwKind))
	}
	if c.keyCluster(Key{Kind: clusterWidgets.Name, Name: testCluster}) != testCluster {
		t.Errorf("keyCluster of a ClusterByName custom kind's key = %q, want %q", c.keyCluster(Key{Kind: clusterWidgets.Name, Name: testCluster}), testCluster)
	}
	if !slices.Contains(c.clusterKeys(testCluster), Key{Kind: clusterWidgets.Name, Name: testCluster}) {
		t.Errorf("clusterKeys(%s) = %v, lacks the ClusterWidget named after it", testCluster, c.clusterKeys(testCluster))
	}
}
