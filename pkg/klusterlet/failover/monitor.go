package failover

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// NoFailover is the Verdict.Trigger of a verdict that keeps the active hub. Every other Trigger is the API's
// FailoverReason of the move it asks for (HubConnectionLost, HubRejected, CredentialsInvalid, PlannedSwitch): the
// same value is the "reason" label of the failovers metric and status.lastFailover.reason.
const NoFailover failoverv1alpha1.FailoverReason = ""

const (
	// DefaultHubConnectionTimeout replaces a non-positive MonitorInput.ConnectionTimeout (design §6 example).
	DefaultHubConnectionTimeout = failoverv1alpha1.DefaultHubConnectionTimeout
	// DefaultRejectionGracePeriod replaces a non-positive MonitorInput.RejectionGracePeriod. It is longer than
	// the 3-minute accept flips of FC-12.
	DefaultRejectionGracePeriod = 5 * time.Minute
)

// MonitorInput is everything Evaluate needs. The caller gathers it at one instant (Now).
type MonitorInput struct {
	// Now is the evaluation time, from the controller's injected clock.
	Now time.Time
	// ActiveHub is the name of the hub the agent runs on ("primary" or an alternate's name).
	ActiveHub string
	// ConnectionTimeout is how long the active hub may go without a successful request before it is lost
	// (FailoverConfig spec.hubConnectionTimeout). Non-positive means DefaultHubConnectionTimeout: a zero
	// value must never make the agent hop at once.
	ConnectionTimeout time.Duration
	// RejectionGracePeriod is how long a rejection must last before it triggers. Non-positive means
	// DefaultRejectionGracePeriod.
	RejectionGracePeriod time.Duration

	// Connectivity is the active hub's HubConnectivityTracker snapshot.
	Connectivity ConnectivitySnapshot
	// Acceptance is what the active hub's ManagedCluster says about this cluster.
	Acceptance HubAcceptance
	// RejectedSince is since when Acceptance.Rejected() has held, kept by the caller's RejectionTracker fed
	// with Acceptance.Rejected(). Zero while Acceptance.Rejected() is true means "just now".
	RejectedSince time.Time
	// Credentials is the state of the active hub's credentials.
	Credentials CredentialsState

	// PlannedTarget is the hub a planned switch asks for; empty for none. The caller passes only names of
	// configured hubs.
	PlannedTarget string
	// PlannedTargetBlockedUntil delays the planned switch while the target is skipped after a failed attempt
	// (its FailedAt+SkipPeriod); zero or past means not blocked. This keeps a failing target from being
	// retried in a loop.
	PlannedTargetBlockedUntil time.Time
}

// HubAcceptance is the active hub's view of the cluster, read from its ManagedCluster
// (open-cluster-management.io/api cluster/v1: spec.hubAcceptsClient, set by the hub admin, and the
// HubAcceptedManagedCluster condition, set by the hub's registration controller).
type HubAcceptance struct {
	// Observed is false until the ManagedCluster has been read; an unobserved cluster is neither accepted nor
	// rejected.
	Observed bool
	// HubAcceptsClient is spec.hubAcceptsClient.
	HubAcceptsClient bool
	// AcceptedCondition is the status of the HubAcceptedManagedCluster condition ("" when absent).
	AcceptedCondition metav1.ConditionStatus
}

// Rejected reports whether the hub rejects a cluster it had accepted: HubAcceptedManagedCluster is False, or
// hubAcceptsClient is false while the condition exists. OCM's hub sets the condition only once it has accepted
// the cluster, so hubAcceptsClient=false without the condition is PendingAcceptance, not a rejection.
func (a HubAcceptance) Rejected() bool {
	if !a.Observed {
		return false
	}
	if a.AcceptedCondition == metav1.ConditionFalse {
		return true
	}
	return !a.HubAcceptsClient && a.AcceptedCondition != ""
}

// PendingAcceptance reports whether the cluster was never accepted on this hub (hubAcceptsClient=false and no
// HubAcceptedManagedCluster condition): the hub admin has not acted yet. While pending, 401/403 answers are
// expected (the hub has not granted RBAC) and do not count as a rejection.
func (a HubAcceptance) PendingAcceptance() bool {
	return a.Observed && !a.HubAcceptsClient && a.AcceptedCondition == ""
}

// CredentialsState says whether the agent has usable credentials for the active hub.
type CredentialsState struct {
	// Usable: the active hub's session can register — its hub kubeconfig Secret passes the design §3 step 2
	// checks, or its bootstrap kubeconfig parses and its client credentials are not expired. False is the
	// session's hubsession.PhaseNoCredentials (design §3 scenario 4); which of the two is usable is the join
	// flow's business, not the monitor's.
	Usable bool
	// UnusableSince is since when the credentials have not been usable (a RejectionTracker fed with !Usable).
	// Zero while they are unusable means "just now".
	UnusableSince time.Time
	// Message explains what is wrong, for the verdict message (no key material).
	Message string
}

// Verdict is the hub monitor's decision.
type Verdict struct {
	// Trigger is what the agent should do; NoFailover means stay.
	Trigger failoverv1alpha1.FailoverReason
	// Reason is an UpperCamelCase constant from reasons.go, suitable for an event or condition reason. For
	// NoFailover it tells what, if anything, is pending (ReasonHubHealthy, ReasonHubUnreachable, ...).
	Reason string
	// Message is a sentence for users naming the hub, the durations and the evidence.
	Message string
	// RecheckAfter is, for NoFailover, the time after which the verdict could change without any new
	// observation (the earliest pending deadline), so the caller requeues exactly then. It is 0 when Trigger
	// is not NoFailover: act now.
	RecheckAfter time.Duration
}

// Evaluate decides whether the agent should leave its active hub. It is a pure function of in.
//
// Rules, checked in this order (the first that fires wins):
//  1. PlannedSwitch when PlannedTarget is set, differs from ActiveHub and is not blocked.
//  2. CredentialsInvalid when neither credential is usable (at once: design §3 scenario 4).
//  3. HubRejected when a rejection has lasted at least RejectionGracePeriod. Rejection is any of
//     hubAcceptsClient=false / HubAcceptedManagedCluster=False (see HubAcceptance.Rejected, timed by
//     RejectedSince) and an ongoing run of 401/403 answers (Connectivity.UnauthorizedSince, ignored while
//     acceptance is pending); its start is the earliest start among the ongoing signals. A rejection that ends
//     before the grace period (a quick false→true flip, FC-12) never triggers, because RejectionTracker and
//     the tracker reset on acceptance and on success.
//  4. HubConnectionLost when the hub has not answered for at least ConnectionTimeout, counted from the latest of
//     Connectivity.TrackingSince, LastSuccess and LastUnauthorized (a zero snapshot counts from Now), and a
//     request failed since then (a transport error, a timeout or a 5xx answer recorded at or after that time).
//     Silence alone is no evidence: an agent whose own requests did not go out (its process starved of CPU, its
//     decision round held up by a slow spoke apiserver) would otherwise take its own stall for a lost hub; the
//     heartbeat, which a running session can always send (Orchestrator.heartbeatClientFor), gets the evidence one
//     way or the other. A 401/403 answer is not a success, but it proves the hub is
//     reachable: a hub that refuses the cluster is judged by rule 3 and its grace period, so a short timeout
//     (e.g. 30 s) cannot turn a quick accept flip (FC-12) into a failover, and a cluster waiting for acceptance
//     is not moved at all.
//
// Explicit user intent comes first; then deterministic local facts; then the hub's explicit statement; then the
// absence of answers, the weakest evidence.
func Evaluate(in MonitorInput) Verdict {
	now := in.Now
	timeout := in.ConnectionTimeout
	if timeout <= 0 {
		timeout = DefaultHubConnectionTimeout
	}
	grace := in.RejectionGracePeriod
	if grace <= 0 {
		grace = DefaultRejectionGracePeriod
	}

	var p pendingSet

	// 1. Planned switch.
	plannedBlocked := false
	if in.PlannedTarget != "" && in.PlannedTarget != in.ActiveHub {
		if in.PlannedTargetBlockedUntil.After(now) {
			plannedBlocked = true
			p.add(in.PlannedTargetBlockedUntil.Sub(now))
		} else {
			return Verdict{
				Trigger: failoverv1alpha1.FailoverReasonPlannedSwitch,
				Reason:  ReasonPlannedSwitchRequested,
				Message: fmt.Sprintf("a planned switch from hub %q to hub %q is requested", in.ActiveHub, in.PlannedTarget),
			}
		}
	}

	// 2. Credentials.
	if !in.Credentials.Usable {
		since := startOrNow(in.Credentials.UnusableSince, now)
		return Verdict{
			Trigger: failoverv1alpha1.FailoverReasonCredentialsInvalid,
			Reason:  ReasonNoValidCredentials,
			Message: withDetail(fmt.Sprintf("neither the hub kubeconfig nor the bootstrap kubeconfig of hub %q is usable (since %s)",
				in.ActiveHub, text.Time(since)), in.Credentials.Message),
		}
	}

	// 3. Rejection.
	rejectedSince, signals := rejection(in, now)
	var rejectionDeadline time.Time
	if !rejectedSince.IsZero() {
		deadline := rejectedSince.Add(grace)
		if !now.Before(deadline) {
			return Verdict{
				Trigger: failoverv1alpha1.FailoverReasonHubRejected,
				Reason:  ReasonHubRejected,
				Message: fmt.Sprintf("hub %q has rejected this cluster since %s, longer than the grace period %s: %s",
					in.ActiveHub, text.Time(rejectedSince), grace, strings.Join(signals, "; ")),
			}
		}
		rejectionDeadline = deadline
		p.add(deadline.Sub(now))
	}

	// 4. Connection.
	c := in.Connectivity
	base := c.TrackingSince
	if c.LastSuccess.After(base) {
		base = c.LastSuccess
	}
	if c.LastUnauthorized.After(base) {
		// A 401/403 answer proves the hub is there; how long it may refuse is the rejection rule's business.
		base = c.LastUnauthorized
	}
	if base.IsZero() {
		base = now
	}
	lostAt := base.Add(timeout)
	unconfirmed := false
	if !now.Before(lostAt) && !failedSince(c, base) {
		// Past the timeout without a failed request: wait for one (the heartbeat's outcome enqueues a round).
		unconfirmed = true
		p.add(unconfirmedRecheck)
	} else if !now.Before(lostAt) {
		return Verdict{
			Trigger: failoverv1alpha1.FailoverReasonHubConnectionLost,
			Reason:  ReasonHubLost,
			Message: fmt.Sprintf("hub %q has not answered for %s (timeout %s): %s",
				in.ActiveHub, now.Sub(base).Round(time.Second), timeout, describeConnectivity(c)),
		}
	}
	if !unconfirmed {
		p.add(lostAt.Sub(now))
	}

	v := Verdict{Trigger: NoFailover, RecheckAfter: p.min}
	switch {
	case unconfirmed:
		v.Reason = ReasonHubUnreachable
		v.Message = fmt.Sprintf("hub %q has not answered for %s (timeout %s), but no request has failed since; "+
			"failover once one does: %s", in.ActiveHub, now.Sub(base).Round(time.Second), timeout, describeConnectivity(c))
	case !rejectionDeadline.IsZero():
		v.Reason = ReasonHubRejectionPending
		v.Message = fmt.Sprintf("hub %q rejects this cluster since %s; failover in %s unless it accepts again: %s",
			in.ActiveHub, text.Time(rejectedSince), rejectionDeadline.Sub(now).Round(time.Second), strings.Join(signals, "; "))
	case lastRequestFailed(c):
		v.Reason = ReasonHubUnreachable
		v.Message = fmt.Sprintf("the latest requests to hub %q failed; failover in %s unless one succeeds: %s",
			in.ActiveHub, lostAt.Sub(now).Round(time.Second), describeConnectivity(c))
	case plannedBlocked:
		v.Reason = ReasonPlannedSwitchRequested
		v.Message = fmt.Sprintf("a planned switch to hub %q waits until %s because that hub failed recently",
			in.PlannedTarget, text.Time(in.PlannedTargetBlockedUntil))
	case in.Acceptance.PendingAcceptance():
		v.Reason = ReasonHubAcceptancePending
		v.Message = fmt.Sprintf("hub %q has not accepted this cluster yet (hubAcceptsClient=false); waiting for the hub admin", in.ActiveHub)
	default:
		v.Reason = ReasonHubHealthy
		v.Message = fmt.Sprintf("hub %q is connected and accepts this cluster", in.ActiveHub)
	}
	return v
}

// rejection returns the start of the ongoing rejection (zero if none) and the signals that make it up.
func rejection(in MonitorInput, now time.Time) (time.Time, []string) {
	var since time.Time
	var signals []string
	earliest := func(t time.Time) {
		if since.IsZero() || t.Before(since) {
			since = t
		}
	}
	if in.Acceptance.Rejected() {
		earliest(startOrNow(in.RejectedSince, now))
		if !in.Acceptance.HubAcceptsClient {
			signals = append(signals, "hubAcceptsClient is false")
		}
		if in.Acceptance.AcceptedCondition == metav1.ConditionFalse {
			signals = append(signals, "condition HubAcceptedManagedCluster is False")
		}
	}
	// 403 before the ManagedCluster was ever read on this hub is what a cluster whose CSR was approved but which
	// the hub admin has not accepted yet sees (no RBAC for it on the hub): pending, not a rejection. A 401 is
	// always counted: the hub does not recognise the credentials at all.
	forbiddenBeforeObserved := !in.Acceptance.Observed && in.Connectivity.LastResponseCode == http.StatusForbidden
	if u := in.Connectivity.UnauthorizedSince; !u.IsZero() && !in.Acceptance.PendingAcceptance() && !forbiddenBeforeObserved {
		earliest(u)
		signals = append(signals, fmt.Sprintf("requests answered 401/403 since %s", text.Time(u)))
	}
	return since, signals
}

// unconfirmedRecheck is how soon the verdict is taken again when the timeout has passed without a failed request
// (rule 4); the heartbeat's outcome enqueues a round sooner.
const unconfirmedRecheck = time.Second

// failedSince reports whether a request failed at or after base: a transport error (a timeout included) or a 5xx
// answer.
func failedSince(c ConnectivitySnapshot, base time.Time) bool {
	if !c.LastErrorTime.IsZero() && !c.LastErrorTime.Before(base) {
		return true
	}
	return c.LastResponseCode >= http.StatusInternalServerError && !c.LastResponse.IsZero() && !c.LastResponse.Before(base)
}

// lastRequestFailed reports whether the latest outcome recorded is a failure (transport error or 5xx) rather
// than a success or a 401/403 answer.
func lastRequestFailed(c ConnectivitySnapshot) bool {
	lastAnswerOK := c.LastSuccess
	if c.LastUnauthorized.After(lastAnswerOK) {
		lastAnswerOK = c.LastUnauthorized
	}
	if !c.LastErrorTime.IsZero() && !c.LastErrorTime.Before(lastAnswerOK) {
		return true
	}
	return c.LastResponseCode >= http.StatusInternalServerError && c.LastResponse.After(lastAnswerOK)
}

// describeConnectivity summarizes a snapshot for messages.
func describeConnectivity(c ConnectivitySnapshot) string {
	var parts []string
	if c.LastSuccess.IsZero() {
		parts = append(parts, fmt.Sprintf("no successful request since tracking began at %s", text.Time(c.TrackingSince)))
	} else {
		parts = append(parts, fmt.Sprintf("last success at %s", text.Time(c.LastSuccess)))
	}
	if !c.LastResponse.IsZero() && c.LastResponseCode != 0 && c.LastResponse.After(c.LastSuccess) {
		parts = append(parts, fmt.Sprintf("last answer at %s was HTTP %d", text.Time(c.LastResponse), c.LastResponseCode))
	}
	if c.LastError != "" {
		parts = append(parts, fmt.Sprintf("last transport error at %s: %s", text.Time(c.LastErrorTime), c.LastError))
	}
	return strings.Join(parts, "; ")
}

// RejectionTracker records since when a boolean signal has held without interruption. Its main use is hub
// rejection (Observe(acceptance.Rejected(), now)); another instance can time missing credentials
// (CredentialsState.UnusableSince) or how long the primary has been healthy (ShouldFailBack). The zero value is
// ready to use and it is safe for concurrent use.
type RejectionTracker struct {
	lock  sync.Mutex
	since time.Time
}

// Observe records the signal at now. A true keeps the earliest start of the current run; a false ends it.
// It returns true when the state changed (false→true or true→false), so the caller emits one event per
// transition (FC-12).
func (r *RejectionTracker) Observe(rejected bool, now time.Time) bool {
	r.lock.Lock()
	defer r.lock.Unlock()
	switch {
	case rejected && r.since.IsZero():
		r.since = now
		return true
	case !rejected && !r.since.IsZero():
		r.since = time.Time{}
		return true
	}
	return false
}

// Since returns the start of the current run, or the zero time when the signal does not hold.
func (r *RejectionTracker) Since() time.Time {
	r.lock.Lock()
	defer r.lock.Unlock()
	return r.since
}

// Reset forgets the current run, e.g. after switching to another hub.
func (r *RejectionTracker) Reset() {
	r.lock.Lock()
	defer r.lock.Unlock()
	r.since = time.Time{}
}

// pendingSet keeps the smallest positive pending duration.
type pendingSet struct {
	min time.Duration
	set bool
}

func (p *pendingSet) add(d time.Duration) {
	if d <= 0 {
		return
	}
	if !p.set || d < p.min {
		p.min, p.set = d, true
	}
}

func startOrNow(t, now time.Time) time.Time {
	if t.IsZero() || t.After(now) {
		return now
	}
	return t
}

func withDetail(msg, detail string) string {
	if detail == "" {
		return msg
	}
	return msg + ": " + detail
}
