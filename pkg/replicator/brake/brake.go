// Package brake is the replicator's mass-delete brake (ReplicationConfig spec.deleteBrake): it counts the deletes
// the replicator makes on each hub and, when a hub's deletes within a window would exceed a share of what is
// replicated, stops every further delete there until a person releases it — as Kubernetes' node lifecycle
// controller stops evicting when too many nodes of a zone look unhealthy.
//
// The replicator deletes only what it saw deleted (mirror.Decide rules 2 and 3), so the brake is not how
// deletes are decided: it bounds the damage of what looks like many deletes at once — a cluster namespace
// deleted by mistake, a hub restored from an old backup or rebuilt, a rule of the replicator that is wrong.
//
// Brake is a pure decision with its own state: the caller asks Admit before each delete and deletes only on
// true; it holds no client and reads no clock but the one it is given.
package brake

import (
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// Verdict is Admit's answer.
type Verdict string

const (
	// Admitted: the delete may be made; it counts against the hub's window (unless released by a person).
	Admitted Verdict = "Admitted"
	// Held: the hub's brake is engaged; the delete waits for its release.
	Held Verdict = "Held"
	// Engaged: this delete would have gone beyond the hub's limit: the brake engaged now and the delete waits.
	Engaged Verdict = "Engaged"
)

// Limits are the brake's settings: Percent (1–100) of the replicated objects, at least Minimum deletes, per hub
// within Window.
type Limits struct {
	Percent, Minimum int
	Window           time.Duration
}

// LimitsOf returns the Limits of spec.deleteBrake (b may be nil), with failoverv1alpha1.DeleteBrakeWindow.
func LimitsOf(b *failoverv1alpha1.DeleteBrake) Limits {
	percent, minimum := b.Limits()
	return Limits{Percent: percent, Minimum: minimum, Window: failoverv1alpha1.DeleteBrakeWindow}
}

// Allowed returns how many deletes a hub may make within the window when objects objects are replicated:
// max(Minimum, ceil(Percent % of objects)).
func (l Limits) Allowed(objects int) int {
	share := (objects*l.Percent + 99) / 100
	return max(l.Minimum, share)
}

// State is one engaged brake, for the ReplicationConfig's status.
type State struct {
	// Hub is the hub whose deletes wait.
	Hub string
	// Since is when the brake engaged (the Brake's clock, in seconds).
	Since time.Time
	// Limit is how many deletes the window allowed when it engaged.
	Limit int
	// Held is how many objects' deletes wait (each object once).
	Held int
}

// Token is the release token of s (failoverv1alpha1.ReleaseToken).
func (s State) Token() string { return failoverv1alpha1.ReleaseToken(s.Hub, s.Since) }

// Brake counts, per hub, the deletes admitted within the window, and holds every delete of a hub whose brake
// is engaged. K identifies an object (the replicator's queue key). Safe for concurrent use.
type Brake[K comparable] struct {
	limits Limits
	clock  clock.PassiveClock

	mu   sync.Mutex
	hubs map[string]*hub[K]
}

type hub[K comparable] struct {
	// admitted: key → when its delete was first admitted within the window. A delete retried (a request that
	// failed) counts once.
	admitted map[K]time.Time
	// since is when the brake engaged; zero while it is not. lastSince is the since of the last engagement:
	// a new one is at least a second later, so that no two engagements share a release token.
	since, lastSince time.Time
	limit            int
	// restored is true for a brake engaged before this Brake was made (New's engaged): which deletes it holds
	// is learnt again as they are asked for.
	restored bool
	// held are the keys whose delete waits for the release.
	held sets.Set[K]
	// released: key → when a person released its delete: it is admitted once more, uncounted, within the
	// window after the release.
	released map[K]time.Time
	// openUntil: after the release of a restored brake, every delete is admitted uncounted until then (the
	// window after the release) or until the hub is caught up (CaughtUp), whichever comes first: the deletes it
	// held are asked for again during that time.
	openUntil time.Time
}

// New returns a Brake with limits on clk. engaged restores brakes that were engaged before a restart (hub →
// when it engaged, from the ReplicationConfig's status): they stay engaged, with the same release token.
func New[K comparable](limits Limits, clk clock.PassiveClock, engaged map[string]time.Time) *Brake[K] {
	b := &Brake[K]{limits: limits, clock: clk, hubs: map[string]*hub[K]{}}
	for name, since := range engaged {
		h := b.hub(name)
		h.since = since.Truncate(time.Second)
		h.lastSince, h.restored = h.since, true
	}
	return b
}

func (b *Brake[K]) hub(name string) *hub[K] {
	h := b.hubs[name]
	if h == nil {
		h = &hub[K]{admitted: map[K]time.Time{}, held: sets.New[K](), released: map[K]time.Time{}}
		b.hubs[name] = h
	}
	return h
}

// Admit decides whether the delete of key's object on hubName may be made now; objects returns the number of
// objects on the hub (the share's base), and is called only when the count reaches Limits.Minimum. The rules, in
// order:
//  1. a key a person released (Release) within the window is admitted, once, and not counted; so is every
//     delete while the hub is open after the release of a restored brake (until it is caught up, at most the
//     window);
//  2. while the hub's brake is engaged, the delete is Held (key remembered for the release);
//  3. a key whose delete was admitted on the hub within the window (a retry) is admitted, not counted again;
//  4. when the objects whose deletes were admitted on the hub within the window already reach
//     Limits.Allowed(objects()), the brake engages: Engaged (key held);
//  5. otherwise the delete is Admitted and counted.
//
// The caller makes the delete only when the verdict is Admitted.
func (b *Brake[K]) Admit(hubName string, key K, objects func() int) Verdict {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.hub(hubName)
	now := b.clock.Now()
	for k, at := range h.released {
		if now.Sub(at) >= b.limits.Window {
			delete(h.released, k)
		}
	}
	if _, ok := h.released[key]; ok {
		delete(h.released, key)
		return Admitted
	}
	if now.Before(h.openUntil) {
		return Admitted
	}
	if !h.since.IsZero() {
		h.held.Insert(key)
		return Held
	}
	for k, at := range h.admitted {
		if now.Sub(at) >= b.limits.Window {
			delete(h.admitted, k)
		}
	}
	if _, again := h.admitted[key]; again {
		return Admitted
	}
	if len(h.admitted) >= b.limits.Minimum {
		if allowed := b.limits.Allowed(objects()); len(h.admitted) >= allowed {
			since := now.Truncate(time.Second)
			if !since.After(h.lastSince) {
				since = h.lastSince.Add(time.Second)
			}
			h.since, h.lastSince, h.limit, h.restored = since, since, allowed, false
			h.held.Insert(key)
			return Engaged
		}
	}
	h.admitted[key] = now
	return Admitted
}

// CaughtUp tells the brake that hubName has no object out of step: the deletes a released restored brake held
// have been asked for again, and the hub is no longer open (Admit rule 1).
func (b *Brake[K]) CaughtUp(hubName string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h := b.hubs[hubName]; h != nil {
		h.openUntil = time.Time{}
	}
}

// Forget drops key from hubName's held and released deletes: a sync found that its object needs no delete there
// any more.
func (b *Brake[K]) Forget(hubName string, key K) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h := b.hubs[hubName]; h != nil {
		h.held.Delete(key)
		delete(h.released, key)
	}
}

// Release releases the brake whose release token is token (State.Token), when it is engaged: the deletes it
// held are admitted once each within the window (keys, in no order, for the caller to sync again) and the hub's
// window starts afresh. A brake restored at the start (New's engaged) learns again what it holds only as deletes
// are asked for: its release opens the hub (Admit rule 1) until the hub is caught up or the window ends. A token
// of no engaged brake (released already, engaged again since, or malformed) returns ok false and changes
// nothing; tokens never repeat.
func (b *Brake[K]) Release(token string) (Released[K], bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	for name, h := range b.hubs {
		if h.since.IsZero() || failoverv1alpha1.ReleaseToken(name, h.since) != token {
			continue
		}
		r := Released[K]{Hub: name, Keys: h.held.UnsortedList(), Restored: h.restored}
		for _, k := range r.Keys {
			h.released[k] = now
		}
		if h.restored {
			h.openUntil = now.Add(b.limits.Window)
		}
		h.held = sets.New[K]()
		h.since, h.limit, h.admitted, h.restored = time.Time{}, 0, map[K]time.Time{}, false
		return r, true
	}
	return Released[K]{}, false
}

// Released is what Release let go of.
type Released[K comparable] struct {
	// Hub is the hub whose brake was released.
	Hub string
	// Keys are the deletes it held (in no order).
	Keys []K
	// Restored is true for a brake engaged before the Brake was made: Keys are only those asked for since, and
	// the hub is open until it is caught up.
	Restored bool
}

// Engaged returns the engaged brakes, sorted by hub.
func (b *Brake[K]) Engaged() []State {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []State
	for name, h := range b.hubs {
		if !h.since.IsZero() {
			out = append(out, State{Hub: name, Since: h.since, Limit: h.limit, Held: h.held.Len()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Hub < out[j].Hub })
	return out
}
