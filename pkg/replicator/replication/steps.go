package replication

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"
)

// hubSteps is the one writer of what the replicator knows of each hub's step with the sources: the keys a hub is
// not in step with (since it became ready, or after a write there failed or waits), how many of each cluster's
// keys those are, and whether the hub's listing was handled. The in-step reports (publishSteps), the catch-up
// (HubCaughtUp) and the status read it. It has its own lock; under it, it calls only clusterOf (which must take
// no lock) and ready's stillReady (a hub's Ready, which takes the hub's lock alone), so it may be used with or
// without Controller.mu held.
type hubSteps struct {
	mu sync.Mutex
	// clusterOf returns the cluster of a key ("" for none): Controller.keyCluster.
	clusterOf func(Key) string
	// dirty: hub → keys not in step there; nil when the hub is caught up.
	dirty map[string]sets.Set[Key]
	// pending: hub → cluster → how many of the cluster's keys are in dirty[hub] (nil when caught up).
	pending map[string]map[string]int
	// reopened: hub → dirty[hub] was made again by behind after the hub was caught up (no HubCaughtUp event when
	// it empties again); reset when the hub becomes ready.
	reopened map[string]bool
	// listed: hub → its becoming ready was handled (ready) since it last left that state. hubconn reports a hub
	// Ready before the controller's OnState runs; until then dirty and pending do not cover the hub's new
	// listing, and it is neither caught up nor free of pending keys.
	listed map[string]bool
}

// newHubSteps returns the steps of hubs, none listed yet, each with nothing out of step.
func newHubSteps(hubs []string, clusterOf func(Key) string) *hubSteps {
	s := &hubSteps{clusterOf: clusterOf, dirty: map[string]sets.Set[Key]{}, pending: map[string]map[string]int{},
		reopened: map[string]bool{}, listed: map[string]bool{}}
	for _, h := range hubs {
		s.dirty[h] = sets.New[Key]()
	}
	return s
}

// left records that hub left the ready state: it is neither caught up nor in step until ready runs again.
func (s *hubSteps) left(hub string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listed[hub] = false
}

// ready records hub's new listing: it is out of step with every key of keys (every object known now), and so is
// every other hub not caught up yet; stillReady, asked under the lock, says whether the hub is still ready
// (hubconn reports Ready outside its lock: a hub that left Ready since, and whose left already ran, is not
// listed). It reports whether hub has nothing to catch up (no keys).
func (s *hubSteps) ready(hub string, keys []Key, stillReady func() bool) (nothingToCatchUp bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dirty[hub] = sets.New(keys...)
	s.reopened[hub] = false
	s.listed[hub] = stillReady()
	for other, dirty := range s.dirty {
		if other != hub && dirty != nil {
			dirty.Insert(keys...)
		}
		s.countPending(other)
	}
	return len(keys) == 0
}

// compared records that key is in step on hubs (every hub when hubs is nil). It returns the hubs for which it
// was the last key out of step (caught up now: call caughtUp) and the clusters whose last key waiting on some
// hub it was (in step there now).
func (s *hubSteps) compared(key Key, hubs []string) (caughtUp, inStep []string) {
	cluster := s.clusterOf(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	for hub, dirty := range s.dirty {
		if hubs != nil && !slices.Contains(hubs, hub) {
			continue
		}
		if dirty == nil || !dirty.Has(key) {
			continue
		}
		dirty.Delete(key)
		if dirty.Len() == 0 {
			caughtUp = append(caughtUp, hub)
		}
		if cluster != "" && s.pending[hub] != nil {
			s.pending[hub][cluster]--
			if s.pending[hub][cluster] <= 0 {
				delete(s.pending[hub], cluster)
				inStep = append(inStep, cluster)
			}
		}
	}
	return caughtUp, inStep
}

// behind puts key back among hub's out-of-step keys (a write there failed or waits), also once the hub was
// caught up. A hub not listed is left alone (its listing brings every key back). It reports whether key was
// added (it was in step there).
func (s *hubSteps) behind(key Key, hub string) (added bool) {
	cluster := s.clusterOf(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dirty[hub] == nil {
		if !s.listed[hub] {
			return false
		}
		s.dirty[hub] = sets.New[Key]()
		s.pending[hub] = map[string]int{}
		s.reopened[hub] = true
	}
	if s.dirty[hub].Has(key) {
		return false
	}
	s.dirty[hub].Insert(key)
	if cluster != "" && s.pending[hub] != nil {
		s.pending[hub][cluster]++
	}
	return true
}

// caughtUp records that hub has no key out of step. already says it was caught up before; reopened, that it
// was out of step only because of behind since its last catch-up.
func (s *hubSteps) caughtUp(hub string) (already, reopened bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	already, reopened = s.dirty[hub] == nil, s.reopened[hub]
	s.dirty[hub] = nil
	s.pending[hub] = nil
	s.reopened[hub] = false
	return already, reopened
}

// isCaughtUp reports whether hub's listing was handled and no key is out of step there.
func (s *hubSteps) isCaughtUp(hub string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listed[hub] && s.dirty[hub] == nil
}

// pendingFor reports whether some key of cluster is out of step on hub, or hub's listing was not handled yet.
func (s *hubSteps) pendingFor(hub, cluster string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.listed[hub] || s.pending[hub][cluster] > 0
}

// behindCounts returns, for each listed hub, how many keys are out of step there.
func (s *hubSteps) behindCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for hub, dirty := range s.dirty {
		if s.listed[hub] {
			out[hub] = dirty.Len()
		}
	}
	return out
}

// countPending recomputes, with s.mu held, how many keys of each cluster wait on hub.
func (s *hubSteps) countPending(hub string) {
	if s.dirty[hub] == nil {
		s.pending[hub] = nil
		return
	}
	counts := map[string]int{}
	for key := range s.dirty[hub] {
		if cluster := s.clusterOf(key); cluster != "" {
			counts[cluster]++
		}
	}
	s.pending[hub] = counts
}
