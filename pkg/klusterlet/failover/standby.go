package failover

import (
	"context"
	"sync"
	"time"

	"k8s.io/klog/v2"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// The standby prober: every hub but the active one is probed once per spec.probeInterval (ProbeRESTConfig once per
// standbyFullProbeInterval, ProbeKeptConnection between; each probe in a goroutine of its own); the decision
// goroutine starts probes and applies their outcomes.

// probeOutcome is a finished standby probe, handed from the probe goroutine to the decision goroutine.
type probeOutcome struct {
	name      string
	bootstrap *clientcert.BootstrapKubeconfig
	result    ProbeResult
	at        time.Time
}

// probeInbox holds the finished probes not yet applied: probe goroutines append, the decision goroutine takes
// them; mu guards list.
type probeInbox struct {
	mu   sync.Mutex
	list []probeOutcome
}

// startProbes starts the standby probe of every hub but the active one that is due, each in its own goroutine
// (a hub without a usable bootstrap kubeconfig is recorded InvalidKubeconfig without a request), and returns the
// time until the next one is due.
func (r *Orchestrator) startProbes(ctx context.Context, spec failoverv1alpha1.FailoverConfigSpec, now time.Time) time.Duration {
	interval := spec.ProbeInterval.Duration
	wait := interval
	for _, name := range r.order {
		h := r.hubs[name]
		if name == r.run.hub {
			continue
		}
		due := h.probeTime.Add(interval)
		if h.bootstrap == nil {
			// Nothing to probe; the result is re-stated once per interval, not on every round (a status write
			// per round would enqueue another round).
			if !h.probed || !now.Before(due) {
				r.recordProbe(h, ProbeResult{Result: failoverv1alpha1.HubProbeInvalidKubeconfig, Message: text.Error(h.loadErr)}, now)
				due = now.Add(interval)
			}
			wait = minPositive(wait, due.Sub(now))
			continue
		}
		if h.probed && now.Before(due) {
			wait = minPositive(wait, due.Sub(now))
			continue
		}
		if h.probeInFlight {
			continue
		}
		h.probeInFlight = true
		full := fullProbeDue(h, now)
		if full {
			h.fullProbeTime = now
		}
		go r.runProbe(ctx, h.name, h.bootstrap, full)
	}
	return wait
}

// standbyFullProbeInterval is how often a standby hub that keeps answering Ready gets a full probe
// (ProbeRESTConfig: a new connection and TLS handshake, the SelfSubjectAccessReviews); the probes between are
// ProbeKeptConnection (two GETs on the connection client-go keeps). A hub's first probe, every probe after one
// that was not Ready, and the first after its bootstrap kubeconfig changed are full. So a changed serving
// certificate or a withdrawn permission is seen within this interval; the switch itself still proves the
// credentials it uses (a CSR, or the standby credentials' own requests).
const standbyFullProbeInterval = 10 * time.Minute

// fullProbeDue reports whether the next standby probe of h is a full one (ProbeRESTConfig): its first since its
// bootstrap kubeconfig was (re)loaded, one after a probe that was not Ready, or standbyFullProbeInterval after the
// last full one started. Otherwise the probe is ProbeKeptConnection.
func fullProbeDue(h *hubEntry, now time.Time) bool {
	return !h.probed || h.probe.Result != failoverv1alpha1.HubProbeReady || !now.Before(h.fullProbeTime.Add(standbyFullProbeInterval))
}

// runProbe probes one hub in its own goroutine, fully (ProbeRESTConfig) or on the kept connection
// (ProbeKeptConnection), and hands the outcome to the decision goroutine.
func (r *Orchestrator) runProbe(ctx context.Context, name string, b *clientcert.BootstrapKubeconfig, full bool) {
	probe := ProbeKeptConnection
	if full {
		probe = ProbeRESTConfig
	}
	res := probe(ctx, b.RestConfig, r.o.ProbeTimeout, r.probeIdentity(ctx, false))
	if res.Result == failoverv1alpha1.HubProbeIdentityConflict {
		// Not on an identity read up to spokeIdentityTTL ago: the spoke may have got its claim since.
		res = probe(ctx, b.RestConfig, r.o.ProbeTimeout, r.probeIdentity(ctx, true))
	}
	res.Message = b.Source + ": " + res.Message
	r.probes.mu.Lock()
	r.probes.list = append(r.probes.list, probeOutcome{name: name, bootstrap: b, result: res, at: r.o.Agent.Clock.Now()})
	r.probes.mu.Unlock()
	r.kick()
}

// applyProbes records the probe outcomes that arrived since the last round.
func (r *Orchestrator) applyProbes() {
	r.probes.mu.Lock()
	outcomes := r.probes.list
	r.probes.list = nil
	r.probes.mu.Unlock()
	for _, p := range outcomes {
		h, ok := r.hubs[p.name]
		if !ok {
			continue // the hub went away while it was probed
		}
		h.probeInFlight = false
		if p.name == r.run.hub {
			continue // became the active hub while it was probed: its session, not a probe, says how it is doing
		}
		if h.bootstrap != p.bootstrap {
			continue // the hub's bootstrap kubeconfig changed while it was probed: the next round probes it anew
		}
		r.recordProbe(h, p.result, p.at)
	}
}

// recordProbe stores a probe result and emits an event on a change of result.
func (r *Orchestrator) recordProbe(h *hubEntry, res ProbeResult, now time.Time) {
	changed := !h.probed || h.probe.Result != res.Result
	h.probed = true
	h.probeTime = now
	if changed {
		h.probeChange = now
		if res.Result == failoverv1alpha1.HubProbeReady {
			r.o.Agent.Recorder.Eventf(ReasonStandbyProbeSucceeded, "standby hub %s is ready: bootstrap kubeconfig works and may create CSRs and ManagedClusters", h.name)
		} else {
			r.o.Agent.Recorder.Warningf(ReasonStandbyProbeFailed, "standby hub %s: %s: %s", h.name, res.Result, res.Message)
		}
	}
	if res.Result == failoverv1alpha1.HubProbeReady {
		h.probeSuccess = now
	}
	h.healthySince.Observe(res.Result == failoverv1alpha1.HubProbeReady, now)
	h.probe = res
	r.o.Metrics.SetStandbyProbeResult(h.name, res.Result)
}

// spokeIdentityTTL is how long the standby probes use the spoke identities they read; spokeIdentityRetry how
// long they wait after a failed read before they read again.
const (
	spokeIdentityTTL   = 10 * time.Minute
	spokeIdentityRetry = 30 * time.Second
)

// spokeIdentity is the spoke's identities as the standby probes last read them (OrchestratorOptions.SpokeIdentity),
// when, and when a read last failed, on the orchestrator's clock. Probes run on goroutines of their own: mu
// guards it.
type spokeIdentity struct {
	mu     sync.Mutex
	ids    managedcluster.SpokeIdentities
	read   time.Time
	failed time.Time
}

// probeIdentity returns what the standby probes check a hub's ManagedCluster against: the cluster name and the
// spoke's identities, read again once spokeIdentityTTL has passed, or at once with refresh (a probe that found
// the hub's ManagedCluster another spoke's confirms it on a fresh read). When they cannot be read (the spoke's
// API does not answer), the last ones read are used, and no read is tried for spokeIdentityRetry; without any,
// the check is not made.
func (r *Orchestrator) probeIdentity(ctx context.Context, refresh bool) ProbeIdentity {
	if r.o.SpokeIdentity == nil || r.o.Agent.SpokeClusterClient == nil {
		return ProbeIdentity{}
	}
	now := r.o.Agent.Clock.Now()
	r.spokeID.mu.Lock()
	defer r.spokeID.mu.Unlock()
	due := refresh || r.spokeID.ids.Current() == "" || now.Sub(r.spokeID.read) >= spokeIdentityTTL
	if due && (r.spokeID.failed.IsZero() || now.Sub(r.spokeID.failed) >= spokeIdentityRetry) {
		readCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		ids, err := r.o.SpokeIdentity.Read(readCtx, r.o.Agent.SpokeClusterClient.ClusterV1alpha1())
		cancel()
		if err != nil {
			r.spokeID.failed = now
			klog.FromContext(ctx).V(2).Info("Standby probes: the spoke's identity could not be read", "err", err)
		} else {
			r.spokeID.ids, r.spokeID.read, r.spokeID.failed = ids, now, time.Time{}
		}
	}
	return ProbeIdentity{ClusterName: r.o.Agent.ClusterName, Spoke: r.spokeID.ids}
}
