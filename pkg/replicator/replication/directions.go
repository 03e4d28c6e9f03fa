package replication

import (
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
)

// clusterDirections is what the replicator decided and saw of each cluster's direction, under one lock of its
// own: the source syncDirection decided and whether the cluster selector selects the cluster there; the hub the
// source's ManagedCluster says the cluster moved from (syncDirection on a change of source, recordSource on each
// sync of that ManagedCluster); and the lease sightings OnLease records. The sightings change atomically with
// the sources: a renewal on the current source that decided it is only recorded (deferred), and a syncDirection
// that read its views before such a renewal decides again (decided).
type clusterDirections struct {
	mu       sync.Mutex
	sources  map[string]direction.Source // cluster → source
	selected map[string]bool             // cluster → selected by the cluster selector on its source
	// movedFrom: cluster → the hub its source's ManagedCluster says it moved from (mirror.MovedFrom).
	movedFrom map[string]string
	// ended: cluster → the moved-from record the replicator ended on the source (endMovedFrom), while the
	// source's cache still shows the version it ended.
	ended     map[string]endedRecord
	renewed   map[string]sets.Set[string]     // hub → clusters whose lease an agent was seen renewing
	renewSeen map[string]map[string]time.Time // hub → cluster → when (the replicator's clock) a renewal of its lease was last seen
	addedSeen map[string]map[string]time.Time // hub → cluster → when (the replicator's clock) its lease was seen appear
	// deferred: cluster → how many renewals were recorded without queueing the cluster's direction.
	deferred map[string]uint64
}

// newClusterDirections returns an empty clusterDirections for hubs.
func newClusterDirections(hubs []string) *clusterDirections {
	d := &clusterDirections{
		sources: map[string]direction.Source{}, selected: map[string]bool{}, movedFrom: map[string]string{}, ended: map[string]endedRecord{},
		renewed: map[string]sets.Set[string]{}, renewSeen: map[string]map[string]time.Time{}, addedSeen: map[string]map[string]time.Time{},
		deferred: map[string]uint64{},
	}
	for _, hub := range hubs {
		d.renewed[hub] = sets.New[string]()
		d.renewSeen[hub] = map[string]time.Time{}
		d.addedSeen[hub] = map[string]time.Time{}
	}
	return d
}

// source returns cluster's source (the zero Source: none) and whether one is known.
func (d *clusterDirections) source(cluster string) (direction.Source, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	src, ok := d.sources[cluster]
	return src, ok
}

// clusters returns the clusters with a source known.
func (d *clusterDirections) clusters() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.sources))
	for cluster := range d.sources {
		out = append(out, cluster)
	}
	return out
}

// sorted returns each known cluster's source hub, sorted by cluster name.
func (d *clusterDirections) sorted() [][2]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([][2]string, 0, len(d.sources))
	for cluster, src := range d.sources {
		out = append(out, [2]string{cluster, src.Hub})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// selectedSources returns how many clusters have a source and are selected there, and how many of them each hub
// is the source of.
func (d *clusterDirections) selectedSources() (int, map[string]int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, byHub := 0, map[string]int{}
	for cluster, src := range d.sources {
		if src.Hub != "" && d.selected[cluster] {
			n++
			byHub[src.Hub]++
		}
	}
	return n, byHub
}

// renewal records an agent's renewal of cluster's lease on hub, seen at now. It reports whether the renewal is
// settled: on the cluster's source, whose lease was the fresh one that decided it, and renewed before — then the
// renewal only counts as deferred, and the caller queues nothing.
func (d *clusterDirections) renewal(hub, cluster string, now time.Time) (settled bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	src := d.sources[cluster]
	settled = d.renewed[hub].Has(cluster) && src.Hub == hub && src.Reason == direction.ReasonLeaseRenewed
	d.renewed[hub].Insert(cluster)
	d.renewSeen[hub][cluster] = now
	if settled {
		d.deferred[cluster]++
	}
	return settled
}

// leaseAdded records a new lease of cluster on hub (or the hub's first listing), seen at now: no renewal of it was
// seen yet.
func (d *clusterDirections) leaseAdded(hub, cluster string, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.renewed[hub].Delete(cluster)
	d.addedSeen[hub][cluster] = now
}

// directionRead is what syncDirection reads of a cluster before it decides.
type directionRead struct {
	prev     direction.Source
	deferred uint64
	renewed  map[string]bool      // hub → an agent was seen renewing the lease there
	seen     map[string]time.Time // hub → when a renewal was last seen (zero: never)
	added    map[string]time.Time // hub → when the lease was seen appear (zero: never)
}

// read returns what syncDirection reads of cluster.
func (d *clusterDirections) read(cluster string) directionRead {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := directionRead{prev: d.sources[cluster], deferred: d.deferred[cluster], renewed: map[string]bool{}, seen: map[string]time.Time{},
		added: map[string]time.Time{}}
	for hub, clusters := range d.renewed {
		r.renewed[hub] = clusters.Has(cluster)
	}
	for hub, clusters := range d.renewSeen {
		r.seen[hub] = clusters[cluster]
	}
	for hub, clusters := range d.addedSeen {
		r.added[hub] = clusters[cluster]
	}
	return r
}

// decided records next as cluster's source and selected as whether the cluster selector selects it there, and,
// when moved, movedFrom as the hub it moved from as the new source's ManagedCluster of resourceVersion version
// says (setMovedFrom). It returns whether the cluster was selected before, and whether a renewal was deferred
// since read returned deferred (the decision must be made again with it).
func (d *clusterDirections) decided(cluster string, next direction.Source, selected, moved bool, movedFrom, version string, deferred uint64) (wasSelected, again bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if moved {
		d.setMovedFromLocked(cluster, next.Hub, movedFrom, version)
	}
	d.sources[cluster] = next
	wasSelected = d.selected[cluster]
	d.selected[cluster] = selected
	return wasSelected, d.deferred[cluster] != deferred
}

// gone forgets everything of cluster: it is gone from every hub.
func (d *clusterDirections) gone(cluster string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.sources, cluster)
	delete(d.selected, cluster)
	delete(d.movedFrom, cluster)
	delete(d.ended, cluster)
	delete(d.deferred, cluster)
	for _, clusters := range d.renewed {
		clusters.Delete(cluster)
	}
	for _, clusters := range d.renewSeen {
		delete(clusters, cluster)
	}
	for _, clusters := range d.addedSeen {
		delete(clusters, cluster)
	}
}

// standDown forgets cluster's source, selection and move (its name stands for several spokes); its lease
// sightings stay: they tell which spoke is alive where.
func (d *clusterDirections) standDown(cluster string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.sources, cluster)
	delete(d.selected, cluster)
	delete(d.movedFrom, cluster)
}

// endedRecord is a moved-from record the replicator ended: the source it was ended on, the hub it named, and the
// resourceVersions of that source's ManagedCluster that still named it (each the version a patch was made from;
// the patches carried them as preconditions, so the version after the last has it ended).
type endedRecord struct {
	source, hub string
	versions    []string
}

// setMovedFrom records hub as the one cluster moved from ("" none), as the ManagedCluster of resourceVersion
// version on source, the cluster's source (as a cache holds it), says. A version the replicator ended the record
// on (endMovedFrom) still names it: that record counts as ended. Any other version is taken as it is.
func (d *clusterDirections) setMovedFrom(cluster, source, hub, version string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.setMovedFromLocked(cluster, source, hub, version)
}

func (d *clusterDirections) setMovedFromLocked(cluster, source, hub, version string) {
	if e, ok := d.ended[cluster]; ok && e.source == source && e.hub == hub && slices.Contains(e.versions, version) {
		d.movedFrom[cluster] = ""
		return
	}
	delete(d.ended, cluster)
	d.movedFrom[cluster] = hub
}

// endMovedFrom records that the replicator ended, on source, cluster's records naming hub as the hub it moved
// from, on the ManagedCluster's resourceVersions versions: while the cluster's source is still source and its
// recorded moved-from hub is hub (or none is recorded yet), those versions count as ended until the source's
// cache shows another one (setMovedFrom). A record that changed meanwhile (a new move) is left.
func (d *clusterDirections) endMovedFrom(cluster, source, hub string, versions []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sources[cluster].Hub != source || (d.movedFrom[cluster] != hub && d.movedFrom[cluster] != "") {
		return
	}
	d.movedFrom[cluster] = ""
	d.ended[cluster] = endedRecord{source: source, hub: hub, versions: slices.Clone(versions)}
}

// movedFromOf returns the hub cluster moved from, as last recorded ("" none).
func (d *clusterDirections) movedFromOf(cluster string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.movedFrom[cluster]
}

// renewSeenAt returns when a renewal of cluster's lease on hub was last seen (zero: never).
func (d *clusterDirections) renewSeenAt(hub, cluster string) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.renewSeen[hub][cluster]
}

// renewSeenAll returns a copy of every sighting: hub → cluster → when.
func (d *clusterDirections) renewSeenAll() map[string]map[string]time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]map[string]time.Time, len(d.renewSeen))
	for hub, clusters := range d.renewSeen {
		out[hub] = maps.Clone(clusters)
	}
	return out
}
