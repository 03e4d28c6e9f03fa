package mirror

import (
	"reflect"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DecideRestore returns what to write on the source hub when the newest copy made from one of its objects holds a
// newer state of that very object than the source does: the source hub was restored from a backup and is still
// the cluster's source. cp is that copy (whole; the caller picks, among the copies made from the source, the one
// recording the highest AnnotationSourceGeneration), src the source's object of the same kind, namespace and
// name, and source the source hub's name.
//
// Only an object the source still holds, under the UID the copy was made from, is written back: a UID only the
// apiserver assigns and a generation that only grows prove that src is an older state of the object the copy
// was made from, with no clock and no guess about why. An object the source does not hold at all is never made
// again from a copy: a copy outlives its original also when the original's delete went by while the copy's
// hub was out of reach or out of the configuration, or its finalizer was removed by hand; such copies are only
// kept (Decide rule 3). The rules, in order:
//  1. cp is not a copy made from source with AnnotationSourceUID, is being deleted, Excluded or generated, k does
//     not HoldsDeletes, or src is nil or being deleted: nothing.
//  2. src is the object cp was made from (same UID) at a lower lineage generation (LineageGeneration) than cp's
//     AnnotationSourceGeneration, and its content differs from cp's: update src to cp's content, with
//     AnnotationGenerationOffset set so that src's lineage generation after the write is the one cp recorded
//     (Restored): copies made from src at lower generations are then older than src, and src's next edits
//     newer than every copy.
//  3. Anything else: nothing.
func DecideRestore(k Kind, src, cp *unstructured.Unstructured, source string) Decision {
	none := Decision{Action: ActionNone}
	if cp == nil || src == nil || !HoldsDeletes(k) || cp.GetDeletionTimestamp() != nil || src.GetDeletionTimestamp() != nil ||
		cp.GetLabels()[LabelReplicatedFrom] != source || cp.GetAnnotations()[AnnotationSourceUID] == "" || Excluded(k, cp) || generated(cp) {
		return none
	}
	if !olderSource(src, cp, source) || ContentOf(k, src).Equal(ContentOf(k, cp)) {
		return none
	}
	return Decision{Action: ActionUpdate, Object: Restored(k, cp, src)}
}

// Restored returns src, the source's object, with its mirrored content replaced by cp's (a newer copy made from
// it) and its own reserved labels and annotations kept, and AnnotationGenerationOffset set so that its lineage
// generation after the update is the one cp recorded: the update raises metadata.generation by one when it
// changes a field the kind mirrors (for ManifestWorks and ManagedClusterAddOns, the spec), else leaves it. It
// carries no copy mark. Neither cp nor src is modified.
func Restored(k Kind, cp, src *unstructured.Unstructured) *unstructured.Unstructured {
	content := ContentOf(k, cp)
	out := src.DeepCopy()
	fieldsChange := !reflect.DeepEqual(ContentOf(k, src).Fields, content.Fields)
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
	after := src.GetGeneration()
	if fieldsChange {
		after++
	}
	if offset := RecordedGeneration(cp) - after; offset > 0 {
		annotations[AnnotationGenerationOffset] = strconv.FormatInt(offset, 10)
	} else {
		delete(annotations, AnnotationGenerationOffset)
	}
	out.SetAnnotations(annotations)
	return out
}

// LineageGeneration returns obj's metadata.generation plus its AnnotationGenerationOffset (0 when absent or
// malformed): the generation its copies record (AnnotationSourceGeneration) and compare.
func LineageGeneration(obj *unstructured.Unstructured) int64 {
	offset, err := strconv.ParseInt(obj.GetAnnotations()[AnnotationGenerationOffset], 10, 64)
	if err != nil || offset < 0 {
		offset = 0
	}
	return obj.GetGeneration() + offset
}

// RecordedGeneration returns the lineage generation of the source object cp was made from
// (AnnotationSourceGeneration), 0 when it records none.
func RecordedGeneration(cp *unstructured.Unstructured) int64 {
	g, _ := strconv.ParseInt(cp.GetAnnotations()[AnnotationSourceGeneration], 10, 64)
	return g
}

// NewerCopy reports whether a, a copy, records a higher source generation than b (nil: none).
func NewerCopy(a, b *unstructured.Unstructured) bool {
	return b == nil || RecordedGeneration(a) > RecordedGeneration(b)
}
