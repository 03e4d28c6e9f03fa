package mirror

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "open-cluster-management.io/api/work/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// The ClusterManagementAddOn fields InstallsByStrategy reads (open-cluster-management.io/api addon/v1alpha1).
const (
	// AddOnLifecycleAnnotation on a ClusterManagementAddOn says who installs the add-on: absent or
	// AddOnLifecycleAddOnManager, the hub's add-on manager; "self", the add-on's own hub controller
	// (addon/v1alpha1 AddonLifecycleAnnotationKey).
	AddOnLifecycleAnnotation = "addon.open-cluster-management.io/lifecycle"
	// AddOnLifecycleAddOnManager is the AddOnLifecycleAnnotation value of an add-on the add-on manager installs.
	AddOnLifecycleAddOnManager = "addon-manager"
	// AddOnInstallStrategyManual is the spec.installStrategy.type under which no ManagedClusterAddOn is made or
	// deleted by the add-on manager: users make them.
	AddOnInstallStrategyManual = "Manual"
)

// InstallsByStrategy reports whether cma, a ClusterManagementAddOn on a hub, has that hub's add-on manager make
// and delete the ManagedClusterAddOns of its name: its spec.installStrategy.type is set and not
// AddOnInstallStrategyManual, and its AddOnLifecycleAnnotation is absent or AddOnLifecycleAddOnManager. Then
// OCM v1.2.0's add-on manager (pkg/addon/controllers/addonmanagement, addon_install_reconciler.go) creates one
// in every cluster namespace its install Placements decide and deletes every other of that name, whoever made
// it. A nil cma installs nothing.
func InstallsByStrategy(cma *unstructured.Unstructured) bool {
	if cma == nil {
		return false
	}
	if lifecycle, ok := cma.GetAnnotations()[AddOnLifecycleAnnotation]; ok && lifecycle != AddOnLifecycleAddOnManager {
		return false
	}
	strategy, _, _ := unstructured.NestedString(cma.Object, "spec", "installStrategy", "type")
	return strategy != "" && strategy != AddOnInstallStrategyManual
}

// PreDeleteHookFinalizers are the finalizers OCM's add-on framework (v1.2.0, agentdeploy's hook syncer) puts on
// a ManagedClusterAddOn whose add-on has a pre-delete hook, and its deprecated form (which it replaces by the
// first). While one is there, that hub's add-on manager answers the add-on's delete with a hook ManifestWork in
// the cluster's namespace, owned by the ManagedClusterAddOn, and waits for the spoke to complete it. The hosted
// mode's finalizers (hosting-addon-pre-delete, hosting-manifests-cleanup) are not among them: the hosting hook's
// work lives in the hosting cluster's namespace, which only that finalizer's controller cleans up.
var PreDeleteHookFinalizers = []string{
	"addon.open-cluster-management.io/addon-pre-delete",   // addon/v1alpha1 AddonPreDeleteHookFinalizer
	"cluster.open-cluster-management.io/addon-pre-delete", // AddonDeprecatedPreDeleteHookFinalizer
}

// CopyFinalizers are, by kind, the finalizers a hub's own controllers put on a copy that the copy must go
// without when the replicator deletes it. A copy lives on a hub the cluster is not connected to, where they would
// never be removed or would act at the next switch to that hub:
//   - ManagedClusterAddOn: PreDeleteHookFinalizers. Its add-on manager's hook work would wait there and run on the
//     spoke at the next switch to that hub, an uninstall nobody asked for; the add-on's hook runs from the
//     cluster's own hub, where its original is deleted.
//   - ManifestWork: OCM's work agent's cleanup finalizer (open-cluster-management.io/api work/v1
//     ManifestWorkFinalizer), which the agent put on the copy while the cluster was on that hub and which only
//     that agent removes: a copy left with it stays Terminating on a hub the cluster left, and blocks a new copy
//     of that name. The work agent on the cluster's hub cleans up the spoke for the original.
var CopyFinalizers = map[failoverv1alpha1.ReplicatedKind][]string{
	failoverv1alpha1.KindManagedClusterAddOn: PreDeleteHookFinalizers,
	failoverv1alpha1.KindManifestWork:        {workv1.ManifestWorkFinalizer},
}

// CopyFinalizersPatch returns the JSON merge patch that removes CopyFinalizers[k] and FinalizerDeleteCopies (a
// copy marked while its hub was the cluster's source keeps it) from obj, a copy about to be deleted (or being
// deleted), with its metadata.uid and resourceVersion as preconditions, or nil when obj carries none of them.
func CopyFinalizersPatch(k Kind, obj *unstructured.Unstructured) []byte {
	drop := append(slices.Clone(CopyFinalizers[k.Name]), FinalizerDeleteCopies)
	if obj == nil {
		return nil
	}
	finalizers := obj.GetFinalizers()
	kept := slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool { return slices.Contains(drop, f) })
	if len(kept) == len(finalizers) {
		return nil
	}
	return finalizersPatch(obj, kept)
}
