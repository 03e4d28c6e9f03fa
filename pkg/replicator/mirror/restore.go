package mirror

import (
	"maps"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// RestoreCandidate is a target hub's object of a source object's kind, namespace and name, as DecideRestore
// weighs it: the hub's name, the object as that hub's cache holds it (nil when absent; a copy may be held
// without its mirrored fields, WithoutContent) and Hash, the hash of its mirrored content when it is held so
// ("": computed from the object).
type RestoreCandidate struct {
	Hub  string
	Copy *unstructured.Unstructured
	Hash string
}

// holdsRecordedState returns the hash of the candidate's mirrored content and whether it is the one its
// AnnotationContentHash records: the copy was not changed on its hub since the replicator wrote it.
func (c RestoreCandidate) holdsRecordedState(k Kind) (string, bool) {
	hash := c.Hash
	if hash == "" {
		hash = ContentOf(k, c.Copy).Hash()
	}
	return hash, hash == c.Copy.GetAnnotations()[AnnotationContentHash]
}

// HoldsRecordedState reports whether cp, a copy read whole, holds the mirrored content its AnnotationContentHash
// records: it was not changed on its hub since the replicator wrote it.
func HoldsRecordedState(k Kind, cp *unstructured.Unstructured) bool {
	_, holds := RestoreCandidate{Copy: cp}.holdsRecordedState(k)
	return holds
}

// Restore is what DecideRestore found: the copy on Hub holds the newest state of the source's object, of
// lineage Lineage (the copy's AnnotationSourceGeneration), above the source's own. SameContent says whether
// its mirrored content equals the source's (only the source's lineage is behind then).
type Restore struct {
	Hub         string
	Lineage     int64
	SameContent bool
}

// DecideRestore returns the copy whose state is written back onto src, the source hub's object, when src is an
// older state of the object the copies were made from: same UID, and a lower Lineage than a copy records. The
// apiserver never lowers an object's generation, so only a restore of src's hub from a backup of its etcd
// makes that (a hub rebuilt and filled again makes objects of other UIDs). source is the source hub's name;
// candidates are the other hubs' objects of src's name, in spec.hubs order. The caller weighs every configured
// hub's: the newest state may be on any of them. The rules, in order:
//  1. Nothing when src is absent, being deleted, a ManagedCluster (its hub's controllers and the agent write
//     it), Excluded or generated (its controller makes it again from its generator).
//  2. The candidates are the copies made from src (LabelReplicatedFrom = source, AnnotationSourceUID = src's
//     uid), not generated on their hub (GeneratedHere), not being deleted, whose recorded lineage is above
//     src's and whose source offset (AnnotationSourceGenerationOffset) is not above src's (olderSource), and
//     that hold the state they record: their mirrored content still has their AnnotationContentHash (a copy
//     changed on its hub since holds no state of the source's).
//  3. The candidate of the highest recorded lineage wins, the first in the given order on a tie: the newest
//     state any hub holds, also when another copy holds an older one.
//
// The write (RestoreOnto) raises src's lineage to at least the winner's, so that no copy of an older state is
// taken for a newer one afterwards and every copy is brought in step from src again (Decide).
func DecideRestore(k Kind, src *unstructured.Unstructured, source string, candidates []RestoreCandidate) (Restore, bool) {
	if src == nil || src.GetDeletionTimestamp() != nil || k.Name == failoverv1alpha1.KindManagedCluster || Excluded(k, src) || generated(src) {
		return Restore{}, false
	}
	var best Restore
	found := false
	for _, c := range candidates {
		cp := c.Copy
		if cp == nil || cp.GetDeletionTimestamp() != nil || GeneratedHere(k, cp) || !olderSource(src, cp, source) {
			continue
		}
		lineage, _, _ := recordedLineage(cp)
		if found && lineage <= best.Lineage {
			continue
		}
		hash, holds := c.holdsRecordedState(k)
		if !holds {
			continue
		}
		best, found = Restore{Hub: c.Hub, Lineage: lineage, SameContent: hash == ContentOf(k, src).Hash()}, true
	}
	return best, found
}

// RestoreOnto returns src, the source hub's object, with the state of cp, its copy of lineage lineage that
// DecideRestore chose: cp's mirrored fields, and its labels and annotations outside the reserved prefixes in
// place of src's; src's reserved labels and annotations (the replicator's marks, has-copies), finalizers and
// other metadata stay, its resourceVersion included (the update is refused if src changed since). Its
// AnnotationGenerationOffset is set so that its Lineage after the update is above lineage: the update raises
// metadata.generation by one when the mirrored fields change, and not at all otherwise.
func RestoreOnto(k Kind, src, cp *unstructured.Unstructured, lineage int64) *unstructured.Unstructured {
	content := ContentOf(k, cp)
	out := src.DeepCopy()
	for _, f := range k.Fields {
		if v, ok := content.Fields[f]; ok {
			out.Object[f] = v
		} else {
			delete(out.Object, f)
		}
	}
	labels := keepReserved(out.GetLabels(), ReservedLabelPrefixes)
	maps.Copy(labels, content.Labels)
	out.SetLabels(labels)
	annotations := keepReserved(out.GetAnnotations(), ReservedAnnotationPrefixes)
	maps.Copy(annotations, content.Annotations)
	// lineage - generation: the generation the update gives (one more, or the same) puts the lineage at
	// lineage+1, or at lineage; both are at least the copy's, so the copy is no longer newer.
	if offset := lineage - src.GetGeneration(); offset > 0 {
		annotations[AnnotationGenerationOffset] = strconv.FormatInt(offset, 10)
	}
	out.SetAnnotations(annotations)
	return out
}

// Recreate is what DecideRecreate found: the copy on Hub holds the object its source hub lost, made from it in
// incarnation Incarnation.
type Recreate struct {
	Hub         string
	Incarnation Incarnation
}

// DecideRecreate returns the copy from which an object that the source hub no longer holds is made again there,
// when the source lost it: the copy was made from it in a later incarnation of the same marker
// (AnnotationSourceIncarnation) than the one the hub shows now, shown (read from its marker since it was last
// ready; unknown: nothing is decided). A hub shows an earlier incarnation of its marker only when it was
// restored from a backup, and the copy proves that it held the object after that backup. A delete is no loss:
// deleted, the delete the replicator saw on the source (nil: none), must not explain the copy. candidates are
// the other hubs' objects of the name (RestoreCandidate), every configured hub's. The rules, in order:
//  1. Nothing for a ManagedCluster (its hub's controllers and the agent make it) or an unknown incarnation.
//  2. The candidates are copies made from source (LabelReplicatedFrom = source), not generated on their hub
//     (GeneratedHere), not being deleted, that hold the state they record (their AnnotationContentHash), made in
//     a later incarnation of the marker shown names, and that deleted does not explain.
//  3. The candidate of the latest incarnation, then the highest recorded lineage, wins; the first in the
//     given order on a tie.
//
// The object made again (RecreateFrom) is an original of the source. A copy that misses a delete its hub did
// not see (it was out of the configuration) records an incarnation the source has since passed, and one made
// before the marker was made anew (the hub rebuilt, the replicator uninstalled and installed again) another
// marker: neither is a candidate.
func DecideRecreate(k Kind, source string, shown Incarnation, deleted *Deleted, candidates []RestoreCandidate) (Recreate, bool) {
	if k.Name == failoverv1alpha1.KindManagedCluster || !shown.Known() {
		return Recreate{}, false
	}
	var best Recreate
	var bestLineage int64
	found := false
	for _, c := range candidates {
		cp := c.Copy
		if cp == nil || cp.GetDeletionTimestamp() != nil || cp.GetLabels()[LabelReplicatedFrom] != source || GeneratedHere(k, cp) || deleted.Explains(cp) {
			continue
		}
		incarnation := SourceIncarnation(cp)
		if !shown.Before(incarnation) {
			continue
		}
		lineage, _, _ := recordedLineage(cp)
		if found && (incarnation.N < best.Incarnation.N || (incarnation.N == best.Incarnation.N && lineage <= bestLineage)) {
			continue
		}
		if _, holds := c.holdsRecordedState(k); !holds {
			continue
		}
		best, bestLineage, found = Recreate{Hub: c.Hub, Incarnation: incarnation}, lineage, true
	}
	return best, found
}

// RecreateFrom returns the object to make again on the source hub from cp, the copy DecideRecreate chose: an
// original of cp's kind, namespace and name with cp's mirrored content (fields, and labels and annotations
// outside the reserved prefixes), holding deletes from its first write (FinalizerDeleteCopies, when k
// HoldsDeletes) since copies of it exist. Nothing else of cp is taken: its hub's metadata and status, and its
// copy marks, are not the source's.
func RecreateFrom(k Kind, cp *unstructured.Unstructured) *unstructured.Unstructured {
	content := ContentOf(k, cp)
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(cp.GetAPIVersion())
	out.SetKind(cp.GetKind())
	out.SetName(cp.GetName())
	out.SetNamespace(cp.GetNamespace())
	for _, f := range k.Fields {
		if v, ok := content.Fields[f]; ok {
			out.Object[f] = v
		}
	}
	if len(content.Labels) > 0 {
		out.SetLabels(content.Labels)
	}
	if len(content.Annotations) > 0 {
		out.SetAnnotations(content.Annotations)
	}
	return heldCopy(k, out)
}
