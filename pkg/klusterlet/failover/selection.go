package failover

import (
	"time"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// HubCandidate is one configured hub as hub selection sees it.
type HubCandidate struct {
	// Name is the hub's name: "primary" or an alternate's FailoverConfig name.
	Name string
	// FailedAt is when the last attempt to move to (or bootstrap on) this hub failed; zero if never.
	FailedAt time.Time
	// SkipPeriod is how long after FailedAt the hub is skipped, so a hub that just failed is not retried at
	// once (no hub-hopping). The caller may grow it for repeated failures.
	SkipPeriod time.Duration
	// Probe is the result of the hub's latest standby probe; "" when never probed.
	Probe failoverv1alpha1.HubProbeResult
	// Replication is how the replicator last reported the hub on the active hub's ManagedCluster (HubSteps):
	// HubInStep, HubBehind (joining it may apply older ManifestWorks), HubReplicationUnknown (the report went
	// unconfirmed), or "" when the report does not name it (no replicator, a hub it does not keep in step, or one
	// removed from its ReplicationConfig).
	Replication failoverv1alpha1.HubReplicationState
}

// skippedUntil returns when the hub stops being skipped; zero or past means not skipped.
func (c HubCandidate) skippedUntil() time.Time {
	if c.FailedAt.IsZero() || c.SkipPeriod <= 0 {
		return time.Time{}
	}
	return c.FailedAt.Add(c.SkipPeriod)
}

// SelectNext picks the hub to move to from hubs, given in configured order (the primary first, then the
// alternates in FailoverConfig order). It returns ok=false when no hub is viable; the caller then reports
// NoViableHub and retries after a backoff.Timer delay (or NextSkipExpiry), never in a loop.
//
// A hub is viable when it is not skipped (now >= FailedAt+SkipPeriod) and its latest standby probe is Ready or
// it was never probed. A hub whose probe failed is not viable until a later probe says Ready: moving to it
// would fail the same way. Among viable hubs the order is by the replicator's report first, then by the probe,
// then by list order:
//  1. reported in step: probed Ready, then never probed;
//  2. not reported, or reported in a report gone unconfirmed (HubReplicationUnknown): probed Ready, then never
//     probed;
//  3. reported behind: probed Ready, then never probed.
//
// A hub the replicator vouches for beats one it says nothing of, and both beat one it reported behind; a proven
// hub beats an unknown one of the same report even if the unknown one is listed earlier. Without a replicator
// no hub is reported, and the order is the probe's, then the list's. A hub that is behind is still chosen
// rather than staying on a lost hub — the caller warns (Replication of the chosen candidate).
//
// The active hub is excluded unless it is the only configured hub; then it is returned (if viable) so that the
// caller can re-bootstrap on it with the same code path. An empty active (no hub yet, scenario 4) excludes
// nothing.
func SelectNext(hubs []HubCandidate, active string, now time.Time) (name string, ok bool) {
	onlyActive := len(hubs) == 1 && hubs[0].Name == active
	// rank[0..5]: the first hub of each rank in the order above.
	var rank [6]string
	for _, h := range hubs {
		if h.Name == active && !onlyActive {
			continue
		}
		if until := h.skippedUntil(); now.Before(until) {
			continue
		}
		r := -1
		switch h.Probe {
		case failoverv1alpha1.HubProbeReady:
			r = 0
		case "":
			r = 1
		}
		if r < 0 {
			continue
		}
		switch h.Replication {
		case failoverv1alpha1.HubInStep:
		case failoverv1alpha1.HubBehind:
			r += 4
		default:
			r += 2
		}
		if rank[r] == "" {
			rank[r] = h.Name
		}
	}
	for _, name := range rank {
		if name != "" {
			return name, true
		}
	}
	return "", false
}

// candidateNamed returns the candidate named name, false when there is none.
func candidateNamed(hubs []HubCandidate, name string) (HubCandidate, bool) {
	for _, h := range hubs {
		if h.Name == name {
			return h, true
		}
	}
	return HubCandidate{}, false
}

// NextSkipExpiry returns the earliest time after now at which a skipped hub stops being skipped, so the caller
// can requeue exactly then when SelectNext found nothing; ok is false when no hub is skipped.
func NextSkipExpiry(hubs []HubCandidate, now time.Time) (time.Time, bool) {
	var next time.Time
	for _, h := range hubs {
		until := h.skippedUntil()
		if !until.After(now) {
			continue
		}
		if next.IsZero() || until.Before(next) {
			next = until
		}
	}
	return next, !next.IsZero()
}

// ShouldFailBack reports whether the agent, running on an alternate hub, should switch back to the primary.
// primaryHealthySince is since when the primary has been healthy without interruption (e.g. a
// RejectionTracker observing probe == HubProbeReady), zero when it is not healthy; healthyFor is the required
// duration (non-positive: at once). The caller checks that the active hub is not the primary. recheckAfter is
// the time until the answer could become true without a new observation, 0 when nothing is pending.
func ShouldFailBack(policy failoverv1alpha1.FailbackPolicy, primaryHealthySince time.Time, healthyFor time.Duration, now time.Time) (failBack bool, recheckAfter time.Duration) {
	if policy != failoverv1alpha1.FailbackPolicyPrimary || primaryHealthySince.IsZero() {
		return false, 0
	}
	at := primaryHealthySince.Add(max(healthyFor, 0))
	if !now.Before(at) {
		return true, 0
	}
	return false, at.Sub(now)
}
