package framework

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// NodeName is the name of the node the node suite runs: its Node object, the kubelet's client identity
// (system:node:<NodeName>) and --hostname-override.
const NodeName = "kf-node"

// Node is a real Kubernetes node on a spoke started with SpokeOptions.Network: a private containerd (Debian's
// package, its own socket, root, state, runc root and CNI configuration; any containerd already on the machine is
// left alone), the kubelet, kube-proxy (iptables) and kube-scheduler v1.34.3, and the spoke's
// kube-controller-manager, so Deployments get pods that the kubelet runs from images imported into containerd.
// Everything it starts stops in t.Cleanup: pods are deleted first (so the CNI plugin releases their network), then
// the processes by their recorded PIDs, containerd's shims, mounts, the kubelet's iptables chains and cgroups.
type Node struct {
	// Name is NodeName.
	Name string

	t       testing.TB
	spoke   *Spoke
	network *PodNetwork
	dir     string
	socket  string
	logDir  string
	binDir  string
	procs   map[string]*process
	// cgroupsNew are the kubepods cgroups to remove at shutdown (none existed when the node started).
	cgroupsNew []string
}

// Paths of the certificates a node's control plane writes into its certificate directory.
const (
	servingCAFile        = "serving-ca.crt"
	kubeletClientCert    = "kubelet-client.crt"
	kubeletClientKey     = "kubelet-client.key"
	serviceAccountKey    = "sa-signer.key" // envtest's name: it passes --service-account-signing-key-file
	serviceAccountPubKey = "sa-signer.crt" // envtest's name: it passes --service-account-key-file
)

// nodeAPIServerFlags writes the certificates of a node's control plane into certDir (envtest keeps existing ones)
// and returns the kube-apiserver flags a node needs. The serving certificate is valid for the pod network's
// host address, the `kubernetes` Service's ClusterIP and its DNS names, 127.0.0.1 and localhost; the service
// account key is an ECDSA key; the apiserver's client certificate for kubelets is an admin certificate.
func (cp *controlPlane) nodeAPIServerFlags(n *PodNetwork, certDir string, serving *envtest.SecureServing) ([]apiserverFlag, error) {
	caDir := filepath.Join(cp.dir, "serving-ca")
	if err := os.Mkdir(caDir, 0o700); err != nil {
		return nil, err
	}
	servingCA, err := newTestCA(cp.component+"-serving-ca", caDir)
	if err != nil {
		return nil, err
	}
	// A copy beside the apiserver's certificates, for kube-controller-manager's --root-ca-file.
	if err := os.WriteFile(filepath.Join(certDir, servingCAFile), servingCA.pem(), 0o600); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	der, err := servingCA.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(clientCertLifetime),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{n.HostIP, n.KubernetesServiceIP(), net.IPv4(127, 0, 0, 1)},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
	}, &key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("issuing the apiserver's serving certificate: %w", err)
	}
	if err := writePEMPair(filepath.Join(certDir, "apiserver.crt"), filepath.Join(certDir, "apiserver.key"), der, key); err != nil {
		return nil, err
	}
	serving.CA = servingCA.pem()

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saKeyPEM, err := keyutil.MarshalPrivateKeyToPEM(saKey)
	if err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, serviceAccountKey), saKeyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, serviceAccountPubKey), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub}), 0o600); err != nil {
		return nil, err
	}

	certPEM, keyPEM, err := cp.adminCA.newClientCert("kube-apiserver-kubelet-client", []string{"system:masters"})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, kubeletClientCert), certPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, kubeletClientKey), keyPEM, 0o600); err != nil {
		return nil, err
	}
	return []apiserverFlag{
		{name: "advertise-address", value: n.HostIP.String()},
		{name: "service-cluster-ip-range", value: n.ServiceCIDR.String()},
		{name: "kubelet-client-certificate", value: filepath.Join(certDir, kubeletClientCert)},
		{name: "kubelet-client-key", value: filepath.Join(certDir, kubeletClientKey)},
		{name: "kubelet-preferred-address-types", value: "InternalIP"},
		{name: "enable-admission-plugins", value: "NodeRestriction"},
		{name: "endpoint-reconciler-type", value: "lease"},
	}, nil
}

// writePEMPair writes a DER certificate and its ECDSA key as PEM files (0600).
func writePEMPair(certFile, keyFile string, der []byte, key *ecdsa.PrivateKey) error {
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: cert.CertificateBlockType, Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(keyFile, keyPEM, 0o600)
}

// StartNode starts the node on spoke (started with SpokeOptions.Network), imports images (docker-archive tarballs,
// see NodeImages) into its containerd, and waits until the Node is Ready (up to DefaultStartTimeout each step).
// It stops everything in t.Cleanup. Failures call t.Fatal naming the component and its log.
func StartNode(t testing.TB, spoke *Spoke, images ...string) *Node {
	t.Helper()
	start := time.Now()
	if spoke.network == nil {
		t.Fatalf("node: the spoke has no pod network: start it with SpokeOptions.Network")
	}
	binDir, err := BinariesDir(BinaryKubelet, BinaryKubeProxy, BinaryKubeScheduler, BinaryKubeControllerManager)
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	n := &Node{Name: NodeName, t: t, spoke: spoke, network: spoke.network, binDir: binDir, procs: map[string]*process{},
		logDir: logDir(t, "node"), socket: filepath.Join(spoke.network.runDir, "containerd.sock")}
	n.dir, err = os.MkdirTemp("", "kf-node-")
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	// Another kubelet would kill this node's pods (and this one its pods: both use the kubepods cgroup), and
	// another kube-proxy's chains would be removed by this node's cleanup.
	// Leftovers of a run that died are removed; a kubepods cgroup with processes is another kubelet's.
	for _, dir := range kubepodsCgroups() {
		if procs := cgroupProcesses(dir); len(procs) > 0 {
			t.Fatalf("node: another kubelet runs on this machine (cgroup %s holds processes %v); the node suite needs the machine's kubelet slot to itself", dir, procs)
		}
		if err := removeCgroupTree(dir); err != nil {
			t.Fatalf("node: removing the leftover cgroup %s: %v", dir, err)
		}
	}
	if chains := kubeChainsPresent(); len(chains) > 0 {
		t.Fatalf("node: another kube-proxy or kubelet runs on this machine, or a run died before its cleanup (iptables chains %v); the node suite needs them to itself", chains)
	}
	t.Cleanup(func() {
		n.cgroupsNew = kubepodsCgroups()
		n.shutdown()
	})

	timings := []string{}
	step := func(name string, f func() error) {
		t.Helper()
		began := time.Now()
		if err := f(); err != nil {
			t.Fatalf("node: %s: %v", name, err)
		}
		timings = append(timings, fmt.Sprintf("%s %s", name, time.Since(began).Round(time.Millisecond)))
	}
	step("kube-controller-manager", n.startControllerManager)
	step("kube-scheduler", n.startScheduler)
	step("containerd", n.startContainerd)
	step("images", func() error {
		pause, err := PauseImage()
		if err != nil {
			return err
		}
		for _, img := range append([]string{pause}, images...) {
			if err := n.ImportImage(img); err != nil {
				return err
			}
		}
		return nil
	})
	step("kubelet", n.startKubelet)
	step("kube-proxy", n.startKubeProxy)
	t.Logf("node %s started in %s (%s), logs %s", n.Name, time.Since(start).Round(time.Millisecond), strings.Join(timings, ", "), n.logDir)
	return n
}

// ImportImage imports a docker-archive or OCI tarball into the node's containerd (namespace k8s.io, the one the
// CRI plugin serves), so that pods naming its tag with imagePullPolicy IfNotPresent or Never run it without a pull.
func (n *Node) ImportImage(tarball string) error {
	out, err := exec.Command("ctr", "--address", n.socket, "-n", "k8s.io", "images", "import", tarball).CombinedOutput()
	if err != nil {
		return fmt.Errorf("importing image %s: %v: %s", tarball, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// KillContainer sends SIGKILL to the running container named container of pod namespace/name through containerd,
// as a crash or an OOM kill would; the kubelet restarts it by the pod's restart policy. It returns the killed
// container's ID; errors name the pod when it has no running container of that name.
func (n *Node) KillContainer(ctx context.Context, namespace, name, container string) (string, error) {
	pod, err := n.spoke.Kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != container || cs.State.Running == nil {
			continue
		}
		id := strings.TrimPrefix(cs.ContainerID, "containerd://")
		out, err := exec.CommandContext(ctx, "ctr", "--address", n.socket, "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", id).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("killing container %s of pod %s/%s: %v: %s", container, namespace, name, err, strings.TrimSpace(string(out)))
		}
		return id, nil
	}
	return "", fmt.Errorf("pod %s/%s has no running container %q", namespace, name, container)
}

// ResourceMetrics returns the kubelet's /metrics/resource (Prometheus text: container_memory_working_set_bytes
// and container_cpu_usage_seconds_total per container, among others), read through the apiserver's node proxy.
func (n *Node) ResourceMetrics(ctx context.Context) (string, error) {
	data, err := n.spoke.Kube.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", n.Name, "proxy", "metrics", "resource").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the kubelet's /metrics/resource: %w", err)
	}
	return string(data), nil
}

// podLogsDir is the kubelet's podLogsDir: the containers' logs, <namespace>_<pod>_<uid>/<container>/<n>.log.
func (n *Node) podLogsDir() string { return filepath.Join(n.dir, "pod-logs") }

// copyTree copies the regular files under src to the same relative paths under dst (a missing src copies
// nothing).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// LogDir returns the directory holding the logs of the node's processes and, after the node stopped, its
// containers' logs under pods/ (<namespace>_<pod>_<uid>/<container>/<restart>.log).
func (n *Node) LogDir() string { return n.logDir }

// startControllerManager runs the spoke's kube-controller-manager with its default controllers (Deployments,
// ReplicaSets, ServiceAccounts, the root CA ConfigMap, garbage collection, node lifecycle).
func (n *Node) startControllerManager() error {
	port, err := freeLoopbackPort()
	if err != nil {
		return err
	}
	certDir := filepath.Join(n.spoke.cp.dir, "kube-apiserver")
	kc := n.spoke.KubeconfigFile()
	args := []string{
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--controllers=*,-cloud-node-lifecycle,-csrsigning,-nodeipam",
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--service-account-private-key-file=" + filepath.Join(certDir, serviceAccountKey),
		"--root-ca-file=" + filepath.Join(certDir, servingCAFile),
		"--service-cluster-ip-range=" + n.network.ServiceCIDR.String(),
		"--allocate-node-cidrs=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(n.dir, "kube-controller-manager"),
	}
	return n.startHealthy(BinaryKubeControllerManager, args, fmt.Sprintf("https://127.0.0.1:%d/healthz", port))
}

// startScheduler runs kube-scheduler as system:kube-scheduler (the identity its bootstrap RBAC names).
func (n *Node) startScheduler() error {
	port, err := freeLoopbackPort()
	if err != nil {
		return err
	}
	kc, err := n.identityKubeconfig("kube-scheduler", "system:kube-scheduler", nil)
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
leaderElection:
  leaderElect: false
`, kc)
	cfgFile := filepath.Join(n.dir, "kube-scheduler.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return err
	}
	args := []string{"--config=" + cfgFile, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port)}
	return n.startHealthy(BinaryKubeScheduler, args, fmt.Sprintf("https://127.0.0.1:%d/healthz", port))
}

// startContainerd runs a private containerd with the CRI settings this machine needs (restrict_oom_score_adj:
// root here has no CAP_SYS_RESOURCE, so runc cannot give sandboxes a negative oom_score_adj) and the pod network's
// CNI configuration, and waits for its socket.
func (n *Node) startContainerd() error {
	run := n.network.runDir
	cniConf := filepath.Join(n.dir, "cni", "net.d")
	if err := os.MkdirAll(cniConf, 0o755); err != nil {
		return err
	}
	conflist := fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": %[1]q,
  "plugins": [
    {
      "type": "bridge", "bridge": %[1]q, "isGateway": true, "isDefaultGateway": false,
      "ipMasq": false, "hairpinMode": true,
      "ipam": {
        "type": "host-local", "dataDir": %[2]q,
        "ranges": [[{"subnet": %[3]q, "rangeStart": %[4]q, "rangeEnd": %[5]q, "gateway": %[6]q}]],
        "routes": [{"dst": %[7]q, "gw": %[6]q}]
      }
    }
  ]
}
`, n.network.Bridge, filepath.Join(run, "cni-ipam"), n.network.PodCIDR.String(), hostOf(n.network.PodCIDR, 10),
		hostOf(n.network.PodCIDR, 250), n.network.HostIP.String(), n.network.ServiceCIDR.String())
	if err := os.WriteFile(filepath.Join(cniConf, "10-"+n.network.Bridge+".conflist"), []byte(conflist), 0o644); err != nil {
		return err
	}
	cfg := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = %[3]q
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = %[4]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[6]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[7]q
    conf_dir = %[8]q
    max_conf_num = 1
`, filepath.Join(n.dir, "containerd", "root"), filepath.Join(run, "state"), n.socket, filepath.Join(n.dir, "containerd", "opt"),
		PauseImageRef, filepath.Join(run, "runc"), cniBinDir, cniConf)
	cfgFile := filepath.Join(n.dir, "containerd.toml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return err
	}
	bin, err := exec.LookPath("containerd")
	if err != nil {
		return err
	}
	p, err := startProcess("containerd", n.logDir, bin, []string{"--config", cfgFile})
	if err != nil {
		return err
	}
	n.procs["containerd"] = p
	return waitFor(DefaultStartTimeout, p, func() error {
		return exec.Command("ctr", "--address", n.socket, "version").Run()
	})
}

// startKubelet runs the kubelet against the private containerd with a client certificate of
// system:node:<NodeName> (no bootstrap token, no CSR) and waits until the Node is Ready.
func (n *Node) startKubelet() error {
	port, err := freePort(n.network.HostIP.String())
	if err != nil {
		return err
	}
	healthz, err := freeLoopbackPort()
	if err != nil {
		return err
	}
	kc, err := n.identityKubeconfig("kubelet", "system:node:"+n.Name, []string{"system:nodes"})
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: %[2]d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %[3]d
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %[4]q}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
failCgroupV1: false
containerRuntimeEndpoint: unix://%[5]s
imageServiceEndpoint: unix://%[5]s
resolvConf: ""
clusterDomain: cluster.local
failSwapOn: false
rotateCertificates: false
serverTLSBootstrap: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%%", imagefs.available: "1%%", nodefs.inodesFree: "1%%"}
maxPods: 50
podLogsDir: %[6]q
`, n.network.HostIP, port, healthz, n.spoke.cp.authn.bundleFile, n.socket, n.podLogsDir())
	cfgFile := filepath.Join(n.dir, "kubelet.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return err
	}
	args := []string{"--config=" + cfgFile, "--kubeconfig=" + kc, "--hostname-override=" + n.Name,
		"--node-ip=" + n.network.HostIP.String(), "--root-dir=" + filepath.Join(n.dir, "kubelet"),
		"--cert-dir=" + filepath.Join(n.dir, "kubelet-pki"), "--v=2"}
	p, err := startProcess(BinaryKubelet, n.logDir, filepath.Join(n.binDir, BinaryKubelet), args)
	if err != nil {
		return err
	}
	n.procs[BinaryKubelet] = p
	return waitFor(DefaultStartTimeout, p, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		node, err := n.spoke.Kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				if c.Status == corev1.ConditionTrue {
					return nil
				}
				return fmt.Errorf("node %s Ready=%s: %s", n.Name, c.Status, c.Message)
			}
		}
		return fmt.Errorf("node %s has no Ready condition", n.Name)
	})
}

// startKubeProxy runs kube-proxy in iptables mode as system:kube-proxy, leaving the conntrack sysctls and
// route_localnet alone and NodePorts on the bridge address only.
func (n *Node) startKubeProxy() error {
	healthz, err := freeLoopbackPort()
	if err != nil {
		return err
	}
	metrics, err := freeLoopbackPort()
	if err != nil {
		return err
	}
	kc, err := n.identityKubeconfig("kube-proxy", "system:kube-proxy", nil)
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: %[1]q}
hostnameOverride: %[2]s
bindAddress: %[3]s
healthzBindAddress: 127.0.0.1:%[4]d
metricsBindAddress: 127.0.0.1:%[5]d
clusterCIDR: %[6]s
nodePortAddresses: ["%[3]s/32"]
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false, masqueradeAll: false}
`, kc, n.Name, n.network.HostIP, healthz, metrics, n.network.PodCIDR)
	cfgFile := filepath.Join(n.dir, "kube-proxy.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return err
	}
	p, err := startProcess(BinaryKubeProxy, n.logDir, filepath.Join(n.binDir, BinaryKubeProxy), []string{"--config=" + cfgFile})
	if err != nil {
		return err
	}
	n.procs[BinaryKubeProxy] = p
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", healthz)
	return waitFor(DefaultStartTimeout, p, func() error {
		resp, err := http.Get(url) //nolint:gosec,noctx // loopback health check
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s answered %d", url, resp.StatusCode)
		}
		return nil
	})
}

// startHealthy starts binary name from the binaries directory and waits for its https health URL.
func (n *Node) startHealthy(name string, args []string, url string) error {
	p, err := startProcess(name, n.logDir, filepath.Join(n.binDir, name), args)
	if err != nil {
		return err
	}
	n.procs[name] = p
	return p.waitHealthy(url, DefaultStartTimeout)
}

// identityKubeconfig writes a kubeconfig for the spoke's apiserver with a client certificate of user in groups
// (signed by the admin CA) and returns its path.
func (n *Node) identityKubeconfig(name, user string, groups []string) (string, error) {
	cfg, err := n.spoke.cp.userConfigFrom(n.spoke.cp.adminCA, n.spoke.URL(), user, groups)
	if err != nil {
		return "", err
	}
	data, err := kubeconfig(cfg, name)
	if err != nil {
		return "", err
	}
	file := filepath.Join(n.dir, name+".kubeconfig")
	return file, os.WriteFile(file, data, 0o600)
}

// shutdown stops the node in the order that leaves nothing behind: the controllers first (nothing new is created),
// then every pod is deleted while the kubelet still runs (it stops the containers and the CNI plugin releases
// their addresses and veths), then the kubelet and kube-proxy, kube-proxy's and the kubelet's iptables chains,
// containerd and its shims, the mounts under the node's directory and the kubepods cgroups the kubelet created
// (the pod network's cleanup unmounts containerd's state under /run/kf-node-<N> and removes the bridge).
func (n *Node) shutdown() {
	t := n.t
	stop := func(name string) {
		if p := n.procs[name]; p != nil {
			if err := p.stop(stopTimeout); err != nil {
				t.Errorf("node: %v", err)
			}
		}
	}
	stop(BinaryKubeScheduler)
	stop(BinaryKubeControllerManager)
	// The containers' logs, kept with the test's logs before the pods and their logs go.
	if err := copyTree(n.podLogsDir(), filepath.Join(n.logDir, "pods")); err != nil {
		t.Logf("node: keeping the pods' logs: %v", err)
	}
	if kubelet := n.procs[BinaryKubelet]; kubelet != nil {
		if exited, _ := kubelet.exited(); !exited {
			if err := n.deleteAllPods(); err != nil {
				t.Errorf("node: %v", err)
			}
		}
	}
	stop(BinaryKubelet)
	stop(BinaryKubeProxy)
	if n.procs[BinaryKubelet] != nil || n.procs[BinaryKubeProxy] != nil {
		if err := n.cleanupIPTables(); err != nil {
			t.Errorf("node: %v", err)
		}
	}
	if n.procs["containerd"] != nil {
		n.removeContainers()
	}
	stop("containerd")
	n.killShims()
	if err := unmountUnder(n.dir); err != nil {
		t.Errorf("node: %v", err)
	}
	for _, dir := range n.cgroupsNew {
		if err := removeCgroupTree(dir); err != nil {
			t.Errorf("node: removing cgroup %s: %v", dir, err)
		}
	}
	if err := os.RemoveAll(n.dir); err != nil {
		t.Errorf("node: removing %s: %v", n.dir, err)
	}
}

// deleteAllPods deletes every pod of the spoke and waits (up to a minute) until containerd runs no task: the
// kubelet has stopped every container and sandbox.
func (n *Node) deleteAllPods() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pods, err := n.spoke.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing pods to delete: %w", err)
	}
	grace := int64(2)
	for _, p := range pods.Items {
		_ = n.spoke.Kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	}
	var running []string
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		running = n.runningTasks()
		left, err := n.spoke.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		return len(running) == 0 && len(left.Items) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("pods still running a minute after their deletion (containerd tasks %v); kubelet log %s",
			running, n.procs[BinaryKubelet].logPath)
	}
	return nil
}

// runningTasks returns the IDs of containerd's running tasks in namespace k8s.io.
func (n *Node) runningTasks() []string {
	out, err := exec.Command("ctr", "--address", n.socket, "-n", "k8s.io", "tasks", "ls").Output()
	if err != nil {
		return []string{"(ctr tasks ls failed: " + err.Error() + ")"}
	}
	var ids []string
	for _, line := range strings.Split(string(out), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) >= 3 && f[2] == "RUNNING" {
			ids = append(ids, f[0])
		}
	}
	return ids
}

// removeContainers kills and removes what containerd still holds after the kubelet stopped (nothing, unless a
// pod outlived deleteAllPods).
func (n *Node) removeContainers() {
	out, err := exec.Command("ctr", "--address", n.socket, "-n", "k8s.io", "containers", "ls", "-q").Output()
	if err != nil {
		return
	}
	for _, id := range strings.Fields(string(out)) {
		_ = exec.Command("ctr", "--address", n.socket, "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", id).Run()
		_ = exec.Command("ctr", "--address", n.socket, "-n", "k8s.io", "tasks", "rm", "-f", id).Run()
		_ = exec.Command("ctr", "--address", n.socket, "-n", "k8s.io", "containers", "rm", id).Run()
	}
}

// killShims kills containerd-shim processes started for this node's containerd (their command line names its
// socket); other containerds' shims are left alone.
func (n *Node) killShims() {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) == 0 || !strings.HasPrefix(filepath.Base(args[0]), "containerd-shim") {
			continue
		}
		if strings.Contains(string(cmdline), n.socket) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// cleanupIPTables removes, for IPv4 and IPv6, every iptables chain named KUBE-* in the filter, nat and mangle
// tables and the rules of the built-in chains that jump to them: what kube-proxy (iptables mode) and the kubelet
// (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT) wrote. StartNode refuses to start when such chains
// exist already, so these are this node's. kube-proxy --cleanup is not used: it also flushes every IPVS service
// of the machine.
func (n *Node) cleanupIPTables() error {
	var errs []error
	for _, ipt := range []string{"iptables", "ip6tables"} {
		if _, err := exec.LookPath(ipt); err != nil {
			continue
		}
		for _, table := range []string{"filter", "nat", "mangle"} {
			out, err := exec.Command(ipt, "-t", table, "-S").Output()
			if err != nil {
				continue // e.g. no ip6 table on this kernel
			}
			var chains []string
			for _, line := range strings.Split(string(out), "\n") {
				args := splitRule(line)
				switch {
				case len(args) == 2 && args[0] == "-N" && strings.HasPrefix(args[1], "KUBE-"):
					chains = append(chains, args[1])
				case len(args) > 2 && args[0] == "-A" && !strings.HasPrefix(args[1], "KUBE-") && jumpsToKube(args):
					del := append([]string{"-t", table, "-D"}, args[1:]...)
					if out, err := exec.Command(ipt, del...).CombinedOutput(); err != nil {
						errs = append(errs, fmt.Errorf("%s %s: %v: %s", ipt, strings.Join(del, " "), err, strings.TrimSpace(string(out))))
					}
				}
			}
			for _, op := range []string{"-F", "-X"} {
				for _, c := range chains {
					if out, err := exec.Command(ipt, "-t", table, op, c).CombinedOutput(); err != nil {
						errs = append(errs, fmt.Errorf("%s -t %s %s %s: %v: %s", ipt, table, op, c, err, strings.TrimSpace(string(out))))
					}
				}
			}
		}
	}
	return errors.Join(errs...)
}

// kubeChainsPresent returns the KUBE-* chains of the IPv4 filter and nat tables: those of a kube-proxy or kubelet
// already running on this machine.
func kubeChainsPresent() []string {
	var found []string
	for _, table := range []string{"filter", "nat"} {
		out, err := exec.Command("iptables", "-t", table, "-S").Output()
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(out), "\n") {
			if args := splitRule(line); len(args) == 2 && args[0] == "-N" && strings.HasPrefix(args[1], "KUBE-") {
				found = append(found, table+"/"+args[1])
			}
		}
	}
	return found
}

// jumpsToKube reports whether the rule's target (-j or -g) is a KUBE-* chain.
func jumpsToKube(args []string) bool {
	for i := 0; i+1 < len(args); i++ {
		if (args[i] == "-j" || args[i] == "-g") && strings.HasPrefix(args[i+1], "KUBE-") {
			return true
		}
	}
	return false
}

// splitRule splits one line of `iptables -S` into its arguments; double-quoted arguments (comments) keep their
// spaces.
func splitRule(line string) []string {
	var args []string
	var cur strings.Builder
	inQuote, have := false, false
	for _, r := range line {
		switch {
		case r == '"':
			inQuote, have = !inQuote, true
		case r == ' ' && !inQuote:
			if have {
				args = append(args, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		args = append(args, cur.String())
	}
	return args
}

// unmountUnder lazily unmounts every mount point under dir, deepest first (the kubelet's Secret and projected
// tmpfs volumes, containerd's overlay rootfs and shm mounts).
func unmountUnder(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescapeMountPath(fields[4])
		if p == dir || strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// unescapeMountPath decodes the octal escapes (\040 for a space) of /proc/self/mountinfo.
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// kubepodsCgroups returns the kubepods cgroup directories (the kubelet's pod cgroup root, cgroupfs driver) of
// every mounted cgroup v1 hierarchy and of cgroup v2.
func kubepodsCgroups() []string {
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	if v2, err := os.Stat("/sys/fs/cgroup/kubepods"); err == nil && v2.IsDir() {
		dirs = append(dirs, "/sys/fs/cgroup/kubepods")
	}
	return dirs
}

// removeCgroupTree removes the empty cgroup directory dir and its descendants, deepest first.
func removeCgroupTree(dir string) error {
	var all []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			all = append(all, p)
		}
		return nil
	})
	sort.Slice(all, func(i, j int) bool { return len(all[i]) > len(all[j]) })
	var errs []error
	for _, p := range all {
		if err := syscall.Rmdir(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// cgroupProcesses returns the PIDs in the cgroup.procs files of dir and its descendants.
func cgroupProcesses(dir string) []string {
	var pids []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "cgroup.procs" {
			if data, err := os.ReadFile(p); err == nil {
				pids = append(pids, strings.Fields(string(data))...)
			}
		}
		return nil
	})
	return pids
}

// freePort returns a TCP port on host that was free a moment ago.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("finding a free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitFor polls check every 200 ms until it returns nil, p exits or timeout passes; the error names p and its log.
func waitFor(timeout time.Duration, p *process, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		if done, err := p.exited(); done {
			return fmt.Errorf("%s exited (%v); log %s:\n%s", p.name, err, p.logPath, tailFile(p.logPath, logTailLines))
		}
		last := check()
		if last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s (last: %v); log %s:\n%s", p.name, timeout, last, p.logPath, tailFile(p.logPath, logTailLines))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ContainerPID returns the host PID of the init process of the running container named container of pod
// namespace/name (containerd's task PID).
func (n *Node) ContainerPID(ctx context.Context, namespace, name, container string) (int, error) {
	pod, err := n.spoke.Kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != container || cs.State.Running == nil {
			continue
		}
		id := strings.TrimPrefix(cs.ContainerID, "containerd://")
		out, err := exec.CommandContext(ctx, "ctr", "--address", n.socket, "-n", "k8s.io", "tasks", "ls").Output()
		if err != nil {
			return 0, fmt.Errorf("listing containerd tasks: %w", err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == id {
				return strconv.Atoi(f[1])
			}
		}
		return 0, fmt.Errorf("container %s of pod %s/%s (%s) has no containerd task", container, namespace, name, id)
	}
	return 0, fmt.Errorf("pod %s/%s has no running container %q", namespace, name, container)
}

// ContainerUID returns the real uid the container's init process runs as (the Uid line of /proc/<pid>/status).
func (n *Node) ContainerUID(ctx context.Context, namespace, name, container string) (int, error) {
	pid, err := n.ContainerPID(ctx, namespace, name, container)
	if err != nil {
		return 0, err
	}
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Uid:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				return strconv.Atoi(f[0])
			}
		}
	}
	return 0, fmt.Errorf("no Uid line in /proc/%d/status", pid)
}

// ContainerWorkingSet returns the working set of container in pod namespace/name as the kubelet reports it
// (container_memory_working_set_bytes of /metrics/resource, bytes): the figure the kubelet's eviction and
// `kubectl top` use.
func (n *Node) ContainerWorkingSet(ctx context.Context, namespace, name, container string) (float64, error) {
	text, err := n.ResourceMetrics(ctx)
	if err != nil {
		return 0, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return 0, fmt.Errorf("parsing the kubelet's /metrics/resource: %w", err)
	}
	family := families["container_memory_working_set_bytes"]
	if family == nil {
		return 0, fmt.Errorf("the kubelet's /metrics/resource has no container_memory_working_set_bytes")
	}
	for _, m := range family.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["namespace"] == namespace && labels["pod"] == name && labels["container"] == container {
			return m.GetGauge().GetValue(), nil
		}
	}
	return 0, fmt.Errorf("the kubelet reports no working set for container %s of pod %s/%s yet", container, namespace, name)
}

// ContainerAnonymousMemory returns the anonymous memory of container in pod namespace/name, in bytes, from its
// memory cgroup: "rss" of memory.stat on cgroup v1 (anonymous and swap cache memory), "anon" on cgroup v2. It
// counts what the container's processes allocated, not the page cache of their binaries.
func (n *Node) ContainerAnonymousMemory(ctx context.Context, namespace, name, container string) (int64, error) {
	pid, err := n.ContainerPID(ctx, namespace, name, container)
	if err != nil {
		return 0, err
	}
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return 0, err
	}
	statFile, key := "", ""
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if slices.Contains(strings.Split(parts[1], ","), "memory") {
			statFile, key = filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.stat"), "rss"
			break
		}
		if parts[0] == "0" && parts[1] == "" {
			statFile, key = filepath.Join("/sys/fs/cgroup", parts[2], "memory.stat"), "anon"
		}
	}
	if statFile == "" {
		return 0, fmt.Errorf("no memory cgroup for pid %d in /proc/%d/cgroup", pid, pid)
	}
	stat, err := os.ReadFile(statFile)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(stat), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == key {
			return strconv.ParseInt(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("%s has no %q line", statFile, key)
}
