package replication

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// TestControllerHoldsTheSourcesCopiesBeforeLiftingTheFence: the cluster moved from hub A to hub B, whose namespace
// is still fenced (users refused) and whose copy of work-1 does not hold deletes. The fence is lifted only once
// that copy holds them: a user's delete of it on B is then held, and seen, also if the replicator is stopped or
// cut off from B right after (`make chaos` seed 7: a delete made in that window was written back from A). While
// B refuses the hold, B stays fenced; a hold refused for a stale resourceVersion (409) is tried again.
func TestControllerHoldsTheSourcesCopiesBeforeLiftingTheFence(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	placementKind := testKind(t, failoverv1alpha1.KindPlacement)
	kinds := []mirror.Kind{mcKind, mwKind, placementKind}
	nsKind := mirror.Kind{GVR: mirror.NamespaceGVR, Name: "Namespace"}
	handler := &proxyHandler{}

	original := manifestWork(testCluster, "work-1", "cm-1", nil)
	original.SetUID("uid-w1")
	original.SetAnnotations(map[string]string{mirror.AnnotationHasCopies: testHubB})
	original.SetFinalizers([]string{mirror.FinalizerDeleteCopies})
	mcA, mcB := movedToB(nil)
	// A Placement in a namespace named after the cluster is hub-wide (its source is the first hub): never held.
	placement := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
		"metadata": map[string]any{"name": "p1", "namespace": testCluster, "uid": "uid-p1"},
		"spec":     map[string]any{"clusterSets": []any{"default"}},
	}}
	placementCopy := mirror.Desired(placementKind, placement, nil, testHubA, nil)
	placementCopy.SetUID("uid-p1-copy")
	a := newTestHub(t, testHubA, handler, kinds, mcA, original, placement)
	cp := mirror.Desired(mwKind, original, nil, testHubA, nil)
	cp.SetUID("uid-copy")
	namespaceB := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{
			"name":        testCluster,
			"labels":      map[string]any{fence.LabelClusterHub: testHubA},
			"annotations": map[string]any{mirror.AnnotationClusterHub: testHubA, mirror.AnnotationClusterHubSince: "2026-12-01T00:00:00Z"},
		},
	}}
	b := newTestHub(t, testHubB, handler, kinds, mcB, cp, namespaceB, placementCopy)
	for _, h := range []*testHub{a, b} {
		// No SelfSubjectReview served: no fence policy installed; the marks are kept all the same.
		h.fake.PrependReactor("create", "selfsubjectreviews", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(fence.SelfSubjectReviewGVR.GroupResource(), "")
		})
	}
	var refuse atomic.Bool
	refuse.Store(true)
	var holdAttempts atomic.Int32
	var conflictOnce atomic.Bool
	conflictOnce.Store(true)
	b.fake.PrependReactor("patch", "manifestworks", func(clienttesting.Action) (bool, runtime.Object, error) {
		holdAttempts.Add(1)
		if refuse.Load() {
			return true, nil, apierrors.NewInternalError(errors.New("injected: hub-b refuses patches of ManifestWorks"))
		}
		if conflictOnce.CompareAndSwap(true, false) {
			// Then once as if hub-b's cache were behind: tried again after holdCopyRetry.
			return true, nil, apierrors.NewConflict(mwKind.GVR.GroupResource(), "work-1", errors.New("injected: resourceVersion changed"))
		}
		return false, nil, nil
	})
	// Whenever the namespace's fence marks are lifted, work-1 must hold deletes already.
	var liftedUnheld atomic.Int32
	b.fake.PrependReactor("patch", "namespaces", func(clienttesting.Action) (bool, runtime.Object, error) {
		obj, err := b.fake.Tracker().Get(mwKind.GVR, testCluster, "work-1")
		if u, ok := obj.(*unstructured.Unstructured); err == nil && ok && !slices.Contains(u.GetFinalizers(), mirror.FinalizerDeleteCopies) {
			liftedUnheld.Add(1)
		}
		return false, nil, nil
	})
	c, _ := startController(t, handler, Options{Kinds: kinds, Fencing: true, DirectionRecheck: time.Hour}, a, b)

	eventually(t, "the controller tries to hold hub-b's copy of work-1", func() bool { return holdAttempts.Load() >= 2 })
	if l := b.get(t, nsKind, "", testCluster).GetLabels(); l[fence.LabelClusterHub] != testHubA {
		t.Fatalf("hub-b's namespace labels %v while its copy of work-1 cannot be held, want %s=%s (still fenced)", l, fence.LabelClusterHub, testHubA)
	}

	refuse.Store(false)
	eventually(t, "hub-b's namespace loses its fence marks", func() bool {
		return b.get(t, nsKind, "", testCluster).GetLabels()[fence.LabelClusterHub] == ""
	})
	quiesce(t, c, a, b)
	if n := liftedUnheld.Load(); n != 0 {
		t.Errorf("hub-b's fence marks were patched %d times while its copy of work-1 did not hold deletes", n)
	}
	if w := b.get(t, mwKind, testCluster, "work-1"); w == nil || !slices.Contains(w.GetFinalizers(), mirror.FinalizerDeleteCopies) {
		t.Errorf("hub-b's work-1 after the fence was lifted: %v, want it held by %s", w, mirror.FinalizerDeleteCopies)
	}
	if p := b.get(t, placementKind, testCluster, "p1"); p == nil || slices.Contains(p.GetFinalizers(), mirror.FinalizerDeleteCopies) {
		t.Errorf("hub-b's copy of Placement p1: %v, want it there and not held (hub-wide)", p)
	}
	if w := a.get(t, mwKind, testCluster, "work-1"); w == nil {
		t.Error("hub-a's work-1 is gone, want it kept (taken over as a copy)")
	}
}
