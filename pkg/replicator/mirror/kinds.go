package mirror

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	replv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// BackupLabel is the label that selects the Secrets and ConfigMaps the replicator mirrors, the convention of
// ACM's cluster backup (any value).
const BackupLabel = "cluster.open-cluster-management.io/backup"

// ClusterScope says how an object is tied to a managed cluster, and so which hub is its source.
type ClusterScope int

const (
	// HubWide objects belong to no cluster; their source is the first reachable hub in the configured order.
	HubWide ClusterScope = iota
	// ClusterByName objects are the cluster itself (the ManagedCluster, named after the cluster); their source
	// is the hub the cluster is connected to.
	ClusterByName
	// ClusterByNamespace objects live in the cluster's namespace on the hub (named after the cluster); their
	// source is the hub the cluster is connected to.
	ClusterByNamespace
	// ClusterByNamespaceIfCluster objects belong to a cluster when their namespace is a cluster's namespace,
	// and are hub-wide otherwise (backup-labelled Secrets and ConfigMaps, AddOnDeploymentConfigs).
	ClusterByNamespaceIfCluster
)

// Kind describes how one ReplicatedKind is listed, watched and mirrored.
type Kind struct {
	// Name is the ReplicationConfig kind name.
	Name replv1alpha1.ReplicatedKind
	// GVR is the resource the replicator reads and writes, in the version OCM v1.2.0's hub serves.
	GVR schema.GroupVersionResource
	// Namespaced is true for namespaced resources.
	Namespaced bool
	// Scope says which hub is an object's source.
	Scope ClusterScope
	// Fields are the top-level fields a copy takes from the source (e.g. "spec"); everything else outside
	// metadata is left as the target has it.
	Fields []string
	// LabelSelector restricts the list and watch (empty: every object).
	LabelSelector string
}

// The resources of OCM's hub the replicator touches besides the mirrored kinds.
var (
	// LeaseGVR is the resource of a cluster's managed-cluster-lease, which tells which hub the cluster is on.
	LeaseGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	// NamespaceGVR is created on a target when a namespaced copy's namespace is missing there.
	NamespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	// ClusterManagementAddOnGVR is the resource of KindClusterManagementAddOn. A hub's ClusterManagementAddOn
	// of an add-on's name says whether that hub's add-on manager installs the add-on by strategy
	// (InstallsByStrategy); the replicator watches it whenever it mirrors ManagedClusterAddOns.
	ClusterManagementAddOnGVR = schema.GroupVersionResource{Group: "addon.open-cluster-management.io", Version: "v1alpha1", Resource: "clustermanagementaddons"}
)

// Kinds lists every mirrored kind, in replv1alpha1.AllReplicatedKinds order.
var Kinds = []Kind{
	{
		Name:   replv1alpha1.KindManagedCluster,
		GVR:    schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1", Resource: "managedclusters"},
		Scope:  ClusterByName,
		Fields: []string{"spec"},
	},
	{
		Name:   replv1alpha1.KindManagedClusterSet,
		GVR:    schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta2", Resource: "managedclustersets"},
		Scope:  HubWide,
		Fields: []string{"spec"},
	},
	{
		Name:       replv1alpha1.KindManagedClusterSetBinding,
		GVR:        schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta2", Resource: "managedclustersetbindings"},
		Namespaced: true,
		Scope:      HubWide,
		Fields:     []string{"spec"},
	},
	{
		Name:       replv1alpha1.KindPlacement,
		GVR:        schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Resource: "placements"},
		Namespaced: true,
		Scope:      HubWide,
		Fields:     []string{"spec"},
	},
	{
		Name:       replv1alpha1.KindManifestWork,
		GVR:        schema.GroupVersionResource{Group: "work.open-cluster-management.io", Version: "v1", Resource: "manifestworks"},
		Namespaced: true,
		Scope:      ClusterByNamespace,
		Fields:     []string{"spec"},
	},
	{
		Name:       replv1alpha1.KindManagedClusterAddOn,
		GVR:        schema.GroupVersionResource{Group: "addon.open-cluster-management.io", Version: "v1alpha1", Resource: "managedclusteraddons"},
		Namespaced: true,
		Scope:      ClusterByNamespace,
		Fields:     []string{"spec"},
	},
	{
		Name:          replv1alpha1.KindSecret,
		GVR:           schema.GroupVersionResource{Version: "v1", Resource: "secrets"},
		Namespaced:    true,
		Scope:         ClusterByNamespaceIfCluster,
		Fields:        []string{"type", "data"},
		LabelSelector: BackupLabel,
	},
	{
		Name:          replv1alpha1.KindConfigMap,
		GVR:           schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Namespaced:    true,
		Scope:         ClusterByNamespaceIfCluster,
		Fields:        []string{"data", "binaryData"},
		LabelSelector: BackupLabel,
	},
	{
		Name:   replv1alpha1.KindClusterManagementAddOn,
		GVR:    ClusterManagementAddOnGVR,
		Scope:  HubWide,
		Fields: []string{"spec"},
	},
	{
		Name:       replv1alpha1.KindAddOnDeploymentConfig,
		GVR:        schema.GroupVersionResource{Group: "addon.open-cluster-management.io", Version: "v1alpha1", Resource: "addondeploymentconfigs"},
		Namespaced: true,
		// A ManagedClusterAddOn's spec.configs may name one in its cluster's namespace: that one is the
		// cluster's, the others are hub-wide.
		Scope:  ClusterByNamespaceIfCluster,
		Fields: []string{"spec"},
	},
	{
		Name:   replv1alpha1.KindAddOnTemplate,
		GVR:    schema.GroupVersionResource{Group: "addon.open-cluster-management.io", Version: "v1alpha1", Resource: "addontemplates"},
		Scope:  HubWide,
		Fields: []string{"spec"},
	},
	{
		Name:       replv1alpha1.KindManifestWorkReplicaSet,
		GVR:        schema.GroupVersionResource{Group: "work.open-cluster-management.io", Version: "v1alpha1", Resource: "manifestworkreplicasets"},
		Namespaced: true,
		Scope:      HubWide,
		Fields:     []string{"spec"},
	},
}

// KindByName returns the Kind named name and true, or false when name is not a mirrored kind.
func KindByName(name replv1alpha1.ReplicatedKind) (Kind, bool) {
	for _, k := range Kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// ClusterOf returns the managed cluster an object of kind k belongs to, given its namespace and name, and
// whether it belongs to one. isCluster reports whether a name is a known managed cluster (used for
// ClusterByNamespaceIfCluster).
func (k Kind) ClusterOf(namespace, name string, isCluster func(string) bool) (string, bool) {
	switch k.Scope {
	case ClusterByName:
		return name, true
	case ClusterByNamespace:
		return namespace, namespace != ""
	case ClusterByNamespaceIfCluster:
		if namespace != "" && isCluster(namespace) {
			return namespace, true
		}
	}
	return "", false
}
