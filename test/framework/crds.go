package framework

import (
	"fmt"
	"os"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// ocmAPIVendorDir is where the vendored open-cluster-management.io/api keeps its CRD files, relative to the
// repository root. hack/deps.go imports every package whose CRD is listed below, so `go mod vendor` keeps them.
const ocmAPIVendorDir = "vendor/open-cluster-management.io/api"

// hubCRDFiles are the OCM CRDs a hub serves, relative to ocmAPIVendorDir: the ones OCM's hub registration
// controller v1.2.0 lists and watches (it fails to start without them; ManagedClusterAddOn served as v1alpha1,
// the version it reads), plus ClusterClaim.
func hubCRDFiles() []string {
	return []string{
		"cluster/v1/0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml",
		"cluster/v1alpha1/0000_02_clusters.open-cluster-management.io_clusterclaims.crd.yaml",
		"cluster/v1beta2/0000_00_clusters.open-cluster-management.io_managedclustersets.crd.yaml",
		"cluster/v1beta2/0000_01_clusters.open-cluster-management.io_managedclustersetbindings.crd.yaml",
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

// loadCRDs reads files (relative to <root>/ocmAPIVendorDir). The error names the file that is missing or does
// not parse.
func loadCRDs(root string, files []string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, f := range files {
		file := filepath.Join(root, ocmAPIVendorDir, filepath.FromSlash(f))
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
		crds = append(crds, crd)
	}
	return crds, nil
}
