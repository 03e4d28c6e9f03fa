package framework

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

const (
	// clientCertLifetime is the lifetime of the certificates the framework issues directly (admin and bootstrap
	// users): long enough for any test run.
	clientCertLifetime = 365 * 24 * time.Hour

	// signingBackdate and signingShort mirror kube-controller-manager's csrsigning policy
	// (k8s.io/kubernetes pkg/controller/certificates/signer): NotBefore is backdated 5 minutes, and NotAfter is
	// backdated too unless the lifetime is shorter than 8 hours.
	signingBackdate = 5 * time.Minute
	signingShort    = 8 * time.Hour
	// minRequestedDuration is kube-controller-manager's lower bound for spec.expirationSeconds.
	minRequestedDuration = 10 * time.Minute
)

// testCA is a client CA of a control plane. The signing CA (controlPlane.ca) signs the bootstrap user, test
// users and, through kube-controller-manager or the in-process signer, approved CSRs; the admin CA
// (controlPlane.adminCA) signs the admin and controllers identities. kube-apiserver trusts both
// (--client-ca-file is a bundle of the two). Its cert and key are PEM files in the control plane's directory.
// rotate replaces the CA in place; the files are rewritten, so processes that reload them follow.
type testCA struct {
	certFile string
	keyFile  string

	mu      sync.RWMutex
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
}

// newTestCA creates a self-signed ECDSA P-256 CA named commonName and writes ca.crt and ca.key into dir.
func newTestCA(commonName, dir string) (*testCA, error) {
	ca := &testCA{certFile: filepath.Join(dir, "ca.crt"), keyFile: filepath.Join(dir, "ca.key")}
	if err := ca.rotate(commonName); err != nil {
		return nil, err
	}
	return ca, nil
}

// rotate gives the CA a new key and self-signed certificate named commonName and rewrites its files (key first,
// each through a rename, so a reader never sees half a file).
func (ca *testCA) rotate(commonName string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating the key of CA %q: %w", commonName, err)
	}
	caCert, err := cert.NewSelfSignedCACert(cert.Config{CommonName: commonName}, key)
	if err != nil {
		return fmt.Errorf("self-signing CA %q: %w", commonName, err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return fmt.Errorf("encoding the key of CA %q: %w", commonName, err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: cert.CertificateBlockType, Bytes: caCert.Raw})
	if err := writeFileAtomic(ca.keyFile, keyPEM); err != nil {
		return fmt.Errorf("writing the key of CA %q: %w", commonName, err)
	}
	if err := writeFileAtomic(ca.certFile, certPEM); err != nil {
		return fmt.Errorf("writing CA %q: %w", commonName, err)
	}
	ca.mu.Lock()
	ca.cert, ca.key, ca.certPEM = caCert, key, certPEM
	ca.mu.Unlock()
	return nil
}

// pem returns the CA certificate (PEM).
func (ca *testCA) pem() []byte {
	ca.mu.RLock()
	defer ca.mu.RUnlock()
	return ca.certPEM
}

// writeFileAtomic writes data to path (0600) through a temporary file in the same directory and a rename.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// newClientCert issues a client certificate with CN user and O groups, valid from a minute ago for
// clientCertLifetime, and returns the PEM-encoded certificate and its new ECDSA P-256 key.
func (ca *testCA) newClientCert(user string, groups []string) (certPEM, keyPEM []byte, err error) {
	now := time.Now()
	return ca.newClientCertValidity(user, groups, now.Add(-time.Minute), now.Add(clientCertLifetime))
}

// newClientCertValidity is newClientCert with an explicit validity window.
func (ca *testCA) newClientCertValidity(user string, groups []string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating a key for user %q: %w", user, err)
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := ca.issue(tmpl, key.Public())
	if err != nil {
		return nil, nil, fmt.Errorf("issuing a client certificate for user %q: %w", user, err)
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the key of user %q: %w", user, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: cert.CertificateBlockType, Bytes: der}), keyPEM, nil
}

// signCSR signs a kubernetes.io/kube-apiserver-client request the way kube-controller-manager's csrsigning
// controller does: subject and SANs from the request, key usages from the CSR's spec.usages (only digital
// signature, key encipherment and client auth are accepted, client auth is required), lifetime from
// requestedDuration(expirationSeconds, maxDuration), NotBefore backdated by 5 minutes. It returns the PEM
// certificate.
func (ca *testCA) signCSR(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage, ttl time.Duration, now time.Time) ([]byte, error) {
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("checking the request signature: %w", err)
	}
	tmpl := &x509.Certificate{
		Subject:        req.Subject,
		DNSNames:       req.DNSNames,
		IPAddresses:    req.IPAddresses,
		EmailAddresses: req.EmailAddresses,
		URIs:           req.URIs,
		NotBefore:      now.Add(-signingBackdate),
	}
	if ttl < signingShort {
		tmpl.NotAfter = now.Add(ttl)
	} else {
		tmpl.NotAfter = now.Add(ttl - signingBackdate)
	}
	ca.mu.RLock()
	caNotAfter := ca.cert.NotAfter
	ca.mu.RUnlock()
	if tmpl.NotAfter.After(caNotAfter) {
		tmpl.NotAfter = caNotAfter
	}
	clientAuth := false
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature:
			tmpl.KeyUsage |= x509.KeyUsageDigitalSignature
		case certificatesv1.UsageKeyEncipherment:
			tmpl.KeyUsage |= x509.KeyUsageKeyEncipherment
		case certificatesv1.UsageClientAuth:
			clientAuth = true
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		default:
			return nil, fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !clientAuth {
		return nil, fmt.Errorf("missing required usage for client certificate: %s", certificatesv1.UsageClientAuth)
	}
	der, err := ca.issue(tmpl, req.PublicKey)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: cert.CertificateBlockType, Bytes: der}), nil
}

// issue signs tmpl for pub with a random serial number and returns the DER certificate.
func (ca *testCA) issue(tmpl *x509.Certificate, pub any) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).SetInt64(math.MaxInt64))
	if err != nil {
		return nil, fmt.Errorf("generating a serial number: %w", err)
	}
	tmpl.SerialNumber = serial.Add(serial, big.NewInt(1))
	tmpl.BasicConstraintsValid = true
	ca.mu.RLock()
	defer ca.mu.RUnlock()
	return x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
}

// requestedDuration returns the lifetime kube-controller-manager gives a certificate: maxDuration (its
// --cluster-signing-duration) when expirationSeconds is nil or asks for more, at least 10 minutes otherwise.
func requestedDuration(expirationSeconds *int32, maxDuration time.Duration) time.Duration {
	if expirationSeconds == nil {
		return maxDuration
	}
	d := time.Duration(*expirationSeconds) * time.Second
	switch {
	case d > maxDuration:
		return maxDuration
	case d < minRequestedDuration:
		return minRequestedDuration
	default:
		return d
	}
}
