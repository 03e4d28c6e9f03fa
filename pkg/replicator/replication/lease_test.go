package replication

import (
	"context"
	"testing"

	"github.com/openshift/library-go/pkg/operator/events"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
)

// TestOnLeaseDecidesAgainUnlessTheRenewalIsTheSources: a renewal of the lease that decided the cluster's
// source, on that source, is only recorded (the re-decision scheduled for its expiry reads it); every other
// lease event queues the cluster's direction at once.
func TestOnLeaseDecidesAgainUnlessTheRenewalIsTheSources(t *testing.T) {
	settledOnA := direction.Source{Hub: testHubA, Reason: direction.ReasonLeaseRenewed}
	cases := []struct {
		name         string
		source       direction.Source
		seenRenewing bool // hub-a's lease of the cluster was seen renewed before the event
		hub          string
		event        hubconn.LeaseEvent
		wantQueued   bool
	}{
		{name: "renewal on the source whose fresh lease decided it", source: settledOnA, seenRenewing: true,
			hub: testHubA, event: hubconn.LeaseRenewed, wantQueued: false},
		{name: "first renewal seen on the source", source: settledOnA, seenRenewing: false,
			hub: testHubA, event: hubconn.LeaseRenewed, wantQueued: true},
		{name: "renewal on another hub", source: settledOnA, seenRenewing: true,
			hub: testHubB, event: hubconn.LeaseRenewed, wantQueued: true},
		{name: "renewal on a source kept without a fresh lease",
			source:       direction.Source{Hub: testHubA, Reason: direction.ReasonNoFreshLease},
			seenRenewing: true, hub: testHubA, event: hubconn.LeaseRenewed, wantQueued: true},
		{name: "renewal on a source chosen from the copies' record",
			source:       direction.Source{Hub: testHubA, Reason: direction.ReasonRecorded},
			seenRenewing: true, hub: testHubA, event: hubconn.LeaseRenewed, wantQueued: true},
		{name: "renewal before any decision", seenRenewing: true,
			hub: testHubA, event: hubconn.LeaseRenewed, wantQueued: true},
		{name: "update that does not renew", source: settledOnA, seenRenewing: true,
			hub: testHubA, event: hubconn.LeaseUpdated, wantQueued: true},
		{name: "lease created", source: settledOnA, seenRenewing: true,
			hub: testHubA, event: hubconn.LeaseAdded, wantQueued: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newUnstartedController(t)
			if tc.source.Hub != "" {
				c.directions.sources[testCluster] = tc.source
			}
			if tc.seenRenewing {
				c.directions.renewed[testHubA] = sets.New(testCluster)
			}
			c.OnLease(tc.hub, testCluster, tc.event)
			if got := c.queue.Len() == 1; got != tc.wantQueued {
				t.Errorf("direction of %s queued = %v, want %v", testCluster, got, tc.wantQueued)
			}
			want := tc.event == hubconn.LeaseRenewed || (tc.event == hubconn.LeaseUpdated && tc.seenRenewing && tc.hub == testHubA)
			if got := c.directions.renewed[tc.hub].Has(testCluster); got != want {
				t.Errorf("renewal of %s recorded on %s = %v, want %v", testCluster, tc.hub, got, want)
			}
		})
	}
}

// TestSyncDirectionDecidesAgainAfterARenewalItDidNotSee: a renewal OnLease only records while a direction sync
// of the cluster is under way (after it read its views) makes that sync queue the cluster again, so that the
// decision it stores, made without the renewal, does not stand until the next one.
func TestSyncDirectionDecidesAgainAfterARenewalItDidNotSee(t *testing.T) {
	for _, renewDuringSync := range []bool{false, true} {
		c := newUnstartedController(t)
		c.directions.sources[testCluster] = direction.Source{Hub: testHubA, Reason: direction.ReasonLeaseRenewed}
		c.directions.renewed[testHubA] = sets.New(testCluster)
		c.viewsRead = func(cluster string) {
			if renewDuringSync {
				c.OnLease(testHubA, cluster, hubconn.LeaseRenewed)
			}
		}
		if err := c.syncDirection(context.Background(), testCluster); err != nil {
			t.Fatal(err)
		}
		if got := c.queue.Len() == 1; got != renewDuringSync {
			t.Errorf("renewal during the sync %v: direction of %s queued again = %v, want %v", renewDuringSync, testCluster, got, renewDuringSync)
		}
	}
}

// newUnstartedController returns a Controller over hubs hub-a and hub-b that were never started (not ready);
// its queue is shut down at the end of the test.
func newUnstartedController(t *testing.T) *Controller {
	t.Helper()
	handler := &proxyHandler{}
	a := newTestHub(t, testHubA, handler, nil)
	b := newTestHub(t, testHubB, handler, nil)
	recorder := &lockedRecorder{InMemoryRecorder: events.NewInMemoryRecorder("replicator-test", clock.RealClock{})}
	c, err := New(Options{Hubs: []*hubconn.Hub{a.hub, b.hub}, Recorder: recorder})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.queue.ShutDown)
	return c
}
