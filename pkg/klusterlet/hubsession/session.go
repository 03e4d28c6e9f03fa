package hubsession

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	certificatesv1informers "k8s.io/client-go/informers/certificates/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1client "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterv1alpha1informer "open-cluster-management.io/api/client/cluster/informers/externalversions/cluster/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/addon"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/footprint"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/lease"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
)

// Hub is one hub the cluster can register with.
type Hub struct {
	// Name is "primary" for the hub of --bootstrap-kubeconfig, else the FailoverConfig alternate's name.
	Name string
	// Bootstrap is the hub's parsed bootstrap kubeconfig.
	Bootstrap *clientcert.BootstrapKubeconfig
}

// Phase is the coarse state of a session.
type Phase string

const (
	// PhaseBootstrapping: the hub kubeconfig Secret is not valid for this hub; a CSR is being obtained with the
	// bootstrap identity.
	PhaseBootstrapping Phase = "Bootstrapping"
	// PhaseNoCredentials: neither the hub kubeconfig Secret nor the bootstrap kubeconfig can be used (design §3
	// scenario 4); the session waits for either to change.
	PhaseNoCredentials Phase = "NoCredentials"
	// PhaseRegistered: the Secret holds valid credentials for this hub and the main controllers run.
	PhaseRegistered Phase = "Registered"
)

// Options are what a session needs besides the hub. Fields without a stated default are required.
type Options struct {
	// ClusterName and AgentName are the agent's identity (design §2); they never change within a process.
	ClusterName, AgentName string
	// Namespace and SecretName name the spoke hub kubeconfig Secret.
	Namespace, SecretName string
	// SpokeExternalServerURLs and SpokeCABundle are published in ManagedCluster spec.managedClusterClientConfigs.
	SpokeExternalServerURLs []string
	SpokeCABundle           []byte
	// ClusterAnnotations are set on the ManagedCluster when the agent creates it (OCM's --cluster-annotations,
	// already filtered to the keys managedcluster.FilterClusterAnnotations keeps). May be nil.
	ClusterAnnotations map[string]string
	// ReservedClusterClaimSuffixes make claims with these name suffixes reserved (--reserved-cluster-claim-suffixes).
	ReservedClusterClaimSuffixes []string
	// ClusterHealthCheckPeriod is the status resync period (--cluster-healthcheck-period).
	ClusterHealthCheckPeriod time.Duration
	// MaxCustomClusterClaims caps custom claims in status (--max-custom-cluster-claims).
	MaxCustomClusterClaims int
	// CSRExpirationSeconds, if set, is sent as spec.expirationSeconds of every CSR.
	CSRExpirationSeconds *int32
	// CSRRetryBackoff spaces failed CSR attempts of one controller; zero fields take clientcert's defaults.
	CSRRetryBackoff clientcert.Backoff
	// BootstrapBackoff spaces the bootstrap CSRs to each hub across the sessions of the process and remembers the
	// certificates the process wrote; share one between the sessions of a process. Nil: one private to the
	// session, with the defaults.
	BootstrapBackoff *clientcert.BootstrapBackoff
	// OnContested, if set, is called when the hub kubeconfig Secret, holding credentials of this process, is
	// replaced by credentials it did not write; the message names what was found. It must not block.
	OnContested func(message string)
	// AgentKubeClient writes the hub kubeconfig Secret in Namespace of the cluster the agent runs in: the managed
	// cluster, or in hosted mode (--spoke-kubeconfig) the cluster hosting the agent.
	AgentKubeClient kubernetes.Interface
	// SpokeKubeClient reads the managed cluster: health endpoints, version, Nodes, the kube-system namespace.
	SpokeKubeClient kubernetes.Interface
	// SpokeClusterClient reads the managed cluster's ClusterClaims.
	SpokeClusterClient clusterclientset.Interface
	// SpokeSecretInformer covers Namespace on AgentKubeClient's cluster; the caller starts it and keeps it running across sessions. The session
	// only adds (and removes again) an event handler to follow the hub kubeconfig Secret. The controllers of a
	// session run on informers of their own (Secrets of Namespace, Nodes, ClusterClaims) that stop with them:
	// library-go's factory never removes the handlers it adds, so shared informers would collect one set of
	// handlers per session and per credential change.
	SpokeSecretInformer corev1informers.SecretInformer
	// ConflictTracker records an identity conflict (FC-06) seen by the status controller; the lease stops
	// renewing while it is set. The verdict belongs to one hub: leave it nil to get a tracker private to the
	// session.
	ConflictTracker *managedcluster.ConflictTracker
	// HubQPS and HubBurst, when > 0, rate-limit every hub client of the session (requests per second, burst);
	// zero keeps client-go's defaults (5, 10).
	HubQPS   float32
	HubBurst int
	// WrapTransport, if set, wraps the transport of every hub client of the session (connectivity tracking).
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// OnPhase, if set, is called on every phase or message change; it must not block.
	OnPhase func(phase Phase, message string)
	// OnManagedCluster, if set, is called with every ManagedCluster observed on the hub by the main controllers'
	// informer (nil when it was deleted); it must not block.
	OnManagedCluster func(*clusterv1.ManagedCluster)
	// OnClientCertificate, if set, is called with the NotAfter of the client certificate the main controllers
	// start with; it must not block.
	OnClientCertificate func(notAfter time.Time)
	// OnLeaseRenewed, if set, is called after every successful hub lease renewal; it must not block.
	OnLeaseRenewed func(time.Time)
	// AddOns, when true, runs the add-on registration and lease health controllers with the main controllers
	// (OCM's AddonManagement), so they restart on every hub switch.
	AddOns bool
	// AddOnHostingKubeClient is the cluster hosting the agent in hosted mode (--spoke-kubeconfig), where the
	// Secrets and leases of hosted add-ons live; nil when the agent runs on the managed cluster.
	AddOnHostingKubeClient kubernetes.Interface
	// OnAddOns, if set, is called with the add-on registration states of the session's hub whenever they change;
	// it must not block.
	OnAddOns func([]failoverv1alpha1.AddOnRegistrationStatus)
	// AddOnLeaseDurationSeconds and AddOnHealthResyncInterval tune add-on health (0: OCM's 60 s and 30 s).
	AddOnLeaseDurationSeconds int
	AddOnHealthResyncInterval time.Duration
	// Clock drives controllers and validity checks. Default: real clock.
	Clock clock.Clock
	// Recorder receives the session's and its controllers' events.
	Recorder events.Recorder
}

// Reasons of the session's own events.
const (
	// ReasonHubKubeconfigInvalid: the stored hub kubeconfig cannot be used with this hub; a CSR follows.
	ReasonHubKubeconfigInvalid = "HubKubeconfigInvalid"
	// ReasonBootstrapKubeconfigExpired: the bootstrap client certificate expired and the hub kubeconfig is not
	// valid either, so the cluster cannot register until one of them is replaced.
	ReasonBootstrapKubeconfigExpired = "BootstrapKubeconfigExpired"
	// ReasonBootstrapKubeconfigExpiring is a warning that the bootstrap identity has expired while the hub
	// kubeconfig is still valid: a later re-bootstrap would be impossible.
	ReasonBootstrapKubeconfigExpiring = "BootstrapKubeconfigUnusable"
	// ReasonHubKubeconfigContested (Warning): the hub kubeconfig Secret, holding credentials this agent wrote or
	// used, was replaced by credentials it did not write (another agent name, another hub, another key): another
	// agent may be running for this cluster. The agent backs off before it writes the Secret again.
	ReasonHubKubeconfigContested = "HubKubeconfigContested"
	// ReasonMainControllersStarted: the main controllers run on this hub with the hub kubeconfig.
	ReasonMainControllersStarted = "HubControllersStarted"
)

// ensureManagedClusterTimeout bounds the GET (and create) of the ManagedCluster with the bootstrap identity before
// the main controllers start.
const ensureManagedClusterTimeout = 10 * time.Second

// Session is one registration with one hub.
type Session struct {
	o   Options
	hub Hub

	// wake is signalled by Secret events and ForceBootstrap.
	wake chan struct{}

	// ours: the Secret's credentials last seen were this process's (see Takeover); only Run's goroutine uses it.
	ours bool

	mu       sync.Mutex
	phase    Phase
	message  string
	forceCSR string
}

// New checks o and returns a session for hub. It returns an error naming the first missing option.
func New(o Options, hub Hub) (*Session, error) {
	switch {
	case hub.Bootstrap == nil || hub.Name == "":
		return nil, fmt.Errorf("hub session: hub name and bootstrap kubeconfig are required")
	case o.ClusterName == "" || o.AgentName == "" || o.Namespace == "" || o.SecretName == "":
		return nil, fmt.Errorf("hub session %s: cluster name, agent name, namespace and secret name are required", hub.Name)
	case o.AgentKubeClient == nil || o.SpokeKubeClient == nil || o.SpokeClusterClient == nil || o.SpokeSecretInformer == nil:
		return nil, fmt.Errorf("hub session %s: spoke client and informers are required", hub.Name)
	case o.Recorder == nil:
		return nil, fmt.Errorf("hub session %s: recorder is required", hub.Name)
	case o.ClusterHealthCheckPeriod <= 0:
		return nil, fmt.Errorf("hub session %s: cluster health-check period must be > 0", hub.Name)
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.ConflictTracker == nil {
		o.ConflictTracker = managedcluster.NewConflictTracker()
	}
	if o.BootstrapBackoff == nil {
		o.BootstrapBackoff = clientcert.NewBootstrapBackoff(clientcert.BootstrapBackoffOptions{Clock: o.Clock})
	}
	return &Session{o: o, hub: hub, wake: make(chan struct{}, 1)}, nil
}

// Hub returns the hub of the session.
func (s *Session) Hub() Hub { return s.hub }

// Phase returns the current phase and its message. Safe for concurrent use.
func (s *Session) Phase() (Phase, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase, s.message
}

// ForceBootstrap makes the session obtain a new certificate with the bootstrap identity even though the stored
// one looks valid — used when the hub keeps rejecting it (lasting 401). reason goes into the CSR event.
func (s *Session) ForceBootstrap(reason string) {
	s.mu.Lock()
	s.forceCSR = reason
	s.mu.Unlock()
	notify(s.wake)
}

// Run registers the cluster with the hub and keeps it registered until ctx is cancelled; then it stops every
// controller and informer it started and returns nil. It never returns early for hub errors: they are reported
// through OnPhase and events and retried with back-off.
func (s *Session) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("hub", s.hub.Name, "server", s.hub.Bootstrap.Hub.Server, "cluster", s.o.ClusterName)
	ctx = klog.NewContext(ctx, logger)
	changed := s.wake
	reg, err := s.o.SpokeSecretInformer.Informer().AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj interface{}) bool {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			sec, ok := obj.(*corev1.Secret)
			return ok && sec.Namespace == s.o.Namespace && sec.Name == s.o.SecretName
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(interface{}) { notify(changed) },
			UpdateFunc: func(interface{}, interface{}) { notify(changed) },
			DeleteFunc: func(interface{}) { notify(changed) },
		},
	})
	if err != nil {
		return fmt.Errorf("hub session %s: watch secret %s/%s: %w", s.hub.Name, s.o.Namespace, s.o.SecretName, err)
	}
	defer func() { _ = s.o.SpokeSecretInformer.Informer().RemoveEventHandler(reg) }()
	if !cache.WaitForCacheSync(ctx.Done(), s.o.SpokeSecretInformer.Informer().HasSynced) {
		return nil
	}

	warnedBootstrap := false
	for ctx.Err() == nil {
		data := s.secretData()
		now := s.o.Clock.Now()
		checkErr := clientcert.CheckHubKubeconfig(data, s.o.ClusterName, s.o.AgentName, s.hub.Bootstrap.Hub, now)
		s.observe(data, checkErr)
		s.mu.Lock()
		forced := s.forceCSR
		s.mu.Unlock()
		bootstrapExpired := s.hub.Bootstrap.Expired(now)

		switch {
		case checkErr == nil && forced == "":
			if bootstrapExpired && !warnedBootstrap {
				notAfter, _ := s.hub.Bootstrap.ClientCertNotAfter()
				s.o.Recorder.Warningf(ReasonBootstrapKubeconfigExpiring,
					"bootstrap kubeconfig %s of hub %s expired at %s; the hub kubeconfig is valid and used, but re-bootstrap would be impossible: supply a new bootstrap kubeconfig",
					s.hub.Bootstrap.Source, s.hub.Name, notAfter.UTC().Format(time.RFC3339))
				warnedBootstrap = true
			}
			s.o.BootstrapBackoff.RecordWritten(data[clientcert.TLSCertSecretKey])
			s.ours = true
			s.runMain(ctx, data, changed)
		case bootstrapExpired:
			notAfter, _ := s.hub.Bootstrap.ClientCertNotAfter()
			why := "no hub kubeconfig"
			if checkErr != nil && data != nil {
				why = checkErr.Error()
			}
			msg := fmt.Sprintf("bootstrap kubeconfig %s of hub %s expired at %s and the hub kubeconfig cannot be used (%s): supply a new bootstrap kubeconfig",
				s.hub.Bootstrap.Source, s.hub.Name, notAfter.UTC().Format(time.RFC3339), why)
			if s.setPhase(PhaseNoCredentials, msg) {
				s.o.Recorder.Warning(ReasonBootstrapKubeconfigExpired, msg)
			}
			// Waits on the Secret watch; a new bootstrap kubeconfig restarts the session from outside.
			select {
			case <-ctx.Done():
			case <-changed:
			}
		default:
			if checkErr != nil && data != nil {
				s.o.Recorder.Warningf(ReasonHubKubeconfigInvalid, "hub kubeconfig secret %s/%s cannot be used with hub %s (%s): requesting a new client certificate",
					s.o.Namespace, s.o.SecretName, s.hub.Name, checkErr)
			}
			s.runBootstrap(ctx, data, forced, changed)
		}
	}
	return nil
}

// runBootstrap runs the temporary ClientCertForHubController and ManagedClusterCreatingController with the
// bootstrap identity until the Secret holds valid credentials for this hub (new ones when forced), or ctx ends.
func (s *Session) runBootstrap(ctx context.Context, before map[string][]byte, forced string, changed <-chan struct{}) {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.setPhase(PhaseBootstrapping, fmt.Sprintf("requesting a client certificate from hub %s with the bootstrap identity", s.hub.Name))

	cfg := s.hubConfig(s.hub.Bootstrap.RestConfig, "bootstrap")
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		s.setPhase(PhaseNoCredentials, fmt.Sprintf("bootstrap kubeconfig %s: %v", s.hub.Bootstrap.Source, err))
		<-ctx.Done()
		return
	}
	clusterClient, err := clusterclientset.NewForConfig(cfg)
	if err != nil {
		s.setPhase(PhaseNoCredentials, fmt.Sprintf("bootstrap kubeconfig %s: %v", s.hub.Bootstrap.Source, err))
		<-ctx.Done()
		return
	}
	csrInformers := csrInformerFactory(kubeClient, s.o.ClusterName)
	spoke := s.newSpokeInformers()
	certOptions := s.clientCertOptions(kubeClient, csrInformers, spoke)
	certOptions.OnStatusChange = func(st clientcert.Status) {
		msg := fmt.Sprintf("hub %s: %s", s.hub.Name, st.Message)
		if st.LastError != nil {
			p := clientcert.ClassifyConnectionError(st.LastError, s.hub.Bootstrap, s.o.Clock.Now())
			if p.Message != "" {
				msg = fmt.Sprintf("hub %s: %s", s.hub.Name, p.Message)
			}
		}
		s.setPhase(PhaseBootstrapping, msg)
	}
	cc, err := clientcert.NewClientCertForHubController(certOptions)
	if err != nil {
		s.setPhase(PhaseNoCredentials, fmt.Sprintf("hub %s: %v", s.hub.Name, err))
		<-ctx.Done()
		return
	}
	creating := managedcluster.NewManagedClusterCreatingController(managedcluster.CreatingOptions{
		ClusterName:             s.o.ClusterName,
		SpokeExternalServerURLs: s.o.SpokeExternalServerURLs,
		SpokeCABundle:           s.o.SpokeCABundle,
		Annotations:             s.o.ClusterAnnotations,
		HubClusterClient:        clusterClient.ClusterV1(),
		ResyncInterval:          s.o.ClusterHealthCheckPeriod,
		Recorder:                s.o.Recorder,
	})
	if forced != "" {
		cc.RequestNewCertificate(forced)
	}
	var wg sync.WaitGroup
	csrInformers.Start(ctx.Done())
	spoke.start(ctx)
	managedcluster.AwaitSynced(ctx, syncBound, csrInformers.Certificates().V1().CertificateSigningRequests().Informer().HasSynced,
		spoke.secrets.Informer().HasSynced)
	run(ctx, &wg, cc, creating)
	defer func() {
		cancel()
		wg.Wait()
		csrInformers.Shutdown()
		spoke.shutdown()
	}()
	logger.Info("Bootstrapping with the bootstrap kubeconfig", "source", s.hub.Bootstrap.Source)

	// The bootstrap identity expiring while it waits ends this phase: the outer loop then reports NoCredentials.
	var expired <-chan time.Time
	if notAfter, ok := s.hub.Bootstrap.ClientCertNotAfter(); ok {
		timer := s.o.Clock.NewTimer(notAfter.Sub(s.o.Clock.Now()) + time.Second)
		defer timer.Stop()
		expired = timer.C()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-expired:
			logger.Info("Bootstrap client certificate expired while waiting for a certificate")
			return
		case <-changed:
		}
		data := s.secretData()
		checkErr := clientcert.CheckHubKubeconfig(data, s.o.ClusterName, s.o.AgentName, s.hub.Bootstrap.Hub, s.o.Clock.Now())
		// A takeover can land while this phase waits, also right after its own write.
		s.observe(data, checkErr)
		if checkErr != nil {
			continue
		}
		if forced != "" && bytes.Equal(data[clientcert.TLSCertSecretKey], before[clientcert.TLSCertSecretKey]) {
			continue
		}
		s.mu.Lock()
		s.forceCSR = ""
		s.mu.Unlock()
		return
	}
}

// runMain runs the main controllers from the hub kubeconfig in data until ctx ends, the Secret's credentials
// change (rotation, re-bootstrap) or the certificate expires.
func (s *Session) runMain(ctx context.Context, data map[string][]byte, changed <-chan struct{}) {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	restConfig, err := clientcert.RestConfigFromSecretData(data)
	if err != nil {
		// CheckHubKubeconfig passed, so this is not expected; wait for the Secret to change.
		s.setPhase(PhaseNoCredentials, fmt.Sprintf("hub kubeconfig secret %s/%s: %v", s.o.Namespace, s.o.SecretName, err))
		waitChanged(ctx, changed)
		return
	}
	cfg := s.hubConfig(restConfig, "")
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		s.setPhase(PhaseNoCredentials, err.Error())
		waitChanged(ctx, changed)
		return
	}
	clusterClient, err := clusterclientset.NewForConfig(cfg)
	if err != nil {
		s.setPhase(PhaseNoCredentials, err.Error())
		waitChanged(ctx, changed)
		return
	}
	bootstrapCreate := s.bootstrapCreateClient(logger)
	if bootstrapCreate != nil {
		// A ManagedCluster absent from the hub (its create was cut short when the certificate came first, or it was
		// deleted while the agent was down) must be created before the main controllers start: without it the hub
		// grants the agent identity nothing and their ManagedCluster informer would never sync.
		// Bounded: a slow hub must not hold back the main controllers (the creating controller retries anyway).
		ensureCtx, cancelEnsure := context.WithTimeout(ctx, ensureManagedClusterTimeout)
		created, err := managedcluster.EnsureManagedCluster(ensureCtx, bootstrapCreate, s.o.ClusterName, s.o.SpokeExternalServerURLs, s.o.SpokeCABundle, s.o.ClusterAnnotations)
		cancelEnsure()
		switch {
		case err != nil:
			logger.Info("Could not make sure the ManagedCluster exists with the bootstrap identity; the creating controller retries", "err", err)
		case created:
			s.o.Recorder.Eventf(managedcluster.ReasonManagedClusterCreated, "ManagedCluster %q created on hub %s before the main controllers start",
				s.o.ClusterName, s.hub.Name)
			logger.Info("Created the absent ManagedCluster with the bootstrap identity")
		}
	}
	clusterInformers := managedcluster.NewHubManagedClusterInformerFactory(clusterClient, s.o.ClusterName, 0)
	mcInformer := clusterInformers.Cluster().V1().ManagedClusters()
	csrInformers := csrInformerFactory(kubeClient, s.o.ClusterName)
	spoke := s.newSpokeInformers()

	if s.o.OnManagedCluster != nil {
		_, _ = mcInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj interface{}) {
				if mc, ok := obj.(*clusterv1.ManagedCluster); ok {
					s.o.OnManagedCluster(mc)
				}
			},
			UpdateFunc: func(_, obj interface{}) {
				if mc, ok := obj.(*clusterv1.ManagedCluster); ok {
					s.o.OnManagedCluster(mc)
				}
			},
			DeleteFunc: func(interface{}) { s.o.OnManagedCluster(nil) },
		})
	}

	rotationOptions := s.clientCertOptions(kubeClient, csrInformers, spoke)
	// New credentials are the bootstrap phase's business: this controller leaves with the old ones.
	rotationOptions.RotationOnly = true
	rotation, err := clientcert.NewClientCertForHubController(rotationOptions)
	if err != nil {
		s.setPhase(PhaseNoCredentials, fmt.Sprintf("hub %s: %v", s.hub.Name, err))
		waitChanged(ctx, changed)
		return
	}
	leaseController := lease.NewLeaseController(lease.Options{
		ClusterName:        s.o.ClusterName,
		HubLeaseClient:     kubeClient.CoordinationV1(),
		HubClusterInformer: mcInformer,
		ConflictChecker:    s.o.ConflictTracker,
		Clock:              s.o.Clock,
		OnRenewed:          s.leaseRenewed,
		Recorder:           s.o.Recorder,
	})
	creating := managedcluster.NewManagedClusterCreatingController(managedcluster.CreatingOptions{
		ClusterName:             s.o.ClusterName,
		SpokeExternalServerURLs: s.o.SpokeExternalServerURLs,
		SpokeCABundle:           s.o.SpokeCABundle,
		Annotations:             s.o.ClusterAnnotations,
		HubClusterClient:        clusterClient.ClusterV1(),
		HubClusterCreateClient:  bootstrapCreate,
		HubClusterInformer:      mcInformer,
		ConflictTracker:         s.o.ConflictTracker,
		ResyncInterval:          s.o.ClusterHealthCheckPeriod,
		Recorder:                s.o.Recorder,
	})
	status := managedcluster.NewManagedClusterStatusController(managedcluster.StatusOptions{
		ClusterName:                  s.o.ClusterName,
		HubClusterClient:             clusterClient.ClusterV1(),
		HubClusterInformer:           mcInformer,
		HubLeaseClient:               kubeClient.CoordinationV1(),
		OwnLeaseRenewTime:            leaseController.LastRenewTime,
		SpokeDiscoveryClient:         s.o.SpokeKubeClient.Discovery(),
		SpokeNamespaceClient:         s.o.SpokeKubeClient.CoreV1(),
		NodeInformer:                 spoke.nodes,
		ClaimInformer:                spoke.claims,
		MaxCustomClusterClaims:       s.o.MaxCustomClusterClaims,
		ReservedClusterClaimSuffixes: s.o.ReservedClusterClaimSuffixes,
		ClusterHealthCheckPeriod:     s.o.ClusterHealthCheckPeriod,
		ConflictTracker:              s.o.ConflictTracker,
		Clock:                        s.o.Clock,
		Recorder:                     s.o.Recorder,
	})

	var wg sync.WaitGroup
	clusterInformers.Start(ctx.Done())
	csrInformers.Start(ctx.Done())
	spoke.start(ctx)
	go func() {
		// What this phase's first Node list decoded is garbage once the informer holds its compacted copies.
		if managedcluster.AwaitSynced(ctx, time.Minute, spoke.nodes.Informer().HasSynced, spoke.claims.Informer().HasSynced) {
			footprint.Release()
		}
	}()
	managedcluster.AwaitSynced(ctx, syncBound, mcInformer.Informer().HasSynced,
		csrInformers.Certificates().V1().CertificateSigningRequests().Informer().HasSynced,
		spoke.secrets.Informer().HasSynced, spoke.nodes.Informer().HasSynced, spoke.claims.Informer().HasSynced)
	run(ctx, &wg, rotation, leaseController, creating, status)
	if s.o.AddOns {
		s.runAddOns(ctx, &wg, cfg, kubeClient, csrInformers.Certificates().V1().CertificateSigningRequests())
	}
	defer func() {
		cancel()
		wg.Wait()
		clusterInformers.Shutdown()
		csrInformers.Shutdown()
		spoke.shutdown()
	}()
	s.setPhase(PhaseRegistered, fmt.Sprintf("registered with hub %s as cluster %s (agent %s)", s.hub.Name, s.o.ClusterName, s.o.AgentName))
	s.o.Recorder.Eventf(ReasonMainControllersStarted, "hub %s (%s): lease, status and certificate rotation controllers started for cluster %s",
		s.hub.Name, s.hub.Bootstrap.Hub.Server, s.o.ClusterName)
	logger.Info("Main controllers started")

	// The certificate's expiry ends the main controllers: the outer loop then re-bootstraps (FC-08).
	notAfter := certNotAfter(data[clientcert.TLSCertSecretKey], s.o.Clock.Now())
	if s.o.OnClientCertificate != nil {
		s.o.OnClientCertificate(notAfter)
	}
	expiry := s.o.Clock.NewTimer(notAfter.Sub(s.o.Clock.Now()) + time.Second)
	defer expiry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-expiry.C():
			logger.Info("Client certificate expired; leaving the main controllers")
			return
		case <-changed:
		}
		now := s.secretData()
		if !sameCredentials(now, data) {
			logger.Info("Hub kubeconfig secret changed; restarting the main controllers with the new credentials")
			return
		}
		s.mu.Lock()
		forced := s.forceCSR
		s.mu.Unlock()
		if forced != "" {
			return
		}
	}
}

// runAddOns starts the add-on controllers (package addon) on wg with the hub identity of cfg and the session's
// CSR informer (add-on CSRs carry the cluster label too); they stop with ctx.
func (s *Session) runAddOns(ctx context.Context, wg *sync.WaitGroup, cfg *rest.Config, kubeClient kubernetes.Interface,
	csrs certificatesv1informers.CertificateSigningRequestInformer) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := addon.Run(ctx, addon.Options{
			ClusterName:          s.o.ClusterName,
			AgentName:            s.o.AgentName,
			HubName:              s.hub.Name,
			Hub:                  s.hub.Bootstrap.Hub,
			HubConfig:            cfg,
			HubKubeClient:        kubeClient,
			HubCSRInformer:       csrs,
			SpokeKubeClient:      s.o.SpokeKubeClient,
			HostingKubeClient:    s.o.AddOnHostingKubeClient,
			ExpirationSeconds:    s.o.CSRExpirationSeconds,
			RetryBackoff:         s.o.CSRRetryBackoff,
			LeaseDurationSeconds: s.o.AddOnLeaseDurationSeconds,
			HealthResyncInterval: s.o.AddOnHealthResyncInterval,
			OnStatus:             s.o.OnAddOns,
			Clock:                s.o.Clock,
			Recorder:             s.o.Recorder,
		})
		if err != nil {
			klog.FromContext(ctx).Error(err, "Add-on controllers not started")
		}
	}()
}

// leaseRenewed records that the credentials are in use (BootstrapBackoff.InUse) and passes the renewal on.
func (s *Session) leaseRenewed(t time.Time) {
	s.o.BootstrapBackoff.InUse(s.backoffKey())
	if s.o.OnLeaseRenewed != nil {
		s.o.OnLeaseRenewed(t)
	}
}

// AbandonBootstrap tells the hub's bootstrap back-off that the agent leaves this hub (a switch), so that the pending
// bootstrap, cut short, does not count as failed there (BootstrapBackoff.Abandoned). Not called when the process
// stops: a process restarted in a loop stays backed off.
func (s *Session) AbandonBootstrap() {
	s.o.BootstrapBackoff.Abandoned(s.backoffKey())
}

// backoffKey is the session's key in BootstrapBackoff: the cluster and the hub's server, so that two agents of
// one cluster sharing the persisted back-off agree on it whatever they call the hub.
func (s *Session) backoffKey() string {
	return clientcert.BootstrapBackoffKey(s.o.ClusterName, s.hub.Bootstrap.Hub.Server)
}

// observe looks at the hub kubeconfig Secret's data (checkErr: CheckHubKubeconfig's verdict for this hub) and
// reports a takeover (Takeover) once. Only the session's goroutine calls it.
func (s *Session) observe(data map[string][]byte, checkErr error) {
	cert := data[clientcert.TLSCertSecretKey]
	report, ours := Takeover(s.ours, cert, s.o.BootstrapBackoff.Wrote(cert))
	s.ours = ours
	if report {
		s.reportContested(data, checkErr)
	}
}

// Takeover decides whether the hub kubeconfig Secret was taken over by another writer. ours says whether the
// credentials last seen were this process's (written, or run with); cert is the certificate seen now and wrote
// whether this process wrote it. Rules:
//  1. No certificate (the Secret deleted or emptied): not a takeover, ours unchanged — a foreign Secret created
//     after a deletion still is one.
//  2. A certificate this process wrote: not a takeover; ours.
//  3. Another certificate: a takeover when the credentials were ours; from then on not ours, so each takeover is
//     reported once.
func Takeover(ours bool, cert []byte, wrote bool) (report, nowOurs bool) {
	switch {
	case len(cert) == 0:
		return false, ours
	case wrote:
		return false, true
	default:
		return ours, false
	}
}

// reportContested reports a hub kubeconfig Secret taken over by another writer (event, OnContested). Credentials
// that cannot be used here (checkErr != nil) also grow the hub's bootstrap back-off, so that the agent does not
// overwrite them at once; valid ones (the same names on the same hub) are used as they are.
func (s *Session) reportContested(data map[string][]byte, checkErr error) {
	owner := clientcert.OwnerOf(data)
	what := fmt.Sprintf("cluster %q, agent %q, hub server %q", owner.ClusterName, owner.AgentName, owner.Server)
	var msg string
	if checkErr == nil {
		msg = fmt.Sprintf("hub kubeconfig secret %s/%s was replaced by credentials this agent did not write (%s), valid for it: "+
			"another agent may be running for this cluster; the agent uses them as they are",
			s.o.Namespace, s.o.SecretName, what)
	} else {
		st := s.o.BootstrapBackoff.Contested(s.backoffKey())
		next := "now"
		if !st.NotBefore.IsZero() {
			next = st.NotBefore.UTC().Format(time.RFC3339)
		}
		msg = fmt.Sprintf("hub kubeconfig secret %s/%s was replaced by credentials this agent did not write (%s; %v): "+
			"another agent may be running for this cluster; next CSR to hub %s not before %s",
			s.o.Namespace, s.o.SecretName, what, clientcert.InvalidReasonOf(checkErr), s.hub.Name, next)
	}
	s.o.Recorder.Warning(ReasonHubKubeconfigContested, msg)
	if s.o.OnContested != nil {
		s.o.OnContested(msg)
	}
}

// bootstrapCreateClient returns the ManagedCluster client the main controllers create their ManagedCluster with
// when it is absent (deleted on the hub): the bootstrap identity's, since OCM's hub never lets the agent identity
// create ManagedClusters. It returns nil — the hub identity is then used and its 403 reported — when the bootstrap
// client certificate has expired (scenario 3 never uses an expired bootstrap) or no client can be built.
func (s *Session) bootstrapCreateClient(logger klog.Logger) clusterv1client.ManagedClustersGetter {
	if s.hub.Bootstrap.Expired(s.o.Clock.Now()) {
		return nil
	}
	client, err := clusterclientset.NewForConfig(s.hubConfig(s.hub.Bootstrap.RestConfig, "bootstrap"))
	if err != nil {
		logger.Error(err, "Building the bootstrap ManagedCluster client; a ManagedCluster deleted on the hub cannot be re-created")
		return nil
	}
	return client.ClusterV1()
}

func (s *Session) hubConfig(base *rest.Config, suffix string) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.UserAgent = "klusterlet-failover"
	if suffix != "" {
		cfg.UserAgent += "-" + suffix
	}
	if s.o.HubQPS > 0 {
		cfg.QPS = s.o.HubQPS
	}
	if s.o.HubBurst > 0 {
		cfg.Burst = s.o.HubBurst
	}
	// No client-wide Timeout: it would also end every watch after that long and double the steady-state request
	// count on the hub (measured by make bench). Calls are bounded by their contexts, a dead connection by
	// client-go's TLS handshake timeout and HTTP/2 health pings.
	if s.o.WrapTransport != nil {
		cfg.Wrap(s.o.WrapTransport)
	}
	return cfg
}

func (s *Session) secretData() map[string][]byte {
	secret, err := s.o.SpokeSecretInformer.Lister().Secrets(s.o.Namespace).Get(s.o.SecretName)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			klog.Background().Error(err, "Reading the hub kubeconfig secret from the cache", "secret", klog.KRef(s.o.Namespace, s.o.SecretName))
		}
		return nil
	}
	return secret.Data
}

// setPhase records the phase and message, calls OnPhase on a change and reports whether it changed.
func (s *Session) setPhase(p Phase, msg string) bool {
	s.mu.Lock()
	if s.phase == p && s.message == msg {
		s.mu.Unlock()
		return false
	}
	s.phase, s.message = p, msg
	s.mu.Unlock()
	if s.o.OnPhase != nil {
		s.o.OnPhase(p, msg)
	}
	return true
}

// clientCertOptions configures a ClientCertForHubController that sends CSRs with kubeClient's identity: the
// bootstrap identity for the first join, the hub identity for rotation.
func (s *Session) clientCertOptions(kubeClient kubernetes.Interface, csrInformers informers.SharedInformerFactory, spoke *spokeInformers) clientcert.ControllerOptions {
	return clientcert.ControllerOptions{
		ClusterName:         s.o.ClusterName,
		AgentName:           s.o.AgentName,
		Namespace:           s.o.Namespace,
		SecretName:          s.o.SecretName,
		Hub:                 s.hub.Bootstrap.Hub,
		SpokeSecrets:        s.o.AgentKubeClient.CoreV1(),
		SpokeSecretInformer: spoke.secrets,
		HubCSRs:             kubeClient.CertificatesV1().CertificateSigningRequests(),
		HubCSRInformer:      csrInformers.Certificates().V1().CertificateSigningRequests(),
		ExpirationSeconds:   s.o.CSRExpirationSeconds,
		Clock:               s.o.Clock,
		RetryBackoff:        s.o.CSRRetryBackoff,
		BootstrapBackoff:    s.o.BootstrapBackoff,
		BackoffHub:          s.backoffKey(),
		Recorder:            s.o.Recorder,
	}
}

// spokeInformers are the spoke informers of one phase of a session; they stop with it, and so do the event
// handlers library-go's factory adds to them.
type spokeInformers struct {
	namespaced informers.SharedInformerFactory
	cluster    informers.SharedInformerFactory
	claimsF    clusterinformers.SharedInformerFactory
	secrets    corev1informers.SecretInformer
	nodes      corev1informers.NodeInformer
	claims     clusterv1alpha1informer.ClusterClaimInformer
}

func (s *Session) newSpokeInformers() *spokeInformers {
	si := &spokeInformers{
		namespaced: managedcluster.NewNamespacedInformerFactory(s.o.AgentKubeClient, s.o.Namespace, 0),
		cluster:    managedcluster.NewSpokeInformerFactory(s.o.SpokeKubeClient, 0),
		claimsF:    managedcluster.NewClaimInformerFactory(s.o.SpokeClusterClient, 0),
	}
	si.secrets = si.namespaced.Core().V1().Secrets()
	si.nodes = si.cluster.Core().V1().Nodes()
	si.claims = si.claimsF.Cluster().V1alpha1().ClusterClaims()
	return si
}

func (si *spokeInformers) start(ctx context.Context) {
	si.namespaced.Start(ctx.Done())
	si.cluster.Start(ctx.Done())
	si.claimsF.Start(ctx.Done())
}

func (si *spokeInformers) shutdown() {
	si.namespaced.Shutdown()
	si.cluster.Shutdown()
	si.claimsF.Shutdown()
}

func csrInformerFactory(client kubernetes.Interface, clusterName string) informers.SharedInformerFactory {
	selector := labels.SelectorFromSet(labels.Set{clientcert.ClusterNameLabel: clusterName}).String()
	return informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = selector
	}))
}

// syncBound bounds the wait for a phase's informers before its controllers start (managedcluster.AwaitSynced):
// a start on synced informers saves the controllers' 100 ms re-check; one that is not synced by then (the hub
// does not authorise the list yet) is left to the controllers' own wait.
const syncBound = time.Second

func run(ctx context.Context, wg *sync.WaitGroup, controllers ...factory.Controller) {
	for _, c := range controllers {
		wg.Add(1)
		go func(c factory.Controller) {
			defer wg.Done()
			c.Run(ctx, 1)
		}(c)
	}
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func waitChanged(ctx context.Context, changed <-chan struct{}) {
	select {
	case <-ctx.Done():
	case <-changed:
	}
}

func sameCredentials(a, b map[string][]byte) bool {
	for _, k := range clientcert.SecretKeys() {
		if !bytes.Equal(a[k], b[k]) {
			return false
		}
	}
	return true
}

// certNotAfter returns the expiry of the first certificate in pemData, or a day after now if none parses
// (CheckHubKubeconfig has already rejected such data).
func certNotAfter(pemData []byte, now time.Time) time.Time {
	block, _ := pem.Decode(pemData)
	if block == nil {
		return now.Add(24 * time.Hour)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return now.Add(24 * time.Hour)
	}
	return cert.NotAfter
}
