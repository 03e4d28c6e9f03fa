package registration

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clocktesting "k8s.io/utils/clock/testing"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonfake "open-cluster-management.io/api/client/addon/clientset/versioned/fake"
	addoninformers "open-cluster-management.io/api/client/addon/informers/externalversions"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/backoff"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	clientcerttesting "github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert/testing"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/internal/synctesting"
)

const (
	testCluster = "cluster1"
	testAgent   = "agent1"
	testHub     = "hub-a"
	testNS      = "addon-ns"
	customSign  = "example.com/signer"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

type harness struct {
	t        *testing.T
	c        *AddOnRegistrationController
	hubKube  *kubefake.Clientset
	hubAddOn *addonfake.Clientset
	spoke    *kubefake.Clientset
	hosting  *kubefake.Clientset
	addOnInf addoninformers.SharedInformerFactory
	csrInf   informers.SharedInformerFactory
	secInf   informers.SharedInformerFactory
	hostInf  informers.SharedInformerFactory
	clock    *clocktesting.FakeClock
	recorder events.InMemoryRecorder
	ca       *clientcerttesting.CA
	hub      clientcert.HubInfo
	csrSeq   int
}

func newHarness(t *testing.T, addOns []*addonv1alpha1.ManagedClusterAddOn, secrets []*corev1.Secret) *harness {
	t.Helper()
	return newHarnessWith(t, addOns, secrets, false)
}

// newHarnessWith is newHarness; sameCluster makes the hosting cluster the managed one, through a second typed
// informer of the same factory, as the agent wires it when not hosted.
func newHarnessWith(t *testing.T, addOns []*addonv1alpha1.ManagedClusterAddOn, secrets []*corev1.Secret, sameCluster bool) *harness {
	t.Helper()
	ca, err := clientcerttesting.NewCA("hub-ca")
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, ca: ca, clock: clocktesting.NewFakeClock(t0), recorder: events.NewInMemoryRecorder("test", clocktesting.NewFakeClock(t0)),
		hub: clientcert.HubInfo{Server: "https://hub-a.example:6443", CAData: ca.CertPEM}}
	var addOnObjs []runtime.Object
	for _, a := range addOns {
		addOnObjs = append(addOnObjs, a)
	}
	var secretObjs []runtime.Object
	for _, s := range secrets {
		secretObjs = append(secretObjs, s)
	}
	h.hubAddOn = addonfake.NewSimpleClientset(addOnObjs...)
	h.hubKube = kubefake.NewClientset()
	h.hubKube.PrependReactor("create", "certificatesigningrequests", func(action clienttesting.Action) (bool, runtime.Object, error) {
		csr := action.(clienttesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
		if csr.Name == "" {
			h.csrSeq++
			csr.Name = fmt.Sprintf("%s%d", csr.GenerateName, h.csrSeq)
		}
		return false, nil, nil
	})
	h.spoke = kubefake.NewClientset(secretObjs...)
	h.hosting = kubefake.NewClientset()
	h.addOnInf = addoninformers.NewSharedInformerFactory(h.hubAddOn, 0)
	h.csrInf = informers.NewSharedInformerFactory(h.hubKube, 0)
	h.secInf = informers.NewSharedInformerFactory(h.spoke, 0)
	h.hostInf = informers.NewSharedInformerFactory(h.hosting, 0)
	for _, a := range addOns {
		_ = h.addOnInf.Addon().V1alpha1().ManagedClusterAddOns().Informer().GetStore().Add(a)
	}
	for _, s := range secrets {
		_ = h.secInf.Core().V1().Secrets().Informer().GetStore().Add(s)
	}
	hostingSecrets, hostingInformer := h.hosting.CoreV1(), h.hostInf.Core().V1().Secrets()
	if sameCluster {
		h.hosting = h.spoke
		hostingSecrets, hostingInformer = h.spoke.CoreV1(), h.secInf.Core().V1().Secrets()
	}
	h.c, err = NewAddOnRegistrationController(Options{
		ClusterName: testCluster, AgentName: testAgent, HubName: testHub, Hub: h.hub,
		HubAddOnInformer: h.addOnInf.Addon().V1alpha1().ManagedClusterAddOns(), HubAddOnClient: h.hubAddOn.AddonV1alpha1(),
		HubCSRs: h.hubKube.CertificatesV1().CertificateSigningRequests(), HubCSRInformer: h.csrInf.Certificates().V1().CertificateSigningRequests(),
		SpokeSecrets: h.spoke.CoreV1(), SpokeSecretInformer: h.secInf.Core().V1().Secrets(),
		HostingSecrets: hostingSecrets, HostingSecretInformer: hostingInformer,
		RetryBackoff: backoff.Backoff{Base: 30 * time.Second, Max: time.Minute},
		Clock:        h.clock, Jitter: func() float64 { return 0.5 }, Recorder: h.recorder,
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// sync runs one sync of key and returns its sync context (what it queued, the events).
func (h *harness) sync(key string) (*synctesting.SyncContext, error) {
	h.t.Helper()
	sc := synctesting.New(key, h.recorder)
	err := h.c.sync(context.Background(), sc)
	return sc, err
}

func (h *harness) mustSync(key string) *synctesting.SyncContext {
	h.t.Helper()
	q, err := h.sync(key)
	if err != nil {
		h.t.Fatalf("sync %s: %v", key, err)
	}
	return q
}

// csrs returns the CSRs on the hub.
func (h *harness) csrs() []certificatesv1.CertificateSigningRequest {
	list, err := h.hubKube.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return list.Items
}

// approveAll signs every CSR on the hub (valid t0-1m … t0+lifetime) and puts it into the informer.
func (h *harness) approveAll(lifetime time.Duration) {
	h.t.Helper()
	for _, csr := range h.csrs() {
		signed, err := clientcerttesting.ApproveAndSign(h.ca, &csr, h.clock.Now().Add(-time.Minute), h.clock.Now().Add(lifetime))
		if err != nil {
			h.t.Fatal(err)
		}
		if _, err := h.hubKube.CertificatesV1().CertificateSigningRequests().UpdateStatus(context.Background(), signed, metav1.UpdateOptions{}); err != nil {
			h.t.Fatal(err)
		}
		_ = h.csrInf.Certificates().V1().CertificateSigningRequests().Informer().GetStore().Update(signed)
	}
}

func (h *harness) secret(client *kubefake.Clientset, ns, name string) *corev1.Secret {
	h.t.Helper()
	s, err := client.CoreV1().Secrets(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return s
}

func (h *harness) reasons() []string {
	var out []string
	for _, e := range h.recorder.Events() {
		out = append(out, e.Reason)
	}
	return out
}

// writes returns the verbs and resources of the non-read actions of client.
func writes(actions []clienttesting.Action) []string {
	var out []string
	for _, a := range actions {
		switch a.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		out = append(out, a.GetVerb()+" "+a.GetResource().Resource+sub(a.GetSubresource()))
	}
	return out
}

func sub(s string) string {
	if s == "" {
		return ""
	}
	return "/" + s
}

func newAddOn(name string, regs ...addonv1alpha1.RegistrationConfig) *addonv1alpha1.ManagedClusterAddOn {
	a := &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: testCluster, Name: name, ResourceVersion: "1", UID: "uid-" + "name"},
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: testNS},
		Status:     addonv1alpha1.ManagedClusterAddOnStatus{Registrations: regs},
	}
	for _, r := range regs {
		if r.SignerName == KubeClientSigner {
			a.Status.KubeClientDriver = KubeClientDriverCSR
		}
	}
	return a
}

var kubeClientReg = addonv1alpha1.RegistrationConfig{SignerName: KubeClientSigner}

func parseCSR(t *testing.T, csr certificatesv1.CertificateSigningRequest) *x509.CertificateRequest {
	t.Helper()
	block, _ := pem.Decode(csr.Spec.Request)
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestKubeClientRegistrationIssuesSecret: a kube-apiserver-client registration gets one CSR with OCM's metadata
// and default subject; once signed, the Secret is created whole (OCM's keys, kubeconfig for the hub) in one write.
func TestKubeClientRegistrationIssuesSecret(t *testing.T) {
	h := newHarness(t, []*addonv1alpha1.ManagedClusterAddOn{newAddOn("hello", kubeClientReg)}, nil)
	var reported [][]failoverv1alpha1.AddOnRegistrationStatus
	h.c.o.OnStatus = func(l []failoverv1alpha1.AddOnRegistrationStatus) { reported = append(reported, l) }
	h.mustSync("hello")
	csrs := h.csrs()
	if len(csrs) != 1 {
		t.Fatalf("CSRs after the first sync: %d, want 1", len(csrs))
	}
	csr := csrs[0]
	wantLabels := map[string]string{clusterv1.ClusterNameLabelKey: testCluster, addonv1alpha1.AddonLabelKey: "hello"}
	if diff := cmp.Diff(wantLabels, csr.Labels); diff != "" {
		t.Errorf("CSR labels (-want +got):\n%s", diff)
	}
	if csr.GenerateName != "addon-cluster1-hello-" || csr.Spec.SignerName != KubeClientSigner {
		t.Errorf("CSR generateName %q signer %q", csr.GenerateName, csr.Spec.SignerName)
	}
	req := parseCSR(t, csr)
	if req.Subject.CommonName != "system:open-cluster-management:cluster:cluster1:addon:hello:agent:agent1" ||
		!slices.Equal(req.Subject.Organization, []string{"system:open-cluster-management:cluster:cluster1:addon:hello"}) ||
		!slices.Equal(req.DNSNames, []string{"hello.addon.open-cluster-management.io"}) {
		t.Errorf("CSR subject %+v DNS %v", req.Subject, req.DNSNames)
	}
	// A second sync before approval creates nothing more.
	h.mustSync("hello")
	if n := len(h.csrs()); n != 1 {
		t.Errorf("CSRs after a sync while pending: %d, want 1", n)
	}
	if h.secret(h.spoke, testNS, "hello-hub-kubeconfig") != nil {
		t.Fatal("Secret written before the CSR was issued")
	}

	h.approveAll(time.Hour)
	h.spoke.ClearActions()
	q := h.mustSync("hello")
	if diff := cmp.Diff([]string{"create secrets"}, writes(h.spoke.Actions())); diff != "" {
		t.Errorf("spoke writes (-want +got):\n%s", diff)
	}
	s := h.secret(h.spoke, testNS, "hello-hub-kubeconfig")
	if s == nil {
		t.Fatal("Secret hello-hub-kubeconfig not written")
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range s.Data {
			if !yield(k) {
				return
			}
		}
	})
	if diff := cmp.Diff([]string{"cluster-name", "kubeconfig", "tls.crt", "tls.key"}, keys); diff != "" {
		t.Errorf("Secret keys (-want +got):\n%s", diff)
	}
	if s.Labels[AddOnNameLabel] != "hello" || s.Annotations[IssuingHubAnnotation] != testHub {
		t.Errorf("Secret metadata labels %v annotations %v", s.Labels, s.Annotations)
	}
	if !clientcert.CertificateMatchesKey(s.Data[TLSCertKey], s.Data[TLSKeyKey]) {
		t.Error("tls.crt does not match tls.key")
	}
	kc, err := clientcmd.Load(s.Data[KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	ctx := kc.Contexts[kc.CurrentContext]
	if kc.Clusters[ctx.Cluster].Server != h.hub.Server || ctx.Namespace != "configuration" ||
		kc.AuthInfos[ctx.AuthInfo].ClientCertificate != "tls.crt" || kc.AuthInfos[ctx.AuthInfo].ClientKey != "tls.key" {
		t.Errorf("kubeconfig: server %q namespace %q user %+v", kc.Clusters[ctx.Cluster].Server, ctx.Namespace, kc.AuthInfos[ctx.AuthInfo])
	}
	// Rotation is scheduled at 20–25 % remaining (jitter 0.5: 22.5 %) of the 61-minute lifetime.
	lifetime := 61 * time.Minute
	want := time.Hour - time.Duration(float64(lifetime)*0.225)
	if got := q.After("hello"); got < want-time.Second || got > want+time.Second {
		t.Errorf("requeue after %v, want about %v", got, want)
	}
	addOn, _ := h.hubAddOn.AddonV1alpha1().ManagedClusterAddOns(testCluster).Get(context.Background(), "hello", metav1.GetOptions{})
	if c := meta.FindStatusCondition(addOn.Status.Conditions, ConditionClientCertificateRotated); c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonClientCertificateUpdated {
		t.Errorf("ClusterCertificateRotated = %+v, want True/%s", c, ReasonClientCertificateUpdated)
	}
	if !slices.Contains(h.reasons(), ReasonAddOnCredentialsIssued) {
		t.Errorf("events %v lack %s", h.reasons(), ReasonAddOnCredentialsIssued)
	}
	// States reported: Pending once (the second sync changed nothing), then Registered by this hub.
	var states []string
	for _, l := range reported {
		if len(l) != 1 || l[0].Name != "hello" || l[0].Secret != testNS+"/hello-hub-kubeconfig" {
			t.Fatalf("reported %+v, want one entry for hello's Secret", l)
		}
		states = append(states, string(l[0].State)+"/"+l[0].IssuingHub)
	}
	if diff := cmp.Diff([]string{"Pending/", "Registered/" + testHub}, states); diff != "" {
		t.Errorf("reported states (-want +got):\n%s", diff)
	}
	if last := reported[len(reported)-1][0]; last.NotAfter == nil || !last.NotAfter.Time.Equal(t0.Add(time.Hour)) {
		t.Errorf("reported notAfter %v, want %v", last.NotAfter, t0.Add(time.Hour))
	}
}

// issued runs a registration to a written Secret and returns the harness.
func issued(t *testing.T, addOn *addonv1alpha1.ManagedClusterAddOn, lifetime time.Duration) *harness {
	t.Helper()
	h := newHarness(t, []*addonv1alpha1.ManagedClusterAddOn{addOn}, nil)
	h.mustSync(addOn.Name)
	h.approveAll(lifetime)
	h.mustSync(addOn.Name)
	return h
}

// TestValidSecretKeptUntilRotation: a valid Secret causes no CSR and no write until the rotation deadline, then a
// CSR with the old Secret left intact until the new certificate is issued.
func TestValidSecretKeptUntilRotation(t *testing.T) {
	h := issued(t, newAddOn("hello", kubeClientReg), time.Hour)
	before := h.secret(h.spoke, testNS, "hello-hub-kubeconfig")
	h.spoke.ClearActions()
	h.hubKube.ClearActions()
	h.hubAddOn.ClearActions()
	h.clock.Step(30 * time.Minute)
	h.mustSync("hello")
	if w := append(append(writes(h.spoke.Actions()), writes(h.hubKube.Actions())...), writes(h.hubAddOn.Actions())...); len(w) != 0 {
		t.Errorf("writes while valid: %v, want none", w)
	}
	h.clock.Step(20 * time.Minute) // 50 of 61 minutes: 18 % remains
	h.mustSync("hello")
	if n := len(h.csrs()); n != 2 {
		t.Fatalf("CSRs after the rotation deadline: %d, want 2", n)
	}
	if after := h.secret(h.spoke, testNS, "hello-hub-kubeconfig"); !cmp.Equal(before.Data, after.Data) {
		t.Error("Secret changed before the new certificate was issued")
	}
}

// TestHubChangeReissues: a Secret holding another hub's kubeconfig and issuer (after a failover) gets a new CSR
// and is then rewritten whole with the active hub's kubeconfig and certificate.
func TestHubChangeReissues(t *testing.T) {
	h := issued(t, newAddOn("hello", kubeClientReg), time.Hour)
	// Pretend the Secret came from hub-b: other server in the kubeconfig, other issuer.
	s := h.secret(h.spoke, testNS, "hello-hub-kubeconfig")
	other, _ := BuildAddOnKubeconfig(clientcert.HubInfo{Server: "https://hub-b.example:6443", CAData: h.ca.CertPEM})
	s.Data[KubeconfigKey] = other
	s.Annotations[IssuingHubAnnotation] = "hub-b"
	if _, err := h.spoke.CoreV1().Secrets(testNS).Update(context.Background(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	oldCert := s.Data[TLSCertKey]
	h.mustSync("hello")
	if n := len(h.csrs()); n != 2 {
		t.Fatalf("CSRs after the hub change: %d, want 2", n)
	}
	h.approveAll(time.Hour)
	h.spoke.ClearActions()
	h.mustSync("hello")
	if diff := cmp.Diff([]string{"update secrets"}, writes(h.spoke.Actions())); diff != "" {
		t.Errorf("spoke writes (-want +got):\n%s", diff)
	}
	s = h.secret(h.spoke, testNS, "hello-hub-kubeconfig")
	if string(s.Data[TLSCertKey]) == string(oldCert) || s.Annotations[IssuingHubAnnotation] != testHub ||
		KubeconfigServer(t, s.Data[KubeconfigKey]) != h.hub.Server || !clientcert.CertificateMatchesKey(s.Data[TLSCertKey], s.Data[TLSKeyKey]) {
		t.Errorf("Secret after re-issue: issuer %q server %q", s.Annotations[IssuingHubAnnotation], KubeconfigServer(t, s.Data[KubeconfigKey]))
	}
}

// KubeconfigServer returns the server of a kubeconfig's current context.
func KubeconfigServer(t *testing.T, data []byte) string {
	t.Helper()
	kc, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	return kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster].Server
}

// TestCustomSignerRegistration: a custom signer's Secret is "<addon>-<signer>-client-cert", has no kubeconfig, and
// the CSR carries the registration's subject without a default O.
func TestCustomSignerRegistration(t *testing.T) {
	reg := addonv1alpha1.RegistrationConfig{SignerName: customSign, Subject: addonv1alpha1.Subject{User: "custom-user", OrganizationUnits: []string{"ou1"}}}
	h := issued(t, newAddOn("hello", reg), time.Hour)
	req := parseCSR(t, h.csrs()[0])
	if req.Subject.CommonName != "custom-user" || len(req.Subject.Organization) != 0 || !slices.Equal(req.Subject.OrganizationalUnit, []string{"ou1"}) {
		t.Errorf("CSR subject %+v", req.Subject)
	}
	if h.csrs()[0].Spec.SignerName != customSign {
		t.Errorf("CSR signer %q", h.csrs()[0].Spec.SignerName)
	}
	s := h.secret(h.spoke, testNS, "hello-example.com-signer-client-cert")
	if s == nil {
		t.Fatal("Secret hello-example.com-signer-client-cert not written")
	}
	if _, ok := s.Data[KubeconfigKey]; ok {
		t.Error("custom signer Secret has a kubeconfig key")
	}
	addOn, _ := h.hubAddOn.AddonV1alpha1().ManagedClusterAddOns(testCluster).Get(context.Background(), "hello", metav1.GetOptions{})
	if addOn.Status.KubeClientDriver != "" {
		t.Errorf("kubeClientDriver %q for an add-on without kube-apiserver-client registration", addOn.Status.KubeClientDriver)
	}
}

// TestDeniedCSRBacksOff: a denied CSR is reported and the next one waits for the back-off.
func TestDeniedCSRBacksOff(t *testing.T) {
	h := newHarness(t, []*addonv1alpha1.ManagedClusterAddOn{newAddOn("hello", kubeClientReg)}, nil)
	h.mustSync("hello")
	denied := clientcerttesting.Deny(&h.csrs()[0])
	_ = h.csrInf.Certificates().V1().CertificateSigningRequests().Informer().GetStore().Add(denied)
	q := h.mustSync("hello")
	if !slices.Contains(h.reasons(), ReasonAddOnCSRFailed) {
		t.Errorf("events %v lack %s", h.reasons(), ReasonAddOnCSRFailed)
	}
	if got := q.After("hello"); got != 30*time.Second {
		t.Errorf("requeue after %v, want the 30s back-off", got)
	}
	h.clock.Step(10 * time.Second)
	h.mustSync("hello")
	if n := len(h.csrs()); n != 1 {
		t.Errorf("CSRs during back-off: %d, want 1", n)
	}
	h.clock.Step(21 * time.Second)
	h.mustSync("hello")
	if n := len(h.csrs()); n != 2 {
		t.Errorf("CSRs after back-off: %d, want 2", n)
	}
	addOn, _ := h.hubAddOn.AddonV1alpha1().ManagedClusterAddOns(testCluster).Get(context.Background(), "hello", metav1.GetOptions{})
	if c := meta.FindStatusCondition(addOn.Status.Conditions, ConditionClientCertificateRotated); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("ClusterCertificateRotated = %+v, want False", c)
	}
}

// TestCleanup: removing a registration or the add-on deletes the Secret the controller wrote; a deleting add-on,
// and a Secret another hub issued, are left alone.
func TestCleanup(t *testing.T) {
	cases := []struct {
		name     string
		mutate   func(h *harness)
		deleted  bool
		wantCSRs int
	}{
		{"add-on removed", func(h *harness) {
			_ = h.addOnInf.Addon().V1alpha1().ManagedClusterAddOns().Informer().GetStore().Delete(newAddOn("hello"))
		}, true, 1},
		{"registration removed", func(h *harness) {
			_ = h.addOnInf.Addon().V1alpha1().ManagedClusterAddOns().Informer().GetStore().Update(newAddOn("hello"))
		}, true, 1},
		{"subject changed: same Secret, kept until re-issued", func(h *harness) {
			_ = h.addOnInf.Addon().V1alpha1().ManagedClusterAddOns().Informer().GetStore().Update(newAddOn("hello",
				addonv1alpha1.RegistrationConfig{SignerName: KubeClientSigner, Subject: addonv1alpha1.Subject{User: "other"}}))
		}, false, 2},
		{"add-on removed after a switch, Secret still another hub's: kept", func(h *harness) {
			secret := h.secret(h.spoke, testNS, "hello-hub-kubeconfig")
			secret.Annotations[IssuingHubAnnotation] = "hub-b"
			if _, err := h.spoke.CoreV1().Secrets(testNS).Update(context.Background(), secret, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			_ = h.addOnInf.Addon().V1alpha1().ManagedClusterAddOns().Informer().GetStore().Delete(newAddOn("hello"))
		}, false, 1},
		{"add-on deleting", func(h *harness) {
			a := newAddOn("hello", kubeClientReg)
			now := metav1.NewTime(t0)
			a.DeletionTimestamp = &now
			_ = h.addOnInf.Addon().V1alpha1().ManagedClusterAddOns().Informer().GetStore().Update(a)
		}, false, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := issued(t, newAddOn("hello", kubeClientReg), time.Hour)
			tc.mutate(h)
			h.mustSync("hello")
			gone := h.secret(h.spoke, testNS, "hello-hub-kubeconfig") == nil
			if gone != tc.deleted {
				t.Errorf("Secret deleted = %v, want %v", gone, tc.deleted)
			}
			if n := len(h.csrs()); n != tc.wantCSRs {
				t.Errorf("CSRs: %d, want %d", n, tc.wantCSRs)
			}
		})
	}
}

// TestStartupScan: Secrets issued by this hub whose add-on is gone are deleted; those of another hub are kept
// untouched and reported with AddOnNotOnHub.
func TestStartupScan(t *testing.T) {
	mk := func(name, issuer string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: name + "-hub-kubeconfig",
			Labels: map[string]string{AddOnNameLabel: name}, Annotations: map[string]string{IssuingHubAnnotation: issuer}},
			Data: map[string][]byte{TLSCertKey: []byte("x")}}
	}
	// The agent on the managed cluster: the "hosting" informer is the spoke's, each Secret is seen once.
	h := newHarnessWith(t, nil, []*corev1.Secret{mk("ours", testHub), mk("theirs", "hub-b")}, true)
	var reported []failoverv1alpha1.AddOnRegistrationStatus
	h.c.o.OnStatus = func(l []failoverv1alpha1.AddOnRegistrationStatus) { reported = l }
	h.mustSync(factory.DefaultQueueKey)
	if len(reported) != 1 || reported[0].Name != "theirs" || reported[0].State != failoverv1alpha1.AddOnRegistrationNotOnHub || reported[0].IssuingHub != "hub-b" {
		t.Errorf("reported %+v, want theirs NotOnHub issued by hub-b", reported)
	}
	if h.secret(h.spoke, testNS, "ours-hub-kubeconfig") != nil {
		t.Error("Secret of this hub's removed add-on kept")
	}
	if s := h.secret(h.spoke, testNS, "theirs-hub-kubeconfig"); s == nil || string(s.Data[TLSCertKey]) != "x" {
		t.Error("Secret issued by hub-b was changed or deleted")
	}
	var msgs []string
	for _, e := range h.recorder.Events() {
		if e.Reason == ReasonAddOnNotOnHub {
			msgs = append(msgs, e.Message)
		}
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], "theirs") || !strings.Contains(msgs[0], "hub-b") || strings.Count(msgs[0], "theirs (") != 1 {
		t.Errorf("AddOnNotOnHub events %q, want one naming theirs and hub-b", msgs)
	}
	// The scan runs once per run.
	h.mustSync(factory.DefaultQueueKey)
	n := 0
	for _, e := range h.recorder.Events() {
		if e.Reason == ReasonAddOnNotOnHub {
			n++
		}
	}
	if n != 1 {
		t.Errorf("AddOnNotOnHub events after a second resync: %d, want 1", n)
	}
}

// TestKubeClientDriver: the agent declares the csr driver for a kube-apiserver-client registration, one patch.
func TestKubeClientDriver(t *testing.T) {
	a := newAddOn("hello", kubeClientReg)
	a.Status.KubeClientDriver = ""
	h := newHarness(t, []*addonv1alpha1.ManagedClusterAddOn{a}, nil)
	h.mustSync("hello")
	if diff := cmp.Diff([]string{"patch managedclusteraddons/status"}, writes(h.hubAddOn.Actions())); diff != "" {
		t.Errorf("hub add-on writes (-want +got):\n%s", diff)
	}
	got, _ := h.hubAddOn.AddonV1alpha1().ManagedClusterAddOns(testCluster).Get(context.Background(), "hello", metav1.GetOptions{})
	if got.Status.KubeClientDriver != KubeClientDriverCSR {
		t.Errorf("kubeClientDriver %q, want csr", got.Status.KubeClientDriver)
	}
	if n := len(h.csrs()); n != 0 {
		t.Errorf("CSRs in the sync that patched the driver: %d, want 0 (next sync)", n)
	}
}

// TestHostedAddOnUsesHostingCluster: an add-on with the hosting-cluster-name annotation gets its Secret on the
// cluster hosting the agent.
func TestHostedAddOnUsesHostingCluster(t *testing.T) {
	a := newAddOn("hello", kubeClientReg)
	a.Annotations = map[string]string{addonv1alpha1.HostingClusterNameAnnotationKey: "hosting"}
	h := issued(t, a, time.Hour)
	if h.secret(h.hosting, testNS, "hello-hub-kubeconfig") == nil {
		t.Error("Secret not on the hosting cluster")
	}
	if h.secret(h.spoke, testNS, "hello-hub-kubeconfig") != nil {
		t.Error("Secret on the managed cluster")
	}
}

// TestCSRCreationHalts: with AddOnCSRThreshold pending CSRs of the add-on on the hub, no new one is created.
func TestCSRCreationHalts(t *testing.T) {
	h := newHarness(t, []*addonv1alpha1.ManagedClusterAddOn{newAddOn("hello", kubeClientReg)}, nil)
	for i := range AddOnCSRThreshold {
		_ = h.csrInf.Certificates().V1().CertificateSigningRequests().Informer().GetStore().Add(&certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("old-%d", i), Labels: map[string]string{clusterv1.ClusterNameLabelKey: testCluster, AddOnNameLabel: "hello"}}})
	}
	h.mustSync("hello")
	if n := len(h.csrs()); n != 0 {
		t.Errorf("CSRs created: %d, want 0", n)
	}
	if !slices.Contains(h.reasons(), ReasonAddOnCSRCreationHalted) {
		t.Errorf("events %v lack %s", h.reasons(), ReasonAddOnCSRCreationHalted)
	}
}

// TestMissingInstallNamespace: an issued certificate whose install namespace does not exist yet is kept and the
// write retried soon, without a new CSR.
func TestMissingInstallNamespace(t *testing.T) {
	h := newHarness(t, []*addonv1alpha1.ManagedClusterAddOn{newAddOn("hello", kubeClientReg)}, nil)
	missing := true
	h.spoke.PrependReactor("create", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		if missing {
			return true, nil, apierrors.NewNotFound(corev1.Resource("namespaces"), testNS)
		}
		return false, nil, nil
	})
	h.mustSync("hello")
	h.approveAll(time.Hour)
	q := h.mustSync("hello")
	if got := q.After("hello"); got != namespaceRecheck {
		t.Errorf("requeue after %v, want %v", got, namespaceRecheck)
	}
	missing = false
	h.mustSync("hello")
	if h.secret(h.spoke, testNS, "hello-hub-kubeconfig") == nil {
		t.Fatal("Secret not written once the namespace exists")
	}
	if n := len(h.csrs()); n != 1 {
		t.Errorf("CSRs: %d, want 1 (the issued certificate is kept)", n)
	}
}

// TestRewrittenSubjectBacksOff: a signer that issues another subject than the registration's is a failed CSR
// (back-off, nothing written), not a certificate stored and replaced at once by the next sync.
func TestRewrittenSubjectBacksOff(t *testing.T) {
	h := newHarness(t, []*addonv1alpha1.ManagedClusterAddOn{newAddOn("hello", kubeClientReg)}, nil)
	h.mustSync("hello")
	csr := h.csrs()[0]
	req := parseCSR(t, csr)
	certPEM, err := h.ca.Sign(pkix.Name{CommonName: "rewritten-by-the-signer"}, req.PublicKey, h.clock.Now().Add(-time.Minute), h.clock.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	signed := clientcerttesting.Approve(&csr, certPEM)
	_ = h.csrInf.Certificates().V1().CertificateSigningRequests().Informer().GetStore().Update(signed)
	q := h.mustSync("hello")
	if h.secret(h.spoke, testNS, "hello-hub-kubeconfig") != nil {
		t.Error("a certificate with a rewritten subject was stored")
	}
	if got := q.After("hello"); got != 30*time.Second {
		t.Errorf("requeue after %v, want the 30s back-off", got)
	}
	for range 3 {
		h.mustSync("hello")
	}
	if n := len(h.csrs()); n != 1 {
		t.Errorf("%d CSRs during the back-off, want 1", n)
	}
}
