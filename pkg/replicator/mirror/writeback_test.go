package mirror_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	replv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// In TestDecideWriteBack the cluster was on hub-a (the old source) and moved to hub-b (the source) at
// movedAt. oldOriginal is hub-a's ManifestWork (resourceVersion 2001, created 2024-03-01), srcCopy hub-b's
// copy of it made at hub-a's resourceVersion 2001.
const (
	movedAt     = "2024-05-01T10:00:00Z"
	replManager = "klusterlet-failover-replicator"
)

func oldOriginal() *unstructured.Unstructured {
	return mod(mwSource(), func(m map[string]any) {
		meta(m)["managedFields"] = []any{
			map[string]any{"manager": "kubectl", "operation": "Update", "apiVersion": "work.open-cluster-management.io/v1", "time": "2024-03-01T08:00:00Z"},
		}
	})
}

func srcCopy(t *testing.T) *unstructured.Unstructured {
	return written(mirror.Desired(kind(t, replv1alpha1.KindManifestWork), mwSource(), nil, hubA, nil), "501")
}

// edited is old edited by the user at the given time, to the given replicas and resourceVersion.
func edited(old *unstructured.Unstructured, at, replicas, rv string) *unstructured.Unstructured {
	return mod(old, func(m map[string]any) {
		manifest := spec(m)["workload"].(map[string]any)["manifests"].([]any)[0].(map[string]any)
		manifest["data"].(map[string]any)["replicas"] = replicas
		meta(m)["resourceVersion"] = rv
		meta(m)["managedFields"] = []any{
			map[string]any{"manager": "kubectl", "operation": "Update", "apiVersion": "work.open-cluster-management.io/v1", "time": at},
			map[string]any{"manager": replManager, "operation": "Update", "apiVersion": "work.open-cluster-management.io/v1", "time": "2024-06-01T00:00:00Z"},
		}
	})
}

func TestDecideWriteBack(t *testing.T) {
	k := kind(t, replv1alpha1.KindManifestWork)
	moved, err := time.Parse(time.RFC3339, movedAt)
	if err != nil {
		t.Fatal(err)
	}
	deletedAt := func(ts string) func(m map[string]any) {
		return func(m map[string]any) { meta(m)["deletionTimestamp"] = ts }
	}
	cases := []struct {
		name     string
		src, old *unstructured.Unstructured
		kind     replv1alpha1.ReplicatedKind
		want     mirror.Action
		// wantReplicas is the replicas value of the object written (create, update).
		wantReplicas string
	}{
		{name: "old hub lacks the object (no evidence of a delete: it may be restored)", src: srcCopy(t), old: nil, want: mirror.ActionNone},
		{name: "old hub holds a copy", src: srcCopy(t), old: srcCopy(t), want: mirror.ActionNone},
		{name: "nothing changed on either side", src: srcCopy(t), old: oldOriginal(), want: mirror.ActionNone},

		{name: "deleted on the old source before the move: delete the copy", src: srcCopy(t),
			old: mod(oldOriginal(), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionDelete},
		{name: "deleted on the old hub after the move (fence override, namespace cleanup): kept", src: srcCopy(t),
			old: mod(oldOriginal(), deletedAt("2024-05-01T10:00:01Z")), want: mirror.ActionNone},
		{name: "deleted before the move, but the source's object is its own original", src: mod(srcCopy(t), func(m map[string]any) {
			delete(labels(m), mirror.LabelReplicatedFrom)
		}), old: mod(oldOriginal(), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionNone},
		{name: "deleted before the move, the source's copy is from a third hub", src: mod(srcCopy(t), func(m map[string]any) {
			setLabel(m, mirror.LabelReplicatedFrom, hubC)
		}), old: mod(oldOriginal(), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionNone},
		{name: "deleted before the move, the copy is being deleted already", src: mod(srcCopy(t), deleting),
			old: mod(oldOriginal(), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionNone},
		{name: "deleted before the move, the source lacks it", src: nil,
			old: mod(oldOriginal(), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionNone},

		{name: "created on the old source before the move, never copied: create", src: nil, old: oldOriginal(),
			want: mirror.ActionCreate, wantReplicas: "3"},
		{name: "created on the old hub after the move: kept there", src: nil, old: mod(oldOriginal(), func(m map[string]any) {
			meta(m)["creationTimestamp"] = "2024-05-01T10:00:30Z"
		}), want: mirror.ActionNone},
		{name: "copied to the source once, deleted there since: not made again", src: nil, old: mod(oldOriginal(), func(m map[string]any) {
			setAnnotation(m, mirror.AnnotationHasCopies, hubB)
		}), want: mirror.ActionNone},
		{name: "copied to another hub only: create", src: nil, old: mod(oldOriginal(), func(m map[string]any) {
			setAnnotation(m, mirror.AnnotationHasCopies, hubC)
		}), want: mirror.ActionCreate, wantReplicas: "3"},
		{name: "an add-on's ManifestWork is never written back", src: nil, old: mod(oldOriginal(), func(m map[string]any) {
			setLabel(m, mirror.AddonNameLabel, "helloworld")
		}), want: mirror.ActionNone},
		{name: "a ManagedCluster is never written back", kind: replv1alpha1.KindManagedCluster, src: nil, old: mcSource(), want: mirror.ActionNone},

		{name: "edited on the old source before the move, copy untouched: update", src: srcCopy(t),
			old: edited(oldOriginal(), "2024-05-01T09:59:00Z", "5", "2050"), want: mirror.ActionUpdate, wantReplicas: "5"},
		{name: "edited before the move, status reported after it: update", src: srcCopy(t),
			old: mod(edited(oldOriginal(), "2024-05-01T09:59:00Z", "5", "2050"), func(m map[string]any) {
				meta(m)["managedFields"] = append(meta(m)["managedFields"].([]any), map[string]any{
					"manager": "work-agent", "operation": "Update", "subresource": "status", "time": "2024-05-01T10:05:00Z",
				})
			}), want: mirror.ActionUpdate, wantReplicas: "5"},
		{name: "edited after the move (fence override): kept there", src: srcCopy(t),
			old: edited(oldOriginal(), "2024-05-01T10:00:05Z", "5", "2050"), want: mirror.ActionNone},
		{name: "older content at an older resourceVersion (etcd restored from a backup): no roll back", src: written(
			mirror.Desired(k, edited(oldOriginal(), "2024-04-01T00:00:00Z", "9", "2100"), nil, hubA, nil), "501"),
			old: oldOriginal(), want: mirror.ActionNone},
		{name: "edited before the move, but the copy was changed on the source since", src: mod(srcCopy(t), func(m map[string]any) {
			spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
		}), old: edited(oldOriginal(), "2024-05-01T09:59:00Z", "5", "2050"), want: mirror.ActionNone},
		{name: "edited before the move, the copy is from a third hub", src: mod(srcCopy(t), func(m map[string]any) {
			setLabel(m, mirror.LabelReplicatedFrom, hubC)
		}), old: edited(oldOriginal(), "2024-05-01T09:59:00Z", "5", "2050"), want: mirror.ActionNone},
		{name: "only the replicator wrote on the old hub since (has-copies)", src: srcCopy(t), old: mod(oldOriginal(), func(m map[string]any) {
			setAnnotation(m, mirror.AnnotationHasCopies, hubB)
			meta(m)["resourceVersion"] = "2060"
		}), want: mirror.ActionNone},
		{name: "unparsable resourceVersion", src: srcCopy(t), old: edited(oldOriginal(), "2024-05-01T09:59:00Z", "5", "x"), want: mirror.ActionNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kk := k
			if tc.kind != "" {
				kk = kind(t, tc.kind)
			}
			d := mirror.DecideWriteBack(kk, tc.src, tc.old, hubB, hubA, moved, replManager)
			if d.Action != tc.want {
				t.Fatalf("action = %s, want %s", d.Action, tc.want)
			}
			switch d.Action {
			case mirror.ActionCreate, mirror.ActionUpdate:
				if d.Object == nil {
					t.Fatal("no object to write")
				}
				if got := d.Object.GetLabels()[mirror.LabelReplicatedFrom]; got != hubA {
					t.Errorf("%s = %q, want %q: the written object is a copy of the old source's", mirror.LabelReplicatedFrom, got, hubA)
				}
				if got := d.Object.GetAnnotations()[mirror.AnnotationSourceResourceVersion]; got != tc.old.GetResourceVersion() {
					t.Errorf("%s = %q, want the old object's %q", mirror.AnnotationSourceResourceVersion, got, tc.old.GetResourceVersion())
				}
				manifest := d.Object.Object["spec"].(map[string]any)["workload"].(map[string]any)["manifests"].([]any)[0].(map[string]any)
				if got := manifest["data"].(map[string]any)["replicas"]; got != tc.wantReplicas {
					t.Errorf("replicas = %v, want %s", got, tc.wantReplicas)
				}
				if d.Action == mirror.ActionUpdate && d.Object.GetResourceVersion() != tc.src.GetResourceVersion() {
					t.Errorf("update carries resourceVersion %q, want the source's %q (optimistic concurrency)", d.Object.GetResourceVersion(), tc.src.GetResourceVersion())
				}
				if !cmp.Equal(mirror.ContentOf(kk, d.Object), mirror.ContentOf(kk, tc.old)) {
					t.Errorf("written content differs from the old source's: %s", cmp.Diff(mirror.ContentOf(kk, tc.old), mirror.ContentOf(kk, d.Object)))
				}
			}
		})
	}
}
