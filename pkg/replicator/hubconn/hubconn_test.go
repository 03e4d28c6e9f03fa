package hubconn

import (
	"context"
	"errors"
	clocktesting "k8s.io/utils/clock/testing"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// nopHandler ignores every event.
type nopHandler struct{}

func (nopHandler) OnObject(string, mirror.Kind, string, string) {}
func (nopHandler) OnLease(string, string, LeaseEvent)           {}
func (nopHandler) OnState(string, State, error)                 {}

// workObject returns ManifestWork c1/name with a spec holding value; a copy of hub-a when isCopy.
func workObject(name, value string, isCopy bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
		"metadata": map[string]any{"name": name, "namespace": "c1"},
		"spec":     map[string]any{"workload": map[string]any{"manifests": []any{map[string]any{"value": value}}}},
	}}
	if isCopy {
		u.SetLabels(map[string]string{mirror.LabelReplicatedFrom: "hub-a"})
	}
	return u
}

// startHub runs a Hub over a fake dynamic client holding objects, until the test ends, and waits until it is ready.
func startHub(t *testing.T, objects ...runtime.Object) (*Hub, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	return startHubFenced(t, false, objects...)
}

// startHubFenced is startHub with Options.Fenced.
func startHubFenced(t *testing.T, fenced bool, objects ...runtime.Object) (*Hub, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	mc, _ := mirror.KindByName(failoverv1alpha1.KindManagedCluster)
	fake := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		mirror.LeaseGVR: "LeaseList", mc.GVR: "ManagedClusterList", manifestWork.GVR: "ManifestWorkList",
	}, objects...)
	h, err := New(Options{Name: "hub-b", Client: fake, Kinds: []mirror.Kind{manifestWork}, ProbeInterval: 20 * time.Millisecond,
		Handler: nopHandler{}, Clock: clock.RealClock{}, Fenced: fenced})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); h.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	waitFor(t, "hub ready", func() bool { return h.Ready() })
	return h, fake
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// gets counts the fake's GETs of ManifestWorks.
func gets(fake *dynamicfake.FakeDynamicClient) int {
	n := 0
	for _, a := range fake.Actions() {
		if a.GetVerb() == "get" && a.GetResource() == manifestWork.GVR {
			n++
		}
	}
	return n
}

// TestCopiesCachedWithoutContent checks that a copy is cached without its mirrored fields and with their
// hash, that an original is cached whole, and that Get reads a copy whole from the hub once, after which the
// informer caches it whole.
func TestCopiesCachedWithoutContent(t *testing.T) {
	h, fake := startHub(t, workObject("copy", "v1", true), workObject("original", "v1", false))
	ctx := context.Background()

	peeked, hash := h.Peek(failoverv1alpha1.KindManifestWork, "c1", "copy")
	if peeked == nil {
		t.Fatal("copy not cached")
	}
	if _, has := peeked.Object["spec"]; has {
		t.Errorf("copy cached with its spec, want it left out")
	}
	if want := mirror.ContentOf(manifestWork, workObject("copy", "v1", true)).Hash(); hash != want {
		t.Errorf("content hash of the cached copy = %q, want %q", hash, want)
	}
	if peeked.GetLabels()[mirror.LabelReplicatedFrom] != "hub-a" {
		t.Errorf("copy cached without its labels: %v", peeked.GetLabels())
	}
	if orig, hash := h.Peek(failoverv1alpha1.KindManifestWork, "c1", "original"); orig == nil || hash != "" || orig.Object["spec"] == nil {
		t.Errorf("original cached as %v (hash %q), want whole", orig, hash)
	}

	before := gets(fake)
	whole, err := h.Get(ctx, failoverv1alpha1.KindManifestWork, "c1", "copy")
	if err != nil {
		t.Fatal(err)
	}
	if whole == nil || mirror.ContentOf(manifestWork, whole).Hash() != hash {
		t.Fatalf("Get of the copy = %v, want it whole", whole)
	}
	if n := gets(fake) - before; n != 1 {
		t.Errorf("Get of a copy cached without content read the hub %d times, want 1", n)
	}
	if _, err := h.Get(ctx, failoverv1alpha1.KindManifestWork, "c1", "copy"); err != nil {
		t.Fatal(err)
	}
	if n := gets(fake) - before; n != 1 {
		t.Errorf("a second Get at the same resourceVersion read the hub again (%d reads), want the first read reused", n)
	}
	if _, err := h.Get(ctx, failoverv1alpha1.KindManifestWork, "c1", "original"); err != nil || gets(fake)-before != 1 {
		t.Errorf("Get of an original read the hub (err %v), want it from the cache", err)
	}

	// The copy's next event is cached whole: it is a source now.
	changed := workObject("copy", "v2", true)
	changed.SetResourceVersion("2")
	if _, err := fake.Resource(manifestWork.GVR).Namespace("c1").Update(ctx, changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the changed copy cached whole", func() bool {
		obj, hash := h.Peek(failoverv1alpha1.KindManifestWork, "c1", "copy")
		return obj != nil && hash == "" && obj.Object["spec"] != nil
	})
	got, err := h.Get(ctx, failoverv1alpha1.KindManifestWork, "c1", "copy")
	if err != nil || got == nil || mirror.ContentOf(manifestWork, got).Equal(mirror.ContentOf(manifestWork, workObject("copy", "v1", true))) {
		t.Errorf("Get after the change = %v (err %v), want the new content", got, err)
	}
	if n := gets(fake) - before; n != 1 {
		t.Errorf("Get of a copy cached whole read the hub (%d reads), want 1 in all", n)
	}

	// A copy deleted and made again is cached without content again.
	if err := fake.Resource(manifestWork.GVR).Namespace("c1").Delete(ctx, "copy", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the copy's delete seen", func() bool { obj, _ := h.Peek(failoverv1alpha1.KindManifestWork, "c1", "copy"); return obj == nil })
	if _, err := fake.Resource(manifestWork.GVR).Namespace("c1").Create(ctx, workObject("copy", "v3", true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new copy cached without content", func() bool {
		obj, hash := h.Peek(failoverv1alpha1.KindManifestWork, "c1", "copy")
		return obj != nil && hash != ""
	})
}

// TestClusterFacts checks the ManagedCluster facts kept beside the cached JSON.
func TestClusterFacts(t *testing.T) {
	mc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
		"metadata": map[string]any{"name": "c1", "labels": map[string]any{"env": "prod", mirror.LabelReplicatedFrom: "hub-a"},
			"annotations": map[string]any{mirror.AnnotationClusterHub: "hub-a", mirror.AnnotationClusterHubSince: "2026-01-02T03:04:05Z"}},
		"spec": map[string]any{"hubAcceptsClient": true, "leaseDurationSeconds": int64(20)},
	}}
	h, _ := startHub(t, mc)
	got, ok := h.Cluster("c1")
	if !ok {
		t.Fatal("Cluster(c1) not found")
	}
	want := Cluster{Labels: map[string]string{"env": "prod", mirror.LabelReplicatedFrom: "hub-a"}, IsCopy: true,
		LeaseDuration: 20 * time.Second, RecordedHub: "hub-a", RecordedSince: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if got.IsCopy != want.IsCopy || got.LeaseDuration != want.LeaseDuration || got.RecordedHub != want.RecordedHub ||
		!got.RecordedSince.Equal(want.RecordedSince) || got.Labels["env"] != "prod" || len(got.Labels) != 2 {
		t.Errorf("Cluster(c1) = %+v, want %+v", got, want)
	}
	if _, ok := h.Cluster("c2"); ok {
		t.Errorf("Cluster(c2) found, want absent")
	}
	// The ManagedCluster itself is cached whole even though it is a copy (its spec is the direction's input).
	if obj, hash := h.Peek(failoverv1alpha1.KindManagedCluster, "", "c1"); obj == nil || hash != "" || obj.Object["spec"] == nil {
		t.Errorf("ManagedCluster copy cached as %v (hash %q), want whole", obj, hash)
	}
}

// TestGetRefusesAnotherVersion checks that Get never returns a version of a copy other than the cached one, nor
// reports a copy the hub does not return as absent: both are ErrCacheBehind, to retry once the informer caught up.
func TestGetRefusesAnotherVersion(t *testing.T) {
	h, fake := startHub(t, workObject("copy", "v1", true))
	ctx := context.Background()
	newer := workObject("copy", "v2", true)
	newer.SetResourceVersion("999")
	// The hub's probe uses the fake meanwhile: its reaction chain changes under the fake's lock.
	prepend := func(reaction clienttesting.ReactionFunc) {
		fake.Lock()
		defer fake.Unlock()
		fake.PrependReactor("get", "manifestworks", reaction)
	}
	prepend(func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, newer, nil
	})
	if obj, err := h.Get(ctx, failoverv1alpha1.KindManifestWork, "c1", "copy"); !errors.Is(err, ErrCacheBehind) || obj != nil {
		t.Errorf("Get when the hub holds another version = %v, %v; want nil, ErrCacheBehind", obj, err)
	}
	prepend(func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(manifestWork.GVR.GroupResource(), "copy")
	})
	if obj, err := h.Get(ctx, failoverv1alpha1.KindManifestWork, "c1", "copy"); !errors.Is(err, ErrCacheBehind) || obj != nil {
		t.Errorf("Get when the hub answers not found = %v, %v; want nil, ErrCacheBehind (not an absent object)", obj, err)
	}
}

// TestDeletedOnlyWhenTheWatchDeliversIt checks that a delete the watch delivers is remembered with the object's
// UID and source UID, that the object made again under the name ends it, that the replicator's own delete
// (ExpectDelete) is not one, and that a delete the informer only inferred from a new list (cache.DeletedFinalStateUnknown: the object is missing, as
// on a hub restored from a backup) is no delete.
func TestDeletedOnlyWhenTheWatchDeliversIt(t *testing.T) {
	gone := workObject("gone", "v1", true)
	gone.SetUID("uid-gone")
	gone.SetAnnotations(map[string]string{mirror.AnnotationSourceUID: "uid-original"})
	h, fake := startHub(t, gone, workObject("lost", "v1", false))
	ctx := context.Background()
	works := fake.Resource(manifestWork.GVR).Namespace("c1")

	if d := h.Deleted(failoverv1alpha1.KindManifestWork, "c1", "gone"); d != nil {
		t.Fatalf("Deleted before any delete = %+v, want nil", d)
	}
	if err := works.Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delete of gone seen", func() bool { return h.Deleted(failoverv1alpha1.KindManifestWork, "c1", "gone") != nil })
	if d := h.Deleted(failoverv1alpha1.KindManifestWork, "c1", "gone"); *d != (mirror.Deleted{UID: "uid-gone", SourceUID: "uid-original"}) {
		t.Errorf("Deleted = %+v, want the object's uid and source uid", *d)
	}
	if _, err := works.Create(ctx, workObject("gone", "v2", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "gone made again ends its delete", func() bool { return h.Deleted(failoverv1alpha1.KindManifestWork, "c1", "gone") == nil })

	// The replicator's own delete is no user's delete on this hub.
	made, err := works.Create(ctx, workObject("own", "v1", true), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "own cached", func() bool { o, _ := h.Peek(failoverv1alpha1.KindManifestWork, "c1", "own"); return o != nil })
	h.ExpectDelete(failoverv1alpha1.KindManifestWork, "c1", "own", made.GetUID())
	if err := works.Delete(ctx, "own", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A user's delete after it: once its event is heard, so was the one before (one informer, in order).
	if _, err := works.Create(ctx, workObject("barrier", "v1", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "barrier cached", func() bool { o, _ := h.Peek(failoverv1alpha1.KindManifestWork, "c1", "barrier"); return o != nil })
	if err := works.Delete(ctx, "barrier", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delete of barrier seen", func() bool { return h.Deleted(failoverv1alpha1.KindManifestWork, "c1", "barrier") != nil })
	if d := h.Deleted(failoverv1alpha1.KindManifestWork, "c1", "own"); d != nil {
		t.Errorf("Deleted after the replicator's own delete = %+v, want nil", d)
	}
	// After its event too, the replicator's delete is known as sent, of that UID only.
	if !h.DeleteSent(failoverv1alpha1.KindManifestWork, "c1", "own", made.GetUID()) {
		t.Errorf("DeleteSent(own, %s) = false after its event, want true", made.GetUID())
	}
	if h.DeleteSent(failoverv1alpha1.KindManifestWork, "c1", "own", "uid-other") || h.DeleteSent(failoverv1alpha1.KindManifestWork, "c1", "barrier", "") {
		t.Errorf("DeleteSent true for an object the replicator did not delete")
	}

	// The informer found "lost" missing from a new list.
	lost, _ := h.Peek(failoverv1alpha1.KindManifestWork, "c1", "lost")
	h.onObject(manifestWork, cache.DeletedFinalStateUnknown{Key: "c1/lost", Obj: lost}, true)
	if d := h.Deleted(failoverv1alpha1.KindManifestWork, "c1", "lost"); d != nil {
		t.Errorf("Deleted for an object missing from a list = %+v, want nil: absence is no delete", d)
	}
}

// TestCopyLostOnAStandbyIsNoDelete: with the fence, a copy deleted on a hub whose ManagedCluster of the cluster
// names another hub as the cluster's (the mark of a standby: users are kept out) was lost — a namespace deleted,
// the fence overridden, the hub rebuilt —, and is not remembered as a user's delete; on the cluster's hub it is,
// and without the fence it is everywhere (a user may delete a copy anywhere).
func TestCopyLostOnAStandbyIsNoDelete(t *testing.T) {
	t.Run("fenced", func(t *testing.T) { testCopyLostOnAStandby(t, true) })
	t.Run("without the fence", func(t *testing.T) { testCopyLostOnAStandby(t, false) })
}

func testCopyLostOnAStandby(t *testing.T, fenced bool) {
	mc, _ := mirror.KindByName(failoverv1alpha1.KindManagedCluster)
	standby := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
		"metadata": map[string]any{"name": "c1", "labels": map[string]any{mirror.LabelReplicatedFrom: "hub-a"},
			"annotations": map[string]any{mirror.AnnotationClusterHub: "hub-a"}},
	}}
	h, fake := startHubFenced(t, fenced, standby, workObject("lost", "v1", true), workObject("original", "v1", false))
	ctx := context.Background()
	works := fake.Resource(manifestWork.GVR).Namespace("c1")
	waitFor(t, "the ManagedCluster cached", func() bool { _, ok := h.Cluster("c1"); return ok })

	if err := works.Delete(ctx, "lost", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// An original's delete after it: once its event is heard, so was the one before (one informer, in order).
	if err := works.Delete(ctx, "original", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delete of original seen", func() bool { return h.Deleted(failoverv1alpha1.KindManifestWork, "c1", "original") != nil })
	if d := h.Deleted(failoverv1alpha1.KindManifestWork, "c1", "lost"); (d != nil) == fenced {
		t.Errorf("fenced %v: Deleted for a copy deleted on a standby = %+v, want a delete only without the fence", fenced, d)
	}

	// The hub becomes the cluster's: the replicator removes the fence's mark there (mirror.SourceCleanup).
	source := standby.DeepCopy()
	source.SetAnnotations(nil)
	if _, err := fake.Resource(mc.GVR).Update(ctx, source, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the mark gone from the cache", func() bool { c, _ := h.Cluster("c1"); return c.RecordedHub == "" })
	if _, err := works.Create(ctx, workObject("copy-on-source", "v1", true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "copy-on-source cached", func() bool {
		o, _ := h.Peek(failoverv1alpha1.KindManifestWork, "c1", "copy-on-source")
		return o != nil
	})
	if err := works.Delete(ctx, "copy-on-source", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a user's delete of a copy on the cluster's hub seen", func() bool {
		return h.Deleted(failoverv1alpha1.KindManifestWork, "c1", "copy-on-source") != nil
	})
}

// TestOwnDeletesArePruned: the replicator's own deletes are forgotten DeleteMemory after they were sent, also on
// a hub where no user deletes anything (a fenced standby), where nothing else prunes them.
func TestOwnDeletesArePruned(t *testing.T) {
	fakeClock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	h, err := New(Options{Name: "hub-b", Client: dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), Kinds: []mirror.Kind{manifestWork},
		ProbeInterval: time.Second, Handler: nopHandler{}, Clock: fakeClock})
	if err != nil {
		t.Fatal(err)
	}
	h.ExpectDelete(failoverv1alpha1.KindManifestWork, "c1", "w1", "uid-1")
	if !h.DeleteSent(failoverv1alpha1.KindManifestWork, "c1", "w1", "uid-1") {
		t.Fatalf("DeleteSent(w1) = false right after ExpectDelete")
	}
	fakeClock.Step(DeleteMemory + time.Minute)
	if h.DeleteSent(failoverv1alpha1.KindManifestWork, "c1", "w1", "uid-1") {
		t.Errorf("DeleteSent(w1) = true after DeleteMemory")
	}
	h.ExpectDelete(failoverv1alpha1.KindManifestWork, "c1", "w2", "uid-2")
	h.deletesMu.Lock()
	defer h.deletesMu.Unlock()
	if len(h.ownDeletes) != 1 {
		t.Errorf("own deletes held: %v, want only w2's", h.ownDeletes)
	}
}
