package util

import (
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// ClientCA issues certificates with a hub's client CA (the one its apiserver trusts for client certificates and
// its signer issues approved CSRs with), so that tests can make certificates the agent would not: expired ones,
// or ones for another key.
type ClientCA struct {
	hub *framework.Hub
}

// HubClientCA returns the client CA of hub.
func HubClientCA(_ testing.TB, hub *framework.Hub) *ClientCA {
	return &ClientCA{hub: hub}
}

// IssueClientCert issues a client certificate for user in groups, valid from notBefore to notAfter, for a new
// key. It returns both as PEM. It fails t through the hub's test on error.
func (ca *ClientCA) IssueClientCert(t testing.TB, user string, groups []string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	return ca.hub.IssueClientCert(user, groups, notBefore, notAfter)
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
