package failover

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

// State is where the Orchestrator stands between two rounds. Decide moves it along these transitions (the
// conditions are checked in this order within a round):
//
//	any         --no session runs (after a start, restart or switch that could not be built), or the active hub
//	            was removed from the configuration (its session stops)--> as Selecting
//	Joining, Active, NoViableHub --the active hub's bootstrap kubeconfig changed--> the session restarts on it
//	            (FC-02/FC-03); Active becomes Joining
//	Selecting   --first startable hub (the stored hub kubeconfig's hub first, then spec.switchTo, then order)--> Joining
//	Selecting   --no hub has a usable bootstrap kubeconfig, or no session can be built on one--> NoViableHub
//	Joining     --Registered and the monitor says HubHealthy, no move in progress--> Active
//	Joining, Active, NoViableHub --Evaluate or ShouldFailBack says leave--> Joining with a move in progress
//	            (Memory.Switch: SelectNext found a hub, or the planned/failback target), or NoViableHub (nowhere
//	            to go; the session stays)
//	NoViableHub --a session is Registered and the monitor says HubHealthy--> Active (Joining while a move is in progress)
//	NoViableHub --no session: as Selecting, but the state stays NoViableHub until a session is healthy
//
// A move (Memory.Switch) completes once the target is Registered and its ManagedCluster Available
// (FailoverSucceeded), and fails when that has not happened within hubConnectionTimeout, or when no session
// can be started on the target (FailoverFailed): the target is then left as a failed hub. A move that is still
// unfinished when the agent enters NoViableHub (the target failed too and nowhere else is viable) stays
// recorded, so a late registration on the target still completes it.
type State string

const (
	// StateSelecting: the state before the first round, which starts a session (or enters NoViableHub).
	StateSelecting State = "Selecting"
	// StateJoining: a session was started on the active hub (at start-up, after its bootstrap kubeconfig
	// changed, or as the target of a move) and has not yet been Registered with a healthy verdict, or a move to
	// it has not completed. In the round after a session could not be built, no session runs: Decide then
	// selects as from Selecting.
	StateJoining State = "Joining"
	// StateActive: the session on the active hub has been Registered with a healthy verdict; the monitor
	// watches it.
	StateActive State = "Active"
	// StateNoViableHub: the agent had to leave (or find) a hub and none was viable; Degraded says why. A session
	// on the lost hub, if any, keeps running; attempts are spaced by the no-viable back-off.
	StateNoViableHub State = "NoViableHub"
)

// Switch is a move to another hub in progress.
type Switch struct {
	// From and To are hub names; Message is the verdict that asked for it.
	From, To, Message string
	// Reason is the verdict's Trigger, or FailoverReasonFailback for a switch back under the failback policy.
	Reason failoverv1alpha1.FailoverReason
	// Start is when the old session was left.
	Start time.Time
}

// Memory is what a decision carries to the next round besides State.
type Memory struct {
	// Switch is the move in progress, nil when none.
	Switch *Switch
	// Degraded is why failing over does not work (no viable hub, no usable credentials), "" when it works; the
	// Degraded condition's message is Decision.Degraded.
	Degraded string
	// ForcedBootstrap is set once the active session was asked to re-bootstrap after lasting 401s.
	ForcedBootstrap bool
	// LastVerdict is the monitor's verdict of the previous round (events are emitted on a change of reason).
	LastVerdict Verdict
	// LastAcceptance is the active hub's acceptance of the previous round (events on a transition, FC-12).
	LastAcceptance HubAcceptance
	// PlannedWait is the planned switch (spec.switchTo or failback) that waits for its target to catch up with
	// the active hub; nil when none waits.
	PlannedWait *PlannedWait
	// Hold keeps OCM's work agent on a hub the cluster left; nil when none holds it (see WorkHold).
	Hold *WorkHold
}

// WorkHold keeps OCM's work agent — and anything else that reads the hub kubeconfig Secret — on the hub the
// cluster left, because the hub it moved to may lack ManifestWorks or edits the spoke already runs: the hub
// kubeconfig Secret keeps the credentials of Hub, and the sessions on other hubs keep theirs in the hub's standby
// credentials Secret (hubsession.Params.SecretName). While Hub cannot be reached the work agent applies nothing
// and deletes nothing: the spoke keeps what it has. The rules:
//  1. A failover (not a planned switch) to a hub the replicator reported behind the active hub
//     (HubBehind) or whose report went unconfirmed (HubReplicationUnknown) holds the work agent on the active hub,
//     unless spec.forceSwitch names the target (a person's standing choice of that hub, as for a planned switch).
//     A planned switch waits for the catch-up instead (waitForCatchUp); one a person forced is not held.
//  2. A move while held keeps the hold on the same hub, unless it goes to that hub: the hub kubeconfig Secret
//     holds its credentials, so the hold ends.
//  3. On the active hub, once its session is Registered and no move is in progress, the hold is released
//     (ActReleaseHold) when the replicator's report on the active hub's ManagedCluster names Hub in step (confirmed:
//     HubInStep) in a report written after the hold began there — a value of hubs-reported other than the one the
//     first Registered round that saw the ManagedCluster saw, so that a report left from an earlier stay on that
//     hub never counts; each hub of a hold carried over moves gets its own —, when
//     spec.forceSwitch names the active hub (a person accepts what it lacks), or when Hub is no longer
//     configured. A planned switch that waits does not delay the release.
//  4. A start without a session (the agent restarted) takes the hold recorded in the FailoverConfig status
//     (View.RecordedHold) when the hub kubeconfig Secret still holds the held hub's credentials, and starts on
//     the hub the agent was on (View.LastActive), in its standby Secret.
type WorkHold struct {
	// Hub is the hub whose credentials the hub kubeconfig Secret keeps: the work agent's hub.
	Hub string
	// Since is when the hold began.
	Since time.Time
	// Discard: the hold began on a move away from Hub because Hub rejected the credentials (HubRejected,
	// CredentialsInvalid); the release discards them rather than keeping them for a switch back.
	Discard bool
	// Report is the replicator's hubs-reported value the active hub's ManagedCluster carried at the first
	// Registered round of the hold there (ReportSeen); rule 3 releases only on another one.
	Report     string
	ReportSeen bool
}

// PlannedWait is a planned switch held back because the replicator reported its target behind.
type PlannedWait struct {
	// Target is the hub the switch goes to.
	Target string
	// Since is when the wait began; it lasts until the replicator reports the target in step, or spec.forceSwitch
	// names the target.
	Since time.Time
}

// plannedWaitRecheck is how often a waiting planned switch looks again at the replicator's report.
const plannedWaitRecheck = 5 * time.Second

// HubSteps is the replicator's report, read from the active hub's ManagedCluster, of which other hubs hold
// the cluster's state as the active hub has it (failoverv1alpha1.AnnotationHubsInStep) and which are behind
// (AnnotationHubsBehind). Hubs named in neither are not reported (no replicator, or other hub names).
type HubSteps struct {
	// InStep holds the hub names of failoverv1alpha1.AnnotationHubsInStep.
	InStep map[string]bool
	// Behind holds the hub names of failoverv1alpha1.AnnotationHubsBehind.
	Behind map[string]bool
	// Report is the value of failoverv1alpha1.AnnotationHubsReported, "" when absent.
	Report string
	// Every is the report's confirmation interval (HubsReport.Every); zero when Report is absent or malformed:
	// such a report never goes stale.
	Every time.Duration
	// SeenSince is when the agent first saw Report with its current value (the agent's clock).
	SeenSince time.Time
}

// StaleAt is when the report becomes unknown: ReportStaleConfirmations × Every after SeenSince. Zero when it
// never does (no confirmation interval).
func (s HubSteps) StaleAt() time.Time {
	if s.Every <= 0 || s.SeenSince.IsZero() {
		return time.Time{}
	}
	return s.SeenSince.Add(failoverv1alpha1.ReportStaleConfirmations * s.Every)
}

// State returns how hub stands at now: HubBehind, HubInStep, HubReplicationUnknown when the report names it in
// step but went unconfirmed past StaleAt, or "" when not reported. A hub named behind stays behind however old
// the report: time only takes a hub further behind.
func (s HubSteps) State(hub string, now time.Time) failoverv1alpha1.HubReplicationState {
	switch {
	case s.Behind[hub]:
		return failoverv1alpha1.HubBehind
	case !s.InStep[hub]:
		return ""
	}
	if at := s.StaleAt(); !at.IsZero() && now.After(at) {
		return failoverv1alpha1.HubReplicationUnknown
	}
	return failoverv1alpha1.HubInStep
}

// HubView is one configured hub as a decision sees it.
type HubView struct {
	// Name is "primary" or an alternate's name.
	Name string
	// Usable: the hub has a parsed bootstrap kubeconfig.
	Usable bool
	// SessionError is why the last session on the hub could not be built, "" if it could (or none was tried
	// since the bootstrap kubeconfig last changed). A hub with one is neither started nor moved to: the
	// errors of a session builder come from the configuration, so they last until it changes.
	SessionError string
	// HoldsCredentials: the stored hub kubeconfig Secret passes the checks for this hub (the agent restarted
	// after a failover to it). Only worked out, and consulted, when a hub is to be selected (no session runs,
	// or the active hub was removed).
	HoldsCredentials bool
	// Probed and Probe are the latest standby probe (Probe is meaningless while Probed is false).
	Probed bool
	Probe  failoverv1alpha1.HubProbeResult
	// FailedAt is when leaving or bootstrapping on the hub last failed; zero if never.
	FailedAt time.Time
	// HealthySince is since when the hub's standby probe has been Ready without interruption; zero if not.
	HealthySince time.Time
}

// View is every fact one decision needs, gathered by the Orchestrator at one instant.
type View struct {
	// Spec is the FailoverConfig spec with defaults (or the defaults without a FailoverConfig).
	Spec failoverv1alpha1.FailoverConfigSpec
	// ConfigError is why the FailoverConfig is invalid (the valid part of Spec is used), "" when it is valid or
	// absent.
	ConfigError string
	// ClusterName is the managed cluster's name, for messages.
	ClusterName string
	// Hubs are the configured hubs in order (primary, file hubs, FailoverConfig alternates).
	Hubs []HubView
	// Active is the hub whose session runs; "" when none.
	Active string
	// ActiveBootstrapChanged: Active's bootstrap kubeconfig is no longer the one its session was built with.
	ActiveBootstrapChanged bool
	// Memory is the previous decision's memory.
	Memory Memory

	// Phase and PhaseMessage are the session's last reported phase; PhaseMessage explains it.
	Phase        hubsession.Phase
	PhaseMessage string
	// Acceptance and Available are read from the active hub's ManagedCluster (Available: its
	// ManagedClusterConditionAvailable status, "" when absent).
	Acceptance HubAcceptance
	Available  metav1.ConditionStatus
	// Steps is the replicator's report on the other hubs, from the active hub's ManagedCluster as last seen.
	Steps HubSteps
	// RejectedSince and UnusableSince are since when Acceptance.Rejected() and "no credentials" have held.
	RejectedSince, UnusableSince time.Time
	// Connectivity is the active hub's HubConnectivityTracker snapshot.
	Connectivity ConnectivitySnapshot
	// TransportHint is appended to an unreachable/lost verdict's message: " (<reason>: <sentence>)" for a TLS
	// or proxy fault of the last transport error, else "".
	TransportHint string
	// LastActive is the FailoverConfig's status.activeHub as read; RecordedHold is the hold its status records
	// (status.workAgentHeldOn), given until the first session of the process starts, nil otherwise (WorkHold rule 4).
	LastActive   string
	RecordedHold *WorkHold
}

// ActionKind names a side effect the Orchestrator carries out for a Decision.
type ActionKind string

const (
	// ActEvent: emit an event (Warning, EventReason, Message).
	ActEvent ActionKind = "Event"
	// ActStartSession: start a session on Hub, no switch.
	ActStartSession ActionKind = "StartSession"
	// ActRestartSession: stop the session on Hub, the active hub, and start a new one there (no switch).
	ActRestartSession ActionKind = "RestartSession"
	// ActStopSession: stop the session on Hub, the active hub; no session runs afterwards.
	ActStopSession ActionKind = "StopSession"
	// ActSwitch: stop the active session (its bootstrap is abandoned, not failed) and start one on Switch.To.
	ActSwitch ActionKind = "Switch"
	// ActFinishSwitch: record Switch as a completed failover (status, metrics, FailoverSucceeded event).
	ActFinishSwitch ActionKind = "FinishSwitch"
	// ActMarkFailed: Hub failed now; it is skipped for spec.failedHubSkipPeriod.
	ActMarkFailed ActionKind = "MarkFailed"
	// ActForceBootstrap: ask the active session to obtain a new certificate with the bootstrap identity.
	ActForceBootstrap ActionKind = "ForceBootstrap"
	// ActResetBackoff: the agent works again; reset the no-viable back-off.
	ActResetBackoff ActionKind = "ResetBackoff"
	// ActHeartbeat: the agent stays; keep the quiet active hub's connectivity known (Orchestrator.heartbeat).
	ActHeartbeat ActionKind = "Heartbeat"
	// ActNoViable: no hub is viable (Message); wait for the no-viable back-off, and warn when Warning says
	// NoViableHub was just entered.
	ActNoViable ActionKind = "NoViable"
	// ActReleaseHold: end the work hold (WorkHold rule 3): the hub kubeconfig Secret gets the standby credentials
	// of Hub, the active hub, and keeps those of HeldOn in HeldOn's standby Secret; the session on Hub restarts
	// on the hub kubeconfig Secret. OCM's work agent follows to Hub.
	ActReleaseHold ActionKind = "ReleaseHold"
)

// Action is one side effect of a Decision; which fields are set depends on Kind.
type Action struct {
	Kind ActionKind
	// Hub is the hub of ActStartSession, ActRestartSession, ActStopSession, ActMarkFailed and ActReleaseHold.
	Hub string
	// HeldOn is the hub the work agent was held on (ActReleaseHold); DiscardHeld says its credentials are to be
	// discarded (WorkHold.Discard).
	HeldOn      string
	DiscardHeld bool
	// Switch is the move of ActSwitch and ActFinishSwitch.
	Switch *Switch
	// Warning, EventReason and Message describe ActEvent; Message is also ActForceBootstrap's and ActNoViable's,
	// Warning ActNoViable's.
	Warning     bool
	EventReason string
	Message     string
}

// Decision is what Decide asks for.
type Decision struct {
	// Next is the state after the Actions have been carried out.
	Next State
	// Memory replaces View.Memory.
	Memory Memory
	// Degraded is the Degraded condition's message: View.ConfigError and Memory.Degraded, joined by "; " ("" when
	// neither is set).
	Degraded string
	// Actions are carried out in order.
	Actions []Action
	// RecheckAfter is when the decision could change without a new observation; 0 when nothing is pending
	// (the standby probes, heartbeat and back-off add their own deadlines).
	RecheckAfter time.Duration
}

// Decide is one round of failover decisions: a pure function of the state, the view and now, and the only
// writer of State and Memory. Without an active hub it selects one to start on; with one it feeds Evaluate,
// ShouldFailBack and SelectNext and says whether to stay, complete a move, or leave. See State for the
// transitions.
func Decide(s State, v View, now time.Time) Decision {
	d := decide(s, v, now)
	d.Degraded = joinMessages(v.ConfigError, d.Memory.Degraded)
	return d
}

// decide is Decide but for the Degraded message: it handles a removed active hub and a changed bootstrap
// kubeconfig, and hands the rest to decideWithoutSession or decideOnHub.
func decide(s State, v View, now time.Time) Decision {
	d := Decision{Next: s, Memory: v.Memory}
	if v.Active == "" {
		return decideWithoutSession(d, v)
	}
	if _, ok := v.hub(v.Active); !ok {
		// The active hub was removed from the configuration: its session ends without a decision.
		d.add(Action{Kind: ActStopSession, Hub: v.Active})
		return decideWithoutSession(d, v)
	}
	if v.ActiveBootstrapChanged {
		// FC-02/FC-03: the active hub's bootstrap kubeconfig changed: rejoin with the same identity.
		d.add(Action{Kind: ActRestartSession, Hub: v.Active})
		d.sessionRestarts()
		return d
	}
	return decideOnHub(d, v, now)
}

// decideOnHub decides with a session on the active hub: it completes a move whose target is Registered and
// Available, reports acceptance and verdict changes, fails a move whose target did not register the cluster
// within the connection timeout, and either stays (Degraded and the state follow the session's phase) or leaves.
func decideOnHub(d Decision, v View, now time.Time) Decision {
	mem := &d.Memory
	if mem.Switch != nil && v.Phase == hubsession.PhaseRegistered && v.Available == metav1.ConditionTrue {
		d.add(Action{Kind: ActFinishSwitch, Switch: mem.Switch})
		mem.Switch = nil
	}
	d.reportAcceptance(v)
	verdict, plannedTarget, wait := monitorVerdict(v, mem.Switch != nil, now)
	d.reportVerdict(v.Active, verdict)

	// A switch whose target has not registered the cluster within the connection timeout failed: the target is
	// skipped for a while. A target that registered it is judged like any active hub (the verdict above): a
	// ManagedCluster slow to turn Available — a thousand clusters arriving at once, or a spoke whose own health
	// check fails — is no reason to leave a hub that answers and accepts the cluster; at the deadline the move is
	// done (FinishSwitch), and Available is the status controllers' to report.
	timeout := v.Spec.HubConnectionTimeout.Duration
	if sw := mem.Switch; sw != nil && verdict.Trigger == NoFailover {
		deadline := sw.Start.Add(timeout)
		if !now.Before(deadline) && v.Phase == hubsession.PhaseRegistered {
			d.add(Action{Kind: ActFinishSwitch, Switch: sw})
			mem.Switch = nil
		} else if !now.Before(deadline) {
			msg := fmt.Sprintf("hub %s did not register the cluster within %s (%s)", v.Active, timeout, v.PhaseMessage)
			d.event(true, ReasonFailoverFailed, "failover from %s to %s failed: %s", sw.From, sw.To, msg)
			verdict = Verdict{Trigger: failoverv1alpha1.FailoverReasonHubConnectionLost, Reason: ReasonFailoverFailed, Message: msg}
			// Reported once; leaving the target now marks it failed, and what follows is a new decision.
			mem.Switch = nil
		} else {
			wait = minPositive(wait, deadline.Sub(now))
		}
	}

	if verdict.Trigger != failoverv1alpha1.FailoverReasonPlannedSwitch {
		mem.PlannedWait = nil
	}
	// A planned switch to the hub held on ends the hold itself (rule 2): no release first.
	releasable := verdict.Trigger == NoFailover ||
		verdict.Trigger == failoverv1alpha1.FailoverReasonPlannedSwitch && (mem.Hold == nil || plannedTarget != mem.Hold.Hub)
	if releasable && d.releaseHold(v, now) {
		// The session restarts on the hub kubeconfig Secret.
		d.sessionRestarts()
		return d
	}
	if verdict.Trigger != NoFailover {
		d.leave(v, verdict, plannedTarget, wait, now)
		return d
	}
	switch {
	case v.Phase == hubsession.PhaseNoCredentials:
		mem.Degraded = v.PhaseMessage
	case v.Phase == hubsession.PhaseRegistered && verdict.Reason == ReasonHubHealthy:
		// The active hub works: Degraded clears and NoViableHub ends.
		mem.Degraded = ""
		d.add(Action{Kind: ActResetBackoff})
		d.Next = StateActive
		if mem.Switch != nil {
			d.Next = StateJoining
		}
	}
	d.add(Action{Kind: ActHeartbeat})
	d.RecheckAfter = minPositive(wait, verdict.RecheckAfter)
	if at := v.Steps.StaleAt(); at.After(now) {
		// The report turns unknown then: the status says so, and a ranking made after it reads it so.
		d.RecheckAfter = minPositive(d.RecheckAfter, at.Sub(now)+time.Millisecond)
	}
	return d
}

// monitorVerdict is the hub monitor's verdict about the active hub (Evaluate, with spec.switchTo as the planned
// target once its standby probe is Ready), replaced by a failback when no move is in progress and
// ShouldFailBack says so. It also returns the planned target, and how long until a failback could be due (0:
// none pending).
func monitorVerdict(v View, moving bool, now time.Time) (verdict Verdict, plannedTarget string, wait time.Duration) {
	spec := v.Spec
	in := MonitorInput{
		Now:                  now,
		ActiveHub:            v.Active,
		ConnectionTimeout:    spec.HubConnectionTimeout.Duration,
		RejectionGracePeriod: spec.HubRejectionGracePeriod.Duration,
		Connectivity:         v.Connectivity,
		Acceptance:           v.Acceptance,
		RejectedSince:        v.RejectedSince,
		Credentials: CredentialsState{
			Usable:        v.Phase != hubsession.PhaseNoCredentials,
			UnusableSince: v.UnusableSince,
			Message:       v.PhaseMessage,
		},
	}
	// A planned switch waits until the target's standby probe is Ready (API: spec.switchTo): a target without a
	// usable bootstrap kubeconfig, or one that does not answer, is not switched to.
	if target := spec.SwitchTo; target != "" && target != v.Active {
		if h, ok := v.hub(target); ok && h.startable() && h.Probed && h.Probe == failoverv1alpha1.HubProbeReady {
			in.PlannedTarget = target
			if !h.FailedAt.IsZero() {
				in.PlannedTargetBlockedUntil = h.FailedAt.Add(spec.FailedHubSkipPeriod.Duration)
			}
		}
	}
	verdict = Evaluate(in)
	if verdict.Reason == ReasonHubUnreachable || verdict.Reason == ReasonHubLost {
		verdict.Message += v.TransportHint
	}

	// Failback is a planned switch the agent asks for itself.
	if verdict.Trigger == NoFailover && !moving && v.Active != failoverv1alpha1.HubNamePrimary && spec.SwitchTo == "" && spec.Failback != nil {
		if p, ok := v.hub(failoverv1alpha1.HubNamePrimary); ok && p.startable() {
			back, after := ShouldFailBack(spec.Failback.Policy, p.HealthySince, spec.Failback.HealthyFor.Duration, now)
			if back && (p.FailedAt.IsZero() || !now.Before(p.FailedAt.Add(spec.FailedHubSkipPeriod.Duration))) {
				verdict = Verdict{Trigger: failoverv1alpha1.FailoverReasonPlannedSwitch, Reason: ReasonFailbackStarted,
					Message: fmt.Sprintf("primary hub has been healthy for %s; failing back from %s", spec.Failback.HealthyFor.Duration, v.Active)}
				return verdict, failoverv1alpha1.HubNamePrimary, 0
			} else if after > 0 {
				wait = after
			}
		}
	}
	return verdict, in.PlannedTarget, wait
}

// decideWithoutSession picks the hub to start on: during a work hold (the one in memory, or the one the status
// records: WorkHold rule 4) the hub the agent was last on when startable and not the hub held on, else the hub
// the stored hub kubeconfig belongs to (the agent restarted after a failover), else spec.switchTo when startable,
// else the first startable hub in order. A
// hub is startable with a usable bootstrap kubeconfig and no SessionError. A move in progress to a hub that is
// not picked failed: FailoverFailed, and the target counts as failed.
func decideWithoutSession(d Decision, v View) Decision {
	pick := ""
	if r := v.RecordedHold; d.Memory.Hold == nil && r != nil {
		// WorkHold rule 4: the agent restarted during a hold — when the hub kubeconfig Secret still holds the
		// credentials of the hub held on (a release whose status was not written before the restart is over).
		if h, ok := v.hub(r.Hub); ok && h.HoldsCredentials {
			hold := *r
			d.Memory.Hold = &hold
		}
	}
	if h := d.Memory.Hold; h != nil && v.LastActive != h.Hub {
		if last, ok := v.hub(v.LastActive); ok && last.startable() {
			pick = last.Name
		}
	}
	for _, h := range v.Hubs {
		if pick == "" && h.startable() && h.HoldsCredentials {
			pick = h.Name
		}
	}
	if pick == "" && v.Spec.SwitchTo != "" {
		if h, ok := v.hub(v.Spec.SwitchTo); ok && h.startable() {
			pick = h.Name
		}
	}
	var problems []string
	for _, h := range v.Hubs {
		if pick == "" && h.startable() {
			pick = h.Name
		}
		if h.Usable && h.SessionError != "" {
			problems = append(problems, fmt.Sprintf("hub %s: %s", h.Name, h.SessionError))
		}
	}
	if sw := d.Memory.Switch; sw != nil && sw.To != pick {
		msg := fmt.Sprintf("hub %s was removed from the configuration", sw.To)
		if h, ok := v.hub(sw.To); ok {
			msg = fmt.Sprintf("no session can be started on hub %s", sw.To)
			if h.SessionError != "" {
				msg += ": " + h.SessionError
			}
		}
		d.event(true, ReasonFailoverFailed, "failover from %s to %s failed: %s", sw.From, sw.To, msg)
		d.add(Action{Kind: ActMarkFailed, Hub: sw.To})
		d.Memory.Switch = nil
	}
	if pick == "" {
		msg := "no hub has a usable bootstrap kubeconfig"
		if len(problems) > 0 {
			msg = "no session can be started on any hub with a usable bootstrap kubeconfig: " + strings.Join(problems, "; ")
		}
		d.add(Action{Kind: ActNoViable, Message: msg, Warning: d.Next != StateNoViableHub})
		d.Memory.Degraded = msg
		d.Next = StateNoViableHub
		return d
	}
	if h := d.Memory.Hold; h != nil && h.Hub == pick {
		// WorkHold rule 2: the hub kubeconfig Secret holds pick's credentials.
		d.Memory.Hold = nil
	}
	d.add(Action{Kind: ActStartSession, Hub: pick})
	d.sessionStarts()
	if d.Next != StateNoViableHub {
		// NoViableHub stays until the session is healthy.
		d.Next = StateJoining
	}
	d.RecheckAfter = time.Second
	return d
}

// sessionRestarts is sessionStarts for a new session on the active hub (ActRestartSession, ActReleaseHold):
// Active becomes Joining until the new session is Registered, looked at again within a second.
func (d *Decision) sessionRestarts() {
	d.sessionStarts()
	if d.Next == StateActive {
		d.Next = StateJoining
	}
	d.RecheckAfter = time.Second
}

// sessionStarts forgets what belonged to the previous session: the acceptance last seen and the forced
// bootstrap, which is asked for at most once per session.
func (d *Decision) sessionStarts() {
	d.Memory.LastAcceptance = HubAcceptance{}
	d.Memory.ForcedBootstrap = false
}

// leave decides where to go when verdict asks to leave the active hub: the planned target, else SelectNext
// (the active hub marked failed first); with nowhere to go the agent stays and reports NoViableHub.
func (d *Decision) leave(v View, verdict Verdict, plannedTarget string, wait time.Duration, now time.Time) {
	target := plannedTarget
	planned := verdict.Trigger == failoverv1alpha1.FailoverReasonPlannedSwitch
	if !planned {
		d.add(Action{Kind: ActMarkFailed, Hub: v.Active})
		candidates := v.candidates(v.Active, now)
		name, ok := SelectNext(candidates, v.Active, now)
		if !ok && verdict.Trigger == failoverv1alpha1.FailoverReasonHubRejected && !d.Memory.ForcedBootstrap &&
			v.Connectivity.LastResponseCode == http.StatusUnauthorized {
			// The hub no longer recognises the client certificate (e.g. restored with another client CA) and there
			// is nowhere else to go: obtain a new certificate with the bootstrap identity, once per session.
			d.Memory.ForcedBootstrap = true
			d.add(Action{Kind: ActForceBootstrap, Message: verdict.Message})
			d.event(true, ReasonHubRejected, "hub %s answers 401 to the client certificate and no other hub is viable: requesting a new certificate with the bootstrap identity", v.Active)
		}
		if !ok {
			msg := fmt.Sprintf("%s; no other hub is viable", verdict.Message)
			d.add(Action{Kind: ActNoViable, Message: msg, Warning: d.Next != StateNoViableHub})
			d.Memory.Degraded = msg
			d.Next = StateNoViableHub
			// The next round comes with the back-off, a skip period's end or the next standby probe, whichever is
			// first: a standby that comes back is seen within a probe interval.
			d.RecheckAfter = wait
			if next, ok := NextSkipExpiry(candidates, now); ok {
				d.RecheckAfter = minPositive(d.RecheckAfter, next.Sub(now))
			}
			return
		}
		target = name
		switch c, _ := candidateNamed(candidates, name); c.Replication {
		case failoverv1alpha1.HubBehind:
			d.event(true, ReasonHubBehind, "moving cluster %s to hub %s, which the replicator last reported behind hub %s: no hub in step is viable; "+
				"ManifestWorks there may be older than on %s", v.ClusterName, name, v.Active, v.Active)
		case failoverv1alpha1.HubReplicationUnknown:
			d.event(true, ReasonHubReplicationUnknown, "moving cluster %s to hub %s, which the replicator's report names in step with hub %s but has not "+
				"confirmed for %d of its intervals (it is stopped or cannot reach %s): no hub confirmed in step is viable; ManifestWorks there may be older than on %s",
				v.ClusterName, name, v.Active, failoverv1alpha1.ReportStaleConfirmations, v.Active, v.Active)
		}
	}
	if state := v.Steps.State(target, now); planned && (state == failoverv1alpha1.HubBehind || state == failoverv1alpha1.HubReplicationUnknown) {
		if !d.waitForCatchUp(v, target, state, now) {
			return
		}
	}
	d.Memory.PlannedWait = nil
	d.holdFor(v, verdict, target, planned, now)
	if planned && verdict.Reason == ReasonFailbackStarted {
		d.event(false, ReasonFailbackStarted, "%s", verdict.Message)
	} else if planned {
		d.event(false, ReasonPlannedSwitchRequested, "planned switch from %s to %s requested by FailoverConfig spec.switchTo", v.Active, target)
	}
	d.event(false, ReasonFailoverStarted, "moving cluster %s from hub %s to hub %s: %s", v.ClusterName, v.Active, target, verdict.Message)
	reason := verdict.Trigger
	if verdict.Reason == ReasonFailbackStarted {
		reason = failoverv1alpha1.FailoverReasonFailback
	}
	sw := &Switch{From: v.Active, To: target, Reason: reason, Message: verdict.Message, Start: now}
	d.add(Action{Kind: ActSwitch, Switch: sw})
	d.Memory.Switch = sw
	d.sessionStarts()
	d.Next = StateJoining
	d.RecheckAfter = minPositive(wait, time.Second)
}

// waitForCatchUp holds a planned switch to target, which the replicator reported behind the active hub (state
// HubBehind) or whose report went unconfirmed (HubReplicationUnknown: the hub may be behind), for as long as
// that lasts: edits and creates made on the active hub reach the target before the cluster moves, however long
// the catch-up or the replicator's return takes. It returns false (stay, look again soon) while the wait lasts,
// and true (switch, with a HubBehind warning) when spec.forceSwitch names the target: a person chose the switch
// over what the target may lack.
func (d *Decision) waitForCatchUp(v View, target string, state failoverv1alpha1.HubReplicationState, now time.Time) bool {
	why := fmt.Sprintf("the replicator reports hub %s behind hub %s", target, v.Active)
	until := fmt.Sprintf("the replicator reports hub %s in step with hub %s", target, v.Active)
	if state == failoverv1alpha1.HubReplicationUnknown {
		why = fmt.Sprintf("the replicator's report (%s) has not been confirmed for %s, more than %d of its intervals: hub %s may be behind hub %s",
			v.Steps.Report, now.Sub(v.Steps.SeenSince).Round(time.Second), failoverv1alpha1.ReportStaleConfirmations, target, v.Active)
		until = fmt.Sprintf("a running replicator confirms hub %s in step with hub %s", target, v.Active)
	}
	if v.Spec.ForceSwitch == target {
		since := ""
		if w := d.Memory.PlannedWait; w != nil && w.Target == target {
			since = fmt.Sprintf(" after waiting %s", now.Sub(w.Since).Round(time.Second))
		}
		d.event(true, ReasonHubBehind, "planned switch of cluster %s to hub %s goes ahead%s, forced by FailoverConfig spec.forceSwitch, although %s: "+
			"ManifestWorks there may be older than on %s", v.ClusterName, target, since, why, v.Active)
		return true
	}
	if w := d.Memory.PlannedWait; w == nil || w.Target != target {
		d.Memory.PlannedWait = &PlannedWait{Target: target, Since: now}
		d.event(false, ReasonPlannedSwitchWaiting, "planned switch of cluster %s from hub %s to hub %s waits until %s, as %s "+
			"(set FailoverConfig spec.forceSwitch: %s to switch now, with what hub %s lacks lost to the cluster)",
			v.ClusterName, v.Active, target, until, why, target, target)
	}
	d.add(Action{Kind: ActHeartbeat})
	d.RecheckAfter = plannedWaitRecheck
	return false
}

// holdFor applies WorkHold rules 1 and 2 to a move from the active hub to target, asked for by verdict.
func (d *Decision) holdFor(v View, verdict Verdict, target string, planned bool, now time.Time) {
	switch h := d.Memory.Hold; {
	case h != nil && h.Hub == target:
		d.Memory.Hold = nil
		d.event(false, ReasonWorkAgentReleased, "cluster %s moves back to hub %s, the hub OCM's work agent was held on: the hold ends", v.ClusterName, target)
	case h != nil:
		// The report seen on the hub left says nothing of target's: the release there needs its own.
		carried := *h
		carried.Report, carried.ReportSeen = "", false
		d.Memory.Hold = &carried
		d.event(true, ReasonWorkAgentHeld, "OCM's work agent of cluster %s stays held on hub %s (since %s) while the cluster moves from hub %s to hub %s",
			v.ClusterName, h.Hub, h.Since.UTC().Format(time.RFC3339), v.Active, target)
	case planned || v.Spec.ForceSwitch == target:
		// Not held: a person chose the target.
	default:
		state := v.Steps.State(target, now)
		if state != failoverv1alpha1.HubBehind && state != failoverv1alpha1.HubReplicationUnknown {
			return
		}
		d.Memory.Hold = &WorkHold{Hub: v.Active, Since: now, Discard: verdict.Trigger == failoverv1alpha1.FailoverReasonHubRejected ||
			verdict.Trigger == failoverv1alpha1.FailoverReasonCredentialsInvalid}
		d.event(true, ReasonWorkAgentHeld, "OCM's work agent of cluster %s is held on hub %s: hub %s may lack ManifestWorks or edits the spoke runs "+
			"(replication %s), so the spoke keeps what it has until the replicator reports hub %s in step on hub %s "+
			"(set FailoverConfig spec.forceSwitch: %s to release it now, with what hub %s lacks lost to the cluster)",
			v.ClusterName, v.Active, target, state, v.Active, target, target, target)
	}
}

// releaseHold applies WorkHold rule 3 on the active hub; it returns whether the hold ends.
func (d *Decision) releaseHold(v View, now time.Time) bool {
	h := d.Memory.Hold
	if h == nil || d.Memory.Switch != nil || v.Phase != hubsession.PhaseRegistered {
		return false
	}
	if !h.ReportSeen {
		if !v.Acceptance.Observed {
			// The session has not seen its ManagedCluster yet: its report is still to come.
			return false
		}
		seen := *h
		seen.Report, seen.ReportSeen = v.Steps.Report, true
		d.Memory.Hold, h = &seen, &seen
	}
	var why string
	switch _, configured := v.hub(h.Hub); {
	case !configured:
		why = fmt.Sprintf("hub %s was removed from the configuration", h.Hub)
	case v.Steps.State(h.Hub, now) == failoverv1alpha1.HubInStep && v.Steps.Report != "" && v.Steps.Report != h.Report:
		why = fmt.Sprintf("the replicator reports hub %s in step with hub %s", h.Hub, v.Active)
	case v.Spec.ForceSwitch == v.Active:
		why = fmt.Sprintf("FailoverConfig spec.forceSwitch names hub %s", v.Active)
	default:
		return false
	}
	d.Memory.Hold = nil
	d.add(Action{Kind: ActReleaseHold, Hub: v.Active, HeldOn: h.Hub, DiscardHeld: h.Discard})
	d.event(false, ReasonWorkAgentReleased, "OCM's work agent of cluster %s moves from hub %s to hub %s after a hold of %s: %s",
		v.ClusterName, h.Hub, v.Active, now.Sub(h.Since).Round(time.Second), why)
	return true
}

// reportAcceptance emits an event on each acceptance transition of the active hub (FC-12).
func (d *Decision) reportAcceptance(v View) {
	prev, acc := d.Memory.LastAcceptance, v.Acceptance
	d.Memory.LastAcceptance = acc
	if !acc.Observed || !prev.Observed {
		return
	}
	switch {
	case acc.Rejected() && !prev.Rejected():
		d.event(true, ReasonHubAcceptanceRevoked, "hub %s no longer accepts cluster %s (hubAcceptsClient=%t, HubAcceptedManagedCluster=%s)",
			v.Active, v.ClusterName, acc.HubAcceptsClient, acc.AcceptedCondition)
	case !acc.Rejected() && prev.Rejected():
		d.event(false, ReasonHubAcceptanceRestored, "hub %s accepts cluster %s again", v.Active, v.ClusterName)
	}
}

// reportVerdict emits an event when the monitor's reason changes (hub unreachable, rejection pending, healthy).
func (d *Decision) reportVerdict(active string, v Verdict) {
	prev := d.Memory.LastVerdict
	d.Memory.LastVerdict = v
	if v.Trigger != NoFailover || v.Reason == prev.Reason {
		return
	}
	switch v.Reason {
	case ReasonHubHealthy:
		if prev.Reason != "" {
			d.event(false, ReasonHubRecovered, "hub %s: %s", active, v.Message)
		}
	case ReasonHubAcceptancePending:
		d.event(false, v.Reason, "hub %s: %s", active, v.Message)
	default:
		d.event(true, v.Reason, "hub %s: %s", active, v.Message)
	}
}

func (d *Decision) add(a Action) { d.Actions = append(d.Actions, a) }

// joinMessages joins the non-empty messages with "; ".
func joinMessages(msgs ...string) string {
	var out []string
	for _, m := range msgs {
		if m != "" {
			out = append(out, m)
		}
	}
	return strings.Join(out, "; ")
}

func (d *Decision) event(warning bool, reason, format string, args ...any) {
	d.add(Action{Kind: ActEvent, Warning: warning, EventReason: reason, Message: fmt.Sprintf(format, args...)})
}

// startable: a session may be started on the hub (a usable bootstrap kubeconfig, no SessionError).
func (h HubView) startable() bool { return h.Usable && h.SessionError == "" }

func (v View) hub(name string) (HubView, bool) {
	for _, h := range v.Hubs {
		if h.Name == name {
			return h, true
		}
	}
	return HubView{}, false
}

// candidates are the hubs as SelectNext sees them, with failed (if set) marked failed at now.
func (v View) candidates(failed string, now time.Time) []HubCandidate {
	out := make([]HubCandidate, 0, len(v.Hubs))
	for _, h := range v.Hubs {
		c := HubCandidate{Name: h.Name, FailedAt: h.FailedAt, SkipPeriod: v.Spec.FailedHubSkipPeriod.Duration}
		if h.Name == failed {
			c.FailedAt = now
		}
		if !h.startable() {
			c.Probe = failoverv1alpha1.HubProbeInvalidKubeconfig
		} else if h.Probed {
			c.Probe = h.Probe
		}
		c.Replication = v.Steps.State(h.Name, now)
		out = append(out, c)
	}
	return out
}
