package replication

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// TestControllerLogsADeleteOnEveryHubBeforeReleasingIt: a user's delete of work-1 on hub A, the source, held by
// the replicator's finalizer, reaches B's copy; before A's hold is released, the delete is in both hubs' logs of
// deletes made.
func TestControllerLogsADeleteOnEveryHubBeforeReleasingIt(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	original := heldOriginal("work-1", "cm-1", "uid-w1", testHubB)
	deleted := metav1.NewTime(time.Now().Add(-time.Minute))
	original.SetDeletionTimestamp(&deleted)
	cp := mirror.Desired(mwKind, manifestWork(testCluster, "work-1", "cm-1", nil), nil, testHubA, nil)
	cp.SetAnnotations(map[string]string{mirror.AnnotationSourceUID: "uid-w1"})
	cp.SetUID("uid-copy")
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), original)
	b := newTestHub(t, testHubB, handler, kinds, managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA}), cp)
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

	eventually(t, "hub-a's hold released", func() bool {
		w := a.get(t, mwKind, testCluster, "work-1")
		return w == nil || !slices.Contains(w.GetFinalizers(), mirror.FinalizerDeleteCopies)
	})
	quiesce(t, c, a, b)
	if got := b.get(t, mwKind, testCluster, "work-1"); got != nil {
		t.Errorf("hub-b's copy of the deleted work-1: %v, want it deleted", specOf(got))
	}
	for _, h := range []*testHub{a, b} {
		if got := deleteLogOn(t, h); got != "ManifestWork/"+testCluster+"/work-1=uid-w1/\n" {
			t.Errorf("%s's log of deletes made %q, want ManifestWork/%s/work-1=uid-w1/", h.hub.Name(), got, testCluster)
		}
	}
	// On hub A, the log is written before the hold is released.
	logged, released := -1, -1
	for i, action := range a.fake.Actions() {
		switch {
		case action.GetResource() == configMapGVR && (action.GetVerb() == "create" || action.GetVerb() == "update") && logged < 0:
			logged = i
		case action.GetResource() == mwKind.GVR && action.GetVerb() == "patch" && released < 0:
			released = i
		}
	}
	if logged < 0 || released < 0 || logged > released {
		t.Errorf("hub-a's actions: the log written at %d, the hold released at %d; want the log first", logged, released)
	}
}

// deleteLogObject returns a hub's log of deletes made holding value.
func deleteLogObject(value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": DeleteLog, "namespace": DefaultMarkerNamespace},
		"data":     map[string]any{mirror.DeleteLogKey: value},
	}}
}

// deleteLogOn returns hub h's log of deletes made ("" when there is none).
func deleteLogOn(t *testing.T, h *testHub) string {
	t.Helper()
	obj, err := h.fake.Resource(configMapGVR).Namespace(DefaultMarkerNamespace).Get(context.Background(), DeleteLog, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	value, _, _ := unstructured.NestedString(obj.Object, "data", mirror.DeleteLogKey)
	return value
}

// TestControllerDeletesWhatARestoredHubBringsBack: hubs restored from backups taken before deletes that hub A, the
// source, and hub B logged (each in its log of deletes made). A holds work-a again, an original whose delete B's log records (A was restored): it
// is deleted on A, and never copied to B. B holds work-b again, an original B made while it was the source,
// whose copy on A (A's object since the cluster moved to A) A's log records deleted: it is deleted on B. work-kept,
// another original on B that A lacks with no delete logged, stays (absence is no delete).
func TestControllerDeletesWhatARestoredHubBringsBack(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	original := func(name, uid string, hasCopies string) *unstructured.Unstructured {
		return heldOriginal(name, "cm-"+name, uid, hasCopies)
	}
	mcB := managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA})
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), original("work-a", "uid-a", testHubB),
		deleteLogObject("ManifestWork/"+testCluster+"/work-b=uid-a-copy-of-b/uid-b\n"))
	b := newTestHub(t, testHubB, handler, kinds, mcB, original("work-b", "uid-b", testHubA), original("work-kept", "uid-kept", testHubA),
		deleteLogObject("ManifestWork/"+testCluster+"/work-a=uid-a/\n"))
	c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

	eventually(t, "work-a deleted again on hub-a", func() bool {
		w := a.get(t, mwKind, testCluster, "work-a")
		return w == nil || w.GetDeletionTimestamp() != nil
	})
	eventually(t, "work-b deleted on hub-b", func() bool { return b.get(t, mwKind, testCluster, "work-b") == nil })
	quiesce(t, c, a, b)
	if got := b.get(t, mwKind, testCluster, "work-a"); got != nil {
		t.Errorf("hub-b holds work-a: %v; its delete is logged, it must not be copied", specOf(got))
	}
	if got := b.get(t, mwKind, testCluster, "work-kept"); got == nil {
		t.Errorf("hub-b's work-kept deleted: no delete of it is logged anywhere")
	}
	events := strings.Join(recorder.messages(ReasonDeleteProven), "\n")
	for _, want := range []string{
		"ManifestWork/" + testCluster + "/work-a: the object on hub hub-a, the source, was deleted, as hub hub-b's log of deletes made",
		"ManifestWork/" + testCluster + "/work-b: the object on hub hub-b was deleted, as hub hub-a's log of deletes made",
	} {
		if !strings.Contains(events, want) {
			t.Errorf("DeleteProven events %q, want one containing %q", events, want)
		}
	}
	if strings.Contains(events, "work-kept") {
		t.Errorf("DeleteProven events %q name work-kept", events)
	}
}

// TestControllerKeepsAChangeOverALoggedDelete: hub A records the deletes of work-edited and work-same, released
// there while the replicator could not reach hub B, which the cluster had moved to: in its log of deletes made,
// or only in the tombstones on its ManagedCluster (the log keeps the last deletes of every cluster; a hub away
// during more of them is told by the tombstones). B, the source now, holds copies made from both; work-edited
// was changed there since it was copied. The unchanged copy goes (DeleteProven); the changed one is kept and
// copied to A (the change outranks the delete, as for a held delete on the hub the cluster moved from), reported
// once (DeleteNotWrittenBack).
func TestControllerKeepsAChangeOverALoggedDelete(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	copyOnB := func(name, originalUID string, edited bool) *unstructured.Unstructured {
		original := manifestWork(testCluster, name, "cm-"+name, nil)
		original.SetUID(types.UID(originalUID))
		cp := mirror.Desired(mwKind, original, nil, testHubA, nil)
		cp.SetUID(types.UID("uid-b-" + name))
		cp.SetFinalizers([]string{mirror.FinalizerDeleteCopies})
		if edited {
			// A user's change on hub B: the content no longer has the copy's content hash.
			manifests, _, _ := unstructured.NestedSlice(cp.Object, "spec", "workload", "manifests")
			manifests[0].(map[string]any)["metadata"] = map[string]any{"name": "edited-on-b", "namespace": "default"}
			if err := unstructured.SetNestedSlice(cp.Object, manifests, "spec", "workload", "manifests"); err != nil {
				t.Fatal(err)
			}
		}
		return cp
	}
	for _, record := range []string{"log", "tombstones"} {
		t.Run(record, func(t *testing.T) {
			handler := &proxyHandler{}
			mcA := managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubB})
			onA := []runtime.Object{mcA}
			if record == "log" {
				onA = append(onA, deleteLogObject("ManifestWork/"+testCluster+"/work-edited=uid-edited/\nManifestWork/"+testCluster+"/work-same=uid-same/\n"))
			} else {
				mcA.SetAnnotations(map[string]string{mirror.AnnotationDeletesSeen: "ManifestWork/work-edited=uid-edited/,ManifestWork/work-same=uid-same/"})
			}
			a := newTestHub(t, testHubA, handler, kinds, onA...)
			b := newTestHub(t, testHubB, handler, kinds, managedCluster(testCluster, nil),
				copyOnB("work-edited", "uid-edited", true), copyOnB("work-same", "uid-same", false))
			c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

			eventually(t, "work-same deleted again on hub-b", func() bool {
				w := b.get(t, mwKind, testCluster, "work-same")
				return w == nil || w.GetDeletionTimestamp() != nil
			})
			eventually(t, "work-edited copied to hub-a", func() bool {
				w := a.get(t, mwKind, testCluster, "work-edited")
				return w != nil && w.GetLabels()[mirror.LabelReplicatedFrom] == testHubB
			})
			quiesce(t, c, a, b)
			if w := b.get(t, mwKind, testCluster, "work-edited"); w == nil || w.GetDeletionTimestamp() != nil {
				t.Errorf("hub-b's changed work-edited deleted: %v", w)
			}
			if w := a.get(t, mwKind, testCluster, "work-same"); w != nil {
				t.Errorf("hub-a holds work-same again: %v", w.GetAnnotations())
			}
			notWritten := recorder.messages(ReasonDeleteNotWrittenBack)
			if len(notWritten) != 1 || !strings.HasPrefix(notWritten[0], "ManifestWork/"+testCluster+"/work-edited: deleted on hub hub-a") {
				t.Errorf("DeleteNotWrittenBack events %q, want one for work-edited", notWritten)
			}
			if proven := strings.Join(recorder.messages(ReasonDeleteProven), "\n"); !strings.Contains(proven, "work-same") || strings.Contains(proven, "work-edited") {
				t.Errorf("DeleteProven events %q, want work-same's only", proven)
			}
		})
	}
}

// TestControllerTakesTheNameMadeAgain: work-1 (uid-w1) was deleted on hub A while hub B, holding a copy of it, was
// down, and made again on A with the same content (uid-w2, as GitOps tools and kubectl replace --force do); the
// cluster then moved to B before B caught up. A's ManagedCluster records the delete of uid-w1. B's copy becomes
// the copy of the object made again (written back: mirror.DecideWriteBack rule 4) and is not deleted: OCM's work
// agent keeps the workload the user made again.
func TestControllerTakesTheNameMadeAgain(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}

	deleted := manifestWork(testCluster, "work-1", "cm-1", nil)
	deleted.SetUID("uid-w1")
	cp := mirror.WithSourceWrittenAt(mirror.Desired(mwKind, deleted, nil, testHubA, nil), time.Now().Add(-time.Hour))
	cp.SetUID("uid-b-work-1")
	cp.SetFinalizers([]string{mirror.FinalizerDeleteCopies})
	madeAgain := manifestWork(testCluster, "work-1", "cm-1", nil)
	madeAgain.SetUID("uid-w2")
	madeAgain.SetCreationTimestamp(metav1.NewTime(time.Now().Add(-time.Minute)))
	mcA, mcB := movedToB(nil)
	mcA.SetAnnotations(map[string]string{mirror.AnnotationDeletesSeen: "ManifestWork/work-1=uid-w1/"})
	a := newTestHub(t, testHubA, handler, kinds, mcA, madeAgain)
	b := newTestHub(t, testHubB, handler, kinds, mcB, cp)
	c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

	eventually(t, "hub-b's work-1 is the copy of the object made again on hub-a", func() bool {
		w := b.get(t, mwKind, testCluster, "work-1")
		return w != nil && w.GetAnnotations()[mirror.AnnotationSourceUID] == "uid-w2"
	})
	quiesce(t, c, a, b)
	for _, w := range b.writes(mwKind) {
		if strings.HasPrefix(w, "delete ") {
			t.Errorf("the replicator deleted on hub-b: %s", w)
		}
	}
	if w := b.get(t, mwKind, testCluster, "work-1"); w == nil || w.GetDeletionTimestamp() != nil || w.GetUID() != "uid-b-work-1" {
		t.Errorf("hub-b's work-1 = %v, want its object kept (uid-b-work-1)", w)
	}
	if proven := recorder.messages(ReasonDeleteProven); len(proven) != 0 {
		t.Errorf("DeleteProven events %q, want none", proven)
	}
}

// TestControllerLogsManyDeletesInFewWrites: twenty works deleted on hub A at once are logged on each hub in a few
// writes of its log, not one each, and every one of them is there.
func TestControllerLogsManyDeletesInFewWrites(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	const n = 20
	onA := []runtime.Object{managedCluster(testCluster, nil)}
	onB := []runtime.Object{managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA})}
	deleted := metav1.NewTime(time.Now().Add(-time.Minute))
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("work-%d", i)
		original := manifestWork(testCluster, name, "cm", nil)
		original.SetUID(types.UID("uid-" + name))
		original.SetAnnotations(map[string]string{mirror.AnnotationHasCopies: testHubB})
		original.SetFinalizers([]string{mirror.FinalizerDeleteCopies})
		original.SetDeletionTimestamp(&deleted)
		cp := mirror.Desired(mwKind, manifestWork(testCluster, name, "cm", nil), nil, testHubA, nil)
		cp.SetAnnotations(map[string]string{mirror.AnnotationSourceUID: "uid-" + name})
		cp.SetUID(types.UID("copy-" + name))
		onA, onB = append(onA, original), append(onB, cp)
	}
	a := newTestHub(t, testHubA, handler, kinds, onA...)
	b := newTestHub(t, testHubB, handler, kinds, onB...)
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

	eventually(t, "every hold on hub-a released", func() bool {
		for i := 0; i < n; i++ {
			if w := a.get(t, mwKind, testCluster, fmt.Sprintf("work-%d", i)); w != nil && slices.Contains(w.GetFinalizers(), mirror.FinalizerDeleteCopies) {
				return false
			}
		}
		return true
	})
	quiesce(t, c, a, b)
	cmKind := mirror.Kind{GVR: configMapGVR}
	for _, h := range []*testHub{a, b} {
		log := mirror.ParseDeletesMade(deleteLogOn(t, h))
		if len(log) != n {
			t.Errorf("%s's log of deletes made holds %d deletes, want %d: %v", h.hub.Name(), len(log), n, log)
		}
		if writes := h.writes(cmKind); len(writes) > n/4 {
			t.Errorf("%s's log written %d times for %d deletes made at once (%v), want at most %d", h.hub.Name(), len(writes), n, writes, n/4)
		}
	}
}

// TestControllerKeepsWhatWasMadeAgainAfterALoggedDelete: a user deleted work-1 (uid-old) and made it again
// (uid-new); then hub A, the source, was restored from a backup holding the old one, and the replicator is
// deleting it again there (marked deleted-again; OCM's work agent still cleans up). Hub B's copy of the new one is
// not deleted with it. On hub B, work-2 is a remnant rewritten in place (its own UID logged by A when a user
// deleted it, now made again from A's new work-2): it is deleted, not kept as a copy that a later failover would
// take for the remnant, and a new copy is written.
func TestControllerKeepsWhatWasMadeAgainAfterALoggedDelete(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	old := manifestWork(testCluster, "work-1", "cm-old", nil)
	old.SetUID("uid-old")
	old.SetAnnotations(map[string]string{mirror.AnnotationHasCopies: testHubB, mirror.AnnotationDeletedAgain: testHubB})
	old.SetFinalizers([]string{"cluster.open-cluster-management.io/manifest-work-cleanup"})
	deleted := metav1.NewTime(time.Now().Add(-time.Minute))
	old.SetDeletionTimestamp(&deleted)
	newer := manifestWork(testCluster, "work-1", "cm-new", nil)
	newer.SetUID("uid-new")
	newerCopy := mirror.Desired(mwKind, newer, nil, testHubA, nil)
	newerCopy.SetUID("uid-copy-of-new")
	work2 := manifestWork(testCluster, "work-2", "cm-2", nil)
	work2.SetUID("uid-work-2-again")
	remnant := mirror.Desired(mwKind, manifestWork(testCluster, "work-2", "cm-2-old", nil), nil, testHubA, nil)
	remnant.SetAnnotations(map[string]string{mirror.AnnotationSourceUID: "uid-work-2-first"})
	remnant.SetUID("uid-remnant")
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), old, work2,
		deleteLogObject("ManifestWork/"+testCluster+"/work-2=uid-remnant/uid-work-2-first\n"))
	b := newTestHub(t, testHubB, handler, kinds, managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA}), newerCopy, remnant,
		deleteLogObject("ManifestWork/"+testCluster+"/work-1=uid-old/\n"))
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

	eventually(t, "hub-b's work-2 written anew", func() bool {
		w := b.get(t, mwKind, testCluster, "work-2")
		return w != nil && w.GetUID() != "uid-remnant" && w.GetAnnotations()[mirror.AnnotationSourceUID] == "uid-work-2-again"
	})
	quiesce(t, c, a, b)
	if got := b.get(t, mwKind, testCluster, "work-1"); got == nil || got.GetUID() != "uid-copy-of-new" {
		t.Errorf("hub-b's copy of the new work-1: %v, want it kept (it was made from another object than the one deleted again)", got)
	}
}

// TestControllerReleasesMoreDeletesThanTheLogKeeps: more deletes at once than a hub's log keeps
// (mirror.MaxDeletesMade): the oldest are trimmed from the log by the later batches, and every hold is released
// all the same, none left Terminating. (Without deleteLog.written the holds are released too, a round later with
// one more write of the log: the write count is logged, not asserted, as the batches depend on timing.)
func TestControllerReleasesMoreDeletesThanTheLogKeeps(t *testing.T) {
	if testing.Short() {
		t.Skip("1,100 deletes")
	}
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	n := mirror.MaxDeletesMade + 100
	onA := []runtime.Object{managedCluster(testCluster, nil)}
	deleted := metav1.NewTime(time.Now().Add(-time.Minute))
	for i := 0; i < n; i++ {
		original := manifestWork(testCluster, fmt.Sprintf("work-%d", i), "cm", nil)
		original.SetUID(types.UID(fmt.Sprintf("uid-%d", i)))
		original.SetFinalizers([]string{mirror.FinalizerDeleteCopies})
		original.SetDeletionTimestamp(&deleted)
		onA = append(onA, original)
	}
	a := newTestHub(t, testHubA, handler, kinds, onA...)
	b := newTestHub(t, testHubB, handler, kinds, managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA}))
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

	held := func() int {
		count := 0
		for i := 0; i < n; i++ {
			if w := a.get(t, mwKind, testCluster, fmt.Sprintf("work-%d", i)); w != nil && slices.Contains(w.GetFinalizers(), mirror.FinalizerDeleteCopies) {
				count++
			}
		}
		return count
	}
	eventually(t, "every hold on hub-a released", func() bool { return held() == 0 })
	quiesce(t, c, a, b)
	if log := mirror.ParseDeletesMade(deleteLogOn(t, b)); len(log) != mirror.MaxDeletesMade {
		t.Errorf("hub-b's log holds %d deletes, want the newest %d", len(log), mirror.MaxDeletesMade)
	}
	t.Logf("hub-b's log written %d times", len(b.writes(mirror.Kind{GVR: configMapGVR})))
}

// TestControllerWritesTheLogOnWhatItLastWrote: three deletes made seconds apart, in three batches, on hubs whose
// fakes keep resourceVersions of the log as an apiserver does (an update on another one is a 409). The second
// batch is written onto the log as the replicator last wrote it, without reading it again — on hub B another
// writer changed the log meanwhile: the 409 reads it again and nothing of the other writer is lost. Before the
// third, hub A's log is deleted: the 404 reads it again and makes it anew.
func TestControllerWritesTheLogOnWhatItLastWrote(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	deleted := metav1.NewTime(time.Now().Add(-time.Minute))
	names := []string{"work-1", "work-2", "work-3"}
	onA := []runtime.Object{managedCluster(testCluster, nil)}
	onB := []runtime.Object{managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA})}
	for i, name := range names {
		uid := fmt.Sprintf("uid-w%d", i+1)
		original := heldOriginal(name, "cm", uid, testHubB)
		if i == 0 {
			original.SetDeletionTimestamp(&deleted)
		}
		cp := mirror.Desired(mwKind, manifestWork(testCluster, name, "cm", nil), nil, testHubA, nil)
		cp.SetAnnotations(map[string]string{mirror.AnnotationSourceUID: uid})
		cp.SetUID(types.UID("copy-" + name))
		onA, onB = append(onA, original), append(onB, cp)
	}
	a := newTestHub(t, testHubA, handler, kinds, onA...)
	b := newTestHub(t, testHubB, handler, kinds, onB...)
	for _, h := range []*testHub{a, b} {
		keepLogVersions(h)
	}
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

	// logOf reads h's log from the fake's tracker: not an action of the fake, so the test's polls are not counted
	// as the replicator's reads.
	logOf := func(h *testHub) string {
		obj, err := h.fake.Tracker().Get(configMapGVR, DefaultMarkerNamespace, DeleteLog)
		if err != nil {
			return ""
		}
		value, _, _ := unstructured.NestedString(obj.(*unstructured.Unstructured).Object, "data", mirror.DeleteLogKey)
		return value
	}
	reads := func(h *testHub) int {
		n := 0
		for _, action := range h.fake.Actions() {
			if g, ok := action.(clienttesting.GetAction); ok && action.GetResource() == configMapGVR && g.GetName() == DeleteLog {
				n++
			}
		}
		return n
	}
	deleteNext := func(name string) map[*testHub]int {
		t.Helper()
		eventually(t, "every earlier hold released", func() bool {
			for _, n := range names {
				if w := a.get(t, mwKind, testCluster, n); w != nil && w.GetDeletionTimestamp() != nil && slices.Contains(w.GetFinalizers(), mirror.FinalizerDeleteCopies) {
					return false
				}
			}
			return true
		})
		before := map[*testHub]int{a: reads(a), b: reads(b)}
		w := a.get(t, mwKind, testCluster, name)
		w.SetDeletionTimestamp(&deleted)
		if err := a.fake.Tracker().Update(mwKind.GVR, w, testCluster); err != nil {
			t.Fatal(err)
		}
		return before
	}

	// Another writer adds an entry to B's log after the replicator's first write.
	const foreign = "ManifestWork/other/work-9=uid-w9/\n"
	eventually(t, "the first delete logged on hub-b", func() bool { return strings.Contains(logOf(b), "/work-1=") })
	cur, err := b.fake.Tracker().Get(configMapGVR, DefaultMarkerNamespace, DeleteLog)
	if err != nil {
		t.Fatal(err)
	}
	other := cur.(*unstructured.Unstructured).DeepCopy()
	value, _, _ := unstructured.NestedString(other.Object, "data", mirror.DeleteLogKey)
	_ = unstructured.SetNestedField(other.Object, foreign+value, "data", mirror.DeleteLogKey)
	other.SetResourceVersion("foreign")
	if err := b.fake.Tracker().Update(configMapGVR, other, DefaultMarkerNamespace); err != nil {
		t.Fatal(err)
	}
	before := deleteNext("work-2")
	eventually(t, "the second delete logged on both hubs", func() bool {
		return strings.Contains(logOf(a), "/work-2=") && strings.Contains(logOf(b), "/work-2=")
	})
	if n := reads(a) - before[a]; n != 0 {
		t.Errorf("hub-a's log read %d times for the second batch, want 0: it is written on what the replicator last wrote", n)
	}
	if n := reads(b) - before[b]; n != 1 {
		t.Errorf("hub-b's log read %d times for the second batch, want 1: after the 409 another writer's change caused", n)
	}

	// Hub A's log deleted (its namespace lost, a person): the next batch makes it anew.
	if err := a.fake.Tracker().Delete(configMapGVR, DefaultMarkerNamespace, DeleteLog); err != nil {
		t.Fatal(err)
	}
	before = deleteNext("work-3")
	eventually(t, "the third delete logged on both hubs", func() bool {
		return strings.Contains(logOf(a), "/work-3=") && strings.Contains(logOf(b), "/work-3=")
	})
	quiesce(t, c, a, b)
	if n := reads(a) - before[a]; n != 1 {
		t.Errorf("hub-a's log read %d times for the third batch, want 1: after the 404", n)
	}
	for h, want := range map[*testHub][]string{a: {"work-3"}, b: {"work-9", "work-1", "work-2", "work-3"}} {
		log := logOf(h)
		for _, name := range want {
			if !strings.Contains(log, "/"+name+"=") {
				t.Errorf("%s's log of deletes made %q lacks %s", h.hub.Name(), log, name)
			}
		}
	}
}

// keepLogVersions makes h's fake keep resourceVersions of the log of deletes made as an apiserver does: a create
// or an update gives it a new one, and an update that names another one than the log's is a 409.
func keepLogVersions(h *testHub) {
	// The fake runs one reaction at a time (its lock): version needs no lock of its own.
	version := 0
	h.fake.PrependReactor("*", "configmaps", func(action clienttesting.Action) (bool, runtime.Object, error) {
		var obj *unstructured.Unstructured
		switch a := action.(type) {
		case clienttesting.CreateAction:
			obj, _ = a.GetObject().(*unstructured.Unstructured)
		case clienttesting.UpdateAction:
			obj, _ = a.GetObject().(*unstructured.Unstructured)
		}
		if obj == nil || obj.GetName() != DeleteLog {
			return false, nil, nil
		}
		if action.GetVerb() == "update" {
			cur, err := h.fake.Tracker().Get(configMapGVR, obj.GetNamespace(), DeleteLog)
			if err != nil {
				return true, nil, err
			}
			if rv := cur.(*unstructured.Unstructured).GetResourceVersion(); obj.GetResourceVersion() != rv {
				return true, nil, apierrors.NewConflict(configMapGVR.GroupResource(), DeleteLog,
					fmt.Errorf("the object has been modified: resourceVersion %q, the log is at %q", obj.GetResourceVersion(), rv))
			}
		}
		version++
		obj.SetResourceVersion(fmt.Sprint(version))
		return false, nil, nil
	})
}
