package klusterlet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/registrationagent"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// TestKlusterletOperatorUnknownFlag: a newer klusterlet operator renders flags our `registration agent` does not
// know. The stock operator's rendered registration container, with an unknown flag and an unknown feature gate
// appended, still joins the cluster (Available on the hub), and each is announced once with an
// OperatorFlagIgnored Warning event naming it. The same args with an unknown registration driver flag end the
// agent at once, with a message naming the flag, the value and the rule, before any hub call.
func TestKlusterletOperatorUnknownFlag(t *testing.T) {
	// Build the agent binary before the test's deadline starts: a cold build can take minutes.
	framework.AgentBinary(t)
	hub := framework.StartHub(t, framework.HubOptions{Name: "hub-unknown-flag", HubController: true})
	spoke := framework.StartSpoke(t, framework.SpokeOptions{WorkCRD: true, KlusterletCRD: true})
	operator := framework.StartKlusterletOperator(t, spoke)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	k, err := operator.ApplyKlusterlet(ctx, framework.KlusterletOptions{
		ClusterName: "cluster-unknown-flag", RegistrationImage: ourImage, BootstrapKubeconfig: hub.BootstrapKubeconfig(),
	})
	if err != nil {
		t.Fatal(err)
	}
	deps, err := operator.WaitForAgentDeployments(ctx, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	lc, err := spoke.LocalContainer(ctx, deps.Registration, "registration-controller", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rendered := lc.Args

	// Refused: an unknown flag that would choose another registration driver.
	lc.Args = append(append([]string(nil), rendered...), "--registration-driver=awsirsa")
	refused := runRegistrationContainer(t, ctx, spoke, lc, "registration-refused")
	framework.Eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, error) {
		done, _ := refused.Exited()
		return done, nil
	}, "the agent with --registration-driver=awsirsa exits")
	if tail := refused.LogTail(20); !strings.Contains(tail, `--registration-driver "awsirsa": not supported by klusterlet-failover, and not ignored`) {
		t.Errorf("the refusal does not name the flag, value and rule; log tail:\n%s", tail)
	}

	// Ignored: a flag and a feature gate of a newer operator.
	lc.Args = append(append([]string(nil), rendered...), "--hosting-cluster-claim-enabled=true", "--feature-gates=HostingClusterClaim=true")
	agent := runRegistrationContainer(t, ctx, spoke, lc, "registration-unknown-flag")
	util.WaitForClusterAvailable(t, hub, "cluster-unknown-flag", joinTimeout)
	util.WaitForEvent(t, spoke, registrationagent.ReasonOperatorFlagIgnored, `"--hosting-cluster-claim-enabled=true"`, 30*time.Second)
	util.WaitForEvent(t, spoke, registrationagent.ReasonOperatorFlagIgnored, `"--feature-gates=HostingClusterClaim=true"`, 30*time.Second)
	if done, err := agent.Exited(); done {
		t.Fatalf("the agent exited (%v):\n%s", err, agent.LogTail(40))
	}
}
