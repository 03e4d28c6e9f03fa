// Package startwait holds the bounded waits the agent makes before it starts controllers, on an injected clock:
// AwaitSynced (the informers a set of controllers reads have synced) and AwaitHubAccess (the hub lets the agent
// identity list its ManagedCluster). Both give up at a bound, so that what cannot be waited for holds nothing
// back for longer. Users: the agent's wiring (pkg/klusterlet) and each hub session (hubsession).
package startwait

import (
	"context"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

// syncPollInterval is how often AwaitSynced checks the informers: HasSynced only takes a lock, so a short period
// costs nothing noticeable.
const syncPollInterval = 5 * time.Millisecond

// AwaitSynced waits until every informer in synced has synced, ctx ends, or bound passes on clk, checking every
// 5 ms, and reports whether all had synced. Call it after starting the informers and before starting library-go
// controllers on them: those check their informers at once and then only every 100 ms (client-go's
// WaitForCacheSync), so a controller started a moment before its informers synced waits up to 100 ms more;
// after AwaitSynced their first check passes. The bound keeps an informer that cannot sync (a hub that does
// not authorise the list yet) from holding back what follows for longer than bound; the controllers still
// wait for their own informers then.
func AwaitSynced(ctx context.Context, clk clock.Clock, bound time.Duration, synced ...cache.InformerSynced) bool {
	return pollBounded(ctx, clk, bound, func() time.Duration { return syncPollInterval }, func() bool {
		for _, s := range synced {
			if !s() {
				return false
			}
		}
		return true
	})
}

// Hub access reviews (AwaitHubAccess) are retried after 10 ms, then twice as long each time up to 500 ms.
const (
	accessPollFirst = 10 * time.Millisecond
	accessPollMax   = 500 * time.Millisecond
)

// AwaitHubAccess waits until the hub lets the identity of client list the ManagedCluster clusterName, which it
// asks with a SelfSubjectAccessReview (verb list, group cluster.open-cluster-management.io, resource
// managedclusters, name clusterName) at once and then after 10 ms, 20 ms, … up to every 500 ms, until ctx ends
// or bound passes on clk. It returns nil once allowed; otherwise an error that says what the last review
// answered (denied, or the error of its request: it stops at the first failed request, since a hub that does
// not answer reviews cannot be waited for this way).
//
// Why: an agent gets its certificate as soon as its CSR is approved, but OCM's hub gives that identity its rights
// only when it accepts the cluster (ClusterRole and ClusterRoleBinding open-cluster-management:managedcluster:
// <cluster>, which hold the ManagedCluster and CSR rules together). An informer that lists before then is
// refused, and client-go's reflector retries only after about a second. Starting the hub informers once this
// returns saves that second; on an error they start anyway and the reflector retries as before.
func AwaitHubAccess(ctx context.Context, clk clock.Clock, bound time.Duration, client authorizationv1client.SelfSubjectAccessReviewsGetter, clusterName string) error {
	review := &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: "list", Group: clusterv1.GroupName, Resource: "managedclusters", Name: clusterName,
		}},
	}
	var last error // what the latest review answered; done runs at least once
	delay := accessPollFirst
	next := func() time.Duration {
		d := delay
		delay = min(2*delay, accessPollMax)
		return d
	}
	allowed := pollBounded(ctx, clk, bound, next, func() bool {
		reqCtx, cancel := context.WithTimeout(ctx, bound)
		defer cancel()
		answer, err := client.SelfSubjectAccessReviews().Create(reqCtx, review, metav1.CreateOptions{})
		switch {
		case err != nil:
			last = fmt.Errorf("SelfSubjectAccessReview for list managedclusters/%s failed: %w", clusterName, err)
			return true
		case answer.Status.Allowed:
			last = nil
			return true
		default:
			last = fmt.Errorf("the hub does not allow list managedclusters/%s yet (reason %q)", clusterName, answer.Status.Reason)
			return false
		}
	})
	if allowed {
		return last
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("after %s: %w", bound, last)
}

// pollBounded calls done at once, then again after each delay next returns (on clk), until done reports true, ctx
// ends or the delays add up to bound; it reports whether done reported true. The last delay is cut to end at the
// bound, where done gets its last call. The bound counts the waits only, not the time done takes, so that a clock
// whose Now is shifted while it waits (a skewed test clock) cannot stretch or cut it.
func pollBounded(ctx context.Context, clk clock.Clock, bound time.Duration, next func() time.Duration, done func() bool) bool {
	var waited time.Duration
	for {
		if done() {
			return true
		}
		if waited >= bound {
			return false
		}
		d := min(next(), bound-waited)
		wait := clk.NewTimer(d)
		select {
		case <-ctx.Done():
			wait.Stop()
			return false
		case <-wait.C():
			waited += d
		}
	}
}
