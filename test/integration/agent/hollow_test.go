package agent_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/hollow"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// testHollowAgents runs three hollow agents (test/hollow: the agent's code, many in one process) against the
// suite's hub and a spoke of their own, under manifests/rbac.yaml's grants, and checks that each is a cluster of
// its own: Joined and Available under its name, reporting its own spoke identity (id.k8s.io), holding a client
// certificate of its own agent identity, and with connections of its own to the hub and the spoke (an agent
// sharing another's client would share its HTTP/2 connection, leaving fewer connections than agents).
func testHollowAgents(t *testing.T, s *suite) {
	ctx := context.Background()
	spoke := framework.StartSpoke(t)
	dir := t.TempDir()
	const n = 3
	clusters := hollow.Prepare(t, ctx, spoke, dir, hollow.Fleet{Count: n, Prefix: "hollow", Primary: s.hub})
	p := framework.StartAgentProcess(t, "hollow-agents", framework.HollowBinary(t),
		[]string{"--dir=" + dir, "--", "--spoke-external-server-urls=" + spoke.URL()})

	identities, subjects := map[string]string{}, map[string]string{}
	for _, cluster := range clusters {
		mc := util.WaitForClusterAvailable(t, s.hub, cluster, joinTimeout)
		want, err := os.ReadFile(filepath.Join(dir, cluster, hollow.KubeSystemUIDFile))
		if err != nil {
			t.Fatal(err)
		}
		var id string
		for _, c := range mc.Status.ClusterClaims {
			if c.Name == "id.k8s.io" {
				id = c.Value
			}
		}
		if id != string(want) {
			t.Errorf("ManagedCluster %s reports spoke identity %q, want its own %q", cluster, id, want)
		}
		if other, ok := identities[id]; ok {
			t.Errorf("ManagedClusters %s and %s report one spoke identity %q", other, cluster, id)
		}
		identities[id] = cluster

		secret, err := spoke.Kube.CoreV1().Secrets(cluster).Get(ctx, defaultSecretName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("hub kubeconfig Secret of %s: %v", cluster, err)
		}
		leaf, err := verifyHubKubeconfig(secret.Data, s.hub, cluster, "", time.Now())
		if err != nil {
			t.Fatalf("hub kubeconfig Secret of %s: %v", cluster, err)
		}
		subject := leaf.Subject.CommonName
		if other, ok := subjects[subject]; ok {
			t.Errorf("agents %s and %s hold certificates of one identity %q", other, cluster, subject)
		}
		subjects[subject] = cluster
	}

	// The connections below are each agent's once registered (its own certificate); its bootstrap and spoke clients
	// have connections of their own only if their certificates differ too (client-go's transport cache key).
	for _, file := range []string{hollow.BootstrapKubeconfigFile, hollow.SpokeKubeconfigFile} {
		certs := map[string]string{}
		for _, cluster := range clusters {
			config, err := clientcmd.LoadFromFile(filepath.Join(dir, cluster, file))
			if err != nil {
				t.Fatal(err)
			}
			for _, user := range config.AuthInfos {
				if other, ok := certs[string(user.ClientCertificateData)]; ok || len(user.ClientCertificateData) == 0 {
					t.Errorf("agents %s and %s share the client certificate of their %s", other, cluster, file)
				}
				certs[string(user.ClientCertificateData)] = cluster
			}
		}
	}

	for name, server := range map[string]string{"hub " + s.hub.Name: s.hub.URL(), "spoke": spoke.URL()} {
		u, err := url.Parse(server)
		if err != nil {
			t.Fatal(err)
		}
		var got int
		framework.Eventually(t, 30*time.Second, time.Second, func() (bool, error) {
			got, err = framework.EstablishedConnections(p.PID(), u.Host)
			return got >= n, err
		}, "the hollow agents' process holds at least %d connections to the %s (one per agent), has %d", n, name, got)
	}
	if exited, err := p.Exited(); exited {
		t.Fatalf("hollow-agents exited: %v\n%s", err, p.LogTail(20))
	}
}
