package framework

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// addonManagerCRDFiles are the add-on CRDs, relative to ocmAPIVendorDir, that OCM's add-on manager v1.2.0 lists
// and watches besides the hub's (ManagedClusterAddOn is in hubCRDFiles).
func addonManagerCRDFiles() []string {
	return []string{
		"addon/v1alpha1/0000_00_addon.open-cluster-management.io_clustermanagementaddons.crd.yaml",
		"addon/v1alpha1/0000_02_addon.open-cluster-management.io_addondeploymentconfigs.crd.yaml",
		"addon/v1alpha1/0000_03_addon.open-cluster-management.io_addontemplates.crd.yaml",
	}
}

// startAddonManager runs OCM's hub add-on manager with the admin kubeconfig and waits until its /healthz answers.
func (h *Hub) startAddonManager() {
	h.t.Helper()
	binDir, err := BinariesDir(BinaryAddon)
	if err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	h.startHubProcess("addon-manager", filepath.Join(binDir, BinaryAddon), "manager")
}

// startHubProcess runs a library-go controller command of OCM (binary, subcommand and extra args) against the hub
// with the admin kubeconfig, --namespace HubControllerNamespace (created if absent), a loopback --listen port, no leader election and
// --v=2; it stops the process in t.Cleanup and waits until its /healthz answers. name names its log file.
func (h *Hub) startHubProcess(name, binary, subcommand string, extraArgs ...string) *process {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), h.opts.StartTimeout)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: HubControllerNamespace}}
	if _, err := h.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		h.t.Fatalf("hub %s: creating namespace %s: %v", h.Name, ns.Name, err)
	}
	port, err := freeLoopbackPort()
	if err != nil {
		h.t.Fatalf("hub %s: %s: %v", h.Name, name, err)
	}
	args := append([]string{
		subcommand,
		"--kubeconfig=" + h.adminKubeconfigFile,
		"--namespace=" + HubControllerNamespace,
		"--listen=127.0.0.1:" + strconv.Itoa(port),
		"--disable-leader-election",
		"--v=2",
	}, extraArgs...)
	return h.runHealthyProcess(name, binary, args, port)
}

// runHealthyProcess starts binary with args (log <LogDir>/<name>.log), stops it in t.Cleanup and waits until
// https://127.0.0.1:<port>/healthz answers; Rebuild stops it and starts it again.
func (h *Hub) runHealthyProcess(name, binary string, args []string, port int) *process {
	h.t.Helper()
	p := runHealthyProcess(h.t, "hub "+h.Name, h.cp.logDir, name, binary, args, port, h.opts.StartTimeout)
	h.controllers = append(h.controllers, p)
	return p
}

// runHealthyProcess starts binary with args for component (log <logDir>/<name>.log), stops it in t.Cleanup and
// waits up to timeout until https://127.0.0.1:<port>/healthz answers; it fails the test, naming component, when
// it cannot.
func runHealthyProcess(t testing.TB, component, logDir, name, binary string, args []string, port int, timeout time.Duration) *process {
	t.Helper()
	p, err := startProcess(name, logDir, binary, args)
	if err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	t.Cleanup(func() {
		if err := p.stop(stopTimeout); err != nil {
			t.Errorf("%s: %v", component, err)
		}
	})
	if err := p.waitHealthy(fmt.Sprintf("https://127.0.0.1:%d/healthz", port), timeout); err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	return p
}
