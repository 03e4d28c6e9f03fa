package framework

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadCRDs(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		files []string
		want  []string // name/served versions
	}{
		{
			name:  "hub",
			files: hubCRDFiles(),
			want: []string{
				"managedclusters.cluster.open-cluster-management.io v1",
				"clusterclaims.cluster.open-cluster-management.io v1alpha1",
				"managedclustersets.cluster.open-cluster-management.io v1beta2",
				"managedclustersetbindings.cluster.open-cluster-management.io v1beta2",
				"placements.cluster.open-cluster-management.io v1beta1",
				"placementdecisions.cluster.open-cluster-management.io v1beta1",
				"manifestworks.work.open-cluster-management.io v1",
				"managedclusteraddons.addon.open-cluster-management.io v1alpha1",
			},
		},
		{
			name:  "spoke",
			files: spokeCRDFiles(),
			want:  []string{"clusterclaims.cluster.open-cluster-management.io v1alpha1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			crds, err := loadCRDs(root, tc.files)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, crd := range crds {
				entry := crd.Name
				for _, v := range crd.Spec.Versions {
					if v.Served {
						entry += " " + v.Name
					}
				}
				got = append(got, entry)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CRDs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadCRDsMissing(t *testing.T) {
	_, err := loadCRDs(t.TempDir(), []string{"cluster/v1/none.crd.yaml"})
	if err == nil {
		t.Fatal("loadCRDs() with a missing vendored file succeeded")
	}
}
