package framework

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Names of the binaries the test bed runs; hack/build-test-binaries.sh builds them (all, or those named) into one
// directory.
const (
	// BinaryKubeAPIServer is kube-apiserver from k8s.io/kubernetes.
	BinaryKubeAPIServer = "kube-apiserver"
	// BinaryKubeControllerManager is kube-controller-manager from k8s.io/kubernetes.
	BinaryKubeControllerManager = "kube-controller-manager"
	// BinaryKubectl is kubectl from k8s.io/kubernetes.
	BinaryKubectl = "kubectl"
	// BinaryKubelet, BinaryKubeProxy and BinaryKubeScheduler are the node's kubelet, kube-proxy and
	// kube-scheduler from k8s.io/kubernetes (StartNode).
	BinaryKubelet       = "kubelet"
	BinaryKubeProxy     = "kube-proxy"
	BinaryKubeScheduler = "kube-scheduler"
	// BinaryEtcd is etcd from go.etcd.io/etcd/server/v3.
	BinaryEtcd = "etcd"
	// BinaryRegistration is OCM's registration binary (open-cluster-management.io/ocm/cmd/registration);
	// its `controller` subcommand is the hub registration controller.
	BinaryRegistration = "registration"
	// BinaryWork is OCM's work binary (open-cluster-management.io/ocm/cmd/work); its `agent` subcommand is the
	// work agent the klusterlet runs on a managed cluster.
	BinaryWork = "work"
	// BinaryAddon is OCM's add-on binary (open-cluster-management.io/ocm/cmd/addon); its `manager` subcommand is
	// the hub add-on manager (template add-ons, add-on registration and CSR approval).
	BinaryAddon = "addon"
	// BinaryRegistrationOperator is OCM's operator binary (open-cluster-management.io/ocm/cmd/registration-operator);
	// its `klusterlet` subcommand is the klusterlet operator.
	BinaryRegistrationOperator = "registration-operator"
	// BinaryPlacement is OCM's placement binary (open-cluster-management.io/ocm/cmd/placement); its `controller`
	// subcommand is the hub placement controller.
	BinaryPlacement = "placement"
	// BinaryOCMWebhooks is hack/tools/ocm/ocm-webhooks: OCM's registration, work and add-on webhook handlers
	// (v1.2.0) in one server on a port it is given.
	BinaryOCMWebhooks = "ocm-webhooks"

	// EnvKubebuilderAssets names a directory holding the binaries; it wins over the build cache when it holds those
	// a caller asks for.
	EnvKubebuilderAssets = "KUBEBUILDER_ASSETS"

	// buildScript is the script, relative to the repository root, that builds and locates the binaries.
	buildScript = "hack/build-test-binaries.sh"
)

// allBinaries returns the name of every binary the test bed runs.
func allBinaries() []string {
	return []string{BinaryKubeAPIServer, BinaryKubeControllerManager, BinaryKubectl, BinaryKubelet, BinaryKubeProxy,
		BinaryKubeScheduler, BinaryEtcd, BinaryRegistration,
		BinaryWork, BinaryRegistrationOperator, BinaryAddon, BinaryPlacement, BinaryOCMWebhooks}
}

// binariesDirs memoizes BinariesDir per set of names: the script checksums the binaries (up to about 400 MB) on
// every call.
var (
	binariesDirsMu sync.Mutex
	binariesDirs   = map[string]binariesDirResult{}
)

type binariesDirResult struct {
	dir string
	err error
}

// BinariesDir returns the absolute directory holding the named test-bed binaries (every one, kube-apiserver,
// kube-controller-manager, kubectl, kubelet, kube-proxy, kube-scheduler, etcd, registration, work,
// registration-operator, addon, placement and ocm-webhooks, when names is
// empty). It is $KUBEBUILDER_ASSETS when that directory holds them as executable files; otherwise the directory
// printed by `hack/build-test-binaries.sh --check <names>` (a cache entry holding them, checksums verified). make
// demo builds only the binaries the demo runs, so a caller names those it starts. The error names every missing
// binary and tells how to build them; it never builds anything itself. The result is computed once per set of
// names and test binary.
func BinariesDir(names ...string) (string, error) {
	if len(names) == 0 {
		names = allBinaries()
	}
	key := strings.Join(names, " ")
	binariesDirsMu.Lock()
	defer binariesDirsMu.Unlock()
	r, ok := binariesDirs[key]
	if !ok {
		r.dir, r.err = findBinariesDir(names)
		binariesDirs[key] = r
	}
	return r.dir, r.err
}

func findBinariesDir(names []string) (string, error) {
	var problems []string
	if dir := os.Getenv(EnvKubebuilderAssets); dir != "" {
		missing := missingBinaries(dir, names)
		if len(missing) == 0 {
			return filepath.Abs(dir)
		}
		problems = append(problems, fmt.Sprintf("%s=%s lacks %s", EnvKubebuilderAssets, dir, strings.Join(missing, ", ")))
	}

	root, err := RepoRoot()
	if err != nil {
		problems = append(problems, err.Error())
		return "", fmt.Errorf("test binaries not found: %s", strings.Join(problems, "; "))
	}
	script := filepath.Join(root, buildScript)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(script, append([]string{"--check"}, names...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		problems = append(problems, fmt.Sprintf("%s --check found no cache entry holding %s (%v%s)",
			buildScript, strings.Join(names, ", "), err, trimmedSuffix(stderr.String())))
		return "", fmt.Errorf("test binaries not found: %s; build them with `%s` (a cold build of all of them took 32 minutes on a busy 2-core machine) "+
			"and run the tests with %s=$(%s)", strings.Join(problems, "; "), script, EnvKubebuilderAssets, script)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	dir := strings.TrimSpace(lines[len(lines)-1])
	if missing := missingBinaries(dir, names); len(missing) > 0 {
		return "", fmt.Errorf("test binaries not found: %s --check reported %q, which lacks %s",
			buildScript, dir, strings.Join(missing, ", "))
	}
	return dir, nil
}

// missingBinaries lists the names that are not executable regular files in dir.
func missingBinaries(dir string, names []string) []string {
	var missing []string
	for _, name := range names {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	return missing
}

// RepoRoot returns the repository root: the first directory at or above the working directory (a test's package
// directory under `go test`) that holds a go.mod file.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("finding the repository root: %w", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding the repository root: no go.mod at or above the working directory")
		}
		dir = parent
	}
}

func trimmedSuffix(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return ": " + s
}
