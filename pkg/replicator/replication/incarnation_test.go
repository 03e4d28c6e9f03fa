package replication

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// incarnationMarker returns a hub's incarnation marker of UID uid holding data (hub → value).
func incarnationMarker(uid string, data map[string]string) *unstructured.Unstructured {
	d := map[string]any{}
	for hub, v := range data {
		d[hub] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": IncarnationMarker, "namespace": DefaultMarkerNamespace, "uid": uid},
		"data":     d,
	}}
}

// counter returns the counter of hub in h's incarnation marker (0: no marker, or none of hub).
func counter(t *testing.T, h *testHub, hub string) int64 {
	t.Helper()
	obj, err := h.fake.Resource(configMapGVR).Namespace(DefaultMarkerNamespace).Get(context.Background(), IncarnationMarker, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return markerCounter(obj, hub)
}

// TestControllerAdvancesAnIncarnationBeforeItCopies: a hub's counter is advanced when the replicator copies from
// it, at most once per interval, and each copy records the incarnation it was written in; with nothing to copy,
// no marker is written.
func TestControllerAdvancesAnIncarnationBeforeItCopies(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	kept := manifestWork(testCluster, "work-0", "cm-0", nil)
	kept.SetUID("uid-work-0")
	keptCopy := mirror.Desired(mwKind, kept, nil, testHubA, nil) // written before any marker: no incarnation
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), kept, incarnationMarker("marker-a", map[string]string{testHubA: "4"}))
	b := newTestHub(t, testHubB, handler, kinds, keptCopy)
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour, IncarnationInterval: 200 * time.Millisecond}, a, b)

	eventually(t, "hub-b holds the cluster's ManagedCluster copy", func() bool { return b.get(t, mcKind, "", testCluster) != nil })
	// A copy in step that records no incarnation gets the one its source shows.
	eventually(t, "hub-b's copy of work-0 records an incarnation of marker-a", func() bool {
		return mirror.SourceIncarnation(b.get(t, mwKind, testCluster, "work-0")).UID == "marker-a"
	})
	quiesce(t, c, a, b)
	first := counter(t, a, testHubA)
	if first != 4 && first != 5 {
		t.Errorf("hub-a's counter after the first copies = %d, want 4 (the copies were written before its marker was read, and given 4 after) or 5 (advanced once before them)", first)
	}
	if got := mirror.SourceIncarnation(b.get(t, mcKind, "", testCluster)); got.UID != "marker-a" || got.N < 4 || got.N > first {
		t.Errorf("the ManagedCluster copy's incarnation = %+v, want marker-a/4 or /5, at most the counter %d", got, first)
	}
	time.Sleep(500 * time.Millisecond)
	if got := counter(t, a, testHubA); got != first || counter(t, b, testHubB) != 0 {
		t.Errorf("counters after a quiet interval: hub-a %d, hub-b %d; want %d and none (nothing copied, nothing written)", got, counter(t, b, testHubB), first)
	}

	// A copy after the interval: the counter is advanced once before it, and the copy records the new one. The
	// marker's lock is held meanwhile, as syncIncarnation holds it while it reads the marker: the copy waits for
	// it, and does not record the incarnation a backup taken before it holds.
	lock := c.incarnations.locks[testHubA]
	lock.Lock()
	if _, err := a.client.Resource(mwKind.GVR).Namespace(testCluster).Create(context.Background(), manifestWork(testCluster, "work-1", "cm-1", nil), metav1.CreateOptions{}); err != nil {
		lock.Unlock()
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	lock.Unlock()
	eventually(t, "work-1 copied in the next incarnation", func() bool {
		w := b.get(t, mwKind, testCluster, "work-1")
		return w != nil && mirror.SourceIncarnation(w) == mirror.Incarnation{UID: "marker-a", N: first + 1}
	})
	if got := counter(t, a, testHubA); got != first+1 {
		t.Errorf("hub-a's counter after work-1 was copied = %d, want %d", got, first+1)
	}
}

// TestControllerRecordsTheFirstIncarnationOnEarlierCopies: no hub has a marker yet, and hub A's cannot be made at
// first, so the copies written then (the ManagedCluster's) and one in step from before (work-0's) record no
// incarnation. Once the marker can be made, the next sync of work-0 (its status written on hub A: nothing to copy)
// makes it, and every copy then records hub A's first incarnation, the ManagedCluster's too, which nothing
// syncs otherwise.
func TestControllerRecordsTheFirstIncarnationOnEarlierCopies(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	mc := managedCluster(testCluster, nil)
	mc.SetUID("uid-mc")
	kept := manifestWork(testCluster, "work-0", "cm-0", nil)
	kept.SetUID("uid-work-0")
	a := newTestHub(t, testHubA, handler, kinds, mc, kept)
	// The fake gives objects no UID: the marker gets the one an apiserver would.
	var refuse atomic.Bool
	refuse.Store(true)
	a.fake.PrependReactor("create", "configmaps", func(action clienttesting.Action) (bool, runtime.Object, error) {
		obj, ok := action.(clienttesting.CreateAction).GetObject().(*unstructured.Unstructured)
		if !ok || obj.GetName() != IncarnationMarker {
			return false, nil, nil
		}
		if refuse.Load() {
			return true, nil, apierrors.NewForbidden(configMapGVR.GroupResource(), IncarnationMarker, fmt.Errorf("refused by the test"))
		}
		obj.SetUID("marker-a")
		return false, nil, nil
	})
	b := newTestHub(t, testHubB, handler, kinds, mirror.Desired(mwKind, kept, nil, testHubA, nil))
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour, IncarnationInterval: 100 * time.Millisecond}, a, b)
	eventually(t, "hub-b holds the cluster's ManagedCluster copy", func() bool { return b.get(t, mcKind, "", testCluster) != nil })
	quiesce(t, c, a, b)
	if got := counter(t, a, testHubA); got != 0 {
		t.Fatalf("hub-a's counter = %d while its marker cannot be made", got)
	}
	for _, obj := range []*unstructured.Unstructured{b.get(t, mwKind, testCluster, "work-0"), b.get(t, mcKind, "", testCluster)} {
		if got := mirror.SourceIncarnation(obj); got.Known() {
			t.Fatalf("hub-b's copy %s records %+v before hub-a has a marker", obj.GetName(), got)
		}
	}

	refuse.Store(false)
	// OCM's work agent reports work-0's status on hub A: nothing to copy, but a sync of work-0.
	touched := a.get(t, mwKind, testCluster, "work-0")
	if err := unstructured.SetNestedSlice(touched.Object, []any{map[string]any{"type": "Applied", "status": "True"}}, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.client.Resource(mwKind.GVR).Namespace(testCluster).UpdateStatus(context.Background(), touched, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := mirror.Incarnation{UID: "marker-a", N: 1}
	eventually(t, "hub-b's copies of work-0 and of the ManagedCluster record hub-a's first incarnation", func() bool {
		return mirror.SourceIncarnation(b.get(t, mwKind, testCluster, "work-0")) == first &&
			mirror.SourceIncarnation(b.get(t, mcKind, "", testCluster)) == first
	})
	quiesce(t, c, a, b)
	if got := counter(t, a, testHubA); got != 1 {
		t.Errorf("hub-a's counter = %d, want 1 (made once)", got)
	}
	// The patch may go twice: the sync that every key gets once the marker is made can read a cache that does not
	// show the first one yet.
	if got := b.writes(mwKind); len(got) == 0 || slices.ContainsFunc(got, func(w string) bool { return w != "patch "+testCluster+"/work-0" }) {
		t.Errorf("hub-b's ManifestWork writes = %v, want patches of work-0's incarnation only (nothing to copy)", got)
	}
}

// TestControllerRemakesWhatARestoredHubLost: hub A, the cluster's source, shows incarnation 3 of its marker while
// hub B's marker records 7 for it: A was restored from a backup. B holds copies of works A no longer holds:
// work-lost, made from A in incarnation 6 (after the backup), is made again on A, an original holding deletes,
// with the copy's content; work-gone, copied in incarnation 2 (before the backup: A held it then, so its absence
// is a delete the replicator did not see, or made while B was out of the configuration), is not, and neither is
// work-old, copied from an earlier marker of A (the replicator was uninstalled since, or A rebuilt). work-kept,
// which A holds, was copied in incarnation 6: that mark is lowered to A's 3, so that a delete of it on A that the
// replicator forgets does not make it again. Once every object was compared, A's counter is advanced above what
// was recorded, when the replicator next copies from it.
func TestControllerRemakesWhatARestoredHubLost(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	ctx := context.Background()
	work := func(name string) *unstructured.Unstructured {
		src := manifestWork(testCluster, name, "cm-"+name, nil)
		src.SetUID(types.UID("uid-" + name))
		src.SetGeneration(1)
		return src
	}
	copyAt := func(name string, incarnation mirror.Incarnation) *unstructured.Unstructured {
		cp := mirror.WithSourceIncarnation(mirror.Desired(mwKind, work(name), nil, testHubA, nil), incarnation)
		cp.SetUID(types.UID("copy-of-" + name))
		return cp
	}
	lost := copyAt("work-lost", mirror.Incarnation{UID: "marker-a", N: 6})
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), work("work-kept"),
		incarnationMarker("marker-a", map[string]string{testHubA: "3", testHubB: "marker-b/4"}))
	b := newTestHub(t, testHubB, handler, kinds, managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA}),
		lost, copyAt("work-gone", mirror.Incarnation{UID: "marker-a", N: 2}), copyAt("work-old", mirror.Incarnation{UID: "marker-before", N: 9}),
		copyAt("work-kept", mirror.Incarnation{UID: "marker-a", N: 6}),
		incarnationMarker("marker-b", map[string]string{testHubA: "marker-a/7", testHubB: "5"}))
	c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour, IncarnationInterval: 100 * time.Millisecond}, a, b)

	eventually(t, "work-lost made again on hub-a", func() bool { return a.get(t, mwKind, testCluster, "work-lost") != nil })
	made := a.get(t, mwKind, testCluster, "work-lost")
	if !equalSpec(made, lost) || mirror.IsCopy(made) || !slices.Contains(made.GetFinalizers(), mirror.FinalizerDeleteCopies) {
		t.Errorf("work-lost made again on hub-a: spec %v, labels %v, finalizers %v; want the copy's spec, an original holding deletes",
			specOf(made), made.GetLabels(), made.GetFinalizers())
	}
	eventually(t, "hub-b's copy of work-kept records hub-a's incarnation 3", func() bool {
		return mirror.SourceIncarnation(b.get(t, mwKind, testCluster, "work-kept")) == mirror.Incarnation{UID: "marker-a", N: 3}
	})
	quiesce(t, c, a, b)

	// A new work: copying it advances A's counter past the recorded 7, now that A is reconciled.
	if _, err := a.client.Resource(mwKind.GVR).Namespace(testCluster).Create(ctx, work("work-new"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "work-new copied in an incarnation after 7", func() bool {
		w := b.get(t, mwKind, testCluster, "work-new")
		return w != nil && mirror.SourceIncarnation(w).N > 7 && counter(t, a, testHubA) > 7
	})
	// work-gone's copy, whose source object is missing at an incarnation hub-a has reached (a delete unseen),
	// loses its incarnation: no later restore takes it for proof of a loss.
	if got := mirror.SourceIncarnation(b.get(t, mwKind, testCluster, "work-gone")); got.Known() {
		t.Errorf("hub-b's copy of work-gone records incarnation %+v, want none", got)
	}
	for _, name := range []string{"work-gone", "work-old"} {
		if got := a.get(t, mwKind, testCluster, name); got != nil {
			t.Errorf("%s made again on hub-a from a copy of an earlier incarnation or another marker: %v", name, specOf(got))
		}
		if got := b.get(t, mwKind, testCluster, name); got == nil {
			t.Errorf("hub-b's copy of %s deleted: no delete of it was seen", name)
		}
	}
	if got := b.get(t, mwKind, testCluster, "work-lost"); got == nil || got.GetDeletionTimestamp() != nil {
		t.Errorf("hub-b's copy of work-lost after the remake: %v, want it kept", got)
	}
	restored := strings.Join(recorder.messages(ReasonHubRestored), "\n")
	// 6 (a copy) or 7 (hub-b's marker), whichever the replicator read first.
	if !strings.Contains(restored, "hub hub-a shows incarnation 3 of its marker, and 6 was recorded") && !strings.Contains(restored, "hub hub-a shows incarnation 3 of its marker, and 7 was recorded") {
		t.Errorf("HubRestored events %q, want one naming hub-a, 3 and 6 or 7", restored)
	}
	written := strings.Join(recorder.messages(ReasonWrittenBack), "\n")
	if !strings.Contains(written, "ManifestWork/"+testCluster+"/work-lost: hub hub-a lost it (it shows incarnation 3 of its marker, the copy on hub hub-b was made in incarnation 6)") ||
		strings.Contains(written, "work-gone") || strings.Contains(written, "work-old") {
		t.Errorf("WrittenBack events %q, want one for work-lost and none for work-gone or work-old", written)
	}
}

// TestControllerFindsARestoreFromCopiesAlone: no hub but the restored one has a marker (a standby is never copied
// from), and the replicator starts after the restore: the copies made from hub A record a later incarnation of
// its marker than A shows, which is enough to find the restore and make again what A lost.
func TestControllerFindsARestoreFromCopiesAlone(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	src := manifestWork(testCluster, "work-lost", "cm-lost", nil)
	src.SetUID("uid-work-lost")
	lost := mirror.WithSourceIncarnation(mirror.Desired(mwKind, src, nil, testHubA, nil), mirror.Incarnation{UID: "marker-a", N: 6})
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), incarnationMarker("marker-a", map[string]string{testHubA: "3"}))
	b := newTestHub(t, testHubB, handler, kinds, managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA}), lost)
	_, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour, IncarnationInterval: 100 * time.Millisecond}, a, b)

	eventually(t, "work-lost made again on hub-a", func() bool { return a.get(t, mwKind, testCluster, "work-lost") != nil })
	eventually(t, "the restore reported", func() bool {
		return strings.Contains(strings.Join(recorder.messages(ReasonHubRestored), "\n"), "hub hub-a shows incarnation 3 of its marker, and 6 was recorded")
	})
}

// TestControllerMarksARestoredStandbyAgain: hub B, a standby fenced by the replicator (its namespace marked as
// managed from hub A, its counter advanced after the marks), is restored from a backup taken while it was unmarked — without ever looking unreachable
// to the replicator (a restart its probes missed). Its marker shows a lower counter than A's marker records: the
// restore is found, and B's namespace is marked again, although the replicator had marked it already.
func TestControllerMarksARestoredStandbyAgain(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	nsKind := mirror.Kind{GVR: mirror.NamespaceGVR, Name: "Namespace"}
	handler := &proxyHandler{}
	ctx := context.Background()
	namespace := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": testCluster}}}
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), namespace.DeepCopy(),
		incarnationMarker("marker-a", map[string]string{testHubA: "4"}))
	b := newTestHub(t, testHubB, handler, kinds, namespace.DeepCopy(), incarnationMarker("marker-b", map[string]string{testHubB: "6"}))
	for _, h := range []*testHub{a, b} {
		h.fake.PrependReactor("create", "selfsubjectreviews", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(fence.SelfSubjectReviewGVR.GroupResource(), "")
		})
	}
	c, recorder := startController(t, handler, Options{Kinds: kinds, Fencing: true, DirectionRecheck: time.Hour, IncarnationInterval: 100 * time.Millisecond}, a, b)
	eventually(t, "hub-b's namespace marked as managed from hub-a", func() bool {
		return b.get(t, nsKind, "", testCluster).GetLabels()[fence.LabelClusterHub] == testHubA
	})
	// Its counter is advanced after the marks: a backup taken before them shows a lower one.
	eventually(t, "hub-b's counter advanced after its marks", func() bool { return counter(t, b, testHubB) == 7 })
	quiesce(t, c, a, b)

	// B is restored: its namespace unmarked, its marker back at 2.
	unmarked := b.get(t, nsKind, "", testCluster)
	unmarked.SetLabels(nil)
	unmarked.SetAnnotations(nil)
	if _, err := b.fake.Resource(mirror.NamespaceGVR).Update(ctx, unmarked, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	marker, err := b.fake.Resource(configMapGVR).Namespace(DefaultMarkerNamespace).Get(ctx, IncarnationMarker, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(marker.Object, "2", "data", testHubB)
	if _, err := b.fake.Resource(configMapGVR).Namespace(DefaultMarkerNamespace).Update(ctx, marker, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the restore of hub-b reported", func() bool { return len(recorder.messages(ReasonHubRestored)) > 0 })
	eventually(t, "hub-b's namespace marked again", func() bool {
		return b.get(t, nsKind, "", testCluster).GetLabels()[fence.LabelClusterHub] == testHubA
	})
}

// TestControllerWritesBackWhatARestoredStandbyAccepted: hub B, a standby of the cluster, is restored from a backup
// taken while it was the cluster's source (its ManagedCluster an original without a cluster-hub record, its
// namespace without fence marks), and its users wrote there before the replicator found the restore: work-new
// made, work-edited changed after its copy on A was made. A, the source, holds copies made from B's originals:
// work-edited unchanged since, work-kept changed on A since; work-gone, which the backup holds, was deleted on A
// since (no hub logged it). Once the restore is found, what B's users wrote reaches A (written back as from a hub
// the cluster moved from), A's newer work-kept stays, work-gone is not made again on A (B wrote it before its
// marker's last write), and B is fenced again and takes A's state, its ManagedCluster once B is reconciled. The
// same holds while A's ManagedCluster still names B as the hub the cluster moved from (the agent's epoch, its
// write-back not finished): B is written back from as a restored hub, not as one the cluster left, and that record
// ends before B's claim does — while the end cannot be written on A, B stays claimed and work-gone, synced again,
// is still not made again on A.
func TestControllerWritesBackWhatARestoredStandbyAccepted(t *testing.T) {
	for _, tc := range []struct{ movedFrom, endFails bool }{{false, false}, {true, false}, {true, true}} {
		t.Run(fmt.Sprintf("write-back from hub-b unfinished=%t, its end refused=%t", tc.movedFrom, tc.endFails), func(t *testing.T) {
			testWritesBackWhatARestoredStandbyAccepted(t, tc.movedFrom, tc.endFails)
		})
	}
}

func testWritesBackWhatARestoredStandbyAccepted(t *testing.T, movedFrom, endFails bool) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	nsKind := mirror.Kind{GVR: mirror.NamespaceGVR, Name: "Namespace"}
	handler := &proxyHandler{}
	namespace := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": testCluster}}}
	original := func(name, configMap string, uid types.UID, written time.Time) *unstructured.Unstructured {
		w := manifestWork(testCluster, name, configMap, nil)
		w.SetUID(uid)
		w.SetGeneration(1)
		w.SetCreationTimestamp(metav1.NewTime(time.Now().Add(-2 * time.Hour)))
		w.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate,
			Time: &metav1.Time{Time: written}, APIVersion: "work.open-cluster-management.io/v1", FieldsType: "FieldsV1"}})
		return w
	}
	copyOnA := func(of *unstructured.Unstructured, writtenAt time.Time) *unstructured.Unstructured {
		cp := mirror.WithSourceWrittenAt(mirror.Desired(mwKind, of, nil, testHubB, nil), writtenAt)
		cp.SetUID("a-" + of.GetUID())
		return cp
	}
	hourAgo := time.Now().Add(-time.Hour).Truncate(time.Second)
	edited := original("work-edited", "cm-edited-on-b", "uid-edited", time.Now())
	editedCopy := copyOnA(original("work-edited", "cm-before", "uid-edited", hourAgo), hourAgo)
	kept := original("work-kept", "cm-kept-old", "uid-kept", hourAgo.Add(-time.Minute))
	keptCopy := copyOnA(kept, hourAgo)
	spec, _, _ := unstructured.NestedSlice(keptCopy.Object, "spec", "workload", "manifests")
	spec[0].(map[string]any)["metadata"].(map[string]any)["name"] = "cm-kept-changed-on-a"
	_ = unstructured.SetNestedSlice(keptCopy.Object, spec, "spec", "workload", "manifests")
	made := original("work-new", "cm-new", "uid-new", time.Now())
	gone := original("work-gone", "cm-gone", "uid-gone", hourAgo)
	markerB := incarnationMarker("marker-b", map[string]string{testHubB: "2"})
	markerB.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationUpdate,
		Time: &metav1.Time{Time: hourAgo.Add(30 * time.Minute)}, APIVersion: "v1", FieldsType: "FieldsV1"}})

	// The agent moved from B to A in its epoch 2, whose write-back is finished; B's ManagedCluster is as B's
	// backup holds it, in epoch 1.
	mcA := managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubB})
	mcA.SetAnnotations(map[string]string{failoverv1alpha1.AnnotationEpoch: "epoch=2,from=" + testHubB, mirror.AnnotationWrittenBackEpoch: "2"})
	if movedFrom {
		// Both records a move leaves: the agent's epoch, and the replicator's own (SourceCleanup).
		mcA.SetAnnotations(map[string]string{failoverv1alpha1.AnnotationEpoch: "epoch=2,from=" + testHubB, mirror.AnnotationMovedFrom: testHubB})
	}
	mcB := managedCluster(testCluster, nil)
	mcB.SetAnnotations(map[string]string{failoverv1alpha1.AnnotationEpoch: "epoch=1"})
	a := newTestHub(t, testHubA, handler, kinds, mcA, namespace.DeepCopy(), editedCopy, keptCopy,
		incarnationMarker("marker-a", map[string]string{testHubA: "4", testHubB: "marker-b/6"}))
	b := newTestHub(t, testHubB, handler, kinds, mcB, namespace.DeepCopy(), edited, kept, made, gone, markerB)
	for _, h := range []*testHub{a, b} {
		h.fake.PrependReactor("create", "selfsubjectreviews", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(fence.SelfSubjectReviewGVR.GroupResource(), "")
		})
	}
	// While refuseEnd is set, hub-a refuses the patch that ends the second record of the move from hub-b (its
	// moved-from annotation; the agent's epoch is ended first).
	var refuseEnd atomic.Bool
	var endsRefused atomic.Int32
	refuseEnd.Store(endFails)
	a.fake.PrependReactor("patch", "managedclusters", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if refuseEnd.Load() && strings.Contains(string(action.(clienttesting.PatchAction).GetPatch()), mirror.AnnotationMovedFrom) {
			endsRefused.Add(1)
			return true, nil, apierrors.NewServiceUnavailable("refused by the test")
		}
		return false, nil, nil
	})
	c, recorder := startController(t, handler, Options{Kinds: kinds, Fencing: true, DirectionRecheck: time.Hour, IncarnationInterval: 100 * time.Millisecond}, a, b)
	eventually(t, "the restore of hub-b reported", func() bool { return len(recorder.messages(ReasonHubRestored)) > 0 })
	eventually(t, "work-new, made on hub-b after its restore, written on hub-a", func() bool {
		return a.get(t, mwKind, testCluster, "work-new") != nil
	})
	eventually(t, "work-edited's change on hub-b written on hub-a", func() bool {
		return equalSpec(a.get(t, mwKind, testCluster, "work-edited"), edited)
	})
	eventually(t, "hub-b's namespace marked as managed from hub-a again", func() bool {
		return b.get(t, nsKind, "", testCluster).GetLabels()[fence.LabelClusterHub] == testHubA
	})
	eventually(t, "hub-b's work-kept takes hub-a's newer state", func() bool {
		return equalSpec(b.get(t, mwKind, testCluster, "work-kept"), keptCopy)
	})
	if endFails {
		// The refused end is tried again every incarnation interval: the controller does not settle meanwhile,
		// and work-gone, synced again, is watched for a second.
		eventually(t, "the end of the write-back from hub-b refused on hub-a", func() bool { return endsRefused.Load() > 0 })
		c.queue.Add(Key{Kind: mwKind.Name, Namespace: testCluster, Name: "work-gone"})
		for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if got := a.get(t, mwKind, testCluster, "work-gone"); got != nil {
				t.Fatalf("hub-a holds work-gone %v while the end of the write-back from hub-b is refused: made again from hub-b's backup", specOf(got))
			}
		}
		refuseEnd.Store(false)
	}
	eventually(t, "hub-b's ManagedCluster written as a copy once hub-b is reconciled", func() bool {
		return b.get(t, mcKind, "", testCluster).GetAnnotations()[mirror.AnnotationClusterHub] == testHubA
	})
	if movedFrom {
		eventually(t, "hub-a's ManagedCluster records the write-back from hub-b finished, and names no hub it moved from", func() bool {
			annotations := a.get(t, mcKind, "", testCluster).GetAnnotations()
			return annotations[mirror.AnnotationWrittenBackEpoch] == "2" && annotations[mirror.AnnotationMovedFrom] == ""
		})
	}
	quiesce(t, c, a, b)
	c.queue.Add(Key{Kind: mwKind.Name, Namespace: testCluster, Name: "work-gone"})
	quiesce(t, c, a, b)
	if got := a.get(t, mwKind, testCluster, "work-gone"); got != nil {
		t.Errorf("hub-a holds work-gone %v: made again from hub-b's backup, where it was written before the restore", specOf(got))
	}
	if got := a.get(t, mwKind, testCluster, "work-kept"); !equalSpec(got, keptCopy) {
		t.Errorf("hub-a's work-kept = %v, want the state changed on hub-a kept (hub-b's is the backup's older one)", specOf(got))
	}
	if got := a.get(t, mwKind, testCluster, "work-new"); !equalSpec(got, made) {
		t.Errorf("hub-a's work-new = %v, want hub-b's %v", specOf(got), specOf(made))
	}
	written := strings.Join(recorder.messages(ReasonWrittenBack), "\n")
	for _, name := range []string{"work-new", "work-edited"} {
		if !strings.Contains(written, "ManifestWork/"+testCluster+"/"+name+": the ") {
			t.Errorf("WrittenBack events %q, want one for %s", written, name)
		}
	}
	if strings.Contains(written, "work-kept") || strings.Contains(written, "work-gone") {
		t.Errorf("WrittenBack events %q name work-kept, whose state on hub-b is older than hub-a's, or work-gone, from the backup", written)
	}
}

// TestControllerRecordsAStandbysAdvanceOnTheOtherHubs: each of hubs A and B is the source of one cluster and a
// standby of the other's. Marked as a standby, each has its counter advanced after the marks, and the new counter
// is recorded at once on the other hub's marker (a restore of a backup taken before the marks takes the hub's own
// marker back, not the other's). Both hubs are marked at the same time, their markers synced by two workers.
func TestControllerRecordsAStandbysAdvanceOnTheOtherHubs(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	kinds := []mirror.Kind{mcKind}
	nsKind := mirror.Kind{GVR: mirror.NamespaceGVR, Name: "Namespace"}
	handler := &proxyHandler{}
	ns := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	}
	a := newTestHub(t, testHubA, handler, kinds, managedCluster("cluster-a", nil), ns("cluster-a"), incarnationMarker("marker-a", map[string]string{testHubA: "3"}))
	b := newTestHub(t, testHubB, handler, kinds, managedCluster("cluster-b", nil), ns("cluster-b"), incarnationMarker("marker-b", map[string]string{testHubB: "6"}))
	for _, h := range []*testHub{a, b} {
		h.fake.PrependReactor("create", "selfsubjectreviews", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(fence.SelfSubjectReviewGVR.GroupResource(), "")
		})
		// The first write of the other hub's counter into this hub's marker (its own counter unchanged) meets a
		// conflict, as when an older replica of the replicator wrote the marker since it was read: it is retried.
		var conflicted atomic.Bool
		h.fake.PrependReactor("update", "configmaps", func(action clienttesting.Action) (bool, runtime.Object, error) {
			obj, ok := action.(clienttesting.UpdateAction).GetObject().(*unstructured.Unstructured)
			if !ok || obj.GetName() != IncarnationMarker {
				return false, nil, nil
			}
			cur, err := h.fake.Tracker().Get(configMapGVR, obj.GetNamespace(), obj.GetName())
			stored, _ := cur.(*unstructured.Unstructured)
			if err != nil || stored == nil || markerCounter(obj, h.hub.Name()) != markerCounter(stored, h.hub.Name()) || conflicted.Swap(true) {
				return false, nil, nil
			}
			return true, nil, apierrors.NewConflict(configMapGVR.GroupResource(), IncarnationMarker, fmt.Errorf("the object has been modified"))
		})
	}
	c, _ := startController(t, handler, Options{Kinds: kinds, Fencing: true, DirectionRecheck: time.Hour, IncarnationInterval: time.Hour}, a, b)
	recorded := func(h *testHub, hub string) string {
		obj, err := h.fake.Resource(configMapGVR).Namespace(DefaultMarkerNamespace).Get(context.Background(), IncarnationMarker, metav1.GetOptions{})
		if err != nil {
			return ""
		}
		v, _, _ := unstructured.NestedString(obj.Object, "data", hub)
		return v
	}
	mark := func(h *testHub, namespace string) string {
		if obj := h.get(t, nsKind, "", namespace); obj != nil {
			return obj.GetLabels()[fence.LabelClusterHub]
		}
		return ""
	}
	eventually(t, "each hub marked as the other's cluster's standby", func() bool {
		return mark(a, "cluster-b") == testHubB && mark(b, "cluster-a") == testHubA
	})
	// A's and B's counters also advance when the replicator first copies from them; whichever hub advanced last,
	// only recordOnOthers puts its counter on the other's marker.
	eventually(t, "each hub's counter advanced and recorded on the other's marker", func() bool {
		ca, cb := counter(t, a, testHubA), counter(t, b, testHubB)
		return ca > 3 && cb > 6 && recorded(b, testHubA) == fmt.Sprintf("marker-a/%d", ca) && recorded(a, testHubB) == fmt.Sprintf("marker-b/%d", cb)
	})
	quiesce(t, c, a, b)
}

// TestControllerReportsADeleteThatMeetsAChangeOnTheSource: the cluster moved from hub B to hub A (the agent's epoch
// 2, its write-back not finished). On B, a user deleted work-x before B was fenced (its delete held there); on A,
// the cluster's source, work-x's copy was changed since it was made. No clock orders the two writes: A's change is
// kept, and the delete, not written back, is reported (`make chaos` seed 27 dropped it without a word).
func TestControllerReportsADeleteThatMeetsAChangeOnTheSource(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	deleted := manifestWork(testCluster, "work-x", "cm-x", nil)
	deleted.SetUID("uid-x")
	deleted.SetGeneration(1)
	deleted.SetFinalizers([]string{mirror.FinalizerDeleteCopies})
	deleted.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	changed := mirror.Desired(mwKind, deleted, nil, testHubB, nil)
	changed.SetUID("a-uid-x")
	changed.SetDeletionTimestamp(nil)
	_ = unstructured.SetNestedSlice(changed.Object, []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm-changed-on-a", "namespace": "default"}}}, "spec", "workload", "manifests")
	mcA := managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubB})
	mcA.SetAnnotations(map[string]string{failoverv1alpha1.AnnotationEpoch: "epoch=2,from=" + testHubB})
	mcB := managedCluster(testCluster, nil)
	mcB.SetAnnotations(map[string]string{failoverv1alpha1.AnnotationEpoch: "epoch=1"})
	a := newTestHub(t, testHubA, handler, kinds, mcA, changed)
	b := newTestHub(t, testHubB, handler, kinds, mcB, deleted)
	c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour, IncarnationInterval: 100 * time.Millisecond}, a, b)
	eventually(t, "the delete on hub-b reported as not written back", func() bool {
		return strings.Contains(strings.Join(recorder.messages(ReasonDeleteNotWrittenBack), "\n"),
			"ManifestWork/"+testCluster+"/work-x: deleted on hub hub-b, which cluster "+testCluster+" moved from, and changed on hub hub-a, its source")
	})
	quiesce(t, c, a, b)
	if got := a.get(t, mwKind, testCluster, "work-x"); got == nil || got.GetDeletionTimestamp() != nil || !equalSpec(got, changed) {
		t.Errorf("hub-a's work-x = %v, want the state changed there kept", specOf(got))
	}
}

// TestControllerLeavesAClaimedManagedClusterUntilReconciled: hub B, restored from a backup of its days as the
// cluster's source, claims the cluster; its ManagedCluster, which tells the claim, is left as restored while the
// claim stands (here for the test's length: the incarnation interval is an hour), so that a replicator started
// again meanwhile finds the claim again. A's ManagedCluster is a copy made from B's, which would otherwise take
// B's over at once.
func TestControllerLeavesAClaimedManagedClusterUntilReconciled(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	kinds := []mirror.Kind{mcKind}
	handler := &proxyHandler{}
	mcA := managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubB})
	mcA.SetAnnotations(map[string]string{failoverv1alpha1.AnnotationEpoch: "epoch=2,from=" + testHubB, mirror.AnnotationWrittenBackEpoch: "2"})
	mcB := managedCluster(testCluster, nil)
	mcB.SetAnnotations(map[string]string{failoverv1alpha1.AnnotationEpoch: "epoch=1"})
	a := newTestHub(t, testHubA, handler, kinds, mcA, incarnationMarker("marker-a", map[string]string{testHubA: "4", testHubB: "marker-b/6"}))
	b := newTestHub(t, testHubB, handler, kinds, mcB, incarnationMarker("marker-b", map[string]string{testHubB: "2"}))
	c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour, IncarnationInterval: time.Hour}, a, b)
	eventually(t, "the restore of hub-b reported", func() bool { return len(recorder.messages(ReasonHubRestored)) > 0 })
	quiesce(t, c, a, b)
	if got := b.get(t, mcKind, "", testCluster); got.GetAnnotations()[mirror.AnnotationClusterHub] != "" || mirror.IsCopy(got) {
		t.Errorf("hub-b's ManagedCluster written while hub-b claims the cluster: labels %v, annotations %v", got.GetLabels(), got.GetAnnotations())
	}
}

// TestLockWithin: lockWithin takes a free mutex at once, takes one released within the wait, and gives up on one
// held past it (a copy then records the incarnation shown rather than hold its worker).
func TestLockWithin(t *testing.T) {
	var m sync.Mutex
	if !lockWithin(&m, time.Millisecond) {
		t.Fatalf("a free mutex was not taken")
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(50 * time.Millisecond)
		m.Unlock()
		close(released)
	}()
	if !lockWithin(&m, 5*time.Second) {
		t.Fatalf("a mutex released after 50 ms was not taken within 5 s")
	}
	<-released
	start := time.Now()
	if lockWithin(&m, 100*time.Millisecond) {
		t.Fatalf("a held mutex was taken")
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("gave up after %s, want at least the 100 ms wait", waited)
	}
	m.Unlock()
}
