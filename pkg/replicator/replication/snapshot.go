package replication

import (
	"sort"
	"time"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/brake"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
)

// Snapshot is the controller's state for the status of the ReplicationConfig.
type Snapshot struct {
	// Clusters is the number of selected clusters with a known source.
	Clusters int
	// SourceClusters counts the selected clusters by source hub.
	SourceClusters map[string]int
	// Copies and Conflicts count, by hub, the copies in step and the conflicts.
	Copies, Conflicts map[string]int
	// CaughtUp is true for hubs that have no out-of-step object left since they became ready.
	CaughtUp map[string]bool
	// KindObjects and KindConflicts count source objects and conflicts by kind.
	KindObjects, KindConflicts map[failoverv1alpha1.ReplicatedKind]int
	// IdentityConflicts are the cluster names that stand for more than one spoke (none of them is replicated),
	// sorted.
	IdentityConflicts []string
	// Brakes are the engaged delete brakes, sorted by hub.
	Brakes []brake.State
	// Behind counts, by ready hub, the objects it is not in step with (metrics.ObjectsBehind).
	Behind map[string]int
	// OnSeveralHubs are the clusters whose lease was seen renewed on more than one hub within
	// direction.FreshnessFactor lease durations of the snapshot (metrics.ClustersOnSeveralHubs), sorted.
	OnSeveralHubs []string
}

// Snapshot returns the current counts.
func (c *Controller) Snapshot() Snapshot {
	s := Snapshot{CaughtUp: map[string]bool{}}
	s.Behind = c.steps.behindCounts()
	hubs := make([]string, 0, len(c.opts.Hubs))
	for _, h := range c.opts.Hubs {
		hubs = append(hubs, h.Name())
		s.CaughtUp[h.Name()] = c.steps.isCaughtUp(h.Name())
	}
	s.Copies, s.Conflicts, s.KindConflicts = c.hubCopies.counts(hubs)
	s.KindObjects, _ = c.objects.counts()
	s.IdentityConflicts = c.identityConflicts.names()
	s.Brakes = c.brake.Engaged()
	s.Clusters, s.SourceClusters = c.directions.selectedSources()
	s.OnSeveralHubs = c.onSeveralHubs(c.directions.renewSeenAll(), c.opts.Clock.Now())
	return s
}

// onSeveralHubs returns, sorted, the clusters that renewSeen (hub → cluster → when the replicator saw the lease
// renewed, on its clock) shows renewed on more than one hub within direction.FreshnessFactor of that hub's lease
// duration for the cluster before now. It reads the hubs' caches.
func (c *Controller) onSeveralHubs(renewSeen map[string]map[string]time.Time, now time.Time) []string {
	fresh := map[string]int{}
	for hub, clusters := range renewSeen {
		h := c.byName[hub]
		for cluster, seen := range clusters {
			duration := direction.DefaultLeaseDuration
			if h != nil {
				if mc, ok := h.Cluster(cluster); ok && mc.LeaseDuration > 0 {
					duration = mc.LeaseDuration
				}
			}
			if !seen.IsZero() && now.Sub(seen) <= direction.FreshnessFactor*duration {
				fresh[cluster]++
			}
		}
	}
	var out []string
	for cluster, n := range fresh {
		if n > 1 {
			out = append(out, cluster)
		}
	}
	sort.Strings(out)
	return out
}

// Sources returns each known cluster's source hub, sorted by cluster name (for logs and tests).
func (c *Controller) Sources() [][2]string {
	return c.directions.sorted()
}
