package replicator_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// clockSkew is how far off the replicator's clock is in TestReplicatorClockTenMinutesOff.
const clockSkew = 10 * time.Minute

// TestReplicatorClockTenMinutesOff: the replicator runs with a clock ten minutes ahead of the hubs' and the
// agent's (the test renews the cluster's lease as the agent would, on the real clock). It must find the cluster on
// hub A, follow it when it moves to hub B, fence A and not B, and copy a ManifestWork made on B to A: which hub
// is fresh is judged by when the replicator saw a lease renewed, on its own clock, never by comparing the lease's
// renewTime with it.
func TestReplicatorClockTenMinutesOff(t *testing.T) {
	const cluster = "skewed1"
	hubA, hubBHub, stopOnA, r := twoHubsLeased(t, cluster, "made-on-a")
	defer stopOnA()
	r.clock = offsetClock{offset: clockSkew}
	r.start()
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "made-on-a", replicationTimeout, "a copy from hub-a", copiedFrom("hub-a"))
	waitNamespaceMark(t, hubBHub, cluster, "hub-a")

	// The cluster moves to hub B.
	moved := time.Now()
	stopOnA()
	stopOnB := keepRenewing(t, hubBHub, cluster, 3*time.Second)
	defer stopOnB()
	waitObj(t, hubA, failoverv1alpha1.KindManagedCluster, "", cluster, replicationTimeout, "annotated: the cluster is on hub-b",
		func(o *unstructured.Unstructured) bool {
			return o != nil && o.GetAnnotations()[mirror.AnnotationClusterHub] == hubB
		})
	followed := time.Since(moved)
	waitNamespaceMark(t, hubBHub, cluster, "")
	waitNamespaceMark(t, hubA, cluster, hubB)
	createWork(t, hubBHub, configMapWork(t, cluster, "made-on-b", map[string]string{"v": "b"}))
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "made-on-b", replicationTimeout, "a copy from hub-b", copiedFrom(hubB))
	t.Logf("measured: with the replicator's clock %s ahead, the move to hub-b was followed in %s (lease duration 10 s)",
		clockSkew, followed.Round(time.Second))
}
