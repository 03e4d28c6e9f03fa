package util

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// caFlags are the command-line flags whose value is the hub client CA certificate file: kube-apiserver's
// --client-ca-file and kube-controller-manager's --cluster-signing-cert-file. The CA key lives next to it as
// ca.key (test/framework newTestCA).
var caFlags = []string{"--client-ca-file=", "--cluster-signing-cert-file="}

// ClientCA is a hub's client CA (the one its apiserver trusts for client certificates and its signer issues
// approved CSRs with), loaded so that tests can issue certificates the framework does not: expired ones, or
// ones for a key the test chose.
type ClientCA struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// HubClientCA finds the files of hub's client CA through the command line of the hub's running kube-apiserver
// (or kube-controller-manager), checks the certificate equals hub.ClientCAData() and loads its key. The
// framework keeps the CA key private; this reads the same files its processes read. Linux only (/proc).
func HubClientCA(t testing.TB, hub *framework.Hub) *ClientCA {
	t.Helper()
	want := hub.ClientCAData()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatalf("hub %s client CA: listing processes: %v", hub.Name, err)
	}
	for _, p := range procs {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, arg := range strings.Split(string(raw), "\x00") {
			for _, flag := range caFlags {
				file, ok := strings.CutPrefix(arg, flag)
				if !ok {
					continue
				}
				data, err := os.ReadFile(file)
				if err != nil || !bytes.Equal(bytes.TrimSpace(data), bytes.TrimSpace(want)) {
					continue
				}
				return loadClientCA(t, hub.Name, file, filepath.Join(filepath.Dir(file), "ca.key"))
			}
		}
	}
	t.Fatalf("hub %s client CA: no running process has %v pointing at a file equal to hub.ClientCAData()", hub.Name, caFlags)
	return nil
}

func loadClientCA(t testing.TB, hubName, certFile, keyFile string) *ClientCA {
	t.Helper()
	certs, err := cert.CertsFromFile(certFile)
	if err != nil {
		t.Fatalf("hub %s client CA %s: %v", hubName, certFile, err)
	}
	key, err := keyutil.PrivateKeyFromFile(keyFile)
	if err != nil {
		t.Fatalf("hub %s client CA key %s: %v", hubName, keyFile, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		t.Fatalf("hub %s client CA key %s: %T is not a signer", hubName, keyFile, key)
	}
	return &ClientCA{cert: certs[0], key: signer}
}

// IssueClientCert issues a client certificate (client auth, digital signature + key encipherment) for user in
// groups, valid from notBefore to notAfter, for a new ECDSA P-256 key. It returns both as PEM.
func (ca *ClientCA) IssueClientCert(t testing.TB, user string, groups []string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generating a key for %q: %v", user, err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64))
	if err != nil {
		t.Fatalf("serial number: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial.Add(serial, big.NewInt(1)),
		Subject:               pkix.Name{CommonName: user, Organization: groups},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatalf("issuing a certificate for %q: %v", user, err)
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatalf("encoding the key of %q: %v", user, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: cert.CertificateBlockType, Bytes: der}), keyPEM
}

// BootstrapKubeconfigWithCert returns hub's bootstrap kubeconfig with its client certificate and key replaced by
// certPEM and keyPEM (for example an expired bootstrap identity).
func BootstrapKubeconfigWithCert(t testing.TB, hub *framework.Hub, certPEM, keyPEM []byte) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(hub.BootstrapKubeconfig())
	if err != nil {
		t.Fatalf("parsing the bootstrap kubeconfig of hub %s: %v", hub.Name, err)
	}
	kctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok || cfg.AuthInfos[kctx.AuthInfo] == nil {
		t.Fatalf("bootstrap kubeconfig of hub %s: current context %q has no user", hub.Name, cfg.CurrentContext)
	}
	user := cfg.AuthInfos[kctx.AuthInfo]
	user.ClientCertificateData, user.ClientKeyData = certPEM, keyPEM
	user.ClientCertificate, user.ClientKey = "", ""
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatalf("writing the bootstrap kubeconfig of hub %s: %v", hub.Name, err)
	}
	return out
}

// ExpiredBootstrapKubeconfig returns hub's bootstrap kubeconfig with a bootstrap-user certificate, signed by the
// hub's client CA, that expired an hour ago.
func ExpiredBootstrapKubeconfig(t testing.TB, hub *framework.Hub, ca *ClientCA) []byte {
	t.Helper()
	now := time.Now()
	certPEM, keyPEM := ca.IssueClientCert(t, hub.BootstrapUser(), []string{framework.BootstrapGroup}, now.Add(-48*time.Hour), now.Add(-time.Hour))
	return BootstrapKubeconfigWithCert(t, hub, certPEM, keyPEM)
}
