package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MinReplicationHubs and MaxReplicationHubs bound the length of ReplicationConfigSpec.Hubs.
const (
	MinReplicationHubs = 2
	MaxReplicationHubs = 8
)

// ReplicatedKind is a kind of hub object the replicator mirrors between hubs.
// +kubebuilder:validation:Enum=ManagedCluster;ManagedClusterSet;ManagedClusterSetBinding;Placement;ManifestWork;ManagedClusterAddOn;Secret;ConfigMap;ClusterManagementAddOn;AddOnDeploymentConfig;AddOnTemplate;ManifestWorkReplicaSet;Policy;PlacementBinding;PolicySet;ManagedServiceAccount;ClusterPermission
type ReplicatedKind string

const (
	// KindManagedCluster: cluster.open-cluster-management.io/v1 ManagedCluster — its spec (hubAcceptsClient,
	// leaseDurationSeconds, managedClusterClientConfigs, taints other than the hub's own) and its labels and
	// annotations other than those the agent or the hub controllers own. Source: the cluster's hub.
	KindManagedCluster ReplicatedKind = "ManagedCluster"
	// KindManagedClusterSet: cluster.open-cluster-management.io/v1beta2 ManagedClusterSet (cluster-scoped, spec
	// only). Source: the first reachable hub in spec.hubs order.
	KindManagedClusterSet ReplicatedKind = "ManagedClusterSet"
	// KindManagedClusterSetBinding: cluster.open-cluster-management.io/v1beta2 ManagedClusterSetBinding
	// (namespaced, spec only). Source: the first reachable hub.
	KindManagedClusterSetBinding ReplicatedKind = "ManagedClusterSetBinding"
	// KindPlacement: cluster.open-cluster-management.io/v1beta1 Placement (namespaced, spec only; every hub's
	// scheduler makes its own PlacementDecisions). Source: the first reachable hub.
	KindPlacement ReplicatedKind = "Placement"
	// KindManifestWork: work.open-cluster-management.io/v1 ManifestWork in a cluster's namespace (spec only),
	// except those a hub generates: an add-on's (label open-cluster-management.io/addon-name) and a
	// ManifestWorkReplicaSet's (label work.open-cluster-management.io/manifestworkreplicaset), which each hub
	// makes from its own copy of the generator. Source: the cluster's hub.
	KindManifestWork ReplicatedKind = "ManifestWork"
	// KindManagedClusterAddOn: addon.open-cluster-management.io/v1alpha1 ManagedClusterAddOn in a cluster's
	// namespace (spec only), not to a hub whose ClusterManagementAddOn of the same name installs it by
	// strategy (that hub's add-on manager makes and deletes it). Source: the cluster's hub.
	KindManagedClusterAddOn ReplicatedKind = "ManagedClusterAddOn"
	// KindSecret: core/v1 Secrets labelled cluster.open-cluster-management.io/backup (type, data). Source: the
	// cluster's hub when the Secret is in a cluster's namespace, else the first reachable hub.
	KindSecret ReplicatedKind = "Secret"
	// KindConfigMap: core/v1 ConfigMaps labelled cluster.open-cluster-management.io/backup (data, binaryData).
	// Source: as for KindSecret.
	KindConfigMap ReplicatedKind = "ConfigMap"
	// KindClusterManagementAddOn: addon.open-cluster-management.io/v1alpha1 ClusterManagementAddOn
	// (cluster-scoped, spec only). Source: the first reachable hub.
	KindClusterManagementAddOn ReplicatedKind = "ClusterManagementAddOn"
	// KindAddOnDeploymentConfig: addon.open-cluster-management.io/v1alpha1 AddOnDeploymentConfig (namespaced,
	// spec only). Source: as for KindSecret (one in a cluster's namespace is the cluster's).
	KindAddOnDeploymentConfig ReplicatedKind = "AddOnDeploymentConfig"
	// KindAddOnTemplate: addon.open-cluster-management.io/v1alpha1 AddOnTemplate (cluster-scoped, spec only).
	// Source: the first reachable hub.
	KindAddOnTemplate ReplicatedKind = "AddOnTemplate"
	// KindManifestWorkReplicaSet: work.open-cluster-management.io/v1alpha1 ManifestWorkReplicaSet (namespaced,
	// spec only; every hub's work manager makes its ManifestWorks from its own copy). Source: the first
	// reachable hub.
	KindManifestWorkReplicaSet ReplicatedKind = "ManifestWorkReplicaSet"
	// KindPolicy: policy.open-cluster-management.io/v1 Policy (namespaced, spec only), except the replicated
	// policies governance's propagator makes in cluster namespaces (label
	// policy.open-cluster-management.io/root-policy): every hub's propagator makes its own from its copy of the
	// root. Source: the first reachable hub.
	KindPolicy ReplicatedKind = "Policy"
	// KindPlacementBinding: policy.open-cluster-management.io/v1 PlacementBinding (namespaced; placementRef,
	// subjects, bindingOverrides, subFilter). Source: the first reachable hub.
	KindPlacementBinding ReplicatedKind = "PlacementBinding"
	// KindPolicySet: policy.open-cluster-management.io/v1beta1 PolicySet (namespaced, spec only). Source: the
	// first reachable hub.
	KindPolicySet ReplicatedKind = "PolicySet"
	// KindManagedServiceAccount: authentication.open-cluster-management.io/v1beta1 ManagedServiceAccount in a
	// cluster's namespace (spec only). Source: the cluster's hub.
	KindManagedServiceAccount ReplicatedKind = "ManagedServiceAccount"
	// KindClusterPermission: rbac.open-cluster-management.io/v1alpha1 ClusterPermission in a cluster's namespace
	// (spec only; every hub's cluster-permission controller makes its ManifestWork from its own copy). Source:
	// the cluster's hub.
	KindClusterPermission ReplicatedKind = "ClusterPermission"
)

// AllReplicatedKinds lists every ReplicatedKind in the order the replicator reports them; it is what an empty
// spec.kinds means.
var AllReplicatedKinds = []ReplicatedKind{
	KindManagedCluster, KindManagedClusterSet, KindManagedClusterSetBinding, KindPlacement,
	KindManifestWork, KindManagedClusterAddOn, KindSecret, KindConfigMap,
	KindClusterManagementAddOn, KindAddOnDeploymentConfig, KindAddOnTemplate, KindManifestWorkReplicaSet,
	KindPolicy, KindPlacementBinding, KindPolicySet, KindManagedServiceAccount, KindClusterPermission,
}

// Condition types of ReplicationConfigStatus.Conditions.
const (
	// ReplicationConditionAvailable is True while the configuration is valid and at least two hubs are ready
	// (reachable, caches synced): replication runs among the ready hubs.
	ReplicationConditionAvailable = "Available"
	// ReplicationConditionDegraded is True when something needs attention: a hub is unreachable or its
	// kubeconfig Secret is missing or invalid, the configuration is invalid, or a hub's delete brake is
	// engaged. The message names the hub and the cause.
	ReplicationConditionDegraded = "Degraded"
	// ReplicationConditionDeletesHeld is True while the delete brake (spec.deleteBrake) of some hub is engaged:
	// the message names each such hub, how many deletes wait there and the command that releases it.
	ReplicationConditionDeletesHeld = "DeletesHeld"
)

// ReplicationConfig configures the hub-side replicator (`klusterlet-failover replicator`): which hubs it keeps
// in step, which managed clusters and which kinds. It lives on the cluster the replicator runs in (for
// example a standby hub), in the replicator's namespace, next to one kubeconfig Secret per hub; the replicator
// reads the ReplicationConfig named by its --config-name flag and writes its status.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="Hubs",type=integer,JSONPath=`.status.reachableHubs`,description="Hubs reachable now"
// +kubebuilder:printcolumn:name="Clusters",type=integer,JSONPath=`.status.clusters`,description="Managed clusters replicated"
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Degraded",type=string,JSONPath=`.status.conditions[?(@.type=="Degraded")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ReplicationConfig struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists the hubs and what is replicated between them.
	// +required
	Spec ReplicationConfigSpec `json:"spec"`

	// status is written by the replicator.
	// +optional
	Status ReplicationConfigStatus `json:"status,omitempty"`
}

// ReplicationConfigSpec is the desired replication.
type ReplicationConfigSpec struct {
	// hubs are the hubs kept in step, in order of preference: hub-wide objects (ManagedClusterSets, their
	// bindings, Placements, backup-labelled Secrets and ConfigMaps outside cluster namespaces) come from the
	// first reachable hub of this list. Between 2 and 8 entries, names unique. Use the hub names of the
	// agents' FailoverConfig ("primary" and the alternateHubs names) so that events and status read the same on
	// both sides.
	// +required
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	Hubs []ReplicationHub `json:"hubs"`

	// clusterSelector selects, by the labels of the ManagedCluster on the cluster's source hub, the managed
	// clusters whose state is replicated. Omitted: every managed cluster. Hub-wide objects are replicated
	// regardless.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// kinds are the kinds replicated. Omitted or empty: all of them (AllReplicatedKinds). Without
	// ManagedCluster, a standby hub does not accept a cluster in advance; without ManifestWork, OCM's work agent
	// evicts the workloads of the old hub after a failover.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=17
	Kinds []ReplicatedKind `json:"kinds,omitempty"`

	// customKinds are further kinds replicated by a rule: any namespaced or cluster-scoped resource the hubs
	// serve that is not among the ReplicatedKinds. A copy takes the source's fields, labels and annotations,
	// never its status. At most MaxCustomKinds, resources unique. The replicator's ClusterRole on every hub
	// must grant get, list, watch, create, update, patch and delete on each of them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	CustomKinds []CustomKind `json:"customKinds,omitempty"`

	// deleteBrake bounds the deletes the replicator makes on each hub. Within any DeleteBrakeWindow (10
	// minutes) it deletes on one hub at most the larger of minimum and percent % of the objects it replicates;
	// the delete that would go beyond engages the hub's brake: from then on every delete on that hub waits
	// (the objects stay, the hub is reported behind, a delete on the source stays held by its delete-copies
	// finalizer) until a person releases the brake with the annotation AnnotationReleaseDeletes on this
	// ReplicationConfig. Deletes that were seen made (a deletionTimestamp on the source, a delete a watch
	// delivered) are the only ones the replicator makes at all; the brake stops them too when many come at
	// once, as from a cluster namespace deleted by mistake or a hub restored from an old backup. Omitted: percent
	// DefaultDeleteBrakePercent, minimum DefaultDeleteBrakeMinimum.
	// +optional
	DeleteBrake *DeleteBrake `json:"deleteBrake,omitempty"`
}

// DeleteBrakeWindow is the span, in time, over which the deletes of each hub are counted against
// ReplicationConfigSpec.DeleteBrake.
const DeleteBrakeWindow = 10 * time.Minute

// Defaults of DeleteBrake.
const (
	// DefaultDeleteBrakePercent is DeleteBrake.Percent when omitted.
	DefaultDeleteBrakePercent = 10
	// DefaultDeleteBrakeMinimum is DeleteBrake.Minimum when omitted.
	DefaultDeleteBrakeMinimum = 20
)

// AnnotationReleaseDeletes, on the ReplicationConfig, releases engaged delete brakes: its value is a
// comma-separated list of release tokens (status.hubs[].deleteBrake.releaseToken, "<hub>@<RFC 3339 time the
// brake engaged>"). A token releases the brake it names once; a token of a brake no longer engaged does nothing,
// so the annotation may stay.
const AnnotationReleaseDeletes = "failover.open-cluster-management.io/release-deletes"

// DeleteBrake is spec.deleteBrake: how many deletes the replicator makes on one hub within DeleteBrakeWindow
// before it waits for a person.
type DeleteBrake struct {
	// percent is the share, in percent, of a hub's objects of the mirrored kinds (originals, copies and the
	// hub's own, as the replicator's caches hold them) that the replicator may delete on that hub within
	// DeleteBrakeWindow. Between 1 and 100; omitted: DefaultDeleteBrakePercent.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Percent *int32 `json:"percent,omitempty"`

	// minimum is how many deletes on one hub within DeleteBrakeWindow are allowed whatever percent gives (a
	// small fleet). Between 0 and 100000; omitted: DefaultDeleteBrakeMinimum.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	Minimum *int32 `json:"minimum,omitempty"`
}

// MaxDeleteBrakeMinimum bounds DeleteBrake.Minimum.
const MaxDeleteBrakeMinimum = 100000

// Limits returns percent and minimum of b with the defaults filled in; b may be nil.
func (b *DeleteBrake) Limits() (percent, minimum int) {
	percent, minimum = DefaultDeleteBrakePercent, DefaultDeleteBrakeMinimum
	if b == nil {
		return percent, minimum
	}
	if b.Percent != nil {
		percent = int(*b.Percent)
	}
	if b.Minimum != nil {
		minimum = int(*b.Minimum)
	}
	return percent, minimum
}

// MaxCustomKinds bounds the length of ReplicationConfigSpec.CustomKinds.
const MaxCustomKinds = 16

// CustomKindScope says which hub is the source of an object of a CustomKind.
// +kubebuilder:validation:Enum=HubWide;ClusterByName;ClusterByNamespace;ClusterByNamespaceIfCluster
type CustomKindScope string

const (
	// ScopeHubWide: the object belongs to no cluster; its source is the first reachable hub of spec.hubs.
	ScopeHubWide CustomKindScope = "HubWide"
	// ScopeClusterByName: a cluster-scoped object named after a managed cluster; its source is that cluster's
	// hub.
	ScopeClusterByName CustomKindScope = "ClusterByName"
	// ScopeClusterByNamespace: an object in a managed cluster's namespace; its source is that cluster's hub.
	ScopeClusterByNamespace CustomKindScope = "ClusterByNamespace"
	// ScopeClusterByNamespaceIfCluster: an object in a managed cluster's namespace belongs to that cluster (its
	// source is the cluster's hub); elsewhere it is hub-wide.
	ScopeClusterByNamespaceIfCluster CustomKindScope = "ClusterByNamespaceIfCluster"
)

// CustomKind is a resource the replicator mirrors by a rule (ReplicationConfigSpec.CustomKinds). Its name in
// status, events and metrics is "<resource>.<group>" ("<resource>" in the core group).
type CustomKind struct {
	// group is the resource's API group; "" is the core group.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group"`

	// version is the API version the replicator reads and writes, served by every hub.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Version string `json:"version"`

	// resource is the resource's plural, lower-case name (as in RBAC rules and URLs, e.g. "widgets").
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Resource string `json:"resource"`

	// namespaced is true for a namespaced resource.
	// +optional
	Namespaced bool `json:"namespaced,omitempty"`

	// scope says which hub is an object's source. ClusterByName needs a cluster-scoped resource; the
	// ClusterByNamespace scopes a namespaced one.
	// +required
	Scope CustomKindScope `json:"scope"`

	// fields are the top-level fields a copy takes from the source, e.g. "spec" or "data"; every other field
	// outside metadata is left as the target has it. Never metadata, status, apiVersion or kind. Omitted:
	// ["spec"].
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	Fields []string `json:"fields,omitempty"`

	// labelSelector restricts the objects replicated, in the syntax of kubectl's --selector (e.g.
	// "app.example.com/replicate"). Omitted: every object.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	LabelSelector string `json:"labelSelector,omitempty"`

	// generatedLabels are label keys of objects a controller on each hub generates from another object: they
	// are never replicated, and each hub keeps its own.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	GeneratedLabels []string `json:"generatedLabels,omitempty"`
}

// ReplicationHub is one hub the replicator connects to.
type ReplicationHub struct {
	// name identifies the hub in status, events, metrics and the annotations of the copies. A DNS-1123 label
	// (lower-case alphanumerics and '-', at most 63 characters).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// kubeconfigSecret names the Secret, in the ReplicationConfig's namespace, that holds the kubeconfig the
	// replicator uses for this hub. The Secret is watched: a change reconnects to the hub.
	// +required
	KubeconfigSecret KubeconfigSecretReference `json:"kubeconfigSecret"`
}

// KubeconfigSecretReference names a Secret and the key of it that holds a kubeconfig.
type KubeconfigSecretReference struct {
	// name is the Secret's name, a DNS-1123 subdomain.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// key is the key of the Secret's data that holds the kubeconfig. Default "kubeconfig".
	// +optional
	// +kubebuilder:default=kubeconfig
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`
}

// ReplicationConfigStatus is the observed state of the replication, written by the replicator.
type ReplicationConfigStatus struct {
	// observedGeneration is the metadata.generation of the spec this status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are Available and Degraded (see the ReplicationCondition* constants).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// reachableHubs is the number of hubs whose API server answered the last request.
	// +optional
	ReachableHubs int32 `json:"reachableHubs,omitempty"`

	// clusters is the number of managed clusters replicated (selected by spec.clusterSelector on their source
	// hub).
	// +optional
	Clusters int32 `json:"clusters,omitempty"`

	// hubs holds one entry per hub of spec.hubs, in that order.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	Hubs []ReplicationHubStatus `json:"hubs,omitempty"`

	// kinds holds one entry per replicated kind.
	// +optional
	// +listType=map
	// +listMapKey=kind
	// +kubebuilder:validation:MaxItems=33
	Kinds []ReplicatedKindStatus `json:"kinds,omitempty"`
}

// ReplicationHubStatus is the observed state of one hub.
type ReplicationHubStatus struct {
	// name is the hub's name from spec.hubs.
	// +required
	Name string `json:"name"`

	// server is the hub's API server URL, from its kubeconfig.
	// +optional
	Server string `json:"server,omitempty"`

	// reachable is true when the hub's API server answered the replicator's last request.
	// +optional
	Reachable bool `json:"reachable"`

	// synced is true once every watch on the hub has listed since the hub last became reachable, and every
	// object whose copy on this hub was out of step has been written (creates, updates and deletes): the hub
	// is a caught-up standby (or source) from then on.
	// +optional
	Synced bool `json:"synced"`

	// sourceClusters is the number of managed clusters whose source is this hub (their
	// managed-cluster-lease is renewed there).
	// +optional
	SourceClusters int32 `json:"sourceClusters,omitempty"`

	// copies is the number of objects on this hub that the replicator made and keeps in step.
	// +optional
	Copies int32 `json:"copies,omitempty"`

	// conflicts is the number of objects on this hub the replicator would write but must not: a foreign
	// object with a mirrored name, or a copy changed on this hub since the replicator wrote it (the source
	// still wins for those).
	// +optional
	Conflicts int32 `json:"conflicts,omitempty"`

	// lastError is the last error of a request to this hub; empty after a success. Never holds key material.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	LastError string `json:"lastError,omitempty"`

	// lastTransitionTime is when the hub's connection state (unreachable, listing, ready) last changed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`

	// deleteBrake is set while the hub's delete brake (spec.deleteBrake) is engaged: no delete is made on the
	// hub until a person releases it.
	// +optional
	DeleteBrake *DeleteBrakeStatus `json:"deleteBrake,omitempty"`
}

// DeleteBrakeStatus is an engaged delete brake of one hub.
type DeleteBrakeStatus struct {
	// since is when the brake engaged. The replicator reads it back when it starts: a brake stays engaged
	// across its restarts.
	// +required
	Since metav1.Time `json:"since"`

	// limit is the number of deletes the hub was allowed within DeleteBrakeWindow when the brake engaged.
	// +optional
	Limit int32 `json:"limit,omitempty"`

	// deletesHeld is the number of objects whose delete on this hub waits since the brake engaged (counted
	// since the replicator last started).
	// +optional
	DeletesHeld int32 `json:"deletesHeld,omitempty"`

	// releaseToken is the value of the annotation AnnotationReleaseDeletes on the ReplicationConfig that
	// releases this brake: "<hub>@<since, RFC 3339>".
	// +required
	// +kubebuilder:validation:MaxLength=128
	ReleaseToken string `json:"releaseToken"`
}

// ReleaseToken returns the release token of hub's brake engaged at since: "<hub>@<since, RFC 3339, UTC, in
// seconds>".
func ReleaseToken(hub string, since time.Time) string {
	return hub + "@" + since.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// ReplicatedKindStatus is the observed state of one replicated kind.
type ReplicatedKindStatus struct {
	// kind is the replicated kind: a ReplicatedKind, or a custom kind's name ("<resource>.<group>").
	// +required
	// +kubebuilder:validation:MaxLength=317
	Kind string `json:"kind"`

	// objects is the number of source objects of this kind (summed over the sources).
	// +optional
	Objects int32 `json:"objects,omitempty"`

	// conflicts is the number of objects of this kind in conflict on some hub.
	// +optional
	Conflicts int32 `json:"conflicts,omitempty"`
}

// ReplicationConfigList is a list of ReplicationConfigs.
//
// +kubebuilder:object:root=true
type ReplicationConfigList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ReplicationConfigs.
	Items []ReplicationConfig `json:"items"`
}
