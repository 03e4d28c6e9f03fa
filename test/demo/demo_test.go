//go:build demo

// Package demo is `make demo`: two real OCM hubs and a spoke on loopback, the klusterlet-failover binary joining
// hub A, hub A's apiserver stopped, and the failover to hub B, printed as a timeline. It is a Go test only so that
// it can use test/framework; it is excluded from `make test` by its build tag.
package demo

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	failoverclientset "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	clusterName = "demo-cluster"
	joinTimeout = 3 * time.Minute
)

// timeline prints each step with the time since the demo started.
type timeline struct {
	start time.Time
	lines []string
}

func (tl *timeline) step(format string, args ...any) {
	line := fmt.Sprintf("[%6.1fs] %s", time.Since(tl.start).Seconds(), fmt.Sprintf(format, args...))
	tl.lines = append(tl.lines, line)
	fmt.Println(line)
}

func TestDemo(t *testing.T) {
	tl := &timeline{start: time.Now()}
	binary := os.Getenv("KF_AGENT_BINARY")
	if binary == "" {
		t.Fatal("KF_AGENT_BINARY must name the klusterlet-failover binary (make demo sets it)")
	}
	timeoutSeconds := 30
	if v := os.Getenv("DEMO_HUB_CONNECTION_TIMEOUT_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			t.Fatalf("DEMO_HUB_CONNECTION_TIMEOUT_SECONDS %q: must be an integer >= 10", v)
		}
		timeoutSeconds = n
	}
	// Ctrl-C fails the test instead of killing it, so every process is stopped by the cleanups.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	tl.step("starting hub-a: etcd, kube-apiserver, kube-controller-manager (CSR signing), OCM hub controller (auto-approval)")
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", Signer: framework.SignerKCM, HubController: true})
	tl.step("hub-a serving at %s", hubA.URL())
	tl.step("starting hub-b the same way")
	hubB := framework.StartHub(t, framework.HubOptions{Name: "hub-b", Signer: framework.SignerKCM, HubController: true})
	tl.step("hub-b serving at %s", hubB.URL())
	tl.step("starting the spoke apiserver (the managed cluster)")
	spoke := framework.StartSpoke(t)
	tl.step("spoke serving at %s", spoke.URL())
	checkInterrupted(t, ctx)

	util.EnsureAgentNamespace(t, spoke)
	_, err := spoke.Kube.CoreV1().Secrets(util.AgentNamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hub-b-bootstrap", Namespace: util.AgentNamespace},
		Data:       map[string][]byte{"kubeconfig": hubB.BootstrapKubeconfig()},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the hub-b bootstrap secret: %v", err)
	}
	fo := failoverclientset.NewForConfigOrDie(spoke.AdminConfig)
	_, err = fo.FailoverV1alpha1().FailoverConfigs(util.AgentNamespace).Create(ctx, &failoverv1alpha1.FailoverConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "failover", Namespace: util.AgentNamespace},
		Spec: failoverv1alpha1.FailoverConfigSpec{
			AlternateHubs:        []failoverv1alpha1.AlternateHub{{Name: "hub-b", BootstrapKubeconfigSecretRef: "hub-b-bootstrap"}},
			HubConnectionTimeout: &metav1.Duration{Duration: time.Duration(timeoutSeconds) * time.Second},
			ProbeInterval:        &metav1.Duration{Duration: 5 * time.Second},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the FailoverConfig: %v", err)
	}
	tl.step("created namespace %s, secret hub-b-bootstrap and FailoverConfig failover (alternate hub-b, hubConnectionTimeout %ds)",
		util.AgentNamespace, timeoutSeconds)

	dir := t.TempDir()
	bootstrapFile := filepath.Join(dir, "hub-a-bootstrap.kubeconfig")
	if err := os.WriteFile(bootstrapFile, hubA.BootstrapKubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	logDir := os.Getenv(framework.EnvLogDir)
	if logDir == "" {
		logDir = dir
	}
	agentLog, err := os.Create(filepath.Join(logDir, "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer agentLog.Close()
	args := []string{"agent", "failover",
		"--kubeconfig", spoke.KubeconfigFile(),
		"--namespace", util.AgentNamespace,
		"--bootstrap-kubeconfig", bootstrapFile,
		"--hub-kubeconfig-dir", filepath.Join(dir, "hub-kubeconfig"),
		"--cluster-name", clusterName,
		"--cluster-healthcheck-period", "10s",
		"--listen", "127.0.0.1:" + strconv.Itoa(freePort(t)),
	}
	agent := exec.Command(binary, args...)
	agent.Stdout, agent.Stderr = agentLog, agentLog
	agent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	agentStart := time.Now()
	if err := agent.Start(); err != nil {
		t.Fatalf("start %s: %v", binary, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- agent.Wait() }()
	t.Cleanup(func() {
		_ = agent.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = agent.Process.Kill()
		}
	})
	tl.step("started %s %s", filepath.Base(binary), strings.Join(args, " "))
	tl.step("agent log: %s", agentLog.Name())

	waitAvailable(t, ctx, hubA, exited, joinTimeout)
	tl.step("cluster %s Joined and Available on hub-a, %.1f s after the agent started", clusterName, time.Since(agentStart).Seconds())
	printCluster(t, ctx, tl, hubA)

	tl.step("stopping hub-a's kube-apiserver")
	hubA.StopAPIServer()
	lost := time.Now()
	waitAvailable(t, ctx, hubB, exited, time.Duration(timeoutSeconds)*time.Second+joinTimeout)
	took := time.Since(lost)
	tl.step("cluster %s Joined and Available on hub-b", clusterName)
	printCluster(t, ctx, tl, hubB)
	var fc *failoverv1alpha1.FailoverConfig
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, func() (bool, error) {
		fc, err = fo.FailoverV1alpha1().FailoverConfigs(util.AgentNamespace).Get(ctx, "failover", metav1.GetOptions{})
		return err == nil && fc.Status.LastFailover != nil && fc.Status.LastFailover.EndTime != nil, nil
	}, "FailoverConfig status records the failover")
	tl.step("FailoverConfig status: activeHub=%s failoverCount=%d", fc.Status.ActiveHub, fc.Status.FailoverCount)
	for _, c := range fc.Status.Conditions {
		tl.step("  FailoverConfig condition %s=%s (%s) %s", c.Type, c.Status, c.Reason, c.Message)
	}
	lf := fc.Status.LastFailover
	tl.step("lastFailover: %s -> %s, reason %s, %d ms from the decision to Available", lf.From, lf.To, lf.Reason, lf.DurationMilliseconds)
	fmt.Println()
	fmt.Println("timeline:")
	for _, l := range tl.lines {
		fmt.Println("  " + l)
	}
	fmt.Printf("logs: %s\n", logDir)
	fmt.Printf("failover: primary -> hub-b in %.1f s (timeout %d s)\n", took.Seconds(), timeoutSeconds)
}

// waitAvailable waits until the demo cluster is Joined and Available on hub, failing early if the agent exits.
func waitAvailable(t *testing.T, ctx context.Context, hub *framework.Hub, exited <-chan error, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		checkInterrupted(t, ctx)
		select {
		case err := <-exited:
			t.Fatalf("the agent exited: %v", err)
		default:
		}
		mc, err := hub.Cluster.ClusterV1().ManagedClusters().Get(ctx, clusterName, metav1.GetOptions{})
		if err == nil && meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined) &&
			meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("cluster %s not Available on %s within %s", clusterName, hub.Name, timeout)
}

func printCluster(t *testing.T, ctx context.Context, tl *timeline, hub *framework.Hub) {
	mc, err := hub.Cluster.ClusterV1().ManagedClusters().Get(ctx, clusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get ManagedCluster on %s: %v", hub.Name, err)
	}
	for _, c := range mc.Status.Conditions {
		tl.step("  %s ManagedCluster %s condition %s=%s (%s)", hub.Name, clusterName, c.Type, c.Status, c.Reason)
	}
	lease, err := hub.Kube.CoordinationV1().Leases(clusterName).Get(ctx, "managed-cluster-lease", metav1.GetOptions{})
	if err == nil && lease.Spec.RenewTime != nil {
		tl.step("  %s lease %s/managed-cluster-lease renewed at %s", hub.Name, clusterName, lease.Spec.RenewTime.UTC().Format(time.RFC3339))
	}
}

func checkInterrupted(t *testing.T, ctx context.Context) {
	if ctx.Err() != nil {
		t.Fatal("interrupted")
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
