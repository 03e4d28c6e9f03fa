package managedcluster

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
)

// TestStatusIdentityConflict (FC-06).
func TestStatusIdentityConflict(t *testing.T) {
	ourClaim := []*clusterv1alpha1.ClusterClaim{newClaim(ClusterClaimID, "spoke-y", nil)}
	hubClaims := withClaims(clusterv1.ManagedClusterClaim{Name: ClusterClaimID, Value: "spoke-x"})
	kubeSystem := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: "ks-uid-y"}}
	cases := []struct {
		name             string
		cluster          *clusterv1.ManagedCluster
		claims           []*clusterv1alpha1.ClusterClaim
		hubObjects       []runtime.Object
		spokeObjects     []runtime.Object
		noLeaseClient    bool
		ownRenewTime     time.Time
		expectedConflict bool
		expectedEvents   []string
		expectedClaims   []clusterv1.ManagedClusterClaim
	}{
		{
			name:             "other identity with a fresh lease is a conflict",
			cluster:          newManagedCluster(accepted(), hubClaims),
			claims:           ourClaim,
			hubObjects:       []runtime.Object{newHubLease(testNow.Add(-30*time.Second), time.Time{})},
			expectedConflict: true,
			expectedEvents:   []string{ReasonManagedClusterIdentityConflict},
		},
		{
			name:             "lease fresh within 5 lease durations is a conflict",
			cluster:          newManagedCluster(accepted(), hubClaims, withLeaseDuration(20)),
			claims:           ourClaim,
			hubObjects:       []runtime.Object{newHubLease(testNow.Add(-99*time.Second), time.Time{})},
			expectedConflict: true,
			expectedEvents:   []string{ReasonManagedClusterIdentityConflict},
		},
		{
			name:           "other identity with a stale lease is taken over",
			cluster:        newManagedCluster(accepted(), hubClaims, withLeaseDuration(20)),
			claims:         ourClaim,
			hubObjects:     []runtime.Object{newHubLease(testNow.Add(-100*time.Second), time.Time{})},
			expectedEvents: []string{ReasonManagedClusterJoined, ReasonManagedClusterAvailable},
			expectedClaims: []clusterv1.ManagedClusterClaim{{Name: ClusterClaimID, Value: "spoke-y"}},
		},
		{
			name:           "a fresh lease renewed by this agent is not someone else's",
			cluster:        newManagedCluster(accepted(), hubClaims),
			claims:         ourClaim,
			hubObjects:     []runtime.Object{newHubLease(testNow.Add(-30*time.Second), time.Time{})},
			ownRenewTime:   testNow.Add(-30 * time.Second),
			expectedEvents: []string{ReasonManagedClusterJoined, ReasonManagedClusterAvailable},
			expectedClaims: []clusterv1.ManagedClusterClaim{{Name: ClusterClaimID, Value: "spoke-y"}},
		},
		{
			name:           "no lease on the hub is no conflict",
			cluster:        newManagedCluster(accepted(), hubClaims),
			claims:         ourClaim,
			expectedEvents: []string{ReasonManagedClusterJoined, ReasonManagedClusterAvailable},
			expectedClaims: []clusterv1.ManagedClusterClaim{{Name: ClusterClaimID, Value: "spoke-y"}},
		},
		{
			name:             "without a lease client a different identity is a conflict",
			cluster:          newManagedCluster(accepted(), hubClaims),
			claims:           ourClaim,
			noLeaseClient:    true,
			expectedConflict: true,
			expectedEvents:   []string{ReasonManagedClusterIdentityConflict},
		},
		{
			name:             "kube-system UID identifies the spoke without an id.k8s.io claim",
			cluster:          newManagedCluster(accepted(), hubClaims),
			spokeObjects:     []runtime.Object{kubeSystem},
			hubObjects:       []runtime.Object{newHubLease(testNow.Add(-30*time.Second), time.Time{})},
			expectedConflict: true,
			expectedEvents:   []string{ReasonManagedClusterIdentityConflict},
		},
		{
			name:           "kube-system UID matching the hub claim is published as id.k8s.io",
			cluster:        newManagedCluster(accepted(), withClaims(clusterv1.ManagedClusterClaim{Name: ClusterClaimID, Value: "ks-uid-y"})),
			spokeObjects:   []runtime.Object{kubeSystem},
			hubObjects:     []runtime.Object{newHubLease(testNow.Add(-30*time.Second), time.Time{})},
			expectedEvents: []string{ReasonManagedClusterJoined, ReasonManagedClusterAvailable},
			expectedClaims: []clusterv1.ManagedClusterClaim{{Name: ClusterClaimID, Value: "ks-uid-y"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newStatusFixture(t, fixtureConfig{
				cluster: tc.cluster, claims: tc.claims, hubObjects: tc.hubObjects, spokeObjects: tc.spokeObjects,
				modify: func(o *StatusOptions) {
					if tc.noLeaseClient {
						o.HubLeaseClient = nil
					}
					o.OwnLeaseRenewTime = func() time.Time { return tc.ownRenewTime }
				},
			})
			f.sync("key")
			f.refreshCache()
			f.sync(spokeEventKey)

			conflict, message := f.tracker.Conflict()
			if conflict != tc.expectedConflict {
				t.Fatalf("conflict = %v (%q), want %v", conflict, message, tc.expectedConflict)
			}
			patches := f.statusPatches()
			if conflict {
				if len(patches) != 0 {
					t.Errorf("status patches during a conflict = %d, want 0", len(patches))
				}
				if !strings.Contains(message, `"spoke-x"`) {
					t.Errorf("conflict message %q does not name the hub's identity", message)
				}
				if paths := f.server.requestedPaths(); len(paths) != 0 {
					t.Errorf("spoke health checks during a conflict = %v, want none", paths)
				}
			} else {
				if len(patches) != 1 {
					t.Errorf("status patches = %d, want 1", len(patches))
				}
				if diff := cmp.Diff(tc.expectedClaims, f.hubCluster().Status.ClusterClaims); diff != "" {
					t.Errorf("claims (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.expectedEvents, f.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStatusIdentityConflictResolves: the conflict verdict is cached across event syncs (no
// lease GET per event), and a periodic sync after the other registration's lease went
// stale clears the tracker, emits the resolution and writes our status.
func TestStatusIdentityConflictResolves(t *testing.T) {
	f := newStatusFixture(t, fixtureConfig{
		cluster:    newManagedCluster(accepted(), withClaims(clusterv1.ManagedClusterClaim{Name: ClusterClaimID, Value: "spoke-x"})),
		claims:     []*clusterv1alpha1.ClusterClaim{newClaim(ClusterClaimID, "spoke-y", nil)},
		hubObjects: []runtime.Object{newHubLease(testNow, time.Time{})},
	})
	f.sync("key")
	for range 5 {
		f.sync(spokeEventKey)
	}
	if gets := len(actionsOf(f.hubKube.Actions(), "get")); gets != 1 {
		t.Errorf("lease GETs = %d, want 1 (verdict cached between periodic syncs)", gets)
	}
	if conflict, _ := f.tracker.Conflict(); !conflict {
		t.Fatal("conflict not recorded")
	}
	changed := f.tracker.Changed()

	f.clock.Step(5 * time.Minute)
	f.sync("key")
	if conflict, _ := f.tracker.Conflict(); conflict {
		t.Fatal("conflict not cleared after the other lease went stale")
	}
	select {
	case <-changed:
	default:
		t.Error("tracker listeners not notified of the change")
	}
	if n := len(f.statusPatches()); n != 1 {
		t.Errorf("status patches after the take-over = %d, want 1", n)
	}
	want := []string{ReasonManagedClusterIdentityConflict, ReasonManagedClusterIdentityConflictResolved, ReasonManagedClusterJoined, ReasonManagedClusterAvailable}
	if diff := cmp.Diff(want, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
