package mirror_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

func TestDecideRestore(t *testing.T) {
	mw := kind(t, failoverv1alpha1.KindManifestWork)
	mc := kind(t, failoverv1alpha1.KindManagedCluster)

	// mwSource is at generation 7; the restored source is at generation 5 with another content.
	restored := mod(mwSource(), func(m map[string]any) {
		meta(m)["generation"] = int64(5)
		spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
	})
	copyAt := func(generation int64, propagation string) *unstructured.Unstructured {
		return written(mirror.Desired(mw, mod(mwSource(), func(m map[string]any) {
			meta(m)["generation"] = generation
			spec(m)["deleteOption"] = map[string]any{"propagationPolicy": propagation}
		}), nil, hubA, nil), "500")
	}
	newest, lagging := copyAt(7, "Foreground"), copyAt(6, "SelectivelyOrphan")
	trimmed, trimmedHash := mirror.WithoutContent(mw, newest)
	sameAsRestored := copyAt(8, "Orphan")

	tests := []struct {
		name       string
		kind       mirror.Kind
		src        *unstructured.Unstructured
		candidates []mirror.RestoreCandidate
		want       mirror.Restore
		wantFound  bool
	}{
		{
			name: "the newest copy wins over a lagging one, whatever their order",
			kind: mw, src: restored,
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: lagging}, {Hub: hubC, Copy: newest}},
			want:       mirror.Restore{Hub: hubC, Lineage: 7}, wantFound: true,
		},
		{
			name: "a copy held without its content is weighed by its hash",
			kind: mw, src: restored,
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: trimmed, Hash: trimmedHash}},
			want:       mirror.Restore{Hub: hubB, Lineage: 7}, wantFound: true,
		},
		{
			name: "a copy of the same content at a higher lineage: only the source's lineage is raised",
			kind: mw, src: restored,
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: sameAsRestored}, {Hub: hubC, Copy: lagging}},
			want:       mirror.Restore{Hub: hubB, Lineage: 8, SameContent: true}, wantFound: true,
		},
		{
			name: "no copy records a higher lineage: nothing",
			kind: mw, src: mwSource(),
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: lagging}},
		},
		{
			name: "a source whose offset puts its lineage at the copy's: nothing",
			kind: mw, src: mod(restored, func(m map[string]any) { setAnnotation(m, mirror.AnnotationGenerationOffset, "2") }),
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: newest}},
		},
		{
			name: "a copy changed on its hub since it was written holds no state of the source's: skipped",
			kind: mw, src: restored,
			candidates: []mirror.RestoreCandidate{
				{Hub: hubB, Copy: mod(newest, func(m map[string]any) { spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"} })},
				{Hub: hubC, Copy: lagging},
			},
			want: mirror.Restore{Hub: hubC, Lineage: 6}, wantFound: true,
		},
		{
			name: "a copy being deleted, one made from another hub, one of another source object: skipped",
			kind: mw, src: restored,
			candidates: []mirror.RestoreCandidate{
				{Hub: hubB, Copy: mod(newest, deleting)},
				{Hub: hubC, Copy: mod(newest, func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubC) })},
				{Hub: "hub-d", Copy: mod(newest, func(m map[string]any) { setAnnotation(m, mirror.AnnotationSourceUID, "uid-other") })},
				{Hub: "hub-e"},
			},
		},
		{
			name: "a source being deleted: nothing",
			kind: mw, src: mod(restored, deleting),
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: newest}},
		},
		{
			name: "a generated source (ownerReferences): nothing, its controller makes it again",
			kind: mw, src: mod(restored, func(m map[string]any) {
				meta(m)["ownerReferences"] = []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "uid-owner"}}
			}),
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: newest}},
		},
		{
			name: "a ManagedCluster: nothing, its hub's controllers and the agent write it",
			kind: mc, src: mod(mcSource(), func(m map[string]any) { meta(m)["generation"] = int64(1) }),
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: written(mirror.Desired(mc, mcSource(), nil, hubA, clusterHubExtra(hubA)), "600")}},
		},
		{
			name: "no source object: nothing",
			kind: mw, candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: newest}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := mirror.DecideRestore(tt.kind, tt.src, hubA, tt.candidates)
			if found != tt.wantFound || got != tt.want {
				t.Errorf("DecideRestore = %+v, %t; want %+v, %t", got, found, tt.want, tt.wantFound)
			}
		})
	}
}

// TestRestoreOnto: the written-back object has the copy's state and the source's own metadata, and its lineage,
// once the update raised its generation, is above the copy's: Decide copies it to every hub, and no copy of that
// lineage or below is taken for a newer state again.
func TestRestoreOnto(t *testing.T) {
	mw := kind(t, failoverv1alpha1.KindManifestWork)
	restored := mod(mwSource(), func(m map[string]any) {
		meta(m)["generation"] = int64(5)
		meta(m)["finalizers"] = []any{mirror.FinalizerDeleteCopies}
		meta(m)["labels"] = map[string]any{"app": "old", mirror.LabelReplicatedFrom + "-x": "kept"}
		meta(m)["annotations"] = map[string]any{mirror.AnnotationHasCopies: hubB, "note": "old"}
		spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
	})
	newer := mod(mwSource(), func(m map[string]any) {
		meta(m)["annotations"] = map[string]any{"note": "new"}
		delete(spec(m), "manifestConfigs")
	})
	cp := written(mirror.Desired(mw, newer, nil, hubA, nil), "500")

	out := mirror.RestoreOnto(mw, restored, cp, 7)
	if diff := cmp.Diff(spec(newer.Object), out.Object["spec"]); diff != "" {
		t.Errorf("spec written back (-copy's +got):\n%s", diff)
	}
	if got := out.GetLabels(); !cmp.Equal(got, map[string]string{"app": "demo", mirror.LabelReplicatedFrom + "-x": "kept"}) {
		t.Errorf("labels %v, want the copy's mirrored ones and the source's reserved ones", got)
	}
	wantAnnotations := map[string]string{mirror.AnnotationHasCopies: hubB, "note": "new", mirror.AnnotationGenerationOffset: "2"}
	if diff := cmp.Diff(wantAnnotations, out.GetAnnotations()); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if out.GetUID() != restored.GetUID() || out.GetResourceVersion() != restored.GetResourceVersion() || !cmp.Equal(out.GetFinalizers(), []string{mirror.FinalizerDeleteCopies}) {
		t.Errorf("metadata not the source's: uid %s, resourceVersion %s, finalizers %v", out.GetUID(), out.GetResourceVersion(), out.GetFinalizers())
	}
	if restored.GetAnnotations()["note"] != "old" {
		t.Errorf("RestoreOnto modified its input")
	}

	// The apiserver raises the generation by one: the lineage is above the copy's, and the copy is brought in
	// step from the source, not kept.
	out.SetGeneration(out.GetGeneration() + 1)
	if got := mirror.Lineage(out); got != 8 {
		t.Errorf("Lineage after the update = %d, want 8 (generation 6 + offset 2)", got)
	}
	if _, found := mirror.DecideRestore(mw, out, hubA, []mirror.RestoreCandidate{{Hub: hubB, Copy: cp}}); found {
		t.Errorf("DecideRestore after the write-back still finds the copy newer")
	}
	if d := mirror.Decide(mw, out, cp, "", hubA, hubB, nil, nil); d.Conflict != mirror.ConflictNone {
		t.Errorf("Decide after the write-back: %+v, want no conflict", d)
	}
}

func TestDecideRecreate(t *testing.T) {
	mw := kind(t, failoverv1alpha1.KindManifestWork)
	mc := kind(t, failoverv1alpha1.KindManagedCluster)
	copyIn := func(incarnation, generation int64) *unstructured.Unstructured {
		return mirror.WithSourceIncarnation(written(mirror.Desired(mw, mod(mwSource(), func(m map[string]any) {
			meta(m)["generation"] = generation
		}), nil, hubA, nil), "500"), mirror.Incarnation{UID: "marker-a", N: incarnation})
	}
	at := func(n int64) mirror.Incarnation { return mirror.Incarnation{UID: "marker-a", N: n} }
	later, latest := copyIn(6, 7), copyIn(8, 2)
	trimmed, trimmedHash := mirror.WithoutContent(mw, later)

	tests := []struct {
		name       string
		kind       mirror.Kind
		shown      mirror.Incarnation
		deleted    *mirror.Deleted
		candidates []mirror.RestoreCandidate
		want       mirror.Recreate
		wantFound  bool
	}{
		{
			name: "a copy made in a later incarnation than the source shows: made again from it",
			kind: mw, shown: at(3),
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: later}},
			want:       mirror.Recreate{Hub: hubB, Incarnation: at(6)}, wantFound: true,
		},
		{
			name: "the latest incarnation wins over a higher lineage, whatever the order",
			kind: mw, shown: at(3),
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: later}, {Hub: hubC, Copy: latest}},
			want:       mirror.Recreate{Hub: hubC, Incarnation: at(8)}, wantFound: true,
		},
		{
			name: "a copy held without its content is weighed by its hash",
			kind: mw, shown: at(3),
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: trimmed, Hash: trimmedHash}},
			want:       mirror.Recreate{Hub: hubB, Incarnation: at(6)}, wantFound: true,
		},
		{
			name: "a copy of the incarnation the source shows, or an earlier one: nothing (a delete its hub may have missed)",
			kind: mw, shown: at(6),
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: later}, {Hub: hubC, Copy: copyIn(2, 7)}},
		},
		{
			name: "a copy that records no incarnation: nothing",
			kind: mw, shown: at(3),
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: mirror.WithSourceIncarnation(later.DeepCopy(), mirror.Incarnation{})}},
		},
		{
			name:       "the source's incarnation not known (no marker): nothing",
			kind:       mw,
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: later}},
		},
		{
			name: "a copy of another marker (made before the marker was made anew: a rebuilt hub, a reinstalled replicator): nothing",
			kind: mw, shown: mirror.Incarnation{UID: "marker-new", N: 1},
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: later}},
		},
		{
			name: "a delete of it seen on the source: nothing",
			kind: mw, shown: at(3), deleted: &mirror.Deleted{UID: "uid-mw-source"},
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: later}},
		},
		{
			name: "a copy changed on its hub, being deleted, or made from another hub: nothing",
			kind: mw, shown: at(3),
			candidates: []mirror.RestoreCandidate{
				{Hub: hubB, Copy: mod(later, func(m map[string]any) { spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"} })},
				{Hub: hubC, Copy: mod(later, deleting)},
				{Hub: "hub-d", Copy: mod(later, func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubC) })},
			},
		},
		{
			name: "a ManagedCluster: nothing, its hub's controllers and the agent make it",
			kind: mc, shown: at(3),
			candidates: []mirror.RestoreCandidate{{Hub: hubB, Copy: mirror.WithSourceIncarnation(written(mirror.Desired(mc, mcSource(), nil, hubA, clusterHubExtra(hubA)), "600"), at(6))}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := mirror.DecideRecreate(tt.kind, hubA, tt.shown, tt.deleted, tt.candidates)
			if found != tt.wantFound || got != tt.want {
				t.Errorf("DecideRecreate = %+v, %t; want %+v, %t", got, found, tt.want, tt.wantFound)
			}
		})
	}
}

// TestRecreateFrom: the object made again is an original with the copy's content, holding deletes, and nothing of
// the copy's hub or marks; Decide then finds the copy in step with it.
func TestRecreateFrom(t *testing.T) {
	mw := kind(t, failoverv1alpha1.KindManifestWork)
	src := mod(mwSource(), func(m map[string]any) { meta(m)["annotations"] = map[string]any{"note": "kept"} })
	cp := mirror.WithSourceIncarnation(written(mirror.Desired(mw, src, nil, hubA, nil), "500"), mirror.Incarnation{UID: "marker-a", N: 6})

	out := mirror.RecreateFrom(mw, cp)
	want := map[string]any{
		"apiVersion": "work.open-cluster-management.io/v1",
		"kind":       "ManifestWork",
		"metadata": map[string]any{
			"name": "app", "namespace": "cluster1",
			"labels":      map[string]any{"app": "demo"},
			"annotations": map[string]any{"note": "kept"},
			"finalizers":  []any{mirror.FinalizerDeleteCopies},
		},
		"spec": src.Object["spec"],
	}
	if diff := cmp.Diff(want, out.Object); diff != "" {
		t.Errorf("RecreateFrom (-want +got):\n%s", diff)
	}
	made := mod(out, func(m map[string]any) {
		meta(m)["uid"] = "uid-made-again"
		meta(m)["generation"] = int64(1)
	})
	d := mirror.Decide(mw, made, cp, "", hubA, hubB, nil, nil)
	if d.Conflict != mirror.ConflictNone || d.Action != mirror.ActionUpdate || d.Object.GetAnnotations()[mirror.AnnotationSourceUID] != "uid-made-again" {
		t.Errorf("Decide for the copy of the object made again: %+v, want its marks written (the new source UID), no conflict", d)
	}
	if got := mirror.ContentOf(mw, d.Object).Hash(); got != mirror.ContentOf(mw, cp).Hash() {
		t.Errorf("the copy's content changed by the re-mark")
	}
}
