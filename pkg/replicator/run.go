package replicator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/controller/controllercmd"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	replinformers "github.com/klusterlet-failover/klusterlet-failover/pkg/client/informers/externalversions"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/brake"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/metrics"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/replication"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/status"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/version"
)

// ReasonHubKubeconfigInvalid is the event reason when a hub's kubeconfig Secret is missing or unusable; the hub
// is left out until the Secret is fixed.
const ReasonHubKubeconfigInvalid = "HubKubeconfigInvalid"

// hubProbeTimeout bounds each reachability probe of a hub.
const hubProbeTimeout = 5 * time.Second

// Run is the controllercmd start function of `klusterlet-failover replicator`: it runs until ctx ends.
// It sets the replicator's GC target first (setReplicatorGCPercent).
func (o *Options) Run(ctx context.Context, controllerContext *controllercmd.ControllerContext) error {
	setReplicatorGCPercent()
	kubeClient, err := kubernetes.NewForConfig(controllerContext.KubeConfig)
	if err != nil {
		return fmt.Errorf("building the client of the replicator's cluster: %w", err)
	}
	replClient, err := versioned.NewForConfig(controllerContext.KubeConfig)
	if err != nil {
		return fmt.Errorf("building the ReplicationConfig client: %w", err)
	}
	clk, ok := controllerContext.Clock.(clock.WithTicker)
	if !ok {
		clk = clock.RealClock{}
	}
	return o.RunWithClients(ctx, kubeClient, replClient, controllerContext.EventRecorder, clk)
}

// ReplicatorGCPercent is the replicator's garbage collection target (debug.SetGCPercent) unless GOGC is set:
// the heap may grow 50 % beyond the live data between collections instead of Go's default 100 %. The
// replicator's live heap is mostly its caches of every hub (188 MB at 3,500 clusters × 10 ManifestWorks and two
// standbys), so with the default the peak RSS is about twice that (docs/benchmarks-replication.md); the extra
// collections cost CPU in proportion to the allocation rate, which is high only while copies are written.
const ReplicatorGCPercent = 50

// setReplicatorGCPercent sets ReplicatorGCPercent when the environment does not set GOGC.
func setReplicatorGCPercent() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(ReplicatorGCPercent)
	}
}

// RunWithClients runs the replicator with the clients of the cluster it runs in (for the ReplicationConfig
// and the hubs' kubeconfig Secrets) until ctx ends. It blocks; it returns nil when ctx ends.
func (o *Options) RunWithClients(ctx context.Context, kubeClient kubernetes.Interface, replClient versioned.Interface,
	recorder events.Recorder, clk clock.WithTicker) error {
	if clk == nil {
		clk = clock.RealClock{}
	}
	metrics.Register()
	logger := klog.FromContext(ctx).WithValues("replicationConfig", o.Namespace+"/"+o.ConfigName)
	ctx = klog.NewContext(ctx, logger)

	secretInformers := informers.NewSharedInformerFactoryWithOptions(kubeClient, 10*time.Minute, informers.WithNamespace(o.Namespace))
	configInformers := replinformers.NewSharedInformerFactoryWithOptions(replClient, 10*time.Minute,
		replinformers.WithNamespace(o.Namespace),
		replinformers.WithTweakListOptions(func(opts *metav1.ListOptions) {
			opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", o.ConfigName).String()
		}))
	secrets := secretInformers.Core().V1().Secrets()
	configs := configInformers.Failover().V1alpha1().ReplicationConfigs()

	syncCtx := factory.NewSyncContext(reconfigureControllerName, recorder)
	c := &reconfigureController{
		ctx: ctx, o: o, replClient: replClient, recorder: recorder, clk: clk,
		configs: configs.Lister().ReplicationConfigs(o.Namespace), secrets: secrets.Lister().Secrets(o.Namespace),
		queue: func() { syncCtx.Queue().Add(factory.DefaultQueueKey) },
	}
	// The replicator's own status writes update the ReplicationConfig too: only a new spec (generation) or a
	// release of delete brakes (failoverv1alpha1.AnnotationReleaseDeletes) queues a sync, which otherwise writes
	// the status every StatusInterval (resyncStatus).
	_, _ = configs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.queue() },
		UpdateFunc: func(o, n any) {
			oldRC, ok1 := o.(*failoverv1alpha1.ReplicationConfig)
			newRC, ok2 := n.(*failoverv1alpha1.ReplicationConfig)
			if !ok1 || !ok2 || oldRC.Generation != newRC.Generation ||
				oldRC.Annotations[failoverv1alpha1.AnnotationReleaseDeletes] != newRC.Annotations[failoverv1alpha1.AnnotationReleaseDeletes] {
				c.queue()
			}
		},
		DeleteFunc: func(any) { c.queue() },
	})
	controller := factory.New().WithSyncContext(syncCtx).WithSync(c.sync).
		WithInformers(secrets.Informer()).
		WithBareInformers(configs.Informer()).
		WithPostStartHooks(c.resyncStatus).
		ToController(reconfigureControllerName, recorder)
	secretInformers.Start(ctx.Done())
	configInformers.Start(ctx.Done())
	// One worker: sync is the only writer of the running engine.
	controller.Run(ctx, 1)
	c.stop()
	return nil
}

// recordSnapshot sets the gauges that come from the controller's snapshot: metrics.ObjectsBehind (a hub not
// ready, or no longer configured, has no series) and metrics.ClustersOnSeveralHubs.
func recordSnapshot(snap replication.Snapshot) {
	metrics.ObjectsBehind.Reset()
	for hub, n := range snap.Behind {
		metrics.ObjectsBehind.WithLabelValues(hub).Set(float64(n))
	}
	metrics.ClustersOnSeveralHubs.Set(float64(len(snap.OnSeveralHubs)))
}

// writeStatus builds and writes the status of rc; on a conflict (the informer's copy is stale, as for a while
// after the apiserver of the hub holding it restarted) it reads the ReplicationConfig and builds and writes again
// (client-go's retry.DefaultRetry), other failures are logged and retried at the next interval.
func (o *Options) writeStatus(ctx context.Context, client versioned.Interface, rc *failoverv1alpha1.ReplicationConfig,
	hubs []status.Hub, snap replication.Snapshot, configErr string, now time.Time) {
	configs := client.FailoverV1alpha1().ReplicationConfigs(rc.Namespace)
	current := rc
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := status.Write(ctx, configs, current, status.Build(current, hubs, snap, configErr, now))
		if apierrors.IsConflict(err) {
			fresh, getErr := configs.Get(ctx, rc.Name, metav1.GetOptions{})
			if getErr != nil {
				return getErr
			}
			current = fresh
		}
		return err
	})
	if err != nil && ctx.Err() == nil {
		klog.FromContext(ctx).Error(err, "Writing the ReplicationConfig status")
	}
}

// engine is one run of the replication for one version of the configuration.
type engine struct {
	fingerprint string
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	hubs        []*hubconn.Hub
	invalid     map[string]string // hub → why its kubeconfig cannot be used
	specHubs    []failoverv1alpha1.ReplicationHub
	controller  *replication.Controller
	// engaged are the brakes the engine started with: reported while no controller runs (fewer than two
	// usable hubs), so that they are not lost from the status.
	engaged map[string]time.Time
}

// start connects to rc's hubs and starts the replication. Hubs whose kubeconfig Secret cannot be used are
// reported in the status and left out; with fewer than two usable hubs nothing is replicated.
func (o *Options) start(ctx context.Context, rc *failoverv1alpha1.ReplicationConfig, secrets secretGetter,
	recorder events.Recorder, clk clock.WithTicker, fingerprint string, engaged map[string]time.Time, brakeEngaged func()) *engine {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	e := &engine{fingerprint: fingerprint, cancel: cancel, invalid: map[string]string{}, specHubs: rc.Spec.Hubs, engaged: engaged}

	// Checked by the caller (mirror.ResolveKinds), before start.
	kinds, _ := mirror.ResolveKinds(&rc.Spec)
	selector := clusterSelector(rc.Spec.ClusterSelector)

	var lazy lazyHandler
	for _, spec := range rc.Spec.Hubs {
		config, err := hubRESTConfig(secrets, spec)
		if err != nil {
			e.invalid[spec.Name] = err.Error()
			recorder.Warningf(ReasonHubKubeconfigInvalid, "hub %s: %v", spec.Name, err)
			continue
		}
		config.QPS, config.Burst = o.HubQPS, o.HubBurst
		config.UserAgent = "klusterlet-failover-replicator/" + version.Get().GitVersion
		client, err := dynamic.NewForConfig(config)
		if err != nil {
			e.invalid[spec.Name] = fmt.Sprintf("building a client from kubeconfigSecret %s: %v", spec.KubeconfigSecret.Name, err)
			recorder.Warningf(ReasonHubKubeconfigInvalid, "hub %s: %s", spec.Name, e.invalid[spec.Name])
			continue
		}
		h, err := hubconn.New(hubconn.Options{
			Name: spec.Name, Server: config.Host, Client: client, Kinds: kinds,
			ProbeInterval: o.HubProbeInterval, ProbeTimeout: hubProbeTimeout, Handler: &lazy, Clock: clk,
			Fenced: !o.DisableFencing,
		})
		if err != nil {
			e.invalid[spec.Name] = err.Error()
			continue
		}
		e.hubs = append(e.hubs, h)
	}
	if len(e.hubs) < 2 {
		logger.Info("Fewer than 2 hubs have a usable kubeconfig: nothing is replicated", "usable", len(e.hubs))
		return e
	}
	controller, err := replication.New(replication.Options{
		Hubs: e.hubs, Kinds: kinds, ClusterSelector: selector, Recorder: recorder, Clock: clk, Logger: logger,
		Fencing: !o.DisableFencing, DeleteBrake: brake.LimitsOf(rc.Spec.DeleteBrake), EngagedBrakes: engaged,
		BrakeEngaged: brakeEngaged, ReportWriter: rc.Name, ReportInterval: o.ReportInterval,
		IncarnationInterval: o.IncarnationInterval,
	})
	if err != nil {
		logger.Error(err, "Starting replication")
		return e
	}
	e.controller = controller
	lazy.set(controller)
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		controller.Run(ctx, o.Workers)
	}()
	for _, h := range e.hubs {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			h.Run(ctx)
		}()
	}
	logger.Info("Replication started", "hubs", len(e.hubs), "kinds", len(kinds), "generation", rc.Generation)
	return e
}

// engagedBrakes returns the delete brakes engaged when a new engine starts (hub → since): those of the running
// engine when there is one, else those carried from the last engine (no engine ran since: an invalid spec), else
// those the ReplicationConfig's status recorded (a restart of the replicator). A brake stays engaged until a
// person releases it; a restart does not release it.
func engagedBrakes(rc *failoverv1alpha1.ReplicationConfig, running *engine, carried map[string]time.Time) map[string]time.Time {
	engaged := map[string]time.Time{}
	switch {
	case running != nil:
		for _, b := range running.snapshot().Brakes {
			engaged[b.Hub] = b.Since
		}
	case carried != nil:
		engaged = carried
	default:
		for _, h := range rc.Status.Hubs {
			if h.DeleteBrake != nil {
				engaged[h.Name] = h.DeleteBrake.Since.Time
			}
		}
	}
	// A hub removed from spec.hubs takes its brake with it: the replicator makes no delete there any more.
	out := map[string]time.Time{}
	for _, h := range rc.Spec.Hubs {
		if since, ok := engaged[h.Name]; ok {
			out[h.Name] = since
		}
	}
	return out
}

// releaseTokens returns the release tokens of rc's annotation failoverv1alpha1.AnnotationReleaseDeletes (a
// comma-separated list; blanks around each are ignored).
func releaseTokens(rc *failoverv1alpha1.ReplicationConfig) []string {
	var out []string
	for _, t := range strings.Split(rc.Annotations[failoverv1alpha1.AnnotationReleaseDeletes], ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// clusterSelector returns the selector of spec.clusterSelector: every cluster when it is omitted (the API's
// meaning; metav1.LabelSelectorAsSelector turns a nil selector into one that matches nothing).
func clusterSelector(s *metav1.LabelSelector) labels.Selector {
	if s == nil {
		return labels.Everything()
	}
	selector, err := metav1.LabelSelectorAsSelector(s)
	if err != nil { // ValidateReplicationConfig rejects such a selector before the engine starts
		return labels.Nothing()
	}
	return selector
}

func (e *engine) stop() {
	e.cancel()
	e.wg.Wait()
	// The gauges of what this engine replicated go with it: a hub removed from the configuration, or no
	// replication at all (the ReplicationConfig deleted or invalid), leaves no series behind.
	metrics.HubReachable.Reset()
	metrics.DeleteBrakeEngaged.Reset()
	metrics.ObjectsBehind.Reset()
	metrics.ClustersOnSeveralHubs.Set(0)
}

// hubStatus returns the status input of every spec hub, in spec order.
func (e *engine) hubStatus() []status.Hub {
	byName := map[string]*hubconn.Hub{}
	for _, h := range e.hubs {
		byName[h.Name()] = h
	}
	out := make([]status.Hub, 0, len(e.specHubs))
	for _, spec := range e.specHubs {
		s := status.Hub{Name: spec.Name}
		if h := byName[spec.Name]; h != nil {
			s.Server = h.Server()
			s.State, s.Err, s.LastTransition = h.State()
		} else {
			s.ConfigError = e.invalid[spec.Name]
			if s.ConfigError == "" {
				s.ConfigError = "not connected"
			}
		}
		out = append(out, s)
	}
	return out
}

func (e *engine) snapshot() replication.Snapshot {
	if e.controller == nil {
		var snap replication.Snapshot
		for hub, since := range e.engaged {
			snap.Brakes = append(snap.Brakes, brake.State{Hub: hub, Since: since})
		}
		sort.Slice(snap.Brakes, func(i, j int) bool { return snap.Brakes[i].Hub < snap.Brakes[j].Hub })
		return snap
	}
	return e.controller.Snapshot()
}

// secretGetter reads Secrets of the replicator's namespace.
type secretGetter interface {
	Get(name string) (*corev1.Secret, error)
}

// hubRESTConfig loads the kubeconfig of hub from its Secret. The error names the hub, the Secret and the key.
func hubRESTConfig(secrets secretGetter, hub failoverv1alpha1.ReplicationHub) (*rest.Config, error) {
	ref := hub.KubeconfigSecret
	secret, err := secrets.Get(ref.Name)
	if err != nil {
		return nil, fmt.Errorf("kubeconfigSecret %q: %w", ref.Name, err)
	}
	data, ok := secret.Data[ref.SecretKey()]
	if !ok || len(data) == 0 {
		keys := make([]string, 0, len(secret.Data))
		for k := range secret.Data {
			keys = append(keys, k)
		}
		return nil, fmt.Errorf("kubeconfigSecret %q has no key %q (keys: %s)", ref.Name, ref.SecretKey(), strings.Join(keys, ", "))
	}
	config, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("kubeconfigSecret %q key %q: not a usable kubeconfig: %w", ref.Name, ref.SecretKey(), err)
	}
	return config, nil
}

// configFingerprint identifies what the engine was started from: the spec and the resourceVersion of every
// referenced Secret (absent ones too).
func configFingerprint(rc *failoverv1alpha1.ReplicationConfig, secrets secretGetter) string {
	parts := []string{}
	spec, _ := json.Marshal(rc.Spec)
	parts = append(parts, string(spec))
	for _, hub := range rc.Spec.Hubs {
		rv := "absent"
		if s, err := secrets.Get(hub.KubeconfigSecret.Name); err == nil {
			rv = s.ResourceVersion
		}
		parts = append(parts, hub.KubeconfigSecret.Name+"="+rv)
	}
	return strings.Join(parts, "|")
}

// lazyHandler forwards hub events to the controller once it exists (the hubs are built before it).
type lazyHandler struct {
	mu sync.RWMutex
	c  *replication.Controller
}

func (l *lazyHandler) set(c *replication.Controller) {
	l.mu.Lock()
	l.c = c
	l.mu.Unlock()
}

func (l *lazyHandler) get() *replication.Controller {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.c
}

func (l *lazyHandler) OnObject(hub string, k mirror.Kind, namespace, name string) {
	if c := l.get(); c != nil {
		c.OnObject(hub, k, namespace, name)
	}
}

func (l *lazyHandler) OnLease(hub, cluster string, event hubconn.LeaseEvent) {
	if c := l.get(); c != nil {
		c.OnLease(hub, cluster, event)
	}
}

func (l *lazyHandler) OnState(hub string, state hubconn.State, err error) {
	if c := l.get(); c != nil {
		c.OnState(hub, state, err)
	}
}
