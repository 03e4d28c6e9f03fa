package klusterlet_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/addon/registration"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// TestAddOnMigrationFromOCMAgent: OCM's own registration agent v1.2.0 registers a template add-on with a
// kube-apiserver-client and a custom signer registration (OCM's hub add-on manager approves both CSRs and signs
// the custom one); our agent takes over and finds both Secrets exactly where and as it expects them (names,
// namespace, keys), keeps their certificates (no new add-on CSR), adopts them (label and issuing-hub annotation,
// one metadata update each), and the hub kubeconfig still authenticates as the add-on on the hub.
func TestAddOnMigrationFromOCMAgent(t *testing.T) {
	const (
		cluster      = "cluster-addon-migrated"
		addOn        = "hello"
		customSigner = "example.com/hello-signer"
		// statusTimeout bounds how long our agent takes to look at a Secret once it runs.
		statusTimeout = 30 * time.Second
	)
	hub := framework.StartHub(t, framework.HubOptions{Name: "hub-addon-migrate", HubController: true, AddonManager: true, Signer: framework.SignerInProcess})
	spoke := framework.StartSpoke(t)
	util.EnsureAgentNamespace(t, spoke)
	util.CreateSpokeNamespaces(t, spoke, registration.DefaultInstallNamespace)
	ocm := startOCMAgent(t, hub, spoke, cluster)
	util.WaitForClusterAvailable(t, hub, cluster, joinTimeout)
	caPEM, custom := util.CreateCustomSignerCA(t, hub, "hello-signer-ca", customSigner)
	util.CreateTemplateAddOn(t, util.AddOnClient(t, hub), cluster, addOn,
		addonv1alpha1.RegistrationSpec{Type: addonv1alpha1.RegistrationTypeKubeClient, KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{}}, custom)
	before := util.WaitForAddOnSecret(t, spoke, addOn, joinTimeout, "written by OCM's agent", func(s *corev1.Secret) bool {
		return len(s.Data[registration.TLSCertKey]) > 0
	})
	customName := registration.SecretNameFor(addOn, customSigner)
	var customBefore *corev1.Secret
	framework.Eventually(t, joinTimeout, 100*time.Millisecond, func() (bool, error) {
		customBefore = secret(t, spoke, customName)
		return customBefore != nil && len(customBefore.Data[registration.TLSCertKey]) > 0, nil
	}, "custom signer Secret %s written by OCM's agent", customName)
	if got := keysOf(customBefore); !slices.Equal(got, []string{registration.ClusterNameKey, registration.TLSCertKey, registration.TLSKeyKey}) {
		t.Errorf("OCM's agent wrote custom signer keys %v, ours writes cluster-name, tls.crt, tls.key", got)
	}
	util.ExpectSignedBy(t, customBefore.Data[registration.TLSCertKey], caPEM)
	if got, want := keysOf(before), []string{registration.ClusterNameKey, registration.KubeconfigKey, registration.TLSCertKey, registration.TLSKeyKey}; !slices.Equal(got, want) {
		t.Errorf("OCM's agent wrote keys %v, ours writes %v", got, want)
	}
	csrsBefore := csrCount(t, hub, cluster)
	if err := ocm.Stop(); err != nil {
		t.Fatalf("OCM's agent did not stop on SIGTERM: %v", err)
	}

	ours := registrationAgent(t, spoke, "ours-after-ocm-addon", hub.BootstrapKubeconfig(), cluster)
	start := time.Now()
	after := util.WaitForAddOnSecret(t, spoke, addOn, 4*leaseDuration+joinTimeout, "adopted by our agent", func(s *corev1.Secret) bool {
		return s.Labels[registration.AddOnNameLabel] == addOn && s.Annotations[registration.IssuingHubAnnotation] == "primary"
	})
	t.Logf("our agent adopted the add-on Secret OCM's agent wrote %s after it started", time.Since(start).Round(time.Millisecond))
	for _, k := range []string{registration.TLSCertKey, registration.TLSKeyKey, registration.KubeconfigKey} {
		if string(after.Data[k]) != string(before.Data[k]) {
			t.Errorf("Secret key %s changed when our agent took over (OCM's certificate is valid)", k)
		}
	}
	framework.Eventually(t, statusTimeout, 100*time.Millisecond, func() (bool, error) {
		s := secret(t, spoke, customName)
		return s != nil && s.Annotations[registration.IssuingHubAnnotation] == "primary", nil
	}, "custom signer Secret %s adopted by our agent", customName)
	if s := secret(t, spoke, customName); string(s.Data[registration.TLSCertKey]) != string(customBefore.Data[registration.TLSCertKey]) {
		t.Errorf("custom signer Secret %s: certificate changed when our agent took over", customName)
	}
	if n := csrCount(t, hub, cluster); n != csrsBefore {
		t.Errorf("%d CSRs for the cluster after our agent took over, %d before: it re-issued", n, csrsBefore)
	}
	util.ExpectTemplateAddOnIdentity(t, after, cluster, addOn)
	a, err := util.AddOnClient(t, hub).AddonV1alpha1().ManagedClusterAddOns(cluster).Get(context.Background(), addOn, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status.KubeClientDriver != registration.KubeClientDriverCSR {
		t.Errorf("status.kubeClientDriver %q, want %q", a.Status.KubeClientDriver, registration.KubeClientDriverCSR)
	}
	if done, err := ours.Exited(); done {
		t.Fatalf("our agent exited (%v):\n%s", err, ours.LogTail(40))
	}
}

func secret(t *testing.T, spoke *framework.Spoke, name string) *corev1.Secret {
	t.Helper()
	s, err := spoke.Kube.CoreV1().Secrets(registration.DefaultInstallNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keysOf(s *corev1.Secret) []string {
	var keys []string
	for k := range s.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
