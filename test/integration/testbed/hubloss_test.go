package testbed_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

const (
	// requestTimeout bounds a probe request, retries included, that is expected to fail, so that black-holed
	// requests fail fast.
	requestTimeout = 2 * time.Second
	// upRequestTimeout bounds a probe request that is expected to succeed: a healthy hub may take seconds to
	// answer on a loaded 2-core machine.
	upRequestTimeout = 20 * time.Second
	// recoveryTimeout bounds how long clients take to reach the hub again after Heal or StartAPIServer.
	recoveryTimeout = 30 * time.Second
)

// TestHubLoss checks that a test can take a hub away and give it back: through the proxy (Cut, Blackhole, Heal)
// and by stopping and restarting the apiserver, after which clients built before the stop reconnect, the data is
// still there, and the hub controller and kube-controller-manager still approve and sign CSRs.
func TestHubLoss(t *testing.T) {
	hub := framework.StartHub(t, framework.HubOptions{Name: "lossy", Signer: framework.SignerKCM, HubController: true, Proxy: true})

	bootstrapConfig, err := clientcmd.RESTConfigFromKubeConfig(hub.BootstrapKubeconfig())
	if err != nil {
		t.Fatalf("parsing the bootstrap kubeconfig: %v", err)
	}
	if bootstrapConfig.Host != hub.Proxy.URL() {
		t.Fatalf("bootstrap kubeconfig server %q, want the proxy %q", bootstrapConfig.Host, hub.Proxy.URL())
	}
	viaProxy := probe(t, bootstrapConfig)
	direct := probe(t, hub.AdminConfig)

	expectUp(t, viaProxy, "through the proxy at start")

	hub.Proxy.Cut()
	expectDown(t, viaProxy, "through the proxy while cut")
	expectUp(t, direct, "directly while the proxy is cut")
	hub.Proxy.Heal()
	eventuallyUp(t, viaProxy, "through the proxy after Heal from Cut")

	hub.Proxy.Blackhole()
	expectDown(t, viaProxy, "through the proxy while black-holed")
	hub.Proxy.Heal()
	eventuallyUp(t, viaProxy, "through the proxy after Heal from Blackhole")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	marker := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "survives-restart", Namespace: "default"}}
	if _, err := hub.Kube.CoreV1().ConfigMaps("default").Create(ctx, marker, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	hub.StopAPIServer()
	expectDown(t, direct, "directly while the apiserver is stopped")
	expectDown(t, viaProxy, "through the proxy while the apiserver is stopped")
	hub.StartAPIServer()
	eventuallyUp(t, direct, "directly after StartAPIServer")
	eventuallyUp(t, viaProxy, "through the proxy after StartAPIServer")
	if _, err := hub.Kube.CoreV1().ConfigMaps("default").Get(ctx, marker.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap created before the restart: %v", err)
	}

	bootstrapKube := kubernetes.NewForConfigOrDie(bootstrapConfig)
	_, csr := newAgentCSR(t, testCluster, testAgent, nil)
	created, err := bootstrapKube.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a CSR after the restart: %v", err)
	}
	waitForCertificate(t, bootstrapKube, created.Name) // auto-approved by the hub controller, signed by KCM
}

// probe returns a function that makes one authenticated request (list CSRs, which the bootstrap user may do)
// with cfg within timeout and returns its error. The deadline covers client-go's own retries of dropped
// connections.
func probe(t *testing.T, cfg *rest.Config) func(timeout time.Duration) error {
	t.Helper()
	client := kubernetes.NewForConfigOrDie(cfg)
	return func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err := client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{Limit: 1})
		return err
	}
}

func expectUp(t *testing.T, request func(time.Duration) error, what string) {
	t.Helper()
	if err := request(upRequestTimeout); err != nil {
		t.Fatalf("request %s failed: %v", what, err)
	}
}

func expectDown(t *testing.T, request func(time.Duration) error, what string) {
	t.Helper()
	if err := request(requestTimeout); err == nil {
		t.Fatalf("request %s succeeded, want an error", what)
	}
}

// eventuallyUp retries until a request succeeds; each attempt gets requestTimeout, so that a connection the
// black hole left hanging is given up and retried rather than waited on.
func eventuallyUp(t *testing.T, request func(time.Duration) error, what string) {
	t.Helper()
	framework.Eventually(t, recoveryTimeout, pollInterval, func() (bool, error) {
		err := request(requestTimeout)
		return err == nil, err
	}, "request %s", what)
}
