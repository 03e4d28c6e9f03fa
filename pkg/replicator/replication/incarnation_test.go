package replication

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// incarnationMarker returns hub's incarnation marker holding counters (hub → value).
func incarnationMarker(counters map[string]string) *unstructured.Unstructured {
	data := map[string]any{}
	for hub, v := range counters {
		data[hub] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": IncarnationMarker, "namespace": DefaultMarkerNamespace},
		"data":     data,
	}}
}

// counter returns the counter of hub in h's incarnation marker (0: no marker, or none of hub).
func counter(t *testing.T, h *testHub, hub string) int64 {
	t.Helper()
	obj, err := h.fake.Resource(configMapGVR).Namespace(DefaultMarkerNamespace).Get(context.Background(), IncarnationMarker, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return markerCounters(obj)[hub]
}

// TestControllerAdvancesEachHubsIncarnation: with no marker anywhere, each hub's incarnation marker is made and
// advanced every interval, and records the other hub's counter too.
func TestControllerAdvancesEachHubsIncarnation(t *testing.T) {
	kinds := []mirror.Kind{testKind(t, failoverv1alpha1.KindManagedCluster), testKind(t, failoverv1alpha1.KindManifestWork)}
	handler := &proxyHandler{}
	a := newTestHub(t, testHubA, handler, kinds)
	b := newTestHub(t, testHubB, handler, kinds)
	startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour, IncarnationInterval: 50 * time.Millisecond}, a, b)

	eventually(t, "both hubs' markers advanced past 2, each recording the other", func() bool {
		return counter(t, a, testHubA) > 2 && counter(t, a, testHubB) > 0 && counter(t, b, testHubB) > 2 && counter(t, b, testHubA) > 0
	})
}

// TestControllerRemakesWhatARestoredHubLost: hub A, the cluster's source, shows incarnation 3 while hub B's marker
// records 7 for it: A was restored from a backup. B holds copies of two works A no longer holds: work-lost, made
// from A in incarnation 6 (after the backup), is made again on A, an original holding deletes, with the copy's
// content; work-gone, copied in incarnation 2 (before the backup: A held it then, so its absence is a delete the
// replicator did not see, or made while B was out of the configuration), is not, and its copy is kept. Once every
// object was compared, A's counter is advanced above what was recorded (8): copies made from now on are of the
// new incarnation.
func TestControllerRemakesWhatARestoredHubLost(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	copyAt := func(name, configMap string, incarnation int64) *unstructured.Unstructured {
		src := manifestWork(testCluster, name, configMap, nil)
		src.SetUID(types.UID("uid-" + name))
		src.SetGeneration(1)
		cp := mirror.WithSourceIncarnation(mirror.Desired(mwKind, src, nil, testHubA, nil), incarnation)
		cp.SetUID(types.UID("copy-of-" + name))
		return cp
	}
	lost, gone := copyAt("work-lost", "cm-lost", 6), copyAt("work-gone", "cm-gone", 2)
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil),
		incarnationMarker(map[string]string{testHubA: "3", testHubB: "4"}))
	b := newTestHub(t, testHubB, handler, kinds, managedCluster(testCluster, map[string]any{mirror.LabelReplicatedFrom: testHubA}),
		lost, gone, incarnationMarker(map[string]string{testHubA: "7", testHubB: "5"}))
	_, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour, IncarnationInterval: 100 * time.Millisecond}, a, b)

	eventually(t, "work-lost made again on hub-a", func() bool { return a.get(t, mwKind, testCluster, "work-lost") != nil })
	eventually(t, "hub-a's incarnation advanced above the recorded 7", func() bool { return counter(t, a, testHubA) > 7 })
	made := a.get(t, mwKind, testCluster, "work-lost")
	if !equalSpec(made, lost) || mirror.IsCopy(made) || !slices.Contains(made.GetFinalizers(), mirror.FinalizerDeleteCopies) {
		t.Errorf("work-lost made again on hub-a: spec %v, labels %v, finalizers %v; want the copy's spec, an original holding deletes",
			specOf(made), made.GetLabels(), made.GetFinalizers())
	}
	if got := a.get(t, mwKind, testCluster, "work-gone"); got != nil {
		t.Errorf("work-gone made again on hub-a from a copy of incarnation 2, before the state hub-a shows: %v", specOf(got))
	}
	if got := b.get(t, mwKind, testCluster, "work-gone"); got == nil {
		t.Errorf("hub-b's copy of work-gone deleted: no delete of it was seen")
	}
	if got := b.get(t, mwKind, testCluster, "work-lost"); got == nil || got.GetDeletionTimestamp() != nil {
		t.Errorf("hub-b's copy of work-lost after the remake: %v, want it kept", got)
	}
	restored := strings.Join(recorder.messages(ReasonHubRestored), "\n")
	if !strings.Contains(restored, "hub hub-a shows incarnation 3, and 7 was recorded") {
		t.Errorf("HubRestored events %q, want one naming hub-a, 3 and 7", restored)
	}
	written := strings.Join(recorder.messages(ReasonWrittenBack), "\n")
	if !strings.Contains(written, "ManifestWork/"+testCluster+"/work-lost: hub hub-a lost it (it shows incarnation 3, the copy on hub hub-b was made in incarnation 6)") ||
		strings.Contains(written, "work-gone") {
		t.Errorf("WrittenBack events %q, want one for work-lost and none for work-gone", written)
	}
}
