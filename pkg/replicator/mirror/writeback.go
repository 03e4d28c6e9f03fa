package mirror

import (
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	replv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// DecideWriteBack returns what to write on the source hub for a write that the cluster's previous source made
// and that never reached the source: the last writes on the old source before the cluster moved away while
// the replicator could not reach it (it was down, or cut off from that hub). old is the object of the same
// kind, namespace and name on oldHub (nil when absent), src the source's (nil when absent); source and oldHub
// are hub names; since is when the cluster moved to source (the replicator's observation, the time its fence
// marks carry); ownManager is the replicator's field manager, whose writes are not the user's.
//
// The Decision's action applies to the source's object: ActionCreate and ActionUpdate write Decision.Object
// there (a copy marked as made from oldHub, which Decide then has oldHub take over as usual), ActionDelete
// deletes src. Only a cluster's namespaced objects are written back, never its ManagedCluster (each hub's
// controllers and the agent write it) nor an Excluded object. The rules, in order:
//  1. old is a copy (LabelReplicatedFrom set), or absent: nothing. A missing object is no evidence of a
//     delete (it may be missing after a restore of oldHub's etcd).
//  2. old is being deleted: when its deletionTimestamp is before since and src is a copy made from oldHub
//     (LabelReplicatedFrom = oldHub) that is not being deleted, delete src. The delete was made on oldHub
//     while oldHub was the cluster's source; OCM's work agent, cut off from oldHub, could not finish it.
//  3. src is absent: when old does not list source in AnnotationHasCopies (source never held it) and old was
//     created before since, create it on the source.
//  4. src is a copy made from oldHub, unchanged on the source since the replicator wrote it (its content
//     still has AnnotationContentHash), and old's content differs from that copy's: when old's
//     metadata.resourceVersion is numerically above the copy's AnnotationSourceResourceVersion (the edit came
//     after the copy; an etcd restore only brings back versions at or below it) and old's last write by
//     anyone but ownManager (metadata.managedFields, subresources such as status left out) is before since,
//     update src to old's content.
//  5. Anything else: nothing (the source's own changes win, through Decide).
//
// since is compared with times oldHub's apiserver set (deletionTimestamp, creationTimestamp, managedFields):
// clocks skewed between hubs by more than the time between a write and the move shift the boundary.
func DecideWriteBack(k Kind, src, old *unstructured.Unstructured, source, oldHub string, since time.Time, ownManager string) Decision {
	none := Decision{Action: ActionNone}
	if old == nil || IsCopy(old) || k.Name == replv1alpha1.KindManagedCluster || Excluded(k, old) {
		return none
	}
	if ts := old.GetDeletionTimestamp(); ts != nil {
		if ts.Time.Before(since) && src != nil && src.GetDeletionTimestamp() == nil && src.GetLabels()[LabelReplicatedFrom] == oldHub {
			return Decision{Action: ActionDelete}
		}
		return none
	}
	if src == nil {
		if !HasCopyOn(old, source) && old.GetCreationTimestamp().Time.Before(since) {
			return Decision{Action: ActionCreate, Object: Desired(k, old, nil, oldHub, nil)}
		}
		return none
	}
	if src.GetDeletionTimestamp() != nil || src.GetLabels()[LabelReplicatedFrom] != oldHub {
		return none
	}
	copied := src.GetAnnotations()[AnnotationContentHash]
	if ContentOf(k, src).Hash() != copied || ContentOf(k, old).Hash() == copied {
		return none
	}
	oldRV, err1 := strconv.ParseUint(old.GetResourceVersion(), 10, 64)
	copiedRV, err2 := strconv.ParseUint(src.GetAnnotations()[AnnotationSourceResourceVersion], 10, 64)
	if err1 != nil || err2 != nil || oldRV <= copiedRV {
		return none
	}
	if !lastWrite(old, ownManager).Before(since) {
		return none
	}
	return Decision{Action: ActionUpdate, Object: Desired(k, old, src, oldHub, nil)}
}

// lastWrite returns the latest time in obj's metadata.managedFields of a manager other than except, writing the
// object itself (status and other subresources, e.g. OCM's work agent reporting, are not edits), or its
// creationTimestamp when there is none.
func lastWrite(obj *unstructured.Unstructured, except string) time.Time {
	last := obj.GetCreationTimestamp().Time
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == except || mf.Subresource != "" || mf.Time == nil {
			continue
		}
		if mf.Time.After(last) {
			last = mf.Time.Time
		}
	}
	return last
}
