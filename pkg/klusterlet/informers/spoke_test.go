package informers

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
)

var testManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
	FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{}}`)}}}

// fullNode is a Node as a kubelet reports it: everything CompactNode drops, and what it keeps.
func fullNode(name string, unschedulable bool) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: "42",
			Labels:        map[string]string{"kubernetes.io/hostname": name, "node-role.kubernetes.io/worker": ""},
			Annotations:   map[string]string{"node.alpha.kubernetes.io/ttl": "0"},
			ManagedFields: testManagedFields},
		Spec: corev1.NodeSpec{Unschedulable: unschedulable, PodCIDR: "10.0.0.0/24",
			Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"),
				corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3500m"),
				corev1.ResourceMemory: resource.MustParse("15Gi")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
			Images:     []corev1.ContainerImage{{Names: []string{"registry.example/image:v1"}, SizeBytes: 1 << 20}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.34.3", OSImage: "Linux"},
		},
	}
}

// TestCompactNodeKeepsWhatTheStatusReads: name, UID, resourceVersion, spec.unschedulable, status.capacity and
// status.allocatable survive; labels, annotations, managedFields, taints, conditions, addresses, images and node
// info do not; a compacted Node comes back as it is.
func TestCompactNodeKeepsWhatTheStatusReads(t *testing.T) {
	in := fullNode("n1", true)
	out, err := CompactNode(in.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-n1", ResourceVersion: "42"},
		Spec:       corev1.NodeSpec{Unschedulable: true},
		Status:     corev1.NodeStatus{Capacity: in.Status.Capacity, Allocatable: in.Status.Allocatable},
	}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("CompactNode = %+v, want %+v", out, want)
	}
	again, err := CompactNode(out)
	if err != nil || again != out {
		t.Errorf("CompactNode of a compacted Node = %+v, %v; want the same object back", again, err)
	}
}

// TestCompactNodeOtherObjects: an object that is not a Node only loses its managedFields; a tombstone passes.
func TestCompactNodeOtherObjects(t *testing.T) {
	claim := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: "id.k8s.io", ManagedFields: testManagedFields,
		Labels: map[string]string{"open-cluster-management.io/spoke-only": ""}}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: "v"}}
	out, err := CompactNode(claim)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*clusterv1alpha1.ClusterClaim)
	if got.ManagedFields != nil || got.Spec.Value != "v" || len(got.Labels) != 1 {
		t.Errorf("claim after CompactNode = %+v, want only managedFields dropped", got)
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "n1", Obj: fullNode("n1", false)}
	if out, err := CompactNode(tomb); err != nil || !reflect.DeepEqual(out, tomb) {
		t.Errorf("CompactNode(tombstone) = %+v, %v; want it unchanged", out, err)
	}
}

// TestStripManagedFieldsKeepsSecretData: a Secret keeps its data, type, labels and annotations, and loses only
// metadata.managedFields.
func TestStripManagedFieldsKeepsSecretData(t *testing.T) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hub-kubeconfig-secret", Namespace: "ns", ResourceVersion: "7",
			Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}, ManagedFields: testManagedFields},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"kubeconfig": []byte("k"), "tls.key": []byte("key")},
	}
	want := secret.DeepCopy()
	want.ManagedFields = nil
	out, err := StripManagedFields(secret)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("StripManagedFields = %+v, want %+v", out, want)
	}
	if out, err := StripManagedFields("not an object"); err != nil || out != "not an object" {
		t.Errorf("StripManagedFields(string) = %v, %v; want it unchanged", out, err)
	}
}

// TestSpokeInformerFactoriesCacheCompactObjects: the informers of the factories the hub sessions use hold
// compacted Nodes, Secrets with their data and no managedFields, and ClusterClaims without managedFields.
func TestSpokeInformerFactoriesCacheCompactObjects(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nodes := []*corev1.Node{fullNode("n1", false), fullNode("n2", true)}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", ManagedFields: testManagedFields},
		Data: map[string][]byte{"kubeconfig": []byte("k")}}
	kube := kubefake.NewSimpleClientset(nodes[0], nodes[1], secret)
	claims := clusterfake.NewSimpleClientset(&clusterv1alpha1.ClusterClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "c", ManagedFields: testManagedFields}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: "v"}})

	spokeF := NewSpokeFactory(kube, 0)
	nsF := NewNamespacedFactory(kube, "ns", 0)
	claimF := NewClaimFactory(claims, 0)
	nodeInformer := spokeF.Core().V1().Nodes()
	secretInformer := nsF.Core().V1().Secrets()
	claimInformer := claimF.Cluster().V1alpha1().ClusterClaims()
	synced := []cache.InformerSynced{nodeInformer.Informer().HasSynced, secretInformer.Informer().HasSynced,
		claimInformer.Informer().HasSynced}
	spokeF.Start(ctx.Done())
	nsF.Start(ctx.Done())
	claimF.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		t.Fatal("informers not synced")
	}

	for _, n := range nodes {
		cached, err := nodeInformer.Lister().Get(n.Name)
		if err != nil {
			t.Fatal(err)
		}
		if cached.Labels != nil || cached.Status.Conditions != nil || cached.Status.Images != nil || cached.ManagedFields != nil {
			t.Errorf("cached Node = %+v, want it compacted", cached)
		}
		if cached.Spec.Unschedulable != n.Spec.Unschedulable || !reflect.DeepEqual(cached.Status.Capacity, n.Status.Capacity) ||
			!reflect.DeepEqual(cached.Status.Allocatable, n.Status.Allocatable) {
			t.Errorf("cached Node %s = %+v, want its unschedulable, capacity and allocatable", n.Name, cached)
		}
	}

	s, err := secretInformer.Lister().Secrets("ns").Get("s")
	if err != nil {
		t.Fatal(err)
	}
	if s.ManagedFields != nil || string(s.Data["kubeconfig"]) != "k" {
		t.Errorf("cached Secret = %+v, want its data and no managedFields", s)
	}
	c, err := claimInformer.Lister().Get("c")
	if err != nil {
		t.Fatal(err)
	}
	if c.ManagedFields != nil || c.Spec.Value != "v" {
		t.Errorf("cached ClusterClaim = %+v, want its value and no managedFields", c)
	}
}

// TestListCompactNodesPages: the Node informer's list asks for pages of nodeListPageSize (resourceVersion "0"
// asked as "", so that the apiserver pages it), follows the continue token, returns every Node compacted, and
// carries the first page's resourceVersion.
func TestListCompactNodesPages(t *testing.T) {
	kube := kubefake.NewSimpleClientset()
	var asked []metav1.ListOptions
	kube.PrependReactor("list", "nodes", func(action clienttesting.Action) (bool, runtime.Object, error) {
		opts := action.(clienttesting.ListActionImpl).GetListOptions()
		asked = append(asked, opts)
		if opts.Continue == "" {
			return true, &corev1.NodeList{ListMeta: metav1.ListMeta{ResourceVersion: "10", Continue: "page-2"},
				Items: []corev1.Node{*fullNode("n1", false)}}, nil
		}
		return true, &corev1.NodeList{ListMeta: metav1.ListMeta{ResourceVersion: "11"},
			Items: []corev1.Node{*fullNode("n2", true)}}, nil
	})
	list, err := listCompactNodes(context.Background(), kube, metav1.ListOptions{ResourceVersion: "0", Limit: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 2 || asked[0].ResourceVersion != "" || asked[0].Limit != nodeListPageSize || asked[0].Continue != "" ||
		asked[1].Continue != "page-2" || asked[1].ResourceVersion != "" {
		t.Errorf("list requests = %+v, want two pages of %d from the current state", asked, nodeListPageSize)
	}
	if list.ResourceVersion != "10" || list.Continue != "" || len(list.Items) != 2 {
		t.Fatalf("list = rv %q continue %q, %d items; want rv 10, no continue, 2 items", list.ResourceVersion, list.Continue, len(list.Items))
	}
	var nodes []*corev1.Node
	for _, item := range list.Items {
		n, ok := item.Object.(*corev1.Node)
		if !ok {
			t.Fatalf("listed item %T, want *v1.Node", item.Object)
		}
		if n.Labels != nil || n.ManagedFields != nil || n.Status.Images != nil || len(n.Status.Capacity) != 3 {
			t.Errorf("listed Node %s = %+v, want it compacted", n.Name, n)
		}
		nodes = append(nodes, n)
	}
	if nodes[0].Name != "n1" || nodes[1].Name != "n2" || !nodes[1].Spec.Unschedulable {
		t.Errorf("listed Nodes %s, %s (unschedulable %v); want n1, then n2 unschedulable", nodes[0].Name, nodes[1].Name, nodes[1].Spec.Unschedulable)
	}
}
