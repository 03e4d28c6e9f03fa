package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Names in the hub kubeconfig directory, as OCM's registration agent writes Secret hub-kubeconfig-secret (and our
// agent mirrors it) and the klusterlet's Deployments mount it at /spoke/hub-kubeconfig.
const (
	// HubKubeconfigFile is the kubeconfig the work agent reads (--workload-source-config) and watches
	// (--terminate-on-files).
	HubKubeconfigFile = "kubeconfig"
	// HubKubeconfigCertFile and HubKubeconfigKeyFile are the agent's client certificate and key (PEM), which
	// HubKubeconfigFile references by these relative names.
	HubKubeconfigCertFile = "tls.crt"
	HubKubeconfigKeyFile  = "tls.key"
	// HubKubeconfigClusterNameFile and HubKubeconfigAgentNameFile hold the cluster and agent names.
	HubKubeconfigClusterNameFile = "cluster-name"
	HubKubeconfigAgentNameFile   = "agent-name"

	// DefaultAgentNamespace is the klusterlet's default agent namespace on the spoke (Klusterlet spec.namespace),
	// which is also the component namespace OCM's agents fall back to outside a pod.
	DefaultAgentNamespace = "open-cluster-management-agent"
	// defaultWorkAgentEvictionGracePeriod is WorkAgentOptions.EvictionGracePeriod's default.
	defaultWorkAgentEvictionGracePeriod = 20 * time.Second
	// defaultWorkAgentRestartDelay is WorkAgentOptions.RestartDelay's default.
	defaultWorkAgentRestartDelay = time.Second
	// workAgentStopTimeout bounds the graceful stop of the work agent before SIGKILL.
	workAgentStopTimeout = 15 * time.Second
)

// WriteHubKubeconfigDir writes, into dir (created if missing, mode 0700), the hub kubeconfig directory of agent
// on cluster as OCM's registration agent lays out Secret hub-kubeconfig-secret: a client certificate for
// AgentUser(cluster, agent) in AgentGroups(cluster), signed by the hub's client CA and valid from an hour ago for
// a year (tls.crt, tls.key), a kubeconfig (server URL(), inline serving CA, client certificate and key referenced
// as the relative files tls.crt and tls.key, context named after the cluster), cluster-name and agent-name. Every
// file is 0600 and replaced atomically (written aside, then renamed), the kubeconfig last, so that a reader
// watching it sees whole credentials. Each call issues a new certificate and key; the kubeconfig's bytes stay the
// same across calls for the same hub, cluster and agent. It fails the test on error.
func (h *Hub) WriteHubKubeconfigDir(dir, cluster, agent string) {
	h.t.Helper()
	now := time.Now()
	certPEM, keyPEM := h.IssueClientCert(AgentUser(cluster, agent), AgentGroups(cluster), now.Add(-time.Hour), now.Add(365*24*time.Hour))
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[cluster] = &clientcmdapi.Cluster{Server: h.URL(), CertificateAuthorityData: h.CAData()}
	cfg.AuthInfos[cluster] = &clientcmdapi.AuthInfo{ClientCertificate: HubKubeconfigCertFile, ClientKey: HubKubeconfigKeyFile}
	cfg.Contexts[cluster] = &clientcmdapi.Context{Cluster: cluster, AuthInfo: cluster}
	cfg.CurrentContext = cluster
	kubeconfigData, err := clientcmd.Write(*cfg)
	if err != nil {
		h.t.Fatalf("hub %s: encoding the hub kubeconfig of %s/%s: %v", h.Name, cluster, agent, err)
	}
	files := []struct {
		name string
		data []byte
	}{
		{HubKubeconfigClusterNameFile, []byte(cluster)},
		{HubKubeconfigAgentNameFile, []byte(agent)},
		{HubKubeconfigCertFile, certPEM},
		{HubKubeconfigKeyFile, keyPEM},
		{HubKubeconfigFile, kubeconfigData},
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	for _, f := range files {
		if err := writeFileAtomic(filepath.Join(dir, f.name), f.data); err != nil {
			h.t.Fatalf("hub %s: writing the hub kubeconfig directory %s: %v", h.Name, dir, err)
		}
	}
}

// WorkAgentOptions configures StartWorkAgent.
type WorkAgentOptions struct {
	// ClusterName is the ManagedCluster name (--spoke-cluster-name); required. The agent watches ManifestWorks in
	// the hub namespace of that name.
	ClusterName string
	// HubKubeconfigDir is the hub kubeconfig directory (see Hub.WriteHubKubeconfigDir, or the directory an agent
	// mirrors Secret hub-kubeconfig-secret into); required. Its file kubeconfig is --workload-source-config and
	// --terminate-on-files; it must exist when StartWorkAgent is called.
	HubKubeconfigDir string
	// AgentID is --agent-id (the klusterlet operator passes the Klusterlet's UID). Default "testbed-work-agent".
	AgentID string
	// Namespace is --namespace (where the agent records its events), created on the spoke if missing. Default
	// DefaultAgentNamespace.
	Namespace string
	// EvictionGracePeriod is --appliedmanifestwork-eviction-grace-period: how long an AppliedManifestWork whose
	// ManifestWork the hub no longer has survives. Default 20 s (OCM's default is 60 min).
	EvictionGracePeriod time.Duration
	// StatusSyncInterval, when positive, is --status-sync-interval (the operator renders 60s for one replica).
	// Default: the agent's own (10 s).
	StatusSyncInterval time.Duration
	// RestartDelay is how long the stand-in for the kubelet waits before restarting the agent after it exited.
	// Default 1 s.
	RestartDelay time.Duration
	// ExtraArgs are appended to the command line (e.g. "--v=4", "--feature-gates=...").
	ExtraArgs []string
}

// WorkAgent is OCM's work agent (`work agent`, v1.2.0) running against a spoke, restarted whenever it exits (a
// stand-in for the kubelet), until the test ends.
type WorkAgent struct {
	t       testing.TB
	binary  string
	args    []string
	logDir  string
	logName string
	delay   time.Duration

	mu       sync.Mutex
	proc     *process
	starts   int
	looping  bool
	stopping bool
	stopCh   chan struct{}
	loopDone chan struct{}
}

// StartWorkAgent runs OCM's work agent with the arguments the klusterlet operator v1.2.0 renders for the kube
// driver (--spoke-cluster-name, --workload-source-driver=kube, --workload-source-config and --terminate-on-files
// on <HubKubeconfigDir>/kubeconfig, --agent-id) plus what running outside a pod needs: --kubeconfig (the spoke's
// admin kubeconfig file), --disable-leader-election, --namespace, --appliedmanifestwork-eviction-grace-period and
// --listen on a free loopback port. It installs the AppliedManifestWork CRD on the spoke when missing, creates the
// namespace, starts the agent, waits (up to DefaultStartTimeout) for its /healthz and fails the test if the agent
// does not get there. From then on, whenever the agent exits (it exits when the kubeconfig's content changes), it
// is started again after RestartDelay, until t's cleanup stops it (SIGTERM, SIGKILL after 15 s). Every start
// appends to <log dir>/work-agent-<cluster>.log under the spoke's component log directory.
func StartWorkAgent(t testing.TB, spoke *Spoke, opts WorkAgentOptions) *WorkAgent {
	t.Helper()
	start := time.Now()
	if opts.ClusterName == "" || opts.HubKubeconfigDir == "" {
		t.Fatalf("work agent: WorkAgentOptions.ClusterName and HubKubeconfigDir are required (got %q, %q)", opts.ClusterName, opts.HubKubeconfigDir)
	}
	if opts.AgentID == "" {
		opts.AgentID = "testbed-work-agent"
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultAgentNamespace
	}
	if opts.EvictionGracePeriod <= 0 {
		opts.EvictionGracePeriod = defaultWorkAgentEvictionGracePeriod
	}
	if opts.RestartDelay <= 0 {
		opts.RestartDelay = defaultWorkAgentRestartDelay
	}
	name := "work-agent-" + opts.ClusterName
	kubeconfigFile := filepath.Join(opts.HubKubeconfigDir, HubKubeconfigFile)
	if _, err := os.Stat(kubeconfigFile); err != nil {
		t.Fatalf("%s: the hub kubeconfig: %v", name, err)
	}
	binDir, err := BinariesDir(BinaryWork)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultStartTimeout)
	defer cancel()
	if err := ensureCRDs(ctx, spoke.AdminConfig, appliedManifestWorkCRDFile); err != nil {
		t.Fatalf("%s: spoke: %v", name, err)
	}
	if err := ensureNamespace(ctx, spoke, opts.Namespace); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	port, err := freeLoopbackPort()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	args := []string{
		"agent",
		"--spoke-cluster-name=" + opts.ClusterName,
		"--workload-source-driver=kube",
		"--workload-source-config=" + kubeconfigFile,
		"--agent-id=" + opts.AgentID,
		"--terminate-on-files=" + kubeconfigFile,
		"--kubeconfig=" + spoke.KubeconfigFile(),
		"--disable-leader-election",
		"--namespace=" + opts.Namespace,
		"--appliedmanifestwork-eviction-grace-period=" + opts.EvictionGracePeriod.String(),
		"--listen=127.0.0.1:" + strconv.Itoa(port),
	}
	if opts.StatusSyncInterval > 0 {
		args = append(args, "--status-sync-interval="+opts.StatusSyncInterval.String())
	}
	args = append(args, opts.ExtraArgs...)
	w := &WorkAgent{
		t: t, binary: filepath.Join(binDir, BinaryWork), args: args, logDir: spoke.LogDir(), logName: name,
		delay: opts.RestartDelay, stopCh: make(chan struct{}), loopDone: make(chan struct{}),
	}
	p, err := w.spawn()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(w.stop)
	if err := p.waitHealthy(fmt.Sprintf("https://127.0.0.1:%d/healthz", port), DefaultStartTimeout); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	w.mu.Lock()
	w.looping = true
	w.mu.Unlock()
	go w.loop()
	t.Logf("%s started in %s, log %s", name, time.Since(start).Round(time.Millisecond), w.LogPath())
	return w
}

// Restarts returns how many times the agent was started again after exiting (0 until the first exit).
func (w *WorkAgent) Restarts() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.starts - 1
}

// Args returns the agent's command line, without the binary.
func (w *WorkAgent) Args() []string { return append([]string(nil), w.args...) }

// LogPath returns the file every start of the agent appends its output to.
func (w *WorkAgent) LogPath() string { return filepath.Join(w.logDir, w.logName+".log") }

// spawn starts one process of the agent and makes it the current one.
func (w *WorkAgent) spawn() (*process, error) {
	p, err := startProcess(w.logName, w.logDir, w.binary, w.args)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.proc = p
	w.starts++
	w.mu.Unlock()
	return p, nil
}

// loop restarts the agent after each exit until stop.
func (w *WorkAgent) loop() {
	defer close(w.loopDone)
	for {
		w.mu.Lock()
		p := w.proc
		w.mu.Unlock()
		select {
		case <-w.stopCh:
			return
		case <-p.done:
		}
		_, exitErr := p.exited()
		appendLog(p.logPath, fmt.Sprintf("### %s exited (%v); restarting in %s", w.logName, exitErr, w.delay))
		select {
		case <-w.stopCh:
			return
		case <-time.After(w.delay):
		}
		w.mu.Lock()
		if w.stopping {
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		if _, err := w.spawn(); err != nil {
			// Not the test goroutine: report without Fatal; the test's own waits then fail.
			w.t.Errorf("%s: restarting: %v", w.logName, err)
			return
		}
	}
}

// stop ends the restart loop and stops the current process.
func (w *WorkAgent) stop() {
	w.mu.Lock()
	w.stopping = true
	looping := w.looping
	w.mu.Unlock()
	close(w.stopCh)
	if looping { // not when StartWorkAgent failed before starting the loop
		<-w.loopDone
	}
	w.mu.Lock()
	p := w.proc
	w.mu.Unlock()
	if p == nil {
		return
	}
	if err := p.stop(workAgentStopTimeout); err != nil {
		w.t.Errorf("%s: %v", w.logName, err)
	}
}

// appendLog appends line to a log file, ignoring errors (the log is diagnostic).
func appendLog(file, line string) {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

// ensureNamespace creates namespace on the spoke unless it exists.
func ensureNamespace(ctx context.Context, spoke *Spoke, namespace string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	_, err := spoke.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("spoke: creating namespace %s: %w", namespace, err)
	}
	return nil
}
