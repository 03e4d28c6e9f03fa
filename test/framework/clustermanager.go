package framework

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// What a complete hub (HubOptions.ClusterManager) runs beyond the partial one, as OCM v1.2.0's cluster-manager
// installs it (open-cluster-management.io/ocm manifests/cluster-manager): its CRDs, the registration, work and
// add-on webhooks (registered by URL here, by Service there), the placement controller and the work manager with
// ManifestWorkReplicaSet on.

// clusterManagerCRDFiles are the CRDs, relative to ocmAPIVendorDir, of the kinds cluster-manager v1.2.0 installs
// (manifests/cluster-manager/hub/crds) besides hubCRDFiles, which they replace where both name a CRD: the add-on
// CRDs served as v1alpha1 (storage) and v1beta1, ManifestWorkReplicaSet and AddOnPlacementScore. The files are
// the vendored api's (v1.3.0): their schemas differ from v1.2.0's in a few optional fields (AddOnTemplate's and
// ManifestWorkReplicaSet's jqPathExpressions, Placement toleration operators). ClusterProfile
// (multicluster.x-k8s.io) is left out: only the hub's ClusterProfile feature, off by default, uses it.
func clusterManagerCRDFiles() []string {
	return []string{
		"addon/v1beta1/0000_00_addon.open-cluster-management.io_clustermanagementaddons.crd.yaml",
		"addon/v1beta1/0000_01_addon.open-cluster-management.io_managedclusteraddons.crd.yaml",
		"addon/v1beta1/0000_02_addon.open-cluster-management.io_addondeploymentconfigs.crd.yaml",
		"addon/v1alpha1/0000_03_addon.open-cluster-management.io_addontemplates.crd.yaml",
		"cluster/v1alpha1/0000_05_clusters.open-cluster-management.io_addonplacementscores.crd.yaml",
		"work/v1alpha1/0000_00_work.open-cluster-management.io_manifestworkreplicasets.crd.yaml",
	}
}

// conversionWebhookCRDs are the CRDs whose versions cluster-manager v1.2.0 converts with the add-on webhook
// (spec.conversion.strategy Webhook, path /convert).
var conversionWebhookCRDs = map[string]bool{
	"clustermanagementaddons.addon.open-cluster-management.io": true,
	"managedclusteraddons.addon.open-cluster-management.io":    true,
}

// ocmWebhooks is the hub's ocm-webhooks server: its port on 127.0.0.1 and the CA bundle that verifies it.
type ocmWebhooks struct {
	port    int
	caPEM   []byte
	certDir string
}

// url returns the URL of path on the server.
func (w *ocmWebhooks) url(path string) string {
	return "https://127.0.0.1:" + strconv.Itoa(w.port) + path
}

// newOCMWebhooks picks the server's port and writes its serving certificate (for 127.0.0.1, from a CA of its own)
// into dir, before the apiserver starts: the CRDs' conversion webhooks name the server.
func newOCMWebhooks(component, dir string) (*ocmWebhooks, error) {
	port, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	caDir := filepath.Join(dir, "ca")
	if err := os.MkdirAll(caDir, 0o700); err != nil {
		return nil, err
	}
	ca, err := newTestCA(component+"-ocm-webhooks-ca", caDir)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	der, err := ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "ocm-webhooks"},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(clientCertLifetime),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}, &key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("issuing the ocm-webhooks serving certificate: %w", err)
	}
	certDir := filepath.Join(dir, "serving")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	if err := writePEMPair(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"), der, key); err != nil {
		return nil, err
	}
	return &ocmWebhooks{port: port, caPEM: ca.pem(), certDir: certDir}, nil
}

// withConversionWebhooks returns crds with the add-on CRDs' conversion pointed at w (/convert), as
// cluster-manager's CRD manifests point it at its add-on webhook Service.
func (w *ocmWebhooks) withConversionWebhooks(crds []*apiextensionsv1.CustomResourceDefinition) []*apiextensionsv1.CustomResourceDefinition {
	url := w.url("/convert")
	for _, crd := range crds {
		if !conversionWebhookCRDs[crd.Name] {
			continue
		}
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: w.caPEM},
				ConversionReviewVersions: []string{"v1", "v1beta1"},
			},
		}
	}
	return crds
}

// crdFiles returns the CRD files a hub with opts serves, relative to ocmAPIVendorDir.
func crdFiles(opts HubOptions) []string {
	if !opts.ClusterManager {
		files := hubCRDFiles()
		if opts.AddonManager {
			files = append(files, addonManagerCRDFiles()...)
		}
		return files
	}
	replaced := map[string]bool{}
	for _, f := range clusterManagerCRDFiles() {
		replaced[filepath.Base(f)] = true
	}
	var files []string
	for _, f := range hubCRDFiles() {
		if !replaced[filepath.Base(f)] {
			files = append(files, f)
		}
	}
	return append(files, clusterManagerCRDFiles()...)
}

// startOCMWebhooks runs ocm-webhooks for the hub with the admin kubeconfig and OCM's default hub feature gates plus
// ManifestWorkReplicaSet, waits until it serves TLS, and registers cluster-manager v1.2.0's webhook configurations
// (manifests/cluster-manager/hub/{registration,work}: the ManagedCluster mutating and validating webhooks, the
// ManagedClusterSetBinding and ManifestWork validating webhooks; failurePolicy Fail) by URL with its CA.
func (h *Hub) startOCMWebhooks() {
	h.t.Helper()
	w := h.webhooks
	binDir, err := BinariesDir(BinaryOCMWebhooks)
	if err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	p, err := startProcess("ocm-webhooks", h.cp.logDir, filepath.Join(binDir, BinaryOCMWebhooks), []string{
		"--kubeconfig=" + h.adminKubeconfigFile,
		"--bind-address=127.0.0.1",
		"--port=" + strconv.Itoa(w.port),
		"--cert-dir=" + w.certDir,
		"--feature-gates=" + workManagerFeatureGates,
		"--v=2",
	})
	if err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	h.t.Cleanup(func() {
		if err := p.stop(stopTimeout); err != nil {
			h.t.Errorf("hub %s: %v", h.Name, err)
		}
	})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(w.caPEM)
	ctx, cancel := context.WithTimeout(context.Background(), h.opts.StartTimeout)
	defer cancel()
	var lastErr error
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if done, exitErr := p.exited(); done {
			return false, fmt.Errorf("ocm-webhooks exited: %v", exitErr)
		}
		dialer := &tls.Dialer{Config: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
		conn, err := dialer.DialContext(ctx, "tcp", "127.0.0.1:"+strconv.Itoa(w.port))
		if err != nil {
			lastErr = err
			return false, nil
		}
		_ = conn.Close()
		return true, nil
	}); err != nil {
		h.t.Fatalf("hub %s: ocm-webhooks does not serve TLS (%v; last: %v); log %s:\n%s", h.Name, err, lastErr, p.logPath,
			tailFile(p.logPath, logTailLines))
	}

	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(10)
	hook := func(path, group string, versions []string, resource string) (admissionregistrationv1.WebhookClientConfig, []admissionregistrationv1.RuleWithOperations) {
		url := w.url(path)
		return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: w.caPEM},
			[]admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: versions, Resources: []string{resource}},
			}}
	}
	validating := func(name, path, group string, versions []string, resource string) *admissionregistrationv1.ValidatingWebhookConfiguration {
		cc, rules := hook(path, group, versions, resource)
		return &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name: name, ClientConfig: cc, Rules: rules, FailurePolicy: &fail, SideEffects: &none,
				AdmissionReviewVersions: []string{"v1beta1", "v1"}, TimeoutSeconds: &timeout,
			}},
		}
	}
	for _, v := range []*admissionregistrationv1.ValidatingWebhookConfiguration{
		validating("managedclustervalidators.admission.cluster.open-cluster-management.io",
			"/validate-cluster-open-cluster-management-io-v1-managedcluster", "cluster.open-cluster-management.io", []string{"*"}, "managedclusters"),
		validating("managedclustersetbindingvalidators.admission.cluster.open-cluster-management.io",
			"/validate-cluster-open-cluster-management-io-v1beta2-managedclustersetbinding", "cluster.open-cluster-management.io", []string{"v1beta2"}, "managedclustersetbindings"),
		validating("manifestworkvalidators.admission.work.open-cluster-management.io",
			"/validate-work-open-cluster-management-io-v1-manifestwork", "work.open-cluster-management.io", []string{"*"}, "manifestworks"),
	} {
		if _, err := h.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, v, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			h.t.Fatalf("hub %s: creating ValidatingWebhookConfiguration %s: %v", h.Name, v.Name, err)
		}
	}
	name := "managedclustermutators.admission.cluster.open-cluster-management.io"
	cc, rules := hook("/mutate-cluster-open-cluster-management-io-v1-managedcluster", "cluster.open-cluster-management.io", []string{"*"}, "managedclusters")
	m := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: name, ClientConfig: cc, Rules: rules, FailurePolicy: &fail, SideEffects: &none,
			AdmissionReviewVersions: []string{"v1beta1", "v1"}, TimeoutSeconds: &timeout,
		}},
	}
	if _, err := h.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, m, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		h.t.Fatalf("hub %s: creating MutatingWebhookConfiguration %s: %v", h.Name, m.Name, err)
	}
}

// workManagerFeatureGates are the hub work feature gates of the complete hub's work manager and webhooks:
// cluster-manager runs the work manager only when ManifestWorkReplicaSet (off by default in v1.2.0) or
// CleanUpCompletedManifestWork is on.
const workManagerFeatureGates = "ManifestWorkReplicaSet=true"

// startPlacementController runs OCM's placement controller (`placement controller`) and waits until its /healthz
// answers.
func (h *Hub) startPlacementController() {
	h.t.Helper()
	binDir, err := BinariesDir(BinaryPlacement)
	if err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	h.startHubProcess("placement-controller", filepath.Join(binDir, BinaryPlacement), "controller")
}

// startWorkManager runs OCM's hub work manager (`work manager`, ManifestWorkReplicaSet on) and waits until its
// /healthz answers.
func (h *Hub) startWorkManager() {
	h.t.Helper()
	binDir, err := BinariesDir(BinaryWork)
	if err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	h.startHubProcess("work-manager", filepath.Join(binDir, BinaryWork), "manager", "--feature-gates="+workManagerFeatureGates)
}
