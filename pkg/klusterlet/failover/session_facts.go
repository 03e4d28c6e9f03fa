package failover

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

// sessionFacts are what the hub sessions report, written from their goroutines (the session callbacks) and
// read by the decision goroutine once per round (snapshot); mu guards every field. generation counts sessions:
// the reports of a session that was already replaced are dropped.
type sessionFacts struct {
	mu         sync.Mutex
	generation int
	cur        factsSnapshot
}

// factsSnapshot is what the sessions reported, as of one instant.
type factsSnapshot struct {
	phase    hubsession.Phase
	phaseMsg string
	// phaseSince is when phase began (a new message in the same phase is no new phase).
	phaseSince time.Time
	acceptance HubAcceptance
	available  metav1.ConditionStatus
	// steps is the replicator's report read from the ManagedCluster (zero: none).
	steps HubSteps
	// addOns is, per hub, the add-on registration state its last session reported (status.hubs[].addOns).
	addOns map[string][]failoverv1alpha1.AddOnRegistrationStatus
	// contested and contestedAt are the last report of the hub kubeconfig Secret taken over by another writer
	// (kept across sessions).
	contested   string
	contestedAt time.Time
	// epoch is the highest session epoch a session recorded on its hub or adopted from it, and epochHub that
	// session's hub (kept across sessions: a report that arrives after its session was replaced still tells
	// what that hub carries).
	epoch    int64
	epochHub string
}

// begin starts a new generation (a session is about to be built) and returns it.
func (f *sessionFacts) begin() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.generation++
	return f.generation
}

// reset forgets the phase and ManagedCluster of the previous session (a new one was built at now).
func (f *sessionFacts) reset(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cur.acceptance, f.cur.available, f.cur.phase, f.cur.phaseMsg, f.cur.phaseSince = HubAcceptance{}, "", "", "", now
	f.cur.steps = HubSteps{}
}

// setPhase records the phase of session gen, reported at now; false when gen is not the current session.
func (f *sessionFacts) setPhase(gen int, p hubsession.Phase, msg string, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.generation != gen {
		return false // a late call of a session that was already replaced
	}
	if f.cur.phase != p {
		f.cur.phaseSince = now
	}
	f.cur.phase, f.cur.phaseMsg = p, msg
	return true
}

// setManagedCluster records acceptance, availability and the replicator's report from session gen's
// ManagedCluster (nil: not on the hub), seen at now.
func (f *sessionFacts) setManagedCluster(gen int, mc *clusterv1.ManagedCluster, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.generation != gen {
		return false
	}
	f.cur.acceptance, f.cur.available = HubAcceptance{}, ""
	if mc == nil {
		return true
	}
	f.cur.acceptance = HubAcceptance{Observed: true, HubAcceptsClient: mc.Spec.HubAcceptsClient}
	prev := f.cur.steps
	f.cur.steps = stepsOf(mc.Annotations)
	f.cur.steps.SeenSince = now
	if prev.Report == f.cur.steps.Report && !prev.SeenSince.IsZero() {
		f.cur.steps.SeenSince = prev.SeenSince
	}
	if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted); c != nil {
		f.cur.acceptance.AcceptedCondition = c.Status
	}
	if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c != nil {
		f.cur.available = c.Status
	}
	return true
}

// stepsOf reads the replicator's report from a ManagedCluster's annotations (failoverv1alpha1.AnnotationHubsInStep
// and AnnotationHubsBehind, comma-separated hub names; AnnotationHubsReported, whose confirmation interval is
// left zero when it is malformed). SeenSince is left zero.
func stepsOf(annotations map[string]string) HubSteps {
	split := func(v string) map[string]bool {
		out := map[string]bool{}
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				out[name] = true
			}
		}
		return out
	}
	steps := HubSteps{InStep: split(annotations[failoverv1alpha1.AnnotationHubsInStep]), Behind: split(annotations[failoverv1alpha1.AnnotationHubsBehind]),
		Report: annotations[failoverv1alpha1.AnnotationHubsReported]}
	if r, err := failoverv1alpha1.ParseHubsReport(steps.Report); err == nil {
		steps.Every = r.Every
	}
	return steps
}

// setAddOns records hub's add-on registration states reported by session gen.
func (f *sessionFacts) setAddOns(gen int, hub string, list []failoverv1alpha1.AddOnRegistrationStatus) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.generation != gen {
		return false
	}
	f.cur.addOns[hub] = list
	return true
}

// setContested records a takeover of the hub kubeconfig Secret (from any session) at at.
func (f *sessionFacts) setContested(msg string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cur.contested, f.cur.contestedAt = msg, at
}

// setEpoch records n, a session epoch recorded on (or adopted from) hub's ManagedCluster, when it is higher than
// the one recorded before.
func (f *sessionFacts) setEpoch(hub string, n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n > f.cur.epoch {
		f.cur.epoch, f.cur.epochHub = n, hub
	}
}

// recordedEpoch returns the highest epoch a session recorded and that session's hub (see setEpoch), without the
// copy of the whole snapshot.
func (f *sessionFacts) recordedEpoch() (int64, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur.epoch, f.cur.epochHub
}

func (f *sessionFacts) snapshot() factsSnapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.cur
	c.addOns = maps.Clone(f.cur.addOns)
	return c
}

// view gathers the View of one decision; fc is the FailoverConfig as the round read it (nil: none), facts the
// session's snapshot (zero while no session runs) and configErr why the FailoverConfig is invalid ("" when it
// is valid or absent).
func (r *Orchestrator) view(fc *failoverv1alpha1.FailoverConfig, spec failoverv1alpha1.FailoverConfigSpec, facts factsSnapshot, configErr string, now time.Time) View {
	changed := false
	if h, ok := r.hubs[r.run.hub]; ok && r.run.session != nil {
		changed = h.bootstrap != r.run.bootstrap
	}
	v := View{
		Spec: spec, ConfigError: configErr, ClusterName: r.o.Agent.ClusterName, Hubs: r.hubViews(now),
		Active: r.run.hub, ActiveBootstrapChanged: changed, Memory: r.mem,
		Phase: facts.phase, PhaseMessage: facts.phaseMsg, Acceptance: facts.acceptance, Available: facts.available, Steps: facts.steps,
		RejectedSince: r.rejection.Since(), UnusableSince: r.credentials.Since(),
		Connectivity: r.tracker.Snapshot(), TransportHint: r.explainTransportError(now),
	}
	if fc != nil {
		v.LastActive = fc.Status.ActiveHub
		// The hold a previous process recorded, until this process's first session starts (WorkHold rule 4).
		if held := fc.Status.WorkAgentHeldOn; held != "" && !r.epochRead {
			hold := &WorkHold{Hub: held, Since: now}
			if c := meta.FindStatusCondition(fc.Status.Conditions, failoverv1alpha1.ConditionWorkAgentHeld); c != nil && c.Status == metav1.ConditionTrue {
				hold.Since, hold.Discard = c.LastTransitionTime.Time, c.Reason == ConditionReasonHeldCredentialsRejected
			}
			v.RecordedHold = hold
		}
	}
	return v
}

// observe feeds the since-when trackers of the active hub's rejection and missing credentials.
func (r *Orchestrator) observe(facts factsSnapshot, now time.Time) {
	r.rejection.Observe(facts.acceptance.Rejected(), now)
	r.credentials.Observe(facts.phase == hubsession.PhaseNoCredentials, now)
}

// explainTransportError returns " (<reason>: <sentence>)", the sentence naming the kubeconfig field at fault,
// when the active hub's last transport error is a TLS or proxy problem (e.g. FC-03: the hub serves a
// certificate from a CA the bootstrap kubeconfig does not trust), and "" otherwise.
func (r *Orchestrator) explainTransportError(now time.Time) string {
	h, ok := r.hubs[r.run.hub]
	if !ok {
		return ""
	}
	p := clientcert.ClassifyConnectionError(r.tracker.LastTransportError(), h.bootstrap, now)
	switch p.Reason {
	case clientcert.ReasonHubCANotTrusted, clientcert.ReasonHubServingCertificateInvalid, clientcert.ReasonHubProxyFailed:
		return fmt.Sprintf(" (%s: %s)", p.Reason, p.Message)
	}
	return ""
}
