package replication

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// TestFailedWriteAfterCatchUpMakesTheHubBehind: once hub-b is caught up and reported in step, a copy that cannot
// be written there (its apiserver refuses the create) makes hub-b behind on the source's ManagedCluster and not
// caught up, until the write goes through; then it is in step again.
func TestFailedWriteAfterCatchUpMakesTheHubBehind(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), manifestWork(testCluster, "work-1", "cm-1", nil))
	b := newTestHub(t, testHubB, handler, kinds)
	var refuse atomic.Bool
	b.fake.PrependReactor("create", "manifestworks", func(clienttesting.Action) (bool, runtime.Object, error) {
		if refuse.Load() {
			return true, nil, apierrors.NewInternalError(errRefusedForTest)
		}
		return false, nil, nil
	})
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)
	steps := func() (string, string) {
		mc, _ := a.hub.Peek(mcKind.Name, "", testCluster)
		if mc == nil {
			return "", ""
		}
		return mc.GetAnnotations()[mirror.AnnotationHubsInStep], mc.GetAnnotations()[mirror.AnnotationHubsBehind]
	}
	eventually(t, "hub-b in step", func() bool { in, _ := steps(); return in == testHubB && c.Snapshot().CaughtUp[testHubB] })

	refuse.Store(true)
	if _, err := a.client.Resource(mwKind.GVR).Namespace(testCluster).Create(context.Background(),
		manifestWork(testCluster, "work-2", "cm-2", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hub-b behind while its copy of work-2 is refused", func() bool {
		in, behind := steps()
		return in == "" && behind == testHubB && !c.Snapshot().CaughtUp[testHubB]
	})

	refuse.Store(false)
	eventually(t, "hub-b in step again once work-2 is written", func() bool {
		in, behind := steps()
		cp, _ := b.hub.Peek(mwKind.Name, testCluster, "work-2")
		return cp != nil && in == testHubB && behind == "" && c.Snapshot().CaughtUp[testHubB]
	})
}

var errRefusedForTest = errors.New("refused by the test")

// TestHubWithoutAKindIsInStep: hub-b does not serve ManifestWorks (no CRD). Hub-a's work-1 is left out there, and
// hub-b is in step and caught up all the same: a kind a hub cannot hold does not keep it behind for good.
func TestHubWithoutAKindIsInStep(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	a := newTestHub(t, testHubA, handler, kinds, managedCluster(testCluster, nil), manifestWork(testCluster, "work-1", "cm-1", nil))
	b := newTestHub(t, testHubB, handler, kinds)
	b.fake.PrependReactor("*", "manifestworks", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(mwKind.GVR.GroupResource(), "")
	})
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)
	eventually(t, "hub-b in step and caught up", func() bool {
		mc, _ := a.hub.Peek(mcKind.Name, "", testCluster)
		return mc != nil && mc.GetAnnotations()[mirror.AnnotationHubsInStep] == testHubB && c.Snapshot().CaughtUp[testHubB]
	})
	if n := c.Snapshot().Behind[testHubB]; n != 0 {
		t.Errorf("hub-b behind by %d objects, want 0", n)
	}
}
