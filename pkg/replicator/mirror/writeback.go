package mirror

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// DecideWriteBack returns what to write on the source hub for a write that the hub the cluster moved from made
// and never replicated: the last writes on that hub while the replicator could not reach it (it was down, or
// cut off from that hub), before the replicator saw the cluster move and fenced it. old is the object of the
// same kind, namespace and name on oldHub, the hub the source's ManagedCluster names as the one the cluster
// moved from (MovedFrom, while that record stands), or a hub restored from a backup taken while it was the
// cluster's source, which the caller asks for until it reconciled that hub; src is the
// source's (nil when absent). source and oldHub are hub names; oldWrittenAt is old's last write by a user
// (LastWrite of old as the hub served it: the replicator's caches drop managedFields); deleted is the delete of
// the object the replicator saw on the source (nil: none, see Deleted); restoredAfter is nil for a hub the
// cluster moved from, and for a hub restored from a backup the time (that hub's clock) after which what it wrote
// is its users' since the restore (the zero time: nothing is).
//
// The Decision's action applies to the source's object: ActionCreate and ActionUpdate write Decision.Object
// there (a copy marked as made from oldHub, holding deletes when k HoldsDeletes, which Decide then has oldHub
// take over as usual), ActionDelete
// deletes src. Only a cluster's namespaced objects that a user made are written back: never its ManagedCluster
// (each hub's controllers and the agent write it), an Excluded object, or a generated one (ownerReferences, or
// ManifestWorkReplicaSetLabel: a controller made it, and acts on the old hub when the cluster leaves it; the
// source's controller makes its own). Rules 2 and 4 need evidence on oldHub that an etcd restore of oldHub cannot
// produce; rule 3 does not (a restore brings back objects deleted since where nothing records it), so for a
// restored hub it needs old written after restoredAfter. The rules, in order:
//  1. old is absent, a copy (LabelReplicatedFrom set) without FinalizerDeleteCopies, or not a user's: nothing.
//     A missing object is no evidence of a delete (a restore removes objects too). A copy with
//     FinalizerDeleteCopies was the cluster's object on oldHub while the cluster was there (it moved there
//     before, and the copy took the original's place: HoldCopyPatch) and counts as an original below.
//  2. old is being deleted, of a kind that HoldsDeletes (an original, or a copy marked while oldHub was the
//     cluster's source): when src is a copy made from old (LabelReplicatedFrom = oldHub,
//     AnnotationSourceUID = old's uid), unchanged on the source since the replicator wrote it (its content
//     still has AnnotationContentHash) and not being deleted, src is deleted; changed there since, nothing, with
//     ConflictCopyModified (no clock orders the two writes: the source's is kept). The delete was made on oldHub;
//     FinalizerDeleteCopies held it there (and, for a ManifestWork, OCM's work agent's finalizer when the agent
//     was gone from oldHub). Other kinds leave no trace of a delete: theirs are not written back.
//  3. src is absent (from a restored oldHub: old written after restoredAfter): create old on the source, unless
//     deleted Explains old (the source held a copy of it and its delete was seen there). The source never held
//     it, or lost it (a standby whose namespace was deleted, restored or rebuilt before the cluster moved
//     there, also one that had been the cluster's source before oldHub was).
//  4. src is a copy made from oldHub, not being deleted, unchanged on the source since the replicator wrote it,
//     and old's content differs from that copy's, or old is another object than the one the copy was made from
//     (AnnotationSourceUID: the name was made again on oldHub, as GitOps tools and kubectl replace --force do,
//     also with the same content): when old is the object the copy was made from at a higher Lineage than the
//     copy records, with the same generation offset (newerLineage: a write that raised its generation, such as
//     any spec edit, ordered without a clock; on a restored hub, only written after restoredAfter), or
//     oldWrittenAt (whole seconds) is after the copy's AnnotationSourceWrittenAt (the last user write the copy
//     has), update src to old's content and make it old's copy. A restore brings back only writes at or before
//     that time. Without the new source UID, a
//     logged delete of the object the copy was made from would delete it (the workload made again).
//  5. Anything else: nothing (the source's own changes win, through Decide).
func DecideWriteBack(k Kind, src, old *unstructured.Unstructured, source, oldHub string, oldWrittenAt time.Time, deleted *Deleted, restoredAfter *time.Time) Decision {
	none := Decision{Action: ActionNone}
	if old == nil || (IsCopy(old) && !HeldAsSource(old)) || k.Name == failoverv1alpha1.KindManagedCluster || Excluded(k, old) || generated(old) {
		return none
	}
	fromOldHub := src != nil && src.GetDeletionTimestamp() == nil && src.GetLabels()[LabelReplicatedFrom] == oldHub
	srcIsCopyOfOld := fromOldHub && UnchangedCopy(k, src)
	if old.GetDeletionTimestamp() != nil {
		uid := old.GetUID()
		madeFromOld := HoldsDeletes(k) && fromOldHub && uid != "" && src.GetAnnotations()[AnnotationSourceUID] == string(uid)
		switch {
		case madeFromOld && srcIsCopyOfOld:
			return Decision{Action: ActionDelete}
		case madeFromOld:
			return Decision{Action: ActionNone, Conflict: ConflictCopyModified}
		}
		return none
	}
	// Whether old was written since its hub was restored (always, for a hub the cluster moved from): only such a
	// write is a user's that a restore did not bring back.
	sinceRestore := restoredAfter == nil || (!restoredAfter.IsZero() && oldWrittenAt.After(*restoredAfter))
	if src == nil {
		if !deleted.Explains(old) && sinceRestore {
			return Decision{Action: ActionCreate, Object: heldCopy(k, WithSourceWrittenAt(Desired(k, old, nil, oldHub, nil), oldWrittenAt))}
		}
		return none
	}
	// The same object as the copy was made from, with the same content: nothing to write.
	sameObject := src.GetAnnotations()[AnnotationSourceUID] == string(old.GetUID())
	if !srcIsCopyOfOld || sameObject && ContentOf(k, old).Hash() == src.GetAnnotations()[AnnotationContentHash] {
		return none
	}
	copied, err := time.Parse(time.RFC3339, src.GetAnnotations()[AnnotationSourceWrittenAt])
	// On a restored hub a higher lineage proves a newer state only when written since the restore: a backup
	// taken before the state the copy records can hold a higher generation of the same object made before a
	// restore to an older backup.
	newer := sameObject && sinceRestore && newerLineage(old, src)
	if !newer && (err != nil || !oldWrittenAt.Truncate(time.Second).After(copied)) {
		return none
	}
	writtenAt := oldWrittenAt
	if err == nil && copied.After(writtenAt) {
		// managedFields can date old before the copy's last write (a lineage newer all the same): the copy keeps
		// the later time, so that no older write passes the check above later.
		writtenAt = copied
	}
	return Decision{Action: ActionUpdate, Object: heldCopy(k, WithSourceWrittenAt(Desired(k, old, src, oldHub, nil), writtenAt))}
}

// newerLineage reports whether old, the object the copy cp was made from (same UID), has a higher Lineage than
// the one cp records (recordedLineage) at the same AnnotationGenerationOffset: old's generation was raised after
// the state cp holds. The apiserver only raises a generation, so this orders the two without a clock. False when
// cp records no lineage, or the offsets differ: one lost (a `kubectl replace` of a manifest without it) or set
// since (a write-back after a restore, RestoreOnto, or a backup from before such a loss) leaves the
// generations of two states that neither orders.
func newerLineage(old, cp *unstructured.Unstructured) bool {
	recorded, recordedOffset, ok := recordedLineage(cp)
	return ok && recordedOffset == generationOffset(old) && Lineage(old) > recorded
}

// HeldAsSource reports whether obj, a copy, carries FinalizerDeleteCopies, which only a cluster's source's
// object gets (HoldCopyPatch, MarkPatch): it was the cluster's object on its hub while the cluster was there.
// It keeps it after the cluster left until the replicator next writes it as a copy (Desired drops it), which
// an unchanged copy may never need; on the hub the cluster moved from, it is the object the cluster had there.
func HeldAsSource(obj *unstructured.Unstructured) bool {
	return slices.Contains(obj.GetFinalizers(), FinalizerDeleteCopies)
}

// heldCopy returns obj, a copy written on its cluster's source, with FinalizerDeleteCopies when k HoldsDeletes
// (Desired drops it from a copy): the source's object holds deletes from its first write (HoldCopyPatch).
func heldCopy(k Kind, obj *unstructured.Unstructured) *unstructured.Unstructured {
	if HoldsDeletes(k) && !slices.Contains(obj.GetFinalizers(), FinalizerDeleteCopies) {
		obj.SetFinalizers(append(slices.Clone(obj.GetFinalizers()), FinalizerDeleteCopies))
	}
	return obj
}

// generated reports whether a controller made obj: it has ownerReferences, or is a ManifestWorkReplicaSet's
// ManifestWork.
func generated(obj *unstructured.Unstructured) bool {
	_, fromSet := obj.GetLabels()[ManifestWorkReplicaSetLabel]
	return fromSet || len(obj.GetOwnerReferences()) > 0
}

// LastWrite returns the latest time in obj's metadata.managedFields of a manager other than FieldManager,
// writing the object itself (status and other subresources, e.g. OCM's work agent reporting, are not edits),
// or its creationTimestamp when that is later or there is no such entry. The apiserver records whole seconds.
func LastWrite(obj *unstructured.Unstructured) time.Time {
	last := obj.GetCreationTimestamp().Time
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == FieldManager || mf.Subresource != "" || mf.Time == nil {
			continue
		}
		if mf.Time.After(last) {
			last = mf.Time.Time
		}
	}
	return last
}
