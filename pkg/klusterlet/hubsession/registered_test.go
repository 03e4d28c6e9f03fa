package hubsession

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
	clusterv1client "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
)

// TestEnsureManagedClusterKeepsTrying: a ManagedCluster that could not be made sure of before the main controllers
// start (a hub slow under a herd) is tried again in the background until it is created — the main controllers
// cannot create it themselves: without it the hub grants the agent nothing and their informer never syncs.
func TestEnsureManagedClusterKeepsTrying(t *testing.T) {
	var calls atomic.Int32
	c := testConfig()
	c.Controllers.EnsureManagedCluster = func(context.Context, clusterv1client.ManagedClustersGetter) (bool, error) {
		if calls.Add(1) <= 3 {
			return false, errors.New("context deadline exceeded")
		}
		return true, nil
	}
	recorder := events.NewInMemoryRecorder("test", clock.RealClock{})
	c.Recorder = recorder
	fakeClock := testingclock.NewFakeClock(time.Now())
	c.Clock = fakeClock
	s, err := New(c, Params{Hub: testHub()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	s.ensureManagedCluster(ctx, &wg, nil)
	if got := calls.Load(); got != 1 {
		t.Fatalf("%d attempts before the main controllers start, want 1", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < 4 && time.Now().Before(deadline) {
		if fakeClock.HasWaiters() {
			fakeClock.Step(ensureRetryMaxDelay)
		}
		time.Sleep(time.Millisecond)
	}
	if got := calls.Load(); got != 4 {
		t.Fatalf("%d attempts, want 4 (three failures, then the create)", got)
	}
	var created string
	for range 1000 {
		for _, e := range recorder.Events() {
			if e.Reason == managedcluster.ReasonManagedClusterCreated {
				created = e.Message
			}
		}
		if created != "" {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if !strings.Contains(created, "while the main controllers wait for it") {
		t.Errorf("%s event %q, want one for the background create", managedcluster.ReasonManagedClusterCreated, created)
	}
	// Nothing more once it succeeded, and the background attempts are done: the session's wait group is free.
	fakeClock.Step(time.Hour)
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the background attempts still hold the session's wait group after the create")
	}
	if got := calls.Load(); got != 4 {
		t.Errorf("%d attempts after the create, want 4", got)
	}
}

// TestEnsureManagedClusterStopsWithItsSession: background attempts that never succeed end when the session's
// context does, and the session's wait group waits for them.
func TestEnsureManagedClusterStopsWithItsSession(t *testing.T) {
	var calls atomic.Int32
	c := testConfig()
	c.Controllers.EnsureManagedCluster = func(context.Context, clusterv1client.ManagedClustersGetter) (bool, error) {
		calls.Add(1)
		return false, errors.New("forbidden")
	}
	c.Recorder = events.NewInMemoryRecorder("test", clock.RealClock{})
	fakeClock := testingclock.NewFakeClock(time.Now())
	c.Clock = fakeClock
	s, err := New(c, Params{Hub: testHub()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	s.ensureManagedCluster(ctx, &wg, nil)
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < 3 && time.Now().Before(deadline) {
		if fakeClock.HasWaiters() {
			fakeClock.Step(ensureRetryMaxDelay)
		}
		time.Sleep(time.Millisecond)
	}
	if calls.Load() < 3 {
		t.Fatalf("%d attempts, want the background ones going on", calls.Load())
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("the session's wait group is free while background attempts go on: they are not joined to it")
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the background attempts outlived their session's context")
	}
}
