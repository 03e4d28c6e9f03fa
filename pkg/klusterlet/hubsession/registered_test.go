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

// ensuring is a session's ensureManagedCluster under test: its attempts (calls, each answered by ensure), its
// events, its fake clock and the main phase's wait group it runs on.
type ensuring struct {
	calls    atomic.Int32
	recorder events.InMemoryRecorder
	clock    *testingclock.FakeClock
	wg       sync.WaitGroup
	// done is closed once wg is free (waitGroupDone).
	done chan struct{}
}

// startEnsuring makes a session whose EnsureManagedCluster answers ensure(attempt number, from 1) and runs its
// ensureManagedCluster until ctx ends.
func startEnsuring(t *testing.T, ctx context.Context, ensure func(n int32) (bool, error)) *ensuring {
	t.Helper()
	e := &ensuring{recorder: events.NewInMemoryRecorder("test", clock.RealClock{}), clock: testingclock.NewFakeClock(time.Now())}
	c := testConfig()
	c.Controllers.EnsureManagedCluster = func(context.Context, clusterv1client.ManagedClustersGetter) (bool, error) {
		return ensure(e.calls.Add(1))
	}
	c.Recorder, c.Clock = e.recorder, e.clock
	s, err := New(c, Params{Hub: testHub()})
	if err != nil {
		t.Fatal(err)
	}
	s.ensureManagedCluster(ctx, &e.wg, nil)
	return e
}

// stepUntil steps the fake clock past each retry delay until n attempts were made, at most 10 s.
func (e *ensuring) stepUntil(n int32) {
	deadline := time.Now().Add(10 * time.Second)
	for e.calls.Load() < n && time.Now().Before(deadline) {
		if e.clock.HasWaiters() {
			e.clock.Step(ensureRetryMaxDelay)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitGroupDone returns a channel closed once the main phase's wait group is free.
func (e *ensuring) waitGroupDone() <-chan struct{} {
	if e.done == nil {
		e.done = make(chan struct{})
		go func() {
			e.wg.Wait()
			close(e.done)
		}()
	}
	return e.done
}

// TestEnsureManagedClusterKeepsTrying: a ManagedCluster that could not be made sure of before the main controllers
// start (a hub slow under a herd) is tried again in the background until it is created — the main controllers
// cannot create it themselves: without it the hub grants the agent nothing and their informer never syncs.
func TestEnsureManagedClusterKeepsTrying(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := startEnsuring(t, ctx, func(n int32) (bool, error) {
		if n <= 3 {
			return false, errors.New("context deadline exceeded")
		}
		return true, nil
	})
	if got := e.calls.Load(); got != 1 {
		t.Fatalf("%d attempts before the main controllers start, want 1", got)
	}
	e.stepUntil(4)
	if got := e.calls.Load(); got != 4 {
		t.Fatalf("%d attempts, want 4 (three failures, then the create)", got)
	}
	var created string
	for range 1000 {
		for _, ev := range e.recorder.Events() {
			if ev.Reason == managedcluster.ReasonManagedClusterCreated {
				created = ev.Message
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
	e.clock.Step(time.Hour)
	select {
	case <-e.waitGroupDone():
	case <-time.After(10 * time.Second):
		t.Fatal("the background attempts still hold the session's wait group after the create")
	}
	if got := e.calls.Load(); got != 4 {
		t.Errorf("%d attempts after the create, want 4", got)
	}
}

// TestEnsureManagedClusterStopsWithItsSession: background attempts that never succeed end when the session's
// context does, and the session's wait group waits for them.
func TestEnsureManagedClusterStopsWithItsSession(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := startEnsuring(t, ctx, func(int32) (bool, error) { return false, errors.New("forbidden") })
	e.stepUntil(3)
	if e.calls.Load() < 3 {
		t.Fatalf("%d attempts, want the background ones going on", e.calls.Load())
	}
	select {
	case <-e.waitGroupDone():
		t.Fatal("the session's wait group is free while background attempts go on: they are not joined to it")
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case <-e.waitGroupDone():
	case <-time.After(10 * time.Second):
		t.Fatal("the background attempts outlived their session's context")
	}
}
