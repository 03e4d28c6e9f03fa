package mirror

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	operatorv1 "open-cluster-management.io/api/operator/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// Labels and annotations the replicator writes on the objects it manages.
const (
	// LabelReplicatedFrom marks a copy: its value is the name (ReplicationConfig spec.hubs[].name) of the hub
	// the copy was made from. Only objects with this label are updated or deleted by the replicator.
	LabelReplicatedFrom = failoverv1alpha1.LabelReplicatedFrom
	// AnnotationContentHash is the hash (ContentHash) of the mirrored content the replicator last wrote on the
	// copy; a copy whose content no longer has this hash was changed on its hub since.
	AnnotationContentHash = "failover.open-cluster-management.io/replicated-hash"
	// AnnotationSourceResourceVersion is the source object's metadata.resourceVersion the copy was last
	// written from. It is not updated when only non-mirrored parts of the source (its status) change.
	AnnotationSourceResourceVersion = "failover.open-cluster-management.io/source-resource-version"
	// AnnotationClusterHub is set on every copy of a ManagedCluster that is not on the cluster's source hub:
	// the name of the hub the cluster is connected to, so that users of this hub see that it moved.
	AnnotationClusterHub = "failover.open-cluster-management.io/cluster-hub"
	// AnnotationClusterHubSince is the time (RFC 3339, UTC) since which the cluster has been on the hub named
	// by AnnotationClusterHub, as the replicator observed it.
	AnnotationClusterHubSince = "failover.open-cluster-management.io/cluster-hub-since"
	// AnnotationHasCopies, on an original of a cluster's object (one that is not a copy), lists the hubs
	// (comma-separated, sorted ReplicationConfig names) that hold a copy of it; the replicator adds a hub once
	// its copy is written. A marked original whose cluster is now on one of those hubs is deleted like a copy
	// when the delete of its copy there was observed (Decide, rules 2 and 3: held by FinalizerDeleteCopies, or
	// delivered by that hub's watch), also when its own hub was down at the time of the delete; a copy merely
	// missing there is no delete. Hub-wide originals are never marked (their source is the first reachable hub
	// in order).
	AnnotationHasCopies = "failover.open-cluster-management.io/has-copies"
	// AnnotationHubsInStep, on the ManagedCluster of the cluster's source hub only, lists (comma-separated, in
	// ReplicationConfig spec.hubs order) the other hubs that hold the cluster's state as the source has it:
	// ready, and with none of the cluster's objects waiting to be written there. The agent, which reads its
	// ManagedCluster on the hub it is on, prefers these hubs when it has to move.
	AnnotationHubsInStep = failoverv1alpha1.AnnotationHubsInStep
	// AnnotationHubsBehind, beside AnnotationHubsInStep, lists the other hubs that are not in step (unreachable,
	// or with objects of the cluster still to be written): joining one may apply older ManifestWorks.
	AnnotationHubsBehind = failoverv1alpha1.AnnotationHubsBehind
	// AnnotationHubsReported, beside the two lists, names their writer, its time and its confirmation interval
	// (failoverv1alpha1.HubsReport); rewritten at least every interval while the replicator runs.
	AnnotationHubsReported = failoverv1alpha1.AnnotationHubsReported
	// AnnotationMovedFrom, on the ManagedCluster of the cluster's source hub only, names the hub the cluster
	// was on before (the AnnotationClusterHub this ManagedCluster carried as a copy, kept when SourceCleanup
	// removes it). While it is set, writes that hub made and never replicated are written back to the source
	// (DecideWriteBack); the replicator removes it once it has compared every object of the cluster with that
	// hub.
	AnnotationMovedFrom = "failover.open-cluster-management.io/moved-from"
	// AnnotationWrittenBackEpoch, on the ManagedCluster of the cluster's source hub, is the agent epoch
	// (failoverv1alpha1.AnnotationEpoch) whose move the replicator finished writing back: the hub the epoch names as
	// the one the agent left has nothing left to write back to the source (MovedFrom).
	AnnotationWrittenBackEpoch = "failover.open-cluster-management.io/written-back-epoch"
	// AnnotationDeletedAgain is, on an object being deleted on its cluster's source, the hub whose log of deletes
	// made recorded its delete: the replicator deletes it again because a hub restored from a backup taken before
	// the delete brought it back (DeletedAgainPatch). Its delete is not a user's delete of what the name holds now
	// (an object made again under it since, whose copies other hubs keep): Decide does not carry it to the other
	// hubs (rule 2).
	AnnotationDeletedAgain = "failover.open-cluster-management.io/deleted-again"
	// AnnotationSourceUID is the source object's metadata.uid, on the copy made from it.
	AnnotationSourceUID = "failover.open-cluster-management.io/source-uid"
	// AnnotationSourceGeneration is, on a copy, the source object's lineage (Lineage: its metadata.generation
	// plus its AnnotationGenerationOffset) when the copy was last written (absent when the source's kind keeps no
	// generation). The apiserver only ever raises an object's generation, so a source object of the same UID
	// with a lower lineage is an older state of it (a hub restored from a backup): Decide does not write it over
	// the copy (rule 6), and DecideRestore writes the newest copy's state back onto it.
	AnnotationSourceGeneration = "failover.open-cluster-management.io/source-generation"
	// AnnotationGenerationOffset is, on a source object whose newer state the replicator wrote back from a copy
	// after its hub was restored (RestoreOnto), the number added to its metadata.generation to give its lineage
	// (Lineage): the write-back raises the generation by one only, and the lineage must go on above every
	// state a copy recorded. It stays through edits made with apply, patch or update of a read object.
	AnnotationGenerationOffset = "failover.open-cluster-management.io/generation-offset"
	// AnnotationSourceGenerationOffset is, on a copy, the source object's AnnotationGenerationOffset when the
	// copy was last written (absent: none). A source object that shows a lower offset than its copy recorded
	// lost the annotation (a `kubectl replace` of a manifest without it): its generation and the copy's
	// recorded lineage are not compared then (the source's state wins), since neither says which is newer.
	AnnotationSourceGenerationOffset = "failover.open-cluster-management.io/source-generation-offset"
	// AnnotationSourceIncarnation is, on a copy, the incarnation of its source hub when the copy was last
	// written (WithSourceIncarnation; Incarnation's String form, "<marker uid>/<counter>"): the counter the
	// replicator keeps in that hub's incarnation marker, which it advances there before it copies from the hub.
	// A hub restored from a backup shows the same marker at an older counter: a copy made in a later
	// incarnation than the one its source hub shows proves that the source held the object after the state it
	// was restored to (DecideRecreate). A marker made anew (the hub rebuilt, the replicator uninstalled) has
	// another UID, and copies of the old one prove nothing. Absent: unknown.
	AnnotationSourceIncarnation = "failover.open-cluster-management.io/source-incarnation"
	// AnnotationSourceWrittenAt is, on a copy, the time (RFC 3339, UTC, seconds) of the last write of the source
	// object by anyone but the replicator (LastWrite) when the copy was last written (WithSourceWrittenAt; the
	// replicator's caches keep that time, not the managedFields).
	AnnotationSourceWrittenAt = "failover.open-cluster-management.io/source-written-at"
	// AnnotationClusterID is, on a copy of a ManagedCluster, the identity of the spoke the copy was made for:
	// the value of the ClusterIDClaim that spoke's agent reports on the cluster's source hub. A spoke whose
	// identity differs is another cluster under the same name (ClusterIdentity).
	AnnotationClusterID = failoverv1alpha1.AnnotationClusterID
)

// ClusterIDClaim is the ClusterClaim that identifies a spoke, as its agent reports it in the ManagedCluster's
// status.clusterClaims (the first of open-cluster-management.io/api cluster/v1alpha1
// ReservedClusterClaimNames, defined by KEP-2149 "ClusterId for ClusterSet identification"). The failover agent
// reports its kube-system namespace's UID there when the spoke has no such ClusterClaim.
const ClusterIDClaim = "id.k8s.io"

// ClusterIdentity returns what ManagedCluster mc says of the identity of its spoke: claim, the value of the
// ClusterIDClaim in its status.clusterClaims (written by the agent of the spoke that joined this hub under that
// name), and recorded, its AnnotationClusterID (written by the replicator on a copy). Either is "" when absent.
func ClusterIdentity(mc *unstructured.Unstructured) (claim, recorded string) {
	if mc == nil {
		return "", ""
	}
	claims, _, _ := unstructured.NestedSlice(mc.Object, "status", "clusterClaims")
	for _, c := range claims {
		m, _ := c.(map[string]any)
		if name, _ := m["name"].(string); name == ClusterIDClaim {
			claim, _ = m["value"].(string)
			break
		}
	}
	return claim, mc.GetAnnotations()[AnnotationClusterID]
}

// FieldManager is the field manager of every write the replicator makes; its entries in metadata.managedFields
// are not a user's writes (LastWrite).
const FieldManager = "klusterlet-failover-replicator"

// ReservedLabelPrefixes are the label key prefixes that are never mirrored and that a target keeps as it has
// them: the replicator's own, and the add-on feature labels OCM's hub sets on a ManagedCluster from the
// cluster's ManagedClusterAddOns (every hub computes its own).
var ReservedLabelPrefixes = []string{"failover.open-cluster-management.io/", "feature.open-cluster-management.io/"}

// ReservedAnnotationPrefixes are the annotation key prefixes that are never mirrored and that a target keeps:
// the replicator's own, those the registration agent sets on the ManagedCluster it creates
// (agent.open-cluster-management.io/, from the agent's --cluster-annotations), and the hub's own record of an
// automatic acceptance.
var ReservedAnnotationPrefixes = []string{
	"failover.open-cluster-management.io/",
	operatorv1.ClusterAnnotationsKeyPrefix,
	// Set by OCM's hub on a ManagedCluster it accepted automatically (ManagedClusterAutoApproval): each hub
	// records its own acceptance.
	"open-cluster-management.io/automatically-accepted-on",
}

// HubOwnedTaints are the keys of the ManagedCluster taints OCM's hub adds and removes from the cluster's
// conditions on that hub (open-cluster-management.io/api cluster/v1 ManagedClusterTaintUnavailable and
// ManagedClusterTaintUnreachable). They are not mirrored; a target keeps its own.
var HubOwnedTaints = []string{"cluster.open-cluster-management.io/unavailable", "cluster.open-cluster-management.io/unreachable"}

// Content is the part of an object that a copy mirrors: the Kind's top-level fields (absent ones omitted)
// and the labels and annotations outside the reserved prefixes. Maps are never nil.
type Content struct {
	Fields      map[string]any    `json:"fields"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// ContentOf returns the mirrored content of obj as kind k. For a ManagedCluster the hub-owned taints are
// dropped from spec.taints (and an empty list is dropped). The result shares no memory with obj.
func ContentOf(k Kind, obj *unstructured.Unstructured) Content {
	c := Content{Fields: map[string]any{}, Labels: map[string]string{}, Annotations: map[string]string{}}
	if obj == nil {
		return c
	}
	for _, f := range k.Fields {
		if v, ok := obj.Object[f]; ok && v != nil {
			c.Fields[f] = runtime.DeepCopyJSONValue(v)
		}
	}
	if k.Name == failoverv1alpha1.KindManagedCluster {
		if spec, ok := c.Fields["spec"].(map[string]any); ok {
			if kept := filterTaints(spec["taints"], false); len(kept) > 0 {
				for _, t := range kept {
					// OCM's webhook sets timeAdded itself on every hub and refuses a changed one.
					delete(t.(map[string]any), "timeAdded")
				}
				spec["taints"] = kept
			} else {
				delete(spec, "taints")
			}
		}
	}
	for key, v := range obj.GetLabels() {
		if !hasAnyPrefix(key, ReservedLabelPrefixes) {
			c.Labels[key] = v
		}
	}
	for key, v := range obj.GetAnnotations() {
		if !hasAnyPrefix(key, ReservedAnnotationPrefixes) {
			c.Annotations[key] = v
		}
	}
	return c
}

// Hash returns a short stable hash of c (16 hex digits of the SHA-256 of its JSON form, whose map keys are
// sorted), the value of AnnotationContentHash.
func (c Content) Hash() string {
	data, err := json.Marshal(c)
	if err != nil {
		// Content holds only values decoded from JSON, which always encode again.
		return "unhashable"
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// Equal reports whether c and other mirror the same content.
func (c Content) Equal(other Content) bool {
	return reflect.DeepEqual(c, other)
}

// Desired returns the object the target hub should hold for the source object src (not nil): tgt (the
// target's current object, nil when absent) with the mirrored content replaced by src's, the target's
// reserved labels, annotations, status and hub-owned taints kept, and the copy marks set: LabelReplicatedFrom
// = source, AnnotationContentHash, AnnotationSourceResourceVersion. extraAnnotations (for a ManagedCluster:
// AnnotationClusterHub, AnnotationClusterHubSince and, when the spoke's identity is known, AnnotationClusterID)
// are set too; for a ManagedCluster without them, any AnnotationClusterHub* the target has is removed (an
// AnnotationClusterID it has is kept). Neither src nor tgt is modified.
func Desired(k Kind, src, tgt *unstructured.Unstructured, source string, extraAnnotations map[string]string) *unstructured.Unstructured {
	content := ContentOf(k, src)
	// The hash covers the mirrored content only, before the target's own hub-owned taints join the spec
	// (the spec map below is shared with content).
	hash := content.Hash()
	var out *unstructured.Unstructured
	if tgt != nil {
		out = tgt.DeepCopy()
	} else {
		out = &unstructured.Unstructured{Object: map[string]any{}}
		out.SetAPIVersion(src.GetAPIVersion())
		out.SetKind(src.GetKind())
		out.SetName(src.GetName())
		out.SetNamespace(src.GetNamespace())
	}
	for _, f := range k.Fields {
		if v, ok := content.Fields[f]; ok {
			out.Object[f] = v
		} else {
			delete(out.Object, f)
		}
	}
	if k.Name == failoverv1alpha1.KindManagedCluster && tgt != nil {
		// A taint the target already has keeps the target's timeAdded (OCM's webhook denies changing it; a
		// new taint gets it from the webhook).
		if spec, ok := out.Object["spec"].(map[string]any); ok {
			if taints, ok := spec["taints"].([]any); ok {
				existing := filterTaints(nestedValue(tgt.Object, "spec", "taints"), false)
				for _, t := range taints {
					m, _ := t.(map[string]any)
					for _, e := range existing {
						em, _ := e.(map[string]any)
						if em["key"] == m["key"] && em["value"] == m["value"] && em["effect"] == m["effect"] {
							if added, ok := em["timeAdded"]; ok {
								m["timeAdded"] = added
							}
						}
					}
				}
			}
		}
		// The target's own hub-owned taints stay.
		if hubTaints := filterTaints(nestedValue(tgt.Object, "spec", "taints"), true); len(hubTaints) > 0 {
			spec, _ := out.Object["spec"].(map[string]any)
			if spec == nil {
				spec = map[string]any{}
				out.Object["spec"] = spec
			}
			existing, _ := spec["taints"].([]any)
			spec["taints"] = append(existing, hubTaints...)
		}
	}

	// A copy on a hub that is not its cluster's source holds no deletes: an original taken over drops the
	// replicator's finalizer (the source's objects get it: HoldPatch, MarkPatch, HoldCopyPatch).
	if finalizers := out.GetFinalizers(); slices.Contains(finalizers, FinalizerDeleteCopies) {
		out.SetFinalizers(withoutDeleteCopies(finalizers))
	}
	labels := keepReserved(out.GetLabels(), ReservedLabelPrefixes)
	maps.Copy(labels, content.Labels)
	labels[LabelReplicatedFrom] = source
	out.SetLabels(labels)

	annotations := keepReserved(out.GetAnnotations(), ReservedAnnotationPrefixes)
	// An original taken over as a copy is deleted like every copy: it needs no mark any more.
	delete(annotations, AnnotationHasCopies)
	maps.Copy(annotations, content.Annotations)
	annotations[AnnotationContentHash] = hash
	annotations[AnnotationSourceResourceVersion] = src.GetResourceVersion()
	delete(annotations, AnnotationSourceUID)
	if uid := src.GetUID(); uid != "" {
		annotations[AnnotationSourceUID] = string(uid)
	}
	delete(annotations, AnnotationSourceGeneration)
	delete(annotations, AnnotationSourceGenerationOffset)
	delete(annotations, AnnotationSourceIncarnation)
	if src.GetGeneration() > 0 {
		annotations[AnnotationSourceGeneration] = strconv.FormatInt(Lineage(src), 10)
		if offset := generationOffset(src); offset > 0 {
			annotations[AnnotationSourceGenerationOffset] = strconv.FormatInt(offset, 10)
		}
	}
	if k.Name == failoverv1alpha1.KindManagedCluster {
		delete(annotations, AnnotationClusterHub)
		delete(annotations, AnnotationClusterHubSince)
		// Only the source's ManagedCluster says which hubs are in step, and where the cluster came from.
		delete(annotations, AnnotationHubsInStep)
		delete(annotations, AnnotationHubsBehind)
		delete(annotations, AnnotationHubsReported)
		delete(annotations, AnnotationMovedFrom)
	}
	maps.Copy(annotations, extraAnnotations)
	out.SetAnnotations(annotations)
	return out
}

// Action is what the replicator does to a target hub's object.
type Action string

const (
	// ActionNone leaves the target's object as it is.
	ActionNone Action = "None"
	// ActionCreate creates Decision.Object on the target.
	ActionCreate Action = "Create"
	// ActionUpdate replaces the target's object by Decision.Object (an update with the target's
	// resourceVersion).
	ActionUpdate Action = "Update"
	// ActionDelete deletes the target's object (a copy whose source object is gone).
	ActionDelete Action = "Delete"
)

// Conflict is why the target's object is not what the replicator expected.
type Conflict string

const (
	// ConflictNone: no conflict.
	ConflictNone Conflict = ""
	// ConflictForeignObject: the target holds an object with the source object's name that the replicator
	// did not make. It is left alone.
	ConflictForeignObject Conflict = "ForeignObject"
	// ConflictCopyModified: a copy the replicator made from the current source was changed on the target
	// since the replicator wrote it. The source wins: the copy is overwritten.
	ConflictCopyModified Conflict = "CopyModified"
	// ConflictSourceMissing: the source hub holds no object of the copy's name, and no delete of it was
	// observed (Deleted): a hub restored from a backup or rebuilt, a lost namespace, or a delete made while the
	// replicator could not see it. The copy is kept.
	ConflictSourceMissing Conflict = "SourceMissing"
	// ConflictSourceOlder: the source's object is an older state of the one the copy was made from (same
	// UID, lower Lineage than the copy's AnnotationSourceGeneration): a hub restored from a backup. The copy,
	// the newer state, is kept, and DecideRestore writes the newest copy's state back onto the source.
	ConflictSourceOlder Conflict = "SourceOlder"
)

// Deleted is what the replicator saw of an object's delete on the source hub: the object's metadata.uid and,
// when it was itself a copy, its AnnotationSourceUID. Only a delete event of a live watch counts
// (hubconn.Hub.Deleted), or the tombstone the replicator recorded of one (AnnotationDeletesSeen): an object
// missing from a list (a hub restored, rebuilt, or listed again after it was unreachable) is no delete.
type Deleted struct {
	UID, SourceUID string
}

// DeletedOf returns the record of obj's delete: its metadata.uid and its AnnotationSourceUID ("" for an original).
func DeletedOf(obj *unstructured.Unstructured) Deleted {
	return Deleted{UID: string(obj.GetUID()), SourceUID: obj.GetAnnotations()[AnnotationSourceUID]}
}

// Explains reports whether d, a delete seen (nil: none), is the delete of the object that tgt, a copy or an
// original on another hub, stands for: tgt was made from the deleted object (its AnnotationSourceUID is d.UID,
// or d.SourceUID when the deleted object was a copy of the same original), or the deleted copy was made from
// tgt (d.SourceUID is tgt's UID: tgt is its original, or a copy that was the cluster's object on its hub when
// the deleted one was made from it). A copy that records no source UID is explained by any delete of its name.
func (d *Deleted) Explains(tgt *unstructured.Unstructured) bool {
	if d == nil || tgt == nil {
		return false
	}
	if d.SourceUID != "" && string(tgt.GetUID()) == d.SourceUID {
		return true
	}
	if !IsCopy(tgt) {
		return false
	}
	made, ok := tgt.GetAnnotations()[AnnotationSourceUID]
	return !ok || (made != "" && (made == d.UID || made == d.SourceUID))
}

// Decision is the outcome of Decide.
type Decision struct {
	// Action is what to do.
	Action Action
	// Object is the object to create or update (ActionCreate, ActionUpdate); nil otherwise.
	Object *unstructured.Unstructured
	// Conflict is set when the target's object was not as the replicator left it.
	Conflict Conflict
	// Adopted is true when the target's object is taken over: it is the original the source's copy was made
	// from (the cluster moved from the target to the source hub).
	Adopted bool
}

// Decide returns what to do with tgt, the target hub's object (nil when absent), given src, the source hub's
// object of the same kind, namespace and name (nil when absent). source and target are hub names. tgtHash is
// the hash of tgt's mirrored content (Content.Hash) when tgt is a copy held without its mirrored fields
// (WithoutContent); "" means tgt is whole and the hash is computed from it. The rules, in order:
//  0. A target object that its hub generated (GeneratedHere) is that hub's own and left alone, whatever labels
//     it took from its generator (OCM's work manager gives a ManifestWorkReplicaSet's works the set's labels,
//     so the works a standby makes from a copy of the set carry LabelReplicatedFrom).
//  1. A target object being deleted is left alone.
//  2. A source object being deleted (its deletionTimestamp is the observed delete): a copy (LabelReplicatedFrom
//     set) is deleted, and so is an original whose AnnotationHasCopies lists the source hub (the source held a
//     copy, and deletes it); anything else is left alone (a foreign object is not a conflict when there is
//     nothing to mirror onto it). A source object the replicator deletes again (AnnotationDeletedAgain: a
//     restored hub brought it back after a user's delete) deletes nothing elsewhere: the name may hold an object
//     made again since, and what remains elsewhere of the deleted one goes by the logs of deletes made.
//  3. No source object: a copy, or an original whose AnnotationHasCopies lists the source, is deleted only when
//     deleted, the delete the replicator saw on the source (nil: none), Explains it; otherwise it is kept
//     (ConflictSourceMissing). Absence is no delete: a hub restored, rebuilt, or that lost a namespace shows
//     missing objects, not deletes. Anything else is left alone.
//  4. No target object: create Desired.
//  5. A target object that is not a copy: if the source's object is a copy made from the target
//     (LabelReplicatedFrom = target), the target holds its original: update it to Desired (Adopted), with
//     ConflictCopyModified when the original was changed after that copy was made, and with a generation
//     offset that keeps its lineage above the one the source's copy records of it (withAdoptedLineage). Otherwise
//     it is foreign and left alone: with the same mirrored content as the source's (made on each hub
//     independently, like the default ManagedClusterSets) that is no conflict; else ConflictForeignObject.
//  6. A copy made from this very source object (LabelReplicatedFrom = source, AnnotationSourceUID = src's uid)
//     at a higher lineage than src's (AnnotationSourceGeneration against Lineage): src is an older state of it
//     (a restored hub). The copy is kept (ConflictSourceOlder) until the newest copy's state is written back
//     onto src (DecideRestore, RestoreOnto), which raises src's lineage above it. Neither clocks nor
//     resourceVersions are compared.
//  7. A copy: nothing to do when its mirrored content and copy marks already equal Desired's (no write that
//     changes nothing; a changed source resourceVersion alone is no reason to write). Otherwise update it; if
//     its content differs from the source's, it was copied from the same source and its content no longer
//     matches AnnotationContentHash, it was changed on the target since: ConflictCopyModified (the source
//     still wins). A copy whose content already equals the source's gets its marks refreshed without a
//     conflict (after a switch back, the old source's edits were mirrored here already).
func Decide(k Kind, src, tgt *unstructured.Unstructured, tgtHash, source, target string, deleted *Deleted, extraAnnotations map[string]string) Decision {
	if tgt != nil && (GeneratedHere(k, tgt) || tgt.GetDeletionTimestamp() != nil) {
		return Decision{Action: ActionNone}
	}
	if src != nil && src.GetDeletionTimestamp() != nil {
		if _, again := src.GetAnnotations()[AnnotationDeletedAgain]; again {
			return Decision{Action: ActionNone}
		}
		if tgt != nil && (IsCopy(tgt) || HasCopyOn(tgt, source)) {
			return Decision{Action: ActionDelete}
		}
		return Decision{Action: ActionNone}
	}
	if src == nil {
		switch {
		case tgt == nil || (!IsCopy(tgt) && !HasCopyOn(tgt, source)):
			return Decision{Action: ActionNone}
		case deleted.Explains(tgt):
			return Decision{Action: ActionDelete}
		}
		return Decision{Action: ActionNone, Conflict: ConflictSourceMissing}
	}
	if tgt == nil {
		return Decision{Action: ActionCreate, Object: Desired(k, src, nil, source, extraAnnotations)}
	}
	desired := Desired(k, src, tgt, source, extraAnnotations)
	desiredHash := ContentOf(k, desired).Hash()
	if !IsCopy(tgt) {
		tgtContent := ContentOf(k, tgt)
		if src.GetLabels()[LabelReplicatedFrom] == target {
			// The original changed on the target after the source's copy was made (edits on both sides
			// of a split brain): the source wins, and it is a conflict.
			conflict := ConflictNone
			if hash := tgtContent.Hash(); hash != src.GetAnnotations()[AnnotationContentHash] && hash != desiredHash {
				conflict = ConflictCopyModified
			}
			return Decision{Action: ActionUpdate, Object: withAdoptedLineage(desired, src, tgt), Adopted: true, Conflict: conflict}
		}
		if tgtContent.Equal(ContentOf(k, src)) {
			// Made on the target independently but identical (e.g. the default ManagedClusterSets every
			// hub creates): nothing to mirror, nothing to report.
			return Decision{Action: ActionNone}
		}
		return Decision{Action: ActionNone, Conflict: ConflictForeignObject}
	}
	if tgtHash == "" {
		tgtHash = ContentOf(k, tgt).Hash()
	}
	contentSame := tgtHash == desiredHash
	if olderSource(src, tgt, source) {
		return Decision{Action: ActionNone, Conflict: ConflictSourceOlder}
	}
	if contentSame && sameMarks(tgt, desired) && sameHubOwnedTaints(k, tgt, desired) {
		return Decision{Action: ActionNone}
	}
	conflict := ConflictNone
	if !contentSame && tgt.GetLabels()[LabelReplicatedFrom] == source && tgt.GetAnnotations()[AnnotationContentHash] != tgtHash {
		conflict = ConflictCopyModified
	}
	return Decision{Action: ActionUpdate, Object: desired, Conflict: conflict}
}

// withAdoptedLineage returns desired, the update of tgt, an original that the source's copy src was made from,
// with an AnnotationGenerationOffset that puts tgt's lineage after the update at or above the lineage src records
// of it (above once the update raised its generation):
// the original may be at a lower generation than the copy was made from (its hub was restored while the cluster
// was away), and when the cluster comes back to it, src must not be taken for a newer state of it (olderSource).
// A copy made from another object (its AnnotationSourceUID is not tgt's), or recording no lineage, or a lineage
// tgt's already passes, leaves desired as it is.
func withAdoptedLineage(desired, src, tgt *unstructured.Unstructured) *unstructured.Unstructured {
	recorded, _, ok := recordedLineage(src)
	if !ok || tgt.GetUID() == "" || src.GetAnnotations()[AnnotationSourceUID] != string(tgt.GetUID()) {
		return desired
	}
	// With this offset tgt's lineage is at least the recorded one, and above it once the update raised the
	// generation; an offset tgt already has that does as much stays.
	need := recorded - tgt.GetGeneration()
	if need <= 0 || need <= generationOffset(tgt) {
		return desired
	}
	annotations := desired.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationGenerationOffset] = strconv.FormatInt(need, 10)
	desired.SetAnnotations(annotations)
	return desired
}

// olderSource reports whether src, the source hub's object, is an older state of the object the copy tgt was
// made from: same source hub and UID, and a lower Lineage than the one the copy records (recordedLineage). A
// source whose AnnotationGenerationOffset is below the one the copy recorded lost it: not compared.
func olderSource(src, tgt *unstructured.Unstructured, source string) bool {
	if tgt.GetLabels()[LabelReplicatedFrom] != source || src.GetUID() == "" || tgt.GetAnnotations()[AnnotationSourceUID] != string(src.GetUID()) {
		return false
	}
	recorded, recordedOffset, ok := recordedLineage(tgt)
	return ok && recordedOffset <= generationOffset(src) && Lineage(src) < recorded
}

// Lineage returns the lineage of obj, a source object: its metadata.generation plus its
// AnnotationGenerationOffset (0 when absent or not a number). It only grows while obj lives on its hub, also
// through a write-back after a restore (RestoreOnto); a restore of the hub brings an older one back.
func Lineage(obj *unstructured.Unstructured) int64 {
	return obj.GetGeneration() + generationOffset(obj)
}

func generationOffset(obj *unstructured.Unstructured) int64 {
	offset, err := strconv.ParseInt(obj.GetAnnotations()[AnnotationGenerationOffset], 10, 64)
	if err != nil || offset < 0 {
		return 0
	}
	return offset
}

// recordedLineage returns the source lineage and generation offset the copy cp records
// (AnnotationSourceGeneration, AnnotationSourceGenerationOffset); ok is false when it records no lineage.
func recordedLineage(cp *unstructured.Unstructured) (lineage, offset int64, ok bool) {
	annotations := cp.GetAnnotations()
	lineage, err := strconv.ParseInt(annotations[AnnotationSourceGeneration], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	offset, err = strconv.ParseInt(annotations[AnnotationSourceGenerationOffset], 10, 64)
	if err != nil || offset < 0 {
		offset = 0
	}
	return lineage, offset, true
}

// Incarnation is a hub's incarnation: the UID of its incarnation marker (a ConfigMap the replicator keeps on
// the hub) and the counter the marker holds. The zero value is unknown.
type Incarnation struct {
	UID string
	N   int64
}

// Known reports whether i names a marker and a counter.
func (i Incarnation) Known() bool { return i.UID != "" && i.N > 0 }

// Before reports whether i is an earlier incarnation of the same marker than j: both known, same UID, a lower
// counter. Incarnations of different markers are not ordered.
func (i Incarnation) Before(j Incarnation) bool {
	return i.Known() && j.Known() && i.UID == j.UID && i.N < j.N
}

// String returns "<uid>/<counter>", the value of AnnotationSourceIncarnation.
func (i Incarnation) String() string { return i.UID + "/" + strconv.FormatInt(i.N, 10) }

// SourceIncarnation returns the incarnation obj, a copy, records (AnnotationSourceIncarnation); the zero value
// when it records none or an unreadable one.
func SourceIncarnation(obj *unstructured.Unstructured) Incarnation {
	uid, n, ok := strings.Cut(obj.GetAnnotations()[AnnotationSourceIncarnation], "/")
	if !ok {
		return Incarnation{}
	}
	counter, err := strconv.ParseInt(n, 10, 64)
	if err != nil || uid == "" || counter <= 0 {
		return Incarnation{}
	}
	return Incarnation{UID: uid, N: counter}
}

// WithSourceIncarnation sets AnnotationSourceIncarnation on obj (a copy about to be written) to incarnation, or
// removes it when incarnation is not known, and returns obj.
func WithSourceIncarnation(obj *unstructured.Unstructured, incarnation Incarnation) *unstructured.Unstructured {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(annotations, AnnotationSourceIncarnation)
	if incarnation.Known() {
		annotations[AnnotationSourceIncarnation] = incarnation.String()
	}
	obj.SetAnnotations(annotations)
	return obj
}

// WithSourceWrittenAt sets AnnotationSourceWrittenAt on obj (a copy about to be written) to t, and returns obj.
func WithSourceWrittenAt(obj *unstructured.Unstructured, t time.Time) *unstructured.Unstructured {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationSourceWrittenAt] = t.UTC().Format(time.RFC3339)
	obj.SetAnnotations(annotations)
	return obj
}

// SourceCleanup returns a copy of the source hub's ManagedCluster obj without AnnotationClusterHub,
// AnnotationClusterHubSince and AnnotationClusterID (which only copies on other hubs carry: the source's own agent
// reports the spoke's identity), AnnotationClusterHub's value kept as AnnotationMovedFrom (the hub the cluster
// came from) unless it names source itself; or nil when obj has none of them and needs no write.
func SourceCleanup(obj *unstructured.Unstructured, source string) *unstructured.Unstructured {
	annotations := obj.GetAnnotations()
	prev, hub := annotations[AnnotationClusterHub]
	_, since := annotations[AnnotationClusterHubSince]
	_, id := annotations[AnnotationClusterID]
	if !hub && !since && !id {
		return nil
	}
	out := obj.DeepCopy()
	cleaned := out.GetAnnotations()
	delete(cleaned, AnnotationClusterHub)
	delete(cleaned, AnnotationClusterHubSince)
	delete(cleaned, AnnotationClusterID)
	if prev != "" && prev != source {
		cleaned[AnnotationMovedFrom] = prev
	}
	out.SetAnnotations(cleaned)
	return out
}

// UnfencePatch returns the JSON merge patch (RFC 7386) that removes AnnotationClusterHub and
// AnnotationClusterHubSince from mc, a ManagedCluster copy, with its metadata.uid as a precondition; nil when mc
// carries neither. Without them the fence no longer refuses changes of that copy's spec.
func UnfencePatch(mc *unstructured.Unstructured) []byte {
	annotations := mc.GetAnnotations()
	_, hub := annotations[AnnotationClusterHub]
	_, since := annotations[AnnotationClusterHubSince]
	if !hub && !since {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         string(mc.GetUID()),
		"annotations": map[string]any{AnnotationClusterHub: nil, AnnotationClusterHubSince: nil},
	}})
	return patch
}

// MovedFrom returns the hub that the cluster of mc (its ManagedCluster on the source hub) came from, as far as
// its write-back is not finished, in order: the hub the agent's epoch (failoverv1alpha1.AnnotationEpoch) names as
// the one it left, when configured(hub) and AnnotationWrittenBackEpoch does not record that epoch's write-back as
// finished (the agent knows where it was even when the replicator did not see the move: it was stopped, or the
// hub unreachable); AnnotationMovedFrom; before SourceCleanup ran, the AnnotationClusterHub it still carries from
// when it was a copy. It returns "" when none, or when the one found names source. configured reports whether a
// hub name is one of the ReplicationConfig's: an agent's name the replicator does not know is skipped, so that it
// hides no record of the replicator's own.
func MovedFrom(mc *unstructured.Unstructured, source string, configured func(hub string) bool) string {
	if mc == nil {
		return ""
	}
	annotations := mc.GetAnnotations()
	prev := ""
	if epoch, ok := unfinishedEpoch(mc); ok && epoch.From != source && configured(epoch.From) {
		prev = epoch.From
	}
	if prev == "" {
		prev = annotations[AnnotationMovedFrom]
	}
	if prev == "" {
		prev = annotations[AnnotationClusterHub]
	}
	if prev == source {
		return ""
	}
	return prev
}

// unfinishedEpoch returns the agent's epoch recorded on mc when it names a hub the agent left and
// AnnotationWrittenBackEpoch does not record that epoch's write-back as finished.
func unfinishedEpoch(mc *unstructured.Unstructured) (failoverv1alpha1.AgentEpoch, bool) {
	annotations := mc.GetAnnotations()
	epoch, err := failoverv1alpha1.ParseAgentEpoch(annotations[failoverv1alpha1.AnnotationEpoch])
	if err != nil || epoch.From == "" || annotations[AnnotationWrittenBackEpoch] == strconv.FormatInt(epoch.Number, 10) {
		return failoverv1alpha1.AgentEpoch{}, false
	}
	return epoch, true
}

// MovedFromDonePatch returns the JSON merge patch (RFC 7386) that ends the record of mc that names hub (the one
// MovedFrom returned): it records the agent's epoch as AnnotationWrittenBackEpoch when that epoch names hub, else
// removes AnnotationMovedFrom when it names hub (a record that names another hub stays, for a later write-back);
// nil when no record names hub.
func MovedFromDonePatch(mc *unstructured.Unstructured, hub string) []byte {
	changes := map[string]any{}
	if epoch, ok := unfinishedEpoch(mc); ok && epoch.From == hub {
		changes[AnnotationWrittenBackEpoch] = strconv.FormatInt(epoch.Number, 10)
	} else if moved, ok := mc.GetAnnotations()[AnnotationMovedFrom]; ok && (moved == hub || moved == "") {
		changes[AnnotationMovedFrom] = nil
	}
	if len(changes) == 0 {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": changes}})
	return patch
}

// WithPreconditions returns patch, a JSON merge patch (RFC 7386) of an object, with obj's metadata.uid and
// metadata.resourceVersion added: the apiserver applies it only to that object as read (a 409 Conflict
// otherwise). It returns an error, naming the patch, when patch is not a JSON object.
func WithPreconditions(patch []byte, obj *unstructured.Unstructured) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil || m == nil {
		return nil, fmt.Errorf("adding preconditions to patch %s: not a JSON object (%v)", patch, err)
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["uid"], meta["resourceVersion"] = string(obj.GetUID()), obj.GetResourceVersion()
	m["metadata"] = meta
	return json.Marshal(m)
}

// HubStep is how one hub other than a cluster's source stands with the cluster's state.
type HubStep struct {
	// Hub is the hub's name (ReplicationConfig spec.hubs[].name).
	Hub string
	// Ready is true when the replicator has the hub listed and its caches synced.
	Ready bool
	// Pending is true when some object of the cluster has not been compared and written there since the
	// hub became ready.
	Pending bool
}

// StepPatch returns the JSON merge patch (RFC 7386) that sets AnnotationHubsInStep and AnnotationHubsBehind on
// src, the cluster's ManagedCluster on its source hub, from steps (the other hubs, in spec order): a hub is in
// step when Ready and not Pending, else behind. The patch also sets AnnotationHubsReported to report (a
// failoverv1alpha1.HubsReport value). It returns nil when src already carries both lists and confirm is false: an
// unchanged report is written again only to confirm it. It never removes a hub's name from both lists at once:
// every hub in steps is named in one of them.
func StepPatch(src *unstructured.Unstructured, steps []HubStep, report string, confirm bool) []byte {
	var inStep, behind []string
	for _, h := range steps {
		if h.Ready && !h.Pending {
			inStep = append(inStep, h.Hub)
		} else {
			behind = append(behind, h.Hub)
		}
	}
	want := map[string]string{AnnotationHubsInStep: strings.Join(inStep, ","), AnnotationHubsBehind: strings.Join(behind, ",")}
	have := src.GetAnnotations()
	same := true
	for key, v := range want {
		if got, ok := have[key]; !ok || got != v {
			same = false
		}
	}
	if same && !confirm {
		return nil
	}
	want[AnnotationHubsReported] = report
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": want}})
	return patch
}

// splitHubs returns the hub names of a comma-separated list (empty: none).
func splitHubs(value string) []string {
	var out []string
	for _, name := range strings.Split(value, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// Excluded reports whether obj (of kind k) is never mirrored: an object a hub's controller generates from
// another object (k.Generated), which each hub makes and rewrites itself from its own copy of that generator.
func Excluded(k Kind, obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	labels := obj.GetLabels()
	for _, l := range k.Generated.Labels {
		if _, ok := labels[l]; ok {
			return true
		}
	}
	if len(k.Generated.ControllerKinds) > 0 {
		if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err == nil && slices.Contains(k.Generated.ControllerKinds, gv.WithKind(ref.Kind).GroupKind()) {
				return true
			}
		}
	}
	return false
}

// GeneratedHere reports whether obj, of kind k on a hub, is that hub's own generated object: Excluded, and,
// for a kind whose generated objects earlier versions of the replicator mirrored (Generated.CopiedBefore), not
// written by the replicator (no AnnotationContentHash: such a copy has one, and is treated as a copy). A
// generator may pass its own labels and annotations on (OCM's work manager gives a ManifestWorkReplicaSet's
// works the set's labels; governance's propagator gives a replicated Policy the root's labels and
// annotations), so the copy marks of a generated object say nothing.
func GeneratedHere(k Kind, obj *unstructured.Unstructured) bool {
	if !Excluded(k, obj) {
		return false
	}
	if !k.Generated.CopiedBefore {
		return true
	}
	_, written := obj.GetAnnotations()[AnnotationContentHash]
	return !written
}

// IsCopyOn reports whether obj, of kind k on a hub, is a copy the replicator keeps there: IsCopy, and not that
// hub's own generated object (GeneratedHere) carrying its generator's copy label.
func IsCopyOn(k Kind, obj *unstructured.Unstructured) bool {
	return obj != nil && IsCopy(obj) && !GeneratedHere(k, obj)
}

// CopiesOn returns the hubs that obj's AnnotationHasCopies lists, nil for a copy or an unmarked original.
func CopiesOn(obj *unstructured.Unstructured) []string {
	if obj == nil || IsCopy(obj) {
		return nil
	}
	return splitHubs(obj.GetAnnotations()[AnnotationHasCopies])
}

// HasCopyOn reports whether obj is an original whose AnnotationHasCopies lists hub.
func HasCopyOn(obj *unstructured.Unstructured, hub string) bool {
	return slices.Contains(CopiesOn(obj), hub)
}

// CopiesPatch returns the JSON merge patch (RFC 7386) that adds hubs to the AnnotationHasCopies of src, an
// original on its source hub, with src's metadata.uid as a precondition (the apiserver refuses it with a
// conflict when the object of that name was made again since it was read). It returns nil when src is nil,
// a copy, or lists every hub of hubs already.
func CopiesPatch(src *unstructured.Unstructured, hubs []string) []byte {
	meta := copiesMeta(src, hubs)
	if meta == nil {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": meta})
	return patch
}

// copiesMeta returns the metadata of CopiesPatch (uid and annotations), or nil when it writes nothing.
func copiesMeta(src *unstructured.Unstructured, hubs []string) map[string]any {
	if src == nil || IsCopy(src) || len(hubs) == 0 {
		return nil
	}
	have := CopiesOn(src)
	all := slices.Clone(have)
	for _, h := range hubs {
		if !slices.Contains(all, h) {
			all = append(all, h)
		}
	}
	if len(all) == len(have) {
		return nil
	}
	slices.Sort(all)
	return map[string]any{
		"uid":         string(src.GetUID()),
		"annotations": map[string]string{AnnotationHasCopies: strings.Join(all, ",")},
	}
}

// FinalizerDeleteCopies is the replicator's finalizer on a cluster's original of a kind that HoldsDeletes
// (ManifestWork, ManagedClusterAddOn), written before its first copy (HoldPatch) or with its has-copies mark
// (MarkPatch), and on a copy that is its cluster's source's object after a failover (MarkPatch): a delete of it
// waits until the delete has reached the copies on every hub, which must all be ready (ReleasePatch), so that an
// object deleted on a hub the replicator cannot reach still shows the delete when it can (for a ManifestWork,
// also after OCM's work agent finished it there).
const FinalizerDeleteCopies = "failover.open-cluster-management.io/delete-copies"

// MarkPatch returns the JSON merge patch (RFC 7386) that marks src, a cluster's object of kind k on its source
// hub, held on the hubs of holding: for an original, CopiesPatch's AnnotationHasCopies; for a kind that
// HoldsDeletes, FinalizerDeleteCopies added to its finalizers (with src's metadata.uid and resourceVersion as
// preconditions, since the list is written whole) when src is an original with a copy somewhere, or a copy (the
// source's object after a failover, whose original, on the hub the cluster left, its delete must reach even
// while that hub is down). A delete made on the hub the cluster moved to is then seen, also while the replicator
// is down, and reaches the original it was made from (Decide, rule 2); while the hub it must reach is down, the
// delete waits Terminating, as an original's does. It returns nil when src needs neither or is
// being deleted. HoldCopyPatch is the hold alone.
func MarkPatch(k Kind, src *unstructured.Unstructured, holding []string) []byte {
	if src == nil || src.GetDeletionTimestamp() != nil {
		return nil
	}
	meta := copiesMeta(src, holding)
	if meta == nil {
		meta = map[string]any{}
	}
	hasCopies := len(holding) > 0 || len(CopiesOn(src)) > 0 || IsCopy(src)
	finalizers := src.GetFinalizers()
	if HoldsDeletes(k) && hasCopies && !slices.Contains(finalizers, FinalizerDeleteCopies) {
		meta["uid"] = string(src.GetUID())
		meta["resourceVersion"] = src.GetResourceVersion()
		meta["finalizers"] = append(slices.Clone(finalizers), FinalizerDeleteCopies)
	}
	if len(meta) == 0 {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": meta})
	return patch
}

// HoldCopyPatch returns MarkPatch's hold of obj, a copy of kind k on the hub that is (or is about to be) its
// cluster's source: FinalizerDeleteCopies with obj's metadata.uid and resourceVersion as preconditions; nil when k
// does not HoldsDeletes, or obj is nil, no copy, never mirrored (Excluded: a hub's generated object), being
// deleted, or held already. The replicator writes it on every such copy before it lifts the fence of the
// cluster's namespace on that hub: no user can delete a copy there that the replicator would not see deleted,
// also if it is stopped or cut off from that hub just after.
func HoldCopyPatch(k Kind, obj *unstructured.Unstructured) []byte {
	if obj == nil || !IsCopy(obj) || Excluded(k, obj) {
		return nil
	}
	return MarkPatch(k, obj, nil)
}

// HoldPatch returns the JSON merge patch (RFC 7386) that adds FinalizerDeleteCopies to src, an original of kind k
// on its source hub about to get its first copies on the hubs of targets, with src's metadata.uid and
// resourceVersion as preconditions: its delete is then held, and seen, also while the replicator is down, before
// any copy exists that only such a delete may remove (Decide, rule 3). The same patch lists targets in
// AnnotationHasCopies (what MarkPatch writes once the copies exist), so that a new original costs its hub one
// write: a hub listed before its copy is written, and never written, is harmless, since an original is deleted
// for a listed hub only on a delete of the copy seen there, and the write-back makes a listed copy missing on a
// new source (DecideWriteBack). It returns nil when k does not HoldsDeletes, or src is nil, a copy, being
// deleted, or held already.
func HoldPatch(k Kind, src *unstructured.Unstructured, targets []string) []byte {
	if !HoldsDeletes(k) || src == nil || IsCopy(src) || src.GetDeletionTimestamp() != nil || slices.Contains(src.GetFinalizers(), FinalizerDeleteCopies) {
		return nil
	}
	meta := copiesMeta(src, targets)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["uid"] = string(src.GetUID())
	meta["resourceVersion"] = src.GetResourceVersion()
	meta["finalizers"] = append(slices.Clone(src.GetFinalizers()), FinalizerDeleteCopies)
	patch, _ := json.Marshal(map[string]any{"metadata": meta})
	return patch
}

// HoldsDeletes reports whether the originals of kind k get FinalizerDeleteCopies: namespaced kinds listed
// whole. A kind listed by label (backup Secrets and ConfigMaps) does not: an object whose label is removed
// leaves the replicator's view, and its delete would be held for ever.
func HoldsDeletes(k Kind) bool {
	return k.Namespaced && k.LabelSelector == ""
}

// HoldsDelete reports whether obj is an object being deleted that FinalizerDeleteCopies still holds: an original,
// or a copy that was its cluster's source's object when it was marked (MarkPatch).
func HoldsDelete(obj *unstructured.Unstructured) bool {
	return obj != nil && obj.GetDeletionTimestamp() != nil && slices.Contains(obj.GetFinalizers(), FinalizerDeleteCopies)
}

// ReleasePatch returns the JSON merge patch (RFC 7386) that removes FinalizerDeleteCopies from obj's
// finalizers, with its metadata.uid and resourceVersion as preconditions, or nil when obj does not carry it.
func ReleasePatch(obj *unstructured.Unstructured) []byte {
	finalizers := obj.GetFinalizers()
	if !slices.Contains(finalizers, FinalizerDeleteCopies) {
		return nil
	}
	return finalizersPatch(obj, withoutDeleteCopies(finalizers))
}

// copyAnnotations are the annotations the replicator writes on a copy to record what it was made from and for,
// and the records of a cluster's moves and deletes its ManagedCluster carries from its source.
var copyAnnotations = []string{AnnotationContentHash, AnnotationSourceResourceVersion, AnnotationClusterHub, AnnotationClusterHubSince,
	AnnotationClusterID, AnnotationSourceUID, AnnotationSourceGeneration, AnnotationSourceGenerationOffset, AnnotationSourceIncarnation,
	AnnotationSourceWrittenAt, AnnotationMovedFrom, AnnotationWrittenBackEpoch, AnnotationDeletesSeen}

// ReleaseCopyPatch returns the JSON merge patch (RFC 7386) that makes obj, a copy, an object of its own hub: it
// removes LabelReplicatedFrom, the annotations that record what the copy was made from and for (the content
// hash, the source's resourceVersion, UID, lineage, incarnation and write time, the cluster's hub and identity)
// and, for a ManagedCluster, the other spoke's records of moves and deletes (AnnotationMovedFrom,
// AnnotationWrittenBackEpoch, AnnotationDeletesSeen), and FinalizerDeleteCopies, with obj's metadata.uid and
// resourceVersion as preconditions. The rest of obj (its spec, its other labels, annotations and finalizers) is
// kept.
func ReleaseCopyPatch(obj *unstructured.Unstructured) []byte {
	annotations := map[string]any{}
	for _, key := range copyAnnotations {
		if _, ok := obj.GetAnnotations()[key]; ok {
			annotations[key] = nil
		}
	}
	metadata := map[string]any{
		"uid": string(obj.GetUID()), "resourceVersion": obj.GetResourceVersion(),
		"labels": map[string]any{LabelReplicatedFrom: nil},
	}
	if len(annotations) > 0 {
		metadata["annotations"] = annotations
	}
	if slices.Contains(obj.GetFinalizers(), FinalizerDeleteCopies) {
		var list any
		if rest := withoutDeleteCopies(obj.GetFinalizers()); len(rest) > 0 {
			list = rest
		}
		metadata["finalizers"] = list
	}
	patch, _ := json.Marshal(map[string]any{"metadata": metadata})
	return patch
}

// DeletedAgainPatch returns the JSON merge patch (RFC 7386) that marks obj, a source object the replicator is
// about to delete again, with AnnotationDeletedAgain (hub: the hub whose log of deletes made recorded its delete)
// and removes FinalizerDeleteCopies from it (its delete waits for no copy), with its metadata.uid and
// resourceVersion as preconditions.
func DeletedAgainPatch(obj *unstructured.Unstructured, hub string) []byte {
	var list any = withoutDeleteCopies(obj.GetFinalizers())
	if len(withoutDeleteCopies(obj.GetFinalizers())) == 0 {
		list = nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": string(obj.GetUID()), "resourceVersion": obj.GetResourceVersion(), "finalizers": list,
		"annotations": map[string]any{AnnotationDeletedAgain: hub},
	}})
	return patch
}

// finalizersPatch returns the JSON merge patch that sets obj's finalizers to finalizers (none when empty), with
// obj's metadata.uid and resourceVersion as preconditions.
func finalizersPatch(obj *unstructured.Unstructured, finalizers []string) []byte {
	var list any = finalizers
	if len(finalizers) == 0 {
		list = nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": string(obj.GetUID()), "resourceVersion": obj.GetResourceVersion(), "finalizers": list,
	}})
	return patch
}

// withoutDeleteCopies returns a new list of finalizers without FinalizerDeleteCopies.
func withoutDeleteCopies(finalizers []string) []string {
	return slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool { return f == FinalizerDeleteCopies })
}

// WithoutContent returns obj without the fields Kind k mirrors (k.Fields), and the hash of its mirrored content
// (Content.Hash of ContentOf(k, obj)): all that Decide and Desired need of a target's copy, which is how the
// replicator's caches hold copies. obj is not modified; the result shares obj's values outside k.Fields.
func WithoutContent(k Kind, obj *unstructured.Unstructured) (*unstructured.Unstructured, string) {
	hash := ContentOf(k, obj).Hash()
	out := &unstructured.Unstructured{Object: make(map[string]any, len(obj.Object))}
	for f, v := range obj.Object {
		if !slices.Contains(k.Fields, f) {
			out.Object[f] = v
		}
	}
	return out, hash
}

// IsCopy reports whether obj carries LabelReplicatedFrom, the mark of the replicator's copies.
func IsCopy(obj *unstructured.Unstructured) bool {
	_, ok := obj.GetLabels()[LabelReplicatedFrom]
	return ok
}

// UnchangedCopy reports whether obj, a copy of kind k held whole, still has the mirrored content the replicator
// wrote (its content hashes to AnnotationContentHash): nobody changed it on its hub since.
func UnchangedCopy(k Kind, obj *unstructured.Unstructured) bool {
	return IsCopy(obj) && ContentOf(k, obj).Hash() == obj.GetAnnotations()[AnnotationContentHash]
}

// markAnnotations are the annotations whose change on a copy is worth a write. AnnotationSourceUID is one: a
// source object made again under its name with the same content (a `kubectl replace --force`, or an object
// made again on a restored hub, RecreateFrom) is another object, and only its UID on the copy lets its delete
// explain the copy (Deleted.Explains). AnnotationSourceGenerationOffset is another: it changes only when a
// write-back raised the source's lineage (RestoreOnto), and a copy that kept recording the lower offset would
// take a source that later lost its offset (a `kubectl replace`) for an older state.
var markAnnotations = []string{AnnotationContentHash, AnnotationClusterHub, AnnotationClusterHubSince, AnnotationHubsInStep, AnnotationHubsBehind,
	AnnotationHubsReported, AnnotationClusterID, AnnotationSourceUID, AnnotationSourceGenerationOffset}

// sameMarks reports whether a and b carry the same copy marks (AnnotationSourceResourceVersion excluded).
func sameMarks(a, b *unstructured.Unstructured) bool {
	if a.GetLabels()[LabelReplicatedFrom] != b.GetLabels()[LabelReplicatedFrom] {
		return false
	}
	aa, ba := a.GetAnnotations(), b.GetAnnotations()
	for _, key := range markAnnotations {
		av, aok := aa[key]
		bv, bok := ba[key]
		if aok != bok || av != bv {
			return false
		}
	}
	return true
}

// sameHubOwnedTaints reports whether a and b (ManagedClusters) carry the same hub-owned taints; other kinds
// always compare equal.
func sameHubOwnedTaints(k Kind, a, b *unstructured.Unstructured) bool {
	if k.Name != failoverv1alpha1.KindManagedCluster {
		return true
	}
	return reflect.DeepEqual(filterTaints(nestedValue(a.Object, "spec", "taints"), true),
		filterTaints(nestedValue(b.Object, "spec", "taints"), true))
}

// filterTaints returns the taints of the list v (a spec.taints value) whose key is hub-owned (hubOwned true)
// or not (hubOwned false), as deep copies.
func filterTaints(v any, hubOwned bool) []any {
	list, _ := v.([]any)
	var out []any
	for _, t := range list {
		m, _ := t.(map[string]any)
		key, _ := m["key"].(string)
		isHub := false
		for _, h := range HubOwnedTaints {
			if key == h {
				isHub = true
			}
		}
		if isHub == hubOwned {
			out = append(out, runtime.DeepCopyJSONValue(t))
		}
	}
	return out
}

// keepReserved returns a new map with the entries of m whose key has one of prefixes.
func keepReserved(m map[string]string, prefixes []string) map[string]string {
	out := map[string]string{}
	for key, v := range m {
		if hasAnyPrefix(key, prefixes) {
			out[key] = v
		}
	}
	return out
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// nestedValue returns the value at path in obj, or nil.
func nestedValue(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}
