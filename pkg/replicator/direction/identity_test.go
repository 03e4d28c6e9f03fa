package direction_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
)

// holding is a reachable hub holding the cluster's ManagedCluster, whose agent reports claim and whose copy
// records recorded ("" for none).
func holding(hub, claim, recorded string) direction.HubView {
	return direction.HubView{Hub: hub, Reachable: true, HasCluster: true, IsCopy: recorded != "", ClusterID: claim, RecordedClusterID: recorded}
}

func TestDecideIdentity(t *testing.T) {
	down := holding(hubB, "spoke-2", "")
	down.Reachable = false
	absent := direction.HubView{Hub: hubB, Reachable: true, ClusterID: "spoke-2"}
	tests := []struct {
		name string
		hubs []direction.HubView
		want direction.Identity
	}{
		{
			name: "rule 4: no claim anywhere, the name is replicated as it is",
			hubs: []direction.HubView{holding(hubA, "", ""), holding(hubB, "", "")},
			want: direction.Identity{},
		},
		{
			name: "rule 4: records without a claim keep what they record",
			hubs: []direction.HubView{holding(hubA, "", ""), holding(hubB, "", "spoke-1")},
			want: direction.Identity{Seen: "hub-b: spoke-1 (copy)"},
		},
		{
			name: "rule 3: one claim, the copy not recorded yet",
			hubs: []direction.HubView{holding(hubA, "spoke-1", ""), holding(hubB, "", "")},
			want: direction.Identity{ID: "spoke-1", Seen: "hub-a: spoke-1 (claim)"},
		},
		{
			name: "rule 3: after a failover the agent reports on the copy it joined, made for it",
			hubs: []direction.HubView{holding(hubA, "spoke-1", ""), holding(hubB, "spoke-1", "spoke-1")},
			want: direction.Identity{ID: "spoke-1", Seen: "hub-a: spoke-1 (claim); hub-b: spoke-1 (claim); hub-b: spoke-1 (copy)"},
		},
		{
			name: "rule 3: a record alone follows the claim (the spoke's identity changed, or the name passed to a new spoke)",
			hubs: []direction.HubView{holding(hubA, "spoke-1b", ""), holding(hubB, "", "spoke-1")},
			want: direction.Identity{ID: "spoke-1b", Seen: "hub-a: spoke-1b (claim); hub-b: spoke-1 (copy)"},
		},
		{
			name: "rule 2: two spokes joined two hubs under one name (local-cluster)",
			hubs: []direction.HubView{holding(hubA, "spoke-1", ""), holding(hubB, "spoke-2", "")},
			want: direction.Identity{Conflict: true, Seen: "hub-a: spoke-1 (claim); hub-b: spoke-2 (claim)"},
		},
		{
			name: "rule 2: a spoke joined a copy made for another, whose own hub is down",
			hubs: []direction.HubView{{Hub: hubA}, holding(hubB, "spoke-2", "spoke-1")},
			want: direction.Identity{Conflict: true, Seen: "hub-b: spoke-2 (claim); hub-b: spoke-1 (copy)"},
		},
		{
			name: "rule 2: three hubs, the third names a second spoke",
			hubs: []direction.HubView{holding(hubA, "spoke-1", ""), holding(hubB, "", "spoke-1"), holding(hubC, "spoke-2", "")},
			want: direction.Identity{Conflict: true, Seen: "hub-a: spoke-1 (claim); hub-b: spoke-1 (copy); hub-c: spoke-2 (claim)"},
		},
		{
			name: "rule 1: an unreachable hub contributes nothing",
			hubs: []direction.HubView{holding(hubA, "spoke-1", ""), down},
			want: direction.Identity{ID: "spoke-1", Seen: "hub-a: spoke-1 (claim)"},
		},
		{
			name: "rule 1: a hub without the ManagedCluster contributes nothing",
			hubs: []direction.HubView{holding(hubA, "spoke-1", ""), absent},
			want: direction.Identity{ID: "spoke-1", Seen: "hub-a: spoke-1 (claim)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, direction.DecideIdentity(tt.hubs)); diff != "" {
				t.Errorf("DecideIdentity (-want +got):\n%s", diff)
			}
		})
	}
}
