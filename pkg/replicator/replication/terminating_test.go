package replication

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	workv1 "open-cluster-management.io/api/work/v1"

	replv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// TestControllerReplacesACopyLeftTerminatingOnAHubTheClusterLeft: after a round trip A → B → A, hub B's copy of
// work-1 still carries OCM's work-agent cleanup finalizer, which only a work agent connected to B removes. The
// user deleted work-1 on hub A and made it again (another UID). The copy on B, being deleted, must go without
// that finalizer (B's delete finishes, nothing stays Terminating), B must not count as holding a copy of the new
// work-1 meanwhile, and the new work-1 is then copied to B like any new object.
func TestControllerReplacesACopyLeftTerminatingOnAHubTheClusterLeft(t *testing.T) {
	mcKind := testKind(t, replv1alpha1.KindManagedCluster)
	mwKind := testKind(t, replv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	remade := manifestWork(testCluster, "work-1", "cm-1-v2", nil)
	remade.SetUID("uid-new")
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), remade)

	mcCopy := managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA})
	left := manifestWork(testCluster, "work-1", "cm-1", map[string]any{mirror.LabelReplicatedFrom: testHubA})
	left.SetUID("uid-copy")
	left.SetAnnotations(map[string]string{mirror.AnnotationSourceUID: "uid-old"})
	left.SetFinalizers([]string{workv1.ManifestWorkFinalizer})
	deleted := metav1.NewTime(time.Now().Add(-time.Minute))
	left.SetDeletionTimestamp(&deleted)
	b := newTestHub(t, testHubB, handler, kinds, mcCopy, left)
	// The apiserver removes an object being deleted once its last finalizer goes.
	b.fake.PrependReactor("patch", "manifestworks", func(action clienttesting.Action) (bool, runtime.Object, error) {
		patch := action.(clienttesting.PatchAction)
		obj, err := b.fake.Tracker().Get(mwKind.GVR, patch.GetNamespace(), patch.GetName())
		if err != nil {
			return false, nil, nil
		}
		u := obj.(*unstructured.Unstructured)
		var body struct {
			Metadata map[string]any `json:"metadata"`
		}
		if err := json.Unmarshal(patch.GetPatch(), &body); err != nil || u.GetDeletionTimestamp() == nil {
			return false, nil, nil
		}
		if finalizers, set := body.Metadata["finalizers"]; set && finalizers == nil {
			return true, u, b.fake.Tracker().Delete(mwKind.GVR, patch.GetNamespace(), patch.GetName())
		}
		return false, nil, nil
	})
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)

	eventually(t, "hub-b holds a copy of the new work-1", func() bool {
		cp, _ := b.hub.Peek(mwKind.Name, testCluster, "work-1")
		return cp != nil && cp.GetDeletionTimestamp() == nil && cp.GetAnnotations()[mirror.AnnotationSourceUID] == "uid-new"
	})
	quiesce(t, c, a, b)
	if got := b.get(t, mwKind, testCluster, "work-1"); got == nil || got.GetDeletionTimestamp() != nil || got.GetUID() == "uid-copy" {
		t.Errorf("hub-b's work-1: %v, want a new copy", got)
	} else if cmpSpec := specOf(got); cmpSpec == nil {
		t.Errorf("hub-b's new copy has no spec")
	}
	if got := a.get(t, mwKind, testCluster, "work-1").GetAnnotations()[mirror.AnnotationHasCopies]; got != testHubB {
		t.Errorf("hub-a's new work-1 %s = %q, want %q once hub-b holds its copy", mirror.AnnotationHasCopies, got, testHubB)
	}
	// The old copy went by its finalizer's removal (a sync that reads it from a cache not yet showing its end
	// patches again, and finds it gone); no delete was sent for an object being deleted.
	var patches, deletes int
	for _, w := range b.writes(mwKind) {
		switch w[:6] {
		case "patch ":
			patches++
		case "delete":
			deletes++
		}
	}
	if patches == 0 || deletes != 0 {
		t.Errorf("writes of work-1 on hub-b: %v, want the finalizer's removal, no delete, then the create", b.writes(mwKind))
	}
}
