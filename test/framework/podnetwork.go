package framework

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// PodNetwork is the network of the node suite's pods: a Linux bridge the test creates on this machine, with the
// host's address on it, a pod subnet handed out by the CNI bridge plugin and a service range that kube-proxy
// programs. Nothing is routed off the machine: pods get routes to the pod subnet and the service range only (no
// default route), the CNI plugin masquerades nothing, and an iptables rule (mangle FORWARD, ahead of anything
// kube-proxy writes) drops whatever enters from the bridge and would leave through another interface. The
// apiservers of the test listen on HostIP so that pods reach them, and they are all pods reach on this machine: a
// second guard (mangle INPUT, chain KF-POD-IN-<N>) drops what enters from the bridge for the host itself unless it
// answers a connection the host opened or goes to a port AllowHostPort opened (each hub's and the spoke's
// apiserver, a hub's proxy).
type PodNetwork struct {
	// Bridge is the bridge's interface name, kfbr<N>.
	Bridge string
	// HostIP is the host's address on the bridge (10.201.<N>.1): the pods' gateway, the node's InternalIP and the
	// address the node suite's apiservers listen on.
	HostIP net.IP
	// PodCIDR is the pods' subnet, 10.201.<N>.0/24; the CNI plugin hands out .10 to .250.
	PodCIDR *net.IPNet
	// ServiceCIDR is the spoke's service range, 10.202.<N>.0/24; its first address is the `kubernetes` Service.
	ServiceCIDR *net.IPNet

	// index is <N>: it names the bridge and the run directory.
	index int
	// runDir (/run/kf-node-<N>) holds what must have a short path: containerd's socket and state, CNI's IPAM data.
	runDir string
}

const (
	// egressGuardComment marks the iptables FORWARD rule that drops traffic from a pod network to anywhere else.
	egressGuardComment = "klusterlet-failover-node-egress-guard"
	// inputGuardComment marks the rule of the INPUT guard's chain that drops what pods send to this machine.
	inputGuardComment = "klusterlet-failover-node-input-guard"
	// podNetworkSecondOctetPods and podNetworkSecondOctetServices are the second octets of the pod and service
	// ranges (10.201.<N>.0/24, 10.202.<N>.0/24), the ranges of the manual check in the node notes.
	podNetworkSecondOctetPods     = 201
	podNetworkSecondOctetServices = 202
)

// savedSysctls are the kernel settings the kubelet (kernel.panic, kernel.panic_on_oops, vm.overcommit_memory,
// vm.panic_on_oom and the root key quotas: its protectKernelDefaults=false behaviour) and the CNI bridge plugin
// (net.ipv4.ip_forward, for isGateway) change; StartPodNetwork saves them and restores them in cleanup, in order.
// net.ipv4.ip_forward comes first: writing it also rewrites net.ipv4.conf.all.accept_redirects and the
// forwarding setting of every interface (the kernel's inet_forward_change), which are restored after it.
var savedSysctls = []string{"net.ipv4.ip_forward", "net.ipv4.conf.all.accept_redirects", "net.ipv4.conf.all.forwarding",
	"net.ipv4.conf.default.forwarding", "kernel.panic", "kernel.panic_on_oops", "vm.overcommit_memory", "vm.panic_on_oom",
	"kernel.keys.root_maxkeys", "kernel.keys.root_maxbytes"}

// StartPodNetwork creates a pod network and removes it in t.Cleanup (the bridge, its route and the egress guard; the
// kernel settings the node changes are restored). It fails the test with one message naming what is missing when
// this machine cannot run a node: not root, no `ip` or `iptables` command, a kernel without bridges, or no
// containerd, runc or CNI bridge plugin (hack/install-node-deps.sh installs them).
func StartPodNetwork(t testing.TB) *PodNetwork {
	t.Helper()
	if err := NodePreconditions(); err != nil {
		t.Fatalf("pod network: this machine cannot run the node suite: %v", err)
	}
	saved := map[string]string{}
	for _, key := range savedSysctls {
		v, err := readSysctl(key)
		if errors.Is(err, fs.ErrNotExist) {
			continue // not on this kernel: nobody changes it
		}
		if err != nil {
			t.Fatalf("pod network: %v", err)
		}
		saved[key] = v
	}
	t.Cleanup(func() {
		for _, key := range savedSysctls {
			if _, ok := saved[key]; !ok {
				continue
			}
			if err := writeSysctl(key, saved[key]); err != nil {
				t.Errorf("pod network: restoring %s=%s: %v", key, saved[key], err)
			}
		}
	})

	used, err := usedIPv4Nets()
	if err != nil {
		t.Fatalf("pod network: %v", err)
	}
	n := &PodNetwork{}
	start := rand.IntN(250)
	for i := range 250 {
		idx := (start + i) % 250
		pods := &net.IPNet{IP: net.IPv4(10, podNetworkSecondOctetPods, byte(idx), 0).To4(), Mask: net.CIDRMask(24, 32)}
		services := &net.IPNet{IP: net.IPv4(10, podNetworkSecondOctetServices, byte(idx), 0).To4(), Mask: net.CIDRMask(24, 32)}
		if overlapsAny(pods, used) || overlapsAny(services, used) {
			continue
		}
		name := "kfbr" + strconv.Itoa(idx)
		if _, err := net.InterfaceByName(name); err == nil {
			continue
		}
		n.index, n.Bridge, n.PodCIDR, n.ServiceCIDR = idx, name, pods, services
		n.HostIP = net.IPv4(10, podNetworkSecondOctetPods, byte(idx), 1).To4()
		break
	}
	if n.Bridge == "" {
		t.Fatalf("pod network: no free 10.%d.N.0/24 and 10.%d.N.0/24 pair on this machine", podNetworkSecondOctetPods, podNetworkSecondOctetServices)
	}
	// The bridge is created first: a name another test bed took in between fails here, before anything of
	// that test bed could be touched by this one's cleanup.
	if err := run("ip", "link", "add", n.Bridge, "type", "bridge"); err != nil {
		t.Fatalf("pod network: %v", err)
	}
	t.Cleanup(func() {
		if err := run("ip", "link", "del", n.Bridge); err != nil {
			t.Errorf("pod network: removing bridge %s: %v", n.Bridge, err)
		}
	})
	n.runDir = filepath.Join("/run", "kf-node-"+strconv.Itoa(n.index))
	if err := os.Mkdir(n.runDir, 0o700); err != nil {
		t.Fatalf("pod network: %v", err)
	}
	t.Cleanup(func() {
		if err := unmountUnder(n.runDir); err != nil {
			t.Errorf("pod network: %v", err)
		}
		if err := os.RemoveAll(n.runDir); err != nil {
			t.Errorf("pod network: removing %s: %v", n.runDir, err)
		}
	})

	ones, _ := n.PodCIDR.Mask.Size()
	steps := [][]string{
		{"ip", "addr", "add", fmt.Sprintf("%s/%d", n.HostIP, ones), "dev", n.Bridge},
		{"ip", "link", "set", n.Bridge, "up"},
		// ClusterIP traffic of host processes that kube-proxy has not rewritten yet stays on the bridge.
		{"ip", "route", "add", n.ServiceCIDR.String(), "dev", n.Bridge},
	}
	for _, s := range steps {
		if err := run(s[0], s[1:]...); err != nil {
			t.Fatalf("pod network: %v", err)
		}
	}
	// In the mangle table, which kube-proxy never touches: its filter FORWARD rules (KUBE-FORWARD accepts
	// packets it marked for masquerade) come first in the filter table, so a guard there could be bypassed.
	rule := []string{"-i", n.Bridge, "!", "-o", n.Bridge, "-m", "comment", "--comment", egressGuardComment, "-j", "DROP"}
	if err := run("iptables", append([]string{"-t", "mangle", "-I", "FORWARD", "1"}, rule...)...); err != nil {
		t.Fatalf("pod network: adding the egress guard: %v", err)
	}
	t.Cleanup(func() {
		if err := run("iptables", append([]string{"-t", "mangle", "-D", "FORWARD"}, rule...)...); err != nil {
			t.Errorf("pod network: removing the egress guard: %v", err)
		}
	})
	if err := n.startInputGuard(t); err != nil {
		t.Fatalf("pod network: %v", err)
	}
	t.Logf("pod network: bridge %s, host %s, pods %s, services %s", n.Bridge, n.HostIP, n.PodCIDR, n.ServiceCIDR)
	return n
}

// inputChain is the mangle chain of n's INPUT guard.
func (n *PodNetwork) inputChain() string { return "KF-POD-IN-" + strconv.Itoa(n.index) }

// startInputGuard makes the host drop what pods send it (INPUT from the bridge, in the mangle table, before
// anything else) except replies to connections the host opened (the kubelet's probes) and the ports AllowHostPort
// opens; it is removed in t.Cleanup. A chain left by a run that died is flushed and reused.
func (n *PodNetwork) startInputGuard(t testing.TB) error {
	chain := n.inputChain()
	if err := run("iptables", "-t", "mangle", "-N", chain); err != nil {
		if err := run("iptables", "-t", "mangle", "-F", chain); err != nil {
			return fmt.Errorf("the input guard: %w", err)
		}
	}
	jump := []string{"-i", n.Bridge, "-j", chain}
	// Every jump to the chain goes, also one a run that died left: -X refuses a chain still jumped to.
	removeJumps := func() {
		for range 10 {
			if run("iptables", append([]string{"-t", "mangle", "-D", "INPUT"}, jump...)...) != nil {
				return
			}
		}
	}
	removeJumps()
	t.Cleanup(func() {
		removeJumps()
		if err := run("iptables", "-t", "mangle", "-F", chain); err != nil {
			t.Errorf("pod network: removing the input guard: %v", err)
		}
		if err := run("iptables", "-t", "mangle", "-X", chain); err != nil {
			t.Errorf("pod network: removing the input guard: %v", err)
		}
	})
	rules := [][]string{
		{"-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"},
		{"-m", "comment", "--comment", inputGuardComment, "-j", "DROP"},
	}
	for _, r := range rules {
		if err := run("iptables", append([]string{"-t", "mangle", "-A", chain}, r...)...); err != nil {
			return fmt.Errorf("the input guard: %w", err)
		}
	}
	if err := run("iptables", append([]string{"-t", "mangle", "-I", "INPUT", "1"}, jump...)...); err != nil {
		return fmt.Errorf("the input guard: %w", err)
	}
	return nil
}

// AllowHostPort lets pods reach TCP port on HostIP (an apiserver or a proxy of the test bed listening there). It
// returns iptables' error.
func (n *PodNetwork) AllowHostPort(port int) error {
	return run("iptables", "-t", "mangle", "-I", n.inputChain(), "1", "-d", n.HostIP.String(), "-p", "tcp",
		"--dport", strconv.Itoa(port), "-j", "RETURN")
}

// KubernetesServiceIP returns the ClusterIP of the `kubernetes` Service: the first address of ServiceCIDR.
func (n *PodNetwork) KubernetesServiceIP() net.IP { return hostOf(n.ServiceCIDR, 1) }

// hostOf returns the address .<last> of the /24 network.
func hostOf(network *net.IPNet, last byte) net.IP {
	ip := make(net.IP, 4)
	copy(ip, network.IP.To4())
	ip[3] = last
	return ip
}

// NodePreconditions returns nil when this machine can run the node suite, else an error naming every missing piece
// and how to get it: root, the `ip` and `iptables` commands, containerd, ctr and runc, the CNI bridge,
// host-local and loopback plugins under /usr/lib/cni, and a kernel that can create a bridge.
func NodePreconditions() error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, fmt.Sprintf("root (running as uid %d)", os.Geteuid()))
	}
	for _, c := range []string{"ip", "iptables", "containerd", "ctr", "runc", "mount", "umount"} {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, "the "+c+" command")
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, p)); err != nil {
			missing = append(missing, "the CNI plugin "+filepath.Join(cniBinDir, p))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s (hack/install-node-deps.sh installs the Debian packages containerd, runc, "+
			"containernetworking-plugins, iptables and iproute2, as root)", strings.Join(missing, ", "))
	}
	probe := fmt.Sprintf("kfprobe%d", os.Getpid()%100000)
	if err := run("ip", "link", "add", probe, "type", "bridge"); err != nil {
		return fmt.Errorf("the kernel cannot create a bridge: %v", err)
	}
	_ = run("ip", "link", "del", probe)
	return nil
}

// cniBinDir is where Debian's containernetworking-plugins package installs the CNI plugins.
const cniBinDir = "/usr/lib/cni"

// run runs name with args; the error holds the command line and its combined output.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// readSysctl reads key (dotted, e.g. net.ipv4.ip_forward) from /proc/sys.
func readSysctl(key string) (string, error) {
	data, err := os.ReadFile(sysctlPath(key))
	if err != nil {
		return "", fmt.Errorf("reading sysctl %s: %w", key, err) // wraps fs.ErrNotExist for an unknown key
	}
	return strings.TrimSpace(string(data)), nil
}

// writeSysctl writes value to key when it differs from the current value.
func writeSysctl(key, value string) error {
	cur, err := readSysctl(key)
	if err != nil {
		return err
	}
	if cur == value {
		return nil
	}
	return os.WriteFile(sysctlPath(key), []byte(value+"\n"), 0o644)
}

func sysctlPath(key string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
}

// usedIPv4Nets returns the IPv4 networks of every interface address and route on this machine.
func usedIPv4Nets() ([]*net.IPNet, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("listing interface addresses: %w", err)
	}
	var nets []*net.IPNet
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
			nets = append(nets, ipn)
		}
	}
	out, err := exec.Command("ip", "-4", "route", "show", "table", "all").Output()
	if err != nil {
		return nil, fmt.Errorf("listing routes: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		dst := f[0]
		if dst == "local" || dst == "broadcast" || dst == "unicast" {
			if len(f) < 2 {
				continue
			}
			dst = f[1]
		}
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		if _, ipn, err := net.ParseCIDR(dst); err == nil && !ipn.IP.IsUnspecified() {
			nets = append(nets, ipn)
		}
	}
	return nets, nil
}

// overlapsAny reports whether n overlaps one of nets.
func overlapsAny(n *net.IPNet, nets []*net.IPNet) bool {
	for _, o := range nets {
		if n.Contains(o.IP) || o.Contains(n.IP) {
			return true
		}
	}
	return false
}

// listenHost returns the address servers of the test bed listen on: n's host address, or 127.0.0.1 without a
// pod network.
func listenHost(n *PodNetwork) string {
	if n == nil {
		return "127.0.0.1"
	}
	return n.HostIP.String()
}
