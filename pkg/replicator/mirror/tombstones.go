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
