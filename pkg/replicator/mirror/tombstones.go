package mirror

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// AnnotationDeletesSeen is, on a cluster's ManagedCluster on a hub, the tombstones of deletes the replicator saw
// there (delete events of a live watch, of objects in the cluster's namespace) that have not reached every hub
// yet: recorded where the delete happened, so that a replicator restarted before a hub that was unreachable came
// back still knows them (hubconn.Hub.Deleted), and a delete made on the cluster's new source before its hold
// (FinalizerDeleteCopies) is not taken, after the restart, for a copy that hub lost. The value is a
// comma-separated, sorted list of "<Kind>/<name>=<uid>/<source uid>" (Deleted; the source uid is empty for an
// original). Each hub keeps its own (a reserved annotation).
const AnnotationDeletesSeen = "failover.open-cluster-management.io/deletes-seen"

// TombstoneKey returns the key of a tombstone of AnnotationDeletesSeen: "<Kind>/<name>" of the object deleted in
// the cluster's namespace.
func TombstoneKey(k failoverv1alpha1.ReplicatedKind, name string) string {
	return string(k) + "/" + name
}

// ParseTombstones parses an AnnotationDeletesSeen value into TombstoneKey → Deleted. Malformed entries are
// skipped: a tombstone only ever prevents a write, and one the replicator cannot read is one it never wrote.
func ParseTombstones(value string) map[string]Deleted {
	out := map[string]Deleted{}
	for _, entry := range strings.Split(value, ",") {
		if key, d, ok := parseEntry(entry); ok {
			out[key] = d
		}
	}
	return out
}

// parseEntry parses one "<Kind>/<name>=<uid>/<source uid>" entry of AnnotationDeletesSeen or
// AnnotationDeletesMade; ok is false when it is malformed.
func parseEntry(entry string) (key string, d Deleted, ok bool) {
	key, uids, found := strings.Cut(strings.TrimSpace(entry), "=")
	if !found || strings.Count(key, "/") != 1 || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") {
		return "", Deleted{}, false
	}
	uid, sourceUID, _ := strings.Cut(uids, "/")
	if uid == "" {
		return "", Deleted{}, false
	}
	return key, Deleted{UID: uid, SourceUID: sourceUID}, true
}

// FormatTombstones returns the AnnotationDeletesSeen value of tombstones, "" for none.
func FormatTombstones(tombstones map[string]Deleted) string {
	entries := make([]string, 0, len(tombstones))
	for _, key := range slices.Sorted(maps.Keys(tombstones)) {
		d := tombstones[key]
		entries = append(entries, key+"="+d.UID+"/"+d.SourceUID)
	}
	return strings.Join(entries, ",")
}

// TombstonesPatch returns the JSON merge patch (RFC 7386) that sets mc's AnnotationDeletesSeen to tombstones
// (removes it when there are none), with mc's metadata.uid and resourceVersion as preconditions: the value is
// written whole, so a concurrent change of it is refused (409) rather than lost. It returns nil when the value
// would not change.
func TombstonesPatch(mc *unstructured.Unstructured, tombstones map[string]Deleted) []byte {
	value := FormatTombstones(tombstones)
	current, present := mc.GetAnnotations()[AnnotationDeletesSeen]
	if current == value && (present || value == "") {
		return nil
	}
	var v any = value
	if value == "" {
		v = nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": string(mc.GetUID()), "resourceVersion": mc.GetResourceVersion(),
		"annotations": map[string]any{AnnotationDeletesSeen: v},
	}})
	return patch
}

// AnnotationDeletesMade is, on a cluster's ManagedCluster on every hub, the log of the last deletes of the
// cluster's objects of the kinds that hold deletes (HoldsDeletes: ManifestWorks, ManagedClusterAddOns) that a
// user made on the cluster's source and the replicator carried to every hub: "<Kind>/<name>=<uid>/<source uid>"
// entries (DeleteMade), oldest first, comma-separated, at most MaxDeletesMade. The replicator writes it on every
// ready hub before it releases the source's hold of the delete (FinalizerDeleteCopies), so that a hub restored
// from a backup taken before the delete, which holds the object again (the original, or a copy of it), is told by
// another hub that it was deleted (DeleteMadeOf). Each hub keeps its own (a reserved annotation).
const AnnotationDeletesMade = "failover.open-cluster-management.io/deletes-made"

// MaxDeletesMade is how many deletes AnnotationDeletesMade keeps per ManagedCluster: about 9 KiB of
// annotation. A hub restored from a backup older than the last MaxDeletesMade deletes of a cluster's objects may
// get back the objects of the deletes dropped from the log.
const MaxDeletesMade = 100

// DeleteMade is one entry of AnnotationDeletesMade: the delete of the object Key names (TombstoneKey) in the
// cluster's namespace, the object's UID and, when it was a copy, its AnnotationSourceUID.
type DeleteMade struct {
	Key string
	Deleted
}

// ParseDeletesMade parses an AnnotationDeletesMade value, oldest first. Malformed entries are skipped.
func ParseDeletesMade(value string) []DeleteMade {
	var out []DeleteMade
	for _, entry := range strings.Split(value, ",") {
		if key, d, ok := parseEntry(entry); ok {
			out = append(out, DeleteMade{Key: key, Deleted: d})
		}
	}
	return out
}

// FormatDeletesMade returns the AnnotationDeletesMade value of log, "" for none.
func FormatDeletesMade(log []DeleteMade) string {
	entries := make([]string, 0, len(log))
	for _, d := range log {
		entries = append(entries, d.Key+"="+d.UID+"/"+d.SourceUID)
	}
	return strings.Join(entries, ",")
}

// WithDeleteMade returns log with d appended, unless it holds d already, keeping the newest MaxDeletesMade.
func WithDeleteMade(log []DeleteMade, d DeleteMade) []DeleteMade {
	if slices.Contains(log, d) {
		return log
	}
	log = append(slices.Clone(log), d)
	if len(log) > MaxDeletesMade {
		log = log[len(log)-MaxDeletesMade:]
	}
	return log
}

// HoldsEntry reports whether log holds d.
func HoldsEntry(log []DeleteMade, d DeleteMade) bool { return slices.Contains(log, d) }

// DeletesMadePatch returns the JSON merge patch (RFC 7386) that sets mc's AnnotationDeletesMade to log, with mc's
// metadata.uid and resourceVersion as preconditions (the value is written whole: a concurrent change of it is
// refused, 409, rather than lost); nil when the value would not change.
func DeletesMadePatch(mc *unstructured.Unstructured, log []DeleteMade) []byte {
	value := FormatDeletesMade(log)
	if mc.GetAnnotations()[AnnotationDeletesMade] == value {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": string(mc.GetUID()), "resourceVersion": mc.GetResourceVersion(),
		"annotations": map[string]any{AnnotationDeletesMade: value},
	}})
	return patch
}

// DeleteMadeOf returns the delete in log (one hub's AnnotationDeletesMade) of which obj, the object of key (a
// TombstoneKey) on some hub, is what remains: obj is the deleted object itself (its UID: a hub restored from a
// backup taken before the delete holds it again), the original the deleted copy was made from (its SourceUID),
// or a copy of either (obj's AnnotationSourceUID). UIDs are never reused, so a match is that object's delete,
// whatever was made under its name since. ok is false when none.
func DeleteMadeOf(log []DeleteMade, key string, obj *unstructured.Unstructured) (Deleted, bool) {
	if obj == nil {
		return Deleted{}, false
	}
	uid := string(obj.GetUID())
	madeFrom := ""
	if IsCopy(obj) {
		madeFrom = obj.GetAnnotations()[AnnotationSourceUID]
	}
	for _, d := range log {
		if d.Key != key {
			continue
		}
		if (uid != "" && (uid == d.UID || uid == d.SourceUID)) || (madeFrom != "" && (madeFrom == d.UID || madeFrom == d.SourceUID)) {
			return d.Deleted, true
		}
	}
	return Deleted{}, false
}
