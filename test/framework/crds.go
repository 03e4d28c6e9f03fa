package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// ocmAPIVendorDir is where the vendored open-cluster-management.io/api keeps its CRD files, relative to the
// repository root. hack/deps.go imports every package whose CRD is listed below, so `go mod vendor` keeps them.
const ocmAPIVendorDir = "vendor/open-cluster-management.io/api"

// hubCRDFiles are the OCM CRDs a hub serves, relative to ocmAPIVendorDir: the ones OCM's hub registration
// controller v1.2.0 lists and watches (it fails to start without them; ManagedClusterAddOn served as v1alpha1,
// the version it reads), plus ClusterClaim, and Placement and PlacementDecision, which cluster-manager installs
// on every hub (the replicator mirrors Placements; no placement controller runs on the test bed).
func hubCRDFiles() []string {
	return []string{
		"cluster/v1/0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml",
		"cluster/v1alpha1/0000_02_clusters.open-cluster-management.io_clusterclaims.crd.yaml",
		"cluster/v1beta2/0000_00_clusters.open-cluster-management.io_managedclustersets.crd.yaml",
		"cluster/v1beta2/0000_01_clusters.open-cluster-management.io_managedclustersetbindings.crd.yaml",
		"cluster/v1beta1/0000_02_clusters.open-cluster-management.io_placements.crd.yaml",
		"cluster/v1beta1/0000_03_clusters.open-cluster-management.io_placementdecisions.crd.yaml",
		"work/v1/0000_00_work.open-cluster-management.io_manifestworks.crd.yaml",
		"addon/v1alpha1/0000_01_addon.open-cluster-management.io_managedclusteraddons.crd.yaml",
	}
}

// spokeCRDFiles are the CRDs a spoke serves: ClusterClaim (cluster.open-cluster-management.io/v1alpha1).
func spokeCRDFiles() []string {
	return []string{
		"cluster/v1alpha1/0000_02_clusters.open-cluster-management.io_clusterclaims.crd.yaml",
	}
}

// CRD files, relative to ocmAPIVendorDir, that OCM's spoke components need.
const (
	// appliedManifestWorkCRDFile is AppliedManifestWork (work.open-cluster-management.io/v1, cluster-scoped), which
	// the work agent records what it applied in; the klusterlet operator installs it too (its own v1.2.0 copy).
	appliedManifestWorkCRDFile = "work/v1/0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml"
	// klusterletCRDFile is Klusterlet (operator.open-cluster-management.io/v1, cluster-scoped), which the klusterlet
	// operator reconciles. The vendored api is v1.3.0; its Klusterlet CRD differs from v1.2.0's (the operator's)
	// only in a field description.
	klusterletCRDFile = "operator/v1/0000_00_operator.open-cluster-management.io_klusterlets.crd.yaml"
)

// ensureCRDs installs those of files (relative to <repo root>/ocmAPIVendorDir) that the apiserver of cfg does not
// serve yet and waits until they are served; CRDs already present are left as they are (the klusterlet operator
// may have applied its own version). Errors name the file or CRD.
func ensureCRDs(ctx context.Context, cfg *rest.Config, files ...string) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	crds, err := loadCRDs(root, files)
	if err != nil {
		return err
	}
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var missing []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range crds {
		_, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, crd)
		case err != nil:
			return fmt.Errorf("getting CRD %s: %w", crd.Name, err)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: missing, MaxTime: DefaultStartTimeout}); err != nil {
		return fmt.Errorf("installing CRDs: %w", err)
	}
	return nil
}

// loadCRDs reads files (relative to <root>/ocmAPIVendorDir). The error names the file that is missing or does
// not parse.
func loadCRDs(root string, files []string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, f := range files {
		crd, err := readCRD(filepath.Join(root, ocmAPIVendorDir, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

// moduleCRD is a CRD file of a module that hack/tools/crds/go.mod pins.
type moduleCRD struct {
	// module is the module's path.
	module string
	// file is the CRD file, relative to the module's root.
	file string
}

// crdModulesDir is the tool module, relative to the repository root, that pins the modules of moduleCRDs.
const crdModulesDir = "hack/tools/crds"

// mirroredKindCRDs are the CRDs of kinds the replicator mirrors that OCM's cluster-manager does not install:
// governance's Policy, PlacementBinding and PolicySet (open-cluster-management.io/governance-policy-propagator,
// deploy/crds) and ManagedServiceAccount (open-cluster-management.io/managed-serviceaccount, config/crd/bases).
// A complete hub serves them; no controller of theirs runs on the test bed.
func mirroredKindCRDs() []moduleCRD {
	const governance = "open-cluster-management.io/governance-policy-propagator"
	return []moduleCRD{
		{governance, "deploy/crds/policy.open-cluster-management.io_policies.yaml"},
		{governance, "deploy/crds/policy.open-cluster-management.io_placementbindings.yaml"},
		{governance, "deploy/crds/policy.open-cluster-management.io_policysets.yaml"},
		{"open-cluster-management.io/managed-serviceaccount", "config/crd/bases/authentication.open-cluster-management.io_managedserviceaccounts.yaml"},
	}
}

// loadModuleCRDs reads crds from Go's module cache, where hack/build-test-binaries.sh downloads the modules
// hack/tools/crds pins (`go list -m` with GOPROXY=off: nothing is downloaded here). The error names the module
// that is not in the cache, or the file that is missing or does not parse.
func loadModuleCRDs(root string, crds []moduleCRD) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	dirs := map[string]string{}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(crds))
	for _, c := range crds {
		dir, ok := dirs[c.module]
		if !ok {
			cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", c.module)
			cmd.Dir = filepath.Join(root, crdModulesDir)
			cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod")
			b, err := cmd.Output()
			dir = strings.TrimSpace(string(b))
			if err != nil || dir == "" {
				var stderr string
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = strings.TrimSpace(string(ee.Stderr))
				}
				return nil, fmt.Errorf("module %s (pinned by %s) is not in Go's module cache: run hack/build-test-binaries.sh (make test-binaries) first: %v %s", c.module, crdModulesDir, err, stderr)
			}
			dirs[c.module] = dir
		}
		crd, err := readCRD(filepath.Join(dir, filepath.FromSlash(c.file)))
		if err != nil {
			return nil, err
		}
		out = append(out, crd)
	}
	return out, nil
}

// readCRD reads and parses the CRD in file. The error names the file that is missing or does not parse.
func readCRD(file string) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading CRD %s: %w", file, err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return nil, fmt.Errorf("parsing CRD %s: %w", file, err)
	}
	if crd.Kind != "CustomResourceDefinition" || crd.Name == "" {
		return nil, fmt.Errorf("parsing CRD %s: not a named CustomResourceDefinition", file)
	}
	return crd, nil
}
