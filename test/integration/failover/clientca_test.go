package failover_test

import (
	"crypto/x509"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// TestHubClientCARotated: hub A, the only hub, is restored with another client CA. The agent's certificate is
// still within its validity but every request with it is answered 401; the admin installs the hub's new
// bootstrap kubeconfig (file rewritten). Once the rejection outlasts spec.hubRejectionGracePeriod with no other
// hub to go to, the agent obtains a new certificate with the bootstrap identity on the same hub (design §6,
// "lasting 401"): same identity, no failover, no restart.
func TestHubClientCARotated(t *testing.T) {
	t.Parallel()
	b := newBed(t, bedOptions{
		noHubB: true,
		spec:   spec(connectionTimeout),
		// The bootstrap file is replaced below; no Secret may take precedence.
		mutate: func(o *klusterlet.FailoverAgentOptions) { o.BootstrapKubeconfigSecret = "" },
	})
	before := leafCertificate(t, util.HubKubeconfigSecret(t, b.spoke).Data[clientcert.TLSCertSecretKey])
	// CSRs are told apart by name, not by creation time: creationTimestamp has whole seconds, and the join's CSR
	// can fall in the same second as the end of the rotation.
	existing := map[string]bool{}
	initial, err := b.hubA.Kube.CertificatesV1().CertificateSigningRequests().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, csr := range initial.Items {
		existing[csr.Name] = true
	}

	b.hubA.RotateClientCA()
	rotated := time.Now()
	if err := os.WriteFile(b.agent.BootstrapFile, b.hubA.BootstrapKubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	if time.Now().After(before.NotAfter) {
		t.Fatalf("the agent's certificate expired (%s) before the test could show a 401 to a valid one", before.NotAfter)
	}

	util.WaitForEvent(t, b.spoke, failover.ReasonHubRejected, "requesting a new certificate with the bootstrap identity",
		rejectionGracePeriod+statusTimeout)
	t.Logf("re-bootstrap requested %.1f s after the CA rotation (grace period %s)", time.Since(rotated).Seconds(), rejectionGracePeriod)

	roots, err := certutil.NewPoolFromBytes(b.hubA.ClientCAData())
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, joinTimeout, util.PollInterval, func() (bool, error) {
		s := util.HubKubeconfigSecret(t, b.spoke)
		if s == nil {
			return false, nil
		}
		leaf := leafCertificate(t, s.Data[clientcert.TLSCertSecretKey])
		if leaf.SerialNumber.Cmp(before.SerialNumber) == 0 {
			return false, nil
		}
		_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		return err == nil, err
	}, "a certificate signed by hub A's new client CA in the hub kubeconfig secret")
	util.WaitForClusterAvailable(t, b.hubA, clusterName, joinTimeout)
	t.Logf("Available on hub A with a new certificate %.1f s after the CA rotation", time.Since(rotated).Seconds())

	b.expectSecretFor(t, b.hubA)
	csrs, err := b.hubA.Kube.CertificatesV1().CertificateSigningRequests().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fromBootstrap := 0
	for _, csr := range csrs.Items {
		if csr.Spec.Username == b.hubA.BootstrapUser() && !existing[csr.Name] {
			fromBootstrap++
			t.Logf("CSR %s from %s created %s, conditions %v, certificate %d bytes", csr.Name, csr.Spec.Username,
				csr.CreationTimestamp.UTC().Format(time.RFC3339), csr.Status.Conditions, len(csr.Status.Certificate))
			if !strings.HasPrefix(csr.Name, clusterName+"-") {
				t.Errorf("CSR %s after the rotation is not for cluster %s", csr.Name, clusterName)
			}
		}
	}
	if fromBootstrap != 1 {
		t.Errorf("%d CSRs from the bootstrap user after the CA rotation, want 1", fromBootstrap)
	}
	fc, err := util.GetFailoverConfig(b.spoke)
	if err != nil {
		t.Fatal(err)
	}
	if fc.Status.FailoverCount != 0 || fc.Status.ActiveHub != primary {
		t.Errorf("FailoverConfig status: active hub %q, failoverCount %d; want primary and 0 (nowhere to fail over to)", fc.Status.ActiveHub, fc.Status.FailoverCount)
	}
	if n := util.EventReasons(t, b.spoke)[failover.ReasonFailoverStarted]; n != 0 {
		t.Errorf("%d FailoverStarted events; there is no other hub", n)
	}
	b.expectNotExited(t)
}
