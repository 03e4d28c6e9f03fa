package replication

import (
	"sort"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/brake"
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
}

// Snapshot returns the current counts.
func (c *Controller) Snapshot() Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Snapshot{
		SourceClusters: map[string]int{}, Copies: map[string]int{}, Conflicts: map[string]int{},
		CaughtUp: map[string]bool{}, KindObjects: map[failoverv1alpha1.ReplicatedKind]int{},
		KindConflicts: map[failoverv1alpha1.ReplicatedKind]int{},
	}
	for cluster, src := range c.sources {
		if src.Hub != "" && c.selected[cluster] {
			s.Clusters++
			s.SourceClusters[src.Hub]++
		}
	}
	for hub, keys := range c.copies {
		s.Copies[hub] = keys.Len()
		s.CaughtUp[hub] = c.listed[hub] && c.dirty[hub] == nil
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
	s.Brakes = c.brake.Engaged() // the brake's lock is never held while c.mu is taken
	return s
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
