package lease

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
)

const testCluster = "cluster1"

var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fakeUpdater records the decisions of sync.
type fakeUpdater struct {
	running bool
	period  time.Duration
	calls   []string
}

func (f *fakeUpdater) start(_ context.Context, period time.Duration) bool {
	f.calls = append(f.calls, "start "+period.String())
	transition := !f.running
	f.running, f.period = true, period
	return transition
}

func (f *fakeUpdater) jitterDescription(time.Duration) string { return "" }

func (f *fakeUpdater) stop() bool {
	f.calls = append(f.calls, "stop")
	transition := f.running
	f.running = false
	return transition
}

// fakeConflict is a ConflictChecker whose verdict the test sets; every Conflict call is
// signalled on calls (if not nil).
type fakeConflict struct {
	lock       sync.Mutex
	unverified bool
	conflict   bool
	message    string
	changed    chan struct{}
	calls      chan struct{}
}

func (f *fakeConflict) Conflict() (bool, string) {
	f.lock.Lock()
	conflict, message := f.conflict, f.message
	f.lock.Unlock()
	if f.calls != nil {
		f.calls <- struct{}{}
	}
	return conflict, message
}

func (f *fakeConflict) Verified() bool {
	f.lock.Lock()
	defer f.lock.Unlock()
	return !f.unverified
}

// Changed hands out the test's channel once; later callers wait on a channel that never
// fires, as with a real tracker between changes.
func (f *fakeConflict) Changed() <-chan struct{} {
	f.lock.Lock()
	defer f.lock.Unlock()
	changed := f.changed
	f.changed = make(chan struct{})
	return changed
}

// The tracker of the status controller is the checker the wiring passes.
var _ ConflictChecker = managedcluster.NewConflictTracker()

func newCluster(accepted bool, leaseDurationSeconds int32) *clusterv1.ManagedCluster {
	cluster := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: testCluster},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: accepted, LeaseDurationSeconds: leaseDurationSeconds},
	}
	if accepted {
		cluster.Status.Conditions = []metav1.Condition{{
			Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue, Reason: "HubClusterAdminAccepted",
		}}
	}
	return cluster
}

func newLease(renewTime *metav1.MicroTime) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: LeaseName, Namespace: testCluster, ResourceVersion: "1"},
		Spec:       coordinationv1.LeaseSpec{RenewTime: renewTime},
	}
}

func eventReasons(recorder events.InMemoryRecorder) []string {
	var reasons []string
	for _, event := range recorder.Events() {
		reasons = append(reasons, event.Reason)
	}
	return reasons
}

func TestSync(t *testing.T) {
	cases := []struct {
		name           string
		cluster        *clusterv1.ManagedCluster
		conflict       bool
		unverified     bool
		running        bool
		runningPeriod  time.Duration
		expectedCalls  []string
		expectedEvents []string
	}{
		{
			name:          "cluster missing stops nothing when idle",
			expectedCalls: []string{"stop"},
		},
		{
			name:           "cluster missing stops a running loop",
			running:        true,
			expectedCalls:  []string{"stop"},
			expectedEvents: []string{ReasonLeaseUpdateStopped},
		},
		{
			name:           "not accepted stops a running loop",
			cluster:        newCluster(false, 60),
			running:        true,
			expectedCalls:  []string{"stop"},
			expectedEvents: []string{ReasonLeaseUpdateStopped},
		},
		{
			name:           "accepted with lease duration 0 renews every 60s",
			cluster:        newCluster(true, 0),
			expectedCalls:  []string{"start 1m0s"},
			expectedEvents: []string{ReasonLeaseUpdateStarted},
		},
		{
			name:           "accepted with lease duration 30 renews every 30s",
			cluster:        newCluster(true, 30),
			expectedCalls:  []string{"start 30s"},
			expectedEvents: []string{ReasonLeaseUpdateStarted},
		},
		{
			name:          "already running with the same period emits nothing",
			cluster:       newCluster(true, 60),
			running:       true,
			runningPeriod: time.Minute,
			expectedCalls: []string{"start 1m0s"},
		},
		{
			name:          "unverified identity holds the first renewal",
			cluster:       newCluster(true, 60),
			unverified:    true,
			expectedCalls: []string{"stop"},
		},
		{
			name:           "identity conflict stops renewing",
			cluster:        newCluster(true, 60),
			conflict:       true,
			running:        true,
			expectedCalls:  []string{"stop"},
			expectedEvents: []string{ReasonLeaseUpdateStopped},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var objects []runtime.Object
			if tc.cluster != nil {
				objects = append(objects, tc.cluster)
			}
			clusterClient := clusterfake.NewSimpleClientset(objects...)
			informer := clusterinformers.NewSharedInformerFactory(clusterClient, 0).Cluster().V1().ManagedClusters()
			for _, obj := range objects {
				if err := informer.Informer().GetStore().Add(obj); err != nil {
					t.Fatal(err)
				}
			}
			updater := &fakeUpdater{running: tc.running, period: tc.runningPeriod}
			c := &leaseController{
				clusterName: testCluster,
				lister:      informer.Lister(),
				conflict:    &fakeConflict{conflict: tc.conflict, unverified: tc.unverified, message: "another spoke"},
				updater:     updater,
			}
			recorder := events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(testNow))
			if err := c.sync(context.Background(), factory.NewSyncContext("test", recorder)); err != nil {
				t.Fatalf("sync: %v", err)
			}
			if diff := cmp.Diff(tc.expectedCalls, updater.calls); diff != "" {
				t.Errorf("updater calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.expectedEvents, eventReasons(recorder)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if len(clusterClient.Actions()) != 0 {
				t.Errorf("sync must not call the hub, got %v", clusterClient.Actions())
			}
		})
	}
}

// TestLeaseControllerRenewsWithFakeClock runs the real controller and updater: with
// leaseDurationSeconds 0 the lease is renewed at once and then every 60 s of the fake
// clock, by update only; LastRenewTime and OnRenewed report the renewals.
func TestLeaseControllerRenewsWithFakeClock(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	f := startRenewing(ctx, t, -1, nil)
	controller, kubeClient, fakeClock, renewed, recorder := f.controller, f.kubeClient, f.clock, f.renewed, f.recorder
	if got := waitRenewal(t, renewed); !got.Equal(testNow) {
		t.Errorf("first renewal at %v, want %v", got, testNow)
	}
	if got := controller.LastRenewTime(); !got.Equal(testNow) {
		t.Errorf("LastRenewTime = %v, want %v", got, testNow)
	}

	fakeClock.Step(59 * time.Second)
	if n := len(leaseActions(kubeClient, "update")); n != 1 {
		t.Fatalf("updates before one period elapsed = %d, want 1", n)
	}
	fakeClock.Step(time.Second)
	if got, want := waitRenewal(t, renewed), testNow.Add(time.Minute); !got.Equal(want) {
		t.Errorf("second renewal at %v, want %v", got, want)
	}

	lease, err := kubeClient.CoordinationV1().Leases(testCluster).Get(ctx, LeaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lease.Spec.RenewTime.Time, testNow.Add(time.Minute); !got.Equal(want) {
		t.Errorf("hub renewTime = %v, want %v", got, want)
	}
	var verbs []string
	for _, action := range kubeClient.Actions() {
		verbs = append(verbs, action.GetVerb())
	}
	if diff := cmp.Diff([]string{"get", "update", "update", "get"}, verbs); diff != "" {
		t.Errorf("lease calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{ReasonLeaseUpdateStarted}, eventReasons(recorder)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestUpdaterLeaseNotFoundIsNeverCreated(t *testing.T) {
	kubeClient := kubefake.NewSimpleClientset()
	gets := make(chan struct{}, 10)
	kubeClient.PrependReactor("get", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
		gets <- struct{}{}
		return false, nil, nil
	})
	fakeClock := clocktesting.NewFakeClock(testNow)
	recorder := events.NewInMemoryRecorder("test", fakeClock)
	updater := &leaseUpdater{clusterName: testCluster, leases: kubeClient.CoordinationV1(), clock: fakeClock, recorder: recorder}

	if !updater.start(context.Background(), time.Minute) {
		t.Fatal("start on an idle updater must report a transition")
	}
	waitSignal(t, gets)
	fakeClock.Step(time.Minute)
	waitSignal(t, gets)
	if !updater.stop() {
		t.Fatal("stop on a running updater must report a transition")
	}

	for _, action := range kubeClient.Actions() {
		if action.GetVerb() != "get" {
			t.Errorf("unexpected lease call %q: the lease must never be created or updated when missing", action.GetVerb())
		}
	}
	if diff := cmp.Diff([]string{ReasonLeaseNotFound}, eventReasons(recorder)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if !updater.lastRenewTime().IsZero() {
		t.Errorf("LastRenewTime must stay zero without a renewal")
	}
}

func TestUpdaterSkipsRenewalWhileConflictOrUnverified(t *testing.T) {
	cases := []struct {
		name    string
		checker *fakeConflict
	}{
		{name: "conflict", checker: &fakeConflict{conflict: true, message: "another spoke"}},
		{name: "unverified", checker: &fakeConflict{unverified: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kubeClient := kubefake.NewSimpleClientset(newLease(nil))
			fakeClock := clocktesting.NewFakeClock(testNow)
			checker := tc.checker
			checker.calls = make(chan struct{}, 10)
			updater := &leaseUpdater{
				clusterName: testCluster, leases: kubeClient.CoordinationV1(), clock: fakeClock, conflict: checker,
				recorder: events.NewInMemoryRecorder("test", fakeClock),
			}

			updater.start(context.Background(), time.Minute)
			waitSignal(t, checker.calls)
			fakeClock.Step(time.Minute)
			waitSignal(t, checker.calls)
			if n := len(kubeClient.Actions()); n != 0 {
				t.Errorf("lease calls = %d, want 0: %v", n, kubeClient.Actions())
			}

			checker.lock.Lock()
			checker.conflict, checker.unverified = false, false
			checker.lock.Unlock()
			fakeClock.Step(time.Minute)
			waitSignal(t, checker.calls)
			updater.stop()
			if n := len(leaseActions(kubeClient, "update")); n != 1 {
				t.Errorf("updates once verified without conflict = %d, want 1", n)
			}
		})
	}
}

func TestUpdaterRestartsOnPeriodChange(t *testing.T) {
	kubeClient := kubefake.NewSimpleClientset(newLease(nil))
	fakeClock := clocktesting.NewFakeClock(testNow)
	renewed := make(chan time.Time, 10)
	updater := &leaseUpdater{
		clusterName: testCluster, leases: kubeClient.CoordinationV1(), clock: fakeClock,
		recorder: events.NewInMemoryRecorder("test", fakeClock), onRenewed: func(t time.Time) { renewed <- t },
	}
	defer updater.stop()

	updater.start(context.Background(), time.Minute)
	waitRenewal(t, renewed)
	if updater.start(context.Background(), time.Minute) {
		t.Error("start with the same period must not report a transition")
	}
	if updater.start(context.Background(), 20*time.Second) {
		t.Error("a period change is a restart, not a transition")
	}
	waitRenewal(t, renewed)
	fakeClock.Step(20 * time.Second)
	if got, want := waitRenewal(t, renewed), testNow.Add(20*time.Second); !got.Equal(want) {
		t.Errorf("renewal after the new period at %v, want %v", got, want)
	}
}

func leaseActions(client *kubefake.Clientset, verb string) []clienttesting.Action {
	var actions []clienttesting.Action
	for _, action := range client.Actions() {
		if action.GetVerb() == verb && action.GetResource().Resource == "leases" {
			actions = append(actions, action)
		}
	}
	return actions
}

// waitRenewal and waitSignal bound a wait for the renewal goroutine; they never sleep.
func waitRenewal(t *testing.T, renewed <-chan time.Time) time.Time {
	t.Helper()
	select {
	case renewTime := <-renewed:
		return renewTime
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a lease renewal")
		return time.Time{}
	}
}

func waitSignal(t *testing.T, signal <-chan struct{}) {
	t.Helper()
	select {
	case <-signal:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for the renewal loop")
	}
}

// TestWatchConflictsRequeues: a change of the verdict requeues the controller, so a
// conflict stops renewals without waiting for a ManagedCluster event.
func TestWatchConflictsRequeues(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	changed := make(chan struct{})
	c := &leaseController{conflict: &fakeConflict{changed: changed}}
	syncCtx := factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(testNow)))
	done := make(chan error)
	go func() { done <- c.watchConflicts(ctx, syncCtx) }()

	close(changed)
	got := make(chan any)
	go func() {
		item, _ := syncCtx.Queue().Get()
		got <- item
	}()
	select {
	case item := <-got:
		if item != factory.DefaultQueueKey {
			t.Errorf("queued %v, want %q", item, factory.DefaultQueueKey)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("verdict change not queued")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("hook returned %v", err)
	}
	syncCtx.Queue().ShutDown()
}

// TestLeaseRenewalJitter: each wait between renewals is period × (1 + factor × rand()), as OCM's
// agent does (wait.JitterUntil with 0.25); the event names the longest wait.
func TestLeaseRenewalJitter(t *testing.T) {
	cases := []struct {
		name      string
		factor    float64
		rand      float64
		wantWait  time.Duration
		wantEvent string
	}{
		{name: "default factor, middle of the range", factor: 0, rand: 0.5, wantWait: 67500 * time.Millisecond,
			wantEvent: "renewing Lease cluster1/managed-cluster-lease every 1m0s to 1m15s (jitter spreads renewals)"},
		{name: "default factor, lowest draw", factor: 0, rand: 0, wantWait: time.Minute,
			wantEvent: "renewing Lease cluster1/managed-cluster-lease every 1m0s to 1m15s (jitter spreads renewals)"},
		{name: "explicit factor", factor: 0.5, rand: 0.9, wantWait: 87 * time.Second,
			wantEvent: "renewing Lease cluster1/managed-cluster-lease every 1m0s to 1m30s (jitter spreads renewals)"},
		{name: "factor above the cap", factor: 4, rand: 0.5, wantWait: 90 * time.Second,
			wantEvent: "renewing Lease cluster1/managed-cluster-lease every 1m0s to 2m0s (jitter spreads renewals)"},
		{name: "jitter off", factor: -1, rand: 0.9, wantWait: time.Minute,
			wantEvent: "renewing Lease cluster1/managed-cluster-lease every 1m0s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := startRenewing(ctx, t, tc.factor, func() float64 { return tc.rand })
			fakeClock, renewed := f.clock, f.renewed
			waitRenewal(t, renewed)
			if got := f.recorder.Events(); len(got) != 1 || got[0].Message != tc.wantEvent {
				t.Errorf("events %v, want one with message %q", got, tc.wantEvent)
			}

			// Just before the wait ends nothing happens; at its end the second renewal does.
			fakeClock.Step(tc.wantWait - time.Millisecond)
			select {
			case got := <-renewed:
				t.Fatalf("renewal at %v, before the wait of %s ended", got, tc.wantWait)
			case <-time.After(200 * time.Millisecond): // a renewal goroutine woken by Step would have run by now
			}
			fakeClock.Step(time.Millisecond)
			if got, want := waitRenewal(t, renewed), testNow.Add(tc.wantWait); !got.Equal(want) {
				t.Errorf("second renewal at %v, want %v", got, want)
			}
		})
	}
}

// renewing is a lease controller on fake clients and a fake clock, synced once, so its renewal loop runs.
type renewing struct {
	controller *LeaseController
	kubeClient *kubefake.Clientset
	clock      *clocktesting.FakeClock
	renewed    chan time.Time
	recorder   events.InMemoryRecorder
}

// startRenewing returns a renewing controller for an accepted cluster with the default lease duration, the
// given jitter factor and random source; the loop stops with the test.
func startRenewing(ctx context.Context, t *testing.T, jitter float64, random func() float64) *renewing {
	t.Helper()
	cluster := newCluster(true, 0)
	informer := clusterinformers.NewSharedInformerFactory(clusterfake.NewSimpleClientset(cluster), 0).Cluster().V1().ManagedClusters()
	if err := informer.Informer().GetStore().Add(cluster); err != nil {
		t.Fatal(err)
	}
	f := &renewing{kubeClient: kubefake.NewSimpleClientset(newLease(nil)), clock: clocktesting.NewFakeClock(testNow),
		renewed: make(chan time.Time, 10)}
	f.recorder = events.NewInMemoryRecorder("test", f.clock)
	f.controller = NewLeaseController(Options{
		ClusterName:        testCluster,
		HubLeaseClient:     f.kubeClient.CoordinationV1(),
		HubClusterInformer: informer,
		Clock:              f.clock,
		JitterFactor:       jitter,
		Rand:               random,
		OnRenewed:          func(renewTime time.Time) { f.renewed <- renewTime },
		Recorder:           f.recorder,
	})
	t.Cleanup(func() { f.controller.updater.stop() })
	if err := f.controller.Sync(ctx, factory.NewSyncContext("test", f.recorder)); err != nil {
		t.Fatalf("sync: %v", err)
	}
	return f
}
