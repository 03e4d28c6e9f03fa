package managedcluster

import "sync"

// ConflictTracker records whether another spoke is registered on the hub under this
// agent's cluster name (field case FC-06). The status controller sets and clears it; the
// lease controller renews the hub lease only once the identity was verified and while no
// conflict is recorded; the failover wiring reads it to report a condition. It starts
// unverified: until the status controller compared the hub's id.k8s.io claim with ours,
// Verified is false and Conflict is false. It is safe for concurrent use. The zero value is
// not usable; create one with NewConflictTracker.
type ConflictTracker struct {
	lock     sync.Mutex
	verified bool
	conflict bool
	message  string
	changed  chan struct{}
}

// NewConflictTracker returns an unverified tracker with no conflict recorded.
func NewConflictTracker() *ConflictTracker {
	return &ConflictTracker{changed: make(chan struct{})}
}

// Conflict reports whether a conflict is currently recorded and, if so, a human-readable
// message naming the cluster and both identities (the value of the id.k8s.io claim on
// the hub and ours).
func (t *ConflictTracker) Conflict() (bool, string) {
	t.lock.Lock()
	defer t.lock.Unlock()
	return t.conflict, t.message
}

// Verified reports whether this spoke's identity was compared with the hub's at least
// once (by Set or Clear). The lease controller does not renew before that, so a newly
// started agent cannot refresh another spoke's registration before noticing it.
func (t *ConflictTracker) Verified() bool {
	t.lock.Lock()
	defer t.lock.Unlock()
	return t.verified
}

// Changed returns a channel that is closed at the next change of the tracker's state
// (verified, conflict set, message changed, or conflict cleared). Call Changed again after
// it fires to wait for the following change.
func (t *ConflictTracker) Changed() <-chan struct{} {
	t.lock.Lock()
	defer t.lock.Unlock()
	return t.changed
}

// Set records a conflict with the given message. It returns true on the transition from
// "no conflict" to "conflict" (worth an event); a message change alone notifies Changed
// listeners but returns false.
func (t *ConflictTracker) Set(message string) bool {
	t.lock.Lock()
	defer t.lock.Unlock()
	if t.conflict && t.message == message {
		return false
	}
	transition := !t.conflict
	t.verified, t.conflict, t.message = true, true, message
	t.notifyLocked()
	return transition
}

// Clear records that the identity was verified and no conflict exists. It returns true
// when a conflict was recorded before (worth an event).
func (t *ConflictTracker) Clear() bool {
	t.lock.Lock()
	defer t.lock.Unlock()
	if t.verified && !t.conflict {
		return false
	}
	resolved := t.conflict
	t.verified, t.conflict, t.message = true, false, ""
	t.notifyLocked()
	return resolved
}

// Reset returns the tracker to its initial state (unverified, no conflict), as needed when
// the agent switches to another hub: the verdict belongs to one hub's ManagedCluster.
func (t *ConflictTracker) Reset() {
	t.lock.Lock()
	defer t.lock.Unlock()
	if !t.verified && !t.conflict {
		return
	}
	t.verified, t.conflict, t.message = false, false, ""
	t.notifyLocked()
}

func (t *ConflictTracker) notifyLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}
