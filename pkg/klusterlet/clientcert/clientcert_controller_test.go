package clientcert_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/backoff"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	clientcerttesting "github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert/testing"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/internal/synctesting"
)

const (
	agentNamespace = "open-cluster-management-agent"
	secretName     = "hub-kubeconfig-secret"
	backoffBase    = 30 * time.Second
)

type harness struct {
	t           *testing.T
	c           *clientcert.ClientCertForHubController
	spoke, hub  *kubefake.Clientset
	secretStore cache.Store
	csrStore    cache.Store
	clock       *clocktesting.FakeClock
	recorder    events.InMemoryRecorder
	syncCtx     *synctesting.SyncContext
	hubInfo     clientcert.HubInfo
	clientCA    *clientcerttesting.CA
	jitterCalls int
}

// newHarness builds a controller for cluster1/abcde against hub (a default hub if zero), with secret (if not nil)
// in both the spoke API and the lister; mutate, if given, changes the options before the controller is built.
func newHarness(t *testing.T, hub clientcert.HubInfo, secret *corev1.Secret, mutate ...func(*clientcert.ControllerOptions)) *harness {
	t.Helper()
	h := &harness{t: t, clock: clocktesting.NewFakeClock(testNow), clientCA: mustCA(t, "hub-client-ca")}
	h.hubInfo = hub
	if h.hubInfo.Server == "" {
		h.hubInfo = clientcert.HubInfo{Server: "https://hub.example.com:6443", CAData: mustCA(t, "hub-serving-ca").CertPEM}
	}
	var spokeObjects []runtime.Object
	if secret != nil {
		spokeObjects = append(spokeObjects, secret)
	}
	h.spoke = kubefake.NewClientset(spokeObjects...)
	h.hub = kubefake.NewClientset()
	generated := 0
	h.hub.PrependReactor("create", "certificatesigningrequests", func(action clienttesting.Action) (bool, runtime.Object, error) {
		csr := action.(clienttesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
		if csr.Name == "" && csr.GenerateName != "" {
			generated++
			csr.Name = fmt.Sprintf("%s%05d", csr.GenerateName, generated)
		}
		return false, nil, nil
	})
	secretInformer := informers.NewSharedInformerFactory(h.spoke, 0).Core().V1().Secrets()
	csrInformer := informers.NewSharedInformerFactory(h.hub, 0).Certificates().V1().CertificateSigningRequests()
	h.secretStore = secretInformer.Informer().GetStore()
	h.csrStore = csrInformer.Informer().GetStore()
	if secret != nil {
		if err := h.secretStore.Add(secret); err != nil {
			t.Fatal(err)
		}
	}
	h.recorder = events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(testNow))
	h.syncCtx = synctesting.New(factory.DefaultQueueKey, h.recorder)
	opts := clientcert.ControllerOptions{
		ClusterName:         testCluster,
		AgentName:           testAgent,
		Namespace:           agentNamespace,
		SecretName:          secretName,
		Hub:                 h.hubInfo,
		SpokeSecrets:        h.spoke.CoreV1(),
		SpokeSecretInformer: secretInformer,
		HubCSRs:             h.hub.CertificatesV1().CertificateSigningRequests(),
		HubCSRInformer:      csrInformer,
		Clock:               h.clock,
		Jitter:              func() float64 { h.jitterCalls++; return 0 },
		RetryBackoff:        backoff.Backoff{Base: backoffBase, Max: 4 * backoffBase},
		Recorder:            h.recorder,
	}
	for _, m := range mutate {
		m(&opts)
	}
	c, err := clientcert.NewClientCertForHubController(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	return h
}

func (h *harness) sync() error {
	h.t.Helper()
	return h.c.Sync(context.Background(), h.syncCtx)
}

func (h *harness) mustSync() {
	h.t.Helper()
	if err := h.sync(); err != nil {
		h.t.Fatalf("sync: %v", err)
	}
}

// csrs lists the CSRs on the hub.
func (h *harness) csrs() []certificatesv1.CertificateSigningRequest {
	h.t.Helper()
	list, err := h.hub.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b certificatesv1.CertificateSigningRequest) int { return strings.Compare(a.Name, b.Name) })
	return list.Items
}

// csrCreates counts create calls for CSRs (successful or not).
func (h *harness) csrCreates() int {
	n := 0
	for _, a := range h.hub.Actions() {
		if a.Matches("create", "certificatesigningrequests") {
			n++
		}
	}
	return n
}

// secretWrites returns the spoke create/update actions on Secrets.
func (h *harness) secretWrites() []clienttesting.Action {
	var out []clienttesting.Action
	for _, a := range h.spoke.Actions() {
		if a.Matches("create", "secrets") || a.Matches("update", "secrets") {
			out = append(out, a)
		}
	}
	return out
}

func (h *harness) eventReasons() []string {
	var out []string
	for _, e := range h.recorder.Events() {
		out = append(out, e.Reason)
	}
	return out
}

// setCSR stores csr on the hub and in the informer.
func (h *harness) setCSR(csr *certificatesv1.CertificateSigningRequest) {
	h.t.Helper()
	gvr := certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests")
	if err := h.hub.Tracker().Update(gvr, csr, ""); err != nil {
		h.t.Fatal(err)
	}
	if err := h.csrStore.Update(csr); err != nil {
		h.t.Fatal(err)
	}
}

// approveOnly approves and signs the single outstanding CSR.
func (h *harness) approveAndSign() *certificatesv1.CertificateSigningRequest {
	h.t.Helper()
	csrs := h.csrs()
	csr, err := clientcerttesting.ApproveAndSign(h.clientCA, &csrs[len(csrs)-1], h.clock.Now().Add(-time.Minute), h.clock.Now().Add(time.Hour))
	if err != nil {
		h.t.Fatal(err)
	}
	h.setCSR(csr)
	return csr
}

func (h *harness) secretData(notBefore, notAfter time.Time) map[string][]byte {
	h.t.Helper()
	data, err := clientcerttesting.NewHubKubeconfigSecretData(h.clientCA, h.hubInfo, testCluster, testAgent, notBefore, notAfter)
	if err != nil {
		h.t.Fatal(err)
	}
	return data
}

// writtenData returns the Data of the single Secret write.
func writtenSecret(t *testing.T, writes []clienttesting.Action) *corev1.Secret {
	t.Helper()
	if len(writes) != 1 {
		t.Fatalf("%d Secret writes, want exactly 1: %v", len(writes), writes)
	}
	return writes[0].(interface{ GetObject() runtime.Object }).GetObject().(*corev1.Secret)
}

func TestNewClientCertForHubControllerValidatesOptions(t *testing.T) {
	if _, err := clientcert.NewClientCertForHubController(clientcert.ControllerOptions{}); err == nil ||
		err.Error() != "ClientCertForHubController: ClusterName and AgentName are required" {
		t.Errorf("error = %v", err)
	}
}

func TestSyncValidSecretDoesNothing(t *testing.T) {
	h := newHarness(t, clientcert.HubInfo{}, nil)
	secret := clientcerttesting.NewSecret(agentNamespace, secretName, h.secretData(testNow.Add(-time.Hour), testNow.Add(99*time.Hour)))
	if err := h.secretStore.Add(secret); err != nil {
		t.Fatal(err)
	}
	h.mustSync()
	h.mustSync()

	if len(h.hub.Actions()) != 0 || len(h.spoke.Actions()) != 0 {
		t.Errorf("valid Secret caused actions: hub %v spoke %v", h.hub.Actions(), h.spoke.Actions())
	}
	// Lifetime 100h, jitter 0: due when 20h remain, i.e. 79h from now.
	if diff := cmp.Diff([]time.Duration{79 * time.Hour, 79 * time.Hour}, h.syncCtx.Delays()); diff != "" {
		t.Errorf("requeue (-want +got):\n%s", diff)
	}
	if h.jitterCalls != 1 {
		t.Errorf("jitter drawn %d times for one certificate, want 1", h.jitterCalls)
	}
	st := h.c.Status()
	if st.Phase != clientcert.PhaseCredentialsValid || !st.RotationDeadline.Equal(testNow.Add(79*time.Hour)) || len(h.recorder.Events()) != 0 {
		t.Errorf("status %+v, events %v", st, h.eventReasons())
	}
}

func TestSyncObtainsCertificateAndWritesSecretWhole(t *testing.T) {
	base := newHarness(t, clientcert.HubInfo{}, nil) // for building fixture data against the same CA/hub
	valid := base.secretData(testNow.Add(-time.Hour), testNow.Add(99*time.Hour))
	expired := base.secretData(testNow.Add(-48*time.Hour), testNow.Add(-time.Hour))
	otherPair := base.secretData(testNow.Add(-time.Hour), testNow.Add(time.Hour))
	otherHub, err := clientcert.BuildHubKubeconfig(clientcert.HubInfo{Server: "https://old-hub:6443"})
	if err != nil {
		t.Fatal(err)
	}
	otherCluster, err := clientcerttesting.NewHubKubeconfigSecretData(base.clientCA, base.hubInfo, "cluster9", testAgent, testNow.Add(-time.Hour), testNow.Add(99*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	with := func(changes map[string][]byte) map[string][]byte {
		out := maps.Clone(valid)
		for k, v := range changes {
			if v == nil {
				delete(out, k)
			} else {
				out[k] = v
			}
		}
		return out
	}

	cases := []struct {
		name       string
		data       map[string][]byte // nil: no Secret
		wantReason clientcert.InvalidReason
	}{
		{"no Secret", nil, clientcert.ReasonMissingKey},
		{"FC-07 tls.crt expired an hour ago", expired, clientcert.ReasonCertificateExpired},
		{"FC-07 tls.crt and tls.key from different key pairs", with(map[string][]byte{"tls.key": otherPair["tls.key"]}), clientcert.ReasonKeyMismatch},
		{"FC-07 truncated PEM", with(map[string][]byte{"tls.crt": valid["tls.crt"][:100]}), clientcert.ReasonCertificateUnparsable},
		{"FC-07 kubeconfig key missing with tls.* present", with(map[string][]byte{"kubeconfig": nil}), clientcert.ReasonMissingKey},
		{"certificate of another cluster", otherCluster, clientcert.ReasonIdentityMismatch},
		{"kubeconfig for another hub server", with(map[string][]byte{"kubeconfig": otherHub}), clientcert.ReasonHubMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var secret *corev1.Secret
			if tc.data != nil {
				secret = clientcerttesting.NewSecret(agentNamespace, secretName, tc.data)
				secret.Labels = map[string]string{"keep": "label"}
				secret.Annotations = map[string]string{"keep": "annotation"}
				secret.Data["unrelated"] = []byte("kept")
			}
			h := newHarness(t, base.hubInfo, secret)
			h.clientCA = base.clientCA

			// 1. One CSR, exactly on the wire contract; the old Secret is untouched.
			h.mustSync()
			csrs := h.csrs()
			if len(csrs) != 1 {
				t.Fatalf("%d CSRs, want 1", len(csrs))
			}
			csr := csrs[0]
			if csr.GenerateName != "cluster1-" || csr.Labels["open-cluster-management.io/cluster-name"] != "cluster1" ||
				csr.Spec.SignerName != "kubernetes.io/kube-apiserver-client" {
				t.Errorf("CSR %+v", csr.ObjectMeta)
			}
			if st := h.c.Status(); st.Phase != clientcert.PhaseWaitingForApproval || st.Reason != tc.wantReason || st.CSRName != csr.Name {
				t.Errorf("status %+v, want WaitingForApproval for %s with reason %s", st, csr.Name, tc.wantReason)
			}
			if diff := cmp.Diff([]string{clientcert.ReasonCSRCreated}, h.eventReasons()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}

			// 2. Not approved yet (and not in the informer yet): wait, no second CSR.
			h.mustSync()
			if n := h.csrCreates(); n != 1 || len(h.secretWrites()) != 0 {
				t.Fatalf("while pending: %d CSR creates, %d Secret writes", n, len(h.secretWrites()))
			}

			// 3. Approved and signed: the Secret is written whole in one action.
			issued := h.approveAndSign()
			h.mustSync()
			written := writtenSecret(t, h.secretWrites())
			wantVerb := "update"
			if secret == nil {
				wantVerb = "create"
			}
			if verb := h.secretWrites()[0].GetVerb(); verb != wantVerb {
				t.Errorf("Secret write verb %s, want %s", verb, wantVerb)
			}
			if !bytes.Equal(written.Data["tls.crt"], issued.Status.Certificate) || string(written.Data["cluster-name"]) != "cluster1" ||
				string(written.Data["agent-name"]) != "abcde" {
				t.Errorf("written data: cluster %q agent %q, cert from CSR %t", written.Data["cluster-name"], written.Data["agent-name"],
					bytes.Equal(written.Data["tls.crt"], issued.Status.Certificate))
			}
			if err := clientcert.CheckHubKubeconfig(written.Data, testCluster, testAgent, h.hubInfo, testNow); err != nil {
				t.Errorf("written Secret is not valid: %v", err)
			}
			if secret != nil {
				if written.Labels["keep"] != "label" || written.Annotations["keep"] != "annotation" || string(written.Data["unrelated"]) != "kept" {
					t.Errorf("metadata/extra keys not preserved: %v %v %q", written.Labels, written.Annotations, written.Data["unrelated"])
				}
				if bytes.Equal(written.Data["tls.key"], secret.Data["tls.key"]) {
					t.Error("the old key was reused")
				}
			}
			wantSecretEvent := clientcert.ReasonHubKubeconfigSecretUpdated
			if secret == nil {
				wantSecretEvent = clientcert.ReasonHubKubeconfigSecretCreated
			}
			if diff := cmp.Diff([]string{clientcert.ReasonCSRCreated, clientcert.ReasonClientCertificateIssued, wantSecretEvent}, h.eventReasons()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}

			// 4. Once the informer has the new Secret: nothing more.
			if err := h.secretStore.Add(written); err != nil {
				t.Fatal(err)
			}
			h.mustSync()
			if n := h.csrCreates(); n != 1 || len(h.secretWrites()) != 1 || h.c.Status().Phase != clientcert.PhaseCredentialsValid {
				t.Errorf("after writing: %d CSR creates, %d writes, status %+v", n, len(h.secretWrites()), h.c.Status())
			}
		})
	}
}

func TestSyncInformerLagDoesNotCreateSecondCSR(t *testing.T) {
	h := newHarness(t, clientcert.HubInfo{}, nil)
	h.mustSync()
	h.approveAndSign()
	h.mustSync() // Secret created in the API; the lister does not have it yet.
	if len(h.secretWrites()) != 1 {
		t.Fatalf("%d writes", len(h.secretWrites()))
	}
	h.mustSync()
	if n := h.csrCreates(); n != 1 {
		t.Errorf("%d CSR creates while the Secret informer lags, want 1", n)
	}
}

func TestSyncDeniedCSRBacksOff(t *testing.T) {
	for _, condition := range []certificatesv1.RequestConditionType{certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		t.Run(string(condition), func(t *testing.T) {
			h := newHarness(t, clientcert.HubInfo{}, nil)
			h.mustSync()
			csr := h.csrs()[0].DeepCopy()
			csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
				Type: condition, Status: corev1.ConditionTrue, Reason: "Nope", Message: "not you",
			})
			h.setCSR(csr)

			h.mustSync()
			if diff := cmp.Diff([]string{clientcert.ReasonCSRCreated, clientcert.ReasonCSRDenied}, h.eventReasons()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if msg := h.recorder.Events()[1].Message; !strings.Contains(msg, string(condition)+": Nope: not you") {
				t.Errorf("denied event message %q", msg)
			}
			st := h.c.Status()
			if st.Phase != clientcert.PhaseBackingOff || !st.RetryAt.Equal(testNow.Add(backoffBase)) {
				t.Errorf("status %+v", st)
			}

			// Before the back-off expires: no new CSR.
			h.clock.Step(backoffBase - time.Second)
			h.mustSync()
			if n := h.csrCreates(); n != 1 {
				t.Fatalf("%d CSR creates during back-off, want 1", n)
			}
			if got := h.syncCtx.Delays()[len(h.syncCtx.Delays())-1]; got != time.Second {
				t.Errorf("requeue after %v, want 1s", got)
			}
			// After it: exactly one new CSR with a new key.
			h.clock.Step(time.Second)
			h.mustSync()
			csrs := h.csrs()
			if len(csrs) != 2 || bytes.Equal(csrs[0].Spec.Request, csrs[1].Spec.Request) {
				t.Errorf("after back-off: %d CSRs (want 2 with different requests)", len(csrs))
			}
		})
	}
}

func TestSyncRejectsMismatchingCertificate(t *testing.T) {
	h := newHarness(t, clientcert.HubInfo{}, nil)
	h.mustSync()
	certPEM, _, err := h.clientCA.IssueClientCert(testCluster, testAgent, testNow, testNow.Add(time.Hour)) // another key
	if err != nil {
		t.Fatal(err)
	}
	h.setCSR(clientcerttesting.Approve(&h.csrs()[0], certPEM))
	h.mustSync()
	if len(h.secretWrites()) != 0 {
		t.Errorf("a certificate for another key was written")
	}
	if diff := cmp.Diff([]string{clientcert.ReasonCSRCreated, clientcert.ReasonClientCertificateInvalid}, h.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if st := h.c.Status(); st.Phase != clientcert.PhaseBackingOff {
		t.Errorf("status %+v", st)
	}
}

func TestSyncDeletedCSRIsRecreatedAfterBackoff(t *testing.T) {
	h := newHarness(t, clientcert.HubInfo{}, nil)
	h.mustSync()
	if err := h.hub.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), h.csrs()[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.mustSync()
	if diff := cmp.Diff([]string{clientcert.ReasonCSRCreated, clientcert.ReasonCSRDeleted}, h.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	h.mustSync()
	if n := h.csrCreates(); n != 1 {
		t.Fatalf("%d creates before back-off", n)
	}
	h.clock.Step(backoffBase)
	h.mustSync()
	if n := h.csrCreates(); n != 2 {
		t.Errorf("%d creates after back-off, want 2", n)
	}
}

func TestSyncCreateErrorKeepsOneCSRPerKey(t *testing.T) {
	t.Run("create rejected", func(t *testing.T) {
		h := newHarness(t, clientcert.HubInfo{}, nil)
		var requests [][]byte
		failures := 1
		h.hub.PrependReactor("create", "certificatesigningrequests", func(action clienttesting.Action) (bool, runtime.Object, error) {
			requests = append(requests, action.(clienttesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest).Spec.Request)
			if failures > 0 {
				failures--
				return true, nil, errors.New("proxyconnect tcp: dial tcp 127.0.0.1:1: connect: connection refused")
			}
			return false, nil, nil
		})
		if err := h.sync(); err == nil || !strings.Contains(err.Error(), "create CSR for cluster cluster1: proxyconnect") {
			t.Fatalf("sync error = %v", err)
		}
		st := h.c.Status()
		if st.Phase != clientcert.PhaseCSRCreateFailing || st.LastError == nil {
			t.Errorf("status %+v", st)
		}
		// Requeued early: no new attempt, no new event.
		h.mustSync()
		if len(requests) != 1 {
			t.Fatalf("%d create attempts during back-off", len(requests))
		}
		h.clock.Step(backoffBase)
		h.mustSync()
		if len(requests) != 2 || !bytes.Equal(requests[0], requests[1]) {
			t.Errorf("retry: %d attempts, same request %t (want the same key and CSR)", len(requests), len(requests) == 2 && bytes.Equal(requests[0], requests[1]))
		}
		if len(h.csrs()) != 1 {
			t.Errorf("%d CSRs", len(h.csrs()))
		}
		if diff := cmp.Diff([]string{clientcert.ReasonCSRCreateFailed, clientcert.ReasonCSRCreated}, h.eventReasons()); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("create succeeded but reported an error", func(t *testing.T) {
		h := newHarness(t, clientcert.HubInfo{}, nil)
		timedOut := false
		h.hub.PrependReactor("create", "certificatesigningrequests", func(action clienttesting.Action) (bool, runtime.Object, error) {
			if timedOut {
				return false, nil, nil
			}
			timedOut = true
			csr := action.(clienttesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest).DeepCopy()
			csr.Name = "cluster1-late"
			if err := h.hub.Tracker().Add(csr); err != nil {
				t.Fatal(err)
			}
			if err := h.csrStore.Add(csr); err != nil {
				t.Fatal(err)
			}
			return true, nil, errors.New("the server was unable to return a response in the time allotted")
		})
		if err := h.sync(); err == nil {
			t.Fatal("sync succeeded")
		}
		h.clock.Step(backoffBase)
		h.mustSync()
		if n := h.csrCreates(); n != 1 || len(h.csrs()) != 1 || h.c.Status().CSRName != "cluster1-late" {
			t.Errorf("%d creates, %d CSRs, status %+v; want the late CSR adopted", n, len(h.csrs()), h.c.Status())
		}
	})
}

func TestSyncRotation(t *testing.T) {
	h := newHarness(t, clientcert.HubInfo{}, nil)
	// Lifetime 100h, 10h left: past the 20% deadline.
	old := clientcerttesting.NewSecret(agentNamespace, secretName, h.secretData(testNow.Add(-90*time.Hour), testNow.Add(10*time.Hour)))
	if err := h.spoke.Tracker().Add(old); err != nil {
		t.Fatal(err)
	}
	if err := h.secretStore.Add(old); err != nil {
		t.Fatal(err)
	}
	h.mustSync()
	if n := h.csrCreates(); n != 1 || len(h.secretWrites()) != 0 {
		t.Fatalf("rotation: %d creates, %d writes", n, len(h.secretWrites()))
	}
	if st := h.c.Status(); st.Reason != clientcert.ReasonRotationDue {
		t.Errorf("status %+v", st)
	}
	h.approveAndSign()
	h.mustSync()
	written := writtenSecret(t, h.secretWrites())
	if bytes.Equal(written.Data["tls.crt"], old.Data["tls.crt"]) || bytes.Equal(written.Data["tls.key"], old.Data["tls.key"]) {
		t.Error("rotation kept the old certificate or key")
	}
}

func TestSyncHubCAChangeRebuildsKubeconfigOnly(t *testing.T) {
	oldHub := clientcert.HubInfo{Server: "https://hub.example.com:6443", CAData: mustCA(t, "old-ca").CertPEM}
	newHub := clientcert.HubInfo{Server: "https://hub.example.com:6443", CAData: mustCA(t, "new-ca").CertPEM}
	builder := newHarness(t, oldHub, nil)
	old := clientcerttesting.NewSecret(agentNamespace, secretName, builder.secretData(testNow.Add(-time.Hour), testNow.Add(99*time.Hour)))

	h := newHarness(t, newHub, old)
	h.mustSync()
	written := writtenSecret(t, h.secretWrites())
	if n := h.csrCreates(); n != 0 {
		t.Errorf("%d CSRs for a CA change", n)
	}
	if !bytes.Equal(written.Data["tls.key"], old.Data["tls.key"]) || !bytes.Equal(written.Data["tls.crt"], old.Data["tls.crt"]) {
		t.Error("key or certificate changed")
	}
	if err := clientcert.CheckHubKubeconfig(written.Data, testCluster, testAgent, newHub, testNow); err != nil {
		t.Errorf("rebuilt Secret not valid for the new CA: %v", err)
	}
	if diff := cmp.Diff([]string{clientcert.ReasonHubKubeconfigRebuilt}, h.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestSyncNotYetValidCertificateWaits(t *testing.T) {
	builder := newHarness(t, clientcert.HubInfo{}, nil)
	secret := clientcerttesting.NewSecret(agentNamespace, secretName, builder.secretData(testNow.Add(10*time.Minute), testNow.Add(99*time.Hour)))
	h := newHarness(t, builder.hubInfo, secret)
	h.mustSync()
	if n := h.csrCreates(); n != 0 {
		t.Errorf("%d CSRs for a certificate valid in 10 minutes", n)
	}
	if diff := cmp.Diff([]time.Duration{10 * time.Minute}, h.syncCtx.Delays()); diff != "" {
		t.Errorf("requeue (-want +got):\n%s", diff)
	}
	if st := h.c.Status(); st.Phase != clientcert.PhaseWaitingForValidity {
		t.Errorf("status %+v", st)
	}
}

func TestSyncSecretWriteFailureKeepsCertificate(t *testing.T) {
	h := newHarness(t, clientcert.HubInfo{}, nil)
	h.mustSync()
	h.approveAndSign()
	failed := false
	h.spoke.PrependReactor("create", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		if failed {
			return false, nil, nil
		}
		failed = true
		return true, nil, errors.New("etcdserver: request timed out")
	})
	if err := h.sync(); err == nil {
		t.Fatal("sync succeeded while the write failed")
	}
	if st := h.c.Status(); st.Phase != clientcert.PhaseSecretWriteFailing {
		t.Errorf("status %+v", st)
	}
	h.mustSync()
	if n := h.csrCreates(); n != 1 {
		t.Errorf("%d CSRs; a write failure must not cost a new CSR", n)
	}
	written := writtenSecret(t, h.secretWrites()[1:])
	if err := clientcert.CheckHubKubeconfig(written.Data, testCluster, testAgent, h.hubInfo, testNow); err != nil {
		t.Errorf("written Secret invalid: %v", err)
	}
}

func TestRequestNewCertificate(t *testing.T) {
	builder := newHarness(t, clientcert.HubInfo{}, nil)
	secret := clientcerttesting.NewSecret(agentNamespace, secretName, builder.secretData(testNow.Add(-time.Hour), testNow.Add(99*time.Hour)))
	h := newHarness(t, builder.hubInfo, secret)
	h.c.RequestNewCertificate("hub answers 401")
	h.mustSync()
	if n := h.csrCreates(); n != 1 {
		t.Fatalf("%d CSRs after RequestNewCertificate", n)
	}
	if msg := h.recorder.Events()[0].Message; !strings.Contains(msg, "new certificate requested: hub answers 401") {
		t.Errorf("event %q", msg)
	}
}

// TestSyncBootstrapBackoff: with a shared BootstrapBackoff, a CSR for new credentials waits for the hub's back-off
// (one CSRBackoff event per wait, status BackingOff with the time), the certificate written is remembered as the
// process's, and a rotation of valid credentials is not held back.
func TestSyncBootstrapBackoff(t *testing.T) {
	clk := clocktesting.NewFakeClock(testNow)
	backoff := clientcert.NewBootstrapBackoff(clientcert.BootstrapBackoffOptions{Clock: clk})
	withBackoff := func(o *clientcert.ControllerOptions) {
		o.BootstrapBackoff, o.BackoffHub, o.Clock = backoff, "hub-a", clk
	}
	// The Secret was taken over by another writer: 30 s before the next CSR.
	backoff.Contested("hub-a")

	h := newHarness(t, clientcert.HubInfo{}, nil, withBackoff)
	h.clock = clk
	h.mustSync()
	h.mustSync()
	if n := h.csrCreates(); n != 0 {
		t.Fatalf("%d CSRs created during the bootstrap back-off, want 0", n)
	}
	st := h.c.Status()
	if st.Phase != clientcert.PhaseBackingOff || !st.RetryAt.Equal(testNow.Add(30*time.Second)) {
		t.Errorf("status %+v, want BackingOff until %s", st, testNow.Add(30*time.Second))
	}
	if diff := cmp.Diff([]string{clientcert.ReasonCSRBackoff}, h.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := h.syncCtx.Delays()[len(h.syncCtx.Delays())-1]; got != 30*time.Second {
		t.Errorf("requeue after %s, want 30s", got)
	}

	clk.Step(30 * time.Second)
	h.mustSync()
	if n := h.csrCreates(); n != 1 {
		t.Fatalf("%d CSRs after the back-off, want 1", n)
	}
	csr := h.approveAndSign()
	h.mustSync()
	if !backoff.Wrote(csr.Status.Certificate) {
		t.Error("the certificate written to the Secret is not remembered as the process's")
	}

	// A rotation with valid credentials (a RotationOnly controller, the main controllers') is not delayed by the
	// back-off (30 s after that CSR).
	rh := newHarness(t, clientcert.HubInfo{}, nil, withBackoff, func(o *clientcert.ControllerOptions) { o.RotationOnly = true })
	old := clientcerttesting.NewSecret(agentNamespace, secretName, rh.secretData(clk.Now().Add(-90*time.Hour), clk.Now().Add(10*time.Hour)))
	if err := rh.spoke.Tracker().Add(old); err != nil {
		t.Fatal(err)
	}
	if err := rh.secretStore.Add(old); err != nil {
		t.Fatal(err)
	}
	if st := backoff.State("hub-a"); st.NotBefore.IsZero() {
		t.Fatalf("back-off not active for the rotation case: %+v", st)
	}
	rh.mustSync()
	if n := rh.csrCreates(); n != 1 {
		t.Errorf("rotation during the bootstrap back-off: %d CSRs, want 1", n)
	}
}

// TestSyncRotationOnlyLeavesInvalidSecret: a RotationOnly controller (the main controllers') sends no CSR for a
// Secret that is not valid for the hub: the session bootstraps instead, honouring the back-off.
func TestSyncRotationOnlyLeavesInvalidSecret(t *testing.T) {
	h := newHarness(t, clientcert.HubInfo{}, nil, func(o *clientcert.ControllerOptions) { o.RotationOnly = true })
	h.mustSync()
	if n := h.csrCreates(); n != 0 {
		t.Fatalf("RotationOnly controller created %d CSRs for a missing Secret", n)
	}
	if st := h.c.Status(); st.Phase != clientcert.PhaseCredentialsInvalid || st.Reason != clientcert.ReasonMissingKey {
		t.Errorf("status %+v, want CredentialsInvalid/MissingKey", st)
	}
}

// TestSyncFirstBootstrapIgnoresLeftoverCSRs: a first start (no Secret, no back-off record) sends its bootstrap CSR
// at once, however many recent CSRs for the cluster the hub already holds (pending, denied, approved but never
// issued; from this agent name and from others): they are not this process's failures.
func TestSyncFirstBootstrapIgnoresLeftoverCSRs(t *testing.T) {
	clk := clocktesting.NewFakeClock(testNow)
	bootstrapBackoff := clientcert.NewBootstrapBackoff(clientcert.BootstrapBackoffOptions{Clock: clk})
	h := newHarness(t, clientcert.HubInfo{}, nil, func(o *clientcert.ControllerOptions) {
		o.BootstrapBackoff, o.BackoffHub, o.Clock = bootstrapBackoff, "hub-a", clk
	})
	h.clock = clk
	const leftovers = 10
	for i := range leftovers {
		agent := fmt.Sprintf("old-agent-%d", i%3)
		if i%4 == 0 {
			agent = testAgent
		}
		keyPEM, err := clientcert.NewPrivateKey()
		if err != nil {
			t.Fatal(err)
		}
		csr, err := clientcert.NewCSR(testCluster, agent, keyPEM, nil)
		if err != nil {
			t.Fatal(err)
		}
		csr.Name = fmt.Sprintf("%sleftover-%d", csr.GenerateName, i)
		csr.CreationTimestamp = metav1.NewTime(testNow.Add(-time.Duration(i+1) * time.Minute))
		csr.Spec.Username = "system:serviceaccount:open-cluster-management:bootstrap"
		switch i % 3 {
		case 1:
			csr = clientcerttesting.Deny(csr)
		case 2:
			csr = clientcerttesting.Approve(csr, nil) // approved, never issued
		}
		if err := h.hub.Tracker().Add(csr); err != nil {
			t.Fatal(err)
		}
		if err := h.csrStore.Add(csr); err != nil {
			t.Fatal(err)
		}
	}

	h.mustSync()
	if n := h.csrCreates(); n != 1 {
		t.Fatalf("first sync with %d leftover CSRs on the hub created %d CSRs, want 1", leftovers, n)
	}
	if st := h.c.Status(); st.Phase != clientcert.PhaseWaitingForApproval {
		t.Errorf("status %+v, want %s", st, clientcert.PhaseWaitingForApproval)
	}
	if diff := cmp.Diff([]string{clientcert.ReasonCSRCreated}, h.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if st := bootstrapBackoff.State("hub-a"); st.Failures != 1 || !st.NotBefore.Equal(testNow.Add(clientcert.DefaultBootstrapBackoffBase)) {
		t.Errorf("back-off after the first CSR %+v, want only that CSR pending (1, next not before %s)", st,
			testNow.Add(clientcert.DefaultBootstrapBackoffBase))
	}
}
