package hubconn

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// manifestWork is the mirrored kind ManifestWork.
var manifestWork, _ = mirror.KindByName(failoverv1alpha1.KindManifestWork)

func TestCompactRoundTrip(t *testing.T) {
	in := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
		"metadata": map[string]any{
			"name": "w", "namespace": "c1", "resourceVersion": "7", "labels": map[string]any{"a": "b"},
			"managedFields": []any{map[string]any{"manager": "kubectl"}},
		},
		"spec":   map[string]any{"workload": map[string]any{"manifests": []any{map[string]any{"n": int64(3), "f": 1.5}}}},
		"status": map[string]any{"conditions": []any{}},
	}}
	out, err := compact(in.DeepCopy(), &manifestWork, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := out.(*cachedObject)
	if !ok {
		t.Fatalf("transform returned %T, want *cachedObject", out)
	}
	if key, err := cache.MetaNamespaceKeyFunc(c); err != nil || key != "c1/w" {
		t.Errorf("informer key %q (%v), want c1/w", key, err)
	}
	want := in.DeepCopy()
	want.SetManagedFields(nil)
	delete(want.Object, "status")
	if diff := cmp.Diff(want.Object, c.object().Object); diff != "" {
		t.Errorf("decoded object (-want +got), numbers must stay int64 where integral:\n%s", diff)
	}
	if copied := c.DeepCopyObject().(*cachedObject); copied.object() == nil || copied.name != "w" {
		t.Errorf("DeepCopyObject lost the object")
	}
}

func TestCompactKeepsLastWrite(t *testing.T) {
	in := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
		"metadata": map[string]any{
			"name": "w", "namespace": "c1", "resourceVersion": "7", "creationTimestamp": "2026-01-01T00:00:00Z",
			"managedFields": []any{
				map[string]any{"manager": "kubectl", "operation": "Update", "time": "2026-01-02T00:00:00Z"},
				map[string]any{"manager": "klusterlet-failover-replicator", "operation": "Update", "time": "2026-01-03T00:00:00Z"},
				map[string]any{"manager": "work-agent", "operation": "Update", "subresource": "status", "time": "2026-01-04T00:00:00Z"},
			},
		},
	}}
	out, err := compact(in, &manifestWork, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := out.(*cachedObject)
	if want := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC); !c.lastWrite.Equal(want) {
		t.Errorf("lastWrite = %s, want kubectl's %s (not the replicator's, not a status write)", c.lastWrite, want)
	}
	if mf := c.object().GetManagedFields(); len(mf) != 0 {
		t.Errorf("managedFields kept in the cache: %v", mf)
	}
}

func TestCompactLease(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	lease := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": map[string]any{"name": "managed-cluster-lease", "namespace": "c1", "creationTimestamp": created.Format(time.RFC3339)},
		"spec":     map[string]any{"renewTime": "2026-01-02T03:05:06.123456Z"},
	}}
	out, err := compact(lease, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := out.(*cachedObject)
	wantRenew := time.Date(2026, 1, 2, 3, 5, 6, 123456000, time.UTC)
	if c.lease == nil || !c.lease.set || !c.lease.renewTime.Equal(wantRenew) || !c.lease.created.Equal(created) {
		t.Errorf("lease times %+v, want renewTime %v and created %v", c.lease, wantRenew, created)
	}
	if c.raw != nil {
		t.Errorf("a lease keeps no JSON, got %d bytes", len(c.raw))
	}
}

// A ClusterManagementAddOn copy is cached without its spec, but whether it installs by strategy is read first.
func TestCompactKeepsInstallStrategyOfACopy(t *testing.T) {
	cma, _ := mirror.KindByName(failoverv1alpha1.KindClusterManagementAddOn)
	for _, tc := range []struct {
		strategy string
		want     bool
	}{{"Placements", true}, {mirror.AddOnInstallStrategyManual, false}} {
		in := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ClusterManagementAddOn",
			"metadata": map[string]any{"name": "hello", "resourceVersion": "3",
				"labels": map[string]any{mirror.LabelReplicatedFrom: "hub-a"}},
			"spec": map[string]any{"installStrategy": map[string]any{"type": tc.strategy}},
		}}
		out, err := compact(in, &cma, func(string, string) bool { return false })
		if err != nil {
			t.Fatal(err)
		}
		c := out.(*cachedObject)
		if c.whole() {
			t.Fatalf("%s: the copy was cached whole: the check below would prove nothing", tc.strategy)
		}
		if _, found := c.object().Object["spec"]; found {
			t.Errorf("%s: the copy's spec was cached", tc.strategy)
		}
		if c.installsByStrategy != tc.want {
			t.Errorf("%s: installsByStrategy = %t, want %t", tc.strategy, c.installsByStrategy, tc.want)
		}
	}
}

// TestCompactKeepsOnlyTheMetadataOfAGeneratedObject: an add-on manager's ManifestWork (generated on its hub,
// never mirrored) is cached as its metadata, from which it is still recognised as generated; an original is
// cached whole.
func TestCompactKeepsOnlyTheMetadataOfAGeneratedObject(t *testing.T) {
	generated := benchWork("c1", "addon-x-deploy-0", false)
	generated.SetLabels(map[string]string{mirror.AddonNameLabel: "x"})
	generated.SetFinalizers([]string{"cluster.open-cluster-management.io/manifest-work-cleanup"})
	out, err := compact(generated.DeepCopy(), &manifestWork, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*cachedObject).object()
	want := generated.DeepCopy()
	want.SetManagedFields(nil)
	want.Object = map[string]any{"apiVersion": want.GetAPIVersion(), "kind": want.GetKind(), "metadata": want.Object["metadata"]}
	if diff := cmp.Diff(want.Object, got.Object); diff != "" {
		t.Errorf("cached generated work (-want +got):\n%s", diff)
	}
	if !mirror.Excluded(manifestWork, got) {
		t.Errorf("the cached generated work is no longer recognised as generated: %v", got.GetLabels())
	}

	original := benchWork("c1", "mine", false)
	out, err = compact(original.DeepCopy(), &manifestWork, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, hasSpec := out.(*cachedObject).object().Object["spec"]; !hasSpec {
		t.Errorf("an original ManifestWork was cached without its spec")
	}
}
