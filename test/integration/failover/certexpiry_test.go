package failover_test

import (
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	// shortCertificateDuration caps the client certificates hub A issues (FC-08, shortened from 10 minutes).
	shortCertificateDuration = 90 * time.Second
	// maxCutConnectionsPerSecond bounds the agent's connection attempts to the cut-off hub (see
	// maxConnectionsPerSecond).
	maxCutConnectionsPerSecond = 5
)

// TestCertificateExpiresWhileHubUnreachable is FC-08, shortened: hub A issues 90s certificates; after the join
// it is cut off until the client certificate has expired, then healed. While cut off, the agent backs off (a
// bounded number of connections); afterwards it re-bootstraps with the bootstrap kubeconfig (a new CSR from the
// bootstrap user, the same cluster name) instead of retrying with the expired certificate, and the cluster is
// Available on hub A again. Only the primary hub is configured.
func TestCertificateExpiresWhileHubUnreachable(t *testing.T) {
	t.Parallel()
	var proxyA *util.CountingProxy
	b := newBed(t, bedOptions{
		noFailoverConfig: true,
		noHubB:           true,
		hubA:             framework.HubOptions{CertificateDuration: shortCertificateDuration},
		beforeAgent:      func(b *bed) { proxyA = util.StartCountingProxy(t, b.hubA.URL()) },
		primaryBootstrap: func(b *bed) []byte { return util.WithServer(t, b.hubA.BootstrapKubeconfig(), proxyA.URL()) },
	})

	b.hubA.Proxy.Cut()
	cut := time.Now()
	before := proxyA.Connections()
	// The certificate in the Secret when the hub was cut off (a rotation may have happened before the cut).
	expired := leafCertificate(t, util.HubKubeconfigSecret(t, b.spoke).Data[clientcert.TLSCertSecretKey])
	wait := time.Until(expired.NotAfter) + 2*time.Second
	if wait > shortCertificateDuration+5*time.Second {
		t.Fatalf("client certificate valid until %s, more than %s from now: the hub did not cap it", expired.NotAfter, shortCertificateDuration)
	}
	t.Logf("hub A cut off; client certificate %s expires in %s", expired.SerialNumber, time.Until(expired.NotAfter).Round(time.Second))
	framework.Consistently(t, wait, time.Second, func() (bool, error) {
		done, _ := b.agent.Exited()
		return !done, nil
	}, "agent keeps running while hub A is cut off")
	n := proxyA.Connections() - before
	cutFor := time.Since(cut)
	t.Logf("%d connections to the cut-off hub in %s (%.2f/s)", n, cutFor.Round(time.Second), float64(n)/cutFor.Seconds())
	if limit := int64(maxCutConnectionsPerSecond * cutFor.Seconds()); n > limit {
		t.Errorf("%d connections to the cut-off hub in %s, more than %d: no back-off", n, cutFor.Round(time.Second), limit)
	}

	healed := time.Now()
	b.hubA.Proxy.Heal()
	// A new CSR from the bootstrap user, i.e. a re-bootstrap (a renewal would come from the agent user, and
	// cannot work with an expired certificate).
	framework.Eventually(t, joinTimeout, util.PollInterval, func() (bool, error) {
		csrs, err := b.hubA.Kube.CertificatesV1().CertificateSigningRequests().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, csr := range csrs.Items {
			if csr.Spec.Username == b.hubA.BootstrapUser() && csr.CreationTimestamp.Time.After(healed.Add(-time.Second)) && approved(&csr) {
				return true, nil
			}
		}
		return false, nil
	}, "a CSR from the bootstrap user after hub A was healed")
	framework.Eventually(t, joinTimeout, util.PollInterval, func() (bool, error) {
		s := util.HubKubeconfigSecret(t, b.spoke)
		if s == nil {
			return false, nil
		}
		leaf := leafCertificate(t, s.Data[clientcert.TLSCertSecretKey])
		return leaf.NotAfter.After(time.Now()) && leaf.SerialNumber.Cmp(expired.SerialNumber) != 0, nil
	}, "a new, valid client certificate in the hub kubeconfig secret")
	util.WaitForClusterAvailable(t, b.hubA, clusterName, joinTimeout)
	t.Logf("re-bootstrapped and Available on hub A %s after it was healed", time.Since(healed).Round(100*time.Millisecond))
	secret := util.HubKubeconfigSecret(t, b.spoke)
	if got := string(secret.Data[clientcert.ClusterNameSecretKey]); got != clusterName {
		t.Errorf("cluster-name %q after the re-bootstrap, want %q", got, clusterName)
	}
	b.expectNotExited(t)
}

// leafCertificate parses the first certificate of pemData.
func leafCertificate(t *testing.T, pemData []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(pemData)
	if block == nil {
		t.Fatalf("no PEM certificate in the hub kubeconfig secret")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("parse the client certificate: %v", err)
	}
	return cert
}

// approved reports whether csr has the Approved condition.
func approved(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}
