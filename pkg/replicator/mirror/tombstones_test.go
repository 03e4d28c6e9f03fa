package mirror

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

func TestTombstones(t *testing.T) {
	tombstones := map[string]Deleted{
		TombstoneKey(failoverv1alpha1.KindManifestWork, "work-2"):         {UID: "u2"},
		TombstoneKey(failoverv1alpha1.KindManifestWork, "work-1"):         {UID: "u1", SourceUID: "s1"},
		TombstoneKey(failoverv1alpha1.KindManagedClusterAddOn, "addon-1"): {UID: "u3", SourceUID: "s3"},
	}
	value := FormatTombstones(tombstones)
	if want := "ManagedClusterAddOn/addon-1=u3/s3,ManifestWork/work-1=u1/s1,ManifestWork/work-2=u2/"; value != want {
		t.Errorf("FormatTombstones = %q, want %q (sorted)", value, want)
	}
	if diff := cmp.Diff(tombstones, ParseTombstones(value)); diff != "" {
		t.Errorf("ParseTombstones(FormatTombstones(x)) differs from x (-want +got):\n%s", diff)
	}
	got := ParseTombstones("ManifestWork/w=u, junk, =u, ManifestWork/=u, /w=u, ManifestWork/x=, a/b/c=u, ManifestWork/y=u/s")
	want := map[string]Deleted{"ManifestWork/w": {UID: "u"}, "ManifestWork/y": {UID: "u", SourceUID: "s"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("malformed entries are skipped (-want +got):\n%s", diff)
	}
	if FormatTombstones(nil) != "" || len(ParseTombstones("")) != 0 {
		t.Errorf("no tombstones: %q, %v", FormatTombstones(nil), ParseTombstones(""))
	}
}

func TestTombstonesPatch(t *testing.T) {
	mc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster"}}
	mc.SetName("c1")
	mc.SetUID("mc-uid")
	mc.SetResourceVersion("7")
	one := map[string]Deleted{"ManifestWork/w": {UID: "u"}}
	if TombstonesPatch(mc, nil) != nil {
		t.Errorf("nothing recorded, none asked: want no patch")
	}
	var patch struct {
		Metadata struct {
			UID             string             `json:"uid"`
			ResourceVersion string             `json:"resourceVersion"`
			Annotations     map[string]*string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(TombstonesPatch(mc, one), &patch); err != nil {
		t.Fatal(err)
	}
	if v := patch.Metadata.Annotations[AnnotationDeletesSeen]; patch.Metadata.UID != "mc-uid" || patch.Metadata.ResourceVersion != "7" || v == nil || *v != "ManifestWork/w=u/" {
		t.Errorf("record patch: %+v, want the value with uid and resourceVersion preconditions", patch)
	}
	mc.SetAnnotations(map[string]string{AnnotationDeletesSeen: "ManifestWork/w=u/"})
	if TombstonesPatch(mc, one) != nil {
		t.Errorf("recorded already: want no patch")
	}
	patch.Metadata.Annotations = nil
	if err := json.Unmarshal(TombstonesPatch(mc, nil), &patch); err != nil {
		t.Fatal(err)
	}
	if v, ok := patch.Metadata.Annotations[AnnotationDeletesSeen]; !ok || v != nil {
		t.Errorf("removal patch: annotation %v (present %t), want null", v, ok)
	}
}

// TestDeletesMade: the log keeps its order, skips what it holds and malformed lines, and keeps the newest
// MaxDeletesMade.
func TestDeletesMade(t *testing.T) {
	w := func(name, uid, source string) DeleteMade {
		return DeleteMade{Key: DeleteMadeKey(failoverv1alpha1.KindManifestWork, "cluster1", name), Deleted: Deleted{UID: uid, SourceUID: source}}
	}
	log := WithDeletesMade(WithDeletesMade(nil, w("work-2", "u2", "")), w("work-1", "u1", "s1"), w("work-2", "u2", ""))
	value := FormatDeletesMade(log)
	if want := "ManifestWork/cluster1/work-2=u2/\nManifestWork/cluster1/work-1=u1/s1\n"; value != want {
		t.Fatalf("FormatDeletesMade = %q, want %q (oldest first, nothing twice)", value, want)
	}
	if got := ParseDeletesMade(value + "bad\nManifestWork/x=u\n/a/b=u\nManifestWork//b=u\nManifestWork/a/y=\nManifestWork/a/z\n"); !cmp.Equal(got, log) {
		t.Errorf("ParseDeletesMade = %v, want %v (malformed lines skipped)", got, log)
	}
	for i := 0; i < MaxDeletesMade+5; i++ {
		log = WithDeletesMade(log, w("work-n", fmt.Sprintf("n%d", i), ""))
	}
	if len(log) != MaxDeletesMade || log[0].UID != "n5" || log[len(log)-1].UID != fmt.Sprintf("n%d", MaxDeletesMade+4) {
		t.Errorf("log after %d more deletes: %d entries, first %v, last %v; want the newest %d", MaxDeletesMade+5, len(log), log[0], log[len(log)-1], MaxDeletesMade)
	}
}

// TestDeleteMadeOf: an object remains of a logged delete when it is the deleted object, the original the deleted
// copy was made from, or a copy of either; the key must match, and another UID is another object.
func TestDeleteMadeOf(t *testing.T) {
	key := DeleteMadeKey(failoverv1alpha1.KindManifestWork, "cluster1", "work-1")
	log := []DeleteMade{
		{Key: DeleteMadeKey(failoverv1alpha1.KindManifestWork, "cluster1", "other"), Deleted: Deleted{UID: "u-other"}},
		{Key: DeleteMadeKey(failoverv1alpha1.KindManifestWork, "cluster2", "work-1"), Deleted: Deleted{UID: "u-elsewhere"}},
		{Key: key, Deleted: Deleted{UID: "u-copy-as-source", SourceUID: "u-original"}},
	}
	obj := func(uid string, copyOf string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "work-1", "namespace": "cluster1", "uid": uid}}}
		if copyOf != "" {
			o.SetLabels(map[string]string{LabelReplicatedFrom: "hub-a"})
			o.SetAnnotations(map[string]string{AnnotationSourceUID: copyOf})
		}
		return o
	}
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		want    bool
		wantOwn bool
	}{
		{name: "the deleted object itself (its hub restored)", obj: obj("u-copy-as-source", "u-original"), want: true, wantOwn: true},
		{name: "the deleted object rewritten in place as a copy of a newer one: still its own UID", obj: obj("u-copy-as-source", "u-newer"), want: true, wantOwn: true},
		{name: "the original the deleted copy was made from", obj: obj("u-original", ""), want: true, wantOwn: true},
		{name: "a copy of the original", obj: obj("u-c", "u-original"), want: true},
		{name: "a copy of the deleted object", obj: obj("u-c2", "u-copy-as-source"), want: true},
		{name: "an object made again under the name (another UID)", obj: obj("u-new", ""), want: false},
		{name: "a copy of an object made again", obj: obj("u-c3", "u-new"), want: false},
		{name: "a UID logged under another name", obj: obj("u-other", ""), want: false},
		{name: "a UID logged in another namespace", obj: obj("u-elsewhere", ""), want: false},
		{name: "no object", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, own, got := DeleteMadeOf(log, key, tt.obj); got != tt.want || own != tt.wantOwn {
				t.Errorf("DeleteMadeOf = own %t, %t; want own %t, %t", own, got, tt.wantOwn, tt.want)
			}
		})
	}
}
