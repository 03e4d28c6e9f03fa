package clientcert

import (
	"crypto"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// NewPrivateKey returns a fresh ECDSA P-256 private key as PEM ("EC PRIVATE KEY"), made by
// keyutil.MakeEllipticPrivateKeyPEM. The agent makes one per CSR and keeps it in memory until the certificate
// is issued; it must never be logged.
func NewPrivateKey() (keyPEM []byte, err error) {
	keyPEM, err = keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, fmt.Errorf("generate ECDSA P-256 private key: %w", err)
	}
	return keyPEM, nil
}

// CSRUsages returns the key usages of an agent CSR: digital signature, key encipherment, client auth.
func CSRUsages() []certificatesv1.KeyUsage {
	return []certificatesv1.KeyUsage{
		certificatesv1.UsageDigitalSignature,
		certificatesv1.UsageKeyEncipherment,
		certificatesv1.UsageClientAuth,
	}
}

// NewCSR returns the CertificateSigningRequest the agent sends to the hub (design §4): generateName
// "<cluster>-", label ClusterNameLabel=<cluster>, signer SignerName, usages CSRUsages, and spec.request a PEM
// "CERTIFICATE REQUEST" (cert.MakeCSR) signed by keyPEM with subject CN CommonName(cluster, agent) and O
// Organizations(cluster). expirationSeconds, if not nil, is copied to spec.expirationSeconds (the signer may
// honour it; the kube-apiserver-client signer accepts >= 600).
func NewCSR(clusterName, agentName string, keyPEM []byte, expirationSeconds *int32) (*certificatesv1.CertificateSigningRequest, error) {
	key, err := parsePrivateKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("CSR for cluster %s: %w", clusterName, err)
	}
	request, err := certutil.MakeCSR(key, &pkix.Name{
		CommonName:   CommonName(clusterName, agentName),
		Organization: Organizations(clusterName),
	}, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("CSR for cluster %s: %w", clusterName, err)
	}
	var expiration *int32
	if expirationSeconds != nil {
		v := *expirationSeconds
		expiration = &v
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: clusterName + "-",
			Labels:       map[string]string{ClusterNameLabel: clusterName},
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           request,
			SignerName:        SignerName,
			Usages:            CSRUsages(),
			ExpirationSeconds: expiration,
		},
	}, nil
}

// CSROutcome is what a CSR's status says (OutcomeOf), for this package's controller and for controllers outside it
// (add-on registration).
type CSROutcome string

const (
	// CSRPending: neither denied nor failed, and no certificate yet (possibly approved, waiting for the signer).
	CSRPending CSROutcome = "Pending"
	// CSRIssued: approved and status.certificate is set.
	CSRIssued CSROutcome = "Issued"
	// CSRDenied: a Denied condition is True.
	CSRDenied CSROutcome = "Denied"
	// CSRFailed: a Failed condition is True (the signer gave up).
	CSRFailed CSROutcome = "Failed"
)

// OutcomeOf reads a CSR's status with the agent's own rules: Denied and Failed win over Approved, and an approved
// CSR without a certificate is still pending (the signer has not signed yet). The returned condition is the
// deciding one (nil when pending and not approved).
func OutcomeOf(csr *certificatesv1.CertificateSigningRequest) (CSROutcome, *certificatesv1.CertificateSigningRequestCondition) {
	var approved *certificatesv1.CertificateSigningRequestCondition
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		if c.Status == corev1.ConditionFalse {
			continue
		}
		switch c.Type {
		case certificatesv1.CertificateDenied:
			return CSRDenied, c
		case certificatesv1.CertificateFailed:
			return CSRFailed, c
		case certificatesv1.CertificateApproved:
			approved = c
		}
	}
	if approved != nil && len(csr.Status.Certificate) > 0 {
		return CSRIssued, approved
	}
	return CSRPending, approved
}

// VerifyIssuedCertificate checks a certificate a hub issued for a CSR before it is stored: certPEM parses,
// its leaf matches keyPEM, its subject is CN CommonName(cluster, agent) with O containing
// ClusterGroup(cluster), it allows client auth (when it restricts extended key usage), and it has not expired at
// now. A NotBefore after now (hub clock ahead) is accepted. Returns the leaf.
func VerifyIssuedCertificate(certPEM, keyPEM []byte, clusterName, agentName string, now time.Time) (*x509.Certificate, error) {
	leaf, err := parseLeafCertificate(certPEM)
	if err != nil {
		return nil, fmt.Errorf("issued certificate unparsable: %w", err)
	}
	if ie := checkKeyMatches(certPEM, keyPEM); ie != nil {
		return nil, errors.New("issued certificate does not match the CSR's private key")
	}
	if leaf.Subject.CommonName != CommonName(clusterName, agentName) {
		return nil, fmt.Errorf("issued certificate subject CN %q, want %q", leaf.Subject.CommonName, CommonName(clusterName, agentName))
	}
	if !slices.Contains(leaf.Subject.Organization, ClusterGroup(clusterName)) {
		return nil, fmt.Errorf("issued certificate subject O %q lacks %q", leaf.Subject.Organization, ClusterGroup(clusterName))
	}
	if len(leaf.ExtKeyUsage) > 0 && !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageClientAuth) &&
		!slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageAny) {
		return nil, errors.New("issued certificate does not allow client auth")
	}
	if !now.Before(leaf.NotAfter) {
		return nil, fmt.Errorf("issued certificate expired at %s", text.Time(leaf.NotAfter))
	}
	return leaf, nil
}

// parsePrivateKey parses a PEM private key into a crypto.Signer.
func parsePrivateKey(keyPEM []byte) (crypto.Signer, error) {
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("parse private key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("parse private key: %T is not a signing key", key)
	}
	return signer, nil
}
