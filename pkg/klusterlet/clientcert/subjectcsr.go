package clientcert

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// SubjectCSRRequest describes a CSR for an arbitrary subject and signer (an add-on's registration), as opposed to
// NewCSR, which always asks for the agent's own identity.
type SubjectCSRRequest struct {
	// GenerateName and Labels go into the CSR's metadata.
	GenerateName string
	Labels       map[string]string
	// Subject is the certificate request's subject (CN, O, OU).
	Subject pkix.Name
	// DNSNames are the request's DNS subject alternative names; may be empty.
	DNSNames []string
	// SignerName is spec.signerName, e.g. kubernetes.io/kube-apiserver-client or a custom signer.
	SignerName string
	// ExpirationSeconds, if not nil, is copied to spec.expirationSeconds.
	ExpirationSeconds *int32
}

// NewSubjectCSR returns the CertificateSigningRequest for r, its spec.request a PEM "CERTIFICATE REQUEST"
// (cert.MakeCSR) signed by keyPEM, usages CSRUsages. It fails on an unparsable key, an empty signer or an empty
// subject CN.
func NewSubjectCSR(r SubjectCSRRequest, keyPEM []byte) (*certificatesv1.CertificateSigningRequest, error) {
	switch {
	case r.SignerName == "":
		return nil, errors.New("CSR: signer name is empty")
	case r.Subject.CommonName == "":
		return nil, fmt.Errorf("CSR for signer %s: subject CN is empty", r.SignerName)
	}
	key, err := parsePrivateKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("CSR for %q: %w", r.Subject.CommonName, err)
	}
	subject := r.Subject
	request, err := certutil.MakeCSR(key, &subject, r.DNSNames, nil)
	if err != nil {
		return nil, fmt.Errorf("CSR for %q: %w", r.Subject.CommonName, err)
	}
	var expiration *int32
	if r.ExpirationSeconds != nil {
		v := *r.ExpirationSeconds
		expiration = &v
	}
	labels := make(map[string]string, len(r.Labels))
	for k, v := range r.Labels {
		labels[k] = v
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: r.GenerateName, Labels: labels},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           request,
			SignerName:        r.SignerName,
			Usages:            CSRUsages(),
			ExpirationSeconds: expiration,
		},
	}, nil
}

// VerifyCertificateForKey checks a certificate issued for a CSR of any subject before it is stored: certPEM parses,
// its leaf matches keyPEM and has not expired at now. Returns the leaf.
func VerifyCertificateForKey(certPEM, keyPEM []byte, now time.Time) (*x509.Certificate, error) {
	leaf, err := parseLeafCertificate(certPEM)
	if err != nil {
		return nil, fmt.Errorf("issued certificate unparsable: %w", err)
	}
	if ie := checkKeyMatches(certPEM, keyPEM); ie != nil {
		return nil, errors.New("issued certificate does not match the CSR's private key")
	}
	if !now.Before(leaf.NotAfter) {
		return nil, fmt.Errorf("issued certificate expired at %s", text.Time(leaf.NotAfter))
	}
	return leaf, nil
}

// CertificateMatchesKey reports whether the leaf of certPEM parses and belongs to keyPEM.
func CertificateMatchesKey(certPEM, keyPEM []byte) bool {
	return checkKeyMatches(certPEM, keyPEM) == nil
}

// ParseLeafCertificate returns the first certificate of a PEM chain.
func ParseLeafCertificate(certPEM []byte) (*x509.Certificate, error) {
	return parseLeafCertificate(certPEM)
}
