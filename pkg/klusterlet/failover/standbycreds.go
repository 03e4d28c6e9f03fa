package failover

import (
	"context"
	"sync"
	"time"

	"k8s.io/klog/v2"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

// Hot standby credentials, as the orchestrator runs them: a keeper (StandbyKeeper.Keep) for every standby hub
// whose probe has been Ready, stopped when the hub becomes active, changes its bootstrap kubeconfig or goes
// away; and at every session start, the hand-over of credentials (StandbyKeeper.Swap). Decision goroutine only,
// except each standbyRun's report, which its keeper writes.

// StandbyKeeper keeps hot standby credentials on the standby hubs; *hubsession.StandbyCredentials implements
// it.
type StandbyKeeper interface {
	// Keep keeps valid credentials of hub in its standby Secret until ctx ends, calling report on every change.
	Keep(ctx context.Context, hub hubsession.Hub, report func(hubsession.StandbyStatus)) error
	// Swap prepares the hub kubeconfig Secret for a session on h.To: it keeps (or discards) the credentials of
	// h.From as its standby credentials and writes To's standby credentials into it when they are valid and it
	// holds none valid for To. It reports whether it wrote To's credentials.
	Swap(ctx context.Context, h hubsession.Handover) (used bool, err error)
	// Forget deletes the standby credentials of a hub removed from the configuration.
	Forget(ctx context.Context, hub string) error
	// ForgetOthers deletes the agent's standby credentials of every hub not in keep (hubs removed while the
	// agent was not running) and returns those hubs.
	ForgetOthers(ctx context.Context, keep []string) ([]string, error)
}

// standbySwapTimeout bounds the hand-over of credentials at a session start (a few reads and writes of Secrets
// on the cluster the agent runs in).
const standbySwapTimeout = 10 * time.Second

// standbyRun is one running keeper. bootstrap and cancel are the decision goroutine's; mu guards status and
// stopped, which the keeper's reports write: a keeper stopped (stopStandby) reports into nothing.
type standbyRun struct {
	bootstrap *clientcert.BootstrapKubeconfig
	cancel    context.CancelFunc

	mu      sync.Mutex
	status  *hubsession.StandbyStatus
	stopped bool
}

// report returns the keeper's latest report, nil before the first.
func (run *standbyRun) report() *hubsession.StandbyStatus {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.status
}

// reconcileStandbys starts a keeper for every hub that is not active, has a usable bootstrap kubeconfig and a
// Ready probe, and stops those of hubs that are active, changed their bootstrap kubeconfig or went away. A keeper
// is not stopped because a later probe failed: its CSR controller retries with back-off on its own.
func (r *Orchestrator) reconcileStandbys(ctx context.Context) {
	if r.o.Standby == nil {
		return
	}
	if !r.standbysSwept {
		r.sweepStandbys(ctx)
	}
	for name, run := range r.standbys {
		if h, ok := r.hubs[name]; !ok || name == r.run.hub || h.bootstrap != run.bootstrap {
			r.stopStandby(name)
		}
	}
	for _, name := range r.order {
		h := r.hubs[name]
		if _, running := r.standbys[name]; running || name == r.run.hub || r.run.hub == "" || h.bootstrap == nil ||
			!h.probed || h.probe.Result != failoverv1alpha1.HubProbeReady {
			continue
		}
		kctx, cancel := context.WithCancel(ctx)
		run := &standbyRun{bootstrap: h.bootstrap, cancel: cancel}
		r.standbys[name] = run
		hub := hubsession.Hub{Name: name, Bootstrap: h.bootstrap}
		go func() {
			if err := r.o.Standby.Keep(kctx, hub, func(st hubsession.StandbyStatus) { r.standbyReported(name, run, st) }); err != nil {
				// A configuration error: retried when the hub's bootstrap kubeconfig changes.
				r.standbyReported(name, run, hubsession.StandbyStatus{State: failoverv1alpha1.StandbyCredentialsRefused,
					Secret: hubsession.StandbySecretName(r.o.Agent.SecretName, name), Message: err.Error()})
			}
		}()
	}
}

// sweepStandbys deletes, once per process, the standby Secrets of hubs that are not configured: hubs removed
// while the agent was not running, which forgetStandby never saw. It runs in the first round, when the hubs are
// known (the FailoverConfig informer has synced). When a FailoverConfig is named but its API could not be used at
// start, its hubs are unknown rather than removed, and nothing is swept. One attempt: a failure is a Warning
// event, and the Secrets are left for the next start.
func (r *Orchestrator) sweepStandbys(ctx context.Context) {
	r.standbysSwept = true
	if r.o.FailoverConfigName != "" && r.o.FailoverConfigInformer == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, standbySwapTimeout)
	defer cancel()
	forgotten, err := r.o.Standby.ForgetOthers(ctx, r.order)
	for _, hub := range forgotten {
		r.o.Agent.Recorder.Eventf(ReasonStandbyCredentialsRemoved, "hub %s is no longer configured: its standby credentials Secret %s was deleted",
			hub, hubsession.StandbySecretName(r.o.Agent.SecretName, hub))
	}
	if err != nil {
		r.o.Agent.Recorder.Warningf(ReasonStandbyCredentialsSwapFailed, "deleting the standby credentials of hubs no longer configured: %v; they are tried again at the next start", err)
	}
}

// stopStandby stops hub's keeper, if one runs, without waiting for its informers; its later reports are dropped.
func (r *Orchestrator) stopStandby(hub string) {
	run, ok := r.standbys[hub]
	if !ok {
		return
	}
	run.cancel()
	run.mu.Lock()
	run.stopped = true
	r.o.Metrics.SetStandbyCredentials(hub, "")
	run.mu.Unlock()
	delete(r.standbys, hub)
}

// forgetStandby stops the keeper of a hub removed from the configuration and deletes its standby Secret, so no
// key material is left behind for it.
func (r *Orchestrator) forgetStandby(ctx context.Context, hub string) {
	if r.o.Standby == nil {
		return
	}
	r.stopStandby(hub)
	ctx, cancel := context.WithTimeout(ctx, standbySwapTimeout)
	defer cancel()
	if err := r.o.Standby.Forget(ctx, hub); err != nil {
		r.o.Agent.Recorder.Warningf(ReasonStandbyCredentialsSwapFailed, "hub %s was removed: %v", hub, err)
	}
}

// standbyReported records a keeper's report (from its goroutine), emits an event when the state changes to Ready
// or Refused, and enqueues a round for the status. A report of a keeper stopped meanwhile is dropped.
func (r *Orchestrator) standbyReported(hub string, run *standbyRun, st hubsession.StandbyStatus) {
	run.mu.Lock()
	if run.stopped {
		run.mu.Unlock()
		return
	}
	prev := run.status
	run.status = &st
	// Under run.mu, so that a keeper stopped meanwhile (stopStandby) leaves no series behind.
	r.o.Metrics.SetStandbyCredentials(hub, st.State)
	run.mu.Unlock()
	if prev == nil || prev.State != st.State {
		switch st.State {
		case failoverv1alpha1.StandbyCredentialsReady:
			r.o.Agent.Recorder.Eventf(ReasonStandbyCredentialsReady, "standby hub %s: credentials ready in secret %s; a switch to it needs no CSR", hub, st.Secret)
		case failoverv1alpha1.StandbyCredentialsRefused:
			r.o.Agent.Recorder.Warningf(ReasonStandbyCredentialsRefused, "standby hub %s refuses a client certificate: %s; it stays a cold standby", hub, st.Message)
		}
	}
	r.kick()
}

// keepHeldCredentials handles, when a held session starts on another hub (from: the hub left, "" when none;
// reason: why), the credentials the hand-over would have handled: those of a hub left because it rejected them
// are discarded (its standby Secret deleted; the hub kubeconfig Secret keeps the held hub's, which the release
// discards when hold.Discard says so), and when the hold begins the held hub's credentials in the hub kubeconfig
// Secret are also kept in its standby Secret, so that its keeper needs no CSR while the hub is a standby. A
// failure is reported, as for a hand-over.
func (r *Orchestrator) keepHeldCredentials(ctx context.Context, from string, reason failoverv1alpha1.FailoverReason, hold *WorkHold) {
	f := r.hubs[from]
	if r.o.Standby == nil || from == "" || f == nil || f.bootstrap == nil {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, standbySwapTimeout)
	defer cancel()
	var err error
	switch {
	case reason == failoverv1alpha1.FailoverReasonHubRejected || reason == failoverv1alpha1.FailoverReasonCredentialsInvalid:
		r.stopStandby(from)
		err = r.o.Standby.Forget(sctx, from)
	case from == hold.Hub:
		// A hand-over to the hub held on keeps its credentials in its standby Secret and finds the hub kubeconfig
		// Secret valid for it already: nothing else is written.
		r.stopStandby(from)
		hub := hubsession.Hub{Name: from, Bootstrap: f.bootstrap}
		_, err = r.o.Standby.Swap(sctx, hubsession.Handover{From: &hub, To: hub})
	}
	if err != nil {
		r.o.Agent.Recorder.Warningf(ReasonStandbyCredentialsSwapFailed, "keeping the credentials of hub %s while OCM's work agent is held on hub %s: %v", from, hold.Hub, err)
	}
}

// handOverCredentials runs StandbyKeeper.Swap before a session starts on hub to (from: the hub left, "" when
// none; reason: why it was left, "" for none). The credentials of a hub left because it rejected them
// (HubRejected) or because none were usable (CredentialsInvalid) are discarded, not kept for a switch back. A
// failure is reported and the session starts anyway: it bootstraps if it must.
func (r *Orchestrator) handOverCredentials(ctx context.Context, to, from string, reason failoverv1alpha1.FailoverReason) {
	if r.o.Standby == nil {
		return
	}
	h := r.hubs[to]
	if h == nil || h.bootstrap == nil {
		return
	}
	r.stopStandby(to)
	var fromHub *hubsession.Hub
	if f := r.hubs[from]; from != "" && f != nil && f.bootstrap != nil {
		fromHub = &hubsession.Hub{Name: from, Bootstrap: f.bootstrap}
	}
	sctx, cancel := context.WithTimeout(ctx, standbySwapTimeout)
	defer cancel()
	discard := reason == failoverv1alpha1.FailoverReasonHubRejected || reason == failoverv1alpha1.FailoverReasonCredentialsInvalid
	used, err := r.o.Standby.Swap(sctx, hubsession.Handover{From: fromHub, DiscardFrom: discard, To: hubsession.Hub{Name: to, Bootstrap: h.bootstrap}})
	if err != nil {
		r.o.Agent.Recorder.Warningf(ReasonStandbyCredentialsSwapFailed, "handing over credentials to hub %s: %v; the session on %s bootstraps if it must", to, err, to)
	}
	klog.FromContext(ctx).V(2).Info("Standby credentials handed over", "hub", to, "from", from, "used", used)
}
