package replication

import (
	"maps"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	workv1 "open-cluster-management.io/api/work/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// TestControllerReplacesACopyLeftTerminatingOnAHubTheClusterLeft: after a round trip A → B → A, hub B's copy of
// work-1 still carries OCM's work-agent cleanup finalizer, which only a work agent connected to B removes. The
// user deleted work-1 on hub A and made it again (another UID). The copy on B, being deleted, must go without
// that finalizer (B's delete finishes once B's own controllers let go, nothing stays Terminating for want of a work
// agent), B must not count as holding a copy of the new work-1 meanwhile (not in has-copies, reported behind), and
// the new work-1 is then copied to B like any new object.
func TestControllerReplacesACopyLeftTerminatingOnAHubTheClusterLeft(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	remade := manifestWork(testCluster, "work-1", "cm-1-v2", nil)
	remade.SetUID("uid-new")
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), remade)

	mcCopy := managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA})
	left := manifestWork(testCluster, "work-1", "cm-1", map[string]any{mirror.LabelReplicatedFrom: testHubA})
	left.SetUID("uid-copy")
	left.SetAnnotations(map[string]string{mirror.AnnotationSourceUID: "uid-old"})
	// Another finalizer of B's, unknown to the replicator, holds the copy a while longer.
	const keep = "example.com/keep"
	left.SetFinalizers([]string{workv1.ManifestWorkFinalizer, keep})
	deleted := metav1.NewTime(time.Now().Add(-time.Minute))
	left.SetDeletionTimestamp(&deleted)
	b := newTestHub(t, testHubB, handler, kinds, mcCopy, left)
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

	eventually(t, "hub-b's old copy lost the work agent's finalizer", func() bool {
		cp := b.get(t, mwKind, testCluster, "work-1")
		return cp != nil && slices.Equal(cp.GetFinalizers(), []string{keep})
	})
	eventually(t, "hub-a's ManagedCluster names hub-b behind while its old copy goes", func() bool {
		mc, _ := a.hub.Peek(mcKind.Name, "", testCluster)
		return mc != nil && mc.GetAnnotations()[mirror.AnnotationHubsBehind] == testHubB
	})
	quiesce(t, c, a, b)
	if got := a.get(t, mwKind, testCluster, "work-1").GetAnnotations()[mirror.AnnotationHasCopies]; got != "" {
		t.Errorf("hub-a's new work-1 %s = %q while hub-b's old copy is still going, want none", mirror.AnnotationHasCopies, got)
	}
	if c.Snapshot().CaughtUp[testHubB] {
		t.Errorf("hub-b caught up while its copy of work-1 is still going")
	}

	// B's other finalizer goes: the apiserver removes the old copy, and the new work-1 is copied.
	if err := b.fake.Tracker().Delete(mwKind.GVR, testCluster, "work-1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hub-b holds a copy of the new work-1", func() bool {
		cp, _ := b.hub.Peek(mwKind.Name, testCluster, "work-1")
		return cp != nil && cp.GetDeletionTimestamp() == nil && cp.GetAnnotations()[mirror.AnnotationSourceUID] == "uid-new"
	})
	quiesce(t, c, a, b)
	if got := b.get(t, mwKind, testCluster, "work-1"); got == nil || got.GetDeletionTimestamp() != nil || got.GetUID() == "uid-copy" {
		t.Errorf("hub-b's work-1: %v, want a new copy", got)
	}
	if got := a.get(t, mwKind, testCluster, "work-1").GetAnnotations()[mirror.AnnotationHasCopies]; got != testHubB {
		t.Errorf("hub-a's new work-1 %s = %q, want %q once hub-b holds its copy", mirror.AnnotationHasCopies, got, testHubB)
	}
	if mc := a.get(t, mcKind, "", testCluster); mc.GetAnnotations()[mirror.AnnotationHubsInStep] != testHubB || !c.Snapshot().CaughtUp[testHubB] {
		t.Errorf("hub-b after its new copy: in step %q, caught up %v; want in step and caught up",
			mc.GetAnnotations()[mirror.AnnotationHubsInStep], c.Snapshot().CaughtUp[testHubB])
	}
	// The old copy lost its finalizer by a patch; no delete was sent for an object being deleted.
	var patches, deletes int
	for _, w := range b.writes(mwKind) {
		switch w[:6] {
		case "patch ":
			patches++
		case "delete":
			deletes++
		}
	}
	if patches == 0 || deletes != 0 {
		t.Errorf("writes of work-1 on hub-b: %v, want the finalizer's removal, no delete, then the create", b.writes(mwKind))
	}
}

// TestControllerReleasesADeleteHeldOnAHubTheClusterLeft: the cluster moved from hub A to hub B while a user
// deleted work-1 on A, where OCM's work agent had put its cleanup finalizer and the replicator its hold. The
// delete is written back to B (B's copy goes, and B's work agent cleans up the spoke); A's original then goes
// without both finalizers: the work agent, connected to B now, would never remove its own there, and A's object
// would stay Terminating for good.
func TestControllerReleasesADeleteHeldOnAHubTheClusterLeft(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}

	original := manifestWork(testCluster, "work-1", "cm-1", nil)
	original.SetUID("uid-w1")
	original.SetAnnotations(map[string]string{mirror.AnnotationHasCopies: testHubB})
	original.SetFinalizers([]string{mirror.FinalizerDeleteCopies, workv1.ManifestWorkFinalizer})
	deleted := metav1.NewTime(time.Now().Add(-time.Minute))
	original.SetDeletionTimestamp(&deleted)
	mcA, mcB := movedToB(nil)
	a := newTestHub(t, testHubA, handler, kinds, mcA, original)
	cp := mirror.Desired(mwKind, manifestWork(testCluster, "work-1", "cm-1", nil), nil, testHubA, nil)
	annotations := cp.GetAnnotations()
	annotations[mirror.AnnotationSourceUID] = "uid-w1"
	cp.SetAnnotations(annotations)
	cp.SetUID("uid-copy")
	b := newTestHub(t, testHubB, handler, kinds, mcB, cp)
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

	eventually(t, "hub-b's copy of work-1 is deleted (written back)", func() bool { return b.get(t, mwKind, testCluster, "work-1") == nil })
	eventually(t, "hub-a's work-1 lost the replicator's and the work agent's finalizers", func() bool {
		w := a.get(t, mwKind, testCluster, "work-1")
		return w != nil && len(w.GetFinalizers()) == 0
	})
	quiesce(t, c, a, b)
}

// TestControllerKeepsTheWorkAgentsFinalizerWhileItsAgentRenews: as in
// TestControllerReleasesADeleteHeldOnAHubTheClusterLeft, but an agent was seen renewing the cluster's lease on
// hub A a moment ago (the replicator's source lags behind a move back to A): OCM's work agent may be connected
// to A and cleaning up the spoke, so only the replicator's hold goes, and the work agent's finalizer stays until
// that renewal is two lease durations old.
func TestControllerKeepsTheWorkAgentsFinalizerWhileItsAgentRenews(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}

	mcA, mcB := movedToB(nil)
	a := newTestHub(t, testHubA, handler, kinds, mcA)
	b := newTestHub(t, testHubB, handler, kinds, mcB)
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)
	quiesce(t, c, a, b)
	c.directions.mu.Lock()
	c.directions.renewSeen[testHubA][testCluster] = time.Now()
	c.directions.mu.Unlock()

	original := manifestWork(testCluster, "work-1", "cm-1", nil)
	original.SetUID("uid-w1")
	original.SetFinalizers([]string{mirror.FinalizerDeleteCopies, workv1.ManifestWorkFinalizer})
	deleted := metav1.NewTime(time.Now().Add(-time.Minute))
	original.SetDeletionTimestamp(&deleted)
	if err := a.fake.Tracker().Add(original); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hub-a's work-1 lost the replicator's hold", func() bool {
		w := a.get(t, mwKind, testCluster, "work-1")
		return w != nil && !slices.Contains(w.GetFinalizers(), mirror.FinalizerDeleteCopies)
	})
	quiesce(t, c, a, b)
	if w := a.get(t, mwKind, testCluster, "work-1"); !slices.Equal(w.GetFinalizers(), []string{workv1.ManifestWorkFinalizer}) {
		t.Errorf("hub-a's work-1 finalizers %v while an agent renews there, want the work agent's alone", w.GetFinalizers())
	}

	// The renewal is old now: the work agent left A, and its finalizer goes at the next sync.
	c.directions.mu.Lock()
	c.directions.renewSeen[testHubA][testCluster] = time.Now().Add(-time.Hour)
	c.directions.mu.Unlock()
	c.queue.Add(Key{Kind: mwKind.Name, Namespace: testCluster, Name: "work-1"})
	eventually(t, "hub-a's work-1 lost the work agent's finalizer", func() bool {
		w := a.get(t, mwKind, testCluster, "work-1")
		return w != nil && len(w.GetFinalizers()) == 0
	})

}

// movedToB returns the ManagedClusters of testCluster after a move from hub A to hub B: A's, a copy of B's, and B's,
// an original that records the move (mirror.AnnotationMovedFrom) with the annotations of extra.
func movedToB(extra map[string]string) (onA, onB *unstructured.Unstructured) {
	onB = managedCluster(testCluster, nil)
	annotations := map[string]string{mirror.AnnotationMovedFrom: testHubA}
	maps.Copy(annotations, extra)
	onB.SetAnnotations(annotations)
	return managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubB}), onB
}
