package failover

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// StatusView is every fact the FailoverConfig status is built from (BuildStatus).
type StatusView struct {
	// Now is the time of the round; Generation is the FailoverConfig's metadata.generation.
	Now        time.Time
	Generation int64
	// ClusterName is the managed cluster's name, for messages.
	ClusterName string
	// FailedHubSkipPeriod is spec.failedHubSkipPeriod (with its default).
	FailedHubSkipPeriod time.Duration
	// Hubs are the configured hubs in order.
	Hubs []HubStatusView
	// Active is the active hub, "" when none; ActiveServer is its bootstrap kubeconfig's server URL.
	Active, ActiveServer string
	// Verdict is the hub monitor's latest verdict about the active hub.
	Verdict Verdict
	// Phase, PhaseMessage and Available are the active session's facts (see View).
	Phase        hubsession.Phase
	PhaseMessage string
	Available    metav1.ConditionStatus
	// State, Switch, PlannedWait, Hold and Degraded are the orchestrator's state and memory after the round.
	State       State
	Switch      *Switch
	PlannedWait *PlannedWait
	Hold        *WorkHold
	Degraded    string
	// UnrecordedFailovers is the number of completed moves not yet in status.failoverCount; LastFailover is the
	// latest move (EndTime nil while in progress), nil if none in this process.
	UnrecordedFailovers int32
	LastFailover        *failoverv1alpha1.FailoverRecord
	// Contested and ContestedAt are the last takeover of the hub kubeconfig Secret (zero time: none).
	Contested   string
	ContestedAt time.Time
	// Epoch is the agent's latest session epoch (0: none yet); status.epoch never goes down.
	Epoch int64
}

// HubStatusView is one hub as the status shows it.
type HubStatusView struct {
	Name string
	// Server is the server URL of the hub's bootstrap kubeconfig, "" without one; Usable says it parsed.
	Server string
	Usable bool
	// LoadError is why the bootstrap kubeconfig could not be read or parsed, "" when it could.
	LoadError string
	// Probed, Probe and the times are the latest standby probe, when the result last changed, and the last Ready.
	Probed                               bool
	Probe                                ProbeResult
	ProbeTime, ProbeChange, ProbeSuccess time.Time
	// FailedAt is when leaving or bootstrapping on the hub last failed; zero if never.
	FailedAt time.Time
	// AddOns is the add-on registration state its last session reported.
	AddOns []failoverv1alpha1.AddOnRegistrationStatus
	// Standby is the last report of the hub's standby credentials keeper; nil when none runs.
	Standby *hubsession.StandbyStatus
	// Replication is how the replicator last reported the hub against the active hub ("" not reported).
	Replication failoverv1alpha1.HubReplicationState
}

// BuildStatus returns current (the FailoverConfig's status as read) updated with v: the hubs, the active hub,
// the failover count and record, and the Available, Progressing, Degraded, WorkAgentHeld and
// HubKubeconfigContested conditions.
// It is a pure function; current is not modified.
func BuildStatus(current *failoverv1alpha1.FailoverConfigStatus, v StatusView) *failoverv1alpha1.FailoverConfigStatus {
	gen := v.Generation
	hubs := make([]failoverv1alpha1.HubStatus, 0, len(v.Hubs))
	var invalid []string
	for _, h := range v.Hubs {
		hs := failoverv1alpha1.HubStatus{Name: h.Name, Server: h.Server}
		switch {
		case h.Name == v.Active:
			// The active hub is not probed; the hub monitor's verdict says how it is doing.
			hs.ProbeResult = activeHubResult(v.Verdict.Reason)
			hs.Message = "active hub: " + v.PhaseMessage
			if hs.ProbeResult != failoverv1alpha1.HubProbeReady {
				hs.Message = "active hub: " + v.Verdict.Message
			}
		case h.Probed:
			hs.ProbeResult = h.Probe.Result
			hs.Message = h.Probe.Message
			hs.LastProbeTime = timePtr(h.ProbeTime)
			hs.LastTransitionTime = timePtr(h.ProbeChange)
			hs.LastSuccessTime = timePtr(h.ProbeSuccess)
		default:
			hs.ProbeResult = failoverv1alpha1.HubProbeUnknown
		}
		if !h.FailedAt.IsZero() && v.Now.Before(h.FailedAt.Add(v.FailedHubSkipPeriod)) {
			hs.SkippedUntil = timePtr(h.FailedAt.Add(v.FailedHubSkipPeriod))
		}
		hs.Message = text.Truncate(hs.Message, maxStatusMessage)
		hs.AddOns = addOnStatusFor(h.AddOns)
		if h.Name != v.Active {
			hs.Replication = h.Replication
		}
		if st := h.Standby; st != nil && h.Name != v.Active {
			hs.StandbyCredentials = &failoverv1alpha1.StandbyCredentialsStatus{State: st.State, Secret: st.Secret,
				Message: text.Truncate(st.Message, maxStatusMessage), NotAfter: timePtr(st.NotAfter)}
		}
		hubs = append(hubs, hs)
		if !h.Usable || h.LoadError != "" {
			invalid = append(invalid, fmt.Sprintf("hub %s: %s", h.Name, h.LoadError))
		}
	}

	status := current.DeepCopy()
	status.ObservedGeneration = gen
	status.ActiveHub = v.Active
	status.ActiveHubServer = v.ActiveServer
	status.Hubs = hubs
	status.FailoverCount += v.UnrecordedFailovers
	status.Epoch = max(status.Epoch, v.Epoch)
	if v.LastFailover != nil {
		status.LastFailover = v.LastFailover.DeepCopy()
	}
	set := func(c metav1.Condition) {
		c.ObservedGeneration = gen
		meta.SetStatusCondition(&status.Conditions, c)
	}
	if v.Phase == hubsession.PhaseRegistered && v.Available == metav1.ConditionTrue {
		set(metav1.Condition{Type: failoverv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue,
			Reason: ConditionReasonHubAvailable, Message: fmt.Sprintf("cluster %s is Available on hub %s", v.ClusterName, v.Active)})
	} else if v.Active == "" {
		set(metav1.Condition{Type: failoverv1alpha1.ConditionAvailable, Status: metav1.ConditionFalse,
			Reason: ConditionReasonHubNotAvailable, Message: "no hub session runs"})
	} else {
		reason := ConditionReasonHubNotAvailable
		if v.Phase != "" {
			reason = string(v.Phase)
		}
		set(metav1.Condition{Type: failoverv1alpha1.ConditionAvailable, Status: metav1.ConditionFalse,
			Reason: reason, Message: fmt.Sprintf("hub %s: %s", v.Active, orDefault(v.PhaseMessage, "waiting for the cluster to become Available"))})
	}
	if sw := v.Switch; sw != nil {
		set(metav1.Condition{Type: failoverv1alpha1.ConditionProgressing, Status: metav1.ConditionTrue,
			Reason: ConditionReasonSwitching, Message: fmt.Sprintf("moving from hub %s to hub %s: %s", sw.From, sw.To, sw.Message)})
	} else if w := v.PlannedWait; w != nil {
		set(metav1.Condition{Type: failoverv1alpha1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: ReasonPlannedSwitchWaiting,
			Message: fmt.Sprintf("planned switch from hub %s to hub %s waits since %s until the replicator reports hub %s in step (spec.forceSwitch: %s switches now)",
				v.Active, w.Target, w.Since.UTC().Format(time.RFC3339), w.Target, w.Target)})
	} else {
		msg := "on hub " + v.Active
		if v.Active == "" {
			msg = "no hub session runs"
		}
		set(metav1.Condition{Type: failoverv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: ConditionReasonStable, Message: msg})
	}
	switch {
	case v.Degraded != "":
		reason := ConditionReasonDegraded
		if v.State == StateNoViableHub {
			reason = ReasonNoViableHub
		} else if v.Phase == hubsession.PhaseNoCredentials {
			reason = ReasonNoValidCredentials
		}
		msg := v.Degraded
		if len(invalid) > 0 {
			// Hubs that could not be failed over to are named too: they need attention before a disaster.
			msg += "; " + strings.Join(invalid, "; ")
		}
		set(metav1.Condition{Type: failoverv1alpha1.ConditionDegraded, Status: metav1.ConditionTrue, Reason: reason, Message: text.Truncate(msg, maxConditionMessage)})
	case len(invalid) > 0:
		// A hub that could not be failed over to needs attention before a disaster, not after.
		set(metav1.Condition{Type: failoverv1alpha1.ConditionDegraded, Status: metav1.ConditionTrue,
			Reason: ReasonBootstrapKubeconfigInvalid, Message: text.Truncate(strings.Join(invalid, "; "), maxConditionMessage)})
	default:
		set(metav1.Condition{Type: failoverv1alpha1.ConditionDegraded, Status: metav1.ConditionFalse, Reason: ConditionReasonAsExpected})
	}
	status.WorkAgentHeldOn = ""
	if h := v.Hold; h != nil {
		status.WorkAgentHeldOn = h.Hub
		msg := fmt.Sprintf("OCM's work agent is held on hub %s since %s: the cluster is on hub %s, which may lack ManifestWorks or edits the spoke runs; "+
			"it follows once the replicator reports hub %s in step on hub %s (spec.forceSwitch: %s releases it now)",
			h.Hub, h.Since.UTC().Format(time.RFC3339), v.Active, h.Hub, v.Active, v.Active)
		if v.Active == "" {
			msg = fmt.Sprintf("OCM's work agent is held on hub %s since %s; no hub session runs", h.Hub, h.Since.UTC().Format(time.RFC3339))
		}
		reason := ReasonWorkAgentHeld
		if h.Discard {
			reason = ConditionReasonHeldCredentialsRejected
		}
		set(metav1.Condition{Type: failoverv1alpha1.ConditionWorkAgentHeld, Status: metav1.ConditionTrue, Reason: reason, Message: msg})
	} else {
		set(metav1.Condition{Type: failoverv1alpha1.ConditionWorkAgentHeld, Status: metav1.ConditionFalse, Reason: ConditionReasonNotHeld,
			Message: "OCM's work agent reads the credentials of the hub the cluster is on"})
	}
	if c, ok := ContestedCondition(v.Contested, v.ContestedAt, v.Now, gen,
		meta.FindStatusCondition(status.Conditions, failoverv1alpha1.ConditionHubKubeconfigContested)); ok {
		meta.SetStatusCondition(&status.Conditions, c)
	}
	return status
}

// statusView gathers the StatusView of this round.
func (r *Orchestrator) statusView(fc *failoverv1alpha1.FailoverConfig, spec failoverv1alpha1.FailoverConfigSpec, facts factsSnapshot, now time.Time) StatusView {
	if r.run.session == nil {
		// The phase of a session that ended says nothing any more.
		facts.phase, facts.phaseMsg, facts.available = "", "", ""
	}
	v := StatusView{
		Now: now, Generation: fc.Generation, ClusterName: r.o.Agent.ClusterName, FailedHubSkipPeriod: spec.FailedHubSkipPeriod.Duration,
		Active: r.run.hub, Verdict: r.mem.LastVerdict, Phase: facts.phase, PhaseMessage: facts.phaseMsg, Available: facts.available,
		State: r.state, Switch: r.mem.Switch, PlannedWait: r.mem.PlannedWait, Hold: r.mem.Hold, Degraded: r.degraded,
		UnrecordedFailovers: r.unrecordedFailovers, LastFailover: r.lastFailover,
		Contested: facts.contested, ContestedAt: facts.contestedAt, Epoch: r.epoch,
	}
	for _, name := range r.order {
		h := r.hubs[name]
		hv := HubStatusView{Name: name, Usable: h.bootstrap != nil, LoadError: text.Error(h.loadErr), Probed: h.probed, Probe: h.probe,
			ProbeTime: h.probeTime, ProbeChange: h.probeChange, ProbeSuccess: h.probeSuccess, FailedAt: h.failedAt, AddOns: facts.addOns[name],
			Replication: facts.steps.State(name, now)}
		if h.bootstrap != nil {
			hv.Server = h.bootstrap.Hub.Server
		}
		if run, ok := r.standbys[name]; ok {
			hv.Standby = run.report()
		}
		v.Hubs = append(v.Hubs, hv)
	}
	if h, ok := r.hubs[r.run.hub]; ok && h.bootstrap != nil {
		v.ActiveServer = h.bootstrap.Hub.Server
	}
	return v
}

// statusWriteTimeout bounds one FailoverConfig status write: the write runs on the decision goroutine, and a
// spoke apiserver slow to answer must not hold up the rounds that start heartbeats and judge the hub.
const statusWriteTimeout = 5 * time.Second

// writeStatus updates the FailoverConfig status when StatusWriteDue says so; a change held back is written by a
// round enqueued for when it is due, and a failed write (statusWriteTimeout included) is retried a second later.
func (r *Orchestrator) writeStatus(ctx context.Context, fc *failoverv1alpha1.FailoverConfig, spec failoverv1alpha1.FailoverConfigSpec, facts factsSnapshot, now time.Time) {
	if fc == nil {
		return
	}
	status := BuildStatus(&fc.Status, r.statusView(fc, spec, facts, now))
	if due, after := StatusWriteDue(&fc.Status, status, r.lastStatusWrite, now, StatusRefreshInterval); !due {
		if after > 0 {
			r.kickAfter(after)
		}
		return
	}
	updated := fc.DeepCopy()
	updated.Status = *status
	wctx, cancel := context.WithTimeout(ctx, statusWriteTimeout)
	defer cancel()
	if _, err := r.o.FailoverConfigClient.FailoverConfigs(fc.Namespace).UpdateStatus(wctx, updated, metav1.UpdateOptions{FieldManager: "klusterlet-failover"}); err != nil {
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			klog.FromContext(ctx).Error(err, "Updating FailoverConfig status", "failoverConfig", klog.KObj(fc))
			if r.unrecordedFailovers > 0 && r.countRecorded(ctx, fc, status) {
				// The write took effect although its answer was an error (a timeout, a dropped connection):
				// counting the moves again would count them twice.
				r.unrecordedFailovers = 0
			}
		}
		r.kickAfter(time.Second)
		return
	}
	// The count is in the object now; a stale cached object cannot write the old count back, since its
	// resourceVersion conflicts.
	r.unrecordedFailovers = 0
	r.lastStatusWrite = now
}

// countRecordedTimeout bounds the read of countRecorded, which runs on the decision goroutine.
const countRecordedTimeout = 10 * time.Second

// countRecorded reports whether the FailoverConfig fc, read again from the apiserver (at most
// countRecordedTimeout), already holds written's failoverCount and lastFailover: the status write that counted
// this process's unrecorded moves took effect although its answer was an error. Each move has its own
// lastFailover record (its start and end times), so an earlier write that happens to hold the same count does
// not pass. A failed read reports false: the moves stay unrecorded and the next write counts them (they can then
// be counted twice, the lesser harm than losing one).
func (r *Orchestrator) countRecorded(ctx context.Context, fc *failoverv1alpha1.FailoverConfig, written *failoverv1alpha1.FailoverConfigStatus) bool {
	ctx, cancel := context.WithTimeout(ctx, countRecordedTimeout)
	defer cancel()
	cur, err := r.o.FailoverConfigClient.FailoverConfigs(fc.Namespace).Get(ctx, fc.Name, metav1.GetOptions{})
	return err == nil && cur.Status.FailoverCount == written.FailoverCount &&
		equality.Semantic.DeepEqual(cur.Status.LastFailover, written.LastFailover)
}

// StatusRefreshInterval is the least time between two FailoverConfig status writes that change only refresh
// fields (see StatusWriteDue): while a hub is down, its messages name each new transport error and its probe
// times move every probe interval, and writing each of them would update the object every few seconds.
const StatusRefreshInterval = 10 * time.Second

// StatusWriteDue decides whether desired (built by BuildStatus) is written over current (the status as read).
// Refresh fields are the free-text messages (conditions[].message, hubs[].message,
// hubs[].standbyCredentials.message), hubs[].lastProbeTime and hubs[].lastSuccessTime, and hubs[].skippedUntil
// when it is set in both and only moved. The rules:
//  1. nothing differs: no write;
//  2. anything other than a refresh field differs (a result, a reason, a condition's status, the active hub,
//     the failover count, a skip period that starts or ends, ...): write now;
//  3. only refresh fields differ: write when refresh has passed since lastWrite (the previous successful write
//     of this process, zero if none), else not yet, and retryAfter is the time until it is due.
func StatusWriteDue(current, desired *failoverv1alpha1.FailoverConfigStatus, lastWrite, now time.Time, refresh time.Duration) (write bool, retryAfter time.Duration) {
	if equality.Semantic.DeepEqual(current, desired) {
		return false, 0
	}
	if !equality.Semantic.DeepEqual(withoutRefreshFields(current), withoutRefreshFields(desired)) {
		return true, 0
	}
	if due := lastWrite.Add(refresh); now.Before(due) {
		return false, due.Sub(now)
	}
	return true, 0
}

// withoutRefreshFields returns a copy of s with its refresh fields (StatusWriteDue) blanked; a set skippedUntil
// becomes the zero time, so that it still differs from an unset one.
func withoutRefreshFields(s *failoverv1alpha1.FailoverConfigStatus) *failoverv1alpha1.FailoverConfigStatus {
	c := s.DeepCopy()
	for i := range c.Conditions {
		c.Conditions[i].Message = ""
	}
	for i := range c.Hubs {
		h := &c.Hubs[i]
		h.Message, h.LastProbeTime, h.LastSuccessTime = "", nil, nil
		if h.SkippedUntil != nil {
			h.SkippedUntil = &metav1.Time{}
		}
		if h.StandbyCredentials != nil {
			h.StandbyCredentials.Message = ""
		}
	}
	return c
}

// ContestedCondition returns the FailoverConfig condition HubKubeconfigContested for the last takeover of the hub
// kubeconfig Secret this process saw (message from the session, at its time): True with the message for an hour
// (clientcert.DefaultContestQuietPeriod) after it, then False. Without a takeover in this process (at is zero),
// existing (the condition in the status, nil if absent) is kept, except that a True one older than the hour
// (written before a restart) becomes False; ok is false when there is nothing to set.
func ContestedCondition(message string, at, now time.Time, generation int64, existing *metav1.Condition) (c metav1.Condition, ok bool) {
	if at.IsZero() {
		if existing == nil || existing.Status != metav1.ConditionTrue || now.Before(existing.LastTransitionTime.Add(clientcert.DefaultContestQuietPeriod)) {
			return metav1.Condition{}, false
		}
		at = existing.LastTransitionTime.Time
	}
	c = metav1.Condition{Type: failoverv1alpha1.ConditionHubKubeconfigContested, Status: metav1.ConditionTrue,
		Reason: hubsession.ReasonHubKubeconfigContested, Message: text.Truncate(message, maxConditionMessage), ObservedGeneration: generation}
	if !now.Before(at.Add(clientcert.DefaultContestQuietPeriod)) {
		c.Status, c.Reason = metav1.ConditionFalse, ConditionReasonAsExpected
		c.Message = fmt.Sprintf("not contested since %s", at.UTC().Format(time.RFC3339))
	}
	return c, true
}

// maxAddOnStatuses is the CRD's cap on status.hubs[].addOns.
const maxAddOnStatuses = 64

// addOnStatusFor copies a hub's add-on registration states for the status, within the CRD's limits (64 entries,
// messages of maxStatusMessage).
func addOnStatusFor(list []failoverv1alpha1.AddOnRegistrationStatus) []failoverv1alpha1.AddOnRegistrationStatus {
	if len(list) == 0 {
		return nil
	}
	out := make([]failoverv1alpha1.AddOnRegistrationStatus, 0, min(len(list), maxAddOnStatuses))
	for _, a := range list[:min(len(list), maxAddOnStatuses)] {
		c := *a.DeepCopy()
		c.Message = text.Truncate(c.Message, maxStatusMessage)
		out = append(out, c)
	}
	return out
}

// activeHubResult maps the hub monitor's latest verdict reason about the active hub to a HubProbeResult.
func activeHubResult(verdictReason string) failoverv1alpha1.HubProbeResult {
	switch verdictReason {
	case ReasonHubUnreachable, ReasonHubLost, ReasonFailoverFailed:
		return failoverv1alpha1.HubProbeUnreachable
	case ReasonHubRejectionPending, ReasonHubRejected:
		return failoverv1alpha1.HubProbeRejected
	case ReasonNoValidCredentials:
		return failoverv1alpha1.HubProbeUnauthorized
	}
	return failoverv1alpha1.HubProbeReady
}

// Lengths messages are cut to: the CRD's maxLength of status.hubs[].message and status.lastFailover.message,
// and a condition message (metav1.Condition allows 32768). A longer value would make the API server reject the
// whole status update.
const (
	maxStatusMessage    = 1024
	maxConditionMessage = 4096
)

func timePtr(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	mt := apiTime(t)
	return &mt
}

// apiTime returns t at the whole-second precision a metav1.Time keeps on the wire, so that a status built
// in memory compares equal to the same status read back, and unchanged status is not written again.
func apiTime(t time.Time) metav1.Time {
	return metav1.NewTime(t).Rfc3339Copy()
}
