package replication

import (
	"maps"
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
	c.mu.Lock()
	s := Snapshot{
		SourceClusters: map[string]int{}, Copies: map[string]int{}, Conflicts: map[string]int{},
		CaughtUp: map[string]bool{}, KindObjects: map[failoverv1alpha1.ReplicatedKind]int{},
		KindConflicts: map[failoverv1alpha1.ReplicatedKind]int{},
	}
	s.Behind = c.steps.behindCounts()
	renewSeen := map[string]map[string]time.Time{}
	for hub, clusters := range c.renewSeen {
		renewSeen[hub] = maps.Clone(clusters)
	}
	for cluster, src := range c.sources {
		if src.Hub != "" && c.selected[cluster] {
			s.Clusters++
			s.SourceClusters[src.Hub]++
		}
	}
	for hub, keys := range c.copies {
		s.Copies[hub] = keys.Len()
		s.CaughtUp[hub] = c.steps.isCaughtUp(hub)
	}
	for hub, conflicts := range c.conflicts {
		s.Conflicts[hub] = len(conflicts)
		for key := range conflicts {
			s.KindConflicts[key.Kind]++
		}
	}
	for kind, keys := range c.objects {
		s.KindObjects[kind] = keys.Len()
	}
	for cluster := range c.identityConflicts {
		s.IdentityConflicts = append(s.IdentityConflicts, cluster)
	}
	sort.Strings(s.IdentityConflicts)
	c.mu.Unlock()
	s.Brakes = c.brake.Engaged() // the brake's lock is never held while c.mu is taken
	s.OnSeveralHubs = c.onSeveralHubs(renewSeen, c.opts.Clock.Now())
	return s
}

// onSeveralHubs returns, sorted, the clusters that renewSeen (hub → cluster → when the replicator saw the lease
// renewed, on its clock) shows renewed on more than one hub within direction.FreshnessFactor of that hub's lease
// duration for the cluster before now. It reads the hubs' caches, so c.mu must not be held.
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
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([][2]string, 0, len(c.sources))
	for cluster, src := range c.sources {
		out = append(out, [2]string{cluster, src.Hub})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}
