package klusterlet

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	addonclientset "open-cluster-management.io/api/client/addon/clientset/versioned"
	addoninformers "open-cluster-management.io/api/client/addon/informers/externalversions"
	clusterv1client "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/addon/health"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/addon/registration"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/lease"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
)

// sessionControllers builds the ManagedCluster and add-on controllers of every hub session from the completed
// options and what the agent resolved at start; controllers hands them to the sessions as hubsession.Controllers.
type sessionControllers struct {
	o     *FailoverAgentOptions
	spoke *SpokeClients
	// identity reads the spoke's identities, for the status controllers of every session and the standby probes.
	identity *managedcluster.SpokeIdentityReader
	// annotations are set on the ManagedCluster when the agent creates it (already filtered by
	// managedcluster.FilterClusterAnnotations).
	annotations map[string]string
	// expiration, if set, is spec.expirationSeconds of the add-on CSRs.
	expiration *int32
	clock      clock.Clock
	recorder   events.Recorder
}

// hosting is the cluster hosting the agent, where hosted add-ons keep their Secrets and leases: the managed
// cluster unless the agent runs in hosted mode (--spoke-kubeconfig).
func (c sessionControllers) hosting() kubernetes.Interface {
	if c.o.SpokeKubeconfig != "" {
		return c.spoke.AgentKube
	}
	return c.spoke.Kube
}

// controllers returns c as the builders a hub session calls (AddOns nil when add-on management is off).
func (c sessionControllers) controllers() hubsession.Controllers {
	hc := hubsession.Controllers{
		EnsureManagedCluster: c.ensureManagedCluster,
		Creating:             c.creating,
		Registered:           c.registered,
	}
	if !c.o.DisableAddOnManagement {
		hc.AddOns = c.runAddOns
	}
	return hc
}

// ensureManagedCluster creates the cluster's ManagedCluster through client when the hub does not have it
// (managedcluster.EnsureManagedCluster).
func (c sessionControllers) ensureManagedCluster(ctx context.Context, client clusterv1client.ManagedClustersGetter) (bool, error) {
	return managedcluster.EnsureManagedCluster(ctx, client, c.o.ClusterName, c.o.SpokeExternalServerURLs, c.spoke.CABundle, c.annotations)
}

// creating builds a ManagedCluster creating controller that creates and updates the ManagedCluster through client.
func (c sessionControllers) creating(client clusterv1client.ManagedClustersGetter) factory.Controller {
	return managedcluster.NewManagedClusterCreatingController(c.creatingOptions(client))
}

func (c sessionControllers) creatingOptions(client clusterv1client.ManagedClustersGetter) managedcluster.CreatingOptions {
	return managedcluster.CreatingOptions{
		ClusterName:             c.o.ClusterName,
		SpokeExternalServerURLs: c.o.SpokeExternalServerURLs,
		SpokeCABundle:           c.spoke.CABundle,
		Annotations:             c.annotations,
		HubClusterClient:        client,
		ResyncInterval:          c.o.ClusterHealthCheckPeriod,
		Recorder:                c.recorder,
	}
}

// registered builds the main phase's lease, creating and status controllers on in, in the order they start.
func (c sessionControllers) registered(in hubsession.RegisteredInputs) []factory.Controller {
	leaseController := lease.NewLeaseController(lease.Options{
		ClusterName:        c.o.ClusterName,
		HubLeaseClient:     in.HubKube.CoordinationV1(),
		HubClusterInformer: in.ManagedClusters,
		ConflictChecker:    in.Conflicts,
		Clock:              c.clock,
		OnRenewed:          in.LeaseRenewed,
		Recorder:           c.recorder,
	})
	creatingOptions := c.creatingOptions(in.HubCluster.ClusterV1())
	creatingOptions.HubClusterCreateClient = in.BootstrapCreate
	creatingOptions.HubClusterInformer = in.ManagedClusters
	creatingOptions.ConflictTracker = in.Conflicts
	creatingOptions.Epoch = in.Epoch
	creatingOptions.EpochRecorded = in.EpochRecorded
	status := managedcluster.NewManagedClusterStatusController(managedcluster.StatusOptions{
		ClusterName:                  c.o.ClusterName,
		HubClusterClient:             in.HubCluster.ClusterV1(),
		HubClusterInformer:           in.ManagedClusters,
		HubLeaseClient:               in.HubKube.CoordinationV1(),
		OwnLeaseRenewTime:            leaseController.LastRenewTime,
		SpokeDiscoveryClient:         c.spoke.Kube.Discovery(),
		SpokeIdentity:                c.identity,
		NodeInformer:                 in.Nodes,
		ClaimInformer:                in.Claims,
		MaxCustomClusterClaims:       c.o.MaxCustomClusterClaims,
		ReservedClusterClaimSuffixes: c.o.ReservedClusterClaimSuffixes,
		ClusterHealthCheckPeriod:     c.o.ClusterHealthCheckPeriod,
		ConflictTracker:              in.Conflicts,
		Clock:                        c.clock,
		Recorder:                     c.recorder,
	})
	return []factory.Controller{leaseController, managedcluster.NewManagedClusterCreatingController(creatingOptions), status}
}

// addOnResync is the resync period of the add-on controllers' informers.
const addOnResync = 10 * time.Minute

// runAddOns runs the add-on registration controller (package registration) and the lease-based add-on health
// controller (package health) on in until ctx ends, then stops their informers and returns nil: the cluster's
// ManagedClusterAddOns on the hub, and the Secrets labelled open-cluster-management.io/addon-name on the managed
// cluster (and on the cluster hosting the agent). It returns an error at once when a client or controller cannot
// be built; hub errors (a hub that does not serve ManagedClusterAddOns) are retried by the informers.
func (c sessionControllers) runAddOns(ctx context.Context, in hubsession.AddOnInputs) error {
	addOnClient, err := addonclientset.NewForConfig(in.HubConfig)
	if err != nil {
		return fmt.Errorf("add-on controllers: hub add-on client: %w", err)
	}
	hubAddOns := addoninformers.NewSharedInformerFactoryWithOptions(addOnClient, addOnResync, addoninformers.WithNamespace(c.o.ClusterName))
	addOnInformer := hubAddOns.Addon().V1alpha1().ManagedClusterAddOns()
	hasAddOn, err := labels.NewRequirement(registration.AddOnNameLabel, selection.Exists, nil)
	if err != nil {
		return err
	}
	secretSelector := labels.NewSelector().Add(*hasAddOn).String()
	secretFactory := func(client kubernetes.Interface) kubeinformers.SharedInformerFactory {
		return kubeinformers.NewSharedInformerFactoryWithOptions(client, addOnResync, kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.LabelSelector = secretSelector
		}))
	}
	spoke, hosting := c.spoke.Kube, c.hosting()
	spokeSecrets := secretFactory(spoke)
	factories := []kubeinformers.SharedInformerFactory{spokeSecrets}
	hostingSecrets := spokeSecrets
	if hosting != spoke {
		hostingSecrets = secretFactory(hosting)
		factories = append(factories, hostingSecrets)
	}
	reg, err := registration.NewAddOnRegistrationController(registration.Options{
		ClusterName:           c.o.ClusterName,
		AgentName:             c.o.AgentName,
		HubName:               in.Hub.Name,
		Hub:                   in.Hub.Bootstrap.Hub,
		HubAddOnInformer:      addOnInformer,
		HubAddOnClient:        addOnClient.AddonV1alpha1(),
		HubCSRs:               in.HubKube.CertificatesV1().CertificateSigningRequests(),
		HubCSRInformer:        in.CSRs,
		SpokeSecrets:          spoke.CoreV1(),
		SpokeSecretInformer:   spokeSecrets.Core().V1().Secrets(),
		HostingSecrets:        hosting.CoreV1(),
		HostingSecretInformer: hostingSecrets.Core().V1().Secrets(),
		ExpirationSeconds:     c.expiration,
		Clock:                 c.clock,
		Recorder:              c.recorder,
		OnStatus:              in.OnStatus,
	})
	if err != nil {
		return err
	}
	healthController, err := health.NewAddOnHealthController(health.Options{
		ClusterName:      c.o.ClusterName,
		HubAddOnInformer: addOnInformer,
		HubAddOnClient:   addOnClient.AddonV1alpha1(),
		SpokeLeases:      spoke.CoordinationV1(),
		HostingLeases:    hosting.CoordinationV1(),
		Clock:            c.clock,
		Recorder:         c.recorder,
	})
	if err != nil {
		return err
	}

	hubAddOns.Start(ctx.Done())
	for _, f := range factories {
		f.Start(ctx.Done())
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); reg.Run(ctx, 1) }()
	go func() { defer wg.Done(); healthController.Run(ctx, 1) }()
	klog.FromContext(ctx).Info("Add-on controllers started", "hub", in.Hub.Name)
	<-ctx.Done()
	wg.Wait()
	hubAddOns.Shutdown()
	for _, f := range factories {
		f.Shutdown()
	}
	return nil
}
