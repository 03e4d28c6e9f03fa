package replication

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// TestControllerLogsADeleteOnEveryHubBeforeReleasingIt: a user's delete of work-1 on hub A, the source, held by
// the replicator's finalizer, reaches B's copy; before A's hold is released, the delete is in the log of deletes
// made on both hubs' ManagedClusters.
func TestControllerLogsADeleteOnEveryHubBeforeReleasingIt(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	original := manifestWork(testCluster, "work-1", "cm-1", nil)
	original.SetUID("uid-w1")
	original.SetAnnotations(map[string]string{mirror.AnnotationHasCopies: testHubB})
	original.SetFinalizers([]string{mirror.FinalizerDeleteCopies})
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
		if got := h.get(t, mcKind, "", testCluster).GetAnnotations()[mirror.AnnotationDeletesMade]; got != "ManifestWork/work-1=uid-w1/" {
			t.Errorf("%s's ManagedCluster logs deletes made %q, want ManifestWork/work-1=uid-w1/", h.hub.Name(), got)
		}
	}
}

// TestControllerDeletesWhatARestoredHubBringsBack: hubs restored from backups taken before deletes that hub A, the
// source, and hub B logged. A holds work-a again, an original whose delete B's log records (A was restored): it
// is deleted on A, and never copied to B. B holds work-b again, an original B made while it was the source,
// whose copy on A (A's object since the cluster moved to A) A's log records deleted: it is deleted on B. work-kept,
// another original on B that A lacks with no delete logged, stays (absence is no delete).
func TestControllerDeletesWhatARestoredHubBringsBack(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	original := func(name, uid string, hasCopies string) *unstructured.Unstructured {
		w := manifestWork(testCluster, name, "cm-"+name, nil)
		w.SetUID(types.UID(uid))
		w.SetAnnotations(map[string]string{mirror.AnnotationHasCopies: hasCopies})
		w.SetFinalizers([]string{mirror.FinalizerDeleteCopies})
		return w
	}
	mcA := managedCluster(testCluster, nil)
	mcA.SetAnnotations(map[string]string{mirror.AnnotationDeletesMade: "ManifestWork/work-b=uid-a-copy-of-b/uid-b"})
	mcB := managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA})
	mcB.SetAnnotations(map[string]string{mirror.AnnotationDeletesMade: "ManifestWork/work-a=uid-a/"})
	a := newTestHub(t, testHubA, handler, kinds, mcA, original("work-a", "uid-a", testHubB))
	b := newTestHub(t, testHubB, handler, kinds, mcB, original("work-b", "uid-b", testHubA), original("work-kept", "uid-kept", testHubA))
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
		"ManifestWork/" + testCluster + "/work-a: the object on hub hub-a, the source, was deleted, as hub hub-b's ManagedCluster",
		"ManifestWork/" + testCluster + "/work-b: the object on hub hub-b was deleted, as hub hub-a's ManagedCluster",
	} {
		if !strings.Contains(events, want) {
			t.Errorf("DeleteProven events %q, want one containing %q", events, want)
		}
	}
	if strings.Contains(events, "work-kept") {
		t.Errorf("DeleteProven events %q name work-kept", events)
	}
}
