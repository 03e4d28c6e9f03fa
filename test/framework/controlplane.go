package framework

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

const (
	// DefaultStartTimeout bounds the start of each process (etcd, kube-apiserver, kube-controller-manager, the
	// hub controller) on a loaded 2-core machine.
	DefaultStartTimeout = 60 * time.Second
	// stopTimeout bounds the graceful stop of each process before it is killed.
	stopTimeout = 30 * time.Second
)

// silenceControllerRuntimeLog gives controller-runtime's global logger, which envtest logs to, a discarding
// sink, once: without one controller-runtime prints a warning with a stack trace into every test's output.
// The framework reports envtest's failures through its returned errors instead.
var silenceControllerRuntimeLog = sync.OnceFunc(func() { ctrllog.SetLogger(logr.Discard()) })

// controlPlane is one kube-apiserver + etcd started through envtest, authenticating clients by certificates
// signed by its own CA.
type controlPlane struct {
	component string
	env       *envtest.Environment
	// ca signs the bootstrap user, test users and approved CSRs; adminCA signs the admin and controllers.
	ca, adminCA  *testCA
	authn        *caAuthn
	dir          string
	logDir       string
	adminConfig  *rest.Config
	startTimeout time.Duration
	// apiserverStopped is true between stopAPIServer and startAPIServer.
	apiserverStopped bool
	// restartedEtcd stop the etcd processes Hub.RestartEtcd started, after envtest stopped the apiserver.
	restartedEtcd []func()
}

// controlPlaneOptions configures startControlPlane.
type controlPlaneOptions struct {
	// authzMode is kube-apiserver's --authorization-mode.
	authzMode string
	// crds are installed once the apiserver serves.
	crds []*apiextensionsv1.CustomResourceDefinition
	// startTimeout bounds the start of etcd and kube-apiserver.
	startTimeout time.Duration
	// flags are added to kube-apiserver's command line (e.g. the audit flags of HubOptions.AuditPolicy).
	flags []apiserverFlag
	// network, when set, makes the apiserver listen on the pod network's host address instead of 127.0.0.1, so
	// that pods reach it.
	network *PodNetwork
	// node, with network, makes the apiserver the control plane of a node (see nodeAPIServerFlags): it serves
	// the `kubernetes` Service in the network's service range, admits ServiceAccounts and authorizes kubelets.
	node bool
}

// startControlPlane starts etcd and kube-apiserver for component (e.g. "hub-a", "spoke") and installs the CRDs
// of opts. Data, certificates and the client CA live in a t.TempDir() directory, so the apiserver can restart on
// the same port with the same serving certificate. The control plane stops in t.Cleanup; failures call t.Fatal
// naming component.
func startControlPlane(t testing.TB, component string, opts controlPlaneOptions) *controlPlane {
	t.Helper()
	authzMode, crds, startTimeout, extraFlags := opts.authzMode, opts.crds, opts.startTimeout, opts.flags
	silenceControllerRuntimeLog()
	binDir, err := BinariesDir(BinaryKubeAPIServer, BinaryEtcd)
	if err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	cp := &controlPlane{component: component, dir: t.TempDir(), logDir: logDir(t, component), startTimeout: startTimeout}
	cp.ca, err = newTestCA(component+"-client-ca", cp.dir)
	if err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	adminDir := filepath.Join(cp.dir, "admin-ca")
	if err := os.Mkdir(adminDir, 0o700); err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	if cp.adminCA, err = newTestCA(component+"-admin-ca", adminDir); err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	cp.authn = &caAuthn{admin: cp.adminCA, signing: cp.ca, bundleFile: filepath.Join(cp.dir, "client-ca-bundle.crt")}
	certDir := filepath.Join(cp.dir, "kube-apiserver")
	if err := os.Mkdir(certDir, 0o700); err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	apiserverLog := openLog(t, component, filepath.Join(cp.logDir, BinaryKubeAPIServer+".log"))
	etcdLog := openLog(t, component, filepath.Join(cp.logDir, BinaryEtcd+".log"))

	// Paths are set explicitly: envtest would otherwise prefer $KUBEBUILDER_ASSETS even when BinariesDir found it
	// incomplete and chose the build cache.
	apiServer := &envtest.APIServer{
		Path:          filepath.Join(binDir, BinaryKubeAPIServer),
		CertDir:       certDir,
		Out:           apiserverLog,
		Err:           apiserverLog,
		SecureServing: envtest.SecureServing{Authn: cp.authn},
	}
	if opts.network != nil {
		// envtest picks a loopback port unless both the address and the port are set.
		port, err := freePort(opts.network.HostIP.String())
		if err != nil {
			t.Fatalf("%s: %v", component, err)
		}
		apiServer.SecureServing.Address, apiServer.SecureServing.Port = opts.network.HostIP.String(), strconv.Itoa(port)
		if err := opts.network.AllowHostPort(port); err != nil {
			t.Fatalf("%s: opening the apiserver's port to pods: %v", component, err)
		}
	}
	if opts.node {
		if opts.network == nil {
			t.Fatalf("%s: a node's control plane needs a pod network", component)
		}
		flags, err := cp.nodeAPIServerFlags(opts.network, certDir, &apiServer.SecureServing)
		if err != nil {
			t.Fatalf("%s: %v", component, err)
		}
		extraFlags = append(extraFlags, flags...)
		// envtest turns the ServiceAccount admission plugin off; pods need it for their token volume.
		apiServer.Configure().Disable("disable-admission-plugins")
	}
	apiServer.Configure().
		Set("authorization-mode", authzMode).
		// Without it, shutdown waits up to --request-timeout (60s) for connections carrying watches (every
		// controller's) to close; with it, the HTTP server closes them 2 s after in-flight requests drained.
		Set("shutdown-send-retry-after", "true")
	for _, f := range extraFlags {
		apiServer.Configure().Set(f.name, f.value)
	}
	cp.env = &envtest.Environment{
		ControlPlane: envtest.ControlPlane{
			APIServer: apiServer,
			Etcd:      &envtest.Etcd{Path: filepath.Join(binDir, BinaryEtcd), Out: etcdLog, Err: etcdLog},
			// kubectl only runs through envtest's KubeCtl, which nothing here calls: make demo's directory lacks it.
			KubectlPath: filepath.Join(binDir, BinaryKubectl),
		},
		BinaryAssetsDirectory:    binDir,
		CRDs:                     crds,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  stopTimeout,
	}
	cfg, err := cp.env.Start()
	if err != nil {
		_ = cp.env.Stop()
		t.Fatalf("%s: starting etcd and kube-apiserver from %s: %v (logs in %s)", component, binDir, err, cp.logDir)
	}
	t.Cleanup(func() {
		if err := cp.env.Stop(); err != nil {
			t.Errorf("%s: stopping kube-apiserver and etcd: %v", component, err)
		}
		// An etcd started again by Hub.RestartEtcd is not envtest's: it stops after the apiserver.
		for _, stop := range cp.restartedEtcd {
			stop()
		}
	})
	cp.adminConfig = cfg
	return cp
}

// url returns the apiserver's https URL on 127.0.0.1 (on the pod network's host address with
// controlPlaneOptions.network).
func (cp *controlPlane) url() string {
	return cp.env.ControlPlane.APIServer.SecureServing.URL("https", "").String()
}

// hostPort returns the apiserver's host:port (see url).
func (cp *controlPlane) hostPort() string {
	return cp.env.ControlPlane.APIServer.SecureServing.HostPort()
}

// servingCA returns the PEM CA bundle that verifies the apiserver's serving certificate.
func (cp *controlPlane) servingCA() []byte {
	return cp.env.ControlPlane.APIServer.SecureServing.CA
}

// userConfig returns a rest.Config for server that authenticates as user in groups with a certificate signed by
// the control plane's signing CA.
func (cp *controlPlane) userConfig(server, user string, groups []string) (*rest.Config, error) {
	return cp.userConfigFrom(cp.ca, server, user, groups)
}

// userConfigFrom is userConfig with a certificate signed by ca.
func (cp *controlPlane) userConfigFrom(ca *testCA, server, user string, groups []string) (*rest.Config, error) {
	certPEM, keyPEM, err := ca.newClientCert(user, groups)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cp.component, err)
	}
	return &rest.Config{
		Host:            server,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.servingCA(), CertData: certPEM, KeyData: keyPEM},
		QPS:             cp.adminConfig.QPS,
		Burst:           cp.adminConfig.Burst,
	}, nil
}

// stopAPIServer stops kube-apiserver, keeping etcd, its port, certificates and data.
func (cp *controlPlane) stopAPIServer() error {
	if cp.apiserverStopped {
		return fmt.Errorf("%s: stopping kube-apiserver: already stopped", cp.component)
	}
	if err := cp.env.ControlPlane.APIServer.Stop(); err != nil {
		return fmt.Errorf("%s: stopping kube-apiserver: %w", cp.component, err)
	}
	cp.apiserverStopped = true
	return nil
}

// apiServerPID returns the PID of this control plane's kube-apiserver (pidOf, by its --secure-port).
func (cp *controlPlane) apiServerPID() (int, error) {
	_, port, err := net.SplitHostPort(cp.hostPort())
	if err != nil {
		return 0, fmt.Errorf("%s: kube-apiserver address %q: %w", cp.component, cp.hostPort(), err)
	}
	return cp.pidOf(BinaryKubeAPIServer, "--secure-port", port)
}

// etcdPID returns the PID of this control plane's etcd (pidOf, by its --listen-client-urls).
func (cp *controlPlane) etcdPID() (int, error) {
	return cp.pidOf(BinaryEtcd, "--listen-client-urls", cp.env.ControlPlane.Etcd.URL.String())
}

// parentPID returns the parent PID of process pid from /proc/<pid>/stat, or -1 when it cannot be read.
func parentPID(pid int) int {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses, so the fields start after the last ')'.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return -1
	}
	return ppid
}

// pidOf returns the PID of the child process of this test process whose executable is named binary and that has
// flag with value (as "--flag=value" or "--flag value"). It fails when none runs (stopped, or killed).
func (cp *controlPlane) pidOf(binary, flag, value string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("%s: finding %s: %w", cp.component, binary, err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || parentPID(pid) != os.Getpid() {
			// Only this process's children: another test bed's process may use the same port number (after
			// this one freed it, or in another network namespace).
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // the process ended meanwhile
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if filepath.Base(args[0]) != binary {
			continue
		}
		for i, a := range args {
			if a == flag+"="+value || a == flag && i+1 < len(args) && args[i+1] == value {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: no %s process with %s=%s runs", cp.component, binary, flag, value)
}

// startAPIServer starts kube-apiserver again on the same port with the same certificates and etcd, and waits
// until /readyz answers ok.
func (cp *controlPlane) startAPIServer() error {
	if !cp.apiserverStopped {
		return fmt.Errorf("%s: restarting kube-apiserver: it runs; stop it first", cp.component)
	}
	if err := cp.env.ControlPlane.APIServer.Start(); err != nil {
		return fmt.Errorf("%s: restarting kube-apiserver: %w (log %s)", cp.component, err,
			filepath.Join(cp.logDir, BinaryKubeAPIServer+".log"))
	}
	cp.apiserverStopped = false
	client, err := kubernetes.NewForConfig(cp.adminConfig)
	if err != nil {
		return fmt.Errorf("%s: %w", cp.component, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cp.startTimeout)
	defer cancel()
	var lastErr error
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, lastErr = client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return lastErr == nil, nil
	}); err != nil {
		return fmt.Errorf("%s: kube-apiserver not ready %s after restart: %v", cp.component, cp.startTimeout, lastErr)
	}
	return nil
}

// kubeconfig returns a self-contained kubeconfig (inline CA, client certificate and key or bearer token) for cfg, whose Host may
// differ from the apiserver's (e.g. a proxy).
func kubeconfig(cfg *rest.Config, contextName string) ([]byte, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("parsing server URL %q: %w", cfg.Host, err)
	}
	if u.Path == "/" {
		u.Path = "" // envtest's configs end in "/"; kubeconfigs conventionally do not
	}
	c := clientcmdapi.NewConfig()
	c.Clusters[contextName] = &clientcmdapi.Cluster{Server: u.String(), CertificateAuthorityData: cfg.CAData}
	c.AuthInfos[contextName] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	c.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	c.CurrentContext = contextName
	data, err := clientcmd.Write(*c)
	if err != nil {
		return nil, fmt.Errorf("encoding kubeconfig %q: %w", contextName, err)
	}
	return data, nil
}

// openLog opens file for appending and closes it in t.Cleanup (registered now, so it runs after the processes
// writing to it have stopped).
func openLog(t testing.TB, component, file string) *os.File {
	t.Helper()
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatalf("%s: creating log %s: %v", component, file, err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}
