package uninstall

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

func object(apiVersion, kind, namespace, name string, labels, annotations map[string]string, finalizers ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	u.SetFinalizers(finalizers)
	u.SetResourceVersion("1")
	return u
}

// TestHub: the fence goes, the delete-copies finalizer goes (other finalizers stay), the in-step report,
// cluster-hub marks and has-copies go (the copy marks and users' annotations stay), marked namespaces are
// unmarked; a second run finds nothing to do.
func TestHub(t *testing.T) {
	mw, _ := mirror.KindByName(failoverv1alpha1.KindManifestWork)
	mc, _ := mirror.KindByName(failoverv1alpha1.KindManagedCluster)
	kinds := []mirror.Kind{mw, mc}
	work := object("work.open-cluster-management.io/v1", "ManifestWork", "c1", "w1", nil,
		map[string]string{mirror.AnnotationHasCopies: "hub-b", "user": "kept"},
		"cluster.open-cluster-management.io/manifest-work-cleanup", mirror.FinalizerDeleteCopies)
	copyOfWork := object("work.open-cluster-management.io/v1", "ManifestWork", "c1", "w2",
		map[string]string{mirror.LabelReplicatedFrom: "hub-a"}, map[string]string{mirror.AnnotationContentHash: "abc"})
	cluster := object("cluster.open-cluster-management.io/v1", "ManagedCluster", "", "c1", nil, map[string]string{
		mirror.AnnotationHubsInStep: "hub-b", mirror.AnnotationHubsBehind: "", mirror.AnnotationMovedFrom: "hub-c", mirror.AnnotationDeletesSeen: "ManifestWork/w=u/", "user": "kept",
		mirror.AnnotationHubsReported: "writer=replication,time=2026-12-05T06:00:00Z,every=5m0s",
	})
	marked := object("v1", "Namespace", "", "c1", map[string]string{fence.LabelClusterHub: "hub-b", "team": "x"},
		map[string]string{mirror.AnnotationClusterHub: "hub-b", mirror.AnnotationClusterHubSince: "2026-12-05T06:00:00Z"})
	other := object("v1", "Namespace", "", "default", nil, nil)
	policy := object("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "", fence.PolicyName, nil, nil)
	binding := object("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "", fence.PolicyName, nil, nil)
	listKinds := map[schema.GroupVersionResource]string{
		mw.GVR: "ManifestWorkList", mc.GVR: "ManagedClusterList", mirror.NamespaceGVR: "NamespaceList",
		fence.PolicyGVR: "ValidatingAdmissionPolicyList", fence.BindingGVR: "ValidatingAdmissionPolicyBindingList",
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds,
		work, copyOfWork, cluster, marked, other, policy, binding)
	ctx := context.Background()

	report, err := Hub(ctx, client, kinds)
	if err != nil {
		t.Fatalf("Hub: %v", err)
	}
	if want := (Report{Fence: true, Finalizers: 1, Annotated: 2, Namespaces: 1, TombstonesWithoutPeers: 1}); !cmp.Equal(want, report) {
		t.Errorf("report %+v, want %+v", report, want)
	}
	get := func(gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
		t.Helper()
		u, err := client.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get %s %s/%s: %v", gvr.Resource, namespace, name, err)
		}
		return u
	}
	w := get(mw.GVR, "c1", "w1")
	if diff := cmp.Diff([]string{"cluster.open-cluster-management.io/manifest-work-cleanup"}, w.GetFinalizers()); diff != "" {
		t.Errorf("work finalizers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"user": "kept"}, w.GetAnnotations()); diff != "" {
		t.Errorf("work annotations (-want +got):\n%s", diff)
	}
	if c := get(mw.GVR, "c1", "w2"); c.GetLabels()[mirror.LabelReplicatedFrom] != "hub-a" || c.GetAnnotations()[mirror.AnnotationContentHash] != "abc" {
		t.Errorf("the copy lost its copy marks: %v %v", c.GetLabels(), c.GetAnnotations())
	}
	if diff := cmp.Diff(map[string]string{"user": "kept"}, get(mc.GVR, "", "c1").GetAnnotations()); diff != "" {
		t.Errorf("ManagedCluster annotations (-want +got):\n%s", diff)
	}
	ns := get(mirror.NamespaceGVR, "", "c1")
	if diff := cmp.Diff(map[string]string{"team": "x"}, ns.GetLabels()); diff != "" || len(ns.GetAnnotations()) != 0 {
		t.Errorf("namespace labels (-want +got):\n%s\nannotations %v", diff, ns.GetAnnotations())
	}
	for _, gvr := range []schema.GroupVersionResource{fence.PolicyGVR, fence.BindingGVR} {
		if _, err := client.Resource(gvr).Get(ctx, fence.PolicyName, metav1.GetOptions{}); err == nil {
			t.Errorf("%s %s still there", gvr.Resource, fence.PolicyName)
		}
	}

	again, err := Hub(ctx, client, kinds)
	if err != nil || !cmp.Equal(again, Report{}) {
		t.Errorf("a second run: %+v, %v; want nothing done", again, err)
	}
}

// TestHubSkipsKindsNotServed: a kind the hub does not serve is reported, not an error.
func TestHubSkipsKindsNotServed(t *testing.T) {
	policyKind, _ := mirror.KindByName(failoverv1alpha1.KindPolicy)
	listKinds := map[schema.GroupVersionResource]string{
		mirror.NamespaceGVR: "NamespaceList", fence.PolicyGVR: "ValidatingAdmissionPolicyList", fence.BindingGVR: "ValidatingAdmissionPolicyBindingList",
		policyKind.GVR: "PolicyList",
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	client.PrependReactor("list", policyKind.GVR.Resource, func(action k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(policyKind.GVR.GroupResource(), "")
	})
	report, err := Hub(context.Background(), client, []mirror.Kind{policyKind})
	if err != nil {
		t.Fatalf("Hub: %v", err)
	}
	if diff := cmp.Diff([]failoverv1alpha1.ReplicatedKind{failoverv1alpha1.KindPolicy}, report.NotServed); diff != "" {
		t.Errorf("not served (-want +got):\n%s", diff)
	}
}

// TestHubDeletesCopiesOfHeldDeletes: a delete the replicator still held on this hub (w1, Terminating with
// delete-copies) deletes the copies made from it on the peers first, each on its UID, then loses its finalizer;
// another hub's unrelated object of the name is left, and so is the hub's own object when the hub is given as its
// own peer. A held delete whose copies cannot all be reached (w2: a peer answers 500) keeps its finalizer, and
// the error names it. Without peers the finalizer goes and the copies stay, counted as a warning.
func TestHubDeletesCopiesOfHeldDeletes(t *testing.T) {
	mw, _ := mirror.KindByName(failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mw}
	const cleanup = "cluster.open-cluster-management.io/manifest-work-cleanup"
	held := func(name, uid string) *unstructured.Unstructured {
		o := object("work.open-cluster-management.io/v1", "ManifestWork", "c1", name, nil, map[string]string{mirror.AnnotationHasCopies: "hub-b"},
			mirror.FinalizerDeleteCopies)
		o.SetUID(types.UID(uid))
		o.SetDeletionTimestamp(&metav1.Time{Time: metav1.Now().Time})
		return o
	}
	copyOf := func(name, sourceUID string) *unstructured.Unstructured {
		o := object("work.open-cluster-management.io/v1", "ManifestWork", "c1", name, map[string]string{mirror.LabelReplicatedFrom: "hub-a"},
			map[string]string{mirror.AnnotationSourceUID: sourceUID}, cleanup)
		o.SetUID(types.UID("copy-" + name))
		return o
	}
	listKinds := map[schema.GroupVersionResource]string{mw.GVR: "ManifestWorkList", mirror.NamespaceGVR: "NamespaceList",
		fence.PolicyGVR: "ValidatingAdmissionPolicyList", fence.BindingGVR: "ValidatingAdmissionPolicyBindingList"}
	newClient := func(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
		return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objs...)
	}
	ctx := context.Background()

	hub := newClient(held("w1", "u1"), held("w2", "u2"))
	peerB := newClient(copyOf("w1", "u1"), copyOf("w2", "u2"))
	// Hub C holds its own w1, made from another object: not a copy of the held delete.
	peerC := newClient(copyOf("w1", "other"))
	peerC.PrependReactor("get", "manifestworks", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.(k8stesting.GetAction).GetName() == "w2" {
			return true, nil, apierrors.NewInternalError(errors.New("etcd timeout"))
		}
		return false, nil, nil
	})
	report, err := Hub(ctx, hub, kinds, Peer{Name: "hub-b", Client: peerB}, Peer{Name: "hub-c", Client: peerC}, Peer{Name: "itself", Client: hub})
	if err == nil || !strings.Contains(err.Error(), "ManifestWork c1/w2 is being deleted: deleting its copies first: hub hub-c") {
		t.Errorf("error %v, want one naming w2 and hub hub-c", err)
	}
	// w1 and w2's copies on hub-b go (w2's: hub-c failed after hub-b was done).
	for _, name := range []string{"w1", "w2"} {
		if _, err := peerB.Resource(mw.GVR).Namespace("c1").Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("hub-b's copy of %s: %v, want it deleted", name, err)
		}
	}
	for _, a := range peerB.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok && d.GetResource() == mw.GVR {
			if pre := d.GetDeleteOptions().Preconditions; pre == nil || pre.UID == nil || *pre.UID != types.UID("copy-"+d.GetName()) {
				t.Errorf("hub-b's %s deleted without its UID as a precondition: %+v", d.GetName(), d.GetDeleteOptions())
			}
		}
	}
	for _, a := range hub.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok && d.GetResource() == mw.GVR {
			t.Errorf("the hub, given as its own peer, deleted its own %s", d.GetName())
		}
	}
	var fenceGone bool
	for _, a := range peerB.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok && d.GetResource() == fence.PolicyGVR && d.GetName() == fence.PolicyName {
			fenceGone = true
		}
	}
	if !fenceGone {
		t.Errorf("hub-b's fence was not removed before its copies were deleted (it refuses them)")
	}
	if _, err := peerC.Resource(mw.GVR).Namespace("c1").Get(ctx, "w1", metav1.GetOptions{}); err != nil {
		t.Errorf("hub-c's own w1 (made from another object): %v, want it kept", err)
	}
	w1, _ := hub.Resource(mw.GVR).Namespace("c1").Get(ctx, "w1", metav1.GetOptions{})
	w2, _ := hub.Resource(mw.GVR).Namespace("c1").Get(ctx, "w2", metav1.GetOptions{})
	if w1 == nil || len(w1.GetFinalizers()) != 0 {
		t.Errorf("w1 after its copies went: %v, want it without finalizers", w1)
	}
	if w2 == nil || !slices.Contains(w2.GetFinalizers(), mirror.FinalizerDeleteCopies) {
		t.Errorf("w2, a copy of which could not be reached: %v, want its delete still held", w2)
	}
	if report.CopiesDeleted != 2 || report.Finalizers != 1 || report.HeldWithoutPeers != 0 {
		t.Errorf("report %+v, want 2 copies deleted, 1 finalizer removed", report)
	}

	// Without peers: the finalizer goes, the copies stay, and the report warns.
	alone := newClient(held("w3", "u3"))
	report, err = Hub(ctx, alone, kinds)
	if err != nil || report.HeldWithoutPeers != 1 || report.Finalizers != 1 || !strings.Contains(report.String(), "WARNING: 1 held deletes finished here without --peer-kubeconfig") {
		t.Errorf("without peers: %+v (%q), %v; want the held delete finished and warned about", report, report.String(), err)
	}
}

// TestDeleteCopiesRetriesOnlyTheFence: a peer's fence, just removed, may still refuse a delete for a moment: that
// 403 (it names the fence's policy) is tried again and the copy goes; a 403 of RBAC fails at once, with the peer
// named, and the delete stays held.
func TestDeleteCopiesRetriesOnlyTheFence(t *testing.T) {
	mw, _ := mirror.KindByName(failoverv1alpha1.KindManifestWork)
	copyOfHeld := func() *unstructured.Unstructured {
		o := object("work.open-cluster-management.io/v1", "ManifestWork", "c1", "w1", map[string]string{mirror.LabelReplicatedFrom: "hub-a"},
			map[string]string{mirror.AnnotationSourceUID: "u1"})
		o.SetUID("copy-w1")
		return o
	}
	listKinds := map[schema.GroupVersionResource]string{mw.GVR: "ManifestWorkList"}
	refusing := func(message string, times int) (*dynamicfake.FakeDynamicClient, *int) {
		c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, copyOfHeld())
		attempts := 0
		c.PrependReactor("delete", "manifestworks", func(k8stesting.Action) (bool, runtime.Object, error) {
			attempts++
			if attempts <= times {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "work.open-cluster-management.io", Resource: "manifestworks"}, "w1", errors.New(message))
			}
			return false, nil, nil
		})
		return c, &attempts
	}
	ctx := context.Background()

	fenced, fenceAttempts := refusing("ValidatingAdmissionPolicy '"+fence.PolicyName+"' denied request: managed from hub-a", 1)
	deleted := &mirror.Deleted{UID: "u1"}
	if n, err := deleteCopies(ctx, mw, "c1", "w1", deleted, []Peer{{Name: "hub-b", Client: fenced}}); err != nil || n != 1 || *fenceAttempts != 2 {
		t.Errorf("behind a fence on its way out: %d deleted, %v, %d attempts; want 1 deleted on the second attempt", n, err, *fenceAttempts)
	}
	rbac, rbacAttempts := refusing(`User "admin" cannot delete resource "manifestworks"`, 100)
	n, err := deleteCopies(ctx, mw, "c1", "w1", deleted, []Peer{{Name: "hub-c", Client: rbac}})
	if err == nil || !strings.Contains(err.Error(), "hub hub-c") || n != 0 || *rbacAttempts != 1 {
		t.Errorf("refused by RBAC: %d deleted, %v, %d attempts; want an error naming hub-c after one attempt", n, err, *rbacAttempts)
	}
}

// TestHubMakesTheDeletesItsTombstonesRecord: hub B was cluster c1's source and recorded a delete of its copy of w1
// there (mirror.AnnotationDeletesSeen) that had not reached hub A's original yet. Uninstalled with hub A as a peer,
// the original goes before the tombstone (w2's original, whose delete hub A refuses, keeps its tombstone); without
// peers, the tombstones are dropped and reported; on a hub whose ManagedCluster is a copy, they are not acted on.
func TestHubMakesTheDeletesItsTombstonesRecord(t *testing.T) {
	mc, _ := mirror.KindByName(failoverv1alpha1.KindManagedCluster)
	mw, _ := mirror.KindByName(failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mc, mw}
	listKinds := map[schema.GroupVersionResource]string{mw.GVR: "ManifestWorkList", mc.GVR: "ManagedClusterList", mirror.NamespaceGVR: "NamespaceList",
		fence.PolicyGVR: "ValidatingAdmissionPolicyList", fence.BindingGVR: "ValidatingAdmissionPolicyBindingList"}
	newClient := func(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
		return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objs...)
	}
	recorded := func() *unstructured.Unstructured {
		return object("cluster.open-cluster-management.io/v1", "ManagedCluster", "", "c1", nil,
			map[string]string{mirror.AnnotationDeletesSeen: "ManifestWork/w1=copy-w1/orig-w1,ManifestWork/w2=copy-w2/orig-w2,Placement/p1=copy-p1/orig-p1"})
	}
	original := func(name string) *unstructured.Unstructured {
		o := object("work.open-cluster-management.io/v1", "ManifestWork", "c1", name, nil, nil)
		o.SetUID(types.UID("orig-" + name))
		return o
	}
	ctx := context.Background()

	hubB := newClient(recorded())
	hubA := newClient(original("w1"), original("w2"), original("w3"))
	hubA.PrependReactor("delete", "manifestworks", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.(k8stesting.DeleteAction).GetName() == "w2" {
			return true, nil, apierrors.NewInternalError(errors.New("etcd timeout"))
		}
		return false, nil, nil
	})
	report, err := Hub(ctx, hubB, kinds, Peer{Name: "hub-a", Client: hubA})
	if err == nil || !strings.Contains(err.Error(), "ManagedCluster c1") || !strings.Contains(err.Error(), "ManifestWork c1/w2") {
		t.Errorf("error %v, want one naming ManagedCluster c1 and w2", err)
	}
	if _, err := hubA.Resource(mw.GVR).Namespace("c1").Get(ctx, "w1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("hub-a's original w1: %v, want it deleted (its copy's delete was recorded on hub-b)", err)
	}
	if _, err := hubA.Resource(mw.GVR).Namespace("c1").Get(ctx, "w3", metav1.GetOptions{}); err != nil {
		t.Errorf("hub-a's w3, of no tombstone: %v, want it kept", err)
	}
	if report.CopiesDeleted != 1 {
		t.Errorf("CopiesDeleted = %d, want 1", report.CopiesDeleted)
	}
	left, _ := hubB.Resource(mc.GVR).Get(ctx, "c1", metav1.GetOptions{})
	if _, ok := left.GetAnnotations()[mirror.AnnotationDeletesSeen]; !ok {
		t.Errorf("hub-b's tombstones dropped although w2's delete could not be made on hub-a")
	}

	// Without peers: the tombstones are dropped, and the report says so.
	report, err = Hub(ctx, newClient(recorded()), kinds)
	if err != nil || report.TombstonesWithoutPeers != 2 || !strings.Contains(report.String(), "2 deletes recorded here (tombstones) dropped") {
		t.Errorf("without peers: %v, %+v (%s); want the 2 tombstones of mirrored kinds dropped and reported", err, report, report)
	}

	// On a hub that is not the cluster's source (its ManagedCluster is a copy), its tombstones are not acted on.
	stale := recorded()
	stale.SetLabels(map[string]string{mirror.LabelReplicatedFrom: "hub-a"})
	hubA = newClient(original("w1"))
	if _, err := Hub(ctx, newClient(stale), kinds, Peer{Name: "hub-a", Client: hubA}); err != nil {
		t.Fatal(err)
	}
	if _, err := hubA.Resource(mw.GVR).Namespace("c1").Get(ctx, "w1", metav1.GetOptions{}); err != nil {
		t.Errorf("hub-a's w1 after uninstalling a hub whose ManagedCluster is a copy: %v, want it kept", err)
	}
}
