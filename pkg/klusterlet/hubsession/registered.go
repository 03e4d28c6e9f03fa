package hubsession

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	kubeinformers "k8s.io/client-go/informers"
	certificatesv1informers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1client "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterv1informer "open-cluster-management.io/api/client/cluster/informers/externalversions/cluster/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/informers"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/startwait"
)

// ensureManagedClusterTimeout bounds the GET (and create) of the ManagedCluster with the bootstrap identity before
// the main controllers start.
const ensureManagedClusterTimeout = 10 * time.Second

// runMain runs the main controllers from the hub kubeconfig in data until ctx ends, the Secret's credentials
// change (rotation, re-bootstrap) or the certificate expires. Hub clients or controllers that cannot be built
// put the session in PhaseNoCredentials until the Secret changes.
func (s *Session) runMain(ctx context.Context, data map[string][]byte, changed <-chan struct{}) {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	// wg holds every goroutine of the main phase, the background ManagedCluster attempts included: the phase
	// ends when they have.
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()

	hub, err := s.newHubClients(data)
	if err != nil {
		// CheckHubKubeconfig passed, so this is not expected; wait for the Secret to change.
		s.setPhase(PhaseNoCredentials, err.Error())
		waitChanged(ctx, changed)
		return
	}
	bootstrapCreate := s.bootstrapCreateClient(logger)
	if bootstrapCreate != nil {
		s.ensureManagedCluster(ctx, &wg, bootstrapCreate)
	}
	mainPhase, err := s.newMainControllers(hub, bootstrapCreate)
	if err != nil {
		s.setPhase(PhaseNoCredentials, fmt.Sprintf("hub %s: %v", s.hub.Name, err))
		waitChanged(ctx, changed)
		return
	}
	s.startMain(ctx, &wg, hub, mainPhase)
	defer func() {
		cancel()
		wg.Wait()
		mainPhase.shutdown()
	}()
	s.setPhase(PhaseRegistered, fmt.Sprintf("registered with hub %s as cluster %s (agent %s)", s.hub.Name, s.config.ClusterName, s.config.AgentName))
	s.config.Recorder.Eventf(ReasonHubControllersStarted, "hub %s (%s): lease, status and certificate rotation controllers started for cluster %s",
		s.hub.Name, s.hub.Bootstrap.Hub.Server, s.config.ClusterName)
	logger.Info("Main controllers started")
	s.awaitMainEnd(ctx, data, changed)
}

// hubClients are the hub clients of the main phase, all with the hub identity of the Secret.
type hubClients struct {
	// config is the rest config they are built from (Session.hubConfig of the Secret's kubeconfig).
	config  *rest.Config
	kube    kubernetes.Interface
	cluster clusterclientset.Interface
}

// newHubClients builds the main phase's hub clients from the hub kubeconfig Secret's data. The error names the
// Secret when its kubeconfig does not load; otherwise it is client-go's.
func (s *Session) newHubClients(data map[string][]byte) (hubClients, error) {
	restConfig, err := clientcert.RestConfigFromSecretData(data)
	if err != nil {
		return hubClients{}, fmt.Errorf("hub kubeconfig secret %s/%s: %w", s.config.Namespace, s.config.SecretName, err)
	}
	cfg := s.hubConfig(restConfig, "")
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return hubClients{}, err
	}
	clusterClient, err := clusterclientset.NewForConfig(cfg)
	if err != nil {
		return hubClients{}, err
	}
	return hubClients{config: cfg, kube: kubeClient, cluster: clusterClient}, nil
}

// ensureManagedCluster makes sure, with the bootstrap identity's client bootstrapCreate, that the ManagedCluster
// exists on the hub before the main controllers start: one absent from the hub (its create was cut short when
// the certificate came first, it was deleted while the agent was down, or the hub never had it — a switch to a
// hub the replicator does not mirror to) must be created first, since without it the hub grants the agent
// identity nothing, and the main controllers, the creating controller among them, wait for a ManagedCluster
// informer that cannot sync. The first attempt is bounded by ensureManagedClusterTimeout, so that a slow hub does
// not hold back the main controllers; when it fails, attempts go on in the background (keepEnsuringManagedCluster,
// on wg) until one succeeds or ctx ends. A creation is announced with ManagedClusterCreated.
func (s *Session) ensureManagedCluster(ctx context.Context, wg *sync.WaitGroup, bootstrapCreate clusterv1client.ManagedClustersGetter) {
	if err := s.ensureManagedClusterOnce(ctx, bootstrapCreate, "before the main controllers start"); err != nil {
		klog.FromContext(ctx).Info("Could not make sure the ManagedCluster exists with the bootstrap identity; trying again in the background", "err", err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.keepEnsuringManagedCluster(ctx, bootstrapCreate)
		}()
	}
}

// Retries of ensureManagedCluster in the background: the first ensureRetryDelay after the failed attempt,
// doubling up to ensureRetryMaxDelay.
const (
	ensureRetryDelay    = time.Second
	ensureRetryMaxDelay = 30 * time.Second
)

// keepEnsuringManagedCluster tries ensureManagedClusterOnce until it succeeds or ctx ends, ensureRetryDelay
// apart, doubling up to ensureRetryMaxDelay, on the session's clock.
func (s *Session) keepEnsuringManagedCluster(ctx context.Context, bootstrapCreate clusterv1client.ManagedClustersGetter) {
	delay := ensureRetryDelay
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.config.Clock.After(delay):
		}
		err := s.ensureManagedClusterOnce(ctx, bootstrapCreate, "while the main controllers wait for it")
		if err == nil || ctx.Err() != nil {
			return
		}
		delay = min(2*delay, ensureRetryMaxDelay)
		klog.FromContext(ctx).V(2).Info("The ManagedCluster could not be made sure of yet", "err", err, "retryIn", delay)
	}
}

// ensureManagedClusterOnce is one bounded attempt of Controllers.EnsureManagedCluster; it returns its error. The
// ManagedClusterCreated event's message ends with when.
func (s *Session) ensureManagedClusterOnce(ctx context.Context, bootstrapCreate clusterv1client.ManagedClustersGetter, when string) error {
	ensureCtx, cancel := context.WithTimeout(ctx, ensureManagedClusterTimeout)
	defer cancel()
	created, err := s.config.Controllers.EnsureManagedCluster(ensureCtx, bootstrapCreate)
	if err == nil && created {
		s.config.Recorder.Eventf(managedcluster.ReasonManagedClusterCreated, "ManagedCluster %q created on hub %s %s",
			s.config.ClusterName, s.hub.Name, when)
		klog.FromContext(ctx).Info("Created the absent ManagedCluster with the bootstrap identity")
	}
	return err
}

// mainControllers are the main phase's informers and controllers; its informers stop with it (shutdown).
type mainControllers struct {
	clusterInformers clusterinformers.SharedInformerFactory
	csrInformers     kubeinformers.SharedInformerFactory
	spoke            *spokeInformers
	managedClusters  clusterv1informer.ManagedClusterInformer
	// controllers are, in the order they start: certificate rotation, then Config.Controllers.Registered's.
	controllers []factory.Controller
}

// newMainControllers builds the main phase's informers and controllers on hub: the ManagedCluster informer
// (reported to the Observer), the CSR and spoke informers, the certificate rotation controller and the controllers
// of Config.Controllers.Registered. bootstrapCreate, when not nil, is the client the creating controller creates
// an absent ManagedCluster with. It returns the rotation controller's construction error.
func (s *Session) newMainControllers(hub hubClients, bootstrapCreate clusterv1client.ManagedClustersGetter) (*mainControllers, error) {
	m := &mainControllers{
		clusterInformers: informers.NewHubManagedClusterFactory(hub.cluster, s.config.ClusterName, 0),
		csrInformers:     csrInformerFactory(hub.kube, s.config.ClusterName),
		spoke:            s.newSpokeInformers(),
	}
	m.managedClusters = m.clusterInformers.Cluster().V1().ManagedClusters()
	_, _ = m.managedClusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			if mc, ok := obj.(*clusterv1.ManagedCluster); ok {
				s.obs.ManagedClusterChanged(mc)
			}
		},
		UpdateFunc: func(_, obj interface{}) {
			if mc, ok := obj.(*clusterv1.ManagedCluster); ok {
				s.obs.ManagedClusterChanged(mc)
			}
		},
		DeleteFunc: func(interface{}) { s.obs.ManagedClusterChanged(nil) },
	})

	rotationOptions := s.clientCertOptions(hub.kube, m.csrInformers, m.spoke)
	// New credentials are the bootstrap phase's business: this controller leaves with the old ones.
	rotationOptions.RotationOnly = true
	rotation, err := clientcert.NewClientCertForHubController(rotationOptions)
	if err != nil {
		return nil, err
	}
	registered := s.config.Controllers.Registered(RegisteredInputs{
		HubKube:         hub.kube,
		HubCluster:      hub.cluster,
		BootstrapCreate: bootstrapCreate,
		ManagedClusters: m.managedClusters,
		Nodes:           m.spoke.nodes,
		Claims:          m.spoke.claims,
		Conflicts:       s.conflicts,
		Epoch:           s.sessionEpoch(),
		EpochRecorded:   s.epochRecorded,
		LeaseRenewed:    s.leaseRenewed,
	})
	m.controllers = append([]factory.Controller{rotation}, registered...)
	return m, nil
}

// csrs returns the main phase's CSR informer (the cluster's CSRs on the hub).
func (m *mainControllers) csrs() certificatesv1informers.CertificateSigningRequestInformer {
	return m.csrInformers.Certificates().V1().CertificateSigningRequests()
}

// shutdown stops the main phase's informers; call it once its controllers have returned.
func (m *mainControllers) shutdown() {
	m.clusterInformers.Shutdown()
	m.csrInformers.Shutdown()
	m.spoke.shutdown()
}

// startMain starts the main phase on wg, in this order: the spoke informers; on a goroutine of its own, the hub
// informers once the hub has given this identity its rights (startwait.AwaitHubAccess, at most hubAccessBound:
// a list the hub refuses costs about a second before client-go's reflector tries again); after waiting at most
// syncBound for every informer to sync, the controllers; and, when Config.Controllers.AddOns is set, the add-on
// controllers with hub's identity. Everything stops with ctx.
func (s *Session) startMain(ctx context.Context, wg *sync.WaitGroup, hub hubClients, m *mainControllers) {
	m.spoke.start(ctx)
	go func() {
		if err := startwait.AwaitHubAccess(ctx, s.config.Clock, hubAccessBound, hub.kube.AuthorizationV1(), s.config.ClusterName); err != nil {
			klog.FromContext(ctx).V(2).Info("Starting the hub informers without the hub's permission confirmed", "err", err)
		}
		m.clusterInformers.Start(ctx.Done())
		m.csrInformers.Start(ctx.Done())
	}()
	startwait.AwaitSynced(ctx, s.config.Clock, syncBound, m.managedClusters.Informer().HasSynced, m.csrs().Informer().HasSynced,
		m.spoke.secrets.Informer().HasSynced, m.spoke.nodes.Informer().HasSynced, m.spoke.claims.Informer().HasSynced)
	run(ctx, wg, m.controllers...)
	if s.config.Controllers.AddOns != nil {
		s.runAddOns(ctx, wg, hub.config, hub.kube, m.csrs())
	}
}

// awaitMainEnd reports the client certificate of data to the Observer and returns when the main phase ends:
// ctx ends, the certificate expires (on the session's clock; the outer loop then re-bootstraps, FC-08), the
// Secret's credentials are no longer those of data, or a new certificate is forced (ForceBootstrap). changed
// signals Secret events.
func (s *Session) awaitMainEnd(ctx context.Context, data map[string][]byte, changed <-chan struct{}) {
	logger := klog.FromContext(ctx)
	notAfter := certNotAfter(data[clientcert.TLSCertSecretKey], s.config.Clock.Now())
	s.obs.ClientCertificate(notAfter)
	expiry := s.config.Clock.NewTimer(notAfter.Sub(s.config.Clock.Now()) + time.Second)
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

// runAddOns runs Config.Controllers.AddOns on wg with the hub identity of cfg and the session's CSR informer
// (add-on CSRs carry the cluster label too); they stop with ctx.
func (s *Session) runAddOns(ctx context.Context, wg *sync.WaitGroup, cfg *rest.Config, kubeClient kubernetes.Interface,
	csrs certificatesv1informers.CertificateSigningRequestInformer) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := s.config.Controllers.AddOns(ctx, AddOnInputs{Hub: s.hub, HubConfig: cfg, HubKube: kubeClient, CSRs: csrs, OnStatus: s.obs.AddOnsChanged})
		if err != nil {
			klog.FromContext(ctx).Error(err, "Add-on controllers not started")
		}
	}()
}

// leaseRenewed records that the credentials are in use (BootstrapBackoff.InUse).
func (s *Session) leaseRenewed(time.Time) {
	s.config.BootstrapBackoff.InUse(s.backoffKey())
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
