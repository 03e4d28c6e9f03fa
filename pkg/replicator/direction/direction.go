// Package direction decides, per managed cluster, which hub is the cluster's source: the hub it is connected
// to now, from which the replicator copies the cluster's state to every other hub. The decision is a pure
// function of what the replicator observed on each hub (DecideSource); the controller keeps the observations.
package direction

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// LeaseName is the name of the Lease, in the cluster's namespace on a hub, that the registration agent renews
// while the cluster is connected to that hub (OCM's managed-cluster-lease).
const LeaseName = "managed-cluster-lease"

// DefaultLeaseDuration is the cluster's lease duration when its ManagedCluster does not set
// spec.leaseDurationSeconds (OCM's default, 60 s).
const DefaultLeaseDuration = 60 * time.Second

// FreshnessFactor times the cluster's lease duration is how old a lease renewal may be and still count as
// the cluster being connected to that hub. The agents renew every lease duration (OCM's with up to 25 %
// jitter), so a live lease is never older than 1.25 lease durations.
const FreshnessFactor = 2

// CreationSlack is how much later than the Lease's creationTimestamp a renewTime must be to show that an agent
// renewed it. OCM's hub creates the lease of an accepted cluster with renewTime set to the hub's clock at
// creation — on a standby hub too, where no agent has ever renewed it — so a renewTime that close to the
// creation proves nothing.
const CreationSlack = 5 * time.Second

// HubView is what the replicator knows about one cluster on one hub.
type HubView struct {
	// Hub is the hub's name.
	Hub string
	// Reachable is true when the hub answers and its caches are synced.
	Reachable bool
	// HasLease is true when the cluster's managed-cluster-lease exists on the hub.
	HasLease bool
	// RenewTime is the lease's spec.renewTime (the agent's clock, so comparable between hubs).
	RenewTime time.Time
	// AgentRenewed is true when the lease was renewed by an agent: the replicator saw an update advance its
	// renewTime, or the renewTime is more than CreationSlack after the lease's creation.
	AgentRenewed bool
	// RenewSeen is when the replicator last saw an update advance the lease's renewTime, by the replicator's own
	// clock (the now of DecideSource); zero when it has seen none since it started. Set also when the hub is not
	// reachable now. Freshness is judged by it, so
	// that no decision compares the agent's clock (RenewTime) with the replicator's.
	RenewSeen time.Time
	// LeaseAddedSeen is when the replicator saw the lease appear — created, or listed when its informer started —
	// by its own clock; zero when not known (the informer's event not handled yet): justAdded then goes by
	// ReadySince.
	LeaseAddedSeen time.Time
	// LeaseDuration is the cluster's spec.leaseDurationSeconds on this hub (DefaultLeaseDuration when unset).
	LeaseDuration time.Duration
	// HasCluster is true when the hub has a ManagedCluster of that name.
	HasCluster bool
	// IsCopy is true when that ManagedCluster is a copy the replicator made.
	IsCopy bool
	// RecordedHub is the hub named by the ManagedCluster's cluster-hub annotation (where the replicator last
	// saw the cluster, as recorded on this hub's copy); empty when not annotated.
	RecordedHub string
	// RecordedSince is the time of the cluster-hub-since annotation; zero when absent or unparsable.
	RecordedSince time.Time
	// ClusterID is the spoke's identity that the agent of the spoke joined to this hub under the cluster's name
	// reports (its id.k8s.io ClusterClaim in the ManagedCluster's status); empty when none is reported.
	ClusterID string
	// RecordedClusterID is the identity the replicator recorded on this hub's copy of the ManagedCluster (the
	// cluster-id annotation): the spoke the copy was made for; empty when not recorded.
	RecordedClusterID string
	// Epoch is the agent's session epoch recorded on this hub's ManagedCluster (failoverv1alpha1.AnnotationEpoch,
	// written by our agent on the hub it joins; it only grows from one hub to the next); 0 when absent.
	Epoch int64
	// ReadySince is when the replicator's view of the hub last became ready (reachable, caches synced), on the
	// replicator's clock; zero when it is not reachable, or not known.
	ReadySince time.Time
}

// Source is the outcome of DecideSource.
type Source struct {
	// Hub is the source hub's name; empty when no hub qualifies yet.
	Hub string
	// Since is when the cluster was first seen on Hub.
	Since time.Time
	// Reason says which rule chose Hub (one of the Reason* constants).
	Reason string
	// Epoch is the highest agent epoch seen on Hub's ManagedCluster while it has been the source (0: none, as
	// with OCM's own agent), and RenewTime the newest renewTime of its lease that rule 1 counted (zero: none):
	// while Hub is out of view, or just back in view, a hub whose ManagedCluster carries a lower epoch and whose
	// lease was not renewed after that (the agent's one clock) is where the agent was before Hub, and does not
	// take the cluster over (DecideSource rule 1).
	Epoch     int64
	RenewTime time.Time
}

// Reasons of a Source.
const (
	// ReasonLeaseRenewed: Hub has a fresh lease renewed by an agent, with the highest epoch among those, else the
	// newest renewal.
	ReasonLeaseRenewed = "LeaseRenewed"
	// ReasonEpoch: no hub has a fresh renewed lease and there is no previous source; Hub's ManagedCluster carries
	// the highest agent epoch (the hub the agent joined last).
	ReasonEpoch = "Epoch"
	// ReasonNoFreshLease: no hub has a fresh renewed lease; the previous source is kept (no flapping while the agent
	// is between hubs or the source hub is down).
	ReasonNoFreshLease = "NoFreshLease"
	// ReasonRecorded: no lease evidence and no previous source (the replicator just started); Hub is where the
	// copies' cluster-hub annotation says the cluster is.
	ReasonRecorded = "Recorded"
	// ReasonOriginal: nothing recorded either; Hub is the first hub, in spec order, whose ManagedCluster is not
	// a copy (the hub the cluster registered with).
	ReasonOriginal = "Original"
	// ReasonUnknown: no hub qualifies.
	ReasonUnknown = ""
)

// DecideSource returns the source hub of one cluster, given the previous decision (zero Source at start) and
// a view of every hub in spec order, at time now (the replicator's clock). Rules, in order:
//  1. Among reachable hubs whose lease was renewed by an agent and is fresh, the source is the one whose
//     ManagedCluster carries the highest agent epoch, and among equal epochs (or none) the one with the newest
//     renewTime (the agent renews one hub at a time, and renewTimes come from its one clock). A lease is
//     fresh when the replicator saw it renewed (RenewSeen) no longer than FreshnessFactor × the lease duration
//     before now, both read on the replicator's clock. Until it has seen a renewal of the cluster on any hub,
//     reachable or not (it just started), every lease an agent renewed counts, but only once every hub is
//     reachable: a hub still listing may hold the newest; these are ordered by renewTime alone (an epoch a
//     restore of the hub lowered is raised again by the agent on it, but only once its agent reads it). Until
//     then too, while a hub in view briefly holds a lease no agent is shown to have renewed that is newer than
//     the one this rule ranks first — or, when none ranks, there is no previous source and every hub is
//     reachable, such a lease on another hub than rules 3 to 6 would decide — nothing is decided (newerUnproven: the
//     previous source is kept; without one, no source) until a renewal is seen or that time is up. The
//     agent's clock is never compared with the replicator's: a clock off by minutes on either side changes no
//     decision. Ties keep the previous source, else the earlier hub in spec order. A hub whose epoch is lower
//     than the one the previous source carried (Source.Epoch) and whose lease was not renewed after the previous
//     source's (Source.RenewTime; both renewTimes are the agent's clock) is not counted while the previous source
//     is unreachable, or was reached again (ReadySince) less than FreshnessFactor × its lease duration ago: the
//     agent left that hub before it joined the previous source, and its lease only looks fresh — seen renewed a
//     moment before the agent left it, or a renewal made before the agent left and seen late (a hub listed again
//     after a restart or a cut, whose watch then delivers it) before the agent's renewals on the previous source
//     could be seen. An agent that moved there again renews it later, or raises its epoch there; and once the
//     previous source has been in view that long without a renewal seen there, the bar is lifted (the agent is
//     not on it, whatever its epoch records or its clock did). A lease on a copy that records the identity of
//     the spoke it was made for (RecordedClusterID) is not counted while its ManagedCluster shows no identity
//     claim (ClusterID) and that spoke is alive elsewhere: a reachable hub's ManagedCluster that is no copy
//     reports that claim and has a lease that counts (as above: fresh, or any an agent renewed before the
//     replicator has seen a renewal). A second spoke of the name joining the copy
//     (local-cluster on a hub rebuilt after the replicator copied the other's there) renews its lease before it
//     reports its claim, and must not take the other spoke's cluster over; the spoke the copy was made for counts
//     once it reports its claim there, or once the hub it left is unreachable or its lease there stale, or,
//     never shown renewed by an agent, seen appear FreshnessFactor × its lease duration ago or more (an agent
//     that writes no status, with the hub reporting its clock out of sync, is delayed that long, not stopped).
//     Where that spoke may be alive but is not shown to be — its lease there shows no renewal since OCM's hub
//     made it and the replicator saw it appear (LeaseAddedSeen) less than FreshnessFactor × its lease duration
//     ago (the spoke joined a moment ago, its agent's next renewal not due yet), or it was renewed by an agent
//     but no renewal of it has been seen freshly, and either no renewal of the cluster was seen yet (just
//     started) or that hub has been in view less than FreshnessFactor × its lease duration (ReadySince: the
//     replicator started, or listed the hub again, and the agent's next renewal there is not due yet) — nothing is decided
//     (the previous source is kept; without one, no source) until a renewal there is seen or that time is up,
//     when such a copy's lease would rank first; otherwise the first of the others is the source. The renewal
//     on the copy is often seen first: right after a start it must not take the cluster over.
//     Since is kept when the hub does not change, else it is now (without a previous
//     source: the earliest time the copies record for that hub, if they do).
//  2. Without such a hub, the previous source is kept.
//  3. Without a previous source, when every hub is reachable: the hub with the highest epoch (ReasonEpoch), since
//     now. The agent records its epoch on the hub it joins, so this is where it went last.
//  4. Else the hub that the copies' cluster-hub annotations name (the one named by most copies; ties by spec
//     order), with the recorded since time.
//  5. Else the reachable hub with the highest epoch, since now: the agent went there after every hub the
//     replicator can see.
//  6. Else the first hub in spec order whose ManagedCluster is not a copy, since now.
//  7. Else no source.
func DecideSource(prev Source, hubs []HubView, now time.Time) Source {
	seenAny, allReachable := false, true
	barLower := false // whether a lower epoch's stale-looking lease is barred (see rule 1)
	for _, h := range hubs {
		seenAny = seenAny || !h.RenewSeen.IsZero()
		allReachable = allReachable && h.Reachable
	}
	if prev.Hub != "" {
		barLower = true
		for _, h := range hubs {
			// A reachable previous source with no ReadySince known counts as long in view.
			if h.Hub == prev.Hub && h.Reachable && (h.ReadySince.IsZero() || now.Sub(h.ReadySince) >= FreshnessFactor*leaseDuration(h)) {
				barLower = false
			}
		}
	}
	// counted reports whether h's lease counts in rule 1 as far as the lease itself goes.
	counted := func(h HubView) bool {
		return agentLease(h) && (!(seenAny || !allReachable) || fresh(h, now))
	}
	// The identities whose own ManagedCluster (no copy) has a fresh lease: those spokes are alive where they
	// registered. A lease an agent renewed that is not fresh only shows the spoke may be (unproven) before any
	// renewal is seen, or while its hub has been in view too briefly for a renewal to be seen (inViewBriefly);
	// so does a lease no agent is shown to have renewed, seen appear a moment ago (justAdded).
	alive, unproven := map[string]bool{}, map[string]bool{}
	for _, h := range hubs {
		switch {
		case !h.Reachable || !h.HasLease || h.IsCopy || h.ClusterID == "":
		case !h.AgentRenewed:
			if justAdded(h, now) {
				// The spoke reported its claim there, and its lease, seen appear a moment ago, shows no
				// renewal since it was made: the spoke joined a moment ago, its agent's next renewal not due yet.
				unproven[h.ClusterID] = true
			}
		case fresh(h, now):
			alive[h.ClusterID] = true
		case counted(h) || inViewBriefly(h, now):
			unproven[h.ClusterID] = true
		}
	}
	// undecided holds the hubs whose lease may be a second spoke's (see below): they take part in the ranking,
	// and when one of them ranks first nothing is decided.
	undecided := map[string]bool{}
	var best *HubView
	for i := range hubs {
		h := &hubs[i]
		if !counted(*h) {
			continue
		}
		if h.IsCopy && h.RecordedClusterID != "" && h.ClusterID == "" {
			if alive[h.RecordedClusterID] {
				// An agent joined a copy made for a spoke that is alive elsewhere, and has not said which spoke it is.
				continue
			}
			// Which of the two is the cluster's agent shows once a renewal is seen there.
			undecided[h.Hub] = unproven[h.RecordedClusterID]
		}
		if barLower && h.Hub != prev.Hub && h.Epoch < prev.Epoch && !h.RenewTime.After(prev.RenewTime) {
			continue
		}
		switch {
		case best == nil:
			best = h
		case seenAny && h.Epoch != best.Epoch:
			if h.Epoch > best.Epoch {
				best = h
			}
		case h.RenewTime.After(best.RenewTime):
			best = h
		case h.RenewTime.Equal(best.RenewTime) && h.Hub == prev.Hub:
			best = h
		}
	}
	var fallback Source
	if best == nil && prev.Hub == "" {
		fallback = withoutLeases(hubs, allReachable, now)
	}
	hold := best != nil && undecided[best.Hub]
	if !hold && !seenAny {
		// newerUnproven: with a hub down and no lease ranked, rules 4 to 6 decide at once.
		switch {
		case best != nil:
			hold = newerUnproven(hubs, best.Hub, best.RenewTime, now)
		case prev.Hub == "" && allReachable:
			hold = newerUnproven(hubs, fallback.Hub, time.Time{}, now)
		}
	}
	if hold {
		if prev.Hub != "" {
			return Source{Hub: prev.Hub, Since: prev.Since, Reason: ReasonNoFreshLease, Epoch: max(prev.Epoch, epochOf(hubs, prev.Hub)), RenewTime: prev.RenewTime}
		}
		return Source{Reason: ReasonUnknown}
	}
	if best != nil {
		if best.Hub == prev.Hub {
			renewTime := prev.RenewTime
			if best.RenewTime.After(renewTime) {
				renewTime = best.RenewTime
			}
			return Source{Hub: prev.Hub, Since: prev.Since, Reason: ReasonLeaseRenewed, Epoch: max(prev.Epoch, best.Epoch), RenewTime: renewTime}
		}
		since := now
		if prev.Hub == "" {
			// Just started: the copies may already record since when the cluster is on that hub.
			if recorded := recordedSince(hubs, best.Hub); !recorded.IsZero() {
				since = recorded
			}
		}
		return Source{Hub: best.Hub, Since: since, Reason: ReasonLeaseRenewed, Epoch: best.Epoch, RenewTime: best.RenewTime}
	}
	if prev.Hub != "" {
		return Source{Hub: prev.Hub, Since: prev.Since, Reason: ReasonNoFreshLease, Epoch: max(prev.Epoch, epochOf(hubs, prev.Hub)), RenewTime: prev.RenewTime}
	}
	return fallback
}

// withoutLeases decides a cluster's source by rules 3 to 7 of DecideSource: no lease counts and there is no
// previous source; allReachable says whether every hub is reachable.
func withoutLeases(hubs []HubView, allReachable bool, now time.Time) Source {
	if allReachable {
		if hub := highestEpoch(hubs); hub != "" {
			return Source{Hub: hub, Since: now, Reason: ReasonEpoch, Epoch: epochOf(hubs, hub)}
		}
	}

	votes := map[string]int{}
	since := map[string]time.Time{}
	for _, h := range hubs {
		if h.HasCluster && h.IsCopy && h.RecordedHub != "" {
			votes[h.RecordedHub]++
			if t := since[h.RecordedHub]; t.IsZero() || (!h.RecordedSince.IsZero() && h.RecordedSince.Before(t)) {
				since[h.RecordedHub] = h.RecordedSince
			}
		}
	}
	recorded, most := "", 0
	for _, h := range hubs { // spec order breaks ties
		if votes[h.Hub] > most {
			recorded, most = h.Hub, votes[h.Hub]
		}
	}
	if recorded != "" {
		s := since[recorded]
		if s.IsZero() {
			s = now
		}
		return Source{Hub: recorded, Since: s, Reason: ReasonRecorded, Epoch: epochOf(hubs, recorded)}
	}
	if hub := highestEpoch(hubs); hub != "" {
		return Source{Hub: hub, Since: now, Reason: ReasonEpoch, Epoch: epochOf(hubs, hub)}
	}
	for _, h := range hubs {
		if h.HasCluster && !h.IsCopy {
			return Source{Hub: h.Hub, Since: now, Reason: ReasonOriginal, Epoch: h.Epoch}
		}
	}
	return Source{Reason: ReasonUnknown}
}

// newerUnproven reports whether, before any renewal of the cluster is seen, a lease that no agent is shown to
// have renewed (AgentRenewed false: its renewTime within CreationSlack of its creation) may still be the agent's
// newest: it is on a reachable hub in view briefly (inViewBriefly) other than hub, and renewed after after.
// DecideSource asks it of the lease rule 1 ranks first (hub, and its renewTime), or, when none ranks, no source was decided
// before and every hub is reachable, of the hub rules 3 to 6 decide (withoutLeases; "" when none does) with the
// zero time: epochs, records and the original ManagedCluster do not show where the agent is now, while such a
// lease on that hub itself backs the choice up (a cluster that just joined it). An agent that joined a copy a
// moment after OCM's hub made its lease renews it within CreationSlack: until its next renewal is seen, or the hub
// has been in view long enough for one, the older lease elsewhere, or the original ManagedCluster, would take the
// cluster back to a hub the agent left. A cluster that just joined a hub where copies exist already is held
// likewise, until its agent's next renewal is seen (the views cannot tell it from an agent that just joined a
// copy). The renewTime of a lease no agent renewed is the hub's clock at its creation: a hub clock ahead of the
// agent's only lengthens the hold, never changes which hub is decided.
func newerUnproven(hubs []HubView, hub string, after time.Time, now time.Time) bool {
	for _, h := range hubs {
		if h.Reachable && h.HasLease && !h.AgentRenewed && inViewBriefly(h, now) && h.Hub != hub && h.RenewTime.After(after) {
			return true
		}
	}
	return false
}

// epochOf returns the epoch hub's view carries (0 when hub is not in hubs, unreachable or without one).
func epochOf(hubs []HubView, hub string) int64 {
	for _, h := range hubs {
		if h.Hub == hub && h.Reachable {
			return h.Epoch
		}
	}
	return 0
}

// highestEpoch returns the reachable hub whose ManagedCluster carries the highest epoch (ties: the earlier in
// spec order), or "" when none carries one.
func highestEpoch(hubs []HubView) string {
	out, most := "", int64(0)
	for _, h := range hubs {
		if h.Reachable && h.HasCluster && h.Epoch > most {
			out, most = h.Hub, h.Epoch
		}
	}
	return out
}

// NextExpiry returns the earliest time after now at which one of the leases that rule 1 of DecideSource counts
// as fresh at now stops being fresh (its RenewSeen + FreshnessFactor × the lease duration), or a hub reached
// again leaves the window in which rule 1 still bars the leases of lower epochs or leaves a copy's lease
// undecided or holds the decision (its ReadySince + FreshnessFactor × the lease duration), or a lease no agent is
// shown to have renewed stops counting as just added (its LeaseAddedSeen + FreshnessFactor × the lease duration),
// or the zero time when there is none.
// Without new observations DecideSource can only decide differently after that time: the caller decides again
// then instead of on a fixed period.
func NextExpiry(hubs []HubView, now time.Time) time.Time {
	var next time.Time
	for _, h := range hubs {
		if h.Reachable && !h.ReadySince.IsZero() {
			if end := h.ReadySince.Add(FreshnessFactor * leaseDuration(h)); end.After(now) && (next.IsZero() || end.Before(next)) {
				next = end
			}
		}
		if h.Reachable && h.HasLease && !h.AgentRenewed && !h.LeaseAddedSeen.IsZero() {
			// A spoke that joined a moment ago stops holding a copy's lease undecided then.
			if end := h.LeaseAddedSeen.Add(FreshnessFactor * leaseDuration(h)); end.After(now) && (next.IsZero() || end.Before(next)) {
				next = end
			}
		}
		if !agentLease(h) || h.RenewSeen.IsZero() {
			continue
		}
		expiry := h.RenewSeen.Add(FreshnessFactor * leaseDuration(h))
		if !expiry.After(now) {
			continue
		}
		if next.IsZero() || expiry.Before(next) {
			next = expiry
		}
	}
	return next
}

// fresh reports whether the replicator saw h's lease renewed no longer than FreshnessFactor × its lease
// duration before now (both the replicator's clock).
func fresh(h HubView, now time.Time) bool {
	return !h.RenewSeen.IsZero() && now.Sub(h.RenewSeen) <= FreshnessFactor*leaseDuration(h)
}

// agentLease reports whether h is reachable and holds the cluster's lease, renewed by an agent.
func agentLease(h HubView) bool {
	return h.Reachable && h.HasLease && h.AgentRenewed
}

// inViewBriefly reports whether hub h has been reachable (since its ReadySince) for less than FreshnessFactor × its
// lease duration: a lease renewed there that the replicator has not seen renewed (or not freshly) may still be
// renewed by an agent whose next renewal is not due yet, as right after the replicator started or the hub was
// listed again. A zero ReadySince (not known) counts as long in view.
func inViewBriefly(h HubView, now time.Time) bool {
	return !h.ReadySince.IsZero() && now.Sub(h.ReadySince) < FreshnessFactor*leaseDuration(h)
}

// justAdded reports whether the replicator saw h's lease appear (LeaseAddedSeen) less than FreshnessFactor × its
// lease duration before now, or h has been in view that briefly (inViewBriefly; the lease was listed then, and its
// informer's event may not be handled yet): an agent that renews it is due to have been seen renewing it by then.
func justAdded(h HubView, now time.Time) bool {
	return (!h.LeaseAddedSeen.IsZero() && now.Sub(h.LeaseAddedSeen) < FreshnessFactor*leaseDuration(h)) || inViewBriefly(h, now)
}

// leaseDuration returns h's lease duration, DefaultLeaseDuration when unset.
func leaseDuration(h HubView) time.Duration {
	if h.LeaseDuration <= 0 {
		return DefaultLeaseDuration
	}
	return h.LeaseDuration
}

// recordedSince returns the earliest cluster-hub-since that copies in hubs record for hub, or zero.
func recordedSince(hubs []HubView, hub string) time.Time {
	var out time.Time
	for _, h := range hubs {
		if h.HasCluster && h.IsCopy && h.RecordedHub == hub && !h.RecordedSince.IsZero() &&
			(out.IsZero() || h.RecordedSince.Before(out)) {
			out = h.RecordedSince
		}
	}
	return out
}

// Identity is the outcome of DecideIdentity: which spoke a cluster name stands for across the hubs.
type Identity struct {
	// ID is the identity the agents report for the cluster (its id.k8s.io ClusterClaim), the one every copy
	// records; empty when no agent reports one, or on a Conflict.
	ID string
	// Conflict is true when the name stands for more than one spoke (see DecideIdentity).
	Conflict bool
	// Seen lists, for messages, every identity known and where, in the order of hubs:
	// "hub-a: <id> (claim); hub-b: <id> (copy)"; empty when none is known.
	Seen string
}

// DecideIdentity returns which spoke a cluster name stands for, given the view of every hub in spec order.
// Rules:
//  1. Each reachable hub holding the cluster's ManagedCluster contributes what it knows: the identity the agent
//     of the spoke that joined it reports (ClusterID, a claim) and the identity recorded on its copy
//     (RecordedClusterID). An unreachable hub contributes nothing.
//  2. Conflict when the claims name more than one identity (two spokes joined hubs under one name: ACM's
//     local-cluster on every hub, or per-hub names that collide), or when a copy's claim differs from the identity
//     recorded on it (a spoke joined a copy made for another). Nothing of such a name may be
//     replicated, fenced or written back: a copy would hand one spoke's ManifestWorks to the other.
//  3. Otherwise ID is the one claimed identity, which every copy records from then on. A record alone never
//     conflicts: a copy says which spoke it was made for, not which spoke is there, and follows the claim.
//  4. No claim: ID is empty and the name is replicated as it is (an agent that reports no id.k8s.io claim
//     gives nothing to compare); copies keep what they record.
func DecideIdentity(hubs []HubView) Identity {
	var claims, seen []string
	conflict := false
	for _, h := range hubs {
		if !h.Reachable || !h.HasCluster {
			continue
		}
		if h.ClusterID != "" {
			seen = append(seen, fmt.Sprintf("%s: %s (claim)", h.Hub, h.ClusterID))
			if !slices.Contains(claims, h.ClusterID) {
				claims = append(claims, h.ClusterID)
			}
		}
		if h.RecordedClusterID != "" {
			seen = append(seen, fmt.Sprintf("%s: %s (copy)", h.Hub, h.RecordedClusterID))
			if h.IsCopy && h.ClusterID != "" && h.ClusterID != h.RecordedClusterID {
				conflict = true
			}
		}
	}
	out := Identity{Seen: strings.Join(seen, "; ")}
	switch {
	case conflict || len(claims) > 1:
		out.Conflict = true
	case len(claims) == 1:
		out.ID = claims[0]
	}
	return out
}
