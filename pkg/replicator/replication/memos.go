package replication

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
)

// lagClocks holds, per key, when a change of its object was first seen on its source (the replicator's clock)
// and not yet brought to every hub: the start of the replication lag (metrics.ReplicationLag). OnObject starts a
// clock, a sync that finished stops the one it read, and forget drops it. Its own lock.
type lagClocks struct {
	mu sync.Mutex
	at map[Key]time.Time
}

// start starts key's clock at now unless one runs.
func (l *lagClocks) start(key Key, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at == nil {
		l.at = map[Key]time.Time{}
	}
	if _, ok := l.at[key]; !ok {
		l.at[key] = now
	}
}

// of returns when key's clock started, and whether one runs.
func (l *lagClocks) of(key Key) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.at[key]
	return at, ok
}

// stop stops key's clock when it is the one that started at seen (the zero time: none ran when the sync read it).
func (l *lagClocks) stop(key Key, seen time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at[key] == seen {
		delete(l.at, key)
	}
}

// forget drops key's clock: nothing is replicated for it.
func (l *lagClocks) forget(key Key) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.at, key)
}

// sourcePatches remembers the last patch patchSourceOnce wrote on a source object until the source's cache shows
// it, so that a sync that runs again meanwhile does not write it again: "<what> <key>" → "<hub> <uid> <patch>".
// patchSourceOnce writes it, and forgets it when there is nothing left to patch; withHold forgets a hold the
// cache shows. Its own lock.
type sourcePatches struct {
	mu      sync.Mutex
	written map[string]string
}

// get returns what was last written under memoKey ("" none).
func (p *sourcePatches) get(memoKey string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.written[memoKey]
}

// set records written under memoKey.
func (p *sourcePatches) set(memoKey, written string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.written == nil {
		p.written = map[string]string{}
	}
	p.written[memoKey] = written
}

// forget drops what was written under memoKey.
func (p *sourcePatches) forget(memoKey string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.written, memoKey)
}

// hubNamespaces holds, per hub, the namespaces the replicator made sure of there (ensureNamespace) since the hub
// became reachable; OnState forgets a hub's when it becomes unreachable. Its own lock.
type hubNamespaces struct {
	mu    sync.Mutex
	byHub map[string]sets.Set[string]
}

// add records namespace on hub.
func (n *hubNamespaces) add(hub, namespace string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.byHub == nil {
		n.byHub = map[string]sets.Set[string]{}
	}
	if n.byHub[hub] == nil {
		n.byHub[hub] = sets.New[string]()
	}
	n.byHub[hub].Insert(namespace)
}

// has reports whether namespace is known to exist on hub.
func (n *hubNamespaces) has(hub, namespace string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.byHub[hub].Has(namespace)
}

// forget drops what is known of hub's namespaces.
func (n *hubNamespaces) forget(hub string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.byHub, hub)
}

// addOnFacts holds what hubconn.Hub.AddOnInstall last said of each hub's ClusterManagementAddOn
// ("<hub>/<name>" → {installs, known}), for onClusterManagementAddOn alone. Its own lock.
type addOnFacts struct {
	mu   sync.Mutex
	last map[string][2]bool
}

// changed records fact for hub's add-on name and reports whether it differs from the last one recorded (or none
// was).
func (a *addOnFacts) changed(hub, name string, fact [2]bool) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.last == nil {
		a.last = map[string][2]bool{}
	}
	prev, seen := a.last[hub+"/"+name]
	a.last[hub+"/"+name] = fact
	return !seen || prev != fact
}

// objectCounts holds, per hub, the last count of hubObjects and when it was taken, for hubObjects alone. Its own
// lock.
type objectCounts struct {
	mu   sync.Mutex
	last map[string]objectCount
}

// objectCount is a count of hubObjects and when it was taken.
type objectCount struct {
	n  int
	at time.Time
}

// get returns hub's last count, and whether one was taken.
func (o *objectCounts) get(hub string) (objectCount, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	count, ok := o.last[hub]
	return count, ok
}

// set records count for hub.
func (o *objectCounts) set(hub string, count objectCount) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.last == nil {
		o.last = map[string]objectCount{}
	}
	o.last[hub] = count
}
