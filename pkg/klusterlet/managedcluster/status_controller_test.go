package managedcluster

import (
	"context"
	"errors"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clienttesting "k8s.io/client-go/testing"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/internal/synctesting"
)

var quantityComparer = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// TestStatusFirstWriteThenQuiet: an accepted cluster gets one merge patch on status with
// Joined, Available, version, resources and claims; a second sync with nothing changed
// writes nothing and repeats no event.
func TestStatusFirstWriteThenQuiet(t *testing.T) {
	f := newStatusFixture(t, fixtureConfig{
		cluster: newManagedCluster(accepted()),
		nodes: []*corev1.Node{
			newNode("n1", false, resources("cpu", "2", "memory", "4Gi"), resources("cpu", "1500m", "memory", "3Gi")),
		},
		claims: []*clusterv1alpha1.ClusterClaim{newClaim("id.k8s.io", "spoke-a", nil)},
	})

	f.sync("key")
	patches := f.statusPatches()
	if len(patches) != 1 {
		t.Fatalf("status patches = %d, want 1", len(patches))
	}
	wantMetadata := map[string]any{"uid": "uid-1", "resourceVersion": "10"}
	if diff := cmp.Diff(wantMetadata, patches[0]["metadata"]); diff != "" {
		t.Errorf("patch preconditions (-want +got):\n%s", diff)
	}
	if _, ok := patches[0]["spec"]; ok {
		t.Error("the status patch must not touch spec")
	}

	status := f.hubCluster().Status
	wantConditions := []metav1.Condition{
		{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue, Reason: "HubClusterAdminAccepted", Message: "Accepted by hub cluster admin", LastTransitionTime: metav1.NewTime(testNow.Add(-time.Hour))},
		{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: ConditionReasonManagedClusterJoined, Message: "Managed cluster joined", LastTransitionTime: metav1.NewTime(testNow)},
		{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: ConditionReasonManagedClusterAvailable, Message: "Managed cluster is available", LastTransitionTime: metav1.NewTime(testNow)},
	}
	if diff := cmp.Diff(wantConditions, status.Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if status.Version.Kubernetes != "v1.34.3" {
		t.Errorf("version.kubernetes = %q, want v1.34.3", status.Version.Kubernetes)
	}
	if diff := cmp.Diff(clusterResources("cpu", "2", "memory", "4Gi"), status.Capacity, quantityComparer); diff != "" {
		t.Errorf("capacity (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]clusterv1.ManagedClusterClaim{{Name: "id.k8s.io", Value: "spoke-a"}}, status.ClusterClaims); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{ReasonManagedClusterJoined, ReasonManagedClusterAvailable}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if conflict, _ := f.tracker.Conflict(); !f.tracker.Verified() || conflict {
		t.Error("the identity check must verify the tracker without a conflict")
	}

	// The informer delivers our write; nothing changed since: no write, no repeated event,
	// also not when the clock moved on (transition times stay).
	f.refreshCache()
	f.clock.Step(time.Minute)
	f.sync("key")
	f.sync(hubEventKey)
	f.sync(spokeEventKey)
	if n := len(f.statusPatches()); n != 1 {
		t.Errorf("status patches after unchanged syncs = %d, want 1", n)
	}
	if n := len(f.events()); n != 2 {
		t.Errorf("events after unchanged syncs = %v, want the 2 from the first write", f.events())
	}
}

func TestStatusNotAcceptedWritesNothing(t *testing.T) {
	f := newStatusFixture(t, fixtureConfig{cluster: newManagedCluster()})
	f.sync("key")
	if n := len(f.statusPatches()); n != 0 {
		t.Errorf("status patches = %d, want 0 before acceptance", n)
	}
	if paths := f.server.requestedPaths(); len(paths) != 0 {
		t.Errorf("spoke requests before acceptance = %v, want none", paths)
	}
}

func TestStatusResourcesSummed(t *testing.T) {
	f := newStatusFixture(t, fixtureConfig{
		cluster: newManagedCluster(accepted(), func(c *clusterv1.ManagedCluster) {
			// Set by another component: kept.
			c.Status.Capacity = clusterResources("socket_worker", "2")
		}),
		nodes: []*corev1.Node{
			newNode("n1", false,
				resources("cpu", "2", "memory", "4Gi", "pods", "110", "nvidia.com/gpu", "1"),
				resources("cpu", "1500m", "memory", "3Gi", "pods", "110", "nvidia.com/gpu", "1")),
			newNode("n2", false,
				resources("cpu", "4", "memory", "8Gi", "pods", "110", "ephemeral-storage", "100Gi"),
				resources("cpu", "3", "memory", "7Gi", "pods", "100", "ephemeral-storage", "90Gi")),
			newNode("n3-cordoned", true,
				resources("cpu", "8", "memory", "16Gi", "pods", "110"),
				resources("cpu", "8", "memory", "16Gi", "pods", "110")),
		},
	})
	f.sync("key")
	status := f.hubCluster().Status
	wantCapacity := clusterResources("cpu", "14", "memory", "28Gi", "pods", "330", "nvidia.com/gpu", "1", "ephemeral-storage", "100Gi", "socket_worker", "2")
	wantAllocatable := clusterResources("cpu", "4500m", "memory", "10Gi", "pods", "210", "nvidia.com/gpu", "1", "ephemeral-storage", "90Gi")
	if diff := cmp.Diff(wantCapacity, status.Capacity, quantityComparer); diff != "" {
		t.Errorf("capacity (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantAllocatable, status.Allocatable, quantityComparer); diff != "" {
		t.Errorf("allocatable (-want +got):\n%s", diff)
	}
}

// TestStatusCoalescesNodeChurn (FC-16): node changes reach the hub once per period, while
// a claim change is written at once without the pending resources.
func TestStatusCoalescesNodeChurn(t *testing.T) {
	f := newStatusFixture(t, fixtureConfig{
		cluster: newManagedCluster(accepted()),
		nodes:   []*corev1.Node{newNode("n1", false, resources("cpu", "2"), resources("cpu", "2"))},
	})
	f.sync("key")
	f.refreshCache()

	nodes := f.nodes.Core().V1().Nodes().Informer().GetStore()
	for i, cpu := range []string{"1", "1500m", "1200m"} {
		f.add(nodes.Update(newNode("n1", false, resources("cpu", "2"), resources("cpu", cpu))))
		f.clock.Step(15 * time.Second)
		f.sync(spokeEventKey)
		if n := len(f.statusPatches()); n != 1 {
			t.Fatalf("node change %d within the period: status patches = %d, want 1", i, n)
		}
	}

	// A claim appears: written at once, resources still coalesced.
	f.add(f.spokeClusters.Cluster().V1alpha1().ClusterClaims().Informer().GetStore().Add(newClaim("region", "eu", nil)))
	f.sync(spokeEventKey)
	patches := f.statusPatches()
	if len(patches) != 2 {
		t.Fatalf("status patches after a claim change = %d, want 2", len(patches))
	}
	status := patches[1]["status"].(map[string]any)
	if _, ok := status["clusterClaims"]; !ok {
		t.Errorf("claim change not written: %v", status)
	}
	if _, ok := status["allocatable"]; ok {
		t.Errorf("resources written before the period elapsed: %v", status)
	}
	f.refreshCache()

	// One period after the last resource refresh, the next event writes the resources.
	f.clock.Step(15 * time.Second)
	f.sync(spokeEventKey)
	if diff := cmp.Diff(clusterResources("cpu", "1200m"), f.hubCluster().Status.Allocatable, quantityComparer); diff != "" {
		t.Errorf("allocatable after the period (-want +got):\n%s", diff)
	}
	if n := len(f.statusPatches()); n != 3 {
		t.Errorf("status patches = %d, want 3", n)
	}
}

func TestStatusAvailable(t *testing.T) {
	availableTrue := withCondition(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionTrue, ConditionReasonManagedClusterAvailable, "Managed cluster is available")
	availableFalse := withCondition(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionFalse, ConditionReasonManagedClusterKubeAPIServerUnavailable, "down")
	joined := withCondition(clusterv1.ManagedClusterConditionJoined, metav1.ConditionTrue, ConditionReasonManagedClusterJoined, "Managed cluster joined")
	cases := []struct {
		name            string
		scripts         map[string][]int
		threshold       int
		initial         clusterOption
		keys            []string
		expectedStatus  metav1.ConditionStatus
		expectedReason  string
		expectedMessage string
		expectedPatches int
		expectedRetries []string
		expectedPaths   []string
		expectedEvents  []string
	}{
		{
			name:            "isolated failure does not flip Available",
			scripts:         map[string][]int{"/livez": {500, 200}},
			threshold:       3,
			initial:         availableTrue,
			keys:            []string{"key", healthCheckKey},
			expectedStatus:  metav1.ConditionTrue,
			expectedReason:  ConditionReasonManagedClusterAvailable,
			expectedRetries: []string{"health-check after 5s"},
			expectedPaths:   []string{"/livez", "/livez"},
		},
		{
			name:            "sustained failure sets False after the threshold",
			scripts:         map[string][]int{"/livez": {500}},
			threshold:       3,
			initial:         availableTrue,
			keys:            []string{"key", healthCheckKey, healthCheckKey},
			expectedStatus:  metav1.ConditionFalse,
			expectedReason:  ConditionReasonManagedClusterKubeAPIServerUnavailable,
			expectedMessage: "GET /livez returned status code 500",
			expectedPatches: 1,
			expectedRetries: []string{"health-check after 5s", "health-check after 5s"},
			expectedPaths:   []string{"/livez", "/livez", "/livez"},
			expectedEvents:  []string{ReasonManagedClusterUnavailable},
		},
		{
			name:          "spoke events do not run health checks",
			scripts:       map[string][]int{"/livez": {500}},
			threshold:     1,
			initial:       availableTrue,
			keys:          []string{"key", spokeEventKey, hubEventKey},
			expectedPaths: []string{"/livez"},
			// the first periodic check failed with threshold 1
			expectedStatus:  metav1.ConditionFalse,
			expectedReason:  ConditionReasonManagedClusterKubeAPIServerUnavailable,
			expectedPatches: 1,
			expectedEvents:  []string{ReasonManagedClusterUnavailable},
		},
		{
			name:            "404 on livez falls back to healthz",
			scripts:         map[string][]int{"/livez": {404}, "/healthz": {200}},
			threshold:       1,
			initial:         availableFalse,
			keys:            []string{"key"},
			expectedStatus:  metav1.ConditionTrue,
			expectedReason:  ConditionReasonManagedClusterAvailable,
			expectedPatches: 1,
			expectedPaths:   []string{"/livez", "/healthz", "/version"},
			expectedEvents:  []string{ReasonManagedClusterAvailable},
		},
		{
			name:            "403 on livez falls back to healthz, which fails",
			scripts:         map[string][]int{"/livez": {403}, "/healthz": {500}},
			threshold:       1,
			initial:         availableTrue,
			keys:            []string{"key"},
			expectedStatus:  metav1.ConditionFalse,
			expectedReason:  ConditionReasonManagedClusterKubeAPIServerUnavailable,
			expectedMessage: "GET /healthz returned status code 500",
			expectedPatches: 1,
			expectedPaths:   []string{"/livez", "/healthz"},
			expectedEvents:  []string{ReasonManagedClusterUnavailable},
		},
		{
			name:            "401 names the spoke credentials",
			scripts:         map[string][]int{"/livez": {401}},
			threshold:       1,
			initial:         availableTrue,
			keys:            []string{"key"},
			expectedStatus:  metav1.ConditionFalse,
			expectedReason:  ConditionReasonManagedClusterSpokeCredentialsRejected,
			expectedMessage: "rejected the agent's spoke credentials",
			expectedPatches: 1,
			expectedPaths:   []string{"/livez"},
			expectedEvents:  []string{ReasonManagedClusterUnavailable},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.scripts["/version"] = []int{200}
			f := newStatusFixture(t, fixtureConfig{
				cluster: newManagedCluster(accepted(), joined, tc.initial, withVersion("v1.34.3")),
				server:  newSpokeServer(t, tc.scripts),
				modify:  func(o *StatusOptions) { o.AvailableFailureThreshold = tc.threshold },
			})
			for _, key := range tc.keys {
				f.sync(key)
				f.refreshCache()
			}
			condition := meta.FindStatusCondition(f.hubCluster().Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
			if condition.Status != tc.expectedStatus || condition.Reason != tc.expectedReason {
				t.Errorf("Available = %s/%s, want %s/%s", condition.Status, condition.Reason, tc.expectedStatus, tc.expectedReason)
			}
			if !strings.Contains(condition.Message, tc.expectedMessage) {
				t.Errorf("Available message %q does not contain %q", condition.Message, tc.expectedMessage)
			}
			if n := len(f.statusPatches()); n != tc.expectedPatches {
				t.Errorf("status patches = %d, want %d", n, tc.expectedPatches)
			}
			if diff := cmp.Diff(tc.expectedRetries, retries(f.syncCtx)); diff != "" {
				t.Errorf("re-checks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.expectedPaths, f.server.requestedPaths()); diff != "" {
				t.Errorf("spoke requests (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.expectedEvents, f.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStatusRecoversAfterSustainedFailure (FC-11): False after the threshold, True again
// on the first successful check.
func TestStatusRecoversAfterSustainedFailure(t *testing.T) {
	f := newStatusFixture(t, fixtureConfig{
		cluster: newManagedCluster(accepted()),
		server:  newSpokeServer(t, map[string][]int{"/livez": {200, 500, 500, 200}, "/version": {200}}),
		modify:  func(o *StatusOptions) { o.AvailableFailureThreshold = 2 },
	})
	var statuses []metav1.ConditionStatus
	for _, key := range []string{"key", "key", healthCheckKey, "key"} {
		f.sync(key)
		f.refreshCache()
		statuses = append(statuses, meta.FindStatusCondition(f.hubCluster().Status.Conditions, clusterv1.ManagedClusterConditionAvailable).Status)
	}
	want := []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionTrue}
	if diff := cmp.Diff(want, statuses); diff != "" {
		t.Errorf("Available over time (-want +got):\n%s", diff)
	}
	want2 := []string{ReasonManagedClusterJoined, ReasonManagedClusterAvailable, ReasonManagedClusterUnavailable, ReasonManagedClusterAvailable}
	if diff := cmp.Diff(want2, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestStatusClockSkew (FC-10): while the hub says ClockSynced=False nothing is written and
// ClockSkewDetected is emitted once, with the hub's message and the measured skew; writes
// resume when the condition is True again.
func TestStatusClockSkew(t *testing.T) {
	lease := newHubLease(testNow.Add(-10*time.Second), testNow.Add(15*time.Second))
	f := newStatusFixture(t, fixtureConfig{
		cluster: newManagedCluster(accepted(), withCondition(clusterv1.ManagedClusterConditionClockSynced, metav1.ConditionFalse,
			"ManagedClusterClockOutOfSync", "The clock of hub and agent is out of sync")),
		hubObjects: []runtime.Object{lease},
	})
	f.sync("key")
	f.sync(hubEventKey)
	f.sync("key")
	if n := len(f.statusPatches()); n != 0 {
		t.Fatalf("status patches while ClockSynced=False = %d, want 0", n)
	}
	events := f.recorder.Events()
	if len(events) != 1 || events[0].Reason != ReasonClockSkewDetected {
		t.Fatalf("events = %v, want one %s", eventReasons(f.recorder), ReasonClockSkewDetected)
	}
	for _, part := range []string{"The clock of hub and agent is out of sync", "25s ahead"} {
		if !strings.Contains(events[0].Message, part) {
			t.Errorf("event message %q does not contain %q", events[0].Message, part)
		}
	}
	if paths := f.server.requestedPaths(); len(paths) != 0 {
		t.Errorf("spoke requests while ClockSynced=False = %v, want none", paths)
	}

	cluster := f.hubCluster()
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionClockSynced, Status: metav1.ConditionTrue, Reason: "ManagedClusterClockSynced"})
	f.add(f.clusters.Cluster().V1().ManagedClusters().Informer().GetStore().Update(cluster))
	f.sync(hubEventKey)
	if n := len(f.statusPatches()); n != 1 {
		t.Errorf("status patches after the clocks synced = %d, want 1", n)
	}
	if diff := cmp.Diff([]string{ReasonClockSkewDetected, ReasonClockSkewResolved, ReasonManagedClusterJoined, ReasonManagedClusterAvailable}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestMeasureClockSkew(t *testing.T) {
	cases := []struct {
		name     string
		lease    *coordinationv1.Lease
		expected time.Duration
		ok       bool
	}{
		{name: "hub ahead", lease: newHubLease(testNow, testNow.Add(25*time.Second)), expected: 25 * time.Second, ok: true},
		{name: "hub behind", lease: newHubLease(testNow, testNow.Add(-40*time.Second)), expected: -40 * time.Second, ok: true},
		{name: "never renewed", lease: &coordinationv1.Lease{}, ok: false},
		{name: "no managed fields", lease: newHubLease(testNow, time.Time{}), ok: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			skew, ok := measureClockSkew(tc.lease)
			if skew != tc.expected || ok != tc.ok {
				t.Errorf("measureClockSkew = %v, %v; want %v, %v", skew, ok, tc.expected, tc.ok)
			}
		})
	}
}

// newHubLease returns the hub lease with the renewTime written by an agent and, unless
// written is zero, a managedFields entry stamped by the hub API server at written.
func newHubLease(renewTime, written time.Time) *coordinationv1.Lease {
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: hubLeaseName, Namespace: testCluster},
		Spec:       coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: renewTime}},
	}
	if !written.IsZero() {
		lease.ManagedFields = []metav1.ManagedFieldsEntry{
			{Manager: "registration-controller", Operation: metav1.ManagedFieldsOperationUpdate, Time: &metav1.Time{Time: written.Add(-time.Hour)}},
			{Manager: "klusterlet-failover", Operation: metav1.ManagedFieldsOperationUpdate, Time: &metav1.Time{Time: written}},
		}
	}
	return lease
}

// A status write that fails (409 against the hub controller) must not leave Available unset until the next
// period: the retry, triggered by an event, checks health again and writes it.
func TestStatusAvailableRetriedAfterFailedWrite(t *testing.T) {
	f := newStatusFixture(t, fixtureConfig{cluster: newManagedCluster(accepted())})
	failed := false
	f.clusterClient.PrependReactor("patch", "managedclusters", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if failed {
			return false, nil, nil
		}
		failed = true
		return true, nil, apierrors.NewConflict(clusterv1.Resource("managedclusters"), testCluster, errors.New("the object has been modified"))
	})
	if err := f.controller.sync(context.Background(), f.syncCtx.WithKey("key")); err == nil {
		t.Fatal("the first sync must report the failed status write")
	}
	f.sync(hubEventKey)
	if c := meta.FindStatusCondition(f.hubCluster().Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("Available after the retried write = %+v, want True", c)
	}
}

// retries returns the requeues of sc as "<key> after <delay>", in order; nil when there were none.
func retries(sc *synctesting.SyncContext) []string {
	var out []string
	for _, r := range sc.Requeues() {
		out = append(out, r.Key+" after "+r.After.String())
	}
	return out
}
