package replication

import (
	"slices"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// TestSnapshotClustersOnSeveralHubs: a cluster whose lease the replicator saw renewed on both hubs is on several
// hubs until the older renewal is FreshnessFactor lease durations old (60 s leases here: 2 minutes); a cluster
// renewed on one hub never is.
func TestSnapshotClustersOnSeveralHubs(t *testing.T) {
	kinds := []mirror.Kind{testKind(t, failoverv1alpha1.KindManagedCluster)}
	handler := &proxyHandler{}
	a := newTestHub(t, testHubA, handler, kinds, managedCluster("cluster1", nil), managedCluster("cluster2", nil))
	b := newTestHub(t, testHubB, handler, kinds, managedCluster("cluster1", nil))
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC))
	c, err := New(Options{Kinds: kinds, Hubs: []*hubconn.Hub{a.hub, b.hub}, Clock: clk, Recorder: events.NewInMemoryRecorder("test", clk)})
	if err != nil {
		t.Fatal(err)
	}
	c.OnLease(testHubA, "cluster1", hubconn.LeaseRenewed)
	c.OnLease(testHubA, "cluster2", hubconn.LeaseRenewed)
	clk.Step(90 * time.Second)
	c.OnLease(testHubB, "cluster1", hubconn.LeaseRenewed)
	c.OnLease(testHubA, "cluster2", hubconn.LeaseRenewed)
	if got := c.Snapshot().OnSeveralHubs; !slices.Equal(got, []string{"cluster1"}) {
		t.Errorf("on several hubs 90 s after the renewal on hub-a: %v, want [cluster1]", got)
	}
	clk.Step(direction.FreshnessFactor*direction.DefaultLeaseDuration - 90*time.Second + time.Second)
	if got := c.Snapshot().OnSeveralHubs; len(got) != 0 {
		t.Errorf("on several hubs once hub-a's renewal is stale: %v, want none", got)
	}
}

// TestSnapshotObjectsBehind: a listed hub counts the keys it is not in step with; a hub not listed has no count.
func TestSnapshotObjectsBehind(t *testing.T) {
	kinds := []mirror.Kind{testKind(t, failoverv1alpha1.KindManagedCluster)}
	handler := &proxyHandler{}
	a := newTestHub(t, testHubA, handler, kinds)
	b := newTestHub(t, testHubB, handler, kinds)
	c, err := New(Options{Kinds: kinds, Hubs: []*hubconn.Hub{a.hub, b.hub}, Recorder: events.NewInMemoryRecorder("test", clock.RealClock{})})
	if err != nil {
		t.Fatal(err)
	}
	c.steps.ready(testHubA, []Key{{Kind: failoverv1alpha1.KindManifestWork, Namespace: "cluster1", Name: "w1"},
		{Kind: failoverv1alpha1.KindManifestWork, Namespace: "cluster1", Name: "w2"}}, func() bool { return true })
	behind := c.Snapshot().Behind
	if n, ok := behind[testHubA]; !ok || n != 2 {
		t.Errorf("hub-a behind by %d (counted %t), want 2", n, ok)
	}
	if n, ok := behind[testHubB]; ok {
		t.Errorf("hub-b, not listed, counted behind by %d, want no count", n)
	}
}
