package startwait

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// timerClock is a fake clock that reports the duration of every timer created on it, so that a test steps the
// clock only once the code under test is waiting.
type timerClock struct {
	*clocktesting.FakeClock
	timers chan time.Duration
}

func newTimerClock() *timerClock {
	return &timerClock{FakeClock: clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)),
		timers: make(chan time.Duration, 1000)}
}

func (c *timerClock) NewTimer(d time.Duration) clock.Timer {
	timer := c.FakeClock.NewTimer(d)
	c.timers <- d
	return timer
}

// run calls poll on its own goroutine and steps the clock to the end of each wait poll starts, until poll
// returns. It returns poll's result, the waits in order, and the fake time that passed.
func (c *timerClock) run(t *testing.T, poll func() bool) (bool, []time.Duration, time.Duration) {
	t.Helper()
	start := c.Now()
	result := make(chan bool, 1)
	go func() { result <- poll() }()
	var waits []time.Duration
	for {
		select {
		case got := <-result:
			return got, waits, c.Since(start)
		case d := <-c.timers:
			waits = append(waits, d)
			c.Step(d)
		case <-time.After(30 * time.Second):
			t.Fatalf("poll neither waited nor returned; waits so far %v", waits)
		}
	}
}

func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// TestAwaitSynced: checks at once and then every 5 ms; true as soon as every informer has synced; false when one
// has not by the bound (checked a last time at the bound) or when the context has ended.
func TestAwaitSynced(t *testing.T) {
	ctx := context.Background()
	t.Run("synced at once", func(t *testing.T) {
		c := newTimerClock()
		got, waits, _ := c.run(t, func() bool { return AwaitSynced(ctx, c, time.Second, func() bool { return true }) })
		if !got || len(waits) != 0 {
			t.Errorf("AwaitSynced = %t after waits %v, want true without a wait", got, waits)
		}
	})
	t.Run("synced at the fourth check", func(t *testing.T) {
		c := newTimerClock()
		calls := 0
		later := func() bool { calls++; return calls >= 4 }
		got, waits, took := c.run(t, func() bool { return AwaitSynced(ctx, c, time.Second, func() bool { return true }, later) })
		if !got {
			t.Error("AwaitSynced = false, want true once every informer has synced")
		}
		if want := repeat(syncPollInterval, 3); !reflect.DeepEqual(waits, want) || took != 15*time.Millisecond {
			t.Errorf("waits %v (%s), want %v", waits, took, want)
		}
	})
	t.Run("never synced", func(t *testing.T) {
		c := newTimerClock()
		calls := 0
		got, waits, took := c.run(t, func() bool {
			return AwaitSynced(ctx, c, 50*time.Millisecond, func() bool { calls++; return false })
		})
		if got {
			t.Error("AwaitSynced = true for an informer that never syncs")
		}
		if took != 50*time.Millisecond || calls != 11 || !reflect.DeepEqual(waits, repeat(syncPollInterval, 10)) {
			t.Errorf("returned after %s, %d checks, waits %v; want at the 50ms bound after 11 checks 5ms apart", took, calls, waits)
		}
	})
	t.Run("context ended", func(t *testing.T) {
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if AwaitSynced(cancelled, newTimerClock(), time.Minute, func() bool { return false }) {
			t.Error("AwaitSynced = true with a cancelled context")
		}
	})
}

// accessReviews is a fake hub answering SelfSubjectAccessReviews: denied until the allowAt-th (1-based; 0 never),
// or failing every one with err.
type accessReviews struct {
	client  *kubefake.Clientset
	reviews []authorizationv1.ResourceAttributes
}

func newAccessReviews(allowAt int, err error) *accessReviews {
	a := &accessReviews{client: kubefake.NewSimpleClientset()}
	a.client.PrependReactor("create", "selfsubjectaccessreviews", func(action clienttesting.Action) (bool, runtime.Object, error) {
		review := action.(clienttesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		a.reviews = append(a.reviews, *review.Spec.ResourceAttributes)
		if err != nil {
			return true, nil, err
		}
		answer := review.DeepCopy()
		answer.Status.Allowed = allowAt > 0 && len(a.reviews) >= allowAt
		if !answer.Status.Allowed {
			answer.Status.Reason = "no RBAC policy matched"
		}
		return true, answer, nil
	})
	return a
}

// TestAwaitHubAccess: the review asks for list on the cluster's own ManagedCluster; it is repeated after 10, 20,
// 40 … ms up to 500 ms while denied, never past the bound; a failed request ends the wait at once.
func TestAwaitHubAccess(t *testing.T) {
	ctx := context.Background()
	ms := time.Millisecond
	t.Run("allowed at the fourth review", func(t *testing.T) {
		c, hub := newTimerClock(), newAccessReviews(4, nil)
		var err error
		_, waits, took := c.run(t, func() bool {
			err = AwaitHubAccess(ctx, c, 10*time.Second, hub.client.AuthorizationV1(), "cluster1")
			return err == nil
		})
		if err != nil {
			t.Fatalf("AwaitHubAccess = %v, want nil once allowed", err)
		}
		if want := []time.Duration{10 * ms, 20 * ms, 40 * ms}; !reflect.DeepEqual(waits, want) || took != 70*ms {
			t.Errorf("waits %v (%s), want %v", waits, took, want)
		}
		want := authorizationv1.ResourceAttributes{Verb: "list", Group: "cluster.open-cluster-management.io",
			Resource: "managedclusters", Name: "cluster1"}
		if len(hub.reviews) != 4 || hub.reviews[0] != want || hub.reviews[3] != want {
			t.Errorf("reviews %+v, want 4 of %+v", hub.reviews, want)
		}
	})
	t.Run("denied until the bound", func(t *testing.T) {
		c, hub := newTimerClock(), newAccessReviews(0, nil)
		var err error
		_, waits, took := c.run(t, func() bool {
			err = AwaitHubAccess(ctx, c, time.Second, hub.client.AuthorizationV1(), "cluster1")
			return err == nil
		})
		// Reviews at 0, 10, 30, 70, 150, 310, 630 ms and at the bound, 1 s.
		want := []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 370 * ms}
		if !reflect.DeepEqual(waits, want) || took != time.Second || len(hub.reviews) != 8 {
			t.Errorf("waits %v (%s), %d reviews; want %v and 8 reviews", waits, took, len(hub.reviews), want)
		}
		if err == nil || !strings.Contains(err.Error(), "after 1s") || !strings.Contains(err.Error(), "managedclusters/cluster1") ||
			!strings.Contains(err.Error(), "no RBAC policy matched") {
			t.Errorf("AwaitHubAccess = %v, want the bound, the resource and the hub's reason", err)
		}
	})
	t.Run("the cap", func(t *testing.T) {
		c, hub := newTimerClock(), newAccessReviews(0, nil)
		_, waits, _ := c.run(t, func() bool {
			return AwaitHubAccess(ctx, c, 3*time.Second, hub.client.AuthorizationV1(), "cluster1") == nil
		})
		if len(waits) < 9 || waits[6] != accessPollMax || waits[7] != accessPollMax {
			t.Errorf("waits %v, want the delay capped at %s from the seventh", waits, accessPollMax)
		}
	})
	t.Run("review fails", func(t *testing.T) {
		refused := apierrors.NewForbidden(schema.GroupResource{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}, "", errors.New("no"))
		c, hub := newTimerClock(), newAccessReviews(0, refused)
		var err error
		_, waits, _ := c.run(t, func() bool {
			err = AwaitHubAccess(ctx, c, 10*time.Second, hub.client.AuthorizationV1(), "cluster1")
			return err == nil
		})
		if !apierrors.IsForbidden(err) || len(waits) != 0 || len(hub.reviews) != 1 {
			t.Errorf("AwaitHubAccess = %v after waits %v; want the request's error at once", err, waits)
		}
	})
	t.Run("context ended", func(t *testing.T) {
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		hub := newAccessReviews(0, nil)
		if err := AwaitHubAccess(cancelled, newTimerClock(), time.Minute, hub.client.AuthorizationV1(), "cluster1"); !errors.Is(err, context.Canceled) {
			t.Errorf("AwaitHubAccess = %v, want context.Canceled", err)
		}
	})
}
