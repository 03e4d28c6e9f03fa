package direction_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
)

const (
	hubA = "hub-a"
	hubB = "hub-b"
	hubC = "hub-c"
)

// now is the fixed "current time" of every case; no case reads the wall clock.
var now = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

// ago returns now - d.
func ago(d time.Duration) time.Time { return now.Add(-d) }

// earlier is a previous decision's Since, well before now.
var earlier = ago(time.Hour)

// renewing is a reachable hub whose lease an agent renewed at renewTime (default lease duration), a renewal the
// replicator saw at that time on its own clock (the two clocks agree).
func renewing(hub string, renewTime time.Time) direction.HubView {
	return direction.HubView{Hub: hub, Reachable: true, HasLease: true, RenewTime: renewTime, AgentRenewed: true, HasCluster: true, RenewSeen: renewTime}
}

// unseen is v, a lease the replicator has not seen renewed since it started (it listed it).
func unseen(v direction.HubView) direction.HubView {
	return with(v, func(v *direction.HubView) { v.RenewSeen = time.Time{} })
}

// skewed is v with the agent's clock off by d from the replicator's: its renewTime moves, not when the
// replicator saw the renewal.
func skewed(v direction.HubView, d time.Duration) direction.HubView {
	return with(v, func(v *direction.HubView) { v.RenewTime = v.RenewTime.Add(d) })
}

// original is a reachable hub holding the cluster's original (non-copy) ManagedCluster, without a lease.
func original(hub string) direction.HubView {
	return direction.HubView{Hub: hub, Reachable: true, HasCluster: true}
}

// copyOn is a reachable hub holding a copy of the ManagedCluster that records recordedHub since since.
func copyOn(hub, recordedHub string, since time.Time) direction.HubView {
	return direction.HubView{Hub: hub, Reachable: true, HasCluster: true, IsCopy: true, RecordedHub: recordedHub, RecordedSince: since}
}

// empty is a reachable hub with neither the cluster nor its lease.
func empty(hub string) direction.HubView { return direction.HubView{Hub: hub, Reachable: true} }

func with(v direction.HubView, f func(*direction.HubView)) direction.HubView {
	f(&v)
	return v
}

func unreachable(v direction.HubView) direction.HubView {
	return with(v, func(v *direction.HubView) { v.Reachable = false })
}

func leaseDuration(v direction.HubView, d time.Duration) direction.HubView {
	return with(v, func(v *direction.HubView) { v.LeaseDuration = d })
}

func src(hub string, since time.Time, reason string) direction.Source {
	return direction.Source{Hub: hub, Since: since, Reason: reason}
}

type decideCase struct {
	name string
	prev direction.Source
	hubs []direction.HubView
	want direction.Source
}

func runDecide(t *testing.T, cases []decideCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := direction.DecideSource(tc.prev, tc.hubs, now)
			if tc.want.Epoch == 0 && tc.want.RenewTime.IsZero() {
				// A case that names no epoch checks the hub, time and rule only.
				got.Epoch, got.RenewTime = 0, time.Time{}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DecideSource() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Rule 1: among reachable hubs with an agent-renewed, fresh lease, the newest renewTime wins.
func TestDecideSourceRule1FreshestRenewedLease(t *testing.T) {
	runDecide(t, []decideCase{
		{
			name: "single renewed lease, no previous source: chosen since now",
			hubs: []direction.HubView{original(hubA), renewing(hubB, ago(10*time.Second))},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "newest renewTime wins over an older one later in spec order",
			hubs: []direction.HubView{renewing(hubA, ago(30*time.Second)), renewing(hubB, ago(10*time.Second))},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "newest renewTime wins wherever it is in spec order",
			hubs: []direction.HubView{renewing(hubA, ago(5*time.Second)), renewing(hubB, ago(50*time.Second)), renewing(hubC, ago(20*time.Second))},
			want: src(hubA, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "fresh lease elsewhere replaces the previous source, since now",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{original(hubA), renewing(hubB, ago(time.Second))},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "lease rule wins over recorded annotations (rule 3) without a previous source",
			hubs: []direction.HubView{copyOn(hubA, hubC, earlier), renewing(hubB, ago(time.Second)), copyOn(hubC, hubC, earlier)},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "lease rule wins over the original ManagedCluster (rule 4) without a previous source",
			hubs: []direction.HubView{original(hubA), with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) { v.IsCopy = true })},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
	})
}

// Rule 1 exclusions: unreachable hubs, leases not renewed by an agent, missing and stale leases do not count.
func TestDecideSourceRule1IgnoredLeases(t *testing.T) {
	runDecide(t, []decideCase{
		{
			name: "unreachable hub with the newest lease is ignored",
			hubs: []direction.HubView{unreachable(renewing(hubA, ago(time.Second))), renewing(hubB, ago(30*time.Second))},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "only lease on an unreachable hub: previous source kept",
			prev: src(hubB, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{unreachable(renewing(hubA, ago(time.Second))), original(hubB)},
			want: src(hubB, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "hub-created lease (not AgentRenewed) with the newest renewTime is ignored",
			hubs: []direction.HubView{
				with(renewing(hubA, ago(time.Second)), func(v *direction.HubView) { v.AgentRenewed = false }),
				renewing(hubB, ago(40*time.Second)),
			},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "hub-created lease alone does not take the source from the previous hub",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{original(hubA), with(renewing(hubB, now), func(v *direction.HubView) { v.AgentRenewed = false })},
			want: src(hubA, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "RenewTime without HasLease is ignored",
			hubs: []direction.HubView{
				with(renewing(hubA, ago(time.Second)), func(v *direction.HubView) { v.HasLease = false }),
				renewing(hubB, ago(40*time.Second)),
			},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "LeaseDuration 0 uses DefaultLeaseDuration: 119s old is fresh",
			prev: src(hubB, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{leaseDuration(renewing(hubA, ago(freshnessWindow(0)-time.Second)), 0), original(hubB)},
			want: src(hubA, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "LeaseDuration 0 uses DefaultLeaseDuration: exactly FreshnessFactor x 60s old is still fresh",
			prev: src(hubB, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{leaseDuration(renewing(hubA, ago(freshnessWindow(0))), 0), original(hubB)},
			want: src(hubA, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "LeaseDuration 0 uses DefaultLeaseDuration: 1ns past FreshnessFactor x 60s is stale",
			prev: src(hubB, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{leaseDuration(renewing(hubA, ago(freshnessWindow(0)+time.Nanosecond)), 0), original(hubB)},
			want: src(hubB, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "negative LeaseDuration uses DefaultLeaseDuration",
			prev: src(hubB, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{leaseDuration(renewing(hubA, ago(100*time.Second)), -time.Second), original(hubB)},
			want: src(hubA, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "explicit DefaultLeaseDuration: 121s old is stale",
			prev: src(hubB, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{leaseDuration(renewing(hubA, ago(121*time.Second)), direction.DefaultLeaseDuration), original(hubB)},
			want: src(hubB, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "per-hub short LeaseDuration: a newer lease stale under its own 10s duration loses to an older fresh one",
			hubs: []direction.HubView{
				leaseDuration(renewing(hubA, ago(25*time.Second)), 10*time.Second),  // 25s > 2 x 10s: stale
				leaseDuration(renewing(hubB, ago(100*time.Second)), 60*time.Second), // 100s <= 2 x 60s: fresh
			},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "per-hub long LeaseDuration: 500s old is fresh under a 300s duration",
			prev: src(hubB, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{leaseDuration(renewing(hubA, ago(500*time.Second)), 300*time.Second), original(hubB)},
			want: src(hubA, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "per-hub durations are not shared: the 300s duration of one hub does not keep another's lease fresh",
			prev: src(hubC, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{
				leaseDuration(renewing(hubA, ago(500*time.Second)), 0),
				leaseDuration(empty(hubB), 300*time.Second),
				original(hubC),
			},
			want: src(hubC, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "a copy recording the spoke's identity, joined by an agent that reports no claim yet, is not counted",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{
				with(renewing(hubA, ago(30*time.Second)), func(v *direction.HubView) { v.ClusterID = "spoke-1" }),
				with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) { v.IsCopy, v.RecordedClusterID = true, "spoke-1" }),
			},
			want: src(hubA, earlier, direction.ReasonLeaseRenewed),
		},
		{
			name: "the same copy once its agent reports the claim the copy records counts",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{
				with(renewing(hubA, ago(30*time.Second)), func(v *direction.HubView) { v.ClusterID = "spoke-1" }),
				with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) {
					v.IsCopy, v.RecordedClusterID, v.ClusterID = true, "spoke-1", "spoke-1"
				}),
			},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "just started (no renewal seen yet): a copy without a claim, the spoke it records with a lease elsewhere, decides nothing",
			hubs: []direction.HubView{
				with(renewing(hubA, ago(30*time.Second)), func(v *direction.HubView) { v.ClusterID, v.RenewSeen = "spoke-1", time.Time{} }),
				with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) {
					v.IsCopy, v.RecordedClusterID, v.RenewSeen = true, "spoke-1", time.Time{}
				}),
			},
			want: direction.Source{},
		},
		{
			name: "just started, a previous source known: it is kept until a renewal is seen",
			prev: src(hubB, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{
				with(renewing(hubA, ago(30*time.Second)), func(v *direction.HubView) { v.ClusterID, v.RenewSeen = "spoke-1", time.Time{} }),
				with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) {
					v.IsCopy, v.RecordedClusterID, v.RenewSeen = true, "spoke-1", time.Time{}
				}),
			},
			want: src(hubB, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "started a moment ago, the copy's renewal seen first: the spoke it records, its lease not seen renewing yet on a hub in view 2s, decides nothing",
			hubs: []direction.HubView{
				with(unseen(renewing(hubA, ago(30*time.Second))), func(v *direction.HubView) { v.ClusterID, v.ReadySince = "spoke-1", ago(2*time.Second) }),
				with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) {
					v.IsCopy, v.RecordedClusterID, v.ReadySince = true, "spoke-1", ago(2*time.Second)
				}),
			},
			want: direction.Source{},
		},
		{
			name: "the same, a previous source known: it is kept",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{
				with(unseen(renewing(hubA, ago(30*time.Second))), func(v *direction.HubView) { v.ClusterID, v.ReadySince = "spoke-1", ago(2*time.Second) }),
				with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) {
					v.IsCopy, v.RecordedClusterID, v.ReadySince = true, "spoke-1", ago(2*time.Second)
				}),
			},
			want: src(hubA, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "the same once a renewal of the recorded spoke's lease is seen: the copy is not counted",
			hubs: []direction.HubView{
				with(renewing(hubA, ago(500*time.Millisecond)), func(v *direction.HubView) { v.ClusterID, v.ReadySince = "spoke-1", ago(3*time.Second) }),
				with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) {
					v.IsCopy, v.RecordedClusterID, v.ReadySince = true, "spoke-1", ago(3*time.Second)
				}),
			},
			want: src(hubA, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "the same with no renewal of the recorded spoke's lease seen while its hub was in view FreshnessFactor x its lease duration: the copy counts",
			hubs: []direction.HubView{
				with(unseen(renewing(hubA, ago(10*time.Minute))), func(v *direction.HubView) {
					v.ClusterID, v.ReadySince = "spoke-1", ago(freshnessWindow(0))
				}),
				with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) {
					v.IsCopy, v.RecordedClusterID, v.ReadySince = true, "spoke-1", ago(freshnessWindow(0))
				}),
			},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "a hub listed again 5s ago whose lease of the recorded spoke was last seen renewed before: the copy decides nothing yet",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{
				with(renewing(hubA, ago(freshnessWindow(0)+time.Minute)), func(v *direction.HubView) { v.ClusterID, v.ReadySince = "spoke-1", ago(5*time.Second) }),
				with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) { v.IsCopy, v.RecordedClusterID = true, "spoke-1" }),
			},
			want: src(hubA, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "three hubs: the spoke renews a third hub with a higher epoch and its claim; a copy that may be a second spoke's does not hold that move up",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{
				with(renewing(hubA, ago(freshnessWindow(0)+time.Minute)), func(v *direction.HubView) { v.ClusterID, v.ReadySince = "spoke-1", ago(5*time.Second) }),
				with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) { v.IsCopy, v.RecordedClusterID = true, "spoke-1" }),
				with(renewing(hubC, ago(2*time.Second)), func(v *direction.HubView) {
					v.IsCopy, v.RecordedClusterID, v.ClusterID, v.Epoch = true, "spoke-1", "spoke-1", 2
				}),
			},
			want: src(hubC, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "three hubs: the copy that may be a second spoke's ranks first (same epoch, newer renewal): nothing decided",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{
				with(renewing(hubA, ago(freshnessWindow(0)+time.Minute)), func(v *direction.HubView) { v.ClusterID, v.ReadySince = "spoke-1", ago(5*time.Second) }),
				with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) { v.IsCopy, v.RecordedClusterID = true, "spoke-1" }),
				with(renewing(hubC, ago(2*time.Second)), func(v *direction.HubView) {
					v.IsCopy, v.RecordedClusterID, v.ClusterID = true, "spoke-1", "spoke-1"
				}),
			},
			want: src(hubA, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "the same copy counts without a claim once the hub of the spoke it records is unreachable",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{
				unreachable(with(renewing(hubA, ago(30*time.Second)), func(v *direction.HubView) { v.ClusterID = "spoke-1" })),
				with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) { v.IsCopy, v.RecordedClusterID = true, "spoke-1" }),
			},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "the same copy counts without a claim once the lease of the spoke it records is stale there",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{
				with(renewing(hubA, ago(freshnessWindow(0)+time.Second)), func(v *direction.HubView) { v.ClusterID = "spoke-1" }),
				with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) { v.IsCopy, v.RecordedClusterID = true, "spoke-1" }),
			},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "a copy that records no identity (the source's agent reports none) counts without a claim",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{renewing(hubA, ago(30*time.Second)), with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) { v.IsCopy = true })},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "every lease stale, no previous source: falls through to the original ManagedCluster",
			hubs: []direction.HubView{original(hubA), with(renewing(hubB, ago(10*time.Minute)), func(v *direction.HubView) { v.IsCopy = true })},
			want: src(hubA, now, direction.ReasonOriginal),
		},
	})
}

// Right after a start, a lease an agent renewed within CreationSlack of its creation (not AgentRenewed) may be the
// agent's newest: `TestDeleteOnTheNewSourceWhileTheReplicatorIsDown` restarted the replicator 6 s after the cluster
// moved to hub B, whose copy's lease the agent had renewed 4.6 s after OCM's hub made it; hub A, the hub the agent
// left, was taken for the source, and its original ManifestWork was made a copy of B's Terminating one.
func TestDecideSourceRule1UnprovenNewerLease(t *testing.T) {
	// joined is hub's copy that an agent joined a moment after OCM's hub made its lease: renewed 1s ago, not
	// shown renewed by an agent, not seen renewing, on a hub in view for readyFor.
	joined := func(hub string, readyFor time.Duration) direction.HubView {
		return with(unseen(renewing(hub, ago(time.Second))), func(v *direction.HubView) {
			v.IsCopy, v.AgentRenewed, v.ReadySince = true, false, ago(readyFor)
		})
	}
	// left is the hub the agent left: its lease renewed by an agent 20s ago, not seen renewing since the start.
	left := func(hub string, readyFor time.Duration) direction.HubView {
		return with(unseen(renewing(hub, ago(20*time.Second))), func(v *direction.HubView) { v.ReadySince = ago(readyFor) })
	}
	runDecide(t, []decideCase{
		{
			name: "just started: the joined copy's lease is newer than the left hub's: nothing decided",
			hubs: []direction.HubView{left(hubA, 2*time.Second), joined(hubB, 2*time.Second)},
			want: direction.Source{},
		},
		{
			name: "the same with a previous source: it is kept",
			prev: src(hubB, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{left(hubA, 2*time.Second), joined(hubB, 2*time.Second)},
			want: src(hubB, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "a renewal seen on the joined copy: it is the source",
			hubs: []direction.HubView{
				left(hubA, 3*time.Second),
				with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) { v.IsCopy, v.ReadySince = true, ago(3*time.Second) }),
			},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "no renewal seen while the hubs were in view FreshnessFactor x the lease duration: the agent-renewed lease",
			hubs: []direction.HubView{left(hubA, freshnessWindow(0)), joined(hubB, freshnessWindow(0))},
			want: src(hubA, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "an older lease no agent is shown to have renewed holds nothing up",
			hubs: []direction.HubView{
				left(hubA, 2*time.Second),
				with(joined(hubB, 2*time.Second), func(v *direction.HubView) { v.RenewTime = ago(time.Minute) }),
			},
			want: src(hubA, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "just started, no lease an agent renewed: nothing decided, not the original ManagedCluster",
			hubs: []direction.HubView{
				with(left(hubA, 2*time.Second), func(v *direction.HubView) { v.AgentRenewed = false; v.RenewTime = ago(time.Minute) }),
				joined(hubB, 2*time.Second),
			},
			want: direction.Source{},
		},
		{
			name: "just started, a cluster that just joined hub-a: its own lease, not yet shown renewed, holds nothing up",
			hubs: []direction.HubView{
				with(left(hubA, 2*time.Second), func(v *direction.HubView) { v.AgentRenewed = false; v.RenewTime = ago(time.Second) }),
				empty(hubB),
			},
			want: src(hubA, now, direction.ReasonOriginal),
		},
		{
			name: "just started with a hub down, no lease an agent renewed: rule 4 decides at once",
			hubs: []direction.HubView{
				unreachable(left(hubA, 2*time.Second)),
				with(joined(hubB, 2*time.Second), func(v *direction.HubView) { v.RecordedHub = hubA }),
			},
			want: src(hubA, now, direction.ReasonRecorded),
		},
		{
			name: "the same after FreshnessFactor x the lease duration in view: the original ManagedCluster",
			hubs: []direction.HubView{
				with(left(hubA, freshnessWindow(0)), func(v *direction.HubView) { v.AgentRenewed = false; v.RenewTime = ago(time.Minute) }),
				joined(hubB, freshnessWindow(0)),
			},
			want: src(hubA, now, direction.ReasonOriginal),
		},
	})
}

// A spoke that joined its hub a moment ago has a lease no agent is shown to have renewed (OCM's hub made it, and
// the agent's first renewal came within CreationSlack): it is not shown dead. `TestClusterNameOfTwoSpokes`: a
// second spoke of the name joined hub B's copy of the first spoke's ManagedCluster 40 s after the first joined hub
// A; the copy's lease counted, hub B was taken for the source, and the first spoke's ManagedCluster and
// ManifestWork on hub A were made copies of hub B's.
func TestDecideSourceRule1JustJoinedSpokeIsNotDead(t *testing.T) {
	justJoined := with(renewing(hubA, ago(40*time.Second)), func(v *direction.HubView) {
		v.ClusterID, v.AgentRenewed, v.RenewSeen, v.LeaseAddedSeen = "spoke-1", false, time.Time{}, ago(40*time.Second)
	})
	secondSpoke := with(renewing(hubB, ago(time.Second)), func(v *direction.HubView) { v.IsCopy, v.RecordedClusterID = true, "spoke-1" })
	runDecide(t, []decideCase{
		{
			name: "the copy joined by an agent that reports no claim decides nothing: the previous source is kept",
			prev: src(hubA, earlier, direction.ReasonOriginal),
			hubs: []direction.HubView{justJoined, secondSpoke},
			want: src(hubA, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "once that agent reports the claim the copy records, the copy counts (the spoke moved)",
			prev: src(hubA, earlier, direction.ReasonOriginal),
			hubs: []direction.HubView{justJoined, with(secondSpoke, func(v *direction.HubView) { v.ClusterID = "spoke-1" })},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "a lease no agent renewed, seen appear FreshnessFactor x the lease duration ago: not held for, the copy counts",
			prev: src(hubA, earlier, direction.ReasonOriginal),
			hubs: []direction.HubView{
				with(justJoined, func(v *direction.HubView) { v.LeaseAddedSeen = ago(freshnessWindow(0)) }),
				secondSpoke,
			},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "the lease's appearance not handled yet, its hub in view 10s: held for, the previous source kept",
			prev: src(hubA, earlier, direction.ReasonOriginal),
			hubs: []direction.HubView{
				with(justJoined, func(v *direction.HubView) { v.LeaseAddedSeen, v.ReadySince = time.Time{}, ago(10*time.Second) }),
				secondSpoke,
			},
			want: src(hubA, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "a spoke whose lease was renewed by an agent and is stale is not held for: the copy counts",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{
				with(justJoined, func(v *direction.HubView) { v.AgentRenewed = true; v.RenewTime = ago(10 * time.Minute) }),
				secondSpoke,
			},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
	})
}

// Rule 1 ties: the previous source is kept, else the earlier hub in spec order.
func TestDecideSourceRule1Ties(t *testing.T) {
	same := ago(10 * time.Second)
	runDecide(t, []decideCase{
		{
			name: "tie without previous source: earlier hub in spec order",
			hubs: []direction.HubView{renewing(hubA, same), renewing(hubB, same)},
			want: src(hubA, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "tie, previous source later in spec order: previous kept with its since",
			prev: src(hubB, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{renewing(hubA, same), renewing(hubB, same)},
			want: src(hubB, earlier, direction.ReasonLeaseRenewed),
		},
		{
			name: "three-way tie, previous source last: previous kept",
			prev: src(hubC, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{renewing(hubA, same), renewing(hubB, same), renewing(hubC, same)},
			want: src(hubC, earlier, direction.ReasonLeaseRenewed),
		},
		{
			name: "tie, previous source not among the tied hubs: earlier tied hub in spec order, since now",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{original(hubA), renewing(hubB, same), renewing(hubC, same)},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "previous source tied with an older lease but a third hub is newer: newer wins",
			prev: src(hubB, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{renewing(hubA, same), renewing(hubB, same), renewing(hubC, same.Add(time.Millisecond))},
			want: src(hubC, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "previous source tie with the first hub is not lost to a later equal hub",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{renewing(hubA, same), renewing(hubB, same), renewing(hubC, same)},
			want: src(hubA, earlier, direction.ReasonLeaseRenewed),
		},
	})
}

// Rule 1 Since: kept when the hub does not change, now when it does.
func TestDecideSourceRule1Since(t *testing.T) {
	runDecide(t, []decideCase{
		{
			name: "no previous source: the since the copies record for the chosen hub, not now",
			hubs: []direction.HubView{renewing(hubA, ago(10*time.Second)), copyOn(hubB, hubA, ago(2*time.Hour)), copyOn(hubC, hubA, ago(3*time.Hour))},
			want: src(hubA, ago(3*time.Hour), direction.ReasonLeaseRenewed),
		},
		{
			name: "no previous source, copies record another hub: now",
			hubs: []direction.HubView{renewing(hubA, ago(10*time.Second)), copyOn(hubB, hubC, ago(2*time.Hour))},
			want: src(hubA, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "same hub keeps previous since",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{renewing(hubA, ago(time.Second)), empty(hubB)},
			want: src(hubA, earlier, direction.ReasonLeaseRenewed),
		},
		{
			name: "same hub after a kept period keeps previous since (reason becomes LeaseRenewed)",
			prev: src(hubA, earlier, direction.ReasonNoFreshLease),
			hubs: []direction.HubView{renewing(hubA, ago(time.Second)), empty(hubB)},
			want: src(hubA, earlier, direction.ReasonLeaseRenewed),
		},
		{
			name: "same hub as a recorded previous source keeps the recorded since",
			prev: src(hubA, earlier, direction.ReasonRecorded),
			hubs: []direction.HubView{renewing(hubA, ago(time.Second)), copyOn(hubB, hubA, earlier)},
			want: src(hubA, earlier, direction.ReasonLeaseRenewed),
		},
		{
			name: "hub changes: since is now, not the previous since",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{renewing(hubA, ago(20*time.Second)), renewing(hubB, ago(time.Second))},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
	})
}

// Rule 2: no fresh renewed lease anywhere keeps the previous source.
func TestDecideSourceRule2KeepPrevious(t *testing.T) {
	runDecide(t, []decideCase{
		{
			name: "no lease at all: previous kept with its since",
			prev: src(hubB, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{original(hubA), copyOn(hubB, "", time.Time{})},
			want: src(hubB, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "previous source unreachable and no fresh lease: previous kept",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{unreachable(renewing(hubA, ago(time.Second))), original(hubB)},
			want: src(hubA, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "previous kept over recorded annotations naming another hub (rule 3)",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{copyOn(hubA, hubB, ago(time.Minute)), copyOn(hubB, hubB, ago(time.Minute)), copyOn(hubC, hubB, ago(time.Minute))},
			want: src(hubA, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "previous kept over another hub's original ManagedCluster (rule 4)",
			prev: src(hubB, earlier, direction.ReasonOriginal),
			hubs: []direction.HubView{original(hubA), copyOn(hubB, "", time.Time{})},
			want: src(hubB, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "previous kept even when no hub has the cluster",
			prev: src(hubB, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{empty(hubA), empty(hubB)},
			want: src(hubB, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "stale leases only: previous kept",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{renewing(hubA, ago(5*time.Minute)), renewing(hubB, ago(3*time.Minute))},
			want: src(hubA, earlier, direction.ReasonNoFreshLease),
		},
	})
}

// Rule 3: without a previous source, the hub the copies' cluster-hub annotations name.
func TestDecideSourceRule3Recorded(t *testing.T) {
	s1, s2, s3 := ago(3*time.Hour), ago(2*time.Hour), ago(time.Hour)
	runDecide(t, []decideCase{
		{
			name: "an annotation on a ManagedCluster that is not a copy does not vote: rule 4 decides",
			hubs: []direction.HubView{with(original(hubA), func(v *direction.HubView) { v.RecordedHub, v.RecordedSince = hubB, s1 }), empty(hubB)},
			want: src(hubA, now, direction.ReasonOriginal),
		},
		{
			name: "one copy records a hub: that hub with the recorded since (over the original of rule 4)",
			hubs: []direction.HubView{original(hubA), copyOn(hubB, hubC, s2), copyOn(hubC, "", time.Time{})},
			want: src(hubC, s2, direction.ReasonRecorded),
		},
		{
			name: "hub named by most copies wins over one earlier in spec order",
			hubs: []direction.HubView{copyOn(hubA, hubB, s1), copyOn(hubB, hubC, s2), copyOn(hubC, hubC, s3)},
			want: src(hubC, s2, direction.ReasonRecorded),
		},
		{
			name: "earliest recorded since among the votes for the winner (earliest last)",
			hubs: []direction.HubView{copyOn(hubA, hubC, s3), copyOn(hubB, hubC, s1), copyOn(hubC, "", time.Time{})},
			want: src(hubC, s1, direction.ReasonRecorded),
		},
		{
			name: "earliest recorded since among the votes for the winner (earliest first)",
			hubs: []direction.HubView{copyOn(hubA, hubC, s1), copyOn(hubB, hubC, s3), copyOn(hubC, "", time.Time{})},
			want: src(hubC, s1, direction.ReasonRecorded),
		},
		{
			name: "a vote without since does not erase a recorded since (zero first)",
			hubs: []direction.HubView{copyOn(hubA, hubC, time.Time{}), copyOn(hubB, hubC, s2), copyOn(hubC, "", time.Time{})},
			want: src(hubC, s2, direction.ReasonRecorded),
		},
		{
			name: "a vote without since does not erase a recorded since (zero last)",
			hubs: []direction.HubView{copyOn(hubA, hubC, s2), copyOn(hubB, hubC, time.Time{}), copyOn(hubC, "", time.Time{})},
			want: src(hubC, s2, direction.ReasonRecorded),
		},
		{
			name: "no since recorded at all: since now",
			hubs: []direction.HubView{copyOn(hubA, hubB, time.Time{}), copyOn(hubB, "", time.Time{})},
			want: src(hubB, now, direction.ReasonRecorded),
		},
		{
			name: "tied votes: spec order, not the order the votes were seen",
			// hub-a's copy votes for hub-b first; hub-c's copy votes for hub-a; hub-a is first in spec order.
			hubs: []direction.HubView{copyOn(hubA, hubB, s3), copyOn(hubB, "", time.Time{}), copyOn(hubC, hubA, s1)},
			want: src(hubA, s1, direction.ReasonRecorded),
		},
		{
			name: "tied votes: spec order with the tied hubs later in the list",
			hubs: []direction.HubView{copyOn(hubA, hubC, s1), copyOn(hubB, hubB, s2), copyOn(hubC, "", time.Time{})},
			want: src(hubB, s2, direction.ReasonRecorded),
		},
		{
			name: "annotation on a view without the cluster does not vote",
			hubs: []direction.HubView{
				with(copyOn(hubA, hubC, s1), func(v *direction.HubView) { v.HasCluster = false }),
				original(hubB),
				copyOn(hubC, "", time.Time{}),
			},
			want: src(hubB, now, direction.ReasonOriginal),
		},
		{
			name: "annotation naming a hub not in the spec does not vote",
			hubs: []direction.HubView{copyOn(hubA, "hub-gone", s1), original(hubB)},
			want: src(hubB, now, direction.ReasonOriginal),
		},
	})
}

// Rule 4: the first hub in spec order whose ManagedCluster is not a copy, since now.
func TestDecideSourceRule4Original(t *testing.T) {
	runDecide(t, []decideCase{
		{
			name: "copy first, original second: the original",
			hubs: []direction.HubView{copyOn(hubA, "", time.Time{}), original(hubB)},
			want: src(hubB, now, direction.ReasonOriginal),
		},
		{
			name: "two originals: the first in spec order",
			hubs: []direction.HubView{empty(hubA), original(hubB), original(hubC)},
			want: src(hubB, now, direction.ReasonOriginal),
		},
		{
			name: "hub without the ManagedCluster is not an original",
			hubs: []direction.HubView{empty(hubA), copyOn(hubB, "", time.Time{}), original(hubC)},
			want: src(hubC, now, direction.ReasonOriginal),
		},
		{
			name: "hub-created (not agent-renewed) lease does not matter: the original",
			hubs: []direction.HubView{
				with(copyOn(hubA, "", time.Time{}), func(v *direction.HubView) { v.HasLease, v.RenewTime = true, now }),
				original(hubB),
			},
			want: src(hubB, now, direction.ReasonOriginal),
		},
	})
}

// Rule 5: nothing qualifies.
func TestDecideSourceRule5None(t *testing.T) {
	runDecide(t, []decideCase{
		{name: "no hubs", want: direction.Source{}},
		{name: "empty hub list", hubs: []direction.HubView{}, want: direction.Source{}},
		{
			name: "only unannotated copies and empty hubs",
			hubs: []direction.HubView{copyOn(hubA, "", time.Time{}), empty(hubB), unreachable(empty(hubC))},
			want: direction.Source{Reason: direction.ReasonUnknown},
		},
		{
			name: "only stale or unreachable or hub-created leases, no cluster",
			hubs: []direction.HubView{
				with(renewing(hubA, ago(time.Hour)), func(v *direction.HubView) { v.HasCluster = false }),
				unreachable(with(renewing(hubB, now), func(v *direction.HubView) { v.HasCluster = false })),
				with(renewing(hubC, now), func(v *direction.HubView) { v.HasCluster, v.AgentRenewed = false, false }),
			},
			want: direction.Source{},
		},
	})
}

// step is one observation in a sequence of decisions, each fed the previous decision.
type step struct {
	name string
	at   time.Time
	hubs []direction.HubView
	want direction.Source
}

func runSequence(t *testing.T, steps []step) {
	t.Helper()
	var prev direction.Source
	for i, s := range steps {
		got := direction.DecideSource(prev, s.hubs, s.at)
		prev = got
		// The steps check the hub, time and rule; the epoch and renewTime carried are rule 1's table's.
		got.Epoch, got.RenewTime = 0, time.Time{}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Fatalf("step %d (%s): DecideSource() mismatch (-want +got):\n%s", i, s.name, diff)
		}
	}
}

func TestDecideSourceFailoverSequence(t *testing.T) {
	t0 := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	hubRenewing := func(hub string, renew time.Time) direction.HubView { return renewing(hub, renew) }
	standby := func(hub string, hubCreated time.Time) direction.HubView {
		// A standby hub with a copy of the ManagedCluster and the lease the hub created itself.
		return with(copyOn(hub, "", time.Time{}), func(v *direction.HubView) { v.HasLease, v.RenewTime = true, hubCreated })
	}
	runSequence(t, []step{
		{
			name: "start: the replicator finds the original on hub-a, nothing renewed yet",
			at:   at(0),
			hubs: []direction.HubView{original(hubA), standby(hubB, at(0))},
			want: src(hubA, at(0), direction.ReasonOriginal),
		},
		{
			name: "the agent renews on hub-a",
			at:   at(30 * time.Second),
			hubs: []direction.HubView{hubRenewing(hubA, at(25*time.Second)), standby(hubB, at(0))},
			want: src(hubA, at(0), direction.ReasonLeaseRenewed),
		},
		{
			name: "hub-a goes down; its last renewal is still fresh but unreachable hubs do not count",
			at:   at(90 * time.Second),
			hubs: []direction.HubView{unreachable(hubRenewing(hubA, at(85*time.Second))), standby(hubB, at(0))},
			want: src(hubA, at(0), direction.ReasonNoFreshLease),
		},
		{
			name: "the agent fails over and renews on hub-b: hub-b is the source since now",
			at:   at(150 * time.Second),
			hubs: []direction.HubView{unreachable(hubRenewing(hubA, at(85*time.Second))), hubRenewing(hubB, at(145*time.Second))},
			want: src(hubB, at(150*time.Second), direction.ReasonLeaseRenewed),
		},
		{
			name: "hub-a comes back with its old lease still fresh; hub-b's is newer: no fail-back",
			at:   at(160 * time.Second),
			hubs: []direction.HubView{hubRenewing(hubA, at(85*time.Second)), hubRenewing(hubB, at(155*time.Second))},
			want: src(hubB, at(150*time.Second), direction.ReasonLeaseRenewed),
		},
	})
}

func TestDecideSourceNoFlappingSequence(t *testing.T) {
	t0 := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	hubCreated := func(hub string) direction.HubView {
		return with(copyOn(hub, "", time.Time{}), func(v *direction.HubView) { v.HasLease, v.RenewTime = true, t0 })
	}
	runSequence(t, []step{
		{
			name: "hub-a is the source by lease",
			at:   at(10 * time.Second),
			hubs: []direction.HubView{renewing(hubA, at(5*time.Second)), hubCreated(hubB)},
			want: src(hubA, at(10*time.Second), direction.ReasonLeaseRenewed),
		},
		{
			name: "hub-a down, hub-b has only its hub-created lease: hub-a kept",
			at:   at(20 * time.Second),
			hubs: []direction.HubView{unreachable(renewing(hubA, at(15*time.Second))), hubCreated(hubB)},
			want: src(hubA, at(10*time.Second), direction.ReasonNoFreshLease),
		},
		{
			name: "ten minutes later, still no fresh lease anywhere: hub-a kept with its since",
			at:   at(10 * time.Minute),
			hubs: []direction.HubView{unreachable(empty(hubA)), hubCreated(hubB)},
			want: src(hubA, at(10*time.Second), direction.ReasonNoFreshLease),
		},
		{
			name: "hub-a back but its lease stale (agent between hubs): hub-a kept",
			at:   at(11 * time.Minute),
			hubs: []direction.HubView{renewing(hubA, at(15*time.Second)), hubCreated(hubB)},
			want: src(hubA, at(10*time.Second), direction.ReasonNoFreshLease),
		},
		{
			name: "the agent renews on hub-a again: same hub, since unchanged",
			at:   at(12 * time.Minute),
			hubs: []direction.HubView{renewing(hubA, at(12*time.Minute-time.Second)), hubCreated(hubB)},
			want: src(hubA, at(10*time.Second), direction.ReasonLeaseRenewed),
		},
	})
}

// DecideSource must not reorder or modify the caller's views.
func TestDecideSourceDoesNotModifyViews(t *testing.T) {
	hubs := []direction.HubView{renewing(hubA, ago(time.Second)), copyOn(hubB, hubA, earlier), leaseDuration(original(hubC), 0)}
	before := append([]direction.HubView(nil), hubs...)
	direction.DecideSource(direction.Source{}, hubs, now)
	if diff := cmp.Diff(before, hubs); diff != "" {
		t.Errorf("DecideSource modified its input (-before +after):\n%s", diff)
	}
}

func freshnessWindow(d time.Duration) time.Duration {
	if d <= 0 {
		d = direction.DefaultLeaseDuration
	}
	return direction.FreshnessFactor * d
}

func TestNextExpiry(t *testing.T) {
	window := freshnessWindow(0)
	tests := []struct {
		name string
		hubs []direction.HubView
		want time.Time
	}{
		{name: "no hub", want: time.Time{}},
		{name: "no lease", hubs: []direction.HubView{original(hubA), copyOn(hubB, hubA, earlier)}, want: time.Time{}},
		{name: "one fresh lease expires FreshnessFactor x duration after its renewal",
			hubs: []direction.HubView{renewing(hubA, ago(10*time.Second))}, want: ago(10 * time.Second).Add(window)},
		{name: "the earliest of two fresh leases",
			hubs: []direction.HubView{renewing(hubA, ago(10*time.Second)), renewing(hubB, ago(30*time.Second))},
			want: ago(30 * time.Second).Add(window)},
		{name: "the lease duration of each hub",
			hubs: []direction.HubView{leaseDuration(renewing(hubA, ago(10*time.Second)), 20*time.Second), renewing(hubB, ago(30*time.Second))},
			want: ago(10 * time.Second).Add(direction.FreshnessFactor * 20 * time.Second)},
		{name: "a stale lease is no expiry to come",
			hubs: []direction.HubView{renewing(hubA, ago(window+time.Second))}, want: time.Time{}},
		{name: "a lease expiring exactly now is stale already",
			hubs: []direction.HubView{renewing(hubA, ago(window)), renewing(hubB, ago(time.Second))}, want: ago(time.Second).Add(window)},
		{name: "a hub reached again leaves the window in which lower epochs are barred FreshnessFactor x duration after",
			hubs: []direction.HubView{with(original(hubA), func(v *direction.HubView) { v.Reachable, v.ReadySince = true, ago(10*time.Second) })},
			want: ago(10 * time.Second).Add(window)},
		{name: "an unreachable hub, a lease no agent renewed and a hub without lease do not count",
			hubs: []direction.HubView{
				unreachable(renewing(hubA, ago(50*time.Second))),
				with(renewing(hubB, ago(40*time.Second)), func(v *direction.HubView) { v.AgentRenewed = false }),
				with(renewing(hubC, ago(30*time.Second)), func(v *direction.HubView) { v.HasLease = false }),
			}, want: time.Time{}},
		{name: "a lease no agent renewed, seen appear 10s ago, stops showing a spoke that just joined FreshnessFactor x duration after",
			hubs: []direction.HubView{with(renewing(hubA, ago(10*time.Second)), func(v *direction.HubView) {
				v.AgentRenewed, v.RenewSeen, v.LeaseAddedSeen = false, time.Time{}, ago(10*time.Second)
			})},
			want: ago(10 * time.Second).Add(window)},
		{name: "a lease no agent renewed whose appearance is not known: its hub's ReadySince",
			hubs: []direction.HubView{with(renewing(hubA, ago(10*time.Second)), func(v *direction.HubView) {
				v.AgentRenewed, v.RenewSeen, v.ReadySince = false, time.Time{}, ago(5*time.Second)
			})},
			want: ago(5 * time.Second).Add(window)},
		{name: "a lease no agent renewed, seen appear FreshnessFactor x duration ago: no expiry to come",
			hubs: []direction.HubView{with(renewing(hubA, ago(10*time.Second)), func(v *direction.HubView) {
				v.AgentRenewed, v.RenewSeen, v.LeaseAddedSeen = false, time.Time{}, ago(window)
			})},
			want: time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := direction.NextExpiry(tt.hubs, now); !got.Equal(tt.want) {
				t.Errorf("NextExpiry = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestDecideSourceClocks: freshness is judged by when the replicator saw each renewal, on its own clock, never by
// comparing the agent's renewTime with the replicator's clock. With the agent's clock ten minutes behind or ahead
// of the replicator's, a move is followed as with agreeing clocks, and a hub whose agent left goes stale.
func TestDecideSourceClocks(t *testing.T) {
	const skew = 10 * time.Minute
	for _, d := range []time.Duration{-skew, skew} {
		runDecide(t, []decideCase{
			{
				name: "agent clock off by " + d.String() + ": moved from hub-a to hub-b, followed",
				prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
				hubs: []direction.HubView{skewed(renewing(hubA, ago(3*time.Minute)), d), skewed(renewing(hubB, ago(5*time.Second)), d)},
				want: src(hubB, now, direction.ReasonLeaseRenewed),
			},
			{
				name: "agent clock off by " + d.String() + ": agent gone from hub-a, no fresh lease: previous kept, not renewed",
				prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
				hubs: []direction.HubView{skewed(renewing(hubA, ago(3*time.Minute)), d), copyOn(hubB, hubA, earlier)},
				want: src(hubA, earlier, direction.ReasonNoFreshLease),
			},
			{
				name: "agent clock off by " + d.String() + ": the agent renews hub-a: kept",
				prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
				hubs: []direction.HubView{skewed(renewing(hubA, ago(10*time.Second)), d), skewed(renewing(hubB, ago(10*time.Minute)), d)},
				want: src(hubA, earlier, direction.ReasonLeaseRenewed),
			},
		})
	}
	runDecide(t, []decideCase{
		{
			name: "just started, no renewal seen yet: the newest renewal an agent made counts, however old by the replicator's clock",
			hubs: []direction.HubView{unseen(renewing(hubA, ago(time.Hour))), unseen(renewing(hubB, ago(2*time.Hour))), copyOn(hubC, hubB, earlier)},
			want: src(hubA, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "a renewal seen on one hub: a lease never seen renewed since the start no longer counts",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{unseen(renewing(hubA, ago(time.Second))), renewing(hubB, ago(30*time.Second))},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "the hub seen renewed is unreachable now: an older lease never seen renewed does not take over, previous kept",
			prev: src(hubB, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{unseen(renewing(hubA, ago(48*time.Hour))), unreachable(renewing(hubB, ago(10*time.Second)))},
			want: src(hubB, earlier, direction.ReasonNoFreshLease),
		},
		{
			name: "just started, a hub still listing: no lease counts unseen, the copies' record decides",
			hubs: []direction.HubView{with(unseen(renewing(hubA, ago(48*time.Hour))), func(v *direction.HubView) {
				v.IsCopy, v.RecordedHub, v.RecordedSince = true, hubB, earlier
			}), unreachable(unseen(renewing(hubB, ago(10*time.Second))))},
			want: src(hubB, earlier, direction.ReasonRecorded),
		},
		{
			name: "a hub-created lease (no agent renewal) never counts, also at the start",
			hubs: []direction.HubView{unseen(with(renewing(hubA, ago(time.Second)), func(v *direction.HubView) { v.AgentRenewed, v.IsCopy = false, true })), original(hubB)},
			want: src(hubB, now, direction.ReasonOriginal),
		},
	})
	if got := direction.NextExpiry([]direction.HubView{unseen(renewing(hubA, ago(time.Second)))}, now); !got.IsZero() {
		t.Errorf("NextExpiry of a lease never seen renewed = %s, want zero", got)
	}
	if got, want := direction.NextExpiry([]direction.HubView{skewed(renewing(hubA, ago(10*time.Second)), skew)}, now), ago(10*time.Second).Add(2*direction.DefaultLeaseDuration); !got.Equal(want) {
		t.Errorf("NextExpiry with the agent's clock ahead = %s, want %s (when the renewal was seen + FreshnessFactor × duration)", got, want)
	}
}

// epoch is v whose ManagedCluster carries the agent epoch n.
func epoch(v direction.HubView, n int64) direction.HubView {
	return with(v, func(v *direction.HubView) { v.Epoch = n })
}

func TestDecideSourceEpochs(t *testing.T) {
	runDecide(t, []decideCase{
		{
			name: "rule 1: of two fresh leases the higher epoch wins, whatever the renewTimes say (the agent's clock jumped back)",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{epoch(renewing(hubA, ago(5*time.Second)), 3), epoch(skewed(renewing(hubB, ago(10*time.Second)), -time.Hour), 4)},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "rule 1: equal epochs fall back to the newest renewTime",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{epoch(renewing(hubA, ago(30*time.Second)), 3), epoch(renewing(hubB, ago(5*time.Second)), 3)},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "rule 1 just started: renewTimes order the leases it has not seen renewed, not epochs (a restored hub's epoch is raised only once its agent reads it)",
			hubs: []direction.HubView{epoch(unseen(renewing(hubA, ago(5*time.Second))), 1), epoch(unseen(renewing(hubB, ago(time.Hour))), 2)},
			want: src(hubA, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "rule 1: a fresh lease on the hub the agent left before the source does not take over while the source is unreachable (its renewal was seen just before the agent left)",
			prev: direction.Source{Hub: hubA, Since: earlier, Reason: direction.ReasonLeaseRenewed, Epoch: 7, RenewTime: ago(3 * time.Second)},
			hubs: []direction.HubView{unreachable(empty(hubA)), epoch(renewing(hubB, ago(5*time.Second)), 6)},
			want: direction.Source{Hub: hubA, Since: earlier, Reason: direction.ReasonNoFreshLease, Epoch: 7, RenewTime: ago(3 * time.Second)},
		},
		{
			name: "rule 1: a renewal made before the agent left, seen late on the hub it left, does not take over from a source whose own renewals were not seen since (make chaos seed 21)",
			prev: direction.Source{Hub: hubA, Since: earlier, Reason: direction.ReasonLeaseRenewed, Epoch: 15, RenewTime: ago(40 * time.Second)},
			hubs: []direction.HubView{
				epoch(with(renewing(hubA, ago(40*time.Second)), func(v *direction.HubView) {
					v.RenewSeen, v.ReadySince = ago(3*time.Minute), ago(11*time.Second)
				}), 15),
				epoch(skewed(renewing(hubB, ago(time.Second)), -45*time.Second), 14)},
			want: direction.Source{Hub: hubA, Since: earlier, Reason: direction.ReasonNoFreshLease, Epoch: 15, RenewTime: ago(40 * time.Second)},
		},
		{
			name: "rule 1: the same, once the source has been in view two lease durations without a renewal seen there: the bar is lifted (the agent is not on it, whatever its epoch or its clock did)",
			prev: direction.Source{Hub: hubA, Since: earlier, Reason: direction.ReasonLeaseRenewed, Epoch: 15, RenewTime: ago(40 * time.Second)},
			hubs: []direction.HubView{
				epoch(with(renewing(hubA, ago(40*time.Second)), func(v *direction.HubView) {
					v.RenewSeen, v.ReadySince = ago(3*time.Minute), ago(2*time.Minute)
				}), 15),
				epoch(skewed(renewing(hubB, ago(time.Second)), -45*time.Second), 14)},
			want: direction.Source{Hub: hubB, Since: now, Reason: direction.ReasonLeaseRenewed, Epoch: 14, RenewTime: ago(46 * time.Second)},
		},
		{
			name: "rule 1: the agent moving back raises the epoch there: that hub takes over",
			prev: direction.Source{Hub: hubA, Since: earlier, Reason: direction.ReasonLeaseRenewed, Epoch: 7, RenewTime: ago(3 * time.Second)},
			hubs: []direction.HubView{unreachable(empty(hubA)), epoch(renewing(hubB, ago(2*time.Second)), 8)},
			want: direction.Source{Hub: hubB, Since: now, Reason: direction.ReasonLeaseRenewed, Epoch: 8, RenewTime: ago(2 * time.Second)},
		},
		{
			name: "rule 1: an agent back there without a higher epoch (its record lost) renews it after the source: that hub takes over",
			prev: direction.Source{Hub: hubA, Since: earlier, Reason: direction.ReasonLeaseRenewed, Epoch: 7, RenewTime: ago(30 * time.Second)},
			hubs: []direction.HubView{unreachable(empty(hubA)), epoch(renewing(hubB, ago(2*time.Second)), 1)},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "rule 1: with the source in view, a hub the agent renews after the source takes over whatever its epoch (the agent left the source)",
			prev: direction.Source{Hub: hubA, Since: earlier, Reason: direction.ReasonLeaseRenewed, Epoch: 7, RenewTime: ago(time.Hour)},
			hubs: []direction.HubView{epoch(renewing(hubA, ago(time.Hour)), 7), epoch(renewing(hubB, ago(5*time.Second)), 1)},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "rule 1: the source keeps the highest epoch it carried (a restore lowered it there)",
			prev: direction.Source{Hub: hubA, Since: earlier, Reason: direction.ReasonLeaseRenewed, Epoch: 7, RenewTime: ago(10 * time.Second)},
			hubs: []direction.HubView{epoch(renewing(hubA, ago(5*time.Second)), 3), epoch(renewing(hubB, ago(20*time.Second)), 2)},
			want: direction.Source{Hub: hubA, Since: earlier, Reason: direction.ReasonLeaseRenewed, Epoch: 7, RenewTime: ago(5 * time.Second)},
		},
		{
			name: "rule 1: without epochs (OCM's agent) the newest renewal still decides",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{unreachable(empty(hubA)), renewing(hubB, ago(5*time.Second))},
			want: src(hubB, now, direction.ReasonLeaseRenewed),
		},
		{
			name: "rule 1: a higher epoch without a fresh lease does not count",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{epoch(renewing(hubA, ago(5*time.Second)), 3), epoch(renewing(hubB, ago(10*time.Minute)), 9)},
			want: src(hubA, earlier, direction.ReasonLeaseRenewed),
		},
		{
			name: "rule 3: no lease evidence, every hub reachable: the highest epoch, before what the copies record",
			hubs: []direction.HubView{epoch(copyOn(hubA, hubC, earlier), 2), epoch(original(hubB), 5), epoch(copyOn(hubC, hubA, earlier), 4)},
			want: src(hubB, now, direction.ReasonEpoch),
		},
		{
			name: "rule 4: a hub unreachable, the copies' record comes before the epochs (the unreachable hub may hold the highest)",
			hubs: []direction.HubView{epoch(copyOn(hubA, hubC, earlier), 2), epoch(original(hubB), 5), unreachable(empty(hubC))},
			want: src(hubC, earlier, direction.ReasonRecorded),
		},
		{
			name: "rule 5: a hub unreachable, nothing recorded: the highest epoch of the reachable hubs (the replicator restarted while the agent's last hub lost its link)",
			hubs: []direction.HubView{epoch(original(hubA), 2), unreachable(empty(hubB)), epoch(original(hubC), 6)},
			want: src(hubC, now, direction.ReasonEpoch),
		},
		{
			name: "rule 2 before epochs: the previous source is kept without fresh leases",
			prev: src(hubA, earlier, direction.ReasonLeaseRenewed),
			hubs: []direction.HubView{epoch(original(hubA), 1), epoch(original(hubB), 7)},
			want: src(hubA, earlier, direction.ReasonNoFreshLease),
		},
	})
}
