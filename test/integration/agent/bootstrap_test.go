package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// testBothExpired (FC-09 case 2, design §3 scenario 4): the bootstrap certificate and the hub kubeconfig
// certificate have both expired. The agent reports BootstrapKubeconfigExpired naming the bootstrap kubeconfig
// and the hub kubeconfig's cause, keeps running, sends no CSR, creates nothing on the hub and does not loop: the
// event is not repeated while nothing changes. A valid bootstrap kubeconfig written in place of the file then
// registers the cluster without a restart.
func testBothExpired(t *testing.T, s *suite) {
	const cluster, agent = "fc09-expired", "agent9"
	secretName := "hks-" + cluster
	now := time.Now()
	certPEM, keyPEM := s.ca.IssueClientCert(t, subjectPrefix+cluster+":"+agent, []string{subjectPrefix + cluster, managedClustersGroup},
		now.Add(-25*time.Hour), now.Add(-time.Hour))
	if _, err := s.spokeB.Kube.CoreV1().Secrets(util.AgentNamespace).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: util.AgentNamespace},
		Data:       secretData(t, s.hub, cluster, agent, certPEM, keyPEM),
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	a := startAgent(t, s.spokeB, agentSpec{cluster: cluster, agent: agent, secret: secretName,
		bootstrap: util.ExpiredBootstrapKubeconfig(t, s.hub, s.ca)})
	msg := waitEvent(t, s.spokeB, eventBootstrapExpired, a.BootstrapFile)
	for _, want := range []string{"expired", "tls.crt expired", "supply a new bootstrap kubeconfig"} {
		if !containsFold(msg, want) {
			t.Errorf("event %s %q does not say %q", eventBootstrapExpired, msg, want)
		}
	}
	before := eventCount(t, s.spokeB, eventBootstrapExpired, a.BootstrapFile)
	time.Sleep(quietWindow) // observe that nothing happens
	requireRunning(t, a)
	if after := eventCount(t, s.spokeB, eventBootstrapExpired, a.BootstrapFile); after != before {
		t.Errorf("%s emitted %d more times within %s with nothing changed: busy loop", eventBootstrapExpired, after-before, quietWindow)
	}
	requireNoHubObjects(t, s.hub, cluster)

	// It waits for a new bootstrap kubeconfig, not for a restart: a valid one written in place (as the kubelet
	// updates a mounted Secret) gets the cluster registered.
	if err := os.WriteFile(a.BootstrapFile, s.hub.BootstrapKubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	waitValidSecret(t, s.spokeB, s.hub, secretName, cluster, agent, joinTimeout)
	waitAvailable(t, s.hub, cluster, joinTimeout)
	requireRunning(t, a)
}

// testBootstrapFileReferences (FC-15): a bootstrap kubeconfig whose certificate-authority is a file that does not
// exist gives a short error naming the kubeconfig field and the file, as an event; the agent keeps running and
// nothing reaches the hub. A bootstrap kubeconfig whose CA and client credentials are existing files joins, and the
// hub kubeconfig the agent writes is self-contained (inline CA data).
func testBootstrapFileReferences(t *testing.T, s *suite) {
	t.Run("missing CA file", func(t *testing.T) {
		t.Parallel()
		const cluster = "fc15-missing"
		missing := filepath.Join(t.TempDir(), "no-such-dir", "hub-ca.crt")
		bootstrap := rewriteBootstrap(t, s.hub, func(c *kubeconfigParts) {
			c.caFile, c.caData = missing, nil
		})
		a := startAgent(t, s.spokeB, agentSpec{cluster: cluster, agent: "agent15", secret: "hks-" + cluster, bootstrap: bootstrap})
		// Whatever reports it, one Warning names the field, the file and the cause.
		var found []corev1.Event
		framework.Eventually(t, eventTimeout, pollInterval, func() (bool, error) {
			found = spokeEvents(t, s.spokeB, "", "certificate-authority", missing)
			return len(found) > 0, nil
		}, "an event naming certificate-authority %q", missing)
		for _, e := range found {
			if e.Type != corev1.EventTypeWarning || !containsFold(e.Message, "no such file") || len(e.Message) > 512 {
				t.Errorf("event %s/%s %q: want a short Warning that says the file does not exist", e.Type, e.Reason, e.Message)
			}
		}
		time.Sleep(quietWindow)
		requireRunning(t, a)
		requireNoHubObjects(t, s.hub, cluster)
	})

	t.Run("CA and client credentials as files", func(t *testing.T) {
		t.Parallel()
		const cluster = "fc15-files"
		dir := t.TempDir()
		bootstrap := rewriteBootstrap(t, s.hub, func(c *kubeconfigParts) {
			c.caFile, c.certFile, c.keyFile = writeFile(t, dir, "ca.crt", c.caData), writeFile(t, dir, "client.crt", c.certData), writeFile(t, dir, "client.key", c.keyData)
			c.caData, c.certData, c.keyData = nil, nil, nil
		})
		a := startAgent(t, s.spokeB, agentSpec{cluster: cluster, agent: "agent15", secret: "hks-" + cluster, bootstrap: bootstrap})
		waitAvailable(t, s.hub, cluster, joinTimeout)
		// verifyHubKubeconfig requires the hub's CA inline and no certificate-authority file.
		waitValidSecret(t, s.spokeB, s.hub, a.Secret, cluster, "agent15", hubTimeout)
		requireRunning(t, a)
	})
}

// kubeconfigParts are the fields of the bootstrap kubeconfig's current cluster and user that FC-15 moves to files.
type kubeconfigParts struct {
	caFile, certFile, keyFile string
	caData, certData, keyData []byte
}

// rewriteBootstrap returns hub's bootstrap kubeconfig after edit changed its CA and client credentials.
func rewriteBootstrap(t *testing.T, hub *framework.Hub, edit func(*kubeconfigParts)) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(hub.BootstrapKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	c, u := cfg.Clusters[kctx.Cluster], cfg.AuthInfos[kctx.AuthInfo]
	p := &kubeconfigParts{caData: c.CertificateAuthorityData, certData: u.ClientCertificateData, keyData: u.ClientKeyData}
	edit(p)
	c.CertificateAuthority, c.CertificateAuthorityData = p.caFile, p.caData
	u.ClientCertificate, u.ClientCertificateData = p.certFile, p.certData
	u.ClientKey, u.ClientKeyData = p.keyFile, p.keyData
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func containsFold(s, substr string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(substr))
}
