// Package addon wires the add-on controllers of one hub session: add-on registration (package registration) and
// lease-based add-on health (package health). Run builds their informers — the cluster's ManagedClusterAddOns and
// add-on CSRs on the hub, the Secrets labelled open-cluster-management.io/addon-name on the managed cluster (and
// on the cluster hosting the agent) — runs both controllers and stops everything when its context ends.
package addon

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/informers"
	certificatesv1informers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	addonclientset "open-cluster-management.io/api/client/addon/clientset/versioned"
	addoninformers "open-cluster-management.io/api/client/addon/informers/externalversions"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/addon/health"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/addon/registration"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/backoff"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

// Options are what the add-on controllers of one hub session need. Fields without a stated default are required.
type Options struct {
	// ClusterName and AgentName are the agent's identity.
	ClusterName, AgentName string
	// HubName names the active hub; Hub is its server, proxy-url and CA (for add-on kubeconfigs).
	HubName string
	Hub     clientcert.HubInfo
	// HubConfig authenticates with the agent's hub identity (the hub kubeconfig Secret's credentials).
	HubConfig *rest.Config
	// HubKubeClient is built from HubConfig (CSRs).
	HubKubeClient kubernetes.Interface
	// HubCSRInformer, if set, is a running informer of the hub's CSRs labelled
	// open-cluster-management.io/cluster-name=<ClusterName> (the session's own, which add-on CSRs carry too): it
	// saves a second watch on the hub. Default: an informer of the cluster's add-on CSRs that Run starts.
	HubCSRInformer certificatesv1informers.CertificateSigningRequestInformer
	// SpokeKubeClient is the managed cluster (add-on Secrets and leases); HostingKubeClient the cluster hosting
	// the agent (hosted add-ons), the same as SpokeKubeClient when the agent runs on the managed cluster.
	SpokeKubeClient, HostingKubeClient kubernetes.Interface
	// ExpirationSeconds, if set, is spec.expirationSeconds of add-on CSRs.
	ExpirationSeconds *int32
	// RetryBackoff spaces failed add-on CSR attempts; zero fields take the registration package's defaults.
	RetryBackoff backoff.Backoff
	// LeaseDurationSeconds of add-on leases; 0 means 60 (OCM).
	LeaseDurationSeconds int
	// HealthResyncInterval is how often add-on leases are read; 0 means 30s (OCM).
	HealthResyncInterval time.Duration
	// Clock drives both controllers. Default: real clock.
	Clock clock.Clock
	// Recorder receives their events.
	Recorder events.Recorder
	// OnStatus, if set, receives the add-on registration states whenever they change (registration.Options).
	OnStatus func([]failoverv1alpha1.AddOnRegistrationStatus)
}

// Run runs the add-on registration and health controllers until ctx ends, then stops their informers and
// returns. It returns an error at once when the options are incomplete or a client cannot be built; hub errors
// (e.g. a hub that does not serve ManagedClusterAddOns) are retried by the informers and never end it early.
func Run(ctx context.Context, o Options) error {
	if o.HubConfig == nil || o.HubKubeClient == nil || o.SpokeKubeClient == nil {
		return fmt.Errorf("add-on controllers: HubConfig, HubKubeClient and SpokeKubeClient are required")
	}
	if o.HostingKubeClient == nil {
		o.HostingKubeClient = o.SpokeKubeClient
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	addOnClient, err := addonclientset.NewForConfig(o.HubConfig)
	if err != nil {
		return fmt.Errorf("add-on controllers: hub add-on client: %w", err)
	}
	hubAddOns := addoninformers.NewSharedInformerFactoryWithOptions(addOnClient, 10*time.Minute, addoninformers.WithNamespace(o.ClusterName))
	addOnInformer := hubAddOns.Addon().V1alpha1().ManagedClusterAddOns()

	hasAddOn, err := labels.NewRequirement(registration.AddOnNameLabel, selection.Exists, nil)
	if err != nil {
		return err
	}
	csrSelector := labels.SelectorFromSet(labels.Set{clusterv1.ClusterNameLabelKey: o.ClusterName}).Add(*hasAddOn).String()
	var factories []informers.SharedInformerFactory
	csrInformer := o.HubCSRInformer
	if csrInformer == nil {
		hubCSRs := informers.NewSharedInformerFactoryWithOptions(o.HubKubeClient, 10*time.Minute, informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.LabelSelector = csrSelector
		}))
		csrInformer = hubCSRs.Certificates().V1().CertificateSigningRequests()
		factories = append(factories, hubCSRs)
	}
	secretSelector := labels.NewSelector().Add(*hasAddOn).String()
	secretFactory := func(client kubernetes.Interface) informers.SharedInformerFactory {
		return informers.NewSharedInformerFactoryWithOptions(client, 10*time.Minute, informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.LabelSelector = secretSelector
		}))
	}
	spokeSecrets := secretFactory(o.SpokeKubeClient)
	factories = append(factories, spokeSecrets)
	hostingSecrets := spokeSecrets
	if o.HostingKubeClient != o.SpokeKubeClient {
		hostingSecrets = secretFactory(o.HostingKubeClient)
		factories = append(factories, hostingSecrets)
	}

	reg, err := registration.NewAddOnRegistrationController(registration.Options{
		ClusterName:           o.ClusterName,
		AgentName:             o.AgentName,
		HubName:               o.HubName,
		Hub:                   o.Hub,
		HubAddOnInformer:      addOnInformer,
		HubAddOnClient:        addOnClient.AddonV1alpha1(),
		HubCSRs:               o.HubKubeClient.CertificatesV1().CertificateSigningRequests(),
		HubCSRInformer:        csrInformer,
		SpokeSecrets:          o.SpokeKubeClient.CoreV1(),
		SpokeSecretInformer:   spokeSecrets.Core().V1().Secrets(),
		HostingSecrets:        o.HostingKubeClient.CoreV1(),
		HostingSecretInformer: hostingSecrets.Core().V1().Secrets(),
		ExpirationSeconds:     o.ExpirationSeconds,
		RetryBackoff:          o.RetryBackoff,
		Clock:                 o.Clock,
		Recorder:              o.Recorder,
		OnStatus:              o.OnStatus,
	})
	if err != nil {
		return err
	}
	healthController, err := health.NewAddOnHealthController(health.Options{
		ClusterName:          o.ClusterName,
		HubAddOnInformer:     addOnInformer,
		HubAddOnClient:       addOnClient.AddonV1alpha1(),
		SpokeLeases:          o.SpokeKubeClient.CoordinationV1(),
		HostingLeases:        o.HostingKubeClient.CoordinationV1(),
		LeaseDurationSeconds: o.LeaseDurationSeconds,
		ResyncInterval:       o.HealthResyncInterval,
		Clock:                o.Clock,
		Recorder:             o.Recorder,
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
	klog.FromContext(ctx).Info("Add-on controllers started", "hub", o.HubName)
	<-ctx.Done()
	wg.Wait()
	hubAddOns.Shutdown()
	for _, f := range factories {
		f.Shutdown()
	}
	return nil
}
