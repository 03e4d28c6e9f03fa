package failover

import (
	"context"
	"fmt"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	failoverclient "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned/typed/failover/v1alpha1"
	failoverinformers "github.com/klusterlet-failover/klusterlet-failover/pkg/client/informers/externalversions/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/backoff"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
)

// Session is one hub session as the orchestrator drives it; *hubsession.Session implements it.
type Session interface {
	// Run registers with the session's hub until ctx is cancelled.
	Run(ctx context.Context) error
	// ForceBootstrap asks for a new client certificate with the bootstrap identity; reason goes into the CSR
	// event.
	ForceBootstrap(reason string)
	// AbandonBootstrap records that a bootstrap in progress ends because the agent leaves the hub, not because
	// it failed there.
	AbandonBootstrap()
}

// SessionBuilder builds the session of one hub: p names the hub and carries the orchestrator's observer and
// transport wrapper. The agent's wiring builds it from the configuration every session shares (hubsession.New
// with a hubsession.Config). It returns an error when the session cannot be built.
type SessionBuilder func(p hubsession.Params) (Session, error)

// OrchestratorOptions configures the Orchestrator. Fields without a stated default are required.
type OrchestratorOptions struct {
	// Agent is the configuration every hub session shares; the orchestrator reads from it the agent's identity
	// (ClusterName, AgentName: in messages, and to tell whether the stored hub kubeconfig Secret holds this
	// agent's credentials for a hub), the agent Namespace (where the FailoverConfig, the hub kubeconfig Secret
	// SecretName and the bootstrap Secrets live), SecretInformer (covering Namespace; the caller starts it),
	// Clock (drives every decision; default: the real clock) and Recorder (the failover events, reasons in
	// reasons.go).
	Agent hubsession.Config
	// NewSession builds the session of a hub.
	NewSession SessionBuilder
	// FailoverConfigName is the FailoverConfig to read (--failover-config-name); it may be absent, then only the
	// primary hub is used and no status is written.
	FailoverConfigName string
	// PrimaryBootstrapKubeconfigFile is the primary hub's bootstrap kubeconfig file (--bootstrap-kubeconfig).
	PrimaryBootstrapKubeconfigFile string
	// PrimaryBootstrapSecretName, if set, names a Secret in Namespace whose "kubeconfig" key, when present,
	// is the primary's bootstrap kubeconfig instead of the file; it is watched, so a replacement takes effect at
	// once (FC-02). The klusterlet operator's name is "bootstrap-hub-kubeconfig".
	PrimaryBootstrapSecretName string
	// FileHubs are alternate hubs whose bootstrap kubeconfigs are files (OCM's MultipleHubs
	// --bootstrap-kubeconfigs after the first). They come right after the primary, before the FailoverConfig's
	// spec.alternateHubs; a FailoverConfig alternate with the name of a file hub (or "primary") is skipped with a
	// warning event. Each file is re-read every FilePollInterval, as the primary's. Optional.
	FileHubs []FileHub
	// HubConnectionTimeout is the connection timeout while no FailoverConfig exists (OCM's
	// --hub-connection-timeout-seconds); a FailoverConfig's spec.hubConnectionTimeout, which its CRD defaults
	// to 5m, always wins. Non-positive means the FailoverConfig default (5m).
	HubConnectionTimeout time.Duration
	// FilePollInterval is how often the bootstrap kubeconfig files are re-read (FC-01). Default 5s.
	FilePollInterval time.Duration
	// FailoverConfigInformer covers Namespace; started by the caller. Nil when the FailoverConfig API is not
	// served or not readable (the klusterlet operator installs neither its CRD nor RBAC for it): the agent then
	// runs with the primary and FileHubs only, writes no status, and FailoverConfigClient may be nil too.
	FailoverConfigInformer failoverinformers.FailoverConfigInformer
	// FailoverConfigClient writes the FailoverConfig status.
	FailoverConfigClient failoverclient.FailoverConfigsGetter
	// ProbeTimeout bounds one standby probe. Default 10s.
	ProbeTimeout time.Duration
	// NoViableHubBackoff spaces attempts when no hub is viable. Default 10s doubling to 5m.
	NoViableHubBackoff *backoff.Timer
	// SessionStopTimeout bounds how long a switch waits for the old session to return after its context is
	// cancelled. Its controllers stop at once, but client-go's informer Shutdown waits for reflectors that may
	// sleep out a watch back-off of up to 30s against a lost hub without looking at their stop channel; the
	// switch does not wait for that. Default 2s.
	SessionStopTimeout time.Duration
	// Metrics receives the failover metrics. Default: LegacyRegistryMetrics().
	Metrics *Metrics
	// SpokeIdentity reads the spoke's identities (its claims through Agent.SpokeClusterClient) that the standby
	// probes check a hub's ManagedCluster against; the agent's status controllers share it. Nil: the check is
	// not made.
	SpokeIdentity *managedcluster.SpokeIdentityReader
	// Standby keeps hot standby credentials on the standby hubs and hands them over when a session starts
	// (*hubsession.StandbyCredentials). Nil: every standby is cold, a switch bootstraps on the new hub.
	Standby StandbyKeeper
}

// controllerName names the orchestrator's controller (its work queue and logs).
const controllerName = "FailoverOrchestrator"

// Orchestrator runs one hub session at a time, watches the active hub with Evaluate, probes the standby hubs
// and moves the cluster to the next viable hub in-process when the active one is lost, rejects the cluster,
// has no usable credentials, or a planned switch or failback asks for it (design §6).
//
// It is a library-go factory controller with one worker and one queue key: every round (step) gathers a View,
// lets Decide choose, carries out the Decision's actions, writes the status and requeues itself for when the
// next deadline passes (AddAfter), never in a busy loop. Informer events (the FailoverConfig, the bootstrap
// Secrets), session reports, finished probes and heartbeats, file changes and connectivity transitions only
// record facts and enqueue the key (kick).
//
// Goroutines and what they touch: the worker (step) owns every field below but these, which other goroutines
// write, each under its own guard: facts (the session callbacks; its mutex), probes (the probe goroutines; its
// mutex), files (the file poll, a post-start hook; its mutex), beat.inFlight (an atomic the heartbeat goroutine
// clears), beat.kept (under beat.mu: the heartbeat goroutine replaces it), and tracker and syncCtx's queue, which are safe for concurrent use. o, ctx and syncCtx are set
// before Run's controller starts and not changed after.
type Orchestrator struct {
	o       OrchestratorOptions
	tracker *HubConnectivityTracker
	syncCtx factory.SyncContext
	// ctx is Run's context (with its logger); sessions, probes and heartbeats run under it.
	ctx context.Context

	facts  sessionFacts
	probes probeInbox
	// spokeID is the spoke's identity the standby probes check hubs' ManagedClusters against.
	spokeID spokeIdentity
	files   fileReads
	beat    heartbeatState

	// The last Decision's state, memory and Degraded message: Decide writes them, apply takes them on.
	state    State
	mem      Memory
	degraded string
	// Hub registry (hubs.go) and the active hub's session.
	hubs  map[string]*hubEntry
	order []string
	// duplicateHubs are the FailoverConfig alternates shadowed by a file hub of the same name in the last round
	// (reported when they became shadowed).
	duplicateHubs map[string]bool
	// run is the session of the active hub (run.hub), if any.
	run sessionHandle
	// rejection and credentials track since when the active hub rejects the cluster, and has had no usable
	// credentials.
	rejection   RejectionTracker
	credentials RejectionTracker
	// lastFailover is the latest move (status.lastFailover); unrecordedFailovers counts completed moves not yet
	// added to status.failoverCount.
	lastFailover        *failoverv1alpha1.FailoverRecord
	unrecordedFailovers int32
	// standbys are the running standby credential keepers (standbycreds.go) with their reports.
	standbys map[string]*standbyRun
	// standbysSwept is set once the standby Secrets of hubs not configured at start were deleted
	// (sweepStandbys).
	standbysSwept bool
	// lastStatusWrite is when this process last wrote the FailoverConfig status (StatusWriteDue).
	lastStatusWrite time.Time
	// epoch is the agent's latest session epoch and epochHub the hub of that session (NextEpoch), read from the
	// FailoverConfig status at the first session (epochRead) and raised by what the sessions record.
	epoch     int64
	epochHub  string
	epochRead bool
}

// NewOrchestrator checks o, fills its defaults and returns the orchestrator.
func NewOrchestrator(o OrchestratorOptions) (*Orchestrator, error) {
	switch {
	case o.Agent.Namespace == "" || o.PrimaryBootstrapKubeconfigFile == "":
		return nil, fmt.Errorf("failover orchestrator: namespace and primary bootstrap kubeconfig file are required")
	case o.Agent.ClusterName == "" || o.Agent.AgentName == "" || o.Agent.SecretName == "":
		return nil, fmt.Errorf("failover orchestrator: cluster name, agent name and hub kubeconfig secret name are required")
	case o.Agent.SecretInformer == nil || o.NewSession == nil:
		return nil, fmt.Errorf("failover orchestrator: the secret informer and the session builder are required")
	case o.FailoverConfigInformer != nil && o.FailoverConfigClient == nil:
		return nil, fmt.Errorf("failover orchestrator: the FailoverConfig client is required with the FailoverConfig informer")
	case o.Agent.Recorder == nil:
		return nil, fmt.Errorf("failover orchestrator: recorder is required")
	}
	if o.Agent.Clock == nil {
		o.Agent.Clock = clock.RealClock{}
	}
	if o.FilePollInterval <= 0 {
		o.FilePollInterval = 5 * time.Second
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = 10 * time.Second
	}
	if o.SessionStopTimeout <= 0 {
		o.SessionStopTimeout = 2 * time.Second
	}
	if o.NoViableHubBackoff == nil {
		o.NoViableHubBackoff = backoff.NewTimer(backoff.Default, o.Agent.Clock)
	}
	if o.Metrics == nil {
		o.Metrics = LegacyRegistryMetrics()
	}
	r := &Orchestrator{
		o:             o,
		tracker:       NewHubConnectivityTracker(o.Agent.Clock),
		syncCtx:       factory.NewSyncContext(controllerName, o.Agent.Recorder),
		ctx:           context.Background(),
		facts:         sessionFacts{cur: factsSnapshot{addOns: map[string][]failoverv1alpha1.AddOnRegistrationStatus{}}},
		files:         fileReads{m: map[string]fileRead{}},
		state:         StateSelecting,
		hubs:          map[string]*hubEntry{},
		duplicateHubs: map[string]bool{},
		standbys:      map[string]*standbyRun{},
	}
	// A hub that stops (or starts again) answering is re-evaluated at once, so its events are timely.
	r.tracker.SetOnTransition(r.kick)
	return r, nil
}

// queueKey is the single key of the orchestrator's queue: every round decides about everything.
const queueKey = factory.DefaultQueueKey

// Run drives the agent until ctx is cancelled, then stops the active session and returns nil.
func (r *Orchestrator) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("component", "failover")
	r.ctx = klog.NewContext(ctx, logger)

	// Bootstrap Secrets of the alternates and of the primary are watched, not polled (FC-02); the hub kubeconfig
	// Secret is the session's.
	f := factory.New().WithSyncContext(r.syncCtx).WithSync(r.sync).
		WithFilteredEventsInformers(func(obj interface{}) bool {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			s, ok := obj.(*corev1.Secret)
			return ok && s.Name != r.o.Agent.SecretName
		}, r.o.Agent.SecretInformer.Informer()).
		WithPostStartHooks(r.pollFiles)
	if r.o.FailoverConfigInformer != nil {
		f = f.WithInformers(r.o.FailoverConfigInformer.Informer())
	}
	// The first read is synchronous: the first round must see the primary, or it would start on an alternate.
	r.readFiles()
	r.kick()
	// One worker: every decision is made in one goroutine.
	f.ToController(controllerName, r.o.Agent.Recorder).Run(r.ctx, 1)
	r.stopSession()
	for name := range r.standbys {
		r.stopStandby(name)
	}
	return nil
}

// sync is one round: step, then requeue for when the next round is due. The factory's context is its queue's,
// without the logger; the round uses Run's.
func (r *Orchestrator) sync(_ context.Context, syncCtx factory.SyncContext) error {
	next := r.step(r.ctx)
	if next <= 0 || next > time.Hour {
		next = time.Hour
	}
	syncCtx.Queue().AddAfter(queueKey, next)
	return nil
}

// step makes one round: it gathers the View, lets Decide choose once, carries out the Decision, starts the
// standby probes that are due and writes the status. It returns when the next round is due without any new event.
func (r *Orchestrator) step(ctx context.Context) time.Duration {
	now := r.o.Agent.Clock.Now()
	fc := r.failoverConfig()
	spec, configErr := r.specWithoutFailoverConfig(), ""
	if fc != nil {
		spec = failoverv1alpha1.WithDefaults(fc.Spec)
		if errs := failoverv1alpha1.ValidateFailoverConfig(fc, r.fileHubNames()...); len(errs) > 0 {
			// The CRD schema rejects most of this; what gets through is reported and the valid part used.
			configErr = fmt.Sprintf("FailoverConfig %s/%s is invalid: %v", fc.Namespace, fc.Name, errs.ToAggregate())
		}
	}
	r.reconcileHubs(spec)
	if _, known := r.hubs[spec.SwitchTo]; spec.SwitchTo != "" && !known {
		// Reported in Degraded (configErr); a planned switch to no hub must not also turn failback off.
		spec.SwitchTo = ""
	}
	r.applyProbes()

	var facts factsSnapshot
	if r.run.session != nil {
		facts = r.facts.snapshot()
		r.observe(facts, now)
	}
	r.takeRecordedEpoch()
	d := Decide(r.state, r.view(fc, spec, facts, configErr, now), now)
	wait := minPositive(d.RecheckAfter, r.apply(ctx, d, facts, spec, now))
	// Probes start once the active hub is chosen: the hub about to become active is not probed (its session
	// would repeat the same requests at once).
	wait = minPositive(wait, r.startProbes(ctx, spec, now))
	r.reconcileStandbys(ctx)
	// The status shows the session as it is after the actions (a new session starts with no phase), and the
	// add-on states every session reported.
	r.writeStatus(ctx, fc, spec, r.facts.snapshot(), now)
	return wait
}

// apply takes on d's state and memory and carries out its actions in order. It returns when the shell's own
// timers want the next round (the heartbeat, the no-viable back-off), 0 for no such deadline. What an action
// finds (a session that cannot be built) is recorded on the hub and decided on in the next round, enqueued at
// once.
func (r *Orchestrator) apply(ctx context.Context, d Decision, facts factsSnapshot, spec failoverv1alpha1.FailoverConfigSpec, now time.Time) time.Duration {
	r.state, r.mem, r.degraded = d.Next, d.Memory, d.Degraded
	var wait time.Duration
	for _, a := range d.Actions {
		switch a.Kind {
		case ActEvent:
			if a.Warning {
				r.o.Agent.Recorder.Warningf(a.EventReason, "%s", a.Message)
			} else {
				r.o.Agent.Recorder.Eventf(a.EventReason, "%s", a.Message)
			}
		case ActStartSession:
			r.startSession(ctx, a.Hub, "", "", now)
		case ActRestartSession:
			r.stopSession()
			r.startSession(ctx, a.Hub, "", "", now)
		case ActStopSession:
			r.stopSession()
		case ActReleaseHold:
			// r.mem has no hold now: the new session hands the credentials over from the hub held on, discarding
			// them when that hub had rejected them.
			var reason failoverv1alpha1.FailoverReason
			if a.DiscardHeld {
				reason = failoverv1alpha1.FailoverReasonHubRejected
			}
			r.stopSession()
			r.startSession(ctx, a.Hub, a.HeldOn, reason, now)
		case ActSwitch:
			r.switchTo(ctx, a.Switch, now)
		case ActFinishSwitch:
			r.finishSwitch(a.Switch, now)
		case ActMarkFailed:
			if h, ok := r.hubs[a.Hub]; ok {
				h.failedAt = now
			}
		case ActForceBootstrap:
			if r.run.session != nil {
				r.run.session.ForceBootstrap(a.Message)
			}
		case ActResetBackoff:
			r.o.NoViableHubBackoff.Reset()
		case ActHeartbeat:
			wait = minPositive(wait, r.heartbeat(ctx, facts.phase, spec.HubConnectionTimeout.Duration, now))
		case ActNoViable:
			wait = minPositive(wait, r.noViableBackoff(a))
		}
	}
	return wait
}

// noViableBackoff returns the time until the next attempt after a NoViable action (the no-viable back-off,
// advanced when it has run out) and warns when a.Warning says NoViableHub was just entered.
func (r *Orchestrator) noViableBackoff(a Action) time.Duration {
	d := r.o.NoViableHubBackoff.Remaining()
	if d == 0 {
		d = r.o.NoViableHubBackoff.Next()
	}
	if a.Warning {
		r.o.Agent.Recorder.Warningf(ReasonNoViableHub, "%s; retrying in %s", a.Message, d.Round(time.Second))
	}
	return d
}

func (r *Orchestrator) kick() { r.syncCtx.Queue().Add(queueKey) }

func (r *Orchestrator) kickAfter(d time.Duration) { r.syncCtx.Queue().AddAfter(queueKey, d) }

func minPositive(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	case a < b:
		return a
	}
	return b
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
