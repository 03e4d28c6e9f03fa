package mirror

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DecideRestore returns what to write on the source hub when a copy made from it holds a newer state than the
// source does: the source hub was restored from a backup, or rebuilt, and is still the cluster's source. cp is
// a copy of the object on another hub (whole; the caller picks the copy of the highest AnnotationSourceGeneration),
// src the source's object of the same kind, namespace and name (nil when absent), source the source hub's name
// and deleted the delete of the object the replicator saw on the source (nil: none, see Deleted).
//
// Only an object whose delete the source always shows is restored: a cluster's namespaced object of a kind that
// HoldsDeletes, whose original FinalizerDeleteCopies holds before its first copy is written and releases only
// once every copy is gone. A copy whose original is missing was therefore not deleted through the apiserver:
// its hub lost it. Kinds whose deletes leave no trace (hub-wide objects, label-selected kinds, ManagedClusters)
// are never restored: their copies are only kept (Decide rule 3). The caller checks that the key belongs to a
// cluster. The rules, in order:
//  1. cp is not a copy made from source with AnnotationSourceUID, is being deleted, Excluded or generated, or k
//     does not HoldsDeletes: nothing.
//  2. src is absent: create on the source the original cp was made from (Restored), unless deleted Explains cp.
//  3. src is the very object cp was made from (same UID) at a lower metadata.generation than cp's
//     AnnotationSourceGeneration (an older state of it: the generation only grows), not being deleted, and its
//     content differs from cp's: update src to cp's content (Restored).
//  4. Anything else: nothing.
func DecideRestore(k Kind, src, cp *unstructured.Unstructured, source string, deleted *Deleted) Decision {
	none := Decision{Action: ActionNone}
	if cp == nil || !HoldsDeletes(k) || cp.GetDeletionTimestamp() != nil || cp.GetLabels()[LabelReplicatedFrom] != source ||
		cp.GetAnnotations()[AnnotationSourceUID] == "" || Excluded(k, cp) || generated(cp) {
		return none
	}
	if src == nil {
		if deleted.Explains(cp) {
			return none
		}
		return Decision{Action: ActionCreate, Object: Restored(k, cp, nil)}
	}
	if src.GetDeletionTimestamp() != nil || !olderSource(src, cp, source) || ContentOf(k, src).Equal(ContentOf(k, cp)) {
		return none
	}
	return Decision{Action: ActionUpdate, Object: Restored(k, cp, src)}
}

// Restored returns the original the copy cp stands for, to be written on its source hub: src (the source's
// object, nil when absent) with its mirrored content replaced by cp's and its own reserved labels and
// annotations kept; a new object of cp's kind, namespace and name without them when src is nil. It carries no
// copy mark. Neither cp nor src is modified.
func Restored(k Kind, cp, src *unstructured.Unstructured) *unstructured.Unstructured {
	content := ContentOf(k, cp)
	var out *unstructured.Unstructured
	if src != nil {
		out = src.DeepCopy()
	} else {
		out = &unstructured.Unstructured{Object: map[string]any{}}
		out.SetAPIVersion(cp.GetAPIVersion())
		out.SetKind(cp.GetKind())
		out.SetName(cp.GetName())
		out.SetNamespace(cp.GetNamespace())
	}
	for _, f := range k.Fields {
		if v, ok := content.Fields[f]; ok {
			out.Object[f] = v
		} else {
			delete(out.Object, f)
		}
	}
	labels := keepReserved(out.GetLabels(), ReservedLabelPrefixes)
	delete(labels, LabelReplicatedFrom)
	for key, v := range content.Labels {
		labels[key] = v
	}
	out.SetLabels(labels)
	annotations := keepReserved(out.GetAnnotations(), ReservedAnnotationPrefixes)
	for key, v := range content.Annotations {
		annotations[key] = v
	}
	out.SetAnnotations(annotations)
	return out
}

// sourceGeneration returns the metadata.generation of the source object cp was made from
// (AnnotationSourceGeneration), 0 when it records none.
func sourceGeneration(cp *unstructured.Unstructured) int64 {
	g, _ := strconv.ParseInt(cp.GetAnnotations()[AnnotationSourceGeneration], 10, 64)
	return g
}

// NewerCopy reports whether a, a copy, records a higher source generation than b (nil: none).
func NewerCopy(a, b *unstructured.Unstructured) bool {
	return b == nil || sourceGeneration(a) > sourceGeneration(b)
}
