package managedcluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/informers"
)

// TestNodeSumsOverCompactNodes: the sums of the resource reconciler over Nodes as the spoke informer caches them
// (informers.CompactNode) equal those over the full Nodes.
func TestNodeSumsOverCompactNodes(t *testing.T) {
	full := []*corev1.Node{
		newNode("n1", false, resources("cpu", "4", "memory", "16Gi", "pods", "110"), resources("cpu", "3500m", "memory", "15Gi")),
		newNode("n2", true, resources("cpu", "8", "memory", "32Gi"), resources("cpu", "7", "memory", "30Gi")),
	}
	var compact []*corev1.Node
	for _, n := range full {
		n.Labels = map[string]string{"kubernetes.io/hostname": n.Name}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		n.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
		out, err := informers.CompactNode(n.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		compact = append(compact, out.(*corev1.Node))
	}
	wantCap, wantAlloc, err := (&resourceReconciler{nodeLister: nodeLister(t, full)}).sumNodeResources()
	if err != nil {
		t.Fatal(err)
	}
	gotCap, gotAlloc, err := (&resourceReconciler{nodeLister: nodeLister(t, compact)}).sumNodeResources()
	if err != nil {
		t.Fatal(err)
	}
	if !equalResources(gotCap, wantCap) || !equalResources(gotAlloc, wantAlloc) {
		t.Errorf("sums over compacted Nodes = %v / %v, want %v / %v", gotCap, gotAlloc, wantCap, wantAlloc)
	}
}

// equalResources compares two resource lists by quantity value.
func equalResources(a, b clusterv1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, qa := range a {
		qb, ok := b[name]
		if !ok || qa.Cmp(qb) != 0 {
			return false
		}
	}
	return true
}

// nodeLister serves nodes from an indexer.
func nodeLister(t *testing.T, nodes []*corev1.Node) corev1listers.NodeLister {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, n := range nodes {
		if err := indexer.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	return corev1listers.NewNodeLister(indexer)
}
