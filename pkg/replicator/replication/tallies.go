package replication

import (
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// sourceObjects holds, per replicated kind, the keys whose object the last sync found on its source
// (recordSource writes it; justGone takes a key out when the source's cache no longer shows it). Its own lock.
type sourceObjects struct {
	mu     sync.Mutex
	byKind map[failoverv1alpha1.ReplicatedKind]sets.Set[Key]
}

// set records whether key's object is on its source.
func (o *sourceObjects) set(key Key, present bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byKind == nil {
		o.byKind = map[failoverv1alpha1.ReplicatedKind]sets.Set[Key]{}
	}
	if present {
		if o.byKind[key.Kind] == nil {
			o.byKind[key.Kind] = sets.New[Key]()
		}
		o.byKind[key.Kind].Insert(key)
	} else {
		o.byKind[key.Kind].Delete(key)
	}
}

// takeOut reports whether key's object was recorded on its source, and takes it out.
func (o *sourceObjects) takeOut(key Key) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.byKind[key.Kind].Has(key) {
		return false
	}
	o.byKind[key.Kind].Delete(key)
	return true
}

// named returns the keys of kind whose object is named name.
func (o *sourceObjects) named(kind failoverv1alpha1.ReplicatedKind, name string) []Key {
	o.mu.Lock()
	defer o.mu.Unlock()
	var keys []Key
	for key := range o.byKind[kind] {
		if key.Name == name {
			keys = append(keys, key)
		}
	}
	return keys
}

// counts returns how many objects of each kind are recorded, and in all.
func (o *sourceObjects) counts() (map[failoverv1alpha1.ReplicatedKind]int, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	byKind, total := map[failoverv1alpha1.ReplicatedKind]int{}, 0
	for kind, keys := range o.byKind {
		byKind[kind] = keys.Len()
		total += keys.Len()
	}
	return byKind, total
}

// hubCopies holds, per hub, the keys whose copy there is in step (setCopy) and the keys in conflict there
// (recordConflict), since the hub became reachable: OnState forgets a hub's when it becomes unreachable. Its own
// lock.
type hubCopies struct {
	mu        sync.Mutex
	copies    map[string]sets.Set[Key]
	conflicts map[string]map[Key]mirror.Conflict
}

// setCopy records whether hub holds a copy of key in step.
func (h *hubCopies) setCopy(hub string, key Key, isCopy bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.copies == nil {
		h.copies = map[string]sets.Set[Key]{}
	}
	if h.copies[hub] == nil {
		h.copies[hub] = sets.New[Key]()
	}
	if isCopy {
		h.copies[hub].Insert(key)
	} else {
		h.copies[hub].Delete(key)
	}
}

// setConflict records key's conflict on hub (mirror.ConflictNone: none) and returns the one recorded before, and
// whether there was one.
func (h *hubCopies) setConflict(hub string, key Key, conflict mirror.Conflict) (prev mirror.Conflict, had bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	prev, had = h.conflicts[hub][key]
	if conflict == mirror.ConflictNone {
		delete(h.conflicts[hub], key)
		return prev, had
	}
	if h.conflicts == nil {
		h.conflicts = map[string]map[Key]mirror.Conflict{}
	}
	if h.conflicts[hub] == nil {
		h.conflicts[hub] = map[Key]mirror.Conflict{}
	}
	h.conflicts[hub][key] = conflict
	return prev, had
}

// forget drops what is recorded of hub.
func (h *hubCopies) forget(hub string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.copies, hub)
	delete(h.conflicts, hub)
}

// counts returns, for each of hubs, how many copies in step and conflicts it has, and the conflicts by kind.
func (h *hubCopies) counts(hubs []string) (copies, conflicts map[string]int, byKind map[failoverv1alpha1.ReplicatedKind]int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	copies, conflicts, byKind = map[string]int{}, map[string]int{}, map[failoverv1alpha1.ReplicatedKind]int{}
	for _, hub := range hubs {
		copies[hub] = h.copies[hub].Len()
		conflicts[hub] = len(h.conflicts[hub])
		for key := range h.conflicts[hub] {
			byKind[key.Kind]++
		}
	}
	return copies, conflicts, byKind
}

// fenceMarkMemo holds, per ready hub, the fence marks the replicator wrote on each cluster's namespace there
// ("" none, "<source>@<since>") since the hub became ready (reset), so that an unchanged mark is not written
// again; a hub not ready has none (forget), and nothing is recorded for it. Its own lock.
type fenceMarkMemo struct {
	mu    sync.Mutex
	byHub map[string]map[string]string
}

// of returns the mark written on cluster's namespace on hub, and whether one is known.
func (f *fenceMarkMemo) of(hub, cluster string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	mark, ok := f.byHub[hub][cluster]
	return mark, ok
}

// wrote records mark as written on cluster's namespace on hub, while hub is ready.
func (f *fenceMarkMemo) wrote(hub, cluster, mark string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byHub[hub] != nil {
		f.byHub[hub][cluster] = mark
	}
}

// reset starts hub's record afresh, empty: it became ready.
func (f *fenceMarkMemo) reset(hub string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byHub == nil {
		f.byHub = map[string]map[string]string{}
	}
	f.byHub[hub] = map[string]string{}
}

// resetIfReady empties hub's record while it is kept (the hub is ready): its marks went back with a restore.
func (f *fenceMarkMemo) resetIfReady(hub string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byHub[hub] != nil {
		f.byHub[hub] = map[string]string{}
	}
}

// forget drops hub's record: it is not ready.
func (f *fenceMarkMemo) forget(hub string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.byHub, hub)
}

// identityConflicts holds the cluster names that stand for several spokes (identityConflict), written by
// checkIdentity alone. Its own lock.
type identityConflicts struct {
	mu        sync.Mutex
	byCluster map[string]identityConflict
}

// of returns cluster's conflict, and whether it has one.
func (i *identityConflicts) of(cluster string) (identityConflict, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	ic, ok := i.byCluster[cluster]
	return ic, ok
}

// record brings cluster's conflict in line with id, decided at now: a conflict is recorded (its first time kept),
// one that ended and was confirmed (confirmed) is dropped, and one that ended unconfirmed, or was recorded by
// another check since the caller read it, stands. It returns the identity that holds, the conflict recorded
// before and whether there was one, and how many names are in conflict now.
func (i *identityConflicts) record(cluster string, id direction.Identity, confirmed bool, now time.Time) (direction.Identity, identityConflict, bool, int) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.byCluster == nil {
		i.byCluster = map[string]identityConflict{}
	}
	recorded, had := i.byCluster[cluster]
	switch {
	case id.Conflict && had:
		i.byCluster[cluster] = identityConflict{seen: id.Seen, since: recorded.since}
	case id.Conflict:
		i.byCluster[cluster] = identityConflict{seen: id.Seen, since: now}
	case had && confirmed:
		delete(i.byCluster, cluster)
	case had:
		// Seen by another check meanwhile, or not confirmed yet: still a conflict.
		id = direction.Identity{Conflict: true, Seen: recorded.seen}
	}
	return id, recorded, had, len(i.byCluster)
}

// names returns the names in conflict, sorted.
func (i *identityConflicts) names() []string {
	i.mu.Lock()
	defer i.mu.Unlock()
	var out []string
	for cluster := range i.byCluster {
		out = append(out, cluster)
	}
	sort.Strings(out)
	return out
}
