package replication

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// TestControllerKeepsCopiesOfARestoredSource: hub A, the cluster's source, was restored from a backup while hubs B
// and C held copies of later states. work-1 is back at an older generation on A, and B holds the newest state of
// it, C an older one than B's (it lagged): B's is written back onto A (WrittenBack), once, and C's older one never
// (it would roll A back), and no copy is rolled back to A's restored state. work-2 (made after the backup) is not on
// A at all: neither is a delete anyone made, so B's copy stays as it is, reported once (CopyKept, a conflict on
// hub-b). A delete the replicator sees on A's watch (work-3) still reaches B, and a user's later edit of work-1 on A
// is copied as usual. A new work gets the replicator's finalizer on A before its first copy exists anywhere: its
// delete is seen also while the replicator is down.
func TestControllerKeepsCopiesOfARestoredSource(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
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
	lagging := work("work-1", "cm-1-v2", "uid-w1", 5)
	later := work("work-1", "cm-1-v3", "uid-w1", 6)
	lost := work("work-2", "cm-2", "uid-w2", 1)
	work3 := work("work-3", "cm-3", "uid-w3", 1)
	copiedMC := managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA})
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), restored, work3)
	b := newTestHub(t, testHubB, handler, kinds, copiedMC, copyOf(later), copyOf(lost), copyOf(work3))
	hc := newTestHub(t, testHubC, handler, kinds, copiedMC.DeepCopy(), copyOf(lagging), copyOf(lost), copyOf(work3))
	// An apiserver refuses an update on a resourceVersion that is not the object's (the fake does not): a second
	// write-back sent from a cache that does not show the first one yet is refused there, not written. accepted
	// holds the updates the fake took, by name (the fake's actions also hold the refused ones).
	var (
		acceptedMu sync.Mutex
		accepted   []string
	)
	a.fake.PrependReactor("update", "manifestworks", func(action clienttesting.Action) (bool, runtime.Object, error) {
		obj, ok := action.(clienttesting.UpdateAction).GetObject().(*unstructured.Unstructured)
		if !ok {
			return false, nil, nil
		}
		stored, err := a.fake.Tracker().Get(mwKind.GVR, obj.GetNamespace(), obj.GetName())
		if err != nil {
			return false, nil, nil
		}
		have := stored.(metav1.Object).GetResourceVersion()
		if obj.GetResourceVersion() != have {
			return true, nil, apierrors.NewConflict(mwKind.GVR.GroupResource(), obj.GetName(), fmt.Errorf("resourceVersion %q, the object's is %q", obj.GetResourceVersion(), have))
		}
		n, _ := strconv.Atoi(have)
		obj.SetResourceVersion(strconv.Itoa(n + 1))
		acceptedMu.Lock()
		accepted = append(accepted, obj.GetNamespace()+"/"+obj.GetName())
		acceptedMu.Unlock()
		return false, nil, nil
	})
	c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b, hc)

	eventually(t, "hub-a's work-1 back at the newest state, hub-b's", func() bool { return equalSpec(a.get(t, mwKind, testCluster, "work-1"), later) })
	eventually(t, "hub-c's copy of work-1 brought to the newest state", func() bool { return equalSpec(hc.get(t, mwKind, testCluster, "work-1"), later) })
	eventually(t, "the copies of work-2 reported kept", func() bool { return len(recorder.messages(ReasonCopyKept)) == 2 })
	quiesce(t, c, a, b, hc)
	if got := b.get(t, mwKind, testCluster, "work-2"); got == nil {
		t.Errorf("hub-b's work-2 deleted: hub-a never had a delete of it, it was restored without it")
	}
	acceptedMu.Lock()
	onA := slices.Clone(accepted)
	acceptedMu.Unlock()
	if n := slices.Index(onA, testCluster+"/work-1"); n < 0 || slices.Contains(onA[n+1:], testCluster+"/work-1") {
		t.Errorf("updates of work-1 hub-a took: %q (all sent: %q), want one, the newest state written back (hub-c's older one never)", onA, a.writes(mwKind))
	}
	if got := a.get(t, mwKind, testCluster, "work-1"); mirror.Lineage(got) < 6 {
		t.Errorf("hub-a's work-1 after the write-back: lineage %d (generation %d, annotations %v), want at least 6, hub-b's copy's",
			mirror.Lineage(got), got.GetGeneration(), got.GetAnnotations())
	}
	for _, w := range b.writes(mwKind) {
		if strings.HasSuffix(w, "/work-2") {
			t.Errorf("the replicator wrote a kept copy on hub-b: %s", w)
		}
	}
	// Hub-b's copy of work-1 keeps the newest state, and records the offset the write-back gave the source (a
	// source that later loses it is then not taken for an older state).
	if got := b.get(t, mwKind, testCluster, "work-1"); !equalSpec(got, later) || got.GetAnnotations()[mirror.AnnotationSourceGenerationOffset] != "2" {
		t.Errorf("hub-b's work-1 after the write-back: spec %v, annotations %v; want the newest state and %s 2",
			specOf(got), got.GetAnnotations(), mirror.AnnotationSourceGenerationOffset)
	}
	written := strings.Join(recorder.messages(ReasonWrittenBack), "\n")
	if want := "ManifestWork/" + testCluster + "/work-1: hub " + testHubA + " holds an older state (generation 4) than its copy on hub " + testHubB; !strings.Contains(written, want) ||
		len(recorder.messages(ReasonWrittenBack)) != 1 {
		t.Errorf("WrittenBack events %q, want one containing %q", written, want)
	}
	msgs := strings.Join(recorder.messages(ReasonCopyKept), "\n")
	if want := "ManifestWork/" + testCluster + "/work-2: the source hub holds no object"; !strings.Contains(msgs, want) {
		t.Errorf("CopyKept events %q, want one containing %q", msgs, want)
	}
	if snap := c.Snapshot(); snap.Conflicts[testHubB] != 1 || snap.Conflicts[testHubC] != 1 {
		t.Errorf("conflicts on hub-b, hub-c = %d, %d, want 1 each (work-2 missing at the source)", snap.Conflicts[testHubB], snap.Conflicts[testHubC])
	}

	// A delete seen on A's watch reaches B.
	if err := a.client.Resource(mwKind.GVR).Namespace(testCluster).Delete(ctx, "work-3", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hub-b's copy of work-3 is deleted", func() bool { return b.get(t, mwKind, testCluster, "work-3") == nil })

	// A later edit on A is copied: the write-back put its lineage above what the copies record.
	edited := a.get(t, mwKind, testCluster, "work-1")
	edited.Object["spec"] = manifestWork(testCluster, "work-1", "cm-1-v4", nil).Object["spec"]
	edited.SetGeneration(edited.GetGeneration() + 1)
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
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}

	original := heldOriginal("work-1", "cm-1", "uid-w1", testHubB)
	original.SetGeneration(1)
	mcA, mcB := movedToB(nil)
	a := newTestHub(t, testHubA, handler, kinds, mcA, original)
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

// TestControllerRewritesCopiesAStandbyLostAfterARoundTrip is TestControllerRewritesCopiesAStandbyLost after a
// round trip: the cluster moved from hub B to hub A and back to B. A's work-1 is the copy of B's first object it
// held while the cluster was on A (FinalizerDeleteCopies), edited there (cm-1-v2); B lost its own since. A's
// object is the cluster's last state of work-1: it is written back onto B whole (A's cache holds copies without
// their content), and not deleted on A.
func TestControllerRewritesCopiesAStandbyLostAfterARoundTrip(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}

	first := manifestWork(testCluster, "work-1", "cm-1", nil)
	first.SetUID("uid-w1-on-b")
	held := mirror.Desired(mwKind, first, nil, testHubB, nil)
	held.Object["spec"] = manifestWork(testCluster, "work-1", "cm-1-v2", nil).Object["spec"]
	held.SetUID("uid-w1-on-a")
	held.SetFinalizers([]string{mirror.FinalizerDeleteCopies})
	mcA, mcB := movedToB(nil)
	a := newTestHub(t, testHubA, handler, kinds, mcA, held)
	b := newTestHub(t, testHubB, handler, kinds, mcB)
	c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

	eventually(t, "hub-b holds work-1 again, written back from hub-a's", func() bool {
		cp := b.get(t, mwKind, testCluster, "work-1")
		return cp != nil && cp.GetAnnotations()[mirror.AnnotationSourceUID] == "uid-w1-on-a"
	})
	quiesce(t, c, a, b)
	if got := b.get(t, mwKind, testCluster, "work-1"); !equalSpec(got, held) {
		t.Errorf("hub-b's work-1 spec %v, want hub-a's (cm-1-v2)", specOf(got))
	}
	if got := a.get(t, mwKind, testCluster, "work-1"); got == nil || got.GetDeletionTimestamp() != nil || !equalSpec(got, held) {
		t.Errorf("hub-a's work-1 = %v, want kept as it was: no delete of it was seen on hub-b", got)
	}
	if msgs := recorder.messages(ReasonWrittenBack); len(msgs) != 1 || !strings.Contains(msgs[0], "work-1") {
		t.Errorf("WrittenBack events = %q, want one for work-1", msgs)
	}
}

// TestControllerDeletesTheOriginalOfACopyDeletedOnTheNewSource: the cluster moved from hub A to hub B; B's copy of
// work-1 is deleted there by a user. The delete, seen on B's watch, reaches A's original, and is not written back.
func TestControllerDeletesTheOriginalOfACopyDeletedOnTheNewSource(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	ctx := context.Background()

	original := manifestWork(testCluster, "work-1", "cm-1", nil)
	original.SetUID("uid-w1")
	original.SetAnnotations(map[string]string{mirror.AnnotationHasCopies: testHubB})
	mcA, mcB := movedToB(nil)
	a := newTestHub(t, testHubA, handler, kinds, mcA, original)
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

// TestControllerFollowsTheAgentsEpochAfterARestart: the replicator starts with no lease evidence and no copies'
// record of the move (it was restarted while the cluster moved from hub A to hub B, and A's copy of B's
// ManagedCluster, made before, records nothing). The agent's epochs say it was on hub A (2) and moved to hub B
// (3, from hub-a): B is the source, and what a user made on A and B lacks is written back to B; the write-back is
// then recorded done on B's ManagedCluster.
func TestControllerFollowsTheAgentsEpochAfterARestart(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}

	madeOnA := manifestWork(testCluster, "made-on-a", "cm-a", nil)
	madeOnA.SetUID("uid-a")
	mcA := managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubB})
	mcA.SetAnnotations(map[string]string{failoverv1alpha1.AnnotationEpoch: "epoch=2"})
	a := newTestHub(t, testHubA, handler, kinds, mcA, madeOnA)
	mcB := managedCluster(testCluster, nil)
	mcB.SetAnnotations(map[string]string{failoverv1alpha1.AnnotationEpoch: "epoch=3,from=" + testHubA})
	b := newTestHub(t, testHubB, handler, kinds, mcB)
	c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

	eventually(t, "hub-b holds made-on-a, written back from hub-a", func() bool {
		cp := b.get(t, mwKind, testCluster, "made-on-a")
		return cp != nil && cp.GetAnnotations()[mirror.AnnotationSourceUID] == "uid-a"
	})
	eventually(t, "the write-back of epoch 3 recorded done on hub-b", func() bool {
		mc := b.get(t, mcKind, "", testCluster)
		return mc != nil && mc.GetAnnotations()[mirror.AnnotationWrittenBackEpoch] == "3"
	})
	quiesce(t, c, a, b)
	if got := c.Sources(); !slices.Equal(got, [][2]string{{testCluster, testHubB}}) {
		t.Errorf("sources = %v, want %s on %s (the agent's highest epoch)", got, testCluster, testHubB)
	}
	if mc := a.get(t, mcKind, "", testCluster); mc == nil || !mirror.IsCopy(mc) || mc.GetAnnotations()[failoverv1alpha1.AnnotationEpoch] != "epoch=2" {
		t.Errorf("hub-a's ManagedCluster = %v, want a copy of hub-b's that keeps the agent's epoch 2", mc)
	}
	if msgs := recorder.messages(ReasonWrittenBack); len(msgs) != 1 || !strings.Contains(msgs[0], "made-on-a") {
		t.Errorf("WrittenBack events = %q, want one for made-on-a", msgs)
	}
}
