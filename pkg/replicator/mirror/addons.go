package mirror

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
