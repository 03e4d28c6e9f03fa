package failover

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	clocktesting "k8s.io/utils/clock/testing"
	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

const testToken = "bootstrap-token-for-tests"

// fakeHub is a minimal hub API server: GET /version, POST of SelfSubjectAccessReviews and GET of a
// ManagedCluster (the heartbeat), bearer-token authentication (401 otherwise, as with anonymous access
// disabled).
type fakeHub struct {
	// down makes the hub drop every connection without an answer, as a hub that is gone.
	down atomic.Bool
	// denied lists Permission.String() values the identity does not have.
	denied map[string]bool
	// versionStatus, when set, is the status of GET /version.
	versionStatus int
	// reviewStatus, when set, is the status of SelfSubjectAccessReview creation.
	reviewStatus int
	// managedCluster, when set, is the body (JSON) of a GET of a ManagedCluster; managedClusterStatus, when set,
	// the status of that GET instead.
	managedCluster       string
	managedClusterStatus int
	// block makes every request wait until its context ends.
	block bool
	// stallUpTo makes requests on the connections numbered up to it (connSeq counts accepted connections, from 1)
	// wait until their context ends: connections to a peer that died, while new connections get answers.
	stallUpTo, connSeq atomic.Int64

	lock    sync.Mutex
	reviews []string // Permission.String() of each review received
}

func (h *fakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.down.Load() {
		if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
			_ = c.Close()
		}
		return
	}
	if seq, _ := r.Context().Value(connSeqKey{}).(int64); h.block || (seq > 0 && seq <= h.stallUpTo.Load()) {
		<-r.Context().Done()
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+testToken {
		writeStatus(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/version":
		if h.versionStatus != 0 {
			writeStatus(w, h.versionStatus, http.StatusText(h.versionStatus))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"major":"1","minor":"34","gitVersion":"v1.34.3"}`)
	case r.Method == http.MethodPost && r.URL.Path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
		if h.reviewStatus != 0 {
			writeStatus(w, h.reviewStatus, http.StatusText(h.reviewStatus))
			return
		}
		var review authorizationv1.SelfSubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Spec.ResourceAttributes == nil {
			writeStatus(w, http.StatusBadRequest, "bad review")
			return
		}
		a := review.Spec.ResourceAttributes
		p := Permission{Verb: a.Verb, Group: a.Group, Resource: a.Resource}.String()
		h.lock.Lock()
		h.reviews = append(h.reviews, p)
		h.lock.Unlock()
		review.APIVersion, review.Kind = "authorization.k8s.io/v1", "SelfSubjectAccessReview"
		review.Status.Allowed = !h.denied[p]
		if !review.Status.Allowed {
			review.Status.Reason = "no RBAC policy matched"
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(&review)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/apis/cluster.open-cluster-management.io/v1/managedclusters/"):
		if h.managedClusterStatus != 0 {
			writeStatus(w, h.managedClusterStatus, http.StatusText(h.managedClusterStatus))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if h.managedCluster != "" {
			_, _ = io.WriteString(w, h.managedCluster)
			return
		}
		_, _ = fmt.Fprintf(w, `{"apiVersion":"cluster.open-cluster-management.io/v1","kind":"ManagedCluster","metadata":{"name":%q}}`,
			strings.TrimPrefix(r.URL.Path, "/apis/cluster.open-cluster-management.io/v1/managedclusters/"))
	default:
		writeStatus(w, http.StatusNotFound, "not found")
	}
}

func writeStatus(w http.ResponseWriter, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"apiVersion": "v1", "kind": "Status", "status": "Failure", "message": message, "code": code,
	})
}

func startHub(t *testing.T, h *fakeHub) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	// The x509 cases make the client abort handshakes; keep those server-side logs out of the test output.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connSeqKey{}, h.connSeq.Add(1))
	}
	// client-go speaks HTTP/2 to hubs, on one connection per transport.
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// connSeqKey is the context key of a connection's number (fakeHub.connSeq).
type connSeqKey struct{}

func caOf(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

type kubeconfigOptions struct {
	server, proxyURL, caFile string
	ca                       []byte
	token                    string
	clientCert, clientKey    []byte
}

func kubeconfig(t *testing.T, o kubeconfigOptions) []byte {
	t.Helper()
	config := clientcmdapi.NewConfig()
	config.Clusters["hub"] = &clientcmdapi.Cluster{
		Server: o.server, CertificateAuthorityData: o.ca, CertificateAuthority: o.caFile, ProxyURL: o.proxyURL,
	}
	config.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{Token: o.token, ClientCertificateData: o.clientCert, ClientKeyData: o.clientKey}
	config.Contexts["bootstrap"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "bootstrap"}
	config.CurrentContext = "bootstrap"
	data, err := clientcmd.Write(*config)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// clientCertificate returns a self-signed client certificate and key valid until notAfter.
func clientCertificate(t *testing.T, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "system:bootstrap:test"},
		NotBefore:    notAfter.Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

func TestProbeRESTConfig(t *testing.T) {
	// Every httptest TLS server serves the same certificate, so another hub's CA is a fresh self-signed one.
	otherCA, _, err := certutil.GenerateSelfSignedCertKey("other-hub", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	deadURL := strings.Replace(closedServerURL(t), "http://", "https://", 1)
	deadProxy := closedServerURL(t)
	expiredCert, expiredKey := clientCertificate(t, t0)

	cases := []struct {
		name string
		hub  *fakeHub
		// kubeconfig builds the kubeconfig for the started hub server.
		kubeconfig   func(srv *httptest.Server) []byte
		identity     ProbeIdentity
		timeout      time.Duration
		wantResult   failoverv1alpha1.HubProbeResult
		wantServer   func(srv *httptest.Server) string
		wantContains []string
		wantAbsent   []string
		wantReviews  []string
	}{
		{
			name: "all permissions allowed: ready",
			hub:  &fakeHub{},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken})
			},
			wantResult:   failoverv1alpha1.HubProbeReady,
			wantServer:   func(srv *httptest.Server) string { return srv.URL },
			wantContains: []string{"v1.34.3"},
			wantReviews: []string{
				"create certificatesigningrequests.certificates.k8s.io",
				"create managedclusters.cluster.open-cluster-management.io",
				"get managedclusters.cluster.open-cluster-management.io",
			},
		},
		{
			name: "managedcluster create denied: forbidden, naming only the missing permission",
			hub:  &fakeHub{denied: map[string]bool{"create managedclusters.cluster.open-cluster-management.io": true}},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken})
			},
			wantResult:   failoverv1alpha1.HubProbeForbidden,
			wantContains: []string{"may not create managedclusters.cluster.open-cluster-management.io (no RBAC policy matched)"},
			wantAbsent:   []string{"certificatesigningrequests", "get managedclusters"},
		},
		{
			name: "every permission denied: all named",
			hub: &fakeHub{denied: map[string]bool{
				"create certificatesigningrequests.certificates.k8s.io":     true,
				"create managedclusters.cluster.open-cluster-management.io": true,
				"get managedclusters.cluster.open-cluster-management.io":    true,
			}},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken})
			},
			wantResult: failoverv1alpha1.HubProbeForbidden,
			wantContains: []string{"create certificatesigningrequests.certificates.k8s.io",
				"create managedclusters.cluster.open-cluster-management.io", "get managedclusters.cluster.open-cluster-management.io"},
		},
		{
			name: "the hub's ManagedCluster is a copy for another spoke: identity conflict, naming both identities",
			hub: &fakeHub{managedCluster: `{"apiVersion":"cluster.open-cluster-management.io/v1","kind":"ManagedCluster",` +
				`"metadata":{"name":"local-cluster","labels":{"failover.open-cluster-management.io/replicated-from":"hub-a"},"annotations":{"failover.open-cluster-management.io/cluster-id":"them"}}}`},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken})
			},
			identity:     ProbeIdentity{ClusterName: "local-cluster", Spoke: managedcluster.SpokeIdentities{KubeSystemUID: "us"}},
			wantResult:   failoverv1alpha1.HubProbeIdentityConflict,
			wantContains: []string{`copy for another spoke (failover.open-cluster-management.io/cluster-id "them", this spoke's identity is "us")`, "does not move there"},
		},
		{
			name: "the hub's ManagedCluster is another spoke's registration, available: identity conflict",
			hub: &fakeHub{managedCluster: `{"apiVersion":"cluster.open-cluster-management.io/v1","kind":"ManagedCluster","metadata":{"name":"local-cluster"},` +
				`"status":{"clusterClaims":[{"name":"id.k8s.io","value":"them"}],"conditions":[{"type":"ManagedClusterConditionAvailable","status":"True","reason":"ManagedClusterAvailable","message":"","lastTransitionTime":"2026-12-05T00:00:00Z"}]}}`},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken})
			},
			identity:     ProbeIdentity{ClusterName: "local-cluster", Spoke: managedcluster.SpokeIdentities{KubeSystemUID: "us"}},
			wantResult:   failoverv1alpha1.HubProbeIdentityConflict,
			wantContains: []string{"registered by another spoke"},
		},
		{
			name: "the hub's ManagedCluster is this spoke's copy: ready",
			hub: &fakeHub{managedCluster: `{"apiVersion":"cluster.open-cluster-management.io/v1","kind":"ManagedCluster",` +
				`"metadata":{"name":"local-cluster","labels":{"failover.open-cluster-management.io/replicated-from":"hub-a"},"annotations":{"failover.open-cluster-management.io/cluster-id":"us"}}}`},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken})
			},
			identity:   ProbeIdentity{ClusterName: "local-cluster", Spoke: managedcluster.SpokeIdentities{KubeSystemUID: "us"}},
			wantResult: failoverv1alpha1.HubProbeReady,
		},
		{
			name: "no ManagedCluster of the name on the hub: ready",
			hub:  &fakeHub{managedClusterStatus: http.StatusNotFound},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken})
			},
			identity:   ProbeIdentity{ClusterName: "local-cluster", Spoke: managedcluster.SpokeIdentities{KubeSystemUID: "us"}},
			wantResult: failoverv1alpha1.HubProbeReady,
		},
		{
			name: "reading the ManagedCluster fails: unreachable, naming the read",
			hub:  &fakeHub{managedClusterStatus: http.StatusServiceUnavailable},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken})
			},
			identity:     ProbeIdentity{ClusterName: "local-cluster", Spoke: managedcluster.SpokeIdentities{KubeSystemUID: "us"}},
			wantResult:   failoverv1alpha1.HubProbeUnreachable,
			wantContains: []string{`reading ManagedCluster "local-cluster" failed`, "HTTP 503"},
		},
		{
			name: "without the spoke's identity the ManagedCluster is not checked",
			hub:  &fakeHub{managedClusterStatus: http.StatusServiceUnavailable},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken})
			},
			identity:   ProbeIdentity{ClusterName: "local-cluster"},
			wantResult: failoverv1alpha1.HubProbeReady,
		},
		{
			name: "/version forbidden still counts as an answer",
			hub:  &fakeHub{versionStatus: http.StatusForbidden},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken})
			},
			wantResult: failoverv1alpha1.HubProbeReady,
			wantAbsent: []string{"Kubernetes v"},
		},
		{
			name: "wrong token: unauthorized",
			hub:  &fakeHub{},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: "revoked"})
			},
			wantResult:   failoverv1alpha1.HubProbeUnauthorized,
			wantContains: []string{"401"},
		},
		{
			name: "expired client certificate: unauthorized, naming its validity end",
			hub:  &fakeHub{},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), clientCert: expiredCert, clientKey: expiredKey})
			},
			wantResult:   failoverv1alpha1.HubProbeUnauthorized,
			wantContains: []string{"valid until " + text.Time(t0)},
		},
		{
			name: "creating a SelfSubjectAccessReview forbidden: forbidden",
			hub:  &fakeHub{reviewStatus: http.StatusForbidden},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken})
			},
			wantResult:   failoverv1alpha1.HubProbeForbidden,
			wantContains: []string{"SelfSubjectAccessReview", "403"},
		},
		{
			name: "server error: unreachable, naming the status",
			hub:  &fakeHub{versionStatus: http.StatusServiceUnavailable},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken})
			},
			wantResult:   failoverv1alpha1.HubProbeUnreachable,
			wantContains: []string{"HTTP 503"},
		},
		{
			name: "serving certificate from an untrusted CA (FC-03)",
			hub:  &fakeHub{},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: otherCA, token: testToken})
			},
			wantResult:   failoverv1alpha1.HubProbeServerUntrusted,
			wantContains: []string{"hub serving certificate not trusted"},
		},
		{
			name: "serving certificate for another name",
			hub:  &fakeHub{},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), ca: caOf(srv), token: testToken})
			},
			wantResult:   failoverv1alpha1.HubProbeServerUntrusted,
			wantContains: []string{"not valid for the server name"},
		},
		{
			name: "connection refused",
			kubeconfig: func(*httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: deadURL, token: testToken})
			},
			wantResult:   failoverv1alpha1.HubProbeUnreachable,
			wantServer:   func(*httptest.Server) string { return deadURL },
			wantContains: []string{"unreachable", "connection refused"},
		},
		{
			name: "proxy not listening: the proxy is named, its credentials are not (FC-01)",
			hub:  &fakeHub{},
			kubeconfig: func(srv *httptest.Server) []byte {
				proxy := strings.Replace(deadProxy, "http://", "http://user:s3cret@", 1)
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken, proxyURL: proxy})
			},
			wantResult:   failoverv1alpha1.HubProbeUnreachable,
			wantContains: []string{"cannot connect to the proxy " + strings.Replace(deadProxy, "http://", "http://user:xxxxx@", 1)},
			wantAbsent:   []string{"s3cret"},
		},
		{
			name: "no answer within the timeout",
			hub:  &fakeHub{block: true},
			kubeconfig: func(srv *httptest.Server) []byte {
				return kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken})
			},
			timeout:      200 * time.Millisecond,
			wantResult:   failoverv1alpha1.HubProbeUnreachable,
			wantContains: []string{"did not answer in time"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var srv *httptest.Server
			if tc.hub != nil {
				srv = startHub(t, tc.hub)
			}
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			config, err := clientcmd.RESTConfigFromKubeConfig(tc.kubeconfig(srv))
			if err != nil {
				t.Fatalf("test kubeconfig: %v", err)
			}
			got := ProbeRESTConfig(t.Context(), config, timeout, tc.identity)
			t.Logf("%s: %s", got.Result, got.Message)

			if got.Result != tc.wantResult {
				t.Errorf("Result = %q, want %q (message %q)", got.Result, tc.wantResult, got.Message)
			}
			if tc.wantServer != nil {
				if want := tc.wantServer(srv); got.Server != want {
					t.Errorf("Server = %q, want %q", got.Server, want)
				}
			}
			for _, s := range tc.wantContains {
				if !strings.Contains(got.Message, s) {
					t.Errorf("Message %q does not contain %q", got.Message, s)
				}
			}
			for _, s := range tc.wantAbsent {
				if strings.Contains(got.Message, s) {
					t.Errorf("Message %q contains %q", got.Message, s)
				}
			}
			if tc.wantReviews != nil {
				tc.hub.lock.Lock()
				reviews := tc.hub.reviews
				tc.hub.lock.Unlock()
				if strings.Join(reviews, "\n") != strings.Join(tc.wantReviews, "\n") {
					t.Errorf("reviews = %q, want %q", reviews, tc.wantReviews)
				}
			}
		})
	}
}

// Consecutive probes do not reuse a kept-alive connection, so each one verifies the serving certificate anew.
func TestProbeUsesAFreshConnectionEachTime(t *testing.T) {
	var lock sync.Mutex
	connections := 0
	srv := httptest.NewUnstartedServer(&fakeHub{})
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			lock.Lock()
			connections++
			lock.Unlock()
		}
	}
	srv.StartTLS()
	defer srv.Close()

	config, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if got := ProbeRESTConfig(t.Context(), config, 10*time.Second, ProbeIdentity{}); got.Result != failoverv1alpha1.HubProbeReady {
			t.Fatalf("probe %d: %+v", i, got)
		}
	}
	lock.Lock()
	defer lock.Unlock()
	if connections != 2 {
		t.Errorf("connections = %d, want 2 (one per probe)", connections)
	}
}

// The standby probes read the spoke's identities once per spokeIdentityTTL, again at once when a probe found a
// hub's ManagedCluster another spoke's (the spoke may have got its id.k8s.io claim since), and after a failed
// read not before spokeIdentityRetry.
func TestProbeIdentityReads(t *testing.T) {
	ctx := t.Context()
	clk := clocktesting.NewFakeClock(t0)
	kube := kubefake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: "ks-uid"}})
	claims := clusterfake.NewSimpleClientset()
	r := &Orchestrator{o: OrchestratorOptions{Agent: hubsession.Config{ClusterName: "c1", SpokeClusterClient: claims, Clock: clk},
		SpokeIdentity: managedcluster.NewSpokeIdentityReader(kube.CoreV1())}}
	// reads counts the reads of the spoke's id.k8s.io claim: one per read of the identities.
	reads := func() int { return len(claims.Actions()) }

	if got := r.probeIdentity(ctx, false); got.ClusterName != "c1" || got.Spoke != (managedcluster.SpokeIdentities{KubeSystemUID: "ks-uid"}) || reads() != 1 {
		t.Fatalf("first read: %+v after %d reads, want the kube-system UID after 1", got, reads())
	}
	if _, err := claims.ClusterV1alpha1().ClusterClaims().Create(ctx, &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: "id.k8s.io"},
		Spec: clusterv1alpha1.ClusterClaimSpec{Value: "claimed"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created := reads()
	clk.Step(spokeIdentityTTL - time.Second)
	if got := r.probeIdentity(ctx, false); got.Spoke.Claim != "" || reads() != created {
		t.Errorf("within the TTL: %+v after %d reads, want the cached identities, no read", got.Spoke, reads()-created)
	}
	if got := r.probeIdentity(ctx, true); got.Spoke != (managedcluster.SpokeIdentities{Claim: "claimed", KubeSystemUID: "ks-uid"}) || reads() != created+1 {
		t.Errorf("refreshed after a conflict: %+v after %d reads, want the claim and the UID, read again", got.Spoke, reads()-created)
	}

	// The spoke's API fails: the last identities stay, and no read is tried again for spokeIdentityRetry.
	claims.PrependReactor("get", "clusterclaims", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the spoke's apiserver does not answer")
	})
	before := reads()
	if got := r.probeIdentity(ctx, true); got.Spoke.Current() != "claimed" || reads() != before+1 {
		t.Errorf("a failed read: %+v after %d reads, want the last identities and one read", got.Spoke, reads()-before)
	}
	clk.Step(spokeIdentityRetry - time.Second)
	if r.probeIdentity(ctx, true); reads() != before+1 {
		t.Errorf("%d reads within %s of a failed one, want none", reads()-before-1, spokeIdentityRetry)
	}
	clk.Step(time.Second)
	if r.probeIdentity(ctx, true); reads() != before+2 {
		t.Errorf("%d reads %s after a failed one, want one", reads()-before-1, spokeIdentityRetry)
	}
	if n := len(kube.Actions()); n != 1 {
		t.Errorf("kube-system read %d times, want once for the process", n)
	}
}

// Between two full probes a standby probe costs the hub two GETs on the connection client-go keeps: no new
// connection, no SelfSubjectAccessReview. A full probe dials a connection of its own and reviews every permission.
// A kept connection to a peer that stopped answering fails at the probe's timeout and is closed, so the next probe
// dials anew.
func TestProbeKeptConnection(t *testing.T) {
	h := &fakeHub{}
	srv := startHub(t, h)
	config, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken}))
	if err != nil {
		t.Fatal(err)
	}
	reviews := func() int {
		h.lock.Lock()
		defer h.lock.Unlock()
		return len(h.reviews)
	}
	for i := range 3 {
		got := ProbeKeptConnection(t.Context(), config, 10*time.Second, ProbeIdentity{})
		if got.Result != failoverv1alpha1.HubProbeReady || !strings.Contains(got.Message, "kept connection") {
			t.Fatalf("kept probe %d: %+v", i, got)
		}
	}
	if n := h.connSeq.Load(); n != 1 || reviews() != 0 {
		t.Fatalf("after 3 kept probes: %d connections, %d reviews; want 1 and 0", n, reviews())
	}
	if got := ProbeRESTConfig(t.Context(), config, 10*time.Second, ProbeIdentity{}); got.Result != failoverv1alpha1.HubProbeReady {
		t.Fatalf("full probe: %+v", got)
	}
	if n := h.connSeq.Load(); n != 2 || reviews() != len(RequiredBootstrapPermissions()) {
		t.Fatalf("after a full probe: %d connections, %d reviews; want 2 (a connection of its own) and %d", n, reviews(), len(RequiredBootstrapPermissions()))
	}

	h.stallUpTo.Store(h.connSeq.Load()) // the kept connection (1) now leads to a peer that does not answer
	got := ProbeKeptConnection(t.Context(), config, time.Second, ProbeIdentity{})
	if got.Result != failoverv1alpha1.HubProbeReady || strings.Contains(got.Message, "kept connection") {
		t.Fatalf("kept probe on a stalled connection: %+v, want Ready from a full probe on a new connection", got)
	}
	if n := h.connSeq.Load(); n != 3 || reviews() != 2*len(RequiredBootstrapPermissions()) {
		t.Errorf("after the fallback: %d connections, %d reviews; want 3 and %d", n, reviews(), 2*len(RequiredBootstrapPermissions()))
	}
	h.down.Store(true)
	if got := ProbeKeptConnection(t.Context(), config, time.Second, ProbeIdentity{}); got.Result != failoverv1alpha1.HubProbeUnreachable {
		t.Errorf("kept probe of a hub that is down: %+v, want Unreachable", got)
	}
}

func TestFullProbeDue(t *testing.T) {
	ready := ProbeResult{Result: failoverv1alpha1.HubProbeReady}
	for _, tc := range []struct {
		name string
		h    *hubEntry
		now  time.Time
		want bool
	}{
		{"never probed", &hubEntry{}, t0, true},
		{"ready, full probe just now", &hubEntry{probed: true, probe: ready, fullProbeTime: t0}, t0.Add(30 * time.Second), false},
		{"ready, full probe one interval ago", &hubEntry{probed: true, probe: ready, fullProbeTime: t0}, t0.Add(standbyFullProbeInterval), true},
		{"last probe not ready", &hubEntry{probed: true, probe: ProbeResult{Result: failoverv1alpha1.HubProbeUnreachable}, fullProbeTime: t0}, t0.Add(time.Second), true},
		{"bootstrap kubeconfig reloaded (probed reset)", &hubEntry{probe: ready, fullProbeTime: t0}, t0.Add(time.Second), true},
	} {
		if got := fullProbeDue(tc.h, tc.now); got != tc.want {
			t.Errorf("%s: fullProbeDue = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A standby hub whose serving certificate changes to one the bootstrap kubeconfig does not trust: a probe on the
// kept connection, verified before the change, still answers Ready; a full probe (the next one is at most
// standbyFullProbeInterval later, TestFullProbeDue) dials anew and reports ServerUntrusted (FC-03).
func TestFullProbeSeesAChangedServingCertificate(t *testing.T) {
	h := &fakeHub{}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	// The certificate served is read at each handshake from serving, so it can change while the server runs.
	var serving atomic.Pointer[tls.Certificate]
	serving.Store(&srv.TLS.Certificates[0])
	srv.TLS.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return serving.Load(), nil }
	srv.TLS.Certificates = nil // before any connection: GetCertificate answers every handshake
	config, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig(t, kubeconfigOptions{server: srv.URL, ca: caOf(srv), token: testToken}))
	if err != nil {
		t.Fatal(err)
	}
	if got := ProbeKeptConnection(t.Context(), config, 10*time.Second, ProbeIdentity{}); got.Result != failoverv1alpha1.HubProbeReady {
		t.Fatalf("kept probe before the change: %+v", got)
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	untrusted, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	serving.Store(&untrusted) // new handshakes only
	if got := ProbeKeptConnection(t.Context(), config, 10*time.Second, ProbeIdentity{}); got.Result != failoverv1alpha1.HubProbeReady {
		t.Fatalf("kept probe after the change: %+v, want Ready (the connection verified before it)", got)
	}
	got := ProbeRESTConfig(t.Context(), config, 10*time.Second, ProbeIdentity{})
	if got.Result != failoverv1alpha1.HubProbeServerUntrusted || !strings.Contains(got.Message, "not trusted") {
		t.Errorf("full probe after the change: %+v, want ServerUntrusted", got)
	}
}
