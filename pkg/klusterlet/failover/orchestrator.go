package failover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1client "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	failoverclient "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned/typed/failover/v1alpha1"
	failoverinformers "github.com/klusterlet-failover/klusterlet-failover/pkg/client/informers/externalversions/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

// OrchestratorOptions configures the Orchestrator. Fields without a stated default are required.
type OrchestratorOptions struct {
	// Config is the configuration of every hub session. The orchestrator works with its identity, Namespace (the
	// agent namespace: FailoverConfig, hub kubeconfig Secret and bootstrap Secrets live there), SecretInformer
	// (covering Namespace; started by the caller), Clock (drives every decision; default: real clock) and
	// Recorder (the failover events, reasons in reasons.go) too. A nil BootstrapBackoff gets one shared by the
	// sessions.
	hubsession.Config
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
	NoViableHubBackoff *Backoff
	// SessionStopTimeout bounds how long a switch waits for the old session to return after its context is
	// cancelled. Its controllers stop at once, but client-go's informer Shutdown waits for reflectors that may
	// sleep out a watch back-off of up to 30s against a lost hub without looking at their stop channel; the
	// switch does not wait for that. Default 2s.
	SessionStopTimeout time.Duration
	// Metrics receives the failover metrics. Default: LegacyRegistryMetrics().
	Metrics *Metrics
}

// hubEntry is one configured hub as the orchestrator knows it.
type hubEntry struct {
	name   string
	source string
	raw    []byte
	// readErr is the error reading the source gave (missing Secret or key), "" if none; with source and raw it
	// tells whether the source changed since the last round.
	readErr   string
	bootstrap *clientcert.BootstrapKubeconfig
	// loadErr is readErr or the parse error of raw.
	loadErr error

	failedAt      time.Time
	probe         ProbeResult
	probed        bool
	probeTime     time.Time
	probeChange   time.Time
	probeSuccess  time.Time
	healthySince  RejectionTracker
	probeInFlight bool
}

// FileHub is an alternate hub whose bootstrap kubeconfig is a file.
type FileHub struct {
	// Name is the hub's name in events, metrics and the FailoverConfig status (a DNS-1123 label, not "primary").
	Name string
	// Path is the bootstrap kubeconfig file; file references in it resolve against its directory.
	Path string
}

// fileRead is one read of a bootstrap kubeconfig file: its content, or the read error's message.
type fileRead struct {
	raw    []byte
	errMsg string
}

// hubSource is where a hub's bootstrap kubeconfig was read from, and what was read.
type hubSource struct {
	name, desc string
	raw        []byte
	readErr    error
	// fromFile is set for the --bootstrap-kubeconfig file, whose file references resolve against its directory.
	fromFile bool
}

// probeOutcome is a finished standby probe, handed from the probe goroutine to the loop.
type probeOutcome struct {
	name      string
	bootstrap *clientcert.BootstrapKubeconfig
	result    ProbeResult
	at        time.Time
}

// switchState is an ongoing move to another hub.
type switchState struct {
	from, to string
	reason   string
	message  string
	start    time.Time
}

// Orchestrator runs one hub session at a time, watches the active hub with Evaluate, probes the standby hubs
// and moves the cluster to the next viable hub in-process when the active one is lost, rejects the cluster,
// has no usable credentials, or a planned switch or failback asks for it (design §6).
//
// All decisions happen in one goroutine (Run); informer handlers, sessions and probes only record facts and
// wake it. It re-evaluates exactly when a deadline passes (Verdict.RecheckAfter), never in a busy loop.
type Orchestrator struct {
	o       OrchestratorOptions
	tracker *HubConnectivityTracker
	wake    chan struct{}

	// facts written by callbacks, read by the loop.
	mu         sync.Mutex
	acceptance HubAcceptance
	mcAvail    metav1.ConditionStatus
	phase      hubsession.Phase
	phaseMsg   string
	phaseSince time.Time
	probes     []probeOutcome
	// generation counts sessions; callbacks of an older session are ignored.
	generation int
	// forcedBootstrap is set once the active session was asked to re-bootstrap after lasting 401s.
	forcedBootstrap bool
	// addOns is, per hub, the add-on registration state its last session reported (status.hubs[].addOns).
	addOns map[string][]failoverv1alpha1.AddOnRegistrationStatus
	// contested and contestedAt are the last report of the hub kubeconfig Secret taken over by another writer.
	contested   string
	contestedAt time.Time

	// loop state.
	hubs          map[string]*hubEntry
	order         []string
	active        string
	session       *hubsession.Session
	sessionCancel context.CancelFunc
	sessionDone   chan struct{}
	switching     *switchState
	rejection     RejectionTracker
	credentials   RejectionTracker
	lastVerdict   Verdict
	degraded      string
	noViable      bool
	lastFailover  *failoverv1alpha1.FailoverRecord
	// unrecordedFailovers counts completed switches not yet added to status.failoverCount.
	unrecordedFailovers int32
	lastAcceptance      HubAcceptance
	// files holds the last read of every bootstrap kubeconfig file (the primary's and FileHubs'), by path;
	// guarded by mu.
	files map[string]fileRead
	// duplicateHubs are the FailoverConfig alternates shadowed by a file hub of the same name in the last round
	// (reported when they became shadowed).
	duplicateHubs map[string]bool

	// heartbeat of the active hub (see heartbeat).
	heartbeatInFlight bool
	heartbeatKey      string
	heartbeatClient   clusterv1client.ManagedClusterInterface
	heartbeatDone     bool
}

// NewOrchestrator checks o, fills its defaults and returns the orchestrator.
func NewOrchestrator(o OrchestratorOptions) (*Orchestrator, error) {
	switch {
	case o.Namespace == "" || o.PrimaryBootstrapKubeconfigFile == "":
		return nil, fmt.Errorf("failover orchestrator: namespace and primary bootstrap kubeconfig file are required")
	case o.SecretInformer == nil:
		return nil, fmt.Errorf("failover orchestrator: the secret informer is required")
	case o.FailoverConfigInformer != nil && o.FailoverConfigClient == nil:
		return nil, fmt.Errorf("failover orchestrator: the FailoverConfig client is required with the FailoverConfig informer")
	case o.Recorder == nil:
		return nil, fmt.Errorf("failover orchestrator: recorder is required")
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
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
		o.NoViableHubBackoff = NewBackoff(DefaultBackoffBase, DefaultBackoffCap, o.Clock)
	}
	if o.Metrics == nil {
		o.Metrics = LegacyRegistryMetrics()
	}
	if o.BootstrapBackoff == nil {
		// One for every session of the process: the back-off must survive a switch and a new session.
		o.BootstrapBackoff = clientcert.NewBootstrapBackoff(clientcert.BootstrapBackoffOptions{Clock: o.Clock})
	}
	r := &Orchestrator{
		o:       o,
		tracker: NewHubConnectivityTracker(o.Clock),
		wake:    make(chan struct{}, 1),
		hubs:    map[string]*hubEntry{},
		files:   map[string]fileRead{},
		addOns:  map[string][]failoverv1alpha1.AddOnRegistrationStatus{},

		duplicateHubs: map[string]bool{},
	}
	// A hub that stops (or starts again) answering is re-evaluated at once, so its events are timely.
	r.tracker.SetOnTransition(r.kick)
	return r, nil
}

// Run drives the agent until ctx is cancelled, then stops the active session and returns nil.
func (r *Orchestrator) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("component", "failover")
	ctx = klog.NewContext(ctx, logger)

	kick := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { r.kick() },
		UpdateFunc: func(interface{}, interface{}) { r.kick() },
		DeleteFunc: func(interface{}) { r.kick() },
	}
	synced := []cache.InformerSynced{r.o.SecretInformer.Informer().HasSynced}
	if r.o.FailoverConfigInformer != nil {
		if _, err := r.o.FailoverConfigInformer.Informer().AddEventHandler(kick); err != nil {
			return fmt.Errorf("failover orchestrator: watch FailoverConfig: %w", err)
		}
		synced = append(synced, r.o.FailoverConfigInformer.Informer().HasSynced)
	}
	// Bootstrap Secrets of the alternates and of the primary are watched, not polled (FC-02).
	if _, err := r.o.SecretInformer.Informer().AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj interface{}) bool {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			s, ok := obj.(*corev1.Secret)
			return ok && s.Name != r.o.SecretName
		},
		Handler: kick,
	}); err != nil {
		return fmt.Errorf("failover orchestrator: watch secrets: %w", err)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil
	}
	// The first read is synchronous: the first round must see the primary, or it would start on an alternate.
	r.readFiles()
	go r.pollFile(ctx)
	defer r.stopSession()

	timer := r.o.Clock.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := r.step(ctx)
		if next <= 0 || next > time.Hour {
			next = time.Hour
		}
		if !timer.Stop() {
			select {
			case <-timer.C():
			default:
			}
		}
		timer.Reset(next)
		select {
		case <-ctx.Done():
			return nil
		case <-r.wake:
		case <-timer.C():
		}
	}
}

// step makes one round of decisions and returns when the next round is due without any new event.
func (r *Orchestrator) step(ctx context.Context) time.Duration {
	logger := klog.FromContext(ctx)
	now := r.o.Clock.Now()
	fc := r.failoverConfig()
	spec := r.specWithoutFailoverConfig()
	if fc != nil {
		spec = failoverv1alpha1.WithDefaults(fc.Spec)
		if errs := failoverv1alpha1.ValidateFailoverConfig(fc); len(errs) > 0 {
			// The CRD schema rejects most of this; what gets through is reported and the valid part used.
			r.setDegraded(fmt.Sprintf("FailoverConfig %s/%s is invalid: %v", fc.Namespace, fc.Name, errs.ToAggregate()))
		}
	}
	r.reconcileHubs(ctx, spec, now)
	r.applyProbes()

	noHub := "no hub has a usable bootstrap kubeconfig"
	if r.active == "" {
		if name := r.initialHub(spec, now); name != "" && !r.startSession(ctx, name, "", "", now) {
			noHub = r.degraded // why the session could not be built
		}
	}
	// Probes start once the active hub is chosen: the hub about to become active is not probed (its session
	// would repeat the same requests at once).
	wait := r.startProbes(ctx, spec, now)
	if r.active == "" {
		// The standby probes go on at their interval while the back-off runs.
		return minPositive(wait, r.noViableHub(now, noHub))
	}

	// A finished switch is recorded once the cluster is registered and Available on the new hub.
	r.mu.Lock()
	phase, phaseMsg, phaseSince := r.phase, r.phaseMsg, r.phaseSince
	acc, avail := r.acceptance, r.mcAvail
	r.mu.Unlock()
	if r.switching != nil && phase == hubsession.PhaseRegistered && avail == metav1.ConditionTrue {
		r.finishSwitch(now)
	}
	r.reportAcceptance(acc)

	// Hub monitor.
	r.rejection.Observe(acc.Rejected(), now)
	noCreds := phase == hubsession.PhaseNoCredentials
	r.credentials.Observe(noCreds, now)
	in := MonitorInput{
		Now:                  now,
		ActiveHub:            r.active,
		ConnectionTimeout:    spec.HubConnectionTimeout.Duration,
		RejectionGracePeriod: spec.HubRejectionGracePeriod.Duration,
		Connectivity:         r.tracker.Snapshot(),
		Acceptance:           acc,
		RejectedSince:        r.rejection.Since(),
		Credentials: CredentialsState{
			HubKubeconfigValid: !noCreds,
			BootstrapUsable:    !noCreds,
			UnusableSince:      r.credentials.Since(),
			Message:            phaseMsg,
		},
	}
	// A planned switch waits until the target's standby probe is Ready (API: spec.switchTo): a target without a
	// usable bootstrap kubeconfig, or one that does not answer, is not switched to.
	if target := spec.SwitchTo; target != "" && target != r.active {
		if h, ok := r.hubs[target]; ok && h.bootstrap != nil && h.probed && h.probe.Result == ProbeReady {
			in.PlannedTarget = target
			if !h.failedAt.IsZero() {
				in.PlannedTargetBlockedUntil = h.failedAt.Add(spec.FailedHubSkipPeriod.Duration)
			}
		}
	}
	verdict := Evaluate(in)
	if verdict.Reason == ReasonHubUnreachable || verdict.Reason == ReasonHubLost {
		verdict.Message += r.explainTransportError(now)
	}

	// Failback is a planned switch the agent asks for itself.
	if verdict.Trigger == TriggerNone && r.switching == nil && r.active != failoverv1alpha1.HubNamePrimary && spec.SwitchTo == "" && spec.Failback != nil {
		if p, ok := r.hubs[failoverv1alpha1.HubNamePrimary]; ok {
			back, after := ShouldFailBack(FailbackPolicy(spec.Failback.Policy), p.healthySince.Since(), spec.Failback.HealthyFor.Duration, now)
			if back && (p.failedAt.IsZero() || !now.Before(p.failedAt.Add(spec.FailedHubSkipPeriod.Duration))) {
				verdict = Verdict{Trigger: TriggerPlannedSwitch, Reason: ReasonFailbackStarted,
					Message: fmt.Sprintf("primary hub has been healthy for %s; failing back from %s", spec.Failback.HealthyFor.Duration, r.active)}
				in.PlannedTarget = failoverv1alpha1.HubNamePrimary
			} else if after > 0 {
				wait = minPositive(wait, after)
			}
		}
	}
	r.reportVerdict(verdict)

	// A switch that does not complete within the connection timeout failed: the target is skipped for a while.
	if r.switching != nil && verdict.Trigger == TriggerNone {
		deadline := r.switching.start.Add(spec.HubConnectionTimeout.Duration)
		if !now.Before(deadline) {
			msg := fmt.Sprintf("hub %s did not register the cluster within %s (%s)", r.active, spec.HubConnectionTimeout.Duration, phaseMsg)
			r.o.Recorder.Warningf(ReasonFailoverFailed, "failover from %s to %s failed: %s", r.switching.from, r.switching.to, msg)
			verdict = Verdict{Trigger: TriggerHubLost, Reason: ReasonFailoverFailed, Message: msg}
			// Reported once; leaving the target now marks it failed, and what follows is a new decision.
			r.switching = nil
		} else {
			wait = minPositive(wait, deadline.Sub(now))
		}
	}

	if verdict.Trigger == TriggerNone {
		r.clearDegradedIf(phase, phaseMsg, now, phaseSince)
		r.writeStatus(ctx, fc, spec, now)
		wait = minPositive(wait, r.heartbeat(ctx, phase, spec.HubConnectionTimeout.Duration, now))
		return minPositive(wait, verdict.RecheckAfter)
	}

	// Leave the active hub.
	target := ""
	planned := verdict.Trigger == TriggerPlannedSwitch
	if planned {
		target = in.PlannedTarget
	} else {
		if h, ok := r.hubs[r.active]; ok {
			h.failedAt = now
		}
		name, ok := SelectNext(r.candidates(spec), r.active, now)
		if !ok && verdict.Trigger == TriggerHubRejected && r.session != nil && !r.forcedBootstrap &&
			r.tracker.Snapshot().LastResponseCode == http.StatusUnauthorized {
			// The hub no longer recognises the client certificate (e.g. restored with another client CA) and there
			// is nowhere else to go: obtain a new certificate with the bootstrap identity, once per session.
			r.forcedBootstrap = true
			r.session.ForceBootstrap(verdict.Message)
			r.o.Recorder.Warningf(ReasonHubRejected, "hub %s answers 401 to the client certificate and no other hub is viable: requesting a new certificate with the bootstrap identity", r.active)
		}
		if !ok {
			msg := fmt.Sprintf("%s; no other hub is viable", verdict.Message)
			// The next round comes with the back-off, a skip period's end or the next standby probe, whichever is
			// first: a standby that comes back is seen within a probe interval.
			d := minPositive(wait, r.noViableHub(now, msg))
			if next, ok := NextSkipExpiry(r.candidates(spec), now); ok {
				d = minPositive(d, next.Sub(now))
			}
			r.writeStatus(ctx, fc, spec, now)
			return d
		}
		target = name
	}
	logger.Info("Switching hub", "from", r.active, "to", target, "trigger", verdict.Trigger, "reason", verdict.Reason, "message", verdict.Message)
	if planned && verdict.Reason == ReasonFailbackStarted {
		r.o.Recorder.Eventf(ReasonFailbackStarted, "%s", verdict.Message)
	} else if planned {
		r.o.Recorder.Eventf(ReasonPlannedSwitchRequested, "planned switch from %s to %s requested by FailoverConfig spec.switchTo", r.active, target)
	}
	r.o.Recorder.Eventf(ReasonFailoverStarted, "moving cluster %s from hub %s to hub %s: %s", r.o.ClusterName, r.active, target, verdict.Message)
	reason := string(verdict.Trigger)
	if verdict.Reason == ReasonFailbackStarted {
		reason = string(failoverv1alpha1.FailoverReasonFailback)
	}
	from := r.active
	if r.session != nil {
		// A bootstrap cut short by leaving the hub did not fail there: a later switch back starts at once.
		r.session.AbandonBootstrap()
	}
	r.stopSession()
	if !r.startSession(ctx, target, from, reason, now) {
		// Not expected (targets have a parsed bootstrap kubeconfig); start over from the hub order.
		r.active, r.switching = "", nil
		r.writeStatus(ctx, fc, spec, now)
		return r.o.NoViableHubBackoff.Next()
	}
	r.switching.message = verdict.Message
	r.lastFailover = &failoverv1alpha1.FailoverRecord{From: from, To: target, Reason: failoverv1alpha1.FailoverReason(reasonForRecord(reason)),
		Message: truncate(verdict.Message, maxStatusMessage), StartTime: apiTime(now)}
	r.noViable = false
	r.o.NoViableHubBackoff.Reset()
	r.writeStatus(ctx, fc, spec, now)
	return minPositive(wait, time.Second)
}

// explainTransportError returns " (<reason>: <sentence>)", the sentence naming the kubeconfig field at fault,
// when the active hub's last transport error is a TLS or proxy problem (e.g. FC-03: the hub serves a
// certificate from a CA the bootstrap kubeconfig does not trust), and "" otherwise.
func (r *Orchestrator) explainTransportError(now time.Time) string {
	h, ok := r.hubs[r.active]
	if !ok {
		return ""
	}
	p := clientcert.ClassifyConnectionError(r.tracker.LastTransportError(), h.bootstrap, now)
	switch p.Reason {
	case clientcert.HubCANotTrustedReason, clientcert.HubServingCertificateInvalidReason, clientcert.HubProxyFailedReason:
		return fmt.Sprintf(" (%s: %s)", p.Reason, p.Message)
	}
	return ""
}

// heartbeat keeps the hub monitor informed about a quiet active hub. The monitor judges the hub by the agent's
// own requests, but a registered agent may send none for minutes (the lease is renewed once per
// leaseDurationSeconds, status only when it changed), so a hubConnectionTimeout shorter than that would declare
// a healthy hub lost. When no request has been answered for a third of the timeout, heartbeat GETs the cluster's
// own ManagedCluster through the connectivity tracker, with the credentials of the session's phase: the hub
// kubeconfig Secret once registered, the bootstrap kubeconfig while bootstrapping; none without credentials.
// A 401/403 answer counts as such (the rejection rule judges it), a success ends a 401/403 run. At most one
// heartbeat is in flight. It returns when the next one may be due.
func (r *Orchestrator) heartbeat(ctx context.Context, phase hubsession.Phase, timeout time.Duration, now time.Time) time.Duration {
	if timeout <= 0 {
		timeout = DefaultHubConnectionTimeout
	}
	interval := max(timeout/3, time.Second)
	r.mu.Lock()
	if r.heartbeatDone {
		r.heartbeatInFlight, r.heartbeatDone = false, false
	}
	inFlight := r.heartbeatInFlight
	r.mu.Unlock()
	c := r.tracker.Snapshot()
	last := c.TrackingSince
	for _, t := range []time.Time{c.LastSuccess, c.LastUnauthorized} {
		if t.After(last) {
			last = t
		}
	}
	if due := last.Add(interval); now.Before(due) {
		return due.Sub(now)
	}
	if inFlight {
		return interval
	}
	client := r.heartbeatClientFor(phase)
	if client == nil {
		return interval
	}
	r.mu.Lock()
	r.heartbeatInFlight = true
	r.mu.Unlock()
	name, hub := r.o.ClusterName, r.active
	go func() {
		hctx, cancel := context.WithTimeout(ctx, interval)
		defer cancel()
		if _, err := client.Get(hctx, name, metav1.GetOptions{}); err != nil && !apierrors.IsNotFound(err) {
			klog.FromContext(ctx).V(4).Info("Hub heartbeat failed", "hub", hub, "err", err)
		}
		r.mu.Lock()
		r.heartbeatDone = true
		r.mu.Unlock()
		r.kick()
	}()
	return interval
}

// heartbeatClientFor returns a ManagedCluster client of the active hub for the credentials of phase, wrapped
// by the connectivity tracker, or nil when there are none. The client is kept while the hub and credentials
// stay the same, so heartbeats reuse connections.
func (r *Orchestrator) heartbeatClientFor(phase hubsession.Phase) clusterv1client.ManagedClusterInterface {
	h, ok := r.hubs[r.active]
	if !ok || h.bootstrap == nil {
		return nil
	}
	var base *rest.Config
	key := r.active + "/" + string(phase)
	switch phase {
	case hubsession.PhaseRegistered:
		secret, err := r.o.SecretInformer.Lister().Secrets(r.o.Namespace).Get(r.o.SecretName)
		if err != nil {
			return nil
		}
		if base, err = clientcert.RestConfigFromSecretData(secret.Data); err != nil {
			return nil
		}
		if slices.Contains(h.bootstrap.Hub.Diff(clientcert.HubInfo{Server: base.Host}), "server") {
			// Another writer's credentials for another hub: they say nothing about the active hub.
			return nil
		}
		key += "/" + string(secret.Data[clientcert.TLSCertSecretKey])
	case hubsession.PhaseBootstrapping:
		base = h.bootstrap.RestConfig
		key += "/" + h.bootstrap.Source + "/" + string(h.raw)
	default:
		return nil
	}
	if key == r.heartbeatKey && r.heartbeatClient != nil {
		return r.heartbeatClient
	}
	cfg := rest.CopyConfig(base)
	cfg.UserAgent = "klusterlet-failover-heartbeat"
	cfg.Wrap(r.tracker.WrapTransport)
	client, err := clusterclientset.NewForConfig(cfg)
	if err != nil {
		return nil
	}
	r.heartbeatKey, r.heartbeatClient = key, client.ClusterV1().ManagedClusters()
	return r.heartbeatClient
}

// reconcileHubs loads the configured hubs (primary file or Secret, alternates' Secrets) and restarts the
// active session when its bootstrap kubeconfig changed; a removed active hub leaves no active hub.
func (r *Orchestrator) reconcileHubs(ctx context.Context, spec failoverv1alpha1.FailoverConfigSpec, now time.Time) {
	sources := []hubSource{r.primarySource()}
	named := map[string]bool{failoverv1alpha1.HubNamePrimary: true}
	shadowed := map[string]bool{}
	for _, fh := range r.o.FileHubs {
		named[fh.Name] = true
		sources = append(sources, r.fileSource(fh.Name, fh.Path))
	}
	for _, alt := range spec.AlternateHubs {
		if named[alt.Name] {
			if alt.Name != failoverv1alpha1.HubNamePrimary && !r.duplicateHubs[alt.Name] {
				r.o.Recorder.Warningf(ReasonAlternateHubShadowed, "FailoverConfig %s/%s lists hub %s, which --bootstrap-kubeconfigs already names; the bootstrap kubeconfig file is used and this entry is ignored",
					r.o.Namespace, r.o.FailoverConfigName, alt.Name)
			}
			shadowed[alt.Name] = true
			continue
		}
		desc := fmt.Sprintf("secret %s/%s key %s", r.o.Namespace, alt.BootstrapKubeconfigSecretRef, failoverv1alpha1.BootstrapKubeconfigSecretKey)
		s := hubSource{name: alt.Name, desc: desc}
		secret, err := r.o.SecretInformer.Lister().Secrets(r.o.Namespace).Get(alt.BootstrapKubeconfigSecretRef)
		switch {
		case err != nil:
			s.readErr = fmt.Errorf("%s: %w", desc, err)
		case len(secret.Data[failoverv1alpha1.BootstrapKubeconfigSecretKey]) == 0:
			s.readErr = fmt.Errorf("%s: key is missing or empty", desc)
		default:
			s.raw = secret.Data[failoverv1alpha1.BootstrapKubeconfigSecretKey]
		}
		sources = append(sources, s)
	}

	r.duplicateHubs = shadowed
	seen := map[string]bool{}
	r.order = r.order[:0]
	for _, s := range sources {
		seen[s.name] = true
		r.order = append(r.order, s.name)
		h, existed := r.hubs[s.name]
		if !existed {
			h = &hubEntry{name: s.name}
			r.hubs[s.name] = h
		}
		if existed && bytes.Equal(h.raw, s.raw) && h.source == s.desc && h.readErr == errString(s.readErr) {
			continue
		}
		h.source, h.raw, h.readErr = s.desc, s.raw, errString(s.readErr)
		previous := h.bootstrap
		h.bootstrap, h.loadErr = nil, s.readErr
		if s.readErr == nil {
			if s.fromFile {
				h.bootstrap, h.loadErr = clientcert.ParseBootstrapKubeconfigFileData(s.raw, s.desc)
			} else {
				h.bootstrap, h.loadErr = clientcert.ParseBootstrapKubeconfig(s.raw, s.desc)
			}
		}
		h.probed = false
		h.failedAt = time.Time{}
		if existed {
			msg := fmt.Sprintf("bootstrap kubeconfig of hub %s (%s) changed", s.name, s.desc)
			if h.loadErr != nil {
				msg += ": " + h.loadErr.Error()
			}
			r.o.Recorder.Eventf(ReasonBootstrapKubeconfigChanged, "%s", msg)
			switch {
			case s.name == r.active && h.loadErr != nil && previous != nil:
				// An unusable replacement must not tear down a working registration (scenario 3 never needs
				// the bootstrap): the session keeps the last good bootstrap kubeconfig, Degraded names the error.
				h.bootstrap = previous
				r.o.Recorder.Warningf(ReasonBootstrapKubeconfigInvalid, "bootstrap kubeconfig of the active hub %s is unusable (%v); the agent stays registered and keeps the previous one until it is fixed", s.name, h.loadErr)
			case s.name == r.active:
				// FC-02/FC-03: the active hub's bootstrap changed: rejoin with the same identity.
				r.restartActive(ctx, now)
			}
		}
	}
	for name := range r.hubs {
		if !seen[name] {
			delete(r.hubs, name)
			r.o.Metrics.ForgetHub(name)
			r.o.Recorder.Eventf(ReasonBootstrapKubeconfigChanged, "hub %s was removed from FailoverConfig %s/%s", name, r.o.Namespace, r.o.FailoverConfigName)
			if name == r.active {
				r.stopSession()
				r.active = ""
			}
		}
	}
}

// startProbes starts the standby probe of every hub but the active one that is due, each in its own goroutine
// (a hub without a usable bootstrap kubeconfig is recorded InvalidKubeconfig without a request), and returns the
// time until the next one is due.
func (r *Orchestrator) startProbes(ctx context.Context, spec failoverv1alpha1.FailoverConfigSpec, now time.Time) time.Duration {
	interval := spec.ProbeInterval.Duration
	wait := interval
	for _, name := range r.order {
		h := r.hubs[name]
		if name == r.active {
			continue
		}
		due := h.probeTime.Add(interval)
		if h.bootstrap == nil {
			// Nothing to probe; the result is re-stated once per interval, not on every round (a status write
			// per round would wake the loop again).
			if !h.probed || !now.Before(due) {
				r.recordProbe(h, ProbeResult{Result: ProbeInvalidKubeconfig, Message: errString(h.loadErr)}, now)
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
		go r.runProbe(ctx, h.name, h.bootstrap)
	}
	return wait
}

// runProbe probes one hub in its own goroutine and hands the outcome to the loop.
func (r *Orchestrator) runProbe(ctx context.Context, name string, b *clientcert.BootstrapKubeconfig) {
	res := ProbeRESTConfig(ctx, b.RestConfig, r.o.ProbeTimeout)
	res.Message = b.Source + ": " + res.Message
	r.mu.Lock()
	r.probes = append(r.probes, probeOutcome{name: name, bootstrap: b, result: res, at: r.o.Clock.Now()})
	r.mu.Unlock()
	r.kick()
}

// applyProbes records the probe outcomes that arrived since the last round (loop goroutine only).
func (r *Orchestrator) applyProbes() {
	r.mu.Lock()
	outcomes := r.probes
	r.probes = nil
	r.mu.Unlock()
	for _, p := range outcomes {
		h, ok := r.hubs[p.name]
		if !ok {
			continue // the hub went away while it was probed
		}
		h.probeInFlight = false
		if p.name == r.active {
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
		if res.Result == ProbeReady {
			r.o.Recorder.Eventf(ReasonStandbyProbeSucceeded, "standby hub %s is ready: bootstrap kubeconfig works and may create CSRs and ManagedClusters", h.name)
		} else {
			r.o.Recorder.Warningf(ReasonStandbyProbeFailed, "standby hub %s: %s: %s", h.name, res.Result, res.Message)
		}
	}
	if res.Result == ProbeReady {
		h.probeSuccess = now
	}
	h.healthySince.Observe(res.Result == ProbeReady, now)
	h.probe = res
	r.o.Metrics.SetStandbyProbeResult(h.name, res.Result)
}

// primarySource reads the primary's bootstrap kubeconfig: the watched Secret when it exists, else the file.
func (r *Orchestrator) primarySource() (s hubSource) {
	s.name = failoverv1alpha1.HubNamePrimary
	if r.o.PrimaryBootstrapSecretName != "" {
		secret, err := r.o.SecretInformer.Lister().Secrets(r.o.Namespace).Get(r.o.PrimaryBootstrapSecretName)
		if err == nil && len(secret.Data[clientcert.BootstrapSecretKey]) > 0 {
			s.desc = fmt.Sprintf("secret %s/%s key %s", r.o.Namespace, r.o.PrimaryBootstrapSecretName, clientcert.BootstrapSecretKey)
			s.raw = secret.Data[clientcert.BootstrapSecretKey]
			return s
		}
	}
	return r.fileSource(s.name, r.o.PrimaryBootstrapKubeconfigFile)
}

// fileSource is hub name's bootstrap kubeconfig as last read from the file at path.
func (r *Orchestrator) fileSource(name, path string) hubSource {
	s := hubSource{name: name, desc: path, fromFile: true}
	r.mu.Lock()
	read := r.files[path]
	r.mu.Unlock()
	s.raw = read.raw
	if read.errMsg != "" {
		s.readErr = errors.New(read.errMsg)
	}
	return s
}

// specWithoutFailoverConfig is the spec in force while no FailoverConfig exists: the API defaults, with
// HubConnectionTimeout when it is set.
func (r *Orchestrator) specWithoutFailoverConfig() failoverv1alpha1.FailoverConfigSpec {
	spec := failoverv1alpha1.FailoverConfigSpec{}
	if r.o.HubConnectionTimeout > 0 {
		spec.HubConnectionTimeout = &metav1.Duration{Duration: r.o.HubConnectionTimeout}
	}
	return failoverv1alpha1.WithDefaults(spec)
}

// pollFile re-reads the bootstrap kubeconfig files every FilePollInterval and wakes the loop on a change
// (a mounted Secret is updated in place by the kubelet; FC-01).
func (r *Orchestrator) pollFile(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.o.Clock.After(r.o.FilePollInterval):
		}
		if r.readFiles() {
			r.kick()
		}
	}
}

// readFiles reads the bootstrap kubeconfig files (the primary's and FileHubs') and reports whether the content
// or read error of any of them changed.
func (r *Orchestrator) readFiles() bool {
	paths := []string{r.o.PrimaryBootstrapKubeconfigFile}
	for _, fh := range r.o.FileHubs {
		paths = append(paths, fh.Path)
	}
	changed := false
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		read := fileRead{raw: raw}
		if err != nil {
			read = fileRead{errMsg: fmt.Sprintf("bootstrap kubeconfig %s: %v", path, err)}
		}
		r.mu.Lock()
		last, seen := r.files[path]
		if !seen || !bytes.Equal(read.raw, last.raw) || read.errMsg != last.errMsg {
			changed = true
			r.files[path] = read
		}
		r.mu.Unlock()
	}
	return changed
}

// initialHub picks the hub to start on: the hub the stored hub kubeconfig belongs to (the agent restarted
// after a failover), else the first hub in order with a usable bootstrap kubeconfig.
func (r *Orchestrator) initialHub(spec failoverv1alpha1.FailoverConfigSpec, now time.Time) string {
	if secret, err := r.o.SecretInformer.Lister().Secrets(r.o.Namespace).Get(r.o.SecretName); err == nil {
		for _, name := range r.order {
			h := r.hubs[name]
			if h.bootstrap == nil {
				continue
			}
			if clientcert.CheckHubKubeconfig(secret.Data, r.o.ClusterName, r.o.AgentName, h.bootstrap.Hub, now) == nil {
				return name
			}
		}
	}
	if spec.SwitchTo != "" {
		if h, ok := r.hubs[spec.SwitchTo]; ok && h.bootstrap != nil {
			return spec.SwitchTo
		}
	}
	for _, name := range r.order {
		if r.hubs[name].bootstrap != nil {
			return name
		}
	}
	return ""
}

func (r *Orchestrator) candidates(spec failoverv1alpha1.FailoverConfigSpec) []HubCandidate {
	out := make([]HubCandidate, 0, len(r.order))
	for _, name := range r.order {
		h := r.hubs[name]
		c := HubCandidate{Name: name, FailedAt: h.failedAt, SkipPeriod: spec.FailedHubSkipPeriod.Duration}
		if h.bootstrap == nil {
			c.Probe = ProbeInvalidKubeconfig
		} else if h.probed {
			c.Probe = h.probe.Result
		}
		out = append(out, c)
	}
	return out
}

// startSession starts a session on hub name and makes it the active hub. from and reason are set for a switch.
// It returns false, leaving the active hub unchanged, when the session cannot be built.
func (r *Orchestrator) startSession(ctx context.Context, name, from, reason string, now time.Time) bool {
	h := r.hubs[name]
	r.mu.Lock()
	r.generation++
	gen := r.generation
	r.mu.Unlock()
	if h == nil || h.bootstrap == nil {
		r.setDegraded(fmt.Sprintf("hub %s has no usable bootstrap kubeconfig", name))
		return false
	}
	session, err := hubsession.New(r.o.Config, hubsession.Params{
		Hub:           hubsession.Hub{Name: name, Bootstrap: h.bootstrap},
		Observer:      &sessionObserver{r: r, gen: gen, hub: name},
		WrapTransport: r.tracker.WrapTransport,
	})
	if err != nil {
		r.setDegraded(err.Error())
		return false
	}
	r.mu.Lock()
	r.acceptance, r.mcAvail, r.phase, r.phaseMsg, r.phaseSince = HubAcceptance{}, "", "", "", now
	r.mu.Unlock()
	r.tracker.Reset(now)
	r.rejection.Reset()
	r.credentials.Reset()
	r.lastAcceptance = HubAcceptance{}
	// Failback asks for a primary healthy for healthyFor since it was left, not since some earlier time.
	for _, n := range []string{from, name} {
		if e, ok := r.hubs[n]; ok && n != "" {
			e.healthySince.Reset()
		}
	}
	r.active = name
	r.session = session
	r.forcedBootstrap = false
	if from != "" {
		r.switching = &switchState{from: from, to: name, reason: reason, start: now}
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	r.sessionCancel, r.sessionDone = cancel, done
	go func() {
		defer close(done)
		if err := session.Run(sctx); err != nil {
			klog.FromContext(ctx).Error(err, "Hub session ended", "hub", name)
		}
	}()
	r.o.Metrics.SetActiveHub(name)
	klog.FromContext(ctx).Info("Hub session started", "hub", name, "server", h.bootstrap.Hub.Server)
	return true
}

// restartActive restarts the session on the active hub with its new bootstrap kubeconfig.
func (r *Orchestrator) restartActive(ctx context.Context, now time.Time) {
	name := r.active
	r.stopSession()
	h := r.hubs[name]
	if h == nil || h.bootstrap == nil {
		r.active = ""
		return
	}
	r.startSession(ctx, name, "", "", now)
}

// stopSession cancels the active session and waits for it to return, at most SessionStopTimeout: what may
// still run after that is the teardown of its hub informers (see OrchestratorOptions.SessionStopTimeout).
func (r *Orchestrator) stopSession() {
	if r.sessionCancel == nil {
		return
	}
	r.sessionCancel()
	timer := r.o.Clock.NewTimer(r.o.SessionStopTimeout)
	defer timer.Stop()
	select {
	case <-r.sessionDone:
	case <-timer.C():
		klog.Background().Info("Hub session still shutting down its informers; not waiting for it",
			"hub", r.session.Hub().Name, "timeout", r.o.SessionStopTimeout)
	}
	r.sessionCancel, r.sessionDone, r.session = nil, nil, nil
}

func (r *Orchestrator) finishSwitch(now time.Time) {
	s := r.switching
	r.switching = nil
	end := apiTime(now)
	r.unrecordedFailovers++
	r.lastFailover = &failoverv1alpha1.FailoverRecord{
		From: s.from, To: s.to, Reason: failoverv1alpha1.FailoverReason(reasonForRecord(s.reason)), Message: truncate(s.message, maxStatusMessage),
		StartTime: apiTime(s.start), EndTime: &end, DurationMilliseconds: now.Sub(s.start).Milliseconds(),
	}
	r.o.Metrics.RecordFailover(s.from, s.to, s.reason, now)
	r.o.Recorder.Eventf(ReasonFailoverSucceeded, "cluster %s moved from hub %s to hub %s in %.1fs (%s)",
		r.o.ClusterName, s.from, s.to, now.Sub(s.start).Seconds(), s.reason)
}

// reasonForRecord maps a Trigger (or "Failback") to the API's FailoverReason.
func reasonForRecord(trigger string) string {
	switch Trigger(trigger) {
	case TriggerHubLost:
		return string(failoverv1alpha1.FailoverReasonHubConnectionLost)
	case TriggerHubRejected:
		return string(failoverv1alpha1.FailoverReasonHubRejected)
	case TriggerNoCredentials:
		return string(failoverv1alpha1.FailoverReasonCredentialsInvalid)
	case TriggerPlannedSwitch:
		return string(failoverv1alpha1.FailoverReasonPlannedSwitch)
	}
	return trigger
}

// reportAcceptance emits an event on each acceptance transition of the active hub (FC-12).
func (r *Orchestrator) reportAcceptance(acc HubAcceptance) {
	prev := r.lastAcceptance
	r.lastAcceptance = acc
	if !acc.Observed || !prev.Observed {
		return
	}
	switch {
	case acc.Rejected() && !prev.Rejected():
		r.o.Recorder.Warningf(ReasonHubAcceptanceRevoked, "hub %s no longer accepts cluster %s (hubAcceptsClient=%t, HubAcceptedManagedCluster=%s)",
			r.active, r.o.ClusterName, acc.HubAcceptsClient, acc.AcceptedCondition)
	case !acc.Rejected() && prev.Rejected():
		r.o.Recorder.Eventf(ReasonHubAcceptanceRestored, "hub %s accepts cluster %s again", r.active, r.o.ClusterName)
	}
}

// reportVerdict emits an event when the monitor's reason changes (hub unreachable, rejection pending, healthy).
func (r *Orchestrator) reportVerdict(v Verdict) {
	prev := r.lastVerdict
	r.lastVerdict = v
	if v.Trigger != TriggerNone || v.Reason == prev.Reason {
		return
	}
	switch v.Reason {
	case ReasonHubHealthy:
		if prev.Reason != "" {
			r.o.Recorder.Eventf(ReasonHubRecovered, "hub %s: %s", r.active, v.Message)
		}
	case ReasonHubAcceptancePending:
		r.o.Recorder.Eventf(v.Reason, "hub %s: %s", r.active, v.Message)
	default:
		r.o.Recorder.Warningf(v.Reason, "hub %s: %s", r.active, v.Message)
	}
}

func (r *Orchestrator) noViableHub(now time.Time, msg string) time.Duration {
	d := r.o.NoViableHubBackoff.Remaining()
	if d == 0 {
		d = r.o.NoViableHubBackoff.Next()
	}
	if !r.noViable {
		r.o.Recorder.Warningf(ReasonNoViableHub, "%s; retrying in %s", msg, d.Round(time.Second))
	}
	r.noViable = true
	r.setDegraded(msg)
	return d
}

func (r *Orchestrator) setDegraded(msg string) { r.degraded = msg }

// clearDegradedIf clears Degraded when the active hub works again, and sets it for a session without credentials.
func (r *Orchestrator) clearDegradedIf(phase hubsession.Phase, msg string, _ time.Time, _ time.Time) {
	switch phase {
	case hubsession.PhaseNoCredentials:
		r.degraded = msg
	case hubsession.PhaseRegistered:
		if r.lastVerdict.Reason == ReasonHubHealthy {
			r.degraded = ""
			r.noViable = false
			r.o.NoViableHubBackoff.Reset()
		}
	}
}

func (r *Orchestrator) failoverConfig() *failoverv1alpha1.FailoverConfig {
	if r.o.FailoverConfigName == "" || r.o.FailoverConfigInformer == nil {
		return nil
	}
	fc, err := r.o.FailoverConfigInformer.Lister().FailoverConfigs(r.o.Namespace).Get(r.o.FailoverConfigName)
	if err != nil {
		return nil
	}
	return fc
}

// writeStatus updates the FailoverConfig status when it changed.
func (r *Orchestrator) writeStatus(ctx context.Context, fc *failoverv1alpha1.FailoverConfig, spec failoverv1alpha1.FailoverConfigSpec, now time.Time) {
	if fc == nil {
		return
	}
	r.mu.Lock()
	phase, phaseMsg, avail := r.phase, r.phaseMsg, r.mcAvail
	contested, contestedAt := r.contested, r.contestedAt
	hubs := make([]failoverv1alpha1.HubStatus, 0, len(r.order))
	for _, name := range r.order {
		h := r.hubs[name]
		hs := failoverv1alpha1.HubStatus{Name: name}
		if h.bootstrap != nil {
			hs.Server = h.bootstrap.Hub.Server
		}
		switch {
		case name == r.active:
			// The active hub is not probed; the hub monitor's verdict says how it is doing.
			hs.ProbeResult = activeHubResult(r.lastVerdict.Reason)
			hs.Message = "active hub: " + phaseMsg
			if hs.ProbeResult != failoverv1alpha1.HubProbeReady {
				hs.Message = "active hub: " + r.lastVerdict.Message
			}
		case h.probed:
			hs.ProbeResult = probeToAPI(h.probe.Result)
			hs.Message = h.probe.Message
			hs.LastProbeTime = timePtr(h.probeTime)
			hs.LastTransitionTime = timePtr(h.probeChange)
			hs.LastSuccessTime = timePtr(h.probeSuccess)
		default:
			hs.ProbeResult = failoverv1alpha1.HubProbeUnknown
		}
		if !h.failedAt.IsZero() && now.Before(h.failedAt.Add(spec.FailedHubSkipPeriod.Duration)) {
			hs.SkippedUntil = timePtr(h.failedAt.Add(spec.FailedHubSkipPeriod.Duration))
		}
		hs.Message = truncate(hs.Message, maxStatusMessage)
		hs.AddOns = addOnStatusFor(r.addOns[name])
		hubs = append(hubs, hs)
	}
	r.mu.Unlock()

	status := fc.Status.DeepCopy()
	status.ObservedGeneration = fc.Generation
	status.ActiveHub = r.active
	status.ActiveHubServer = ""
	if h, ok := r.hubs[r.active]; ok && h.bootstrap != nil {
		status.ActiveHubServer = h.bootstrap.Hub.Server
	}
	status.Hubs = hubs
	status.FailoverCount += r.unrecordedFailovers
	if r.lastFailover != nil {
		status.LastFailover = r.lastFailover.DeepCopy()
	}
	if phase == hubsession.PhaseRegistered && avail == metav1.ConditionTrue {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: failoverv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue,
			Reason: ConditionReasonHubAvailable, Message: fmt.Sprintf("cluster %s is Available on hub %s", r.o.ClusterName, r.active), ObservedGeneration: fc.Generation})
	} else {
		reason := ConditionReasonHubNotAvailable
		if phase != "" {
			reason = string(phase)
		}
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: failoverv1alpha1.ConditionAvailable, Status: metav1.ConditionFalse,
			Reason: reason, Message: fmt.Sprintf("hub %s: %s", r.active, orDefault(phaseMsg, "waiting for the cluster to become Available")), ObservedGeneration: fc.Generation})
	}
	if r.switching != nil {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: failoverv1alpha1.ConditionProgressing, Status: metav1.ConditionTrue,
			Reason: ConditionReasonSwitching, Message: fmt.Sprintf("moving from hub %s to hub %s: %s", r.switching.from, r.switching.to, r.switching.message), ObservedGeneration: fc.Generation})
	} else {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: failoverv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse,
			Reason: ConditionReasonStable, Message: fmt.Sprintf("on hub %s", r.active), ObservedGeneration: fc.Generation})
	}
	var invalid []string
	for _, name := range r.order {
		if h := r.hubs[name]; h.bootstrap == nil || h.loadErr != nil {
			invalid = append(invalid, fmt.Sprintf("hub %s: %s", name, errString(h.loadErr)))
		}
	}
	if r.degraded != "" {
		reason := ConditionReasonDegraded
		if r.noViable {
			reason = ReasonNoViableHub
		} else if phase == hubsession.PhaseNoCredentials {
			reason = ReasonNoValidCredentials
		}
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: failoverv1alpha1.ConditionDegraded, Status: metav1.ConditionTrue,
			Reason: reason, Message: r.degraded, ObservedGeneration: fc.Generation})
	} else if len(invalid) > 0 {
		// A hub that could not be failed over to needs attention before a disaster, not after.
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: failoverv1alpha1.ConditionDegraded, Status: metav1.ConditionTrue,
			Reason: ReasonBootstrapKubeconfigInvalid, Message: truncate(strings.Join(invalid, "; "), maxConditionMessage), ObservedGeneration: fc.Generation})
	} else {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: failoverv1alpha1.ConditionDegraded, Status: metav1.ConditionFalse,
			Reason: ConditionReasonAsExpected, Message: "", ObservedGeneration: fc.Generation})
	}
	if c, ok := ContestedCondition(contested, contestedAt, now, fc.Generation,
		meta.FindStatusCondition(status.Conditions, failoverv1alpha1.ConditionHubKubeconfigContested)); ok {
		meta.SetStatusCondition(&status.Conditions, c)
	}
	if equality.Semantic.DeepEqual(status, &fc.Status) {
		return
	}
	updated := fc.DeepCopy()
	updated.Status = *status
	if _, err := r.o.FailoverConfigClient.FailoverConfigs(fc.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: "klusterlet-failover"}); err != nil {
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			klog.FromContext(ctx).Error(err, "Updating FailoverConfig status", "failoverConfig", klog.KObj(fc))
		}
		r.kickAfter(time.Second)
		return
	}
	// The count is in the object now; a stale cached object cannot write the old count back, since its
	// resourceVersion conflicts.
	r.unrecordedFailovers = 0
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
		Reason: hubsession.ReasonHubKubeconfigContested, Message: truncate(message, maxConditionMessage), ObservedGeneration: generation}
	if !now.Before(at.Add(clientcert.DefaultContestQuietPeriod)) {
		c.Status, c.Reason = metav1.ConditionFalse, ConditionReasonAsExpected
		c.Message = fmt.Sprintf("not contested since %s", at.UTC().Format(time.RFC3339))
	}
	return c, true
}

func (r *Orchestrator) kick() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Orchestrator) kickAfter(d time.Duration) {
	go func() {
		<-r.o.Clock.After(d)
		r.kick()
	}()
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
		c.Message = truncate(c.Message, maxStatusMessage)
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
	case ReasonCredentialsUnusablePending, ReasonNoValidCredentials:
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

// truncate cuts s to at most n bytes, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func probeToAPI(p ProbeResultType) failoverv1alpha1.HubProbeResult {
	switch p {
	case ProbeReady:
		return failoverv1alpha1.HubProbeReady
	case ProbeUnreachable:
		return failoverv1alpha1.HubProbeUnreachable
	case ProbeUnauthorized:
		return failoverv1alpha1.HubProbeUnauthorized
	case ProbeForbidden:
		return failoverv1alpha1.HubProbeForbidden
	case ProbeInvalidKubeconfig:
		return failoverv1alpha1.HubProbeInvalidKubeconfig
	}
	return failoverv1alpha1.HubProbeUnknown
}

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

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
