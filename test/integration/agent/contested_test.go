package agent_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// testContestedSecret: the hub kubeconfig Secret, holding the agent's credentials, is rewritten by hand with
// another agent's valid credentials for the same hub. The agent says so once (a HubKubeconfigContested warning
// naming the agent found and the hub server), sends no CSR during the bootstrap back-off (30 s after a first
// takeover), then one CSR, and holds its own credentials again, Available.
func testContestedSecret(t *testing.T, s *suite) {
	const cluster, agent, other = "contested", "agent-c", "other-agent"
	secretName := "hks-" + cluster
	a := startAgent(t, s.spokeB, agentSpec{cluster: cluster, agent: agent, secret: secretName, bootstrap: s.hub.BootstrapKubeconfig()})
	waitValidSecret(t, s.spokeB, s.hub, secretName, cluster, agent, joinTimeout)
	waitAvailable(t, s.hub, cluster, joinTimeout)
	csrsBefore := len(csrsOf(t, s.hub, cluster))

	now := time.Now()
	certPEM, keyPEM := s.ca.IssueClientCert(t, subjectPrefix+cluster+":"+other, []string{subjectPrefix + cluster, managedClustersGroup},
		now.Add(-time.Hour), now.Add(24*time.Hour))
	ctx := context.Background()
	secrets := s.spokeB.Kube.CoreV1().Secrets(util.AgentNamespace)
	secret, err := secrets.Get(ctx, secretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secret.Data = secretData(t, s.hub, cluster, other, certPEM, keyPEM)
	if _, err := secrets.Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	replaced := time.Now()

	msg := waitEvent(t, s.spokeB, hubsession.ReasonHubKubeconfigContested, secretName, fmt.Sprintf("agent %q", other), s.hub.URL())
	t.Logf("event: %s", msg)
	// The first takeover costs 30 s: nothing is sent to the hub for most of it.
	framework.Consistently(t, clientcert.DefaultBootstrapBackoffBase*2/3, pollInterval, func() (bool, error) {
		if n := len(csrsOf(t, s.hub, cluster)); n != csrsBefore {
			return false, fmt.Errorf("%d CSRs, want %d: the agent did not back off", n, csrsBefore)
		}
		return true, nil
	}, "no CSR during the back-off after the takeover")

	waitValidSecret(t, s.spokeB, s.hub, secretName, cluster, agent, joinTimeout+clientcert.DefaultBootstrapBackoffBase)
	took := time.Since(replaced)
	if took < clientcert.DefaultBootstrapBackoffBase {
		t.Errorf("the agent's credentials were back %s after the takeover, before the %s back-off", took.Round(100*time.Millisecond),
			clientcert.DefaultBootstrapBackoffBase)
	}
	if n := len(csrsOf(t, s.hub, cluster)); n != csrsBefore+1 {
		t.Errorf("%d CSRs after the recovery, want %d (one)", n, csrsBefore+1)
	}
	if n := eventCount(t, s.spokeB, hubsession.ReasonHubKubeconfigContested, secretName); n != 1 {
		t.Errorf("%d HubKubeconfigContested events, want 1", n)
	}
	waitAvailable(t, s.hub, cluster, joinTimeout)
	t.Logf("measured: own credentials back %s after the takeover (back-off %s)", took.Round(100*time.Millisecond), clientcert.DefaultBootstrapBackoffBase)
	requireRunning(t, a)
}
