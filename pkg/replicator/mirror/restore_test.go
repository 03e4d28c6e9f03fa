package mirror_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	replv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// TestDecideRestore: what a source hub restored from a backup, or rebuilt, gets back from a copy made from it.
func TestDecideRestore(t *testing.T) {
	mw := kind(t, replv1alpha1.KindManifestWork)
	secret := kind(t, replv1alpha1.KindSecret)
	// The copy on hub-b of mwSource at generation 7, with a user's annotation.
	newer := mod(mwSource(), func(m map[string]any) { meta(m)["annotations"] = map[string]any{"team": "payments"} })
	cp := written(mirror.Desired(mw, newer, nil, hubA, nil), "500")
	older := mod(mwSource(), func(m map[string]any) {
		meta(m)["generation"] = int64(3)
		spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
	})
	for _, tc := range []struct {
		name       string
		kind       mirror.Kind
		src, cp    *unstructured.Unstructured
		deleted    *mirror.Deleted
		wantAction mirror.Action
	}{
		{name: "rule 2: the source lost the original: created from the copy", kind: mw, cp: cp, wantAction: mirror.ActionCreate},
		{name: "rule 2: the source lost it, but its delete was seen: nothing", kind: mw, cp: cp,
			deleted: &mirror.Deleted{UID: "uid-mw-source"}, wantAction: mirror.ActionNone},
		{name: "rule 3: the source holds an older generation of the same object: updated from the copy", kind: mw, src: older, cp: cp,
			wantAction: mirror.ActionUpdate},
		{name: "rule 3: older generation, same content already (written back before): nothing", kind: mw,
			src: mod(newer, func(m map[string]any) { meta(m)["generation"] = int64(3) }), cp: cp, wantAction: mirror.ActionNone},
		{name: "rule 3: the source's object is being deleted: nothing", kind: mw, cp: cp,
			src: mod(older, func(m map[string]any) { meta(m)["deletionTimestamp"] = "2026-12-05T08:00:00Z" }), wantAction: mirror.ActionNone},
		{name: "rule 4: the source holds the same or a later generation: nothing", kind: mw, cp: cp,
			src: mod(older, func(m map[string]any) { meta(m)["generation"] = int64(7) }), wantAction: mirror.ActionNone},
		{name: "rule 4: the source's object was made again (another UID): nothing", kind: mw, cp: cp,
			src: mod(older, func(m map[string]any) { meta(m)["uid"] = "uid-made-again" }), wantAction: mirror.ActionNone},
		{name: "rule 1: a copy made from another hub: nothing", kind: mw,
			cp: mod(cp, func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubC) }), wantAction: mirror.ActionNone},
		{name: "rule 1: a copy that names no original (left by an uninstall): nothing", kind: mw,
			cp: mod(cp, func(m map[string]any) { delete(annots(m), mirror.AnnotationSourceUID) }), wantAction: mirror.ActionNone},
		{name: "rule 1: a copy being deleted: nothing", kind: mw,
			cp: mod(cp, func(m map[string]any) { meta(m)["deletionTimestamp"] = "2026-12-05T08:00:00Z" }), wantAction: mirror.ActionNone},
		{name: "rule 1: a generated copy (a ManifestWorkReplicaSet's): nothing", kind: mw,
			cp: mod(cp, func(m map[string]any) { setLabel(m, mirror.ManifestWorkReplicaSetLabel, "apps.set") }), wantAction: mirror.ActionNone},
		{name: "no copy anywhere: nothing", kind: mw, src: older, cp: nil, wantAction: mirror.ActionNone},
		{name: "rule 1: a label-selected kind, whose deletes leave no trace: nothing", kind: secret,
			cp: written(mirror.Desired(secret, u(map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{
				"name": "s", "namespace": "cluster1", "uid": "uid-s", "labels": map[string]any{mirror.BackupLabel: "true"}},
				"data": map[string]any{"k": "dg=="}}), nil, hubA, nil), "9"),
			wantAction: mirror.ActionNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mirror.DecideRestore(tc.kind, tc.src, tc.cp, hubA, tc.deleted)
			if d.Action != tc.wantAction {
				t.Fatalf("Action = %s, want %s", d.Action, tc.wantAction)
			}
			if d.Action == mirror.ActionNone {
				return
			}
			obj := d.Object
			if mirror.IsCopy(obj) {
				t.Errorf("restored object carries the copy label: %v", obj.GetLabels())
			}
			for _, a := range []string{mirror.AnnotationContentHash, mirror.AnnotationSourceUID, mirror.AnnotationSourceGeneration, mirror.AnnotationSourceResourceVersion} {
				if _, ok := obj.GetAnnotations()[a]; ok {
					t.Errorf("restored object carries copy mark %s", a)
				}
			}
			if !mirror.ContentOf(mw, obj).Equal(mirror.ContentOf(mw, newer)) {
				t.Errorf("restored content differs from the copy's (-want +got):\n%s", cmp.Diff(mirror.ContentOf(mw, newer), mirror.ContentOf(mw, obj)))
			}
			if d.Action == mirror.ActionUpdate && (obj.GetUID() != tc.src.GetUID() || obj.GetResourceVersion() != tc.src.GetResourceVersion()) {
				t.Errorf("update of uid %s rv %s, want the source's %s %s (an update on its resourceVersion)", obj.GetUID(), obj.GetResourceVersion(), tc.src.GetUID(), tc.src.GetResourceVersion())
			}
			if d.Action == mirror.ActionCreate && (obj.GetUID() != "" || obj.GetResourceVersion() != "" || obj.GetName() != "app" || obj.GetNamespace() != "cluster1") {
				t.Errorf("create of %s/%s uid %q rv %q, want cluster1/app without uid or resourceVersion", obj.GetNamespace(), obj.GetName(), obj.GetUID(), obj.GetResourceVersion())
			}
		})
	}
}

// TestNewerCopy: the copy recording the higher source generation is the newer; any copy beats none.
func TestNewerCopy(t *testing.T) {
	mw := kind(t, replv1alpha1.KindManifestWork)
	at := func(g int64) *unstructured.Unstructured {
		return mirror.Desired(mw, mod(mwSource(), func(m map[string]any) { meta(m)["generation"] = g }), nil, hubA, nil)
	}
	if !mirror.NewerCopy(at(3), nil) || !mirror.NewerCopy(at(4), at(3)) || mirror.NewerCopy(at(3), at(3)) || mirror.NewerCopy(at(2), at(3)) {
		t.Errorf("NewerCopy: want by source generation, and any copy newer than none")
	}
}
