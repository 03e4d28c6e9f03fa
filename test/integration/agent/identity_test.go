package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// testGeneratedNamesSurviveRestart: an agent without --cluster-name/--agent-name whose first CSR waits for a
// human (its bootstrap user is not auto-approved) is restarted; it comes back with the names it generated, so
// the CSR the admin approves and the ManagedCluster the admin accepts belong to the cluster that joins.
func testGeneratedNamesSurviveRestart(t *testing.T, s *suite) {
	hub, spoke := s.hub, s.spokeB
	ctx := context.Background()
	now := time.Now()
	// In the bootstrap group (may create CSRs and ManagedClusters) but not the auto-approved bootstrap user.
	bootstrap := hub.UserKubeconfig("manual-approval-bootstrap", now.Add(-time.Hour), now.Add(24*time.Hour), framework.BootstrapGroup)
	dir := filepath.Join(t.TempDir(), "hub-kubeconfig")
	spec := agentSpec{secret: "hks-generated-restart", bootstrap: bootstrap, dir: dir}

	first := startAgent(t, spoke, spec)
	var cluster, agent string
	framework.Eventually(t, hubTimeout, pollInterval, func() (bool, error) {
		c, errC := os.ReadFile(filepath.Join(dir, secretKeyClusterName))
		a, errA := os.ReadFile(filepath.Join(dir, secretKeyAgentName))
		if errC != nil || errA != nil {
			return false, nil
		}
		cluster, agent = string(c), string(a)
		return len(csrsOf(t, hub, cluster)) == 1, nil
	}, "generated names stored in %s and a pending CSR for them on the hub", dir)
	first.Stop()
	if secret := getSecret(t, spoke, spec.secret); secret != nil {
		t.Fatalf("the hub kubeconfig Secret exists before any CSR was approved: keys %d", len(secret.Data))
	}

	second := startAgent(t, spoke, spec)
	// The first CSR's credentials were never in use: the restarted agent's CSR waits the bootstrap back-off (30 s
	// after the first one, restored from the Lease the first agent saved it to).
	framework.Eventually(t, hubTimeout+clientcert.DefaultBootstrapBackoffBase, pollInterval, func() (bool, error) {
		return len(csrsOf(t, hub, cluster)) == 2, nil
	}, "a second CSR for cluster %s from the restarted agent", cluster)
	csrs := csrsOf(t, hub, cluster)
	latest := csrs[len(csrs)-1]
	// Same names: the CSR's label, generateName and subject (CN system:open-cluster-management:<cluster>:<agent>).
	checkCSR(t, &latest, cluster, agent, "manual-approval-bootstrap")
	if err := hub.ApproveCSR(ctx, latest.Name); err != nil {
		t.Fatal(err)
	}
	if err := hub.AcceptCluster(ctx, cluster, true); err != nil {
		t.Fatal(err)
	}
	waitAvailable(t, hub, cluster, joinTimeout)
	waitValidSecret(t, spoke, hub, spec.secret, cluster, agent, hubTimeout)
	requireRunning(t, second)
}
