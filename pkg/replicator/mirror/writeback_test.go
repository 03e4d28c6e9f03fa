package mirror_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// In TestDecideWriteBack the cluster moved from hub-a (the old hub) to hub-b (the source). oldOriginal is
// hub-a's ManifestWork (uid-mw-source, last written by kubectl at its creation, 2024-03-01T08:00:00Z), srcCopy
// hub-b's copy of it (source-written-at 2024-03-01T08:00:00Z).
// at returns the time of an RFC 3339 value.
func at(v string) *time.Time {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		panic(err)
	}
	return &t
}

func oldOriginal() *unstructured.Unstructured {
	return mod(mwSource(), func(m map[string]any) {
		meta(m)["managedFields"] = []any{
			map[string]any{"manager": "kubectl", "operation": "Update", "apiVersion": "work.open-cluster-management.io/v1", "time": "2024-03-01T08:00:00Z"},
		}
	})
}

// heldAsSourceOnA is hub-a's copy of hub-b's object (uid-on-b) that hub-a held while it was the cluster's source
// (the cluster had moved from hub-b to hub-a before it moved back): FinalizerDeleteCopies, not being deleted.
func heldAsSourceOnA() *unstructured.Unstructured {
	return mod(oldOriginal(), func(m map[string]any) {
		setLabel(m, mirror.LabelReplicatedFrom, hubB)
		setAnnotation(m, mirror.AnnotationSourceUID, "uid-on-b")
		meta(m)["finalizers"] = []any{mirror.FinalizerDeleteCopies}
	})
}

func srcCopy(t *testing.T) *unstructured.Unstructured {
	return copyOf(t, kind(t, failoverv1alpha1.KindManifestWork), oldOriginal())
}

// copyOf is the copy the replicator writes on hub-b of hub-a's object o (its cache gives LastWrite).
func copyOf(t *testing.T, k mirror.Kind, o *unstructured.Unstructured) *unstructured.Unstructured {
	return written(mirror.WithSourceWrittenAt(mirror.Desired(k, o, nil, hubA, nil), mirror.LastWrite(o)), "501")
}

// edited is old edited by the user at the given time, to the given replicas and resourceVersion, with a later
// write of the replicator's own (its has-copies mark).
func edited(old *unstructured.Unstructured, at, replicas, rv string) *unstructured.Unstructured {
	return mod(old, func(m map[string]any) {
		manifest := spec(m)["workload"].(map[string]any)["manifests"].([]any)[0].(map[string]any)
		manifest["data"].(map[string]any)["replicas"] = replicas
		meta(m)["resourceVersion"] = rv
		meta(m)["managedFields"] = []any{
			map[string]any{"manager": "kubectl", "operation": "Update", "apiVersion": "work.open-cluster-management.io/v1", "time": at},
			map[string]any{"manager": mirror.FieldManager, "operation": "Update", "apiVersion": "work.open-cluster-management.io/v1", "time": "2024-06-01T00:00:00Z"},
		}
	})
}

// withStatusWrite adds a status write (OCM's work agent) at the given time.
func withStatusWrite(at string) func(m map[string]any) {
	return func(m map[string]any) {
		mf, _ := meta(m)["managedFields"].([]any)
		meta(m)["managedFields"] = append(mf, map[string]any{"manager": "work-agent", "operation": "Update", "subresource": "status", "time": at})
	}
}

func TestDecideWriteBack(t *testing.T) {
	k := kind(t, failoverv1alpha1.KindManifestWork)
	deletedAt := func(ts string) func(m map[string]any) {
		return func(m map[string]any) { meta(m)["deletionTimestamp"] = ts }
	}
	editedOnSource := func(m map[string]any) { spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"} }
	owned := func(m map[string]any) {
		meta(m)["ownerReferences"] = []any{map[string]any{"apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet", "name": "set", "uid": "u1"}}
	}
	addon := func(name string) *unstructured.Unstructured {
		return u(map[string]any{
			"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn",
			"metadata": map[string]any{"name": name, "namespace": "cluster1", "uid": "uid-addon", "resourceVersion": "10", "creationTimestamp": "2024-03-01T08:00:00Z"},
			"spec":     map[string]any{"installNamespace": "open-cluster-management-agent-addon"},
		})
	}
	addonKind := kind(t, failoverv1alpha1.KindManagedClusterAddOn)
	cases := []struct {
		name     string
		kind     mirror.Kind
		src, old *unstructured.Unstructured
		deleted  *mirror.Deleted
		// restoredAfter: the old hub was restored from a backup (nil: one the cluster moved from).
		restoredAfter *time.Time
		want          mirror.Action
		conflict      mirror.Conflict
		// wantReplicas is the replicas value of the object written (create, update).
		wantReplicas string
	}{
		{name: "old hub lacks the object (no evidence of a delete: a restore removes objects too)", src: srcCopy(t), old: nil, want: mirror.ActionNone},
		{name: "old hub holds a copy", src: srcCopy(t), old: srcCopy(t), want: mirror.ActionNone},
		{name: "nothing changed on either side", src: srcCopy(t), old: oldOriginal(), want: mirror.ActionNone},

		{name: "deleted on the old hub, held by the work agent's finalizer: delete the copy", src: srcCopy(t),
			old: mod(oldOriginal(), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionDelete},
		{name: "deleted on the old hub, but the copy was edited on the source since: the edit wins, a conflict", src: mod(srcCopy(t), editedOnSource),
			old: mod(oldOriginal(), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionNone, conflict: mirror.ConflictCopyModified},
		{name: "deleted on the old hub, the copy was made from another object of that name (uid)", src: mod(srcCopy(t), func(m map[string]any) {
			setAnnotation(m, mirror.AnnotationSourceUID, "uid-newer")
		}), old: mod(oldOriginal(), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionNone},
		{name: "deleted on the old hub, neither side has a uid (no match on empty values)", src: mod(srcCopy(t), func(m map[string]any) {
			delete(annots(m), mirror.AnnotationSourceUID)
		}), old: mod(oldOriginal(), func(m map[string]any) {
			delete(meta(m), "uid")
			deletedAt("2024-05-01T09:59:00Z")(m)
		}), want: mirror.ActionNone},
		{name: "deleted on the old hub, the copy has no source uid (made before the mark existed)", src: mod(srcCopy(t), func(m map[string]any) {
			delete(annots(m), mirror.AnnotationSourceUID)
		}), old: mod(oldOriginal(), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionNone},
		{name: "deleted on the old hub, but the source's object is its own original", src: mod(srcCopy(t), func(m map[string]any) {
			delete(labels(m), mirror.LabelReplicatedFrom)
		}), old: mod(oldOriginal(), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionNone},
		{name: "deleted on the old hub, the source's copy is from a third hub", src: mod(srcCopy(t), func(m map[string]any) {
			setLabel(m, mirror.LabelReplicatedFrom, hubC)
		}), old: mod(oldOriginal(), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionNone},
		{name: "deleted on the old hub, the copy is being deleted already", src: mod(srcCopy(t), deleting),
			old: mod(oldOriginal(), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionNone},
		{name: "a backup ConfigMap being deleted: not written back (listed by label, no finalizer)", kind: kind(t, failoverv1alpha1.KindConfigMap),
			src: copyOf(t, kind(t, failoverv1alpha1.KindConfigMap), configMapSource()),
			old: mod(configMapSource(), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionNone},
		{name: "deleted on the old hub, the source lacks it", src: nil,
			old: mod(oldOriginal(), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionNone},
		{name: "a ManagedClusterAddOn being deleted (held by the replicator's finalizer): delete the copy", kind: addonKind,
			src: copyOf(t, addonKind, addon("helloworld")),
			old: mod(addon("helloworld"), deletedAt("2024-05-01T09:59:00Z")), want: mirror.ActionDelete},
		{name: "a ManagedClusterAddOn an add-on manager installed (ownerReferences), deleted on the old hub: not written back", kind: addonKind,
			src: copyOf(t, addonKind, addon("helloworld")),
			old: mod(addon("helloworld"), func(m map[string]any) {
				meta(m)["ownerReferences"] = []any{map[string]any{"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ClusterManagementAddOn", "name": "helloworld", "uid": "u2"}}
				deletedAt("2024-05-01T09:59:00Z")(m)
			}), want: mirror.ActionNone},

		{name: "created on the old hub, never copied: create", src: nil, old: oldOriginal(),
			want: mirror.ActionCreate, wantReplicas: "3"},
		{name: "restored old hub, created there after the restore's bound: create", src: nil, old: oldOriginal(),
			restoredAfter: at("2024-03-01T07:59:59Z"), want: mirror.ActionCreate, wantReplicas: "3"},
		{name: "restored old hub, written before the bound (its backup holds it, maybe deleted since): nothing", src: nil, old: oldOriginal(),
			restoredAfter: at("2024-03-01T08:00:00Z"), want: mirror.ActionNone},
		{name: "restored old hub without a bound (no marker time): nothing", src: nil, old: oldOriginal(),
			restoredAfter: &time.Time{}, want: mirror.ActionNone},
		{name: "copied to the source once, its delete seen there since: not made again", src: nil, old: mod(oldOriginal(), func(m map[string]any) {
			setAnnotation(m, mirror.AnnotationHasCopies, hubB)
		}), deleted: &mirror.Deleted{UID: "uid-copy-on-b", SourceUID: "uid-mw-source"}, want: mirror.ActionNone},
		{name: "copied to the source once, missing there with no delete seen (the standby lost it): made again", src: nil,
			old: mod(oldOriginal(), func(m map[string]any) {
				setAnnotation(m, mirror.AnnotationHasCopies, hubB)
			}), want: mirror.ActionCreate, wantReplicas: "3"},
		{name: "a copy marked on the old hub while it was the source, deleted there (held): delete the source's copy of it",
			src: srcCopy(t),
			old: mod(oldOriginal(), func(m map[string]any) {
				setLabel(m, mirror.LabelReplicatedFrom, hubB)
				meta(m)["finalizers"] = []any{mirror.FinalizerDeleteCopies}
				deletedAt("2024-05-01T09:59:00Z")(m)
			}), want: mirror.ActionDelete},
		{name: "a copy on the old hub being deleted without the replicator's hold: nothing", src: srcCopy(t),
			old: mod(oldOriginal(), func(m map[string]any) {
				setLabel(m, mirror.LabelReplicatedFrom, hubB)
				deletedAt("2024-05-01T09:59:00Z")(m)
			}), want: mirror.ActionNone},
		{name: "a copy the old hub held as the cluster's source (the hold), the source lacks it with no delete seen: create", src: nil,
			old: heldAsSourceOnA(), want: mirror.ActionCreate, wantReplicas: "3"},
		{name: "a copy the old hub held as the cluster's source, the source's delete of it seen: nothing", src: nil,
			old: heldAsSourceOnA(), deleted: &mirror.Deleted{UID: "uid-on-b", SourceUID: ""}, want: mirror.ActionNone},
		{name: "a copy the old hub held as the cluster's source, the delete of the source's copy made from it seen: nothing", src: nil,
			old: heldAsSourceOnA(), deleted: &mirror.Deleted{UID: "uid-copy-on-b2", SourceUID: "uid-mw-source"}, want: mirror.ActionNone},
		{name: "a copy the old hub held as the cluster's source, restored hub, written before the bound: nothing", src: nil,
			old: heldAsSourceOnA(), restoredAfter: at("2024-03-01T08:00:00Z"), want: mirror.ActionNone},
		{name: "a copy on the old hub without the hold, the source lacks it: nothing (never the cluster's object there)", src: nil,
			old: mod(heldAsSourceOnA(), func(m map[string]any) { delete(meta(m), "finalizers") }), want: mirror.ActionNone},
		{name: "a copy the old hub held as the cluster's source, edited there after the source's copy of it: update",
			src:  copyOf(t, k, heldAsSourceOnA()),
			old:  edited(heldAsSourceOnA(), "2024-05-01T09:59:00Z", "5", "2050"),
			want: mirror.ActionUpdate, wantReplicas: "5"},
		{name: "made again on the old hub with the same content after the copy was written (kubectl replace --force): update, the copy now of it",
			src: srcCopy(t),
			old: mod(oldOriginal(), func(m map[string]any) {
				meta(m)["uid"] = "uid-made-again"
				meta(m)["creationTimestamp"] = "2024-05-01T09:00:00Z"
				meta(m)["managedFields"] = []any{map[string]any{"manager": "kubectl", "operation": "Update", "apiVersion": "work.open-cluster-management.io/v1", "time": "2024-05-01T09:00:00Z"}}
			}), want: mirror.ActionUpdate, wantReplicas: "3"},
		{name: "another object of the name on the old hub, written before the copy: nothing", src: srcCopy(t),
			old: mod(oldOriginal(), func(m map[string]any) { meta(m)["uid"] = "uid-made-again" }), want: mirror.ActionNone},
		{name: "copied to another hub only: create", src: nil, old: mod(oldOriginal(), func(m map[string]any) {
			setAnnotation(m, mirror.AnnotationHasCopies, hubC)
		}), want: mirror.ActionCreate, wantReplicas: "3"},
		{name: "a ManagedClusterAddOn created on the old hub: create", kind: addonKind, src: nil, old: addon("helloworld"), want: mirror.ActionCreate},
		{name: "made by a controller (ownerReferences): the source's controller makes its own", src: nil, old: mod(oldOriginal(), owned), want: mirror.ActionNone},
		{name: "generated by a ManifestWorkReplicaSet, deleted on the old hub (the cluster left its placement): not written back", src: srcCopy(t),
			old: mod(oldOriginal(), func(m map[string]any) {
				setLabel(m, mirror.ManifestWorkReplicaSetLabel, "default.set")
				deletedAt("2024-05-01T09:59:00Z")(m)
			}), want: mirror.ActionNone},
		{name: "an add-on's ManifestWork is never written back", src: nil, old: mod(oldOriginal(), func(m map[string]any) {
			setLabel(m, mirror.AddonNameLabel, "helloworld")
		}), want: mirror.ActionNone},
		{name: "a ManagedCluster is never written back", kind: kind(t, failoverv1alpha1.KindManagedCluster), src: nil, old: mcSource(), want: mirror.ActionNone},

		{name: "edited on the old hub after the copy, copy untouched: update", src: srcCopy(t),
			old: edited(oldOriginal(), "2024-05-01T09:59:00Z", "5", "2050"), want: mirror.ActionUpdate, wantReplicas: "5"},
		{name: "edited, with a later status write: update", src: srcCopy(t),
			old: mod(edited(oldOriginal(), "2024-05-01T09:59:00Z", "5", "2050"), withStatusWrite("2024-05-01T10:05:00Z")), want: mirror.ActionUpdate, wantReplicas: "5"},
		{name: "older content restored from an etcd backup, then a status write: no roll back",
			src: copyOf(t, k, edited(oldOriginal(), "2024-04-01T00:00:00Z", "9", "2100")),
			old: mod(oldOriginal(), func(m map[string]any) {
				meta(m)["resourceVersion"] = "1000002001"
				withStatusWrite("2024-06-01T00:00:00Z")(m)
			}), want: mirror.ActionNone},
		{name: "different content written in the same second as the copy's: not written back", src: srcCopy(t),
			old: edited(oldOriginal(), "2024-03-01T08:00:00Z", "5", "2050"), want: mirror.ActionNone},
		{name: "a spec edit in the same second as the copy's write, the generation raised: update (the generation orders them)", src: srcCopy(t),
			old:  mod(edited(oldOriginal(), "2024-03-01T08:00:00Z", "5", "2050"), func(m map[string]any) { meta(m)["generation"] = int64(8) }),
			want: mirror.ActionUpdate, wantReplicas: "5"},
		{name: "a spec edit in the same second, the generation raised, but the old hub's object lost the offset the copy recorded: not compared, not written back",
			src:  mod(srcCopy(t), func(m map[string]any) { setAnnotation(m, mirror.AnnotationSourceGenerationOffset, "3") }),
			old:  mod(edited(oldOriginal(), "2024-03-01T08:00:00Z", "5", "2050"), func(m map[string]any) { meta(m)["generation"] = int64(8) }),
			want: mirror.ActionNone},
		{name: "a backup from before a replace that dropped the generation offset, restored: its higher lineage at another offset orders nothing, not written back",
			src: copyOf(t, k, mod(edited(oldOriginal(), "2024-03-01T08:00:00Z", "9", "2100"), func(m map[string]any) { meta(m)["generation"] = int64(8) })),
			old: mod(edited(oldOriginal(), "2024-03-01T08:00:00Z", "3", "1900"), func(m map[string]any) {
				meta(m)["generation"] = int64(6)
				setAnnotation(m, mirror.AnnotationGenerationOffset, "5")
			}),
			want: mirror.ActionNone},
		{name: "made again on the old hub (another uid) in the same second, at a higher generation: generations of two objects order nothing, not written back",
			src: srcCopy(t),
			old: mod(edited(oldOriginal(), "2024-03-01T08:00:00Z", "5", "2050"), func(m map[string]any) {
				meta(m)["uid"] = "uid-made-again"
				meta(m)["generation"] = int64(8)
			}),
			want: mirror.ActionNone},
		{name: "restored old hub, a higher generation written before the bound: not written back",
			src: srcCopy(t), restoredAfter: at("2024-03-01T09:00:00Z"),
			old:  mod(edited(oldOriginal(), "2024-03-01T08:00:00Z", "5", "2050"), func(m map[string]any) { meta(m)["generation"] = int64(8) }),
			want: mirror.ActionNone},
		{name: "restored old hub, a higher generation written after the bound, in the copy's second: update",
			src:           mod(srcCopy(t), func(m map[string]any) { setAnnotation(m, mirror.AnnotationSourceWrittenAt, "2024-03-01T09:00:01Z") }),
			restoredAfter: at("2024-03-01T09:00:00Z"),
			old:           mod(edited(oldOriginal(), "2024-03-01T09:00:01Z", "5", "2050"), func(m map[string]any) { meta(m)["generation"] = int64(8) }),
			want:          mirror.ActionUpdate, wantReplicas: "5"},
		{name: "older content restored from an etcd backup in the same second, a lower generation: no roll back",
			src: copyOf(t, k, mod(edited(oldOriginal(), "2024-03-01T08:00:00Z", "9", "2100"), func(m map[string]any) { meta(m)["generation"] = int64(8) })),
			old: oldOriginal(), want: mirror.ActionNone},
		{name: "content differs, only the replicator wrote after the copy's time", src: srcCopy(t),
			old: edited(oldOriginal(), "2024-02-01T00:00:00Z", "5", "2050"), want: mirror.ActionNone},
		{name: "edited on the old hub, but the copy was changed on the source since", src: mod(srcCopy(t), editedOnSource),
			old: edited(oldOriginal(), "2024-05-01T09:59:00Z", "5", "2050"), want: mirror.ActionNone},
		{name: "edited on the old hub, the copy is from a third hub", src: mod(srcCopy(t), func(m map[string]any) {
			setLabel(m, mirror.LabelReplicatedFrom, hubC)
		}), old: edited(oldOriginal(), "2024-05-01T09:59:00Z", "5", "2050"), want: mirror.ActionNone},
		{name: "edited on the old hub, the copy is being deleted", src: mod(srcCopy(t), deleting),
			old: edited(oldOriginal(), "2024-05-01T09:59:00Z", "5", "2050"), want: mirror.ActionNone},
		{name: "edited on the old hub, the copy has no source-written-at", src: mod(srcCopy(t), func(m map[string]any) {
			delete(annots(m), mirror.AnnotationSourceWrittenAt)
		}), old: edited(oldOriginal(), "2024-05-01T09:59:00Z", "5", "2050"), want: mirror.ActionNone},
		{name: "edited on the old hub, no managedFields: dated by creation, not after the copy", src: srcCopy(t),
			old: mod(edited(oldOriginal(), "2024-05-01T09:59:00Z", "5", "2050"), func(m map[string]any) { delete(meta(m), "managedFields") }), want: mirror.ActionNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kk := k
			if tc.kind.Name != "" {
				kk = tc.kind
			}
			var oldWrittenAt time.Time
			if tc.old != nil {
				oldWrittenAt = mirror.LastWrite(tc.old)
			}
			d := mirror.DecideWriteBack(kk, tc.src, tc.old, hubB, hubA, oldWrittenAt, tc.deleted, tc.restoredAfter)
			if d.Action != tc.want {
				t.Fatalf("action = %s, want %s", d.Action, tc.want)
			}
			if d.Conflict != tc.conflict {
				t.Errorf("conflict = %q, want %q", d.Conflict, tc.conflict)
			}
			switch d.Action {
			case mirror.ActionNone, mirror.ActionDelete:
				if d.Object != nil {
					t.Errorf("%s carries an object to write", d.Action)
				}
			case mirror.ActionCreate, mirror.ActionUpdate:
				if d.Object == nil {
					t.Fatal("no object to write")
				}
				if got := d.Object.GetLabels()[mirror.LabelReplicatedFrom]; got != hubA {
					t.Errorf("%s = %q, want %q: the written object is a copy of the old hub's", mirror.LabelReplicatedFrom, got, hubA)
				}
				if got := d.Object.GetAnnotations()[mirror.AnnotationSourceUID]; got != string(tc.old.GetUID()) {
					t.Errorf("%s = %q, want the old object's %q", mirror.AnnotationSourceUID, got, tc.old.GetUID())
				}
				if got, want := d.Object.GetAnnotations()[mirror.AnnotationSourceWrittenAt], oldWrittenAt.UTC().Format(time.RFC3339); got != want {
					t.Errorf("%s = %q, want the old object's last write %q", mirror.AnnotationSourceWrittenAt, got, want)
				}
				if held := slices.Contains(d.Object.GetFinalizers(), mirror.FinalizerDeleteCopies); held != mirror.HoldsDeletes(kk) {
					t.Errorf("written object holds deletes (%s): %v, want %v: the source's copy of a kind that holds deletes holds them from its first write",
						mirror.FinalizerDeleteCopies, held, mirror.HoldsDeletes(kk))
				}
				if d.Action == mirror.ActionUpdate && d.Object.GetResourceVersion() != tc.src.GetResourceVersion() {
					t.Errorf("update carries resourceVersion %q, want the source's %q (optimistic concurrency)", d.Object.GetResourceVersion(), tc.src.GetResourceVersion())
				}
				if !cmp.Equal(mirror.ContentOf(kk, d.Object), mirror.ContentOf(kk, tc.old)) {
					t.Errorf("written content differs from the old hub's: %s", cmp.Diff(mirror.ContentOf(kk, tc.old), mirror.ContentOf(kk, d.Object)))
				}
				if tc.wantReplicas != "" {
					manifest := d.Object.Object["spec"].(map[string]any)["workload"].(map[string]any)["manifests"].([]any)[0].(map[string]any)
					if got := manifest["data"].(map[string]any)["replicas"]; got != tc.wantReplicas {
						t.Errorf("replicas = %v, want %s", got, tc.wantReplicas)
					}
				}
			}
		})
	}
}

func TestMovedFrom(t *testing.T) {
	withAnnotations := func(a map[string]any) *unstructured.Unstructured {
		return mod(mcSource(), func(m map[string]any) { meta(m)["annotations"] = a })
	}
	cases := []struct {
		name string
		mc   *unstructured.Unstructured
		want string
	}{
		{"no ManagedCluster", nil, ""},
		{"no record", withAnnotations(map[string]any{}), ""},
		{"moved-from", withAnnotations(map[string]any{mirror.AnnotationMovedFrom: hubA}), hubA},
		{"cluster-hub, before SourceCleanup", withAnnotations(map[string]any{mirror.AnnotationClusterHub: hubA}), hubA},
		{"moved-from wins over cluster-hub", withAnnotations(map[string]any{mirror.AnnotationMovedFrom: hubA, mirror.AnnotationClusterHub: hubC}), hubA},
		{"naming the source itself", withAnnotations(map[string]any{mirror.AnnotationClusterHub: hubB}), ""},
		{"the agent's epoch names the hub it left (the replicator did not see the move)",
			withAnnotations(map[string]any{failoverv1alpha1.AnnotationEpoch: "epoch=4,from=" + hubA}), hubA},
		{"the agent's epoch wins over the replicator's records",
			withAnnotations(map[string]any{failoverv1alpha1.AnnotationEpoch: "epoch=4,from=" + hubA, mirror.AnnotationMovedFrom: hubC, mirror.AnnotationClusterHub: hubC}), hubA},
		{"an epoch whose write-back is finished",
			withAnnotations(map[string]any{failoverv1alpha1.AnnotationEpoch: "epoch=4,from=" + hubA, mirror.AnnotationWrittenBackEpoch: "4"}), ""},
		{"an epoch whose write-back is finished, moved-from still set",
			withAnnotations(map[string]any{failoverv1alpha1.AnnotationEpoch: "epoch=4,from=" + hubA, mirror.AnnotationWrittenBackEpoch: "4", mirror.AnnotationMovedFrom: hubC}), hubC},
		{"a newer epoch than the one written back",
			withAnnotations(map[string]any{failoverv1alpha1.AnnotationEpoch: "epoch=5,from=" + hubC, mirror.AnnotationWrittenBackEpoch: "4"}), hubC},
		{"an epoch without from (a first join)", withAnnotations(map[string]any{failoverv1alpha1.AnnotationEpoch: "epoch=1"}), ""},
		{"an epoch naming a hub the replicator does not know hides no record of its own",
			withAnnotations(map[string]any{failoverv1alpha1.AnnotationEpoch: "epoch=4,from=bootstrap-hub-x", mirror.AnnotationMovedFrom: hubC}), hubC},
		{"a malformed epoch is ignored", withAnnotations(map[string]any{failoverv1alpha1.AnnotationEpoch: "from=" + hubA}), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			configured := func(h string) bool { return h == hubA || h == hubB || h == hubC }
			if got := mirror.MovedFrom(tc.mc, hubB, configured); got != tc.want {
				t.Errorf("MovedFrom = %q, want %q", got, tc.want)
			}
		})
	}
	donePatches := []struct {
		name        string
		annotations map[string]any
		hub, want   string
	}{
		{"no record", map[string]any{}, hubA, ""},
		{"moved-from", map[string]any{mirror.AnnotationMovedFrom: hubA}, hubA,
			`{"metadata":{"annotations":{"failover.open-cluster-management.io/moved-from":null}}}`},
		{"moved-from of another hub stays", map[string]any{mirror.AnnotationMovedFrom: hubC}, hubA, ""},
		{"an epoch", map[string]any{failoverv1alpha1.AnnotationEpoch: "epoch=4,from=" + hubA}, hubA,
			`{"metadata":{"annotations":{"failover.open-cluster-management.io/written-back-epoch":"4"}}}`},
		{"an epoch and moved-from of another hub: only the epoch ends, moved-from is written back next",
			map[string]any{failoverv1alpha1.AnnotationEpoch: "epoch=4,from=" + hubA, mirror.AnnotationMovedFrom: hubC}, hubA,
			`{"metadata":{"annotations":{"failover.open-cluster-management.io/written-back-epoch":"4"}}}`},
		{"then moved-from ends", map[string]any{failoverv1alpha1.AnnotationEpoch: "epoch=4,from=" + hubA, mirror.AnnotationWrittenBackEpoch: "4",
			mirror.AnnotationMovedFrom: hubC}, hubC, `{"metadata":{"annotations":{"failover.open-cluster-management.io/moved-from":null}}}`},
		{"a finished epoch", map[string]any{failoverv1alpha1.AnnotationEpoch: "epoch=4,from=" + hubA, mirror.AnnotationWrittenBackEpoch: "4"}, hubA, ""},
		{"moved-from behind another hub's unfinished epoch ends on its own",
			map[string]any{failoverv1alpha1.AnnotationEpoch: "epoch=4,from=" + hubA, mirror.AnnotationMovedFrom: hubC}, hubC,
			`{"metadata":{"annotations":{"failover.open-cluster-management.io/moved-from":null}}}`},
	}
	for _, tc := range donePatches {
		if got := string(mirror.MovedFromDonePatch(withAnnotations(tc.annotations), tc.hub)); got != tc.want {
			t.Errorf("MovedFromDonePatch, %s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestMarkAndReleasePatches(t *testing.T) {
	mw := kind(t, failoverv1alpha1.KindManifestWork)
	original := mod(mwSource(), func(m map[string]any) { meta(m)["uid"] = "uid-1" })
	workAgent := "cluster.open-cluster-management.io/manifest-work-cleanup"
	withOurs := mod(original, func(m map[string]any) {
		meta(m)["finalizers"] = []any{workAgent, mirror.FinalizerDeleteCopies}
		setAnnotation(m, mirror.AnnotationHasCopies, hubB)
	})
	cases := []struct {
		name    string
		k       mirror.Kind
		obj     *unstructured.Unstructured
		holding []string
		want    string
	}{
		{"first copy: the hub listed and the finalizer added, both preconditions", mw, original, []string{hubB},
			`{"metadata":{"annotations":{"failover.open-cluster-management.io/has-copies":"hub-b"},"finalizers":["` + workAgent + `","` + mirror.FinalizerDeleteCopies + `"],"resourceVersion":"2001","uid":"uid-1"}}`},
		{"no copy anywhere: nothing", mw, original, nil, ""},
		{"marked already", mw, withOurs, []string{hubB}, ""},
		{"finalizer lost (e.g. removed by hand) on a marked original: added again", mw, mod(withOurs, func(m map[string]any) {
			meta(m)["finalizers"] = []any{workAgent}
		}), nil, `{"metadata":{"finalizers":["` + workAgent + `","` + mirror.FinalizerDeleteCopies + `"],"resourceVersion":"2001","uid":"uid-1"}}`},
		{"a ManagedClusterAddOn gets the finalizer too", kind(t, failoverv1alpha1.KindManagedClusterAddOn), mod(original, func(m map[string]any) {
			m["kind"] = "ManagedClusterAddOn"
			delete(meta(m), "finalizers")
		}), []string{hubB},
			`{"metadata":{"annotations":{"failover.open-cluster-management.io/has-copies":"hub-b"},"finalizers":["` + mirror.FinalizerDeleteCopies + `"],"resourceVersion":"2001","uid":"uid-1"}}`},
		{"a ManagedCluster gets the mark only (cluster-scoped)", kind(t, failoverv1alpha1.KindManagedCluster), mod(mcSource(), func(m map[string]any) { meta(m)["uid"] = "uid-1" }), []string{hubB},
			`{"metadata":{"annotations":{"failover.open-cluster-management.io/has-copies":"hub-b"},"uid":"uid-1"}}`},
		{"being deleted: nothing", mw, mod(original, deleting), []string{hubB}, ""},
		{"a copy on its cluster's source (after a failover) held by another hub: the finalizer only, no has-copies", mw,
			mod(original, func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubC) }), []string{hubB},
			`{"metadata":{"finalizers":["cluster.open-cluster-management.io/manifest-work-cleanup","failover.open-cluster-management.io/delete-copies"],"resourceVersion":"2001","uid":"uid-1"}}`},
		{"a copy on its cluster's source that no other ready hub holds (the hub it was made from is down): held all the same", mw,
			mod(original, func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubC) }), nil,
			`{"metadata":{"finalizers":["cluster.open-cluster-management.io/manifest-work-cleanup","failover.open-cluster-management.io/delete-copies"],"resourceVersion":"2001","uid":"uid-1"}}`},
		{"a copy held already: nothing", mw, mod(withOurs, func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubC) }), nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(mirror.MarkPatch(tc.k, tc.obj, tc.holding)); got != tc.want {
				t.Errorf("MarkPatch =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}

	if mirror.HoldsDelete(withOurs) {
		t.Error("HoldsDelete of an original not being deleted = true")
	}
	terminating := mod(withOurs, deleting)
	if !mirror.HoldsDelete(terminating) {
		t.Error("HoldsDelete of a deleted original with the finalizer = false")
	}
	if got, want := string(mirror.ReleasePatch(terminating)), `{"metadata":{"finalizers":["`+workAgent+`"],"resourceVersion":"2001","uid":"uid-1"}}`; got != want {
		t.Errorf("ReleasePatch = %s, want %s", got, want)
	}
	alone := mod(terminating, func(m map[string]any) { meta(m)["finalizers"] = []any{mirror.FinalizerDeleteCopies} })
	if got, want := string(mirror.ReleasePatch(alone)), `{"metadata":{"finalizers":null,"resourceVersion":"2001","uid":"uid-1"}}`; got != want {
		t.Errorf("ReleasePatch of the last finalizer = %s, want %s", got, want)
	}
	if p := mirror.ReleasePatch(original); p != nil {
		t.Errorf("ReleasePatch without the finalizer = %s, want nil", p)
	}

	// HoldCopyPatch: the hold alone, on a copy only.
	aCopy := mod(original, func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubC) })
	holdCases := []struct {
		name string
		k    mirror.Kind
		obj  *unstructured.Unstructured
		want string
	}{
		{"a copy: the finalizer, uid and resourceVersion preconditions", mw, aCopy,
			`{"metadata":{"finalizers":["` + workAgent + `","` + mirror.FinalizerDeleteCopies + `"],"resourceVersion":"2001","uid":"uid-1"}}`},
		{"a copy held already", mw, mod(aCopy, func(m map[string]any) { meta(m)["finalizers"] = []any{mirror.FinalizerDeleteCopies} }), ""},
		{"a copy being deleted", mw, mod(aCopy, deleting), ""},
		{"an original (held before its first copy: HoldPatch)", mw, original, ""},
		{"a generated ManifestWork (an add-on's)", mw, mod(aCopy, func(m map[string]any) { setLabel(m, mirror.AddonNameLabel, "helloworld") }), ""},
		{"a ManagedCluster (cluster-scoped)", kind(t, failoverv1alpha1.KindManagedCluster),
			mod(mcSource(), func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubC) }), ""},
		{"nil", mw, nil, ""},
	}
	for _, tc := range holdCases {
		if got := string(mirror.HoldCopyPatch(tc.k, tc.obj)); got != tc.want {
			t.Errorf("HoldCopyPatch, %s:\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}

	// An original taken over as a copy on another hub drops the finalizer (only the source's objects hold deletes); others stay.
	d := mirror.Desired(mw, mwSource(), withOurs, hubB, nil)
	if got := d.GetFinalizers(); len(got) != 1 || got[0] != workAgent {
		t.Errorf("Desired over an original with the finalizer: finalizers %v, want [%s]", got, workAgent)
	}
}

// TestDesiredKeepsTheTargetsEpochRecords: a ManagedCluster copy keeps the agent's epoch and the write-back record
// its own hub carries (never the source's): a hub the cluster left still says which move it wrote back.
func TestDesiredKeepsTheTargetsEpochRecords(t *testing.T) {
	k := kind(t, failoverv1alpha1.KindManagedCluster)
	src := mod(mcSource(), func(m map[string]any) {
		setAnnotation(m, failoverv1alpha1.AnnotationEpoch, "epoch=3,from="+hubB)
		setAnnotation(m, mirror.AnnotationWrittenBackEpoch, "3")
	})
	tgt := mod(mcSource(), func(m map[string]any) {
		setAnnotation(m, failoverv1alpha1.AnnotationEpoch, "epoch=2,from="+hubA)
		setAnnotation(m, mirror.AnnotationWrittenBackEpoch, "2")
	})
	got := mirror.Desired(k, src, tgt, hubA, nil).GetAnnotations()
	if got[failoverv1alpha1.AnnotationEpoch] != "epoch=2,from="+hubA || got[mirror.AnnotationWrittenBackEpoch] != "2" {
		t.Errorf("copy's epoch %q and written-back-epoch %q, want the target's own: epoch=2,from=%s and 2",
			got[failoverv1alpha1.AnnotationEpoch], got[mirror.AnnotationWrittenBackEpoch], hubA)
	}
}

// TestWithPreconditions: a patch gains the object's uid and resourceVersion beside what it changes; what is not a
// JSON object is an error.
func TestWithPreconditions(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "cluster1", "uid": "uid-1", "resourceVersion": "42"}}}
	for _, tc := range []struct {
		patch, want string
		wantErr     bool
	}{
		{`{"metadata":{"annotations":{"a":null}}}`, `{"metadata":{"annotations":{"a":null},"resourceVersion":"42","uid":"uid-1"}}`, false},
		{`{"spec":{"x":1}}`, `{"metadata":{"resourceVersion":"42","uid":"uid-1"},"spec":{"x":1}}`, false},
		{`null`, "", true},
		{`[1]`, "", true},
	} {
		got, err := mirror.WithPreconditions([]byte(tc.patch), obj)
		if (err != nil) != tc.wantErr || (!tc.wantErr && string(got) != tc.want) {
			t.Errorf("WithPreconditions(%s) = %s, %v; want %s (error %t)", tc.patch, got, err, tc.want, tc.wantErr)
		}
	}
}
