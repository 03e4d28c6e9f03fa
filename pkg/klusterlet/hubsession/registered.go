package hubsession

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"sync"
	"time"

	certificatesv1informers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/addon"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/informers"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/lease"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/startwait"
)

// ensureManagedClusterTimeout bounds the GET (and create) of the ManagedCluster with the bootstrap identity before
// the main controllers start.
const ensureManagedClusterTimeout = 10 * time.Second

// runMain runs the main controllers from the hub kubeconfig in data until ctx ends, the Secret's credentials
// change (rotation, re-bootstrap) or the certificate expires.
func (s *Session) runMain(ctx context.Context, data map[string][]byte, changed <-chan struct{}) {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	restConfig, err := clientcert.RestConfigFromSecretData(data)
	if err != nil {
		// CheckHubKubeconfig passed, so this is not expected; wait for the Secret to change.
		s.setPhase(PhaseNoCredentials, fmt.Sprintf("hub kubeconfig secret %s/%s: %v", s.config.Namespace, s.config.SecretName, err))
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
		created, err := managedcluster.EnsureManagedCluster(ensureCtx, bootstrapCreate, s.config.ClusterName, s.config.SpokeExternalServerURLs, s.config.SpokeCABundle, s.config.ClusterAnnotations)
		cancelEnsure()
		switch {
		case err != nil:
			logger.Info("Could not make sure the ManagedCluster exists with the bootstrap identity; the creating controller retries", "err", err)
		case created:
			s.config.Recorder.Eventf(managedcluster.ReasonManagedClusterCreated, "ManagedCluster %q created on hub %s before the main controllers start",
				s.config.ClusterName, s.hub.Name)
			logger.Info("Created the absent ManagedCluster with the bootstrap identity")
		}
	}
	clusterInformers := informers.NewHubManagedClusterFactory(clusterClient, s.config.ClusterName, 0)
	mcInformer := clusterInformers.Cluster().V1().ManagedClusters()
	csrInformers := csrInformerFactory(kubeClient, s.config.ClusterName)
	spoke := s.newSpokeInformers()

	_, _ = mcInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
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
		ClusterName:        s.config.ClusterName,
		HubLeaseClient:     kubeClient.CoordinationV1(),
		HubClusterInformer: mcInformer,
		ConflictChecker:    s.conflicts,
		Clock:              s.config.Clock,
		OnRenewed:          s.leaseRenewed,
		Recorder:           s.config.Recorder,
	})
	creatingOptions := s.creatingOptions(clusterClient.ClusterV1())
	creatingOptions.HubClusterCreateClient = bootstrapCreate
	creatingOptions.HubClusterInformer = mcInformer
	creatingOptions.ConflictTracker = s.conflicts
	creating := managedcluster.NewManagedClusterCreatingController(creatingOptions)
	status := managedcluster.NewManagedClusterStatusController(managedcluster.StatusOptions{
		ClusterName:                  s.config.ClusterName,
		HubClusterClient:             clusterClient.ClusterV1(),
		HubClusterInformer:           mcInformer,
		HubLeaseClient:               kubeClient.CoordinationV1(),
		OwnLeaseRenewTime:            leaseController.LastRenewTime,
		SpokeDiscoveryClient:         s.config.SpokeKubeClient.Discovery(),
		SpokeNamespaceClient:         s.config.SpokeKubeClient.CoreV1(),
		NodeInformer:                 spoke.nodes,
		ClaimInformer:                spoke.claims,
		MaxCustomClusterClaims:       s.config.MaxCustomClusterClaims,
		ReservedClusterClaimSuffixes: s.config.ReservedClusterClaimSuffixes,
		ClusterHealthCheckPeriod:     s.config.ClusterHealthCheckPeriod,
		ConflictTracker:              s.conflicts,
		Clock:                        s.config.Clock,
		Recorder:                     s.config.Recorder,
	})

	var wg sync.WaitGroup
	spoke.start(ctx)
	go func() {
		// A list the hub refuses costs about a second before client-go's reflector tries again: start the hub
		// informers once the hub has given this identity its rights (startwait.AwaitHubAccess).
		if err := startwait.AwaitHubAccess(ctx, s.config.Clock, hubAccessBound, kubeClient.AuthorizationV1(), s.config.ClusterName); err != nil {
			logger.V(2).Info("Starting the hub informers without the hub's permission confirmed", "err", err)
		}
		clusterInformers.Start(ctx.Done())
		csrInformers.Start(ctx.Done())
	}()
	startwait.AwaitSynced(ctx, s.config.Clock, syncBound, mcInformer.Informer().HasSynced,
		csrInformers.Certificates().V1().CertificateSigningRequests().Informer().HasSynced,
		spoke.secrets.Informer().HasSynced, spoke.nodes.Informer().HasSynced, spoke.claims.Informer().HasSynced)
	run(ctx, &wg, rotation, leaseController, creating, status)
	if s.config.AddOns {
		s.runAddOns(ctx, &wg, cfg, kubeClient, csrInformers.Certificates().V1().CertificateSigningRequests())
	}
	defer func() {
		cancel()
		wg.Wait()
		clusterInformers.Shutdown()
		csrInformers.Shutdown()
		spoke.shutdown()
	}()
	s.setPhase(PhaseRegistered, fmt.Sprintf("registered with hub %s as cluster %s (agent %s)", s.hub.Name, s.config.ClusterName, s.config.AgentName))
	s.config.Recorder.Eventf(ReasonHubControllersStarted, "hub %s (%s): lease, status and certificate rotation controllers started for cluster %s",
		s.hub.Name, s.hub.Bootstrap.Hub.Server, s.config.ClusterName)
	logger.Info("Main controllers started")

	// The certificate's expiry ends the main controllers: the outer loop then re-bootstraps (FC-08).
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

// runAddOns starts the add-on controllers (package addon) on wg with the hub identity of cfg and the session's
// CSR informer (add-on CSRs carry the cluster label too); they stop with ctx.
func (s *Session) runAddOns(ctx context.Context, wg *sync.WaitGroup, cfg *rest.Config, kubeClient kubernetes.Interface,
	csrs certificatesv1informers.CertificateSigningRequestInformer) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := addon.Run(ctx, addon.Options{
			ClusterName:          s.config.ClusterName,
			AgentName:            s.config.AgentName,
			HubName:              s.hub.Name,
			Hub:                  s.hub.Bootstrap.Hub,
			HubConfig:            cfg,
			HubKubeClient:        kubeClient,
			HubCSRInformer:       csrs,
			SpokeKubeClient:      s.config.SpokeKubeClient,
			HostingKubeClient:    s.config.AddOnHostingKubeClient,
			ExpirationSeconds:    s.config.CSRExpirationSeconds,
			RetryBackoff:         s.config.CSRRetryBackoff,
			LeaseDurationSeconds: s.config.AddOnLeaseDurationSeconds,
			HealthResyncInterval: s.config.AddOnHealthResyncInterval,
			OnStatus:             s.obs.AddOnsChanged,
			Clock:                s.config.Clock,
			Recorder:             s.config.Recorder,
		})
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
