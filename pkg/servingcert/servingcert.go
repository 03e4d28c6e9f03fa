// Package servingcert gives library-go's controllercmd a serving certificate for /healthz, /readyz, /livez and
// /metrics when the command line configures none: an ECDSA P-256 self-signed certificate written to a temporary
// directory and named by a generated --config (UseGenerated).
package servingcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// serviceServingCertDir is where controllercmd looks for a mounted serving certificate (tls.crt, tls.key) when
// its --config names none (library-go pkg/controller/controllercmd, AddDefaultRotationToConfig).
const serviceServingCertDir = "/var/run/secrets/serving-cert"

// servingCertValidity is the lifetime of the generated serving certificate. Nothing can verify it (it is
// self-signed), so it only needs to outlive the process.
const servingCertValidity = 365 * 24 * time.Hour

// UseGenerated makes controllercmd serve /healthz and /metrics with an ECDSA P-256 self-signed
// certificate when the command line gives no serving certificate: no --config, and no certificate mounted in
// /var/run/secrets/serving-cert. controllercmd would otherwise generate a self-signed CA and a serving
// certificate with two RSA 2048 keys, which takes 100-300 ms of the agent's start on a loaded machine. It
// writes tls.crt, tls.key (mode 0600) and config.json (a GenericOperatorConfig, operator.openshift.io/v1alpha1,
// naming the two as servingInfo.certFile and keyFile) into a new directory under os.TempDir, and sets --config
// to config.json. flags is the command's parsed flag set; call it from PreRunE, before controllercmd reads
// --config. Errors name the file that could not be written; a flag set without --config is left alone.
func UseGenerated(flags *pflag.FlagSet) error {
	config := flags.Lookup("config")
	if config == nil || config.Changed {
		return nil
	}
	if ok, _ := cert.CanReadCertAndKey(filepath.Join(serviceServingCertDir, "tls.crt"), filepath.Join(serviceServingCertDir, "tls.key")); ok {
		return nil
	}
	certPEM, keyPEM, err := selfSignedServingCert(time.Now())
	if err != nil {
		return fmt.Errorf("generating a serving certificate: %w", err)
	}
	dir, err := os.MkdirTemp("", "serving-cert-")
	if err != nil {
		return fmt.Errorf("generating a serving certificate: %w", err)
	}
	certFile, keyFile, configFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "config.json")
	if err := keyutil.WriteKey(keyFile, keyPEM); err != nil {
		return fmt.Errorf("writing the serving key %s: %w", keyFile, err)
	}
	if err := cert.WriteCert(certFile, certPEM); err != nil {
		return fmt.Errorf("writing the serving certificate %s: %w", certFile, err)
	}
	content, err := json.Marshal(map[string]any{
		"apiVersion":  "operator.openshift.io/v1alpha1",
		"kind":        "GenericOperatorConfig",
		"servingInfo": map[string]string{"certFile": certFile, "keyFile": keyFile},
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(configFile, content, 0o600); err != nil {
		return fmt.Errorf("writing the serving configuration %s: %w", configFile, err)
	}
	return flags.Set("config", configFile)
}

// selfSignedServingCert returns a PEM certificate for "localhost", valid from an hour before now for
// servingCertValidity, and its PEM ECDSA P-256 key.
func selfSignedServingCert(now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64))
	if err != nil {
		return nil, nil, err
	}
	notBefore := now.Add(-time.Hour)
	template := &x509.Certificate{
		SerialNumber:          serial.Add(serial, big.NewInt(1)),
		Subject:               pkix.Name{CommonName: fmt.Sprintf("localhost@%d", now.Unix())},
		DNSNames:              []string{"localhost"},
		NotBefore:             notBefore,
		NotAfter:              notBefore.Add(servingCertValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	certPEM, err = cert.EncodeCertificates(leaf)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}
