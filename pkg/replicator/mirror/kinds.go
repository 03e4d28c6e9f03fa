package mirror

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
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
	Name failoverv1alpha1.ReplicatedKind
	// GVR is the resource the replicator reads and writes: for OCM's kinds in the version OCM v1.2.0's hub
	// serves, for the others in the version their current release serves, for a custom kind as configured.
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
	// Generated says which objects of the kind a hub's controllers generate (Excluded): never mirrored.
	Generated Generated
}

// Generated says which objects of a kind a hub's controller makes from another object, their generator, on
// every hub that holds the generator: they are never mirrored (Excluded), and each hub makes its own from its
// copy of the generator. An object is generated when it carries any of Labels or its controller
// ownerReference is of one of ControllerKinds.
type Generated struct {
	// Labels are label keys (any value).
	Labels []string
	// ControllerKinds are the group and kind of generators that own what they generate as its controller.
	ControllerKinds []schema.GroupKind
	// CopiedBefore is true when earlier versions of the replicator mirrored these objects: a generated object
	// carrying AnnotationContentHash is such a copy, not the hub's own (GeneratedHere).
	CopiedBefore bool
}

// Labels and owners that mark generated objects (Kind.Generated), from the generators' sources.
const (
	// AddonNameLabel marks the ManifestWorks an add-on manager on the hub generates for its add-on agents (OCM's
	// addon-framework); every hub's add-on manager makes its own.
	AddonNameLabel = "open-cluster-management.io/addon-name"
	// ManifestWorkReplicaSetLabel marks the ManifestWorks OCM's work manager generates from a
	// ManifestWorkReplicaSet (open-cluster-management.io/api work/v1alpha1
	// ManifestWorkReplicaSetControllerNameLabelKey; value "<set namespace>.<set name>"); the set lives in another
	// namespace, so they carry no ownerReference.
	ManifestWorkReplicaSetLabel = "work.open-cluster-management.io/manifestworkreplicaset"
	// RootPolicyLabel marks a replicated Policy: the copy of a root Policy that governance's propagator makes in
	// the namespace of each cluster the root's PlacementBindings select (value: the root's namespace.name;
	// governance-policy-propagator controllers/common). It takes the root's labels and annotations.
	RootPolicyLabel = "policy.open-cluster-management.io/root-policy"
)

// ClusterPermissionGroupKind is the controller ownerReference of the ManifestWorks OCM's cluster-permission
// controller generates from a ClusterPermission in the same cluster namespace (controllers/helper.go there).
var ClusterPermissionGroupKind = schema.GroupKind{Group: "rbac.open-cluster-management.io", Kind: "ClusterPermission"}

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

// Kinds lists every mirrored kind, in failoverv1alpha1.AllReplicatedKinds order.
var Kinds = []Kind{
	{
		Name:   failoverv1alpha1.KindManagedCluster,
		GVR:    schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1", Resource: "managedclusters"},
		Scope:  ClusterByName,
		Fields: []string{"spec"},
	},
	{
		Name:   failoverv1alpha1.KindManagedClusterSet,
		GVR:    schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta2", Resource: "managedclustersets"},
		Scope:  HubWide,
		Fields: []string{"spec"},
	},
	{
		Name:       failoverv1alpha1.KindManagedClusterSetBinding,
		GVR:        schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta2", Resource: "managedclustersetbindings"},
		Namespaced: true,
		Scope:      HubWide,
		Fields:     []string{"spec"},
	},
	{
		Name:       failoverv1alpha1.KindPlacement,
		GVR:        schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Resource: "placements"},
		Namespaced: true,
		Scope:      HubWide,
		Fields:     []string{"spec"},
	},
	{
		Name:       failoverv1alpha1.KindManifestWork,
		GVR:        schema.GroupVersionResource{Group: "work.open-cluster-management.io", Version: "v1", Resource: "manifestworks"},
		Namespaced: true,
		Scope:      ClusterByNamespace,
		Fields:     []string{"spec"},
		// An add-on manager's works (from the ClusterManagementAddOn, AddOnTemplate and AddOnDeploymentConfig),
		// a ManifestWorkReplicaSet's (from the set and its Placements' decisions on that hub) and a
		// ClusterPermission's.
		Generated: Generated{
			Labels:          []string{AddonNameLabel, ManifestWorkReplicaSetLabel},
			ControllerKinds: []schema.GroupKind{ClusterPermissionGroupKind},
			CopiedBefore:    true,
		},
	},
	{
		Name:       failoverv1alpha1.KindManagedClusterAddOn,
		GVR:        schema.GroupVersionResource{Group: "addon.open-cluster-management.io", Version: "v1alpha1", Resource: "managedclusteraddons"},
		Namespaced: true,
		Scope:      ClusterByNamespace,
		Fields:     []string{"spec"},
	},
	{
		Name:          failoverv1alpha1.KindSecret,
		GVR:           schema.GroupVersionResource{Version: "v1", Resource: "secrets"},
		Namespaced:    true,
		Scope:         ClusterByNamespaceIfCluster,
		Fields:        []string{"type", "data"},
		LabelSelector: BackupLabel,
	},
	{
		Name:          failoverv1alpha1.KindConfigMap,
		GVR:           schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Namespaced:    true,
		Scope:         ClusterByNamespaceIfCluster,
		Fields:        []string{"data", "binaryData"},
		LabelSelector: BackupLabel,
	},
	{
		Name:   failoverv1alpha1.KindClusterManagementAddOn,
		GVR:    ClusterManagementAddOnGVR,
		Scope:  HubWide,
		Fields: []string{"spec"},
	},
	{
		Name:       failoverv1alpha1.KindAddOnDeploymentConfig,
		GVR:        schema.GroupVersionResource{Group: "addon.open-cluster-management.io", Version: "v1alpha1", Resource: "addondeploymentconfigs"},
		Namespaced: true,
		// A ManagedClusterAddOn's spec.configs may name one in its cluster's namespace: that one is the
		// cluster's, the others are hub-wide.
		Scope:  ClusterByNamespaceIfCluster,
		Fields: []string{"spec"},
	},
	{
		Name:   failoverv1alpha1.KindAddOnTemplate,
		GVR:    schema.GroupVersionResource{Group: "addon.open-cluster-management.io", Version: "v1alpha1", Resource: "addontemplates"},
		Scope:  HubWide,
		Fields: []string{"spec"},
	},
	{
		Name:       failoverv1alpha1.KindManifestWorkReplicaSet,
		GVR:        schema.GroupVersionResource{Group: "work.open-cluster-management.io", Version: "v1alpha1", Resource: "manifestworkreplicasets"},
		Namespaced: true,
		Scope:      HubWide,
		Fields:     []string{"spec"},
	},
	{
		Name:       failoverv1alpha1.KindPolicy,
		GVR:        schema.GroupVersionResource{Group: "policy.open-cluster-management.io", Version: "v1", Resource: "policies"},
		Namespaced: true,
		Scope:      HubWide,
		Fields:     []string{"spec"},
		// Replicated policies: each hub's propagator makes its own from its copy of the root.
		Generated: Generated{Labels: []string{RootPolicyLabel}},
	},
	{
		Name:       failoverv1alpha1.KindPlacementBinding,
		GVR:        schema.GroupVersionResource{Group: "policy.open-cluster-management.io", Version: "v1", Resource: "placementbindings"},
		Namespaced: true,
		Scope:      HubWide,
		// A PlacementBinding has no spec: these are its top-level fields besides metadata and status.
		Fields: []string{"placementRef", "subjects", "bindingOverrides", "subFilter"},
	},
	{
		Name:       failoverv1alpha1.KindPolicySet,
		GVR:        schema.GroupVersionResource{Group: "policy.open-cluster-management.io", Version: "v1beta1", Resource: "policysets"},
		Namespaced: true,
		Scope:      HubWide,
		Fields:     []string{"spec"},
	},
	{
		Name:       failoverv1alpha1.KindManagedServiceAccount,
		GVR:        schema.GroupVersionResource{Group: "authentication.open-cluster-management.io", Version: "v1beta1", Resource: "managedserviceaccounts"},
		Namespaced: true,
		Scope:      ClusterByNamespace,
		Fields:     []string{"spec"},
	},
	{
		Name:       failoverv1alpha1.KindClusterPermission,
		GVR:        schema.GroupVersionResource{Group: "rbac.open-cluster-management.io", Version: "v1alpha1", Resource: "clusterpermissions"},
		Namespaced: true,
		Scope:      ClusterByNamespace,
		Fields:     []string{"spec"},
	},
}

// KindByName returns the built-in Kind named name and true, or false when name is none of Kinds (a custom kind's
// Kind comes from CustomKindOf).
func KindByName(name failoverv1alpha1.ReplicatedKind) (Kind, bool) {
	for _, k := range Kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// ResolveKinds returns the Kinds spec replicates: those of spec.ReplicatedKinds(), in that order, then
// CustomKindOf of each spec.customKinds entry. spec must have passed failoverv1alpha1.ValidateReplicationConfig. The
// error names the custom kind whose resource is a mirrored kind's (spec.kinds names that one).
func ResolveKinds(spec *failoverv1alpha1.ReplicationConfigSpec) ([]Kind, error) {
	var kinds []Kind
	for _, name := range spec.ReplicatedKinds() {
		if k, ok := KindByName(name); ok {
			kinds = append(kinds, k)
		}
	}
	for i, ck := range spec.CustomKinds {
		gr := schema.GroupResource{Group: ck.Group, Resource: ck.Resource}
		for _, k := range Kinds {
			if k.GVR.GroupResource() == gr {
				return nil, fmt.Errorf("spec.customKinds[%d]: %s is the resource of kind %s: name %s in spec.kinds instead", i, ck.Name(), k.Name, k.Name)
			}
		}
		if why, ok := reservedResources[gr]; ok {
			return nil, fmt.Errorf("spec.customKinds[%d]: %s cannot be replicated: %s", i, ck.Name(), why)
		}
		if reservedGroups[ck.Group] {
			return nil, fmt.Errorf("spec.customKinds[%d]: %s cannot be replicated: the replicator's own API group %s", i, ck.Name(), ck.Group)
		}
		kinds = append(kinds, CustomKindOf(ck))
	}
	return kinds, nil
}

// reservedResources are the resources a custom kind may not name, and why: what the replicator reads or writes
// on each hub for itself.
var reservedResources = map[schema.GroupResource]string{
	LeaseGVR.GroupResource():     "a cluster's managed-cluster-lease on each hub says where its agent is; a copy would make a standby look like the cluster's hub",
	NamespaceGVR.GroupResource(): "the replicator makes a copy's namespace and keeps the fence's marks on a cluster's namespace",
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}:       "the fence is each hub's own",
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}: "the fence is each hub's own",
}

// reservedGroups are the API groups a custom kind may not name: the replicator's and agent's own
// (ReplicationConfig, FailoverConfig).
var reservedGroups = map[string]bool{failoverv1alpha1.GroupName: true}

// CustomKindOf returns the Kind of a custom kind (ReplicationConfig spec.customKinds): named ck.Name(), its
// fields ck.CopiedFields(), its generated objects those carrying ck.GeneratedLabels.
func CustomKindOf(ck failoverv1alpha1.CustomKind) Kind {
	scope := map[failoverv1alpha1.CustomKindScope]ClusterScope{
		failoverv1alpha1.ScopeHubWide:                     HubWide,
		failoverv1alpha1.ScopeClusterByName:               ClusterByName,
		failoverv1alpha1.ScopeClusterByNamespace:          ClusterByNamespace,
		failoverv1alpha1.ScopeClusterByNamespaceIfCluster: ClusterByNamespaceIfCluster,
	}[ck.Scope]
	return Kind{
		Name:          ck.Name(),
		GVR:           schema.GroupVersionResource{Group: ck.Group, Version: ck.Version, Resource: ck.Resource},
		Namespaced:    ck.Namespaced,
		Scope:         scope,
		Fields:        ck.CopiedFields(),
		LabelSelector: ck.LabelSelector,
		Generated:     Generated{Labels: slices.Clone(ck.GeneratedLabels)},
	}
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
