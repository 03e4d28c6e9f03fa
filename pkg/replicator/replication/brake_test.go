package replication

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/brake"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// TestControllerDeleteBrake: with a brake of at least 2 deletes and 10 % per window, hub A's six works are copied
// to hub B; five of them are deleted on A at once. Two copies go; the third delete engages hub B's brake (one
// DeletesHeld event naming the release token); the other three copies stay and hub B is not caught up, while a new
// work is still copied there (the brake holds deletes only). A token of no engaged brake releases nothing; the
// brake's own token makes the held deletes, and hub B catches up.
func TestControllerDeleteBrake(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	ctx := context.Background()

	objects := []runtime.Object{managedCluster(testCluster, nil)}
	for i := range 6 {
		objects = append(objects, manifestWork(testCluster, fmt.Sprintf("work-%d", i), fmt.Sprintf("cm-%d", i), nil))
	}
	a := newTestHub(t, testHubA, handler, kinds, objects...)
	b := newTestHub(t, testHubB, handler, kinds)
	limits := brake.Limits{Percent: 10, Minimum: 2, Window: time.Hour}
	c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour, DeleteBrake: limits}, a, b)
	for i := range 6 {
		eventually(t, fmt.Sprintf("hub-b holds a copy of work-%d", i), func() bool {
			return b.get(t, mwKind, testCluster, fmt.Sprintf("work-%d", i)) != nil
		})
	}
	quiesce(t, c, a, b)

	for i := range 5 {
		if err := a.client.Resource(mwKind.GVR).Namespace(testCluster).Delete(ctx, fmt.Sprintf("work-%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "hub-b's brake engages", func() bool { return len(c.EngagedBrakes()) == 1 })
	eventually(t, "three deletes held on hub-b", func() bool { return c.EngagedBrakes()[0].Held == 3 })
	quiesce(t, c, a, b)
	left := copiesLeft(t, b, 5)
	if len(left) != 3 {
		t.Fatalf("hub-b holds copies of %v after the deletes, want 3 of work-0…work-4 kept by the brake (2 deleted)", left)
	}
	engaged := c.EngagedBrakes()[0]
	if engaged.Hub != testHubB || engaged.Limit != 2 {
		t.Errorf("engaged brake %+v, want hub-b with limit 2", engaged)
	}
	msgs := recorder.messages(ReasonDeletesHeld)
	if len(msgs) != 1 || !strings.Contains(msgs[0], failoverv1alpha1.AnnotationReleaseDeletes+"="+engaged.Token()) {
		t.Errorf("DeletesHeld events %q, want one naming the release annotation and token %s", msgs, engaged.Token())
	}
	if snap := c.Snapshot(); snap.CaughtUp[testHubB] || len(snap.Brakes) != 1 {
		t.Errorf("snapshot: hub-b caught up %v, brakes %+v; want not caught up, one brake", snap.CaughtUp[testHubB], snap.Brakes)
	}

	// Creates go on.
	if _, err := a.client.Resource(mwKind.GVR).Namespace(testCluster).Create(ctx, manifestWork(testCluster, "work-new", "cm-new", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hub-b holds a copy of work-new", func() bool { return b.get(t, mwKind, testCluster, "work-new") != nil })

	if released := c.ReleaseDeletes([]string{failoverv1alpha1.ReleaseToken(testHubB, engaged.Since.Add(-time.Second)), "hub-a@" + engaged.Since.Format(time.RFC3339)}); len(released) != 0 {
		t.Fatalf("ReleaseDeletes with tokens of no engaged brake released %v", released)
	}
	quiesce(t, c, a, b)
	if left := copiesLeft(t, b, 5); len(left) != 3 {
		t.Fatalf("copies %v deleted without a release", left)
	}
	if released := c.ReleaseDeletes([]string{engaged.Token()}); len(released) != 1 {
		t.Fatalf("ReleaseDeletes(%s) released %v, want the brake", engaged.Token(), released)
	}
	eventually(t, "the held deletes are made on hub-b", func() bool { return len(copiesLeft(t, b, 5)) == 0 })
	eventually(t, "hub-b is caught up", func() bool { return c.Snapshot().CaughtUp[testHubB] })
	if got := c.EngagedBrakes(); len(got) != 0 {
		t.Errorf("engaged brakes after the release: %+v", got)
	}
	if msgs := recorder.messages(ReasonDeletesReleased); len(msgs) != 1 || !strings.Contains(msgs[0], "3 held deletes") {
		t.Errorf("DeletesReleased events %q, want one for 3 held deletes", msgs)
	}
	if b.get(t, mwKind, testCluster, "work-5") == nil || b.get(t, mwKind, testCluster, "work-new") == nil {
		t.Errorf("a copy of a work never deleted is gone from hub-b")
	}
}

// TestControllerBrakeEngagedAtStart: a brake engaged before the controller started (the ReplicationConfig's
// status, after a restart) holds the first delete.
func TestControllerBrakeEngagedAtStart(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), manifestWork(testCluster, "work-0", "cm-0", nil))
	b := newTestHub(t, testHubB, handler, kinds)
	since := time.Now().Add(-time.Hour).Truncate(time.Second)
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour, EngagedBrakes: map[string]time.Time{testHubB: since}}, a, b)
	eventually(t, "hub-b holds a copy of work-0", func() bool { return b.get(t, mwKind, testCluster, "work-0") != nil })
	if err := a.client.Resource(mwKind.GVR).Namespace(testCluster).Delete(context.Background(), "work-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the delete is held", func() bool { b := c.EngagedBrakes(); return len(b) == 1 && b[0].Held == 1 })
	quiesce(t, c, a, b)
	if b.get(t, mwKind, testCluster, "work-0") == nil {
		t.Fatalf("hub-b's copy deleted although its brake was engaged at the start")
	}
	c.ReleaseDeletes([]string{failoverv1alpha1.ReleaseToken(testHubB, since)})
	eventually(t, "the released delete is made", func() bool { return b.get(t, mwKind, testCluster, "work-0") == nil })
}

// copiesLeft returns which of work-0 … work-<n-1> hub h holds.
func copiesLeft(t *testing.T, h *testHub, n int) []string {
	t.Helper()
	var left []string
	for i := range n {
		name := fmt.Sprintf("work-%d", i)
		if h.get(t, testKind(t, failoverv1alpha1.KindManifestWork), testCluster, name) != nil {
			left = append(left, name)
		}
	}
	return left
}
