package mirror

import (
	"encoding/json"
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
