package util

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclientset "open-cluster-management.io/api/client/addon/clientset/versioned"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/addon/registration"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// AddOnClient returns an add-on clientset for hub (admin).
func AddOnClient(t testing.TB, hub *framework.Hub) addonclientset.Interface {
	t.Helper()
	c, err := addonclientset.NewForConfig(hub.AdminConfig)
	if err != nil {
		t.Fatalf("hub %s: add-on clientset: %v", hub.Name, err)
	}
	return c
}

// CreateTemplateAddOn creates, for OCM's hub add-on manager, an AddOnTemplate "<name>-template" (a ConfigMap as
// its workload; registrations, or one KubeClient registration when none are given), its ClusterManagementAddOn
// (manual install) and cluster's ManagedClusterAddOn. The manager then fills the add-on's status (registrations,
// namespace registration.DefaultInstallNamespace), approves its CSRs and signs those of custom signers.
func CreateTemplateAddOn(t testing.TB, c addonclientset.Interface, cluster, name string, registrations ...addonv1alpha1.RegistrationSpec) {
	t.Helper()
	if len(registrations) == 0 {
		registrations = []addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeKubeClient,
			KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{}}}
	}
	ctx := context.Background()
	cm, err := json.Marshal(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: registration.DefaultInstallNamespace, Name: name + "-agent"}, Data: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: name + "-template"},
		Spec: addonv1alpha1.AddOnTemplateSpec{
			AddonName:    name,
			AgentSpec:    workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: cm}}}}},
			Registration: registrations,
		}}
	if _, err := c.AddonV1alpha1().AddOnTemplates().Create(ctx, tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create AddOnTemplate %s: %v", tmpl.Name, err)
	}
	cma := &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			AddOnMeta: addonv1alpha1.AddOnMeta{DisplayName: name},
			SupportedConfigs: []addonv1alpha1.ConfigMeta{{
				ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: "addon.open-cluster-management.io", Resource: "addontemplates"},
				DefaultConfig:       &addonv1alpha1.ConfigReferent{Name: tmpl.Name},
			}},
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.AddonInstallStrategyManual},
		}}
	if _, err := c.AddonV1alpha1().ClusterManagementAddOns().Create(ctx, cma, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ClusterManagementAddOn %s: %v", name, err)
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name}}
	if _, err := c.AddonV1alpha1().ManagedClusterAddOns(cluster).Create(ctx, mca, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ManagedClusterAddOn %s/%s: %v", cluster, name, err)
	}
}

// CreateCustomSignerCA creates the Secret (tls.crt, tls.key: an RSA CA, PKCS#1, which OCM's template add-on
// signer requires) a template add-on's custom signer registration signs with, in the hub's
// framework.HubControllerNamespace, and returns the CA certificate (PEM) and the registration.
func CreateCustomSignerCA(t testing.TB, hub *framework.Hub, secretName, signerName string) ([]byte, addonv1alpha1.RegistrationSpec) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: signerName}, key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: ca.Raw})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: framework.HubControllerNamespace, Name: secretName},
		Type: corev1.SecretTypeTLS, Data: map[string][]byte{corev1.TLSCertKey: caPEM, corev1.TLSPrivateKeyKey: keyPEM}}
	if _, err := hub.Kube.CoreV1().Secrets(secret.Namespace).Create(context.Background(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("hub %s: create custom signer CA Secret: %v", hub.Name, err)
	}
	return caPEM, addonv1alpha1.RegistrationSpec{Type: addonv1alpha1.RegistrationTypeCustomSigner,
		CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{SignerName: signerName,
			SigningCA: addonv1alpha1.SigningCARef{Name: secretName, Namespace: framework.HubControllerNamespace}}}
}

// CreateSpokeNamespaces creates namespaces on the spoke (an add-on's install namespace: its manifests would).
func CreateSpokeNamespaces(t testing.TB, spoke *framework.Spoke, names ...string) {
	t.Helper()
	for _, ns := range names {
		if _, err := spoke.Kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("spoke: create namespace %s: %v", ns, err)
		}
	}
}

// AddOnSecret returns the hub kubeconfig Secret of add-on addOn in registration.DefaultInstallNamespace on the
// spoke, nil when absent.
func AddOnSecret(t testing.TB, spoke *framework.Spoke, addOn string) *corev1.Secret {
	t.Helper()
	s, err := spoke.Kube.CoreV1().Secrets(registration.DefaultInstallNamespace).Get(context.Background(),
		registration.SecretNameFor(addOn, registration.KubeClientSigner), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// WaitForAddOnSecret waits until the add-on's hub kubeconfig Secret exists and ok accepts it, and returns it.
func WaitForAddOnSecret(t testing.TB, spoke *framework.Spoke, addOn string, timeout time.Duration, what string, ok func(*corev1.Secret) bool) *corev1.Secret {
	t.Helper()
	var s *corev1.Secret
	framework.Eventually(t, timeout, 100*time.Millisecond, func() (bool, error) {
		s = AddOnSecret(t, spoke, addOn)
		return s != nil && ok(s), nil
	}, "Secret %s of add-on %s: %s", registration.SecretNameFor(addOn, registration.KubeClientSigner), addOn, what)
	return s
}

// ExpectTemplateAddOnIdentity writes the Secret to a directory as an add-on agent mounts it, loads the kubeconfig
// file (tls.crt and tls.key relative to it) and checks with a SelfSubjectReview that the hub sees the template
// add-on's default identity: user system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<addon>-agent
// with the add-on's two groups.
func ExpectTemplateAddOnIdentity(t testing.TB, s *corev1.Secret, cluster, addOn string) {
	t.Helper()
	dir := t.TempDir()
	for k, v := range s.Data {
		if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, registration.KubeconfigKey))
	if err != nil {
		t.Fatalf("add-on kubeconfig: %v", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := client.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview with the add-on's kubeconfig: %v", err)
	}
	wantUser := "system:open-cluster-management:cluster:" + cluster + ":addon:" + addOn + ":agent:" + addOn + "-agent"
	if got := review.Status.UserInfo.Username; got != wantUser {
		t.Errorf("add-on %s authenticates as %q, want %q", addOn, got, wantUser)
	}
	for _, g := range []string{"system:open-cluster-management:cluster:" + cluster + ":addon:" + addOn, "system:open-cluster-management:addon:" + addOn} {
		if !slices.Contains(review.Status.UserInfo.Groups, g) {
			t.Errorf("add-on %s groups %v lack %q", addOn, review.Status.UserInfo.Groups, g)
		}
	}
}

// ExpectSignedBy checks that the leaf of certPEM verifies against the CA caPEM for client auth.
func ExpectSignedBy(t testing.TB, certPEM, caPEM []byte) {
	t.Helper()
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		t.Fatalf("parse certificate: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	if _, err := certs[0].Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("certificate (subject %q) does not verify against the expected CA: %v", certs[0].Subject.CommonName, err)
	}
}
