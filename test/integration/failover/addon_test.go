package failover_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclientset "open-cluster-management.io/api/client/addon/clientset/versioned"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/addon/health"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/addon/registration"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// Add-on names of the add-on test. helloAddOn and onlyAAddOn are template add-ons OCM's add-on manager serves;
// leaseAddOn is a ManagedClusterAddOn no manager owns (health check mode Lease by default).
const (
	helloAddOn = "hello"
	onlyAAddOn = "only-a"
	leaseAddOn = "leasy"
	leaseNS    = "leasy-ns"
	// helloSigner is hello's custom signer; its Secret is hello-example.com-hello-signer-client-cert.
	helloSigner = "example.com/hello-signer"
	// addOnTimeout bounds CSR → approval by the add-on manager → signed → Secret on the spoke.
	addOnTimeout = 60 * time.Second
)

// TestAddOnRegistration runs OCM's hub add-on manager v1.2.0 on two hubs with template add-ons: the agent writes
// each add-on's hub kubeconfig Secret, which authenticates on the hub as the add-on's identity; lease health is
// reported; after hub A's apiserver stops and the cluster fails over to hub B the Secret is re-issued by hub B in
// one write, the add-on hub B does
// not have keeps its Secret untouched (AddOnNotOnHub), and removing the add-on on hub B deletes its Secret.
func TestAddOnRegistration(t *testing.T) {
	b := newBed(t, bedOptions{
		spec:        spec(shortConnectionTimeout),
		hubA:        framework.HubOptions{AddonManager: true},
		hubB:        framework.HubOptions{AddonManager: true},
		beforeAgent: func(b *bed) { util.CreateSpokeNamespaces(t, b.spoke, registration.DefaultInstallNamespace, leaseNS) },
	})
	addOnsA := util.AddOnClient(t, b.hubA)
	addOnsB := util.AddOnClient(t, b.hubB)
	// Hub B has not seen the cluster yet: its namespace is created ahead, as the replicator's ManagedCluster copy
	// would have it created.
	if _, err := b.hubB.Kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterName}},
		metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// hello has a hub kubeconfig and a custom signer registration; each hub signs the custom one with its own CA.
	kubeClient := addonv1alpha1.RegistrationSpec{Type: addonv1alpha1.RegistrationTypeKubeClient, KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{}}
	caA, customA := util.CreateCustomSignerCA(t, b.hubA, "hello-signer-ca", helloSigner)
	caB, customB := util.CreateCustomSignerCA(t, b.hubB, "hello-signer-ca", helloSigner)
	util.CreateTemplateAddOn(t, addOnsA, clusterName, helloAddOn, kubeClient, customA)
	util.CreateTemplateAddOn(t, addOnsA, clusterName, onlyAAddOn)
	util.CreateTemplateAddOn(t, addOnsB, clusterName, helloAddOn, kubeClient, customB)

	// 1. Hub A: the Secrets appear and authenticate as the add-ons' identity.
	start := time.Now()
	hello := waitAddOnSecret(t, b, helloAddOn, b.hubA, addOnTimeout)
	t.Logf("add-on %s: hub kubeconfig Secret from hub A %s after the ManagedClusterAddOn was created", helloAddOn, time.Since(start).Round(time.Millisecond))
	util.ExpectTemplateAddOnIdentity(t, hello, clusterName, helloAddOn)
	customOnA := waitCustomSecret(t, b, "primary")
	util.ExpectSignedBy(t, customOnA.Data[registration.TLSCertKey], caA)
	onlyA := waitAddOnSecret(t, b, onlyAAddOn, b.hubA, addOnTimeout)
	if got := getAddOn(t, addOnsA, helloAddOn).Status.KubeClientDriver; got != registration.KubeClientDriverCSR {
		t.Errorf("hub A: %s status.kubeClientDriver %q, want %q", helloAddOn, got, registration.KubeClientDriverCSR)
	}

	// 2. Lease health on hub A: Unknown without a lease, True with a fresh one.
	leasy := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: leaseAddOn},
		Spec: addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: leaseNS}}
	if _, err := addOnsA.AddonV1alpha1().ManagedClusterAddOns(clusterName).Create(context.Background(), leasy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAvailable(t, addOnsA, leaseAddOn, metav1.ConditionUnknown, health.ReasonManagedClusterAddOnLeaseNotFound)
	now := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: leaseNS, Name: leaseAddOn}, Spec: coordinationv1.LeaseSpec{RenewTime: &now}}
	if _, err := b.spoke.Kube.CoordinationV1().Leases(leaseNS).Create(context.Background(), lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Any change of the add-on makes the agent look at once (else the 30 s resync does).
	touch := []byte(`{"metadata":{"labels":{"test":"touched"}}}`)
	if _, err := addOnsA.AddonV1alpha1().ManagedClusterAddOns(clusterName).Patch(context.Background(), leaseAddOn, types.MergePatchType, touch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAvailable(t, addOnsA, leaseAddOn, metav1.ConditionTrue, health.ReasonManagedClusterAddOnLeaseUpdated)

	// 3. Hub A's apiserver stops: after the failover hub B re-issues hello's Secret; only-a's stays as hub A wrote
	// it.
	watchCtx, stopWatch := context.WithCancel(context.Background())
	versions := recordSecretVersions(t, watchCtx, b.spoke.Kube, registration.DefaultInstallNamespace, registration.SecretNameFor(helloAddOn, registration.KubeClientSigner))
	stopped := time.Now()
	b.hubA.StopAPIServer()
	util.WaitForClusterAvailable(t, b.hubB, clusterName, shortConnectionTimeout+failoverSlack)
	clusterOnB := time.Since(stopped)
	helloB := waitAddOnSecret(t, b, helloAddOn, b.hubB, failoverSlack)
	addOnOnB := time.Since(stopped)
	t.Logf("hub A stopped (connection timeout %s): cluster Available on hub B after %s, add-on %s holds hub B's credentials after %s (%s after the cluster)",
		shortConnectionTimeout, clusterOnB.Round(time.Millisecond), helloAddOn, addOnOnB.Round(time.Millisecond), (addOnOnB - clusterOnB).Round(time.Millisecond))
	util.ExpectTemplateAddOnIdentity(t, helloB, clusterName, helloAddOn)
	customOnB := waitCustomSecret(t, b, hubB)
	util.ExpectSignedBy(t, customOnB.Data[registration.TLSCertKey], caB)
	if _, ok := customOnB.Data[registration.KubeconfigKey]; ok {
		t.Errorf("custom signer Secret has a %s key", registration.KubeconfigKey)
	}
	stopWatch()
	for i, v := range versions() {
		server := util.KubeconfigServer(v[registration.KubeconfigKey])
		if server != b.hubA.URL() && server != b.hubB.URL() {
			t.Errorf("Secret version %d: kubeconfig server %q is neither hub's", i, server)
		}
		if !certMatches(v) {
			t.Errorf("Secret version %d (server %s): tls.crt does not match tls.key — a mixed write", i, server)
		}
	}
	util.WaitForEvent(t, b.spoke, registration.ReasonAddOnNotOnHub, onlyAAddOn, statusTimeout)
	for _, m := range util.EventMessages(t, b.spoke, registration.ReasonAddOnNotOnHub) {
		if strings.Contains(m, helloAddOn+" (") || strings.Count(m, onlyAAddOn+" (") != 1 {
			t.Errorf("event %s %q: want %s once and not %s, which hub B has", registration.ReasonAddOnNotOnHub, m, onlyAAddOn, helloAddOn)
		}
	}
	if got := util.AddOnSecret(t, b.spoke, onlyAAddOn); got == nil || got.ResourceVersion != onlyA.ResourceVersion {
		t.Errorf("Secret of %s (not on hub B) changed or deleted after the switch", onlyAAddOn)
	}
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "hub-b's add-ons in the status", func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		hs := util.HubProbe(fc, hubB)
		if hs == nil {
			return false, "no status of hub-b"
		}
		got := map[string]string{}
		for _, a := range hs.AddOns {
			got[a.Name] = string(a.State) + "/" + a.IssuingHub
		}
		return got[helloAddOn] == "Registered/"+hubB && got[onlyAAddOn] == "NotOnHub/"+primary, fmt.Sprintf("hub-b add-ons %v", got)
	})

	// 4. Removal on hub B deletes the Secret.
	if err := addOnsB.AddonV1alpha1().ManagedClusterAddOns(clusterName).Delete(context.Background(), helloAddOn, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, statusTimeout, 200*time.Millisecond, func() (bool, error) {
		return util.AddOnSecret(t, b.spoke, helloAddOn) == nil, nil
	}, "Secret of %s deleted after its ManagedClusterAddOn was removed on hub B", helloAddOn)
	framework.Eventually(t, statusTimeout, 200*time.Millisecond, func() (bool, error) {
		_, err := b.spoke.Kube.CoreV1().Secrets(registration.DefaultInstallNamespace).Get(context.Background(),
			registration.SecretNameFor(helloAddOn, helloSigner), metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}, "custom signer Secret of %s deleted after its ManagedClusterAddOn was removed on hub B", helloAddOn)
	if util.AddOnSecret(t, b.spoke, onlyAAddOn) == nil {
		t.Errorf("Secret of %s deleted with %s", onlyAAddOn, helloAddOn)
	}
	b.expectNotExited(t)
}

func getAddOn(t *testing.T, c addonclientset.Interface, name string) *addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	a, err := c.AddonV1alpha1().ManagedClusterAddOns(clusterName).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// waitAddOnSecret waits until the add-on's hub kubeconfig Secret holds credentials for hub.
func waitAddOnSecret(t *testing.T, b *bed, addOn string, hub *framework.Hub, timeout time.Duration) *corev1.Secret {
	t.Helper()
	return util.WaitForAddOnSecret(t, b.spoke, addOn, timeout, "credentials of hub "+hub.Name, func(s *corev1.Secret) bool {
		return util.KubeconfigServer(s.Data[registration.KubeconfigKey]) == hub.URL() &&
			s.Annotations[registration.IssuingHubAnnotation] == issuingName(b, hub)
	})
}

// waitCustomSecret waits until hello's custom signer Secret carries the issuing-hub annotation issuer.
func waitCustomSecret(t *testing.T, b *bed, issuer string) *corev1.Secret {
	t.Helper()
	name := registration.SecretNameFor(helloAddOn, helloSigner)
	var s *corev1.Secret
	framework.Eventually(t, addOnTimeout, 100*time.Millisecond, func() (bool, error) {
		var err error
		s, err = b.spoke.Kube.CoreV1().Secrets(registration.DefaultInstallNamespace).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && s.Annotations[registration.IssuingHubAnnotation] == issuer, err
	}, "custom signer Secret %s issued by hub %s", name, issuer)
	return s
}

func issuingName(b *bed, hub *framework.Hub) string {
	if hub == b.hubA {
		return primary
	}
	return hubB
}

func waitAvailable(t *testing.T, c addonclientset.Interface, name string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	framework.Eventually(t, statusTimeout, 200*time.Millisecond, func() (bool, error) {
		cond := meta.FindStatusCondition(getAddOn(t, c, name).Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
		return cond != nil && cond.Status == status && cond.Reason == reason, nil
	}, "ManagedClusterAddOn %s Available=%s (%s)", name, status, reason)
}

// recordSecretVersions watches one Secret and returns a function giving the data of every version seen.
func recordSecretVersions(t *testing.T, ctx context.Context, client kubernetes.Interface, ns, name string) func() []map[string][]byte {
	t.Helper()
	w, err := client.CoreV1().Secrets(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan []map[string][]byte, 1)
	go func() {
		var seen []map[string][]byte
		for ev := range w.ResultChan() {
			if s, ok := ev.Object.(*corev1.Secret); ok {
				seen = append(seen, s.Data)
			}
		}
		out <- seen
	}()
	return func() []map[string][]byte {
		w.Stop()
		return <-out
	}
}

func certMatches(data map[string][]byte) bool {
	return clientcert.CertificateMatchesKey(data[registration.TLSCertKey], data[registration.TLSKeyKey])
}

// TestAddOnCertificateRotation: with 2-minute certificates (lifetime 7 min with the signer's 5-minute backdate)
// the add-on's certificate is renewed when 20–25 % of its lifetime remains, through OCM's add-on manager, in one
// write: every version of the Secret holds a matching key pair for hub A, and the renewed one authenticates as the
// add-on. The agent's own certificate rotates in the same window, which restarts the add-on controllers.
func TestAddOnCertificateRotation(t *testing.T) {
	const rotationTimeout = 90 * time.Second
	b := newBed(t, bedOptions{noHubB: true, noFailoverConfig: true,
		hubA:        framework.HubOptions{AddonManager: true, CertificateDuration: 2 * time.Minute},
		beforeAgent: func(b *bed) { util.CreateSpokeNamespaces(t, b.spoke, registration.DefaultInstallNamespace) },
	})
	util.CreateTemplateAddOn(t, util.AddOnClient(t, b.hubA), clusterName, helloAddOn)
	first := util.WaitForAddOnSecret(t, b.spoke, helloAddOn, addOnTimeout, "issued", func(s *corev1.Secret) bool {
		return len(s.Data[registration.TLSCertKey]) > 0
	})
	leaf, err := clientcert.ParseLeafCertificate(first.Data[registration.TLSCertKey])
	if err != nil {
		t.Fatal(err)
	}
	watchCtx, stopWatch := context.WithCancel(context.Background())
	versions := recordSecretVersions(t, watchCtx, b.spoke.Kube, registration.DefaultInstallNamespace, first.Name)
	renewed := util.WaitForAddOnSecret(t, b.spoke, helloAddOn, rotationTimeout, "renewed", func(s *corev1.Secret) bool {
		return string(s.Data[registration.TLSCertKey]) != string(first.Data[registration.TLSCertKey])
	})
	seen := time.Now()
	stopWatch()
	lifetime := leaf.NotAfter.Sub(leaf.NotBefore)
	left := float64(leaf.NotAfter.Sub(seen)) / float64(lifetime)
	t.Logf("add-on certificate (lifetime %s) renewed with %.1f %% of its lifetime left", lifetime.Round(time.Second), 100*left)
	// Seen at most a few seconds after the renewal, which is due at 20–25 % left.
	if left > 0.25 || left < 0.18 {
		t.Errorf("renewed with %.1f %% of the lifetime left, want 20–25 %%", 100*left)
	}
	for i, v := range versions() {
		if !certMatches(v) || util.KubeconfigServer(v[registration.KubeconfigKey]) != b.hubA.URL() {
			t.Errorf("Secret version %d: key pair matches %v, server %q", i, certMatches(v), util.KubeconfigServer(v[registration.KubeconfigKey]))
		}
	}
	util.ExpectTemplateAddOnIdentity(t, renewed, clusterName, helloAddOn)
	b.expectNotExited(t)
}
