// Package clientcerttesting has builders for tests of the agent's credential protocol: a throw-away CA that
// signs CSRs and client certificates, hub kubeconfig Secret data, and approved / denied CSRs. It returns errors
// instead of failing a *testing.T so that both unit tests and Ginkgo suites can use it. Never use it outside
// tests: keys are generated without any hardening.
package clientcerttesting

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

// CA is a test certificate authority (ECDSA P-256).
type CA struct {
	// Cert is the self-signed CA certificate.
	Cert *x509.Certificate
	// Key signs certificates.
	Key crypto.Signer
	// CertPEM is Cert in PEM, e.g. for a kubeconfig's certificate-authority-data.
	CertPEM []byte
	// KeyPEM is Key in PEM, e.g. for kube-controller-manager --cluster-signing-key-file.
	KeyPEM []byte
}

// NewCA returns a CA with subject CN commonName valid for ten years from now.
func NewCA(commonName string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: commonName}, key)
	if err != nil {
		return nil, err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, err
	}
	return &CA{
		Cert:    cert,
		Key:     key,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: cert.Raw}),
		KeyPEM:  keyPEM,
	}, nil
}

// Sign issues a client certificate (digital signature, key encipherment, client auth) for pub with subject
// valid from notBefore to notAfter, returned as PEM.
func (ca *CA) Sign(subject pkix.Name, pub crypto.PublicKey, notBefore, notAfter time.Time) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, pub, ca.Key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: der}), nil
}

// SignCSR issues a certificate for a PEM "CERTIFICATE REQUEST" (e.g. a CSR's spec.request), copying its subject,
// valid from notBefore to notAfter, as the kube-apiserver-client signer would.
func (ca *CA) SignCSR(requestPEM []byte, notBefore, notAfter time.Time) ([]byte, error) {
	block, _ := pem.Decode(requestPEM)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("not a PEM CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, err
	}
	if err := req.CheckSignature(); err != nil {
		return nil, err
	}
	return ca.Sign(req.Subject, req.PublicKey, notBefore, notAfter)
}

// IssueClientCert makes a fresh ECDSA P-256 key and a certificate for the agent identity cluster/agent
// (CN and O as on the wire) valid from notBefore to notAfter, both as PEM.
func (ca *CA) IssueClientCert(clusterName, agentName string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	return ca.IssueClientCertWithSubject(pkix.Name{
		CommonName:   clientcert.CommonName(clusterName, agentName),
		Organization: clientcert.Organizations(clusterName),
	}, notBefore, notAfter)
}

// IssueClientCertWithSubject is IssueClientCert with an arbitrary subject.
func (ca *CA) IssueClientCertWithSubject(subject pkix.Name, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	keyPEM, err = keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, nil, err
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, nil, err
	}
	certPEM, err = ca.Sign(subject, key.(crypto.Signer).Public(), notBefore, notAfter)
	if err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

// NewHubKubeconfigSecretData returns valid hub kubeconfig Secret data (all five keys) for cluster/agent on
// hub, with a certificate from ca valid from notBefore to notAfter.
func NewHubKubeconfigSecretData(ca *CA, hub clientcert.HubInfo, clusterName, agentName string, notBefore, notAfter time.Time) (map[string][]byte, error) {
	certPEM, keyPEM, err := ca.IssueClientCert(clusterName, agentName, notBefore, notAfter)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := clientcert.BuildHubKubeconfig(hub)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		failoverv1alpha1.KubeconfigSecretKey: kubeconfig,
		clientcert.TLSCertSecretKey:          certPEM,
		clientcert.TLSKeySecretKey:           keyPEM,
		clientcert.ClusterNameSecretKey:      []byte(clusterName),
		clientcert.AgentNameSecretKey:        []byte(agentName),
	}, nil
}

// NewSecret wraps data in a Secret namespace/name.
func NewSecret(namespace, name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, ResourceVersion: "1"},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// Approve returns a copy of csr with an Approved condition and, if certPEM is not nil, status.certificate.
func Approve(csr *certificatesv1.CertificateSigningRequest, certPEM []byte) *certificatesv1.CertificateSigningRequest {
	out := csr.DeepCopy()
	out.Status.Conditions = append(out.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "approved by test",
	})
	out.Status.Certificate = certPEM
	return out
}

// Deny returns a copy of csr with a Denied condition.
func Deny(csr *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
	out := csr.DeepCopy()
	out.Status.Conditions = append(out.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "Test", Message: "denied by test",
	})
	return out
}

// ApproveAndSign approves csr with a certificate ca signs for its spec.request, valid from notBefore to notAfter.
func ApproveAndSign(ca *CA, csr *certificatesv1.CertificateSigningRequest, notBefore, notAfter time.Time) (*certificatesv1.CertificateSigningRequest, error) {
	certPEM, err := ca.SignCSR(csr.Spec.Request, notBefore, notAfter)
	if err != nil {
		return nil, fmt.Errorf("sign CSR %s: %w", csr.Name, err)
	}
	return Approve(csr, certPEM), nil
}
