package agent_test

import (
	"context"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// testLeftoverCSRs: the hub holds ten recent bootstrap CSRs for a cluster name — pending, denied, and approved but
// never issued (their signer serves nothing), from the agent name that is about to start and from three others,
// as a re-install, a crash-looping agent or an operator's retries leave them. The agent's first start for that
// cluster (no hub kubeconfig Secret, no back-off record) sends exactly one CSR at once and is Joined and
// Available like an agent started at the same moment for a cluster the hub has never seen.
func testLeftoverCSRs(t *testing.T, s *suite) {
	const cluster, agent, clean = "leftover-csrs", "agent-l", "leftover-clean"
	ctx := context.Background()
	now := time.Now()
	// A bootstrap user the hub controller does not auto-approve: its CSRs stay pending unless a test acts on them.
	leftoverUser := "leftover-bootstrap"
	leftoverClient, err := kubernetes.NewForConfig(s.hub.UserConfig(leftoverUser, framework.BootstrapGroup))
	if err != nil {
		t.Fatal(err)
	}
	csrClient := leftoverClient.CertificatesV1().CertificateSigningRequests()
	states := map[string]int{}
	for i := range 10 {
		name := []string{agent, "prev-1", "prev-2", "prev-3"}[i%4]
		keyPEM, err := clientcert.NewPrivateKey()
		if err != nil {
			t.Fatal(err)
		}
		csr, err := clientcert.NewCSR(cluster, name, keyPEM, nil)
		if err != nil {
			t.Fatal(err)
		}
		state := []string{"pending", "denied", "approved, not issued"}[i%3]
		if state == "approved, not issued" {
			csr.Spec.SignerName = "example.com/unserved"
		}
		created, err := csrClient.Create(ctx, csr, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create leftover CSR %d for %s:%s: %v", i, cluster, name, err)
		}
		switch state {
		case "denied":
			created.Status.Conditions = append(created.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
				Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "LeftoverDenied",
				Message: "denied by the test: a leftover of an earlier attempt", LastUpdateTime: metav1.Now()})
			if _, err := s.hub.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, created.Name, created, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		case "approved, not issued":
			if err := s.hub.ApproveCSR(ctx, created.Name); err != nil {
				t.Fatal(err)
			}
		}
		states[state]++
	}
	before := csrsOf(t, s.hub, cluster)
	if len(before) != 10 {
		t.Fatalf("hub holds %d CSRs for %s before the start, want the 10 leftovers", len(before), cluster)
	}
	t.Logf("leftover CSRs for %s on the hub: %v, created %s before the agent's start", cluster, states, time.Since(now).Round(time.Millisecond))

	// Both agents start at the same moment, so that the clean one's join time is measured under the same load.
	leftover := startAgent(t, s.spokeB, agentSpec{cluster: cluster, agent: agent, secret: "hks-" + cluster, bootstrap: s.hub.BootstrapKubeconfig()})
	control := startAgent(t, s.spokeB, agentSpec{cluster: clean, agent: agent, secret: "hks-" + clean, bootstrap: s.hub.BootstrapKubeconfig()})
	// One poll for both, so that each join time is read at the same resolution.
	took := map[string]time.Duration{}
	framework.Eventually(t, joinTimeout, pollInterval, func() (bool, error) {
		for c, a := range map[string]*agentRun{cluster: leftover, clean: control} {
			if _, ok := took[c]; !ok && joinedAndAvailable(getMC(t, s.hub, c)) {
				took[c] = time.Since(a.Started)
			}
		}
		return len(took) == 2, nil
	}, "ManagedClusters %s (10 leftover CSRs) and %s (clean) Joined and Available", cluster, clean)

	after := csrsOf(t, s.hub, cluster)
	if len(after) != len(before)+1 {
		t.Fatalf("%d CSRs for %s after the join, want %d: exactly one new CSR", len(after), cluster, len(before)+1)
	}
	old := map[string]bool{}
	for _, csr := range before {
		old[csr.Name] = true
	}
	for i := range after {
		if !old[after[i].Name] {
			checkCSR(t, &after[i], cluster, agent, s.hub.BootstrapUser())
		}
	}
	if n := len(csrsOf(t, s.hub, clean)); n != 1 {
		t.Errorf("%d CSRs for the control cluster %s, want 1", n, clean)
	}
	waitValidSecret(t, s.spokeB, s.hub, "hks-"+cluster, cluster, agent, hubTimeout)
	t.Logf("measured: start → Joined and Available with 10 leftover CSRs %s; on a clean hub (same moment) %s",
		took[cluster].Round(10*time.Millisecond), took[clean].Round(10*time.Millisecond))
	requireRunning(t, leftover)
	requireRunning(t, control)
}
