package replication

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// TestControllerRecordsATombstoneUntilTheDeleteReachedEveryHub: the cluster moved from hub A to hub B; a user
// deletes B's copy of work-1 before the replicator's hold reached it. Its delete cannot reach A's original yet (A
// refuses deletes): the replicator records the delete on B's ManagedCluster, where it happened
// (AnnotationDeletesSeen), so that a restart does not lose it; once A's original is deleted, the record goes.
func TestControllerRecordsATombstoneUntilTheDeleteReachedEveryHub(t *testing.T) {
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
	var refuse atomic.Bool
	refuse.Store(true)
	a.fake.PrependReactor("delete", "manifestworks", func(clienttesting.Action) (bool, runtime.Object, error) {
		if refuse.Load() {
			return true, nil, apierrors.NewInternalError(errors.New("injected: hub-a refuses deletes"))
		}
		return false, nil, nil
	})
	cp := mirror.Desired(mwKind, original, nil, testHubA, nil)
	cp.SetUID("uid-copy")
	b := newTestHub(t, testHubB, handler, kinds, mcB, cp)
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)
	quiesce(t, c, a, b)
	if got := b.get(t, mcKind, "", testCluster).GetAnnotations()[mirror.AnnotationDeletesSeen]; got != "" {
		t.Fatalf("hub-b's ManagedCluster records %q before any delete, want nothing", got)
	}

	if err := b.client.Resource(mwKind.GVR).Namespace(testCluster).Delete(ctx, "work-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "ManifestWork/work-1=uid-copy/uid-w1"
	eventually(t, "hub-b's ManagedCluster records the delete seen there", func() bool {
		return b.get(t, mcKind, "", testCluster).GetAnnotations()[mirror.AnnotationDeletesSeen] == want
	})
	if got := a.get(t, mwKind, testCluster, "work-1"); got == nil {
		t.Fatalf("hub-a's original work-1 gone although hub-a refuses deletes")
	}

	refuse.Store(false)
	eventually(t, "hub-a's original work-1 is deleted", func() bool { return a.get(t, mwKind, testCluster, "work-1") == nil })
	eventually(t, "the record goes once the delete reached every hub", func() bool {
		_, ok := b.get(t, mcKind, "", testCluster).GetAnnotations()[mirror.AnnotationDeletesSeen]
		return !ok
	})
	quiesce(t, c, a, b)
}

// TestControllerReleasesADeleteWhileAStandbyIsDown: hub B, holding a copy of work-1, is down (its probes fail)
// when a user deletes work-1 on hub A, the source. The delete does not wait for B: it is logged on A, the hold lets
// go and the original goes, and A's ManagedCluster records the delete (a tombstone: the log keeps only the last
// deletes of every cluster, the tombstone lasts until the delete reached B). Once B is back, its copy is deleted
// and the tombstone goes.
func TestControllerReleasesADeleteWhileAStandbyIsDown(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	ctx := context.Background()

	original := heldOriginal("work-1", "cm-1", "uid-w1", testHubB)
	a, b, c, down := deleteWhileHubBIsDown(t, handler, kinds, original)
	eventually(t, "hub-a's hold on work-1 released while hub-b is down", func() bool {
		w := a.get(t, mwKind, testCluster, "work-1")
		return w != nil && len(w.GetFinalizers()) == 0
	})
	if got := deleteLogOn(t, a); got != "ManifestWork/"+testCluster+"/work-1=uid-w1/\n" {
		t.Errorf("hub-a's log of deletes made %q, want the delete of work-1", got)
	}
	// Its last finalizer gone, the apiserver removes it.
	if err := a.client.Resource(mwKind.GVR).Namespace(testCluster).Delete(ctx, "work-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "ManifestWork/work-1=uid-w1/"
	eventually(t, "hub-a's ManagedCluster records the delete", func() bool {
		return a.get(t, mcKind, "", testCluster).GetAnnotations()[mirror.AnnotationDeletesSeen] == want
	})

	down.Store(false)
	eventually(t, "hub-b's copy deleted once it is back", func() bool { return b.get(t, mwKind, testCluster, "work-1") == nil })
	eventually(t, "the record goes once the delete reached hub-b", func() bool {
		_, ok := a.get(t, mcKind, "", testCluster).GetAnnotations()[mirror.AnnotationDeletesSeen]
		return !ok
	})
	quiesce(t, c, a, b)
}

// TestControllerRecordsTheTombstoneBeforeItReleases: as TestControllerReleasesADeleteWhileAStandbyIsDown, but
// work-1 also carries OCM's work-agent finalizer, so it stays Terminating after the replicator's hold lets go.
// The delete is recorded on A's ManagedCluster before the release, while work-1 is still there: a restart, a
// relist or an engine restart before its delete event cannot lose it. Once B is back, B's copy goes (the
// Terminating original carries the delete) and so does the record.
func TestControllerRecordsTheTombstoneBeforeItReleases(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}

	const workAgentFinalizer = "cluster.open-cluster-management.io/manifest-work-cleanup"
	original := heldOriginal("work-1", "cm-1", "uid-w1", testHubB)
	original.SetFinalizers(append(original.GetFinalizers(), workAgentFinalizer))
	a, b, c, down := deleteWhileHubBIsDown(t, handler, kinds, original)
	eventually(t, "hub-a's hold on work-1 released while hub-b is down", func() bool {
		w := a.get(t, mwKind, testCluster, "work-1")
		return w != nil && !slices.Contains(w.GetFinalizers(), mirror.FinalizerDeleteCopies)
	})
	want := "ManifestWork/work-1=uid-w1/"
	if got := a.get(t, mcKind, "", testCluster).GetAnnotations()[mirror.AnnotationDeletesSeen]; got != want {
		t.Errorf("hub-a's ManagedCluster records %q when the hold let go, want %q: the delete must be recorded before the release", got, want)
	}
	// The order of the writes: the ManagedCluster's record, then the release.
	recorded, released := -1, -1
	for i, action := range a.fake.Actions() {
		if action.GetVerb() != "patch" {
			continue
		}
		switch action.GetResource() {
		case mcKind.GVR:
			if recorded < 0 && strings.Contains(string(action.(clienttesting.PatchAction).GetPatch()), mirror.AnnotationDeletesSeen) {
				recorded = i
			}
		case mwKind.GVR:
			if released < 0 && strings.Contains(string(action.(clienttesting.PatchAction).GetPatch()), workAgentFinalizer) {
				released = i
			}
		}
	}
	if recorded < 0 || released < 0 || recorded > released {
		t.Errorf("hub-a's writes: the tombstone at %d, the release at %d; want the tombstone first", recorded, released)
	}

	down.Store(false)
	eventually(t, "hub-b's copy deleted once it is back", func() bool { return b.get(t, mwKind, testCluster, "work-1") == nil })
	eventually(t, "the record goes once hub-b is back", func() bool {
		_, ok := a.get(t, mcKind, "", testCluster).GetAnnotations()[mirror.AnnotationDeletesSeen]
		return !ok
	})
	quiesce(t, c, a, b)
}

// deleteWhileHubBIsDown starts the controller on hub A, the source holding original (a held ManifestWork
// work-1), and hub B holding its copy (uid-copy); once it is quiet, B goes down (its probes fail while down is
// set) and a user deletes work-1 on A — as the apiserver makes the delete of an object with finalizers (the fake
// would remove it at once): a deletionTimestamp.
func deleteWhileHubBIsDown(t *testing.T, handler *proxyHandler, kinds []mirror.Kind, original *unstructured.Unstructured) (a, b *testHub, c *Controller, down *atomic.Bool) {
	t.Helper()
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	a = newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), original)
	cp := mirror.Desired(mwKind, original, nil, testHubA, nil)
	cp.SetUID("uid-copy")
	b = newTestHub(t, testHubB, handler, kinds, managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA}), cp)
	down = &atomic.Bool{}
	b.fake.PrependReactor("list", "managedclusters", func(clienttesting.Action) (bool, runtime.Object, error) {
		if down.Load() {
			return true, nil, apierrors.NewServiceUnavailable("injected: hub-b is down")
		}
		return false, nil, nil
	})
	c, _ = startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)
	quiesce(t, c, a, b)

	down.Store(true)
	eventually(t, "hub-b not ready", func() bool { return !b.hub.Ready() })
	deleting := a.get(t, mwKind, testCluster, "work-1")
	now := metav1.Now()
	deleting.SetDeletionTimestamp(&now)
	if _, err := a.client.Resource(mwKind.GVR).Namespace(testCluster).Update(context.Background(), deleting, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return a, b, c, down
}

// TestControllerHonoursATombstoneAfterARestart is TestControllerRewritesCopiesAStandbyLost with the difference a
// restart must not erase: hub B's ManagedCluster records that B's copy of work-1 was deleted there (a user's delete
// the replicator saw before it was restarted). A's original is then the object of a seen delete, not one B lost:
// it is deleted, and nothing is written back to B.
func TestControllerHonoursATombstoneAfterARestart(t *testing.T) {
	mwKind, a, b, c, recorder := startTombstonedMove(t, 0)

	eventually(t, "hub-a's original work-1 is being deleted", func() bool {
		w := a.get(t, mwKind, testCluster, "work-1")
		return w == nil || w.GetDeletionTimestamp() != nil
	})
	quiesce(t, c, a, b)
	if got := b.get(t, mwKind, testCluster, "work-1"); got != nil {
		t.Errorf("hub-b's work-1 = %v, want none: its delete was recorded there", got.GetAnnotations())
	}
	if msgs := recorder.messages(ReasonWrittenBack); len(msgs) != 0 {
		t.Errorf("WrittenBack events = %q, want none", msgs)
	}
	for _, w := range b.writes(mwKind) {
		if strings.HasPrefix(w, "create ") {
			t.Errorf("the replicator created on hub-b: %s", w)
		}
	}
}

// TestControllerWritesNothingBackThatItDeleted is TestControllerHonoursATombstoneAfterARestart on a hub A whose
// watch delivers deletes late: the replicator deletes A's original (the delete B's tombstone records), and with it
// the tombstone, which has reached every hub. A's cache shows the original until the delete event comes; what
// the replicator deleted itself is no write made on the hub the cluster moved from, and is not written back to B.
func TestControllerWritesNothingBackThatItDeleted(t *testing.T) {
	mwKind, a, b, c, recorder := startTombstonedMove(t, 500*time.Millisecond)
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)

	eventually(t, "the tombstone goes once the delete reached every hub", func() bool {
		_, ok := b.get(t, mcKind, "", testCluster).GetAnnotations()[mirror.AnnotationDeletesSeen]
		return !ok
	})
	quiesce(t, c, a, b)
	if got := a.get(t, mwKind, testCluster, "work-1"); got != nil {
		t.Errorf("hub-a's original work-1 is still there (finalizers %v)", got.GetFinalizers())
	}
	if got := b.get(t, mwKind, testCluster, "work-1"); got != nil {
		t.Errorf("hub-b's work-1 = %v, want none: the replicator deleted hub-a's original itself", got.GetAnnotations())
	}
	if msgs := recorder.messages(ReasonWrittenBack); len(msgs) != 0 {
		t.Errorf("WrittenBack events = %q, want none", msgs)
	}
}

// TestControllerRemovesATombstoneWhoseObjectIsGoneEverywhere: hub B's ManagedCluster carries a tombstone of work-1,
// whose last copies were deleted while the replicator was stopped: no hub holds work-1, so no watch event syncs it.
// The ManagedCluster's sync queues it, and the tombstone goes.
func TestControllerRemovesATombstoneWhoseObjectIsGoneEverywhere(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}

	mcA, mcB := movedToB(map[string]string{mirror.AnnotationDeletesSeen: "ManifestWork/work-1=uid-copy/uid-w1,Placement/p-1=uid-p/uid-p0"})
	a := newTestHub(t, testHubA, handler, kinds, mcA)
	b := newTestHub(t, testHubB, handler, kinds, mcB)
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)
	eventually(t, "the tombstone of work-1, gone from every hub, is removed", func() bool {
		return b.get(t, mcKind, "", testCluster).GetAnnotations()[mirror.AnnotationDeletesSeen] == "Placement/p-1=uid-p/uid-p0"
	})
	quiesce(t, c, a, b)
	if got := b.get(t, mcKind, "", testCluster).GetAnnotations()[mirror.AnnotationDeletesSeen]; got != "Placement/p-1=uid-p/uid-p0" {
		t.Errorf("hub-b's tombstones %q, want only the one of a kind not mirrored here", got)
	}
}

// startTombstonedMove starts a controller over hubs A and B: the cluster moved from A to B, A holds the original of
// work-1 (held, has-copies B), and B's ManagedCluster records the delete of its copy there (a tombstone written
// before a restart). lateDeletes delays the delete events of A's watches (0: none).
func startTombstonedMove(t *testing.T, lateDeletes time.Duration) (mirror.Kind, *testHub, *testHub, *Controller, *lockedRecorder) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	original := heldOriginal("work-1", "cm-1", "uid-w1", testHubB)
	original.SetGeneration(1)
	mcA, mcB := movedToB(map[string]string{mirror.AnnotationDeletesSeen: "ManifestWork/work-1=uid-copy/uid-w1"})
	a := newTestHub(t, testHubA, handler, kinds, mcA, original)
	a.client.lateDeletes = lateDeletes
	b := newTestHub(t, testHubB, handler, kinds, mcB)
	c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)
	return mwKind, a, b, c, recorder
}
