package failover

import (
	"context"
	"fmt"
	"time"

	"k8s.io/klog/v2"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// The session lifecycle: building a hub session (with a sessionObserver that reports to sessionFacts),
// starting and stopping it, and switching to another hub, as a Decision's actions ask. Decision goroutine only.

// sessionHandle is the running session of the active hub; the zero value when none runs.
type sessionHandle struct {
	// hub is the active hub; bootstrap is the bootstrap kubeconfig the session was built with.
	hub       string
	bootstrap *clientcert.BootstrapKubeconfig
	// secretName is the Secret the session keeps its credentials in: the hub kubeconfig Secret, or the hub's
	// standby credentials Secret while the work agent is held on another hub (WorkHold).
	secretName string
	session    Session
	cancel     context.CancelFunc
	done       chan struct{}
}

// startSession starts a session on hub name, which becomes the active hub; from is the hub left for it (or, at
// the end of a work hold, the hub the work agent was held on) and reason why, both "" when this is no switch.
// When the session cannot be built, no session runs: the error is recorded on the hub (the
// next round sees it in HubView.SessionError and chooses again, enqueued at once) and startSession returns false.
// While the decision's memory holds the work agent on another hub (Memory.Hold), the hub kubeconfig Secret is
// left alone and the session keeps its credentials in the hub's standby Secret.
func (r *Orchestrator) startSession(ctx context.Context, name, from string, reason failoverv1alpha1.FailoverReason, now time.Time) bool {
	h := r.hubs[name]
	var heldSecret string
	if hold := r.mem.Hold; hold != nil && hold.Hub != name {
		// The session owns the hub's standby Secret now: its keeper stops.
		r.stopStandby(name)
		heldSecret = hubsession.StandbySecretName(r.o.Agent.SecretName, name)
		r.keepHeldCredentials(ctx, from, reason, hold)
	} else {
		// The hub kubeconfig Secret gets the hub's standby credentials, and keeps those of the hub left, before the
		// session reads it.
		r.handOverCredentials(ctx, name, from, reason)
	}
	gen := r.facts.begin()
	var session Session
	err := fmt.Errorf("hub %s has no usable bootstrap kubeconfig", name)
	if h != nil && h.bootstrap != nil {
		epoch := r.nextEpoch(name, from)
		session, err = r.o.NewSession(hubsession.Params{
			Hub:           hubsession.Hub{Name: name, Bootstrap: h.bootstrap},
			Observer:      &sessionObserver{r: r, gen: gen, hub: name},
			WrapTransport: r.tracker.WrapTransport,
			Epoch:         epoch,
			SecretName:    heldSecret,
		})
	}
	if err != nil {
		if h != nil {
			h.sessionErr = err.Error()
		}
		r.o.Agent.Recorder.Warningf(ReasonHubSessionFailed, "no session can be started on hub %s: %v; the hub is skipped until its bootstrap kubeconfig changes", name, err)
		r.kick()
		return false
	}
	r.facts.reset(now)
	r.tracker.Reset(now)
	r.rejection.Reset()
	r.credentials.Reset()
	// Failback asks for a primary healthy for healthyFor since it was left, not since some earlier time.
	for _, n := range []string{from, name} {
		if e, ok := r.hubs[n]; ok && n != "" {
			e.healthySince.Reset()
		}
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	secretName := orDefault(heldSecret, r.o.Agent.SecretName)
	r.run = sessionHandle{hub: name, bootstrap: h.bootstrap, secretName: secretName, session: session, cancel: cancel, done: done}
	go func() {
		defer close(done)
		if err := session.Run(sctx); err != nil {
			klog.FromContext(ctx).Error(err, "Hub session ended", "hub", name)
		}
	}()
	r.o.Metrics.SetActiveHub(name)
	klog.FromContext(ctx).Info("Hub session started", "hub", name, "server", h.bootstrap.Hub.Server, "secret", secretName)
	return true
}

// nextEpoch returns the epoch of a session about to start on hub name, left from from ("" when no switch), and
// takes it as the agent's latest. The first time, it reads the agent's record from the FailoverConfig status
// (epoch and activeHub); the sessions' recorded epochs raise it (step).
func (r *Orchestrator) nextEpoch(name, from string) failoverv1alpha1.AgentEpoch {
	if !r.epochRead {
		r.epochRead = true
		if fc := r.failoverConfig(); fc != nil && fc.Status.Epoch > r.epoch {
			r.epoch, r.epochHub = fc.Status.Epoch, fc.Status.ActiveHub
		}
	}
	// The session just stopped may have recorded a higher epoch than this goroutine has seen.
	r.takeRecordedEpoch()
	epoch := NextEpoch(r.epoch, r.epochHub, name, from)
	r.epoch, r.epochHub = epoch.Number, name
	return epoch
}

// takeRecordedEpoch makes the highest epoch a session recorded or adopted (DecideEpoch rules 1, 3 and 4) the
// agent's latest, with that session's hub, when it is higher than the agent's.
func (r *Orchestrator) takeRecordedEpoch() {
	if epoch, hub := r.facts.recordedEpoch(); epoch > r.epoch {
		r.epoch, r.epochHub = epoch, hub
	}
}

// NextEpoch returns the epoch of a session on hub, given last, the agent's latest epoch (0: none), lastHub, the
// hub of that session ("" unknown), and from, the hub the agent leaves for hub ("" when it is no switch). The
// rules: a session on lastHub keeps last (a restart, or a new session on the same hub, is no move); any other
// session takes last + 1, from from, else from lastHub (a restart onto another hub moved the cluster from there).
func NextEpoch(last int64, lastHub, hub, from string) failoverv1alpha1.AgentEpoch {
	if hub == lastHub && last > 0 {
		return failoverv1alpha1.AgentEpoch{Number: last}
	}
	if from == "" {
		from = lastHub
	}
	return failoverv1alpha1.AgentEpoch{Number: last + 1, From: from}
}

// switchTo leaves the active hub for sw.To: a bootstrap cut short by leaving the hub did not fail there (a
// later switch back starts at once), the old session is stopped and the new one started. When the new session
// cannot be built no session runs (see startSession).
func (r *Orchestrator) switchTo(ctx context.Context, sw *Switch, now time.Time) {
	klog.FromContext(ctx).Info("Switching hub", "from", sw.From, "to", sw.To, "reason", sw.Reason, "message", sw.Message)
	if r.run.session != nil {
		r.run.session.AbandonBootstrap()
	}
	r.stopSession()
	if !r.startSession(ctx, sw.To, sw.From, sw.Reason, now) {
		return
	}
	r.lastFailover = &failoverv1alpha1.FailoverRecord{From: sw.From, To: sw.To, Reason: sw.Reason,
		Message: text.Truncate(sw.Message, maxStatusMessage), StartTime: apiTime(sw.Start)}
	r.o.NoViableHubBackoff.Reset()
}

// stopSession cancels the active session and waits for it to return, at most SessionStopTimeout: what may
// still run after that is the teardown of its hub informers (see OrchestratorOptions.SessionStopTimeout).
func (r *Orchestrator) stopSession() {
	if r.run.cancel == nil {
		return
	}
	r.run.cancel()
	timer := r.o.Agent.Clock.NewTimer(r.o.SessionStopTimeout)
	defer timer.Stop()
	select {
	case <-r.run.done:
	case <-timer.C():
		klog.Background().Info("Hub session still shutting down its informers; not waiting for it",
			"hub", r.run.hub, "timeout", r.o.SessionStopTimeout)
	}
	r.run = sessionHandle{}
}

// finishSwitch records the completed move sw: status.lastFailover and failoverCount, the failovers metric and
// the FailoverSucceeded event.
func (r *Orchestrator) finishSwitch(sw *Switch, now time.Time) {
	end := apiTime(now)
	r.unrecordedFailovers++
	r.lastFailover = &failoverv1alpha1.FailoverRecord{
		From: sw.From, To: sw.To, Reason: sw.Reason, Message: text.Truncate(sw.Message, maxStatusMessage),
		StartTime: apiTime(sw.Start), EndTime: &end, DurationMilliseconds: now.Sub(sw.Start).Milliseconds(),
	}
	r.o.Metrics.RecordFailover(sw.From, sw.To, sw.Reason, now)
	r.o.Agent.Recorder.Eventf(ReasonFailoverSucceeded, "cluster %s moved from hub %s to hub %s in %.1fs (%s)",
		r.o.Agent.ClusterName, sw.From, sw.To, now.Sub(sw.Start).Seconds(), sw.Reason)
}
