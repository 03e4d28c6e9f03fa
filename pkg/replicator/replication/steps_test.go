package replication

import (
	"slices"
	"testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// TestHubSteps walks hubSteps through a hub's life: not listed (pending for every cluster), listed with two keys
// of cluster c1 out of step (and the other hub, not caught up, out of step with them too), compared one by one
// (c1 in step and the hub caught up with the last), a failed write after the catch-up (reopened, c1 pending
// again), and a key marked behind on a hub that left the ready state (ignored).
func TestHubSteps(t *testing.T) {
	w1 := Key{Kind: failoverv1alpha1.KindManifestWork, Namespace: "c1", Name: "w1"}
	w2 := Key{Kind: failoverv1alpha1.KindManifestWork, Namespace: "c1", Name: "w2"}
	s := newHubSteps([]string{"hub-a", "hub-b"}, func(k Key) string { return k.Namespace })

	if !s.pendingFor("hub-a", "c1") || s.isCaughtUp("hub-a") {
		t.Fatal("a hub not listed yet: want pending and not caught up")
	}
	if nothing := s.ready("hub-a", []Key{w1, w2}, func() bool { return true }); nothing {
		t.Fatal("ready with two keys reported nothing to catch up")
	}
	if got := s.behindCounts(); got["hub-a"] != 2 || len(got) != 1 {
		t.Errorf("behind counts %v, want hub-a 2 only (hub-b not listed)", got)
	}
	if caughtUp, inStep := s.compared(w1, []string{"hub-a"}); len(caughtUp) != 0 || len(inStep) != 0 {
		t.Errorf("first key compared: caught up %v, in step %v; want none", caughtUp, inStep)
	}
	if !s.pendingFor("hub-a", "c1") {
		t.Error("c1 not pending on hub-a with w2 out of step")
	}
	caughtUp, inStep := s.compared(w2, []string{"hub-a"})
	if !slices.Equal(caughtUp, []string{"hub-a"}) || !slices.Equal(inStep, []string{"c1"}) {
		t.Errorf("last key compared: caught up %v, in step %v; want [hub-a] and [c1]", caughtUp, inStep)
	}
	if already, reopened := s.caughtUp("hub-a"); already || reopened {
		t.Errorf("caughtUp: already %t, reopened %t; want neither", already, reopened)
	}
	if !s.isCaughtUp("hub-a") || s.pendingFor("hub-a", "c1") {
		t.Error("hub-a after its catch-up: want caught up, c1 not pending")
	}

	if !s.behind(w1, "hub-a") || s.behind(w1, "hub-a") {
		t.Error("behind: want the first call to add w1 and the second to find it there")
	}
	if s.isCaughtUp("hub-a") || !s.pendingFor("hub-a", "c1") {
		t.Error("hub-a after a failed write: want not caught up, c1 pending")
	}
	s.compared(w1, nil)
	if already, reopened := s.caughtUp("hub-a"); already || !reopened {
		t.Errorf("caughtUp after the failed write went through: already %t, reopened %t; want reopened", already, reopened)
	}

	s.left("hub-a")
	s.caughtUp("hub-a")
	if s.behind(w2, "hub-a") {
		t.Error("behind on a hub that left the ready state added a key; its next listing brings every key back")
	}
	if s.isCaughtUp("hub-a") {
		t.Error("a hub that left the ready state is caught up")
	}
	if nothing := s.ready("hub-b", nil, func() bool { return true }); !nothing {
		t.Error("ready with no keys: want nothing to catch up")
	}
	// A hub that left the ready state before its listing was recorded is not listed.
	s.ready("hub-a", []Key{w1}, func() bool { return false })
	if s.isCaughtUp("hub-a") || !s.pendingFor("hub-a", "c1") {
		t.Error("a hub no longer ready when its listing was recorded: want it not listed (pending, not caught up)")
	}
	if _, ok := s.behindCounts()["hub-a"]; ok {
		t.Error("a hub not listed is counted behind")
	}
}
