package testbed_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

const (
	testCluster = "c1"
	testAgent   = "a1"
	// signingTimeout bounds approval and signing on a loaded 2-core machine.
	signingTimeout = 30 * time.Second
	pollInterval   = 100 * time.Millisecond
	// backdate is how far both signers move NotBefore into the past.
	backdate = 5 * time.Minute
)

// TestBootstrapCSRIsSigned creates a CSR with the hub's bootstrap identity, approves it like clusteradm accept and
// checks the signed certificate: it chains to the hub's client CA, honours spec.expirationSeconds and the
// signing-duration cap, and authenticates its holder as the agent user.
func TestBootstrapCSRIsSigned(t *testing.T) {
	cases := []struct {
		name              string
		opts              framework.HubOptions
		expirationSeconds int32
		wantLifetime      time.Duration // NotAfter - NotBefore - backdate
	}{
		{
			name:              "kube-controller-manager honours expirationSeconds",
			opts:              framework.HubOptions{Name: "kcm", Signer: framework.SignerKCM},
			expirationSeconds: 900,
			wantLifetime:      15 * time.Minute,
		},
		{
			name:              "in-process signer caps at CertificateDuration",
			opts:              framework.HubOptions{Name: "inproc", Signer: framework.SignerInProcess, CertificateDuration: 2 * time.Minute},
			expirationSeconds: 900,
			wantLifetime:      2 * time.Minute,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hub := framework.StartHub(t, tc.opts)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()

			bootstrapConfig, err := clientcmd.RESTConfigFromKubeConfig(hub.BootstrapKubeconfig())
			if err != nil {
				t.Fatalf("parsing the bootstrap kubeconfig: %v", err)
			}
			bootstrapClient := kubernetes.NewForConfigOrDie(bootstrapConfig)

			key, csr := newAgentCSR(t, testCluster, testAgent, &tc.expirationSeconds)
			created, err := bootstrapClient.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("creating a CSR as the bootstrap user: %v", err)
			}
			if created.Spec.Username != hub.BootstrapUser() || !slices.Contains(created.Spec.Groups, framework.BootstrapGroup) {
				t.Fatalf("CSR requested by %q in %v, want %q in group %q", created.Spec.Username, created.Spec.Groups,
					hub.BootstrapUser(), framework.BootstrapGroup)
			}
			if err := hub.ApproveCSR(ctx, created.Name); err != nil {
				t.Fatal(err)
			}

			certPEM := waitForCertificate(t, bootstrapClient, created.Name)
			issued := parseCertificate(t, certPEM)

			roots := x509.NewCertPool()
			if !roots.AppendCertsFromPEM(hub.ClientCAData()) {
				t.Fatal("hub client CA data holds no certificate")
			}
			if _, err := issued.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
				t.Fatalf("issued certificate does not chain to the hub client CA: %v", err)
			}
			if !issued.PublicKey.(*ecdsa.PublicKey).Equal(key.Public()) {
				t.Fatal("issued certificate does not carry the CSR's public key")
			}
			if got := issued.NotAfter.Sub(issued.NotBefore) - backdate; got != tc.wantLifetime {
				t.Errorf("certificate lifetime %s (NotBefore %s, NotAfter %s), want %s after the %s backdate",
					got, issued.NotBefore, issued.NotAfter, tc.wantLifetime, backdate)
			}

			keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
			if err != nil {
				t.Fatal(err)
			}
			agentConfig := &rest.Config{Host: hub.URL(), TLSClientConfig: rest.TLSClientConfig{CAData: hub.CAData(), CertData: certPEM, KeyData: keyPEM}}
			agentClient := kubernetes.NewForConfigOrDie(agentConfig)
			review, err := agentClient.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("SelfSubjectReview with the issued certificate: %v", err)
			}
			want := authenticationv1.UserInfo{
				Username: framework.AgentUser(testCluster, testAgent),
				Groups:   append(framework.AgentGroups(testCluster), "system:authenticated"),
			}
			got := authenticationv1.UserInfo{Username: review.Status.UserInfo.Username, Groups: review.Status.UserInfo.Groups}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("identity of the issued certificate (-want +got):\n%s", diff)
			}
			// Authenticated but not yet authorized: the hub has not accepted the cluster.
			_, err = clusterclientset.NewForConfigOrDie(agentConfig).ClusterV1().ManagedClusters().Get(ctx, testCluster, metav1.GetOptions{})
			if !apierrors.IsForbidden(err) {
				t.Errorf("getting ManagedCluster %s as the agent before acceptance: got %v, want 403 Forbidden", testCluster, err)
			}

			// An expired bootstrap identity is not authenticated at all.
			now := time.Now()
			expired, err := clientcmd.RESTConfigFromKubeConfig(
				hub.UserKubeconfig(hub.BootstrapUser(), now.Add(-2*time.Hour), now.Add(-time.Hour), framework.BootstrapGroup))
			if err != nil {
				t.Fatalf("parsing the expired bootstrap kubeconfig: %v", err)
			}
			_, err = kubernetes.NewForConfigOrDie(expired).CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
			if !apierrors.IsUnauthorized(err) {
				t.Errorf("listing CSRs with an expired bootstrap certificate: got %v, want 401 Unauthorized", err)
			}
		})
	}
}

// newAgentCSR returns a fresh ECDSA P-256 key and an OCM agent CSR for it (design.md §4).
func newAgentCSR(t *testing.T, cluster, agent string, expirationSeconds *int32) (*ecdsa.PrivateKey, *certificatesv1.CertificateSigningRequest) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	request, err := cert.MakeCSR(key, &pkix.Name{CommonName: framework.AgentUser(cluster, agent), Organization: framework.AgentGroups(cluster)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return key, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: cluster + "-",
			Labels:       map[string]string{clusterv1.ClusterNameLabelKey: cluster},
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           request,
			SignerName:        certificatesv1.KubeAPIServerClientSignerName,
			ExpirationSeconds: expirationSeconds,
			Usages: []certificatesv1.KeyUsage{
				certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth,
			},
		},
	}
}

// waitForCertificate waits until CSR name carries a certificate and returns it.
func waitForCertificate(t *testing.T, client kubernetes.Interface, name string) []byte {
	t.Helper()
	var certPEM []byte
	framework.Eventually(t, signingTimeout, pollInterval, func() (bool, error) {
		csr, err := client.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		certPEM = csr.Status.Certificate
		return len(certPEM) > 0, nil
	}, "CSR %s signed", name)
	return certPEM
}

func parseCertificate(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatalf("status.certificate is not PEM: %q", certPEM)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("parsing status.certificate: %v", err)
	}
	return c
}
