package hubconn

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// cachedObject is what the hub's informers store instead of the unstructured object the watch delivers: the
// object's name and namespace (the cache key), its JSON without managedFields and status (never mirrored), and
// what the replicator reads on every decision, kept beside the JSON so that those reads decode nothing. An
// unstructured ManifestWork in memory is several times the size of its JSON (every nested field is a map
// entry); the replicator decodes the JSON only for the objects it syncs.
//
// An object its hub generates (mirror.Excluded: an add-on manager's ManifestWorks, a ManifestWorkReplicaSet's,
// governance's replicated Policies) is held as its metadata only: it is never mirrored, and every decision about
// it (mirror.Decide rule 0, dropStaleCopies) reads its labels, owners and marks; Hub.Get returns it so.
//
// A copy (mirror.IsCopy) of a kind other than ManagedCluster is held without its mirrored fields
// (mirror.WithoutContent): on a standby, the replicator compares its copies by contentHash, the hash of the
// mirrored content, and rebuilds them from the source's object. When such a copy is needed whole (its hub
// became the source of its cluster), Hub.Get reads it from the hub and the cache holds it whole from then on.
type cachedObject struct {
	// name, namespace and resourceVersion are the object's; GetObjectMeta serves them to the informer's
	// key and index functions (a metav1.ObjectMeta here would cost 232 bytes per object, mostly empty).
	name, namespace, resourceVersion string
	raw                              []byte
	// contentHash is the hash of the mirrored content (mirror.Content.Hash) of a copy whose raw leaves its
	// mirrored fields out; "" when raw is the whole object.
	contentHash string
	// lastWrite is the object's last write by a user (mirror.LastWrite, from the managedFields dropped here).
	lastWrite time.Time
	// cluster is set for ManagedClusters: the facts the direction decision reads.
	cluster *Cluster
	// lease is set for Leases, which keep no JSON.
	lease *leaseTimes
	// installsByStrategy is set for ClusterManagementAddOns: mirror.InstallsByStrategy of the object, read
	// before a copy's spec is left out.
	installsByStrategy bool
}

// leaseTimes are the two times of a managed-cluster-lease the direction decision reads for every cluster.
type leaseTimes struct {
	// renewTime is spec.renewTime; set is false when it is absent or does not parse.
	renewTime time.Time
	set       bool
	// created is metadata.creationTimestamp.
	created time.Time
}

// Cluster is what the replicator reads of a ManagedCluster on every direction recheck and every object sync,
// taken from the object when it is cached.
type Cluster struct {
	// Labels are the ManagedCluster's metadata.labels (matched against spec.clusterSelector).
	Labels map[string]string
	// IsCopy is mirror.IsCopy of the ManagedCluster.
	IsCopy bool
	// LeaseDuration is spec.leaseDurationSeconds; 0 when unset or not positive.
	LeaseDuration time.Duration
	// RecordedHub is the value of mirror.AnnotationClusterHub ("" when absent).
	RecordedHub string
	// RecordedSince is mirror.AnnotationClusterHubSince (RFC 3339); zero when absent or unparsable.
	RecordedSince time.Time
	// ID is the spoke's identity its agent reports in status.clusterClaims (mirror.ClusterIDClaim); "" when
	// absent.
	ID string
	// RecordedID is mirror.AnnotationClusterID, the identity the replicator wrote on a copy; "" when absent.
	RecordedID string
	// Epoch is the agent's epoch recorded on the ManagedCluster (failoverv1alpha1.AnnotationEpoch); zero when absent
	// or malformed.
	Epoch failoverv1alpha1.AgentEpoch
	// Tombstones are the deletes seen on this hub in the cluster's namespace that the replicator recorded there
	// (mirror.AnnotationDeletesSeen, by mirror.TombstoneKey); nil when none.
	Tombstones map[string]mirror.Deleted
}

// GetObjectKind implements runtime.Object; the kind is not kept.
func (c *cachedObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject implements runtime.Object. raw, cluster and lease are never modified, so they are shared.
func (c *cachedObject) DeepCopyObject() runtime.Object {
	out := *c
	return &out
}

// GetObjectMeta implements metav1.ObjectMetaAccessor (what meta.Accessor reads): the name, namespace and
// resourceVersion, in a new ObjectMeta on every call.
func (c *cachedObject) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: c.name, Namespace: c.namespace, ResourceVersion: c.resourceVersion}
}

// whole reports whether raw holds the whole object (not a copy without its mirrored fields).
func (c *cachedObject) whole() bool { return c.contentHash == "" }

// object decodes the cached JSON (numbers as int64 where integral, as unstructured objects from the API
// server hold them); nil if it does not decode.
func (c *cachedObject) object() *unstructured.Unstructured {
	m := map[string]any{}
	if err := utiljson.Unmarshal(c.raw, &m); err != nil {
		return nil
	}
	return &unstructured.Unstructured{Object: m}
}

// compact turns an unstructured object of kind k into a cachedObject; for a copy it keeps the mirrored fields
// only when keepWhole is nil or says so. Tombstones and objects of other types pass through unchanged. A nil k is the
// managed-cluster-lease informer's.
func compact(obj any, k *mirror.Kind, keepWhole func(namespace, name string) bool) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	c := &cachedObject{name: u.GetName(), namespace: u.GetNamespace(), resourceVersion: u.GetResourceVersion()}
	if k != nil {
		c.lastWrite = mirror.LastWrite(u)
	}
	u.SetManagedFields(nil)
	if k != nil && k.Name == failoverv1alpha1.KindManagedCluster {
		// Before the status goes: the spoke's identity is a claim there.
		c.cluster = clusterOf(u)
	}
	delete(u.Object, "status")
	if k == nil {
		// Only the two times of a lease are read.
		lease := &leaseTimes{created: u.GetCreationTimestamp().Time}
		lease.renewTime, lease.set = RenewTime(u)
		c.lease = lease
		return c, nil
	}
	if k.Name == failoverv1alpha1.KindClusterManagementAddOn {
		c.installsByStrategy = mirror.InstallsByStrategy(u)
	}
	switch {
	case mirror.Excluded(*k, u):
		// Generated on its hub (an add-on manager's ManifestWorks, governance's replicated Policies): never
		// mirrored, and decided from its metadata alone, which is all that is kept.
		u = &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": u.Object["metadata"]}}
	case k.Name != failoverv1alpha1.KindManagedCluster && mirror.IsCopy(u) && keepWhole != nil && !keepWhole(c.namespace, c.name):
		u, c.contentHash = mirror.WithoutContent(*k, u)
	}
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	c.raw = raw
	return c, nil
}

// clusterOf returns the Cluster facts of mc, a ManagedCluster.
func clusterOf(mc *unstructured.Unstructured) *Cluster {
	out := &Cluster{Labels: mc.GetLabels(), IsCopy: mirror.IsCopy(mc)}
	out.ID, out.RecordedID = mirror.ClusterIdentity(mc)
	if epoch, err := failoverv1alpha1.ParseAgentEpoch(mc.GetAnnotations()[failoverv1alpha1.AnnotationEpoch]); err == nil {
		out.Epoch = epoch
	}
	if seconds, found, _ := unstructured.NestedInt64(mc.Object, "spec", "leaseDurationSeconds"); found && seconds > 0 {
		out.LeaseDuration = time.Duration(seconds) * time.Second
	}
	annotations := mc.GetAnnotations()
	if v := annotations[mirror.AnnotationDeletesSeen]; v != "" {
		out.Tombstones = mirror.ParseTombstones(v)
	}
	out.RecordedHub = annotations[mirror.AnnotationClusterHub]
	if t, err := time.Parse(time.RFC3339, annotations[mirror.AnnotationClusterHubSince]); err == nil {
		out.RecordedSince = t
	}
	return out
}
