// Command ocm-webhooks serves, in one process, the admission and conversion webhooks that OCM v1.2.0's
// cluster-manager runs as three Deployments (registration, work and add-on webhook servers), with OCM's own
// handlers (open-cluster-management.io/ocm/pkg/{registration,work,addon}/webhook), on an address and port it is
// given.
//
// OCM's webhook-server commands bind a fixed health probe port (:8000) and controller-runtime's default metrics
// port (:8080), so only one hub per machine could run them; the test bed runs several hubs on loopback. This
// wrapper builds the controller-runtime manager itself, with the health probe and metrics servers off, and
// registers on it the webhook types each of OCM's SetupWebhookServer functions registers. The paths are
// controller-runtime's, as cluster-manager's webhook configurations name them
// (e.g. /validate-work-open-cluster-management-io-v1-manifestwork, /convert).
//
// Flags: --kubeconfig (the hub; the webhooks ask it SubjectAccessReviews), --bind-address, --port, --cert-dir
// (tls.crt and tls.key), --feature-gates (OCM's hub feature gates, registration and work defaults).
package main

import (
	"crypto/tls"
	goflag "flag"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	ocmfeature "open-cluster-management.io/api/feature"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	addonwebhookv1alpha1 "open-cluster-management.io/ocm/pkg/addon/webhook/v1alpha1"
	addonwebhookv1beta1 "open-cluster-management.io/ocm/pkg/addon/webhook/v1beta1"
	"open-cluster-management.io/ocm/pkg/features"
	registrationwebhookv1 "open-cluster-management.io/ocm/pkg/registration/webhook/v1"
	registrationwebhookv1beta2 "open-cluster-management.io/ocm/pkg/registration/webhook/v1beta2"
	workwebhookcommon "open-cluster-management.io/ocm/pkg/work/webhook/common"
	workwebhookv1 "open-cluster-management.io/ocm/pkg/work/webhook/v1"
	workwebhookv1alpha1 "open-cluster-management.io/ocm/pkg/work/webhook/v1alpha1"
)

// initializer is what OCM's webhook types implement (commonoptions.WebhookInitializer).
type initializer interface {
	Init(mgr ctrl.Manager) error
}

func main() {
	// A flag set of its own: controller-runtime registers a --kubeconfig of its own on the Go flag set.
	fs := pflag.NewFlagSet("ocm-webhooks", pflag.ExitOnError)
	klogFlags := goflag.NewFlagSet("klog", goflag.ExitOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlagSet(klogFlags)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the hub")
	bindAddress := fs.String("bind-address", "127.0.0.1", "address the webhook server listens on")
	port := fs.Int("port", 0, "port the webhook server listens on (required)")
	certDir := fs.String("cert-dir", "", "directory holding tls.crt and tls.key (required)")
	manifestLimit := fs.Int("manifest-limit", 500*1024, "the largest manifests of a ManifestWork, in bytes (OCM's default, 500 KiB)")
	utilruntime.Must(features.HubMutableFeatureGate.Add(ocmfeature.DefaultHubRegistrationFeatureGates))
	utilruntime.Must(features.HubMutableFeatureGate.Add(ocmfeature.DefaultHubWorkFeatureGates))
	features.HubMutableFeatureGate.AddFlag(fs)
	_ = fs.Parse(os.Args[1:])
	if err := run(*kubeconfig, *bindAddress, *port, *certDir, *manifestLimit); err != nil {
		fmt.Fprintf(os.Stderr, "ocm-webhooks: %v\n", err)
		os.Exit(1)
	}
}

func run(kubeconfig, bindAddress string, port int, certDir string, manifestLimit int) error {
	switch {
	case kubeconfig == "":
		return fmt.Errorf("--kubeconfig is required")
	case port <= 0 || port > 65535:
		return fmt.Errorf("--port %d: must be between 1 and 65535", port)
	case certDir == "":
		return fmt.Errorf("--cert-dir is required")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	scheme := runtime.NewScheme()
	for _, install := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		// registration: pkg/registration/webhook.SetupWebhookServer
		clusterv1.Install, registrationwebhookv1beta2.Install,
		// work: pkg/work/webhook.(*Options).SetupWebhookServer
		workv1.Install, workv1alpha1.Install,
		// add-on: pkg/addon/webhook.SetupWebhookServer
		addonwebhookv1alpha1.Install, addonwebhookv1beta1.Install,
	} {
		if err := install(scheme); err != nil {
			return err
		}
	}
	ctrl.SetLogger(klog.Background())
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		HealthProbeBindAddress: "0",
		Metrics:                metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: bindAddress, Port: port, CertDir: certDir,
			TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.MinVersion = tls.VersionTLS12 }},
		}),
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	workwebhookcommon.ManifestValidator.WithLimit(manifestLimit)
	hooks := []initializer{
		&registrationwebhookv1.ManagedClusterWebhook{},
		&registrationwebhookv1beta2.ManagedClusterSetBindingWebhook{},
		&workwebhookv1.ManifestWorkWebhook{},
		&addonwebhookv1alpha1.ManagedClusterAddOnWebhook{},
		&addonwebhookv1beta1.ManagedClusterAddOnWebhook{},
		&addonwebhookv1alpha1.ClusterManagementAddOnWebhook{},
		&addonwebhookv1beta1.ClusterManagementAddOnWebhook{},
	}
	if features.HubMutableFeatureGate.Enabled(ocmfeature.ManifestWorkReplicaSet) {
		hooks = append(hooks, &workwebhookv1alpha1.ManifestWorkReplicaSetWebhook{})
	}
	for _, h := range hooks {
		if err := h.Init(mgr); err != nil {
			return fmt.Errorf("registering %T: %w", h, err)
		}
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
