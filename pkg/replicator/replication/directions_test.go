package replication

import (
	"testing"
	"time"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
)

// TestClusterDirectionsForget: a name that stands for several spokes loses its source, selection and move but
// keeps its lease sightings (they tell which spoke is alive where); a cluster gone from every hub loses all.
func TestClusterDirectionsForget(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name          string
		forget        func(d *clusterDirections)
		wantSightings bool
	}{
		{"stand down", func(d *clusterDirections) { d.standDown(testCluster) }, true},
		{"gone", func(d *clusterDirections) { d.gone(testCluster) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newClusterDirections([]string{testHubA, testHubB})
			d.leaseAdded(testHubB, testCluster, now.Add(-time.Minute))
			if added := d.read(testCluster).added[testHubB]; !added.Equal(now.Add(-time.Minute)) {
				t.Fatalf("lease seen appear on %s at %v, want %v", testHubB, added, now.Add(-time.Minute))
			}
			d.renewal(testHubA, testCluster, now)
			read := d.read(testCluster)
			src := direction.Source{Hub: testHubA, Reason: direction.ReasonLeaseRenewed}
			if wasSelected, again := d.decided(testCluster, src, true, true, testHubB, "1", read.deferred); wasSelected || again {
				t.Fatalf("first decision: wasSelected %t, again %t; want false, false", wasSelected, again)
			}
			if got, ok := d.source(testCluster); !ok || got != src || d.movedFromOf(testCluster) != testHubB {
				t.Fatalf("after the decision: source %v (%t), moved from %q; want %v, %q", got, ok, d.movedFromOf(testCluster), src, testHubB)
			}
			tc.forget(d)
			if _, ok := d.source(testCluster); ok || d.movedFromOf(testCluster) != "" {
				t.Errorf("source or move kept after %s", tc.name)
			}
			if n, _ := d.selectedSources(); n != 0 {
				t.Errorf("%d clusters selected after %s, want 0", n, tc.name)
			}
			if seen := d.renewSeenAt(testHubA, testCluster); seen.Equal(now) != tc.wantSightings {
				t.Errorf("renewal seen at %v after %s; want kept %t", seen, tc.name, tc.wantSightings)
			}
			if added := d.read(testCluster).added[testHubB]; added.IsZero() == tc.wantSightings {
				t.Errorf("lease seen appear at %v after %s; want kept %t", added, tc.name, tc.wantSightings)
			}
		})
	}
}

// TestClusterDirectionsDeferred: a second renewal on the source that the lease decided is settled and deferred,
// and a decision that read the sightings before it is made again.
func TestClusterDirectionsDeferred(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	d := newClusterDirections([]string{testHubA, testHubB})
	if d.renewal(testHubA, testCluster, now) {
		t.Fatal("a renewal before any decision is settled")
	}
	src := direction.Source{Hub: testHubA, Reason: direction.ReasonLeaseRenewed}
	d.decided(testCluster, src, true, false, "", "", d.read(testCluster).deferred)
	read := d.read(testCluster)
	if !d.renewal(testHubA, testCluster, now.Add(time.Second)) {
		t.Fatal("a renewal on the source its lease decided is not settled")
	}
	if d.renewal(testHubB, testCluster, now.Add(time.Second)) {
		t.Fatal("a renewal on another hub is settled")
	}
	if _, again := d.decided(testCluster, src, true, false, "", "", read.deferred); !again {
		t.Error("a decision that read the sightings before a deferred renewal is not made again")
	}
	if _, again := d.decided(testCluster, src, true, false, "", "", d.read(testCluster).deferred); again {
		t.Error("a decision that read every renewal is made again")
	}
}

// TestClusterDirectionsEndedMovedFrom: a moved-from record the replicator ended is read as ended while the
// source's cache shows the version it was ended on; any other version is taken as it is (a new move from the same
// hub counts). A record that changed before the end was recorded (the source moved, or a move from another hub)
// is left.
func TestClusterDirectionsEndedMovedFrom(t *testing.T) {
	src := direction.Source{Hub: testHubA, Reason: direction.ReasonLeaseRenewed}
	d := newClusterDirections([]string{testHubA, testHubB})
	d.decided(testCluster, src, true, true, testHubB, "5", 0)
	d.endMovedFrom(testCluster, testHubA, testHubB, []string{"5", "6"}) // the agent's epoch, then moved-from
	for i, step := range []struct{ source, cached, version, want string }{
		{testHubA, testHubB, "5", ""},       // the cache has not caught up with either end
		{testHubA, testHubB, "6", ""},       // with the second
		{"hub-c", testHubB, "6", testHubB},  // another source's version is its own
		{testHubA, testHubB, "6", testHubB}, // the memo went with it: a version naming hub-b counts
		{testHubA, "", "7", ""},
		{testHubA, testHubB, "9", testHubB}, // a new move from hub-b
	} {
		d.setMovedFrom(testCluster, step.source, step.cached, step.version)
		if got := d.movedFromOf(testCluster); got != step.want {
			t.Errorf("step %d: %s's cache shows %q at version %s: moved from %q, want %q", i, step.source, step.cached, step.version, got, step.want)
		}
	}

	// The source moved to hub-b meanwhile, naming hub-a: the end of hub-b's record on hub-a is not applied.
	d = newClusterDirections([]string{testHubA, testHubB})
	d.decided(testCluster, direction.Source{Hub: testHubB}, true, true, testHubA, "7", 0)
	d.endMovedFrom(testCluster, testHubA, testHubB, []string{"5"})
	if got := d.movedFromOf(testCluster); got != testHubA {
		t.Errorf("after a move to hub-b, the end of a record on hub-a left moved from %q, want %q", got, testHubA)
	}
	// A record naming another hub than the one ended stays.
	d = newClusterDirections([]string{testHubA, testHubB, "hub-c"})
	d.decided(testCluster, src, true, true, "hub-c", "8", 0)
	d.endMovedFrom(testCluster, testHubA, testHubB, []string{"8"})
	if got := d.movedFromOf(testCluster); got != "hub-c" {
		t.Errorf("the end of hub-b's record left moved from %q, want hub-c", got)
	}
}
