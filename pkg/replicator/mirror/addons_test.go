package mirror

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// clusterManagementAddOn returns a ClusterManagementAddOn named name with the given install strategy type ("":
// no installStrategy) and annotations.
func clusterManagementAddOn(strategy string, annotations map[string]string) *unstructured.Unstructured {
	cma := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ClusterManagementAddOn",
		"metadata": map[string]any{"name": "hello"},
		"spec":     map[string]any{},
	}}
	if strategy != "" {
		cma.Object["spec"] = map[string]any{"installStrategy": map[string]any{"type": strategy,
			"placements": []any{map[string]any{"name": "all", "namespace": "apps"}}}}
	}
	cma.SetAnnotations(annotations)
	return cma
}

func TestInstallsByStrategy(t *testing.T) {
	for _, tc := range []struct {
		name string
		cma  *unstructured.Unstructured
		want bool
	}{
		{"no ClusterManagementAddOn", nil, false},
		{"no installStrategy: the add-on manager makes no ManagedClusterAddOn", clusterManagementAddOn("", nil), false},
		{"Manual: users make them", clusterManagementAddOn(AddOnInstallStrategyManual, nil), false},
		{"Placements, no lifecycle annotation: the add-on manager's", clusterManagementAddOn("Placements", nil), true},
		{"Placements, lifecycle addon-manager", clusterManagementAddOn("Placements", map[string]string{AddOnLifecycleAnnotation: AddOnLifecycleAddOnManager}), true},
		{"Placements, lifecycle self: the add-on's own controller installs it, not the add-on manager",
			clusterManagementAddOn("Placements", map[string]string{AddOnLifecycleAnnotation: "self"}), false},
		{"Placements, other annotations only", clusterManagementAddOn("Placements", map[string]string{"a": "b"}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := InstallsByStrategy(tc.cma); got != tc.want {
				t.Errorf("InstallsByStrategy = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestExcluded(t *testing.T) {
	work, _ := KindByName(failoverv1alpha1.KindManifestWork)
	addOn, _ := KindByName(failoverv1alpha1.KindManagedClusterAddOn)
	policy, _ := KindByName(failoverv1alpha1.KindPolicy)
	labelled := func(labels map[string]string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "w", "namespace": "c1"}}}
		o.SetLabels(labels)
		return o
	}
	owned := func(apiVersion, kind string, controller bool) *unstructured.Unstructured {
		o := labelled(nil)
		o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "p", UID: "u1", Controller: &controller}})
		return o
	}
	for _, tc := range []struct {
		name string
		kind Kind
		obj  *unstructured.Unstructured
		want bool
	}{
		{"absent", work, nil, false},
		{"a user's ManifestWork", work, labelled(map[string]string{"app": "x"}), false},
		{"an add-on manager's ManifestWork", work, labelled(map[string]string{AddonNameLabel: "hello"}), true},
		{"a ManifestWorkReplicaSet's ManifestWork", work, labelled(map[string]string{ManifestWorkReplicaSetLabel: "apps.set"}), true},
		{"the labels on another kind", addOn, labelled(map[string]string{AddonNameLabel: "hello", ManifestWorkReplicaSetLabel: "apps.set"}), false},
		{"a ClusterPermission's ManifestWork", work, owned("rbac.open-cluster-management.io/v1alpha1", "ClusterPermission", true), true},
		{"a ManifestWork a ClusterPermission owns but does not control", work, owned("rbac.open-cluster-management.io/v1alpha1", "ClusterPermission", false), false},
		{"a ManifestWork controlled by a kind of that name in another group", work, owned("example.com/v1", "ClusterPermission", true), false},
		{"a replicated Policy", policy, labelled(map[string]string{RootPolicyLabel: "default.p"}), true},
		{"a root Policy", policy, labelled(map[string]string{"app": "x"}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Excluded(tc.kind, tc.obj); got != tc.want {
				t.Errorf("Excluded = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestIsCopyOn(t *testing.T) {
	work, _ := KindByName(failoverv1alpha1.KindManifestWork)
	obj := func(labels, annotations map[string]string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "web", "namespace": "c1"}}}
		o.SetLabels(labels)
		o.SetAnnotations(annotations)
		return o
	}
	copied := map[string]string{LabelReplicatedFrom: "hub-a"}
	fromSet := map[string]string{LabelReplicatedFrom: "hub-a", ManifestWorkReplicaSetLabel: "apps.web"}
	hash := map[string]string{AnnotationContentHash: "0123456789abcdef"}
	policy, _ := KindByName(failoverv1alpha1.KindPolicy)
	withKind := func(k Kind, o *unstructured.Unstructured) kindObject { return kindObject{k, o} }
	work1 := func(o *unstructured.Unstructured) kindObject { return kindObject{work, o} }
	for _, tc := range []struct {
		name string
		ko   kindObject
		want bool
	}{
		{"absent", work1(nil), false},
		{"an original", work1(obj(nil, nil)), false},
		{"a copy", work1(obj(copied, hash)), true},
		{"the hub's own set work, with the set's copy label", work1(obj(fromSet, nil)), false},
		{"a copy of a set work an earlier replicator wrote", work1(obj(fromSet, hash)), true},
		{"a copy of a Policy", withKind(policy, obj(copied, hash)), true},
		// governance's propagator gives a replicated Policy the root's labels and annotations: a replicated
		// Policy made from a copy of the root carries the copy marks, and is the hub's own all the same.
		{"the hub's own replicated Policy, with the copied root's marks", withKind(policy, obj(map[string]string{LabelReplicatedFrom: "hub-a", RootPolicyLabel: "default.p"}, hash)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsCopyOn(tc.ko.kind, tc.ko.obj); got != tc.want {
				t.Errorf("IsCopyOn = %t, want %t", got, tc.want)
			}
		})
	}
}

// kindObject is an object and its kind.
type kindObject struct {
	kind Kind
	obj  *unstructured.Unstructured
}

func TestCopyFinalizersPatch(t *testing.T) {
	mca := func(finalizers ...string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn",
			"metadata": map[string]any{"name": "hello", "namespace": "cluster1", "uid": "uid-1", "resourceVersion": "7"},
		}}
		u.SetFinalizers(finalizers)
		return u
	}
	mcaKind, ok := KindByName(failoverv1alpha1.KindManagedClusterAddOn)
	if !ok {
		t.Fatal("no ManagedClusterAddOn kind")
	}
	mwKind, _ := KindByName(failoverv1alpha1.KindManifestWork)
	placementKind, _ := KindByName(failoverv1alpha1.KindPlacement)
	for _, tc := range []struct {
		name string
		k    Kind
		obj  *unstructured.Unstructured
		want string
	}{
		{"no finalizers", mcaKind, mca(), ""},
		{"no object", mcaKind, nil, ""},
		{"only other finalizers", mcaKind, mca("addon.open-cluster-management.io/hosting-manifests-cleanup"), ""},
		{"the replicator's own hold goes too (a copy marked while its hub was the source)", mcaKind,
			mca(FinalizerDeleteCopies, "addon.open-cluster-management.io/hosting-manifests-cleanup"),
			`{"metadata":{"finalizers":["addon.open-cluster-management.io/hosting-manifests-cleanup"],"resourceVersion":"7","uid":"uid-1"}}`},
		{"the hook's: removed, preconditions uid and resourceVersion", mcaKind,
			mca("addon.open-cluster-management.io/addon-pre-delete"),
			`{"metadata":{"finalizers":null,"resourceVersion":"7","uid":"uid-1"}}`},
		{"both hook forms; others, the hosted mode's included, kept in order", mcaKind,
			mca("a/first", "addon.open-cluster-management.io/hosting-addon-pre-delete", "cluster.open-cluster-management.io/addon-pre-delete",
				"b/second", "addon.open-cluster-management.io/addon-pre-delete"),
			`{"metadata":{"finalizers":["a/first","addon.open-cluster-management.io/hosting-addon-pre-delete","b/second"],"resourceVersion":"7","uid":"uid-1"}}`},
		{"only the hosted mode's hook", mcaKind, mca("addon.open-cluster-management.io/hosting-addon-pre-delete"), ""},
		{"another kind's finalizers are left alone", mwKind, mca("addon.open-cluster-management.io/addon-pre-delete"), ""},
		{"a ManifestWork loses the work agent's cleanup finalizer, keeps the others", mwKind,
			mca(FinalizerDeleteCopies, "cluster.open-cluster-management.io/manifest-work-cleanup", "example.com/keep"),
			`{"metadata":{"finalizers":["example.com/keep"],"resourceVersion":"7","uid":"uid-1"}}`},
		{"a kind without copy finalizers", placementKind, mca("cluster.open-cluster-management.io/manifest-work-cleanup"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(CopyFinalizersPatch(tc.k, tc.obj)); got != tc.want {
				t.Errorf("CopyFinalizersPatch = %s, want %s", got, tc.want)
			}
		})
	}
}
