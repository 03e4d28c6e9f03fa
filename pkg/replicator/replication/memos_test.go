package replication

import (
	"testing"
	"time"
)

// TestLagClocks: a clock starts once, keeps its first time while a change waits, and is stopped only by the sync
// that read it (a sync that read none stops none).
func TestLagClocks(t *testing.T) {
	var l lagClocks
	key := Key{Kind: "ManifestWork", Namespace: "cluster1", Name: "work-1"}
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	if _, ok := l.of(key); ok {
		t.Fatal("a clock runs before any change was seen")
	}
	l.stop(key, time.Time{}) // a sync that read no clock
	l.start(key, t0)
	l.start(key, t0.Add(time.Second))
	if at, ok := l.of(key); !ok || !at.Equal(t0) {
		t.Fatalf("of = %v, %t; want the first start %v", at, ok, t0)
	}
	l.stop(key, time.Time{})
	if _, ok := l.of(key); !ok {
		t.Fatal("a sync that read no clock stopped the one started since")
	}
	l.stop(key, t0)
	if _, ok := l.of(key); ok {
		t.Fatal("the sync that read the clock did not stop it")
	}
	l.start(key, t0)
	l.forget(key)
	if _, ok := l.of(key); ok {
		t.Fatal("forget left the clock running")
	}
}

// TestAddOnFactsChanged: the first fact of a hub's add-on, and every different one after it, is a change; the
// same fact again, or another hub's, is not one for this hub.
func TestAddOnFactsChanged(t *testing.T) {
	var a addOnFacts
	for i, step := range []struct {
		hub, name string
		fact      [2]bool
		want      bool
	}{
		{"hub-a", "addon-1", [2]bool{false, false}, true},
		{"hub-a", "addon-1", [2]bool{false, false}, false},
		{"hub-a", "addon-1", [2]bool{true, true}, true},
		{"hub-b", "addon-1", [2]bool{true, true}, true},
		{"hub-a", "addon-1", [2]bool{true, true}, false},
		{"hub-a", "addon-2", [2]bool{true, true}, true},
	} {
		if got := a.changed(step.hub, step.name, step.fact); got != step.want {
			t.Errorf("step %d: changed(%s, %s, %v) = %t, want %t", i, step.hub, step.name, step.fact, got, step.want)
		}
	}
}

// TestHubNamespaces: a namespace is known on the hub it was added on until that hub's are forgotten.
func TestHubNamespaces(t *testing.T) {
	var n hubNamespaces
	if n.has("hub-a", "cluster1") {
		t.Fatal("a namespace known before it was added")
	}
	n.add("hub-a", "cluster1")
	if !n.has("hub-a", "cluster1") || n.has("hub-b", "cluster1") {
		t.Fatalf("after add on hub-a: hub-a %t, hub-b %t; want true, false", n.has("hub-a", "cluster1"), n.has("hub-b", "cluster1"))
	}
	n.forget("hub-a")
	if n.has("hub-a", "cluster1") {
		t.Fatal("hub-a's namespace known after forget")
	}
}
