package klusterlet

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/openshift/library-go/pkg/controller/controllercmd"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	failoverclientset "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	failoverclientv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned/typed/failover/v1alpha1"
	failoverinformers "github.com/klusterlet-failover/klusterlet-failover/pkg/client/informers/externalversions"
	failoverinformerv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/client/informers/externalversions/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/informers"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/secretvolume"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/spokeclient"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/startwait"
)

// SpokeClients are the spoke-side clients the agent runs with. RunWithClients takes them so that tests can
// run the agent in-process against a real spoke apiserver. In the default mode the managed cluster is the cluster
// the agent runs in and every client talks to it; in hosted mode (--spoke-kubeconfig) the Agent* clients talk to
// the cluster hosting the agent and the others to the managed cluster.
type SpokeClients struct {
	// CABundle is the managed cluster apiserver's CA bundle (PEM), published to the hub in
	// ManagedCluster spec.managedClusterClientConfigs; nil when its kubeconfig names none.
	CABundle []byte
	// Kube reads the managed cluster: Nodes, health endpoints, version and the kube-system namespace.
	Kube kubernetes.Interface
	// Cluster reads the managed cluster's ClusterClaims.
	Cluster clusterclientset.Interface
	// AgentKube reads and writes the agent namespace's Secrets (hub kubeconfig, bootstrap kubeconfigs).
	AgentKube kubernetes.Interface
	// AgentFailover reads the agent namespace's FailoverConfigs and writes their status.
	AgentFailover failoverclientset.Interface
	// KubeSystemUID, when not empty, is taken as the UID of the managed cluster's kube-system Namespace (the
	// spoke's identity when it has no id.k8s.io ClusterClaim) instead of reading it through Kube. Hollow agents
	// (test/hollow: many agents, each a cluster of its own, against one spoke apiserver) set one per agent;
	// the binary never does.
	KubeSystemUID string
}

// RunFailoverAgent runs the agent (a library-go controllercmd StartFunc); the command's run function calls it
// after Complete and Validate. It sets the agent's GC target (setAgentGCPercent), builds the spoke clients
// (NewSpokeClients with the command's client config) and calls RunWithClients. It returns an error only for bad
// flags or unusable spoke clients; hub problems never end it.
func (o *FailoverAgentOptions) RunFailoverAgent(ctx context.Context, controllerContext *controllercmd.ControllerContext) error {
	setAgentGCPercent()
	clients, err := o.NewSpokeClients(controllerContext.KubeConfig)
	if err != nil {
		return err
	}
	recorder := controllerContext.EventRecorder
	if controllerContext.OperatorNamespace != "" && o.ComponentNamespace == "" {
		o.ComponentNamespace = controllerContext.OperatorNamespace
	}
	return o.RunWithClients(ctx, clients, recorder, controllerContext.Clock)
}

// NewSpokeClients builds the spoke clients. agentConfig is the client config of the cluster the agent runs in
// (in-cluster or --kubeconfig). Without --spoke-kubeconfig every client uses it. With --spoke-kubeconfig
// (hosted mode) the managed cluster's clients use that file and follow it: a re-issued credential written to
// the file is used from the next check (at most 10 s, at once after a 401) without a restart (FC-13). It returns
// an error naming --spoke-kubeconfig when that file cannot be loaded.
func (o *FailoverAgentOptions) NewSpokeClients(agentConfig *rest.Config) (*SpokeClients, error) {
	agentConfig = o.rateLimited(agentConfig)
	if o.SpokeKubeconfig == "" {
		caBundle, err := spokeclient.CABundle(agentConfig)
		if err != nil {
			return nil, err
		}
		return newSpokeClients(agentConfig, agentConfig, caBundle)
	}
	reloader, err := spokeclient.New(o.SpokeKubeconfig, spokeclient.Options{})
	if err != nil {
		return nil, err
	}
	caBundle, err := reloader.CAData()
	if err != nil {
		return nil, err
	}
	return newSpokeClients(agentConfig, o.rateLimited(reloader.Config()), caBundle)
}

// rateLimited returns a copy of config with --kube-api-qps and --kube-api-burst (when > 0).
func (o *FailoverAgentOptions) rateLimited(config *rest.Config) *rest.Config {
	config = rest.CopyConfig(config)
	if o.KubeAPIQPS > 0 {
		config.QPS = o.KubeAPIQPS
	}
	if o.KubeAPIBurst > 0 {
		config.Burst = o.KubeAPIBurst
	}
	return config
}

// newSpokeClients builds the spoke clients: the Agent* ones from agentConfig, the managed cluster's from
// spokeConfig (the same config unless hosted). caBundle is the managed cluster's CA bundle (PEM) or nil.
func newSpokeClients(agentConfig, spokeConfig *rest.Config, caBundle []byte) (*SpokeClients, error) {
	kube, err := kubernetes.NewForConfig(protobuf(spokeConfig))
	if err != nil {
		return nil, fmt.Errorf("spoke client: %w", err)
	}
	cluster, err := clusterclientset.NewForConfig(spokeConfig)
	if err != nil {
		return nil, fmt.Errorf("spoke cluster client: %w", err)
	}
	agentKube, err := kubernetes.NewForConfig(protobuf(agentConfig))
	if err != nil {
		return nil, fmt.Errorf("agent cluster client: %w", err)
	}
	fo, err := failoverclientset.NewForConfig(agentConfig)
	if err != nil {
		return nil, fmt.Errorf("agent cluster failover client: %w", err)
	}
	return &SpokeClients{CABundle: caBundle, Kube: kube, Cluster: cluster, AgentKube: agentKube, AgentFailover: fo}, nil
}

// protobuf returns a copy of config whose clients of built-in types talk protobuf, as Kubernetes' own components
// do: decoding a list of Nodes from protobuf allocates a fraction of what JSON does, and the agent's peak memory
// on a large cluster is that first list. The clients of custom resources (ClusterClaims, FailoverConfigs) are
// built from the config without it: the apiserver serves them as JSON only.
func protobuf(config *rest.Config) *rest.Config {
	config = rest.CopyConfig(config)
	config.ContentType = "application/vnd.kubernetes.protobuf"
	config.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	return config
}

// RunWithClients runs the agent with the given spoke clients until ctx is cancelled (design §3): it completes
// the options when Complete has not run yet (Complete resolves the identity and first mirrors the hub kubeconfig
// Secret into --hub-kubeconfig-dir) and validates them, builds the agent namespace's informers, restores the
// bootstrap CSR back-off, and hands over to the failover orchestrator, which runs one hub session at a time. It
// blocks until ctx ends and returns nil then; it returns an error at once for invalid options (one message
// naming every flag at fault) or an unreadable hub kubeconfig Secret.
func (o *FailoverAgentOptions) RunWithClients(ctx context.Context, spoke *SpokeClients, recorder events.Recorder, clk clock.Clock) error {
	if clk == nil {
		clk = clock.RealClock{}
	}
	if err := o.completeAndValidate(ctx, spoke.AgentKube.CoreV1(), recorder); err != nil {
		return err
	}
	logger := klog.FromContext(ctx).WithValues("cluster", o.ClusterName, "agent", o.AgentName, "namespace", o.ComponentNamespace)
	ctx = klog.NewContext(ctx, logger)
	hubs, err := o.hubList()
	if err != nil {
		return err // ValidateFlags checked it; kept for callers that skipped it
	}
	annotations, ignored := managedcluster.FilterClusterAnnotations(o.ClusterAnnotations)
	if len(ignored) > 0 {
		logger.Info("Ignoring --cluster-annotations keys without the required prefix", "prefix", managedcluster.ClusterAnnotationsKeyPrefix, "keys", ignored)
	}
	logger.Info("Starting klusterlet-failover agent", "bootstrapKubeconfig", hubs.primaryFile, "alternateBootstrapKubeconfigs", len(hubs.fileHubs))
	namespaceInformers := o.newAgentInformers(ctx, spoke.AgentFailover, spoke.AgentKube, recorder, 1+len(hubs.fileHubs))
	if namespaceInformers == nil {
		return nil // ctx ended before the FailoverConfig API answered
	}
	mirror := clientcert.NewHubKubeconfigSecretMirrorController(o.ComponentNamespace, o.HubKubeconfigSecret, o.HubKubeconfigDir,
		namespaceInformers.secrets, 10*time.Minute, recorder)
	refresh := secretvolume.NewRefreshController(o.ComponentNamespace, o.HubKubeconfigSecret, namespaceInformers.secrets,
		spoke.AgentKube.CoreV1(), 10*time.Minute, recorder)
	bootstrapBackoff, backoffStore := o.restoreBootstrapBackoff(ctx, spoke.AgentKube, clk)
	orchestrator, err := failover.NewOrchestrator(o.orchestratorOptions(spoke, hubs, annotations, namespaceInformers, bootstrapBackoff, clk, recorder))
	if err != nil {
		return err
	}
	runUntilDone(ctx, clk, namespaceInformers, []factory.Controller{mirror, refresh}, orchestrator, func(ctx context.Context) {
		bootstrapBackoff.Persist(ctx, backoffStore, 0)
	})
	return nil
}

// completeAndValidate is the first step of RunWithClients, for options the command has not completed (tests
// run RunWithClients directly): CompleteNamespace and ValidateFlags (an error is returned before any I/O),
// Complete through coreV1Client (its error is returned), and Validate.
func (o *FailoverAgentOptions) completeAndValidate(ctx context.Context, coreV1Client corev1client.CoreV1Interface, recorder events.Recorder) error {
	if !o.completed {
		o.CompleteNamespace()
		if err := o.ValidateFlags(); err != nil {
			return err
		}
		if err := o.Complete(coreV1Client, ctx, recorder); err != nil {
			return err
		}
	}
	return o.Validate()
}

// flagHubs are the hubs the flags name: the primary's bootstrap kubeconfig file and Secret, and the alternate
// hubs given as files.
type flagHubs struct {
	primaryFile   string
	primarySecret string
	fileHubs      []failover.FileHub
}

// hubList returns the hubs of the flags: those of HubFiles, and the primary's bootstrap Secret
// (--bootstrap-kubeconfig-secret) unless --bootstrap-kubeconfigs lists the hubs. It returns HubFiles' error.
func (o *FailoverAgentOptions) hubList() (flagHubs, error) {
	primaryFile, fileHubs, err := o.HubFiles()
	if err != nil {
		return flagHubs{}, err
	}
	primarySecret := o.BootstrapKubeconfigSecret
	if len(o.BootstrapKubeconfigs) > 0 {
		// MultipleHubs: every hub is a file; a bootstrap-hub-kubeconfig Secret left from the Default mode must
		// not replace the first of them.
		primarySecret = ""
	}
	return flagHubs{primaryFile: primaryFile, primarySecret: primarySecret, fileHubs: fileHubs}, nil
}

// agentInformers are the informers of the agent namespace that outlive every hub session: its Secrets and,
// when the API is usable, its FailoverConfigs (failoverConfigs and failoverConfigClient nil otherwise). Each
// hub session runs its controllers on informers of its own (Nodes, ClusterClaims, Secrets) that stop with it.
type agentInformers struct {
	namespaced           kubeinformers.SharedInformerFactory
	failover             failoverinformers.SharedInformerFactory
	secrets              corev1informers.SecretInformer
	failoverConfigs      failoverinformerv1alpha1.FailoverConfigInformer
	failoverConfigClient failoverclientv1alpha1.FailoverConfigsGetter
}

// newAgentInformers builds and registers the agent namespace's informers (ComponentNamespace, resync 10 min,
// cached without managedFields, which nothing reads: informers.StripManagedFields). With --failover-config-name
// set it first checks the FailoverConfig API (CheckFailoverConfigAPI, retried every 2 s); when that API is not
// usable it emits FailoverConfigUnavailable on recorder, naming hubCount, the number of flag hubs the agent runs
// on, and leaves the FailoverConfig informer out. It returns nil when ctx ends before the check has an answer.
// The informers are not started.
func (o *FailoverAgentOptions) newAgentInformers(ctx context.Context, failoverClient failoverclientset.Interface, kubeClient kubernetes.Interface,
	recorder events.Recorder, hubCount int) *agentInformers {
	ai := &agentInformers{
		namespaced: informers.NewNamespacedFactory(kubeClient, o.ComponentNamespace, 10*time.Minute),
		failover: failoverinformers.NewSharedInformerFactoryWithOptions(failoverClient, 10*time.Minute,
			failoverinformers.WithNamespace(o.ComponentNamespace), failoverinformers.WithTransform(informers.StripManagedFields)),
	}
	ai.secrets = ai.namespaced.Core().V1().Secrets()
	// Register the informers before Start.
	ai.secrets.Informer()
	if o.FailoverConfigName == "" {
		return ai
	}
	if err := CheckFailoverConfigAPI(ctx, failoverClient, o.ComponentNamespace, 2*time.Second); ctx.Err() != nil {
		return nil
	} else if err != nil {
		// The klusterlet operator installs neither the CRD nor RBAC for it: run on the flag hubs alone.
		recorder.Warningf(ReasonFailoverConfigUnavailable, "FailoverConfig %s/%s is not used: %v; the hubs are the bootstrap kubeconfig files (%d), and installing the FailoverConfig CRD and RBAC takes effect at the next restart",
			o.ComponentNamespace, o.FailoverConfigName, err, hubCount)
		return ai
	}
	ai.failoverConfigs = ai.failover.Failover().V1alpha1().FailoverConfigs()
	ai.failoverConfigs.Informer()
	ai.failoverConfigClient = failoverClient.FailoverV1alpha1()
	return ai
}

// synced returns the HasSynced of every registered informer.
func (ai *agentInformers) synced() []cache.InformerSynced {
	synced := []cache.InformerSynced{ai.secrets.Informer().HasSynced}
	if ai.failoverConfigs != nil {
		synced = append(synced, ai.failoverConfigs.Informer().HasSynced)
	}
	return synced
}

// restoreBootstrapBackoff returns the bootstrap CSR back-off, which outlives the process, and its store: the
// Lease clientcert.BootstrapBackoffLeaseName in ComponentNamespace, through kubeClient. The back-off is restored
// from the Lease within 10 s; when that fails it is logged and the back-off starts without a record.
func (o *FailoverAgentOptions) restoreBootstrapBackoff(ctx context.Context, kubeClient kubernetes.Interface, clk clock.Clock) (*clientcert.BootstrapBackoff, clientcert.BootstrapBackoffStore) {
	bootstrapBackoff := clientcert.NewBootstrapBackoff(clientcert.BootstrapBackoffOptions{Clock: clk})
	store := clientcert.NewLeaseBootstrapBackoffStore(kubeClient.CoordinationV1(), o.ComponentNamespace, clientcert.BootstrapBackoffLeaseName)
	restoreCtx, cancelRestore := context.WithTimeout(ctx, 10*time.Second)
	defer cancelRestore()
	if err := bootstrapBackoff.Restore(restoreCtx, store); err != nil {
		klog.FromContext(ctx).Info("Could not restore the bootstrap CSR back-off; starting without a record (the first bootstrap CSR to each hub is not delayed)", "err", err)
	}
	return bootstrapBackoff, store
}

// orchestratorOptions returns the failover orchestrator's options, with the builder of its hub sessions
// (hubsession.New on the one hubsession.Config of every session of the process), from the flags, the resolved
// identity, the spoke clients and the agent informers, the hubs of the flags, annotations (already filtered by
// managedcluster.FilterClusterAnnotations), the shared bootstrap back-off, clk and recorder.
func (o *FailoverAgentOptions) orchestratorOptions(spoke *SpokeClients, hubs flagHubs, annotations map[string]string, ai *agentInformers,
	bootstrapBackoff *clientcert.BootstrapBackoff, clk clock.Clock, recorder events.Recorder) failover.OrchestratorOptions {
	var expiration *int32
	if o.ClientCertExpirationSeconds > 0 {
		e := o.ClientCertExpirationSeconds
		expiration = &e
	}
	identity := managedcluster.NewSpokeIdentityReader(spoke.Kube.CoreV1())
	if spoke.KubeSystemUID != "" {
		identity = managedcluster.NewKnownSpokeIdentityReader(spoke.KubeSystemUID)
	}
	sessionConfig := hubsession.Config{
		ClusterName:          o.ClusterName,
		AgentName:            o.AgentName,
		Namespace:            o.ComponentNamespace,
		SecretName:           o.HubKubeconfigSecret,
		SecretInformer:       ai.secrets,
		CSRExpirationSeconds: expiration,
		HubQPS:               o.HubKubeAPIQPS,
		HubBurst:             o.HubKubeAPIBurst,
		AgentKubeClient:      spoke.AgentKube,
		SpokeKubeClient:      spoke.Kube,
		SpokeClusterClient:   spoke.Cluster,
		Controllers:          sessionControllers{o: o, spoke: spoke, identity: identity, annotations: annotations, expiration: expiration, clock: clk, recorder: recorder}.controllers(),
		BootstrapBackoff:     bootstrapBackoff,
		Clock:                clk,
		Recorder:             recorder,
	}
	var standby failover.StandbyKeeper
	var adopt *hubsession.StandbyCredentials
	if !o.DisableStandbyCredentials {
		// Config is the sessions' own; NewStandbyCredentials checks it as hubsession.New does, and the flag
		// rules already checked the Secret name's length.
		if s, err := hubsession.NewStandbyCredentials(sessionConfig); err == nil {
			standby, adopt = s, s
		} else {
			klog.Background().Error(err, "Standby credentials are off")
		}
	}
	return failover.OrchestratorOptions{
		Standby: standby,
		Agent:   sessionConfig,
		NewSession: func(p hubsession.Params) (failover.Session, error) {
			p.Standby = adopt
			s, err := hubsession.New(sessionConfig, p)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		FailoverConfigName:             o.FailoverConfigName,
		PrimaryBootstrapKubeconfigFile: hubs.primaryFile,
		PrimaryBootstrapSecretName:     hubs.primarySecret,
		FileHubs:                       hubs.fileHubs,
		HubConnectionTimeout:           time.Duration(o.HubConnectionTimeoutSeconds) * time.Second,
		FailoverConfigInformer:         ai.failoverConfigs,
		FailoverConfigClient:           ai.failoverConfigClient,
		Metrics:                        o.Metrics,
		SpokeIdentity:                  identity,
	}
}

// runUntilDone is the last step of RunWithClients. In this order it starts persist on its own goroutine, starts
// the agent informers, waits (at most 1 s on clk) for them to sync, runs controllers (the Secret mirror and
// the Secret volume refresh) and the orchestrator, and blocks until ctx ends: library-go treats an early
// return of the StartFunc as a crash. Then it shuts the informers down and waits for persist to return (the back-off's last save is bounded by 5 s). An
// error of the orchestrator is logged.
func runUntilDone(ctx context.Context, clk clock.Clock, ai *agentInformers, controllers []factory.Controller, orchestrator *failover.Orchestrator,
	persist func(context.Context)) {
	persisted := make(chan struct{})
	go func() {
		defer close(persisted)
		persist(ctx)
	}()
	ai.namespaced.Start(ctx.Done())
	ai.failover.Start(ctx.Done())
	// The mirror controller and the orchestrator wait for these too, but re-check only every 100 ms.
	startwait.AwaitSynced(ctx, clk, time.Second, ai.synced()...)
	for _, c := range controllers {
		go c.Run(ctx, 1)
	}
	go func() {
		if err := orchestrator.Run(ctx); err != nil {
			klog.FromContext(ctx).Error(err, "Failover orchestrator stopped")
		}
	}()
	<-ctx.Done()
	ai.namespaced.Shutdown()
	ai.failover.Shutdown()
	<-persisted
}

// ReasonFailoverConfigUnavailable (Warning, once at start): the FailoverConfig API is not served on the cluster
// the agent runs in, or the agent may not list FailoverConfigs in its namespace; the agent runs without it.
const ReasonFailoverConfigUnavailable = "FailoverConfigUnavailable"

// CheckFailoverConfigAPI lists FailoverConfigs in namespace (one object at most) until it gets a definite
// answer, and returns an error when the API is not served (the CRD is not installed: 404) or the agent may not
// list them (403), nil when the list succeeds. Other errors (the apiserver not answering yet, 5xx) are retried
// every retryInterval until ctx ends, which returns ctx's error: an informer on an absent API would never sync
// and hold the agent back for good. The error says which case it is.
func CheckFailoverConfigAPI(ctx context.Context, client failoverclientset.Interface, namespace string, retryInterval time.Duration) error {
	var result error
	err := wait.PollUntilContextCancel(ctx, retryInterval, true, func(ctx context.Context) (bool, error) {
		listCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := client.FailoverV1alpha1().FailoverConfigs(namespace).List(listCtx, metav1.ListOptions{Limit: 1})
		switch {
		case err == nil:
			result = nil
		case apierrors.IsNotFound(err):
			result = fmt.Errorf("the API %s is not served (the FailoverConfig CRD is not installed)", failoverv1alpha1.SchemeGroupVersion.WithResource("failoverconfigs"))
		case apierrors.IsForbidden(err):
			result = fmt.Errorf("the agent may not list FailoverConfigs in namespace %s: %v", namespace, err)
		default:
			klog.FromContext(ctx).Info("Checking the FailoverConfig API, retrying", "err", err)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	return result
}

// AgentGCPercent is the agent's garbage collection target (debug.SetGCPercent) unless GOGC is set: the heap may
// grow 50 % beyond the live data between collections instead of Go's default 100 %. The agent's live heap is
// small (about 8 MiB, 17 MiB with 5,000 Nodes) and its peak anonymous memory comes from that growth while a
// session lists the cluster's Nodes; the extra collections cost little CPU at the agent's allocation rate
// (docs/benchmarks-analysis.md).
const AgentGCPercent = 50

// setAgentGCPercent sets AgentGCPercent when the environment does not set GOGC.
func setAgentGCPercent() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(AgentGCPercent)
	}
}
