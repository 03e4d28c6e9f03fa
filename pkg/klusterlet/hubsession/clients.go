package hubsession

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1client "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterv1alpha1informer "open-cluster-management.io/api/client/cluster/informers/externalversions/cluster/v1alpha1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/informers"
)

// bootstrapCreateClient returns the ManagedCluster client the main controllers create their ManagedCluster with
// when it is absent (deleted on the hub): the bootstrap identity's, since OCM's hub never lets the agent identity
// create ManagedClusters. It returns nil — the hub identity is then used and its 403 reported — when the bootstrap
// client certificate has expired (scenario 3 never uses an expired bootstrap) or no client can be built.
func (s *Session) bootstrapCreateClient(logger klog.Logger) clusterv1client.ManagedClustersGetter {
	if s.hub.Bootstrap.Expired(s.config.Clock.Now()) {
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
	return hubRESTConfig(s.config, base, suffix, s.wrapTransport)
}

// hubRESTConfig is base with the agent's user agent ("klusterlet-failover-<suffix>"), c's hub rate limits and,
// when wrap is set, a wrapped transport.
func hubRESTConfig(c Config, base *rest.Config, suffix string, wrap func(http.RoundTripper) http.RoundTripper) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.UserAgent = "klusterlet-failover"
	if suffix != "" {
		cfg.UserAgent += "-" + suffix
	}
	if c.HubQPS > 0 {
		cfg.QPS = c.HubQPS
	}
	if c.HubBurst > 0 {
		cfg.Burst = c.HubBurst
	}
	// No client-wide Timeout: it would also end every watch after that long and double the steady-state request
	// count on the hub (measured by make bench). Calls are bounded by their contexts, a dead connection by
	// client-go's TLS handshake timeout and HTTP/2 health pings.
	if wrap != nil {
		cfg.Wrap(wrap)
	}
	return cfg
}

func (s *Session) secretData() map[string][]byte {
	secret, err := s.config.SecretInformer.Lister().Secrets(s.config.Namespace).Get(s.config.SecretName)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			klog.Background().Error(err, "Reading the hub kubeconfig secret from the cache", "secret", klog.KRef(s.config.Namespace, s.config.SecretName))
		}
		return nil
	}
	return secret.Data
}

// clientCertOptions configures a ClientCertForHubController that sends CSRs with kubeClient's identity: the
// bootstrap identity for the first join, the hub identity for rotation.
func (s *Session) clientCertOptions(kubeClient kubernetes.Interface, csrInformers kubeinformers.SharedInformerFactory, spoke *spokeInformers) clientcert.ControllerOptions {
	opts := clientCertOptionsFor(s.config, s.hub, s.config.SecretName, s.backoffKey(), kubeClient, csrInformers, spoke.secrets)
	if s.inStandbySecret {
		opts.SecretLabels = map[string]string{StandbyHubLabel: s.hub.Name}
	}
	return opts
}

// clientCertOptionsFor configures a ClientCertForHubController of c's identity on hub that keeps the Secret
// secretName of c's namespace valid (followed through secrets) and sends CSRs with kubeClient's identity, spaced
// by the bootstrap back-off record backoffKey.
func clientCertOptionsFor(c Config, hub Hub, secretName, backoffKey string, kubeClient kubernetes.Interface,
	csrInformers kubeinformers.SharedInformerFactory, secrets corev1informers.SecretInformer) clientcert.ControllerOptions {
	return clientcert.ControllerOptions{
		ClusterName:         c.ClusterName,
		AgentName:           c.AgentName,
		Namespace:           c.Namespace,
		SecretName:          secretName,
		Hub:                 hub.Bootstrap.Hub,
		SpokeSecrets:        c.AgentKubeClient.CoreV1(),
		SpokeSecretInformer: secrets,
		HubCSRs:             kubeClient.CertificatesV1().CertificateSigningRequests(),
		HubCSRInformer:      csrInformers.Certificates().V1().CertificateSigningRequests(),
		ExpirationSeconds:   c.CSRExpirationSeconds,
		Clock:               c.Clock,
		BootstrapBackoff:    c.BootstrapBackoff,
		BackoffHub:          backoffKey,
		Recorder:            c.Recorder,
	}
}

// spokeInformers are the spoke informers of one phase of a session; they stop with it, and so do the event
// handlers library-go's factory adds to them.
type spokeInformers struct {
	namespaced kubeinformers.SharedInformerFactory
	cluster    kubeinformers.SharedInformerFactory
	claimsF    clusterinformers.SharedInformerFactory
	secrets    corev1informers.SecretInformer
	nodes      corev1informers.NodeInformer
	claims     clusterv1alpha1informer.ClusterClaimInformer
}

func (s *Session) newSpokeInformers() *spokeInformers {
	si := &spokeInformers{
		namespaced: informers.NewNamespacedFactory(s.config.AgentKubeClient, s.config.Namespace, 0),
		cluster:    informers.NewSpokeFactory(s.config.SpokeKubeClient, 0),
		claimsF:    informers.NewClaimFactory(s.config.SpokeClusterClient, 0),
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

func csrInformerFactory(client kubernetes.Interface, clusterName string) kubeinformers.SharedInformerFactory {
	selector := labels.SelectorFromSet(labels.Set{clientcert.ClusterNameLabel: clusterName}).String()
	return kubeinformers.NewSharedInformerFactoryWithOptions(client, 0, kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = selector
	}))
}

// syncBound bounds the wait for a phase's informers before its controllers start (startwait.AwaitSynced):
// a start on synced informers saves the controllers' 100 ms re-check; one that is not synced by then (the hub
// does not authorise the list yet) is left to the controllers' own wait.
const syncBound = time.Second

// hubAccessBound bounds the wait for the hub's permission before a registered phase starts its hub informers
// (startwait.AwaitHubAccess): long enough for a loaded hub to accept the cluster and write its RBAC, short
// enough that a hub that has not accepted it (the informers cannot sync either way) is left to client-go's
// retries after a few seconds. At most 26 reviews.
const hubAccessBound = 10 * time.Second

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
