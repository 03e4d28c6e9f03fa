package klusterlet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/openshift/library-go/pkg/controller/controllercmd"
	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
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
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/spokeclient"
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
}

// RunFailoverAgent is the run function of `klusterlet-failover agent failover` (library-go controllercmd
// StartFunc). It sets the agent's GC target (setAgentGCPercent), builds the spoke clients (NewSpokeClients with
// the command's client config) and calls RunWithClients. It returns an error only for bad flags or unusable
// spoke clients; hub problems never end it.
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
// and validates the options, mirrors the hub kubeconfig Secret into --hub-kubeconfig-dir, resolves the identity,
// and hands over to the failover orchestrator, which runs one hub session at a time. It blocks until ctx ends
// and returns nil then; it returns an error at once for invalid options (one message naming every flag at fault).
func (o *FailoverAgentOptions) RunWithClients(ctx context.Context, spoke *SpokeClients, recorder events.Recorder, clk clock.Clock) error {
	if clk == nil {
		clk = clock.RealClock{}
	}
	if err := o.Complete(spoke.AgentKube.CoreV1(), ctx, recorder); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	logger := klog.FromContext(ctx).WithValues("cluster", o.ClusterName, "agent", o.AgentName, "namespace", o.ComponentNamespace)
	ctx = klog.NewContext(ctx, logger)
	primaryFile, fileHubs, err := o.HubFiles()
	if err != nil {
		return err // ValidateFlags checked it; kept for callers that skipped it
	}
	primarySecret := o.BootstrapKubeconfigSecret
	if len(o.BootstrapKubeconfigs) > 0 {
		// MultipleHubs: every hub is a file; a bootstrap-hub-kubeconfig Secret left from the Default mode must
		// not replace the first of them.
		primarySecret = ""
	}
	annotations, ignored := managedcluster.FilterClusterAnnotations(o.ClusterAnnotations)
	if len(ignored) > 0 {
		logger.Info("Ignoring --cluster-annotations keys without the required prefix", "prefix", managedcluster.ClusterAnnotationsKeyPrefix, "keys", ignored)
	}
	logger.Info("Starting klusterlet-failover agent", "bootstrapKubeconfig", primaryFile, "alternateBootstrapKubeconfigs", len(fileHubs))
	// Informers scoped to what the agent needs: Secrets and FailoverConfigs of its own namespace only. Each hub
	// session runs its controllers on informers of its own (Nodes, ClusterClaims, Secrets) that stop with it.
	// Cached without managedFields, which nothing reads (managedcluster.StripManagedFields).
	nsInformers := managedcluster.NewNamespacedInformerFactory(spoke.AgentKube, o.ComponentNamespace, 10*time.Minute)
	failoverInformers := failoverinformers.NewSharedInformerFactoryWithOptions(spoke.AgentFailover, 10*time.Minute,
		failoverinformers.WithNamespace(o.ComponentNamespace), failoverinformers.WithTransform(managedcluster.StripManagedFields))
	secretInformer := nsInformers.Core().V1().Secrets()
	// Register the informers before Start.
	secretInformer.Informer()
	var fcInformer failoverinformerv1alpha1.FailoverConfigInformer
	var fcClient failoverclientv1alpha1.FailoverConfigsGetter
	if o.FailoverConfigName != "" {
		if err := CheckFailoverConfigAPI(ctx, spoke.AgentFailover, o.ComponentNamespace, 2*time.Second); ctx.Err() != nil {
			return nil
		} else if err != nil {
			// The klusterlet operator installs neither the CRD nor RBAC for it: run on the flag hubs alone.
			recorder.Warningf(ReasonFailoverConfigUnavailable, "FailoverConfig %s/%s is not used: %v; the hubs are the bootstrap kubeconfig files (%d), and installing the FailoverConfig CRD and RBAC takes effect at the next restart",
				o.ComponentNamespace, o.FailoverConfigName, err, 1+len(fileHubs))
		} else {
			fcInformer = failoverInformers.Failover().V1alpha1().FailoverConfigs()
			fcInformer.Informer()
			fcClient = spoke.AgentFailover.FailoverV1alpha1()
		}
	}

	mirror := clientcert.NewHubKubeconfigSecretMirrorController(o.ComponentNamespace, o.HubKubeconfigSecret, o.HubKubeconfigDir,
		secretInformer, 10*time.Minute, recorder)

	var addOnHosting kubernetes.Interface
	if o.SpokeKubeconfig != "" {
		addOnHosting = spoke.AgentKube
	}
	var expiration *int32
	if o.ClientCertExpirationSeconds > 0 {
		e := o.ClientCertExpirationSeconds
		expiration = &e
	}
	// The bootstrap CSR back-off outlives the process: restored from, and saved to, a Lease in the namespace.
	bootstrapBackoff := clientcert.NewBootstrapBackoff(clientcert.BootstrapBackoffOptions{Clock: clk})
	backoffStore := clientcert.NewLeaseBootstrapBackoffStore(spoke.AgentKube.CoordinationV1(), o.ComponentNamespace, clientcert.BootstrapBackoffLeaseName)
	restoreCtx, cancelRestore := context.WithTimeout(ctx, 10*time.Second)
	if err := bootstrapBackoff.Restore(restoreCtx, backoffStore); err != nil {
		logger.Info("Could not restore the bootstrap CSR back-off; starting without a record (the first bootstrap CSR to each hub is not delayed)", "err", err)
	}
	cancelRestore()

	sessionConfig := hubsession.Config{
		ClusterName:                  o.ClusterName,
		AgentName:                    o.AgentName,
		Namespace:                    o.ComponentNamespace,
		SecretName:                   o.HubKubeconfigSecret,
		SecretInformer:               secretInformer,
		SpokeExternalServerURLs:      o.SpokeExternalServerURLs,
		SpokeCABundle:                spoke.CABundle,
		ClusterAnnotations:           annotations,
		ReservedClusterClaimSuffixes: o.ReservedClusterClaimSuffixes,
		ClusterHealthCheckPeriod:     o.ClusterHealthCheckPeriod,
		MaxCustomClusterClaims:       o.MaxCustomClusterClaims,
		CSRExpirationSeconds:         expiration,
		HubQPS:                       o.HubKubeAPIQPS,
		HubBurst:                     o.HubKubeAPIBurst,
		AgentKubeClient:              spoke.AgentKube,
		SpokeKubeClient:              spoke.Kube,
		SpokeClusterClient:           spoke.Cluster,
		AddOns:                       !o.DisableAddOnManagement,
		AddOnHostingKubeClient:       addOnHosting,
		BootstrapBackoff:             bootstrapBackoff,
		Clock:                        clk,
		Recorder:                     recorder,
	}
	orchestrator, err := failover.NewOrchestrator(failover.OrchestratorOptions{
		ClusterName:    o.ClusterName,
		AgentName:      o.AgentName,
		Namespace:      o.ComponentNamespace,
		SecretName:     o.HubKubeconfigSecret,
		SecretInformer: secretInformer,
		NewSession: func(p hubsession.Params) (failover.Session, error) {
			s, err := hubsession.New(sessionConfig, p)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		Clock:                          clk,
		Recorder:                       recorder,
		FailoverConfigName:             o.FailoverConfigName,
		PrimaryBootstrapKubeconfigFile: primaryFile,
		PrimaryBootstrapSecretName:     primarySecret,
		FileHubs:                       fileHubs,
		HubConnectionTimeout:           time.Duration(o.HubConnectionTimeoutSeconds) * time.Second,
		FailoverConfigInformer:         fcInformer,
		FailoverConfigClient:           fcClient,
		Metrics:                        o.Metrics,
	})
	if err != nil {
		return err
	}

	persisted := make(chan struct{})
	go func() {
		defer close(persisted)
		bootstrapBackoff.Persist(ctx, backoffStore, 0)
	}()
	nsInformers.Start(ctx.Done())
	failoverInformers.Start(ctx.Done())
	synced := []cache.InformerSynced{secretInformer.Informer().HasSynced}
	if fcInformer != nil {
		synced = append(synced, fcInformer.Informer().HasSynced)
	}
	// The mirror controller and the orchestrator wait for these too, but re-check only every 100 ms.
	managedcluster.AwaitSynced(ctx, clk, time.Second, synced...)
	go mirror.Run(ctx, 1)
	go func() {
		if err := orchestrator.Run(ctx); err != nil {
			logger.Error(err, "Failover orchestrator stopped")
		}
	}()
	// library-go treats an early return of the StartFunc as a crash: block until the command is stopped.
	<-ctx.Done()
	nsInformers.Shutdown()
	failoverInformers.Shutdown()
	<-persisted // its last save is bounded by 5 s
	return nil
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

// Event reasons of Complete (Normal, on the spoke).
const (
	// ReasonClusterNameGenerated: no --cluster-name was given and none was stored, so one was generated.
	ReasonClusterNameGenerated = "ClusterNameGenerated"
	// ReasonAgentNameGenerated: no --agent-name was given and none was stored, so one was generated.
	ReasonAgentNameGenerated = "AgentNameGenerated"
)

// Complete fills in the values the flags left empty, in this order:
//   - ComponentNamespace: the service-account namespace file, else DefaultComponentNamespace (CompleteNamespace);
//   - then, if a flag breaks a rule, it returns ValidateFlags' error and does no I/O (a bad flag never reaches the
//     spoke or a hub);
//   - the cluster and agent names (design §2): the flags, else the `cluster-name` / `agent-name` keys of the hub
//     kubeconfig Secret (or the CN of its certificate), else the files in --hub-kubeconfig-dir, else generated
//     names, each generated name announced with a ClusterNameGenerated / AgentNameGenerated event on recorder.
//
// It first mirrors an existing Secret into the directory (design §3 step 1); when the Secret does not hold both
// names yet, it writes the chosen names to the directory's cluster-name and agent-name files so that a restart
// before the first certificate keeps them. coreV1Client reads the agent namespace's Secret on the cluster the agent
// runs in. A failed read of the Secret (other than NotFound) is returned. Call Validate afterwards.
func (o *FailoverAgentOptions) Complete(coreV1Client corev1client.CoreV1Interface, ctx context.Context, recorder events.Recorder) error {
	o.CompleteNamespace()
	if err := o.ValidateFlags(); err != nil {
		return err
	}
	secret, err := coreV1Client.Secrets(o.ComponentNamespace).Get(ctx, o.HubKubeconfigSecret, metav1.GetOptions{})
	var data map[string][]byte
	switch {
	case err == nil:
		data = secret.Data
		if _, err := clientcert.MirrorToDir(data, o.HubKubeconfigDir); err != nil {
			// The mirror controller retries; the Secret itself is the source of truth.
			klog.FromContext(ctx).Error(err, "Mirroring the hub kubeconfig secret", "dir", o.HubKubeconfigDir)
		}
	case apierrors.IsNotFound(err):
	default:
		return fmt.Errorf("read hub kubeconfig secret %s/%s: %w", o.ComponentNamespace, o.HubKubeconfigSecret, err)
	}
	storedCluster, storedAgent := clientcert.IdentityFromSecretData(data)
	if storedCluster == "" || storedAgent == "" {
		dirCluster, dirAgent, err := clientcert.IdentityFromDir(o.HubKubeconfigDir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			klog.FromContext(ctx).Error(err, "Reading the stored identity", "dir", o.HubKubeconfigDir)
		}
		if storedCluster == "" {
			storedCluster = dirCluster
		}
		if storedAgent == "" {
			storedAgent = dirAgent
		}
	}
	if o.ClusterName == "" {
		o.ClusterName = storedCluster
	}
	if o.ClusterName == "" {
		o.ClusterName = clientcert.GenerateClusterName()
		recorder.Eventf(ReasonClusterNameGenerated, "cluster name %q generated: no --cluster-name, and none stored in Secret %s/%s or directory %s",
			o.ClusterName, o.ComponentNamespace, o.HubKubeconfigSecret, o.HubKubeconfigDir)
	}
	if o.AgentName == "" {
		o.AgentName = storedAgent
	}
	if o.AgentName == "" {
		o.AgentName = clientcert.GenerateAgentName()
		recorder.Eventf(ReasonAgentNameGenerated, "agent name %q generated: no --agent-name, and none stored in Secret %s/%s or directory %s",
			o.AgentName, o.ComponentNamespace, o.HubKubeconfigSecret, o.HubKubeconfigDir)
	}
	if len(data[clientcert.ClusterNameSecretKey]) == 0 || len(data[clientcert.AgentNameSecretKey]) == 0 {
		// Until the first certificate is issued the Secret does not exist (it is written whole, never half), so
		// the names go to the directory at once: an agent restarted while its first CSR waits for approval comes
		// back with the same names instead of new generated ones (the directory outlives container restarts).
		if _, err := clientcert.MirrorToDir(map[string][]byte{
			clientcert.ClusterNameSecretKey: []byte(o.ClusterName),
			clientcert.AgentNameSecretKey:   []byte(o.AgentName),
		}, o.HubKubeconfigDir); err != nil {
			klog.FromContext(ctx).Error(err, "Storing the cluster and agent names; a restart before the first certificate may choose new ones",
				"dir", o.HubKubeconfigDir)
		}
	}
	return nil
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
