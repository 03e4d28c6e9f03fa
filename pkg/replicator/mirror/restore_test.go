package mirror_test

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	replv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// TestDecideRestore: what a source hub restored from a backup gets back from the newest copy made from it.
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
		wantAction mirror.Action
		wantOffset string
	}{
		{name: "rule 2: the source holds an older generation of the same object: updated from the copy, offset 7-4", kind: mw, src: older, cp: cp,
			wantAction: mirror.ActionUpdate, wantOffset: "3"},
		{name: "rule 2: only labels or annotations differ (the generation stays): offset 7-3", kind: mw,
			src: mod(mwSource(), func(m map[string]any) { meta(m)["generation"] = int64(3) }), cp: cp,
			wantAction: mirror.ActionUpdate, wantOffset: "4"},
		{name: "rule 2: an older generation, its offset counted: already as new as the copy: nothing", kind: mw,
			src: mod(older, func(m map[string]any) {
				meta(m)["annotations"] = map[string]any{mirror.AnnotationGenerationOffset: "4"}
			}), cp: cp,
			wantAction: mirror.ActionNone},
		{name: "rule 2: older generation, same content already (written back before): nothing", kind: mw,
			src: mod(newer, func(m map[string]any) { meta(m)["generation"] = int64(3) }), cp: cp, wantAction: mirror.ActionNone},
		{name: "rule 1: the source lost the object: never made again from a copy", kind: mw, cp: cp, wantAction: mirror.ActionNone},
		{name: "rule 1: the source's object is being deleted: nothing", kind: mw, cp: cp,
			src: mod(older, func(m map[string]any) { meta(m)["deletionTimestamp"] = "2026-12-05T08:00:00Z" }), wantAction: mirror.ActionNone},
		{name: "rule 3: the source holds the same or a later generation: nothing", kind: mw, cp: cp,
			src: mod(older, func(m map[string]any) { meta(m)["generation"] = int64(7) }), wantAction: mirror.ActionNone},
		{name: "rule 3: the source's object was made again (another UID): nothing", kind: mw, cp: cp,
			src: mod(older, func(m map[string]any) { meta(m)["uid"] = "uid-made-again" }), wantAction: mirror.ActionNone},
		{name: "rule 1: a copy made from another hub: nothing", kind: mw, src: older,
			cp: mod(cp, func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubC) }), wantAction: mirror.ActionNone},
		{name: "rule 1: a copy being deleted: nothing", kind: mw, src: older,
			cp: mod(cp, func(m map[string]any) { meta(m)["deletionTimestamp"] = "2026-12-05T08:00:00Z" }), wantAction: mirror.ActionNone},
		{name: "rule 1: a generated copy (a ManifestWorkReplicaSet's): nothing", kind: mw, src: older,
			cp: mod(cp, func(m map[string]any) { setLabel(m, mirror.ManifestWorkReplicaSetLabel, "apps.set") }), wantAction: mirror.ActionNone},
		{name: "no copy: nothing", kind: mw, src: older, cp: nil, wantAction: mirror.ActionNone},
		{name: "rule 1: a label-selected kind, whose deletes leave no trace: nothing", kind: secret,
			src: u(map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{
				"name": "s", "namespace": "cluster1", "uid": "uid-s", "generation": int64(1), "labels": map[string]any{mirror.BackupLabel: "true"}},
				"data": map[string]any{"k": "dg=="}}),
			cp: written(mirror.Desired(secret, u(map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{
				"name": "s", "namespace": "cluster1", "uid": "uid-s", "generation": int64(2), "labels": map[string]any{mirror.BackupLabel: "true"}},
				"data": map[string]any{"k": "dw=="}}), nil, hubA, nil), "9"),
			wantAction: mirror.ActionNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mirror.DecideRestore(tc.kind, tc.src, tc.cp, hubA)
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
			if got := obj.GetAnnotations()[mirror.AnnotationGenerationOffset]; got != tc.wantOffset {
				t.Errorf("%s = %q, want %q", mirror.AnnotationGenerationOffset, got, tc.wantOffset)
			}
			if !mirror.ContentOf(mw, obj).Equal(mirror.ContentOf(mw, newer)) {
				t.Errorf("restored content differs from the copy's (-want +got):\n%s", cmp.Diff(mirror.ContentOf(mw, newer), mirror.ContentOf(mw, obj)))
			}
			if obj.GetUID() != tc.src.GetUID() || obj.GetResourceVersion() != tc.src.GetResourceVersion() {
				t.Errorf("update of uid %s rv %s, want the source's %s %s (an update on its resourceVersion)", obj.GetUID(), obj.GetResourceVersion(), tc.src.GetUID(), tc.src.GetResourceVersion())
			}
		})
	}
}

// TestRestoreThenLaggingCopyAndEdit: hub-a, restored at generation 3, holds older states than hub-b's copy (made
// at 7) and hub-c's (made at 5, lagging). Once hub-b's state is written back, hub-a's lineage is at 7: hub-c's
// copy is older and is updated from hub-a (never the other way), hub-b's is in step, and a user's next edit on
// hub-a (generation 5, lineage 8) is newer than every copy.
func TestRestoreThenLaggingCopyAndEdit(t *testing.T) {
	mw := kind(t, replv1alpha1.KindManifestWork)
	at := func(g int64, value string) *unstructured.Unstructured {
		return mod(mwSource(), func(m map[string]any) {
			meta(m)["generation"] = g
			meta(m)["annotations"] = map[string]any{"state": value}
			spec(m)["deleteOption"] = map[string]any{"propagationPolicy": value}
		})
	}
	onB := written(mirror.Desired(mw, at(7, "seven"), nil, hubA, nil), "70")
	onC := written(mirror.Desired(mw, at(5, "five"), nil, hubA, nil), "50")
	restored := at(3, "three")

	d := mirror.DecideRestore(mw, restored, onB, hubA)
	if d.Action != mirror.ActionUpdate {
		t.Fatalf("restore from hub-b: %s, want Update", d.Action)
	}
	// The apiserver raises the generation by one for the spec change.
	a := d.Object.DeepCopy()
	a.SetGeneration(4)
	if got := mirror.LineageGeneration(a); got != 7 {
		t.Fatalf("hub-a's lineage generation after the write-back = %d, want 7", got)
	}
	if d := mirror.DecideRestore(mw, a, onC, hubA); d.Action != mirror.ActionNone {
		t.Errorf("hub-c's older copy written back to hub-a: %s", d.Action)
	}
	if d := mirror.Decide(mw, a, onC, "", hubA, hubC, nil, nil); d.Action != mirror.ActionUpdate || d.Conflict != mirror.ConflictNone ||
		d.Object.GetAnnotations()["state"] != "seven" || d.Object.GetAnnotations()[mirror.AnnotationSourceGeneration] != "7" {
		t.Errorf("hub-c's copy: %s %s (state %q, source-generation %q), want updated to hub-a's newer state at 7", d.Action, d.Conflict,
			d.Object.GetAnnotations()["state"], d.Object.GetAnnotations()[mirror.AnnotationSourceGeneration])
	}
	if d := mirror.Decide(mw, a, onB, "", hubA, hubB, nil, nil); d.Action != mirror.ActionNone {
		t.Errorf("hub-b's copy, in step: %s %s, want nothing", d.Action, d.Conflict)
	}
	if _, ok := mirror.Desired(mw, a, onB, hubA, nil).GetAnnotations()[mirror.AnnotationGenerationOffset]; ok {
		t.Errorf("a copy carries %s", mirror.AnnotationGenerationOffset)
	}
	edited := mod(a, func(m map[string]any) {
		meta(m)["generation"] = int64(5)
		spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "edited"}
	})
	if d := mirror.Decide(mw, edited, onB, "", hubA, hubB, nil, nil); d.Action != mirror.ActionUpdate ||
		d.Object.GetAnnotations()[mirror.AnnotationSourceGeneration] != strconv.Itoa(8) {
		t.Errorf("the user's edit on hub-a after the write-back: %s %s, want hub-b's copy updated at lineage 8", d.Action, d.Conflict)
	}
	if d := mirror.DecideRestore(mw, edited, onB, hubA); d.Action != mirror.ActionNone {
		t.Errorf("hub-b's copy written over the user's later edit on hub-a: %s", d.Action)
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
