//go:build bench

package benchmark

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

const (
	// restartDelay is how long the stand-in for the kubelet waits before restarting an agent that exited. A real
	// kubelet waits 10 s after the first exit (CrashLoopBackOff doubles from there), so this favours OCM's agent,
	// which exits to switch hubs.
	restartDelay = time.Second
	// agentStopTimeout bounds the graceful stop of an agent before SIGKILL.
	agentStopTimeout = 15 * time.Second
	// pollInterval is how often the hub is asked whether a cluster is Available: the resolution of the times.
	pollInterval = 100 * time.Millisecond
	// ocmComponentNamespace is where OCM's agent keeps its Secrets when it does not run in a pod: v1.2.0 reads
	// the component namespace only from the service-account namespace file (pkg/common/options/agent.go), and
	// its --namespace flag only names the namespace of its events. OCM agents therefore share this namespace,
	// each with its own --hub-kubeconfig-secret.
	ocmComponentNamespace = "open-cluster-management-agent"
)

// agentConfig describes one agent process.
type agentConfig struct {
	kind agentKind
	// cluster is the ManagedCluster name (--cluster-name); also names the log file.
	cluster string
	// namespace is our agent's namespace on the spoke (--namespace), created if missing. OCM's agent ignores it:
	// see ocmComponentNamespace.
	namespace string
	spoke     *framework.Spoke
	// bootstraps are bootstrap kubeconfigs, primary first. Ours takes the first (--bootstrap-kubeconfig; the
	// others come from a FailoverConfig the caller creates). OCM's takes one with --bootstrap-kubeconfig, or
	// several with --bootstrap-kubeconfigs and the MultipleHubs feature gate.
	bootstraps [][]byte
	// hubConnectionTimeoutSeconds is OCM's --hub-connection-timeout-seconds (with several bootstraps).
	hubConnectionTimeoutSeconds int
	// restart restarts the process after it exits (a stand-in for the kubelet), until stop.
	restart bool
	// coldStart drops the page cache of both agents' binaries before the start (evictPageCache), so that their
	// resident sets compare: the join and memory scenarios, which measure RSS, set it.
	coldStart bool
	// profile makes our agent serve its profiles on a loopback port and samples either agent's first process's
	// resident set from its exec (BENCH_PROFILE, profile_test.go).
	profile bool
}

// agentProc is a running agent process, restarted on exit when configured so.
type agentProc struct {
	cfg     agentConfig
	binary  string
	args    []string
	logPath string
	// hubKubeconfigDir is the agent's --hub-kubeconfig-dir, where it writes the hub kubeconfig that OCM's work
	// agent reads.
	hubKubeconfigDir string
	started          time.Time
	// pprofAddr is the loopback address our agent serves its profiles on (BENCH_PROFILE), or "".
	pprofAddr string
	// rss samples the first process's resident set (BENCH_PROFILE, timeline_test.go), or nil.
	rss *rssSampler

	mu       sync.Mutex
	cmd      *exec.Cmd
	exitErr  error
	exits    int
	stopping bool
	exited   chan struct{} // closed when the current process exits
	loopDone chan struct{} // closed when no process runs and none will be started again
}

// startAgent writes the agent's files and starts it; it stops in t.Cleanup if the caller does not stop it first.
func (b *bench) startAgent(t testing.TB, cfg agentConfig) *agentProc {
	t.Helper()
	dir, err := os.MkdirTemp(b.workDir, cfg.cluster+"-")
	if err != nil {
		t.Fatalf("agent %s: %v", cfg.cluster, err)
	}
	files := make([]string, len(cfg.bootstraps))
	for i, data := range cfg.bootstraps {
		files[i] = filepath.Join(dir, fmt.Sprintf("bootstrap-%d.kubeconfig", i))
		if err := os.WriteFile(files[i], data, 0o600); err != nil {
			t.Fatalf("agent %s: %v", cfg.cluster, err)
		}
	}
	port, err := freePort()
	if err != nil {
		t.Fatalf("agent %s: %v", cfg.cluster, err)
	}
	namespace, secret := cfg.namespace, "hub-kubeconfig-secret"
	if cfg.kind == ocm {
		namespace, secret = ocmComponentNamespace, "hub-kubeconfig-"+cfg.cluster
	}
	if err := createNamespace(b.ctx, cfg.spoke, namespace); err != nil {
		t.Fatalf("agent %s: %v", cfg.cluster, err)
	}
	common := []string{
		"--kubeconfig=" + cfg.spoke.KubeconfigFile(),
		"--namespace=" + namespace,
		"--cluster-name=" + cfg.cluster,
		"--hub-kubeconfig-secret=" + secret,
		"--hub-kubeconfig-dir=" + filepath.Join(dir, "hub-kubeconfig"), // agentProc.hubKubeconfigDir
		"--spoke-external-server-urls=" + cfg.spoke.URL(),
		"--disable-leader-election",
		"--listen=127.0.0.1:" + strconv.Itoa(port),
	}
	a := &agentProc{cfg: cfg, logPath: filepath.Join(b.logDir, cfg.cluster+".log"), loopDone: make(chan struct{}),
		hubKubeconfigDir: filepath.Join(dir, "hub-kubeconfig")}
	switch cfg.kind {
	case ours:
		a.binary = b.oursBinary
		a.args = append([]string{"agent", "failover", "--bootstrap-kubeconfig=" + files[0]}, common...)
		if cfg.profile {
			pprofPort, err := freePort()
			if err != nil {
				t.Fatalf("agent %s: %v", cfg.cluster, err)
			}
			a.pprofAddr = "127.0.0.1:" + strconv.Itoa(pprofPort)
		}
	case ocm:
		a.binary = b.ocmBinary
		a.args = append([]string{"agent"}, common...)
		if len(files) == 1 {
			a.args = append(a.args, "--bootstrap-kubeconfig="+files[0])
		} else {
			for _, f := range files {
				a.args = append(a.args, "--bootstrap-kubeconfigs="+f)
			}
			a.args = append(a.args, "--feature-gates=MultipleHubs=true",
				"--hub-connection-timeout-seconds="+strconv.Itoa(cfg.hubConnectionTimeoutSeconds))
		}
	}
	if cfg.coldStart {
		// From a cold page cache, the same for both agents (evictPageCache).
		for _, bin := range []string{b.oursBinary, b.ocmBinary} {
			if err := evictPageCache(bin); err != nil {
				t.Logf("agent %s: %v", cfg.cluster, err)
			}
		}
	}
	a.started = time.Now()
	if err := a.spawn(); err != nil {
		t.Fatalf("agent %s: %v", cfg.cluster, err)
	}
	go a.loop()
	t.Cleanup(a.stop)
	return a
}

// spawn starts one process of the agent, appending its output to the log.
func (a *agentProc) spawn() error {
	logFile, err := os.OpenFile(a.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening %s: %w", a.logPath, err)
	}
	fmt.Fprintf(logFile, "### %s %s %s\n", time.Now().Format(time.RFC3339Nano), a.binary, strings.Join(a.args, " "))
	cmd := exec.Command(a.binary, a.args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if a.cfg.kind == ours {
		cmd.Env = append(os.Environ(), oursEnv()...)
		if a.pprofAddr != "" {
			cmd.Env = append(cmd.Env, "KF_DEBUG_PPROF_ADDR="+a.pprofAddr)
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	execAt := time.Now()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("starting %s: %w", a.binary, err)
	}
	exited := make(chan struct{})
	a.mu.Lock()
	a.cmd, a.exited = cmd, exited
	if a.cfg.profile && a.rss == nil {
		a.rss = startRSSSampler(cmd.Process.Pid, execAt, exited)
	}
	if a.stopping { // stop ran while this process was being started: it must not outlive stop
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	a.mu.Unlock()
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(logFile, "### %s exited: %v\n", time.Now().Format(time.RFC3339Nano), err)
		_ = logFile.Close()
		a.mu.Lock()
		a.exitErr = err
		a.exits++
		a.mu.Unlock()
		close(exited)
	}()
	return nil
}

// loop waits for each process to exit and, when restart is set and the agent is not being stopped, starts the
// next one after restartDelay.
func (a *agentProc) loop() {
	defer close(a.loopDone)
	for {
		a.mu.Lock()
		exited := a.exited
		a.mu.Unlock()
		<-exited
		a.mu.Lock()
		stopping := a.stopping
		a.mu.Unlock()
		if stopping || !a.cfg.restart {
			return
		}
		time.Sleep(restartDelay)
		a.mu.Lock()
		stopping = a.stopping
		a.mu.Unlock()
		if stopping {
			return
		}
		if err := a.spawn(); err != nil {
			a.mu.Lock()
			a.exitErr = err
			a.mu.Unlock()
			return
		}
	}
}

// oursEnv returns the extra environment of our agent's processes: BENCH_OURS_ENV, comma-separated NAME=VALUE
// pairs (e.g. GOGC=50 to measure a Go runtime setting on our agent alone); empty when unset.
func oursEnv() []string {
	var env []string
	for _, kv := range strings.Split(os.Getenv("BENCH_OURS_ENV"), ",") {
		if kv = strings.TrimSpace(kv); strings.Contains(kv, "=") {
			env = append(env, kv)
		}
	}
	return env
}

// pid returns the process id of the current process.
func (a *agentProc) pid() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cmd.Process.Pid
}

// restarts returns how many times the process exited.
func (a *agentProc) restarts() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.exits
}

// dead returns an error when the agent exited and will not be restarted.
func (a *agentProc) dead() error {
	select {
	case <-a.loopDone:
		a.mu.Lock()
		defer a.mu.Unlock()
		return fmt.Errorf("agent %s (%s) exited: %v; log %s", a.cfg.cluster, a.cfg.kind, a.exitErr, a.logPath)
	default:
		return nil
	}
}

// stop sends SIGTERM to the process group, waits up to agentStopTimeout, then SIGKILLs it. Idempotent.
func (a *agentProc) stop() {
	a.mu.Lock()
	if a.stopping {
		a.mu.Unlock()
		<-a.loopDone
		return
	}
	a.stopping = true
	cmd, exited := a.cmd, a.exited
	a.mu.Unlock()
	select {
	case <-exited:
	default:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(agentStopTimeout):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	<-a.loopDone
}

// available reports whether ManagedCluster cluster on hub is Joined and Available.
func available(ctx context.Context, hub *framework.Hub, cluster string) (bool, error) {
	mc, err := hub.Cluster.ClusterV1().ManagedClusters().Get(ctx, cluster, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined) &&
		meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
}

// waitAvailable polls hub every pollInterval until the agent's cluster is Joined and Available and returns the
// time it was first seen so. It fails when the agent died for good or timeout passes.
func waitAvailable(ctx context.Context, hub *framework.Hub, a *agentProc, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		ok, err := available(ctx, hub, a.cfg.cluster)
		if ok {
			return time.Now(), nil
		}
		if err != nil {
			lastErr = err
		}
		if err := a.dead(); err != nil {
			return time.Time{}, err
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("cluster %s (%s agent) not Joined+Available on %s within %s (last error: %v); agent log %s",
				a.cfg.cluster, a.cfg.kind, hub.Name, timeout, lastErr, a.logPath)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// createNamespace creates namespace name on the spoke (it may exist).
func createNamespace(ctx context.Context, spoke *framework.Spoke, name string) error {
	_, err := spoke.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s on the spoke: %w", name, err)
	}
	return nil
}

// Agent --listen ports come from below Linux's ephemeral range (32768-60999): a port the kernel handed out
// once and that was released can be taken by any outbound connection before the agent binds it, which at N=200
// (400 agents' worth of connections) happened (bind: address already in use).
const (
	firstListenPort = 20000
	lastListenPort  = 32767
)

// nextListenPort is the last port freePort handed out.
var nextListenPort atomic.Int32

// freePort returns a loopback TCP port below the ephemeral range that no earlier call returned and that was free
// a moment ago.
func freePort() (int, error) {
	for range lastListenPort - firstListenPort + 1 {
		port := firstListenPort + int(nextListenPort.Add(1)-1)%(lastListenPort-firstListenPort+1)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		_ = l.Close()
		return port, nil
	}
	return 0, errors.New("finding a free port: every port from 20000 to 32767 is taken")
}
