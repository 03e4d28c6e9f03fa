package replication

import (
	"testing"
	"time"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// TestFenceMarkMemo: marks are recorded only for a hub that became ready (reset) and not since forgotten; a
// restore empties a ready hub's record and starts none for a hub that is not ready.
func TestFenceMarkMemo(t *testing.T) {
	var f fenceMarkMemo
	f.wrote(testHubA, testCluster, "hub-b@t")
	if _, ok := f.of(testHubA, testCluster); ok {
		t.Fatal("a mark recorded for a hub that never became ready")
	}
	f.reset(testHubA)
	f.wrote(testHubA, testCluster, "hub-b@t")
	if mark, ok := f.of(testHubA, testCluster); !ok || mark != "hub-b@t" {
		t.Fatalf("of = %q, %t; want hub-b@t, true", mark, ok)
	}
	f.resetIfReady(testHubA)
	if _, ok := f.of(testHubA, testCluster); ok {
		t.Fatal("a mark kept after the hub's restore")
	}
	f.resetIfReady(testHubB)
	f.wrote(testHubB, testCluster, "")
	if _, ok := f.of(testHubB, testCluster); ok {
		t.Fatal("a restore started a record for a hub that is not ready")
	}
	f.wrote(testHubA, testCluster, "")
	f.forget(testHubA)
	f.wrote(testHubA, testCluster, "")
	if _, ok := f.of(testHubA, testCluster); ok {
		t.Fatal("a mark recorded for a hub forgotten (not ready)")
	}
}

// TestIdentityConflictsRecord: a conflict keeps the time it was first seen; its end is dropped only when
// confirmed, and stands otherwise.
func TestIdentityConflictsRecord(t *testing.T) {
	var ic identityConflicts
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	conflict := direction.Identity{Conflict: true, Seen: "uid-1,uid-2"}
	for i, step := range []struct {
		id           direction.Identity
		confirmed    bool
		wantConflict bool
		wantHad      bool
		wantNames    int
	}{
		{conflict, false, true, false, 1},
		{conflict, false, true, true, 1},
		{direction.Identity{ID: "uid-1"}, false, true, true, 1},
		{direction.Identity{ID: "uid-1"}, true, false, true, 0},
		{direction.Identity{ID: "uid-1"}, true, false, false, 0},
	} {
		got, recorded, had, n := ic.record(testCluster, step.id, step.confirmed, t0.Add(time.Duration(i)*time.Minute))
		if got.Conflict != step.wantConflict || had != step.wantHad || n != step.wantNames {
			t.Errorf("step %d: conflict %t, had %t, %d names; want %t, %t, %d", i, got.Conflict, had, n, step.wantConflict, step.wantHad, step.wantNames)
		}
		if had && !recorded.since.Equal(t0) {
			t.Errorf("step %d: conflict since %v, want the first sighting %v", i, recorded.since, t0)
		}
	}
}

// TestHubCopiesConflicts: setConflict returns the conflict recorded before; forgetting a hub drops its copies
// and conflicts.
func TestHubCopiesConflicts(t *testing.T) {
	var h hubCopies
	key := Key{Kind: "ManifestWork", Namespace: testCluster, Name: "work-1"}
	if _, had := h.setConflict(testHubA, key, mirror.ConflictForeignObject); had {
		t.Fatal("a conflict recorded before the first")
	}
	if prev, had := h.setConflict(testHubA, key, mirror.ConflictCopyModified); !had || prev != mirror.ConflictForeignObject {
		t.Fatalf("prev %q, had %t; want %q, true", prev, had, mirror.ConflictForeignObject)
	}
	h.setCopy(testHubA, key, true)
	copies, conflicts, byKind := h.counts([]string{testHubA, testHubB})
	if copies[testHubA] != 1 || conflicts[testHubA] != 1 || byKind["ManifestWork"] != 1 || copies[testHubB] != 0 {
		t.Fatalf("counts: copies %v, conflicts %v, by kind %v", copies, conflicts, byKind)
	}
	h.forget(testHubA)
	if copies, conflicts, _ := h.counts([]string{testHubA}); copies[testHubA] != 0 || conflicts[testHubA] != 0 {
		t.Fatalf("after forget: copies %v, conflicts %v; want none", copies, conflicts)
	}
	if _, had := h.setConflict(testHubA, key, mirror.ConflictNone); had {
		t.Fatal("a conflict kept after forget")
	}
}
