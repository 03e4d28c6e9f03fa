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
		key, uids, ok := strings.Cut(strings.TrimSpace(entry), "=")
		if !ok || strings.Count(key, "/") != 1 || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") {
			continue
		}
		uid, sourceUID, _ := strings.Cut(uids, "/")
		if uid == "" {
			continue
		}
		out[key] = Deleted{UID: uid, SourceUID: sourceUID}
	}
	return out
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

// DeleteLogKey is the key under which a hub's log of deletes made (DeleteMade) holds the data, in the ConfigMap
// the replicator keeps it in (replication.DeleteLog).
const DeleteLogKey = "deletes"

// MaxDeletesMade is how many deletes a hub's log of deletes made keeps: the newest, about 140 bytes each, at most
// some 340 (names of 253 characters), so the ConfigMap stays under 340 KiB, a third of its 1 MiB limit. A hub restored from a backup older than the last MaxDeletesMade deletes the replicator
// carried may get back the objects of the deletes dropped from the other hubs' logs.
const MaxDeletesMade = 1000

// DeleteMade is one entry of a hub's log of deletes made: a user's delete of the object Key names
// (DeleteMadeKey), which the replicator carried to every hub, with the object's UID and, when it was a copy, its
// AnnotationSourceUID. Written "<Kind>/<namespace>/<name>=<uid>/<source uid>", one per line, oldest first.
type DeleteMade struct {
	Key string
	Deleted
}

// DeleteMadeKey returns the Key of a DeleteMade: "<Kind>/<namespace>/<name>".
func DeleteMadeKey(k failoverv1alpha1.ReplicatedKind, namespace, name string) string {
	return string(k) + "/" + namespace + "/" + name
}

// ParseDeletesMade parses a log of deletes made (the DeleteLogKey data), oldest first. Malformed lines are
// skipped.
func ParseDeletesMade(value string) []DeleteMade {
	var out []DeleteMade
	for _, line := range strings.Split(value, "\n") {
		key, uids, found := strings.Cut(strings.TrimSpace(line), "=")
		if !found || strings.Count(key, "/") != 2 || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") || strings.Contains(key, "//") {
			continue
		}
		uid, sourceUID, _ := strings.Cut(uids, "/")
		if uid == "" {
			continue
		}
		out = append(out, DeleteMade{Key: key, Deleted: Deleted{UID: uid, SourceUID: sourceUID}})
	}
	return out
}

// FormatDeletesMade returns the DeleteLogKey data of log, "" for none.
func FormatDeletesMade(log []DeleteMade) string {
	var b strings.Builder
	for _, d := range log {
		b.WriteString(d.Key + "=" + d.UID + "/" + d.SourceUID + "\n")
	}
	return b.String()
}

// WithDeletesMade returns log with the entries of add it does not hold appended, in order, keeping the newest
// MaxDeletesMade.
func WithDeletesMade(log []DeleteMade, add ...DeleteMade) []DeleteMade {
	out := slices.Clone(log)
	for _, d := range add {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if len(out) > MaxDeletesMade {
		out = out[len(out)-MaxDeletesMade:]
	}
	return out
}

// DeleteMadeOf returns the delete in log (one hub's log of deletes made) of which obj, the object of key (a
// DeleteMadeKey) on some hub, is what remains, and whether obj is named by its own UID (own): obj is the deleted
// object itself (a hub restored from a backup taken before the delete holds it again) or the original the deleted
// copy was made from (its SourceUID); otherwise (own false) obj is a copy made from either (its
// AnnotationSourceUID). UIDs are never reused, so a match is that object's delete, whatever was made under its
// name since; an object rewritten in place keeps its UID, so an own match stays one. ok is false when none.
func DeleteMadeOf(log []DeleteMade, key string, obj *unstructured.Unstructured) (d Deleted, own, ok bool) {
	if obj == nil {
		return Deleted{}, false, false
	}
	uid := string(obj.GetUID())
	madeFrom := ""
	if IsCopy(obj) {
		madeFrom = obj.GetAnnotations()[AnnotationSourceUID]
	}
	for _, e := range log {
		if e.Key != key {
			continue
		}
		if uid != "" && (uid == e.UID || uid == e.SourceUID) {
			return e.Deleted, true, true
		}
		if madeFrom != "" && (madeFrom == e.UID || madeFrom == e.SourceUID) {
			d, ok = e.Deleted, true
		}
	}
	return d, false, ok
}
