package hubconn

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// benchWork returns ManifestWork cluster/name as the replication benchmark makes it (one ConfigMap with a
// 256-byte value), with the metadata the API server adds; a copy with the replicator's marks when isCopy.
func benchWork(cluster, name string, isCopy bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
		"metadata": map[string]any{
			"name": name, "namespace": cluster, "uid": "6f1d2c3e-1b2a-4c5d-9e8f-0a1b2c3d4e5f", "resourceVersion": "123456",
			"generation": int64(1), "creationTimestamp": "2026-12-03T10:00:00Z",
			"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Update", "time": "2026-12-03T10:00:00Z",
				"apiVersion": "work.open-cluster-management.io/v1", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:spec": map[string]any{".": map[string]any{}, "f:workload": map[string]any{}}}}},
		},
		"spec": map[string]any{"workload": map[string]any{"manifests": []any{map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "default"},
			"data": map[string]any{"value": "init", "payload": strings.Repeat("x", 256)},
		}}}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Applied", "status": "True", "reason": "AppliedManifestWorkComplete"}}},
	}}
	if isCopy {
		u.SetLabels(map[string]string{mirror.LabelReplicatedFrom: "hub-a"})
		u.SetAnnotations(map[string]string{
			mirror.AnnotationContentHash: "0123456789abcdef", mirror.AnnotationSourceResourceVersion: "98765",
			mirror.AnnotationSourceUID: "7a1d2c3e-1b2a-4c5d-9e8f-0a1b2c3d4e5f", mirror.AnnotationSourceWrittenAt: "2026-12-03T10:00:00Z",
		})
	}
	return u
}

// BenchmarkCachedObjectMemory reports the heap one cached ManifestWork costs (B/object, after a GC, over
// b.N objects held at once): an original, a copy cached whole, a copy cached without its mirrored fields, and a
// work its hub generated (an add-on's), cached as its metadata.
func BenchmarkCachedObjectMemory(b *testing.B) {
	for _, tc := range []struct {
		name      string
		isCopy    bool
		keepWhole bool
	}{
		{"original", false, true},
		{"copy-whole", true, true},
		{"copy-without-content", true, false},
		{"generated", false, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			inputs := make([]*unstructured.Unstructured, b.N)
			for i := range inputs {
				inputs[i] = benchWork(fmt.Sprintf("cluster-%04d", i/10), fmt.Sprintf("work-%02d", i%10), tc.isCopy)
				if tc.name == "generated" {
					// An add-on manager's work: as large as an original, labelled with its add-on.
					inputs[i].SetLabels(map[string]string{mirror.AddonNameLabel: "addon-x"})
				}
			}
			keepWhole := func(string, string) bool { return tc.keepWhole }
			held := make([]any, b.N)
			b.ResetTimer()
			for i := range inputs {
				out, err := compact(inputs[i], &manifestWork, keepWhole)
				if err != nil {
					b.Fatal(err)
				}
				held[i] = out
				inputs[i] = nil
			}
			b.StopTimer()
			if c, ok := held[0].(*cachedObject); !ok || (c.contentHash == "") != tc.keepWhole || (tc.name == "generated" && c.object().Object["spec"] != nil) {
				b.Fatalf("cached %T, want whole=%v", held[0], tc.keepWhole)
			}
			// The heap with the cached objects, less the heap once they are dropped.
			var with, without runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&with)
			for i := range held {
				held[i] = nil
			}
			runtime.GC()
			runtime.ReadMemStats(&without)
			b.ReportMetric(float64(int64(with.HeapAlloc)-int64(without.HeapAlloc))/float64(b.N), "B/object")
		})
	}
}
