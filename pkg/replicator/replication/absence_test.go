package replication

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	replv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// TestControllerRestoresARestoredSourceFromCopies: hub A, the cluster's source, was restored from a backup while
// hub B held copies of later states. work-1 is back at an older generation on A, work-2 (made after the backup) is
// not on A at all. Neither is a delete anyone made: B's copies are neither rolled back nor deleted. A gets
// work-1's newer state back from B's copy (SourceRestored), so that the spoke runs it; work-2, which A does not
// hold, is never made again from a copy (a copy also outlives a delete its hub missed): it is kept on B and
// reported (CopyKept). A delete the replicator sees on A's watch (work-3) still reaches B, and a user's later
// edit of work-1 on A is copied as usual. A new work gets the replicator's finalizer on A before its first copy
// exists anywhere: its delete is seen also while the replicator is down.
func TestControllerRestoresARestoredSourceFromCopies(t *testing.T) {
	mcKind := testKind(t, replv1alpha1.KindManagedCluster)
	mwKind := testKind(t, replv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	ctx := context.Background()

	work := func(name, configMap, uid string, generation int64) *unstructured.Unstructured {
		w := manifestWork(testCluster, name, configMap, nil)
		w.SetUID(types.UID(uid))
		w.SetGeneration(generation)
		return w
	}
	copyOf := func(src *unstructured.Unstructured) *unstructured.Unstructured {
		cp := mirror.Desired(mwKind, src, nil, testHubA, nil)
		cp.SetUID(types.UID("copy-of-" + string(src.GetUID())))
		return cp
	}
	restored := work("work-1", "cm-1", "uid-w1", 4)
	later := work("work-1", "cm-1-v2", "uid-w1", 5)
	lost := work("work-2", "cm-2", "uid-w2", 1)
	work3 := work("work-3", "cm-3", "uid-w3", 1)
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), restored, work3)
	b := newTestHub(t, testHubB, handler, kinds, managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA}),
		copyOf(later), copyOf(lost), copyOf(work3))
	c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

	eventually(t, "hub-a holds the newer state of work-1 again, and work-2's copy is reported kept", func() bool {
		w1, _ := a.hub.Peek(mwKind.Name, testCluster, "work-1")
		return equalSpec(w1, later) && len(recorder.messages(ReasonCopyKept)) == 1
	})
	quiesce(t, c, a, b)
	for name, want := range map[string]*unstructured.Unstructured{"work-1": later, "work-2": lost} {
		if got := b.get(t, mwKind, testCluster, name); !equalSpec(got, want) {
			t.Errorf("hub-b's %s rolled back or deleted: %v", name, specOf(got))
		}
	}
	if got := a.get(t, mwKind, testCluster, "work-1"); mirror.IsCopy(got) {
		t.Errorf("hub-a's restored work-1 is marked as a copy: %v", got.GetLabels())
	}
	if got, _ := a.hub.Peek(mwKind.Name, testCluster, "work-2"); got != nil {
		t.Errorf("hub-a's lost work-2 was made again from hub-b's copy")
	}
	if msgs := recorder.messages(ReasonSourceRestored); len(msgs) != 1 || !strings.Contains(msgs[0],
		"ManifestWork/"+testCluster+"/work-1: source hub hub-a held an older state of it (restored from a backup): updated there to the newer state the copy on hub hub-b kept") {
		t.Errorf("SourceRestored events %q, want one, for work-1", msgs)
	}
	if msgs := strings.Join(recorder.messages(ReasonCopyKept), "\n"); !strings.Contains(msgs, "ManifestWork/"+testCluster+"/work-2: the source hub holds no object") {
		t.Errorf("CopyKept events %q, want one for work-2", msgs)
	}
	if snap := c.Snapshot(); snap.Conflicts[testHubB] != 1 {
		t.Errorf("conflicts on hub-b = %d, want 1 (work-2 missing at the source; work-1 in step again)", snap.Conflicts[testHubB])
	}

	// A delete seen on A's watch reaches B.
	if err := a.client.Resource(mwKind.GVR).Namespace(testCluster).Delete(ctx, "work-3", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hub-b's copy of work-3 is deleted", func() bool { return b.get(t, mwKind, testCluster, "work-3") == nil })

	// A later edit on A, of a higher generation than the copy records, is copied.
	edited := a.get(t, mwKind, testCluster, "work-1")
	edited.Object["spec"] = manifestWork(testCluster, "work-1", "cm-1-v3", nil).Object["spec"]
	edited.SetGeneration(6)
	if _, err := a.client.Resource(mwKind.GVR).Namespace(testCluster).Update(ctx, edited, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hub-b's work-1 has the edit", func() bool { return equalSpec(b.get(t, mwKind, testCluster, "work-1"), edited) })

	// A new work: its original is held before B's copy is created.
	var mu sync.Mutex
	var heldAtCreate []bool
	b.fake.PrependReactor("create", "manifestworks", func(action clienttesting.Action) (bool, runtime.Object, error) {
		obj, err := a.fake.Tracker().Get(mwKind.GVR, testCluster, "work-4")
		u, _ := obj.(*unstructured.Unstructured)
		mu.Lock()
		heldAtCreate = append(heldAtCreate, err == nil && u != nil && slices.Contains(u.GetFinalizers(), mirror.FinalizerDeleteCopies))
		mu.Unlock()
		return false, nil, nil
	})
	if _, err := a.client.Resource(mwKind.GVR).Namespace(testCluster).Create(ctx, work("work-4", "cm-4", "uid-w4", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hub-b holds a copy of work-4", func() bool { return b.get(t, mwKind, testCluster, "work-4") != nil })
	mu.Lock()
	defer mu.Unlock()
	// A create may be sent again when hub-b's cache had not shown the first yet; each must find the hold.
	if len(heldAtCreate) == 0 || slices.Contains(heldAtCreate, false) {
		t.Errorf("hub-a's work-4 held by %s at each create of hub-b's copy: %v, want all true", mirror.FinalizerDeleteCopies, heldAtCreate)
	}
}

// equalSpec reports whether a and b both exist with the same spec.
func equalSpec(a, b *unstructured.Unstructured) bool {
	return a != nil && b != nil && cmp.Equal(specOf(a), specOf(b))
}

// TestControllerRewritesCopiesAStandbyLost: the cluster moved from hub A to hub B (B's ManagedCluster records
// moved-from A), but B lost its copy of work-1 before (its namespace deleted or restored while it was a standby).
// A's original lists B in has-copies, yet no delete of it on B was ever seen: A's original is not deleted, and the
// copy is written again on B from it, so the spoke, now on B, keeps the workload.
func TestControllerRewritesCopiesAStandbyLost(t *testing.T) {
	mcKind := testKind(t, replv1alpha1.KindManagedCluster)
	mwKind := testKind(t, replv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}

	original := manifestWork(testCluster, "work-1", "cm-1", nil)
	original.SetUID("uid-w1")
	original.SetGeneration(1)
	original.SetAnnotations(map[string]string{mirror.AnnotationHasCopies: testHubB})
	original.SetFinalizers([]string{mirror.FinalizerDeleteCopies})
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubB}), original)
	mcB := managedCluster(testCluster, nil)
	mcB.SetAnnotations(map[string]string{mirror.AnnotationMovedFrom: testHubA})
	b := newTestHub(t, testHubB, handler, kinds, mcB)
	c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

	eventually(t, "hub-b holds work-1 again, written back from hub-a's original", func() bool {
		cp := b.get(t, mwKind, testCluster, "work-1")
		return cp != nil && cp.GetAnnotations()[mirror.AnnotationSourceUID] == "uid-w1"
	})
	quiesce(t, c, a, b)
	if got := a.get(t, mwKind, testCluster, "work-1"); got == nil || got.GetDeletionTimestamp() != nil {
		t.Errorf("hub-a's original work-1 = %v, want kept: no delete of it was seen on hub-b", got)
	}
	for _, w := range a.writes(mwKind) {
		if strings.HasPrefix(w, "delete ") {
			t.Errorf("the replicator deleted on hub-a: %s", w)
		}
	}
	if msgs := recorder.messages(ReasonWrittenBack); len(msgs) != 1 || !strings.Contains(msgs[0], "work-1") {
		t.Errorf("WrittenBack events = %q, want one for work-1", msgs)
	}
}

// TestControllerDeletesTheOriginalOfACopyDeletedOnTheNewSource: the cluster moved from hub A to hub B; B's copy of
// work-1 is deleted there by a user. The delete, seen on B's watch, reaches A's original, and is not written back.
func TestControllerDeletesTheOriginalOfACopyDeletedOnTheNewSource(t *testing.T) {
	mcKind := testKind(t, replv1alpha1.KindManagedCluster)
	mwKind := testKind(t, replv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	ctx := context.Background()

	original := manifestWork(testCluster, "work-1", "cm-1", nil)
	original.SetUID("uid-w1")
	original.SetAnnotations(map[string]string{mirror.AnnotationHasCopies: testHubB})
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubB}), original)
	mcB := managedCluster(testCluster, nil)
	mcB.SetAnnotations(map[string]string{mirror.AnnotationMovedFrom: testHubA})
	cp := mirror.Desired(mwKind, original, nil, testHubA, nil)
	cp.SetUID("uid-copy")
	b := newTestHub(t, testHubB, handler, kinds, mcB, cp)
	c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)
	quiesce(t, c, a, b)
	if err := b.client.Resource(mwKind.GVR).Namespace(testCluster).Delete(ctx, "work-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hub-a's original work-1 is deleted", func() bool { return a.get(t, mwKind, testCluster, "work-1") == nil })
	quiesce(t, c, a, b)
	if got := b.get(t, mwKind, testCluster, "work-1"); got != nil {
		t.Errorf("hub-b's work-1 = %v, want none: its delete is not written back", got.GetAnnotations())
	}
	if msgs := recorder.messages(ReasonWrittenBack); len(msgs) != 0 {
		t.Errorf("WrittenBack events = %q, want none", msgs)
	}
}
