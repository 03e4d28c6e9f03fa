package lease

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// leaseUpdaterInterface is the seam between the controller's decisions and the renewal
// loop, so sync can be tested with a fake.
type leaseUpdaterInterface interface {
	// start ensures a renewal loop with the given period runs under ctx. It returns true
	// when no loop ran before (a transition worth an event); a running loop with another
	// period is restarted and false is returned.
	start(ctx context.Context, period time.Duration) bool
	// stop ends the loop and waits for it to exit; after it returns no renewal happens. It
	// returns true when a loop was running.
	stop() bool
	// jitterDescription returns " to <longest wait> (jitter spreads renewals)" for the event
	// text, "" without jitter.
	jitterDescription(period time.Duration) string
}

// leaseUpdater renews the hub lease at start, then each time the injected clock's timer
// fires: period × (1 + jitter × rand()) after the previous renewal started (OCM's agent
// counts from the end of the previous renewal; the difference is one request's latency).
// A renewal is skipped while the conflict checker reports a conflict or is unverified (the
// controller stops the loop soon after; this closes the gap).
// It keeps the lease returned by its last update and sends it back with the new renewTime
// (one request per renewal); after any error it GETs the lease again. A missing lease is
// never created: it is reported once (LeaseNotFound) and looked up again next period.
type leaseUpdater struct {
	clusterName string
	leases      coordinationv1client.LeasesGetter
	clock       clock.Clock
	conflict    ConflictChecker
	recorder    events.Recorder
	onRenewed   func(time.Time)
	// jitter is the largest extra wait as a fraction of the period (0: none); rand picks
	// within it (nil: none).
	jitter float64
	rand   func() float64

	// lock guards the loop handle.
	lock   sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	period time.Duration

	// stateLock guards the renewal state shared with the loop goroutine and readers.
	stateLock sync.Mutex
	lastRenew time.Time
	cached    *coordinationv1.Lease
	// reported is the reason of the last Warning event of the current failure streak.
	reported string
}

var _ leaseUpdaterInterface = &leaseUpdater{}

func (u *leaseUpdater) start(ctx context.Context, period time.Duration) bool {
	u.lock.Lock()
	defer u.lock.Unlock()
	transition := u.cancel == nil
	if !transition {
		if u.period == period {
			return false
		}
		u.stopLocked()
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	u.cancel, u.done, u.period = cancel, done, period
	go u.run(runCtx, period, done)
	return transition
}

func (u *leaseUpdater) stop() bool {
	u.lock.Lock()
	defer u.lock.Unlock()
	if u.cancel == nil {
		return false
	}
	u.stopLocked()
	return true
}

func (u *leaseUpdater) stopLocked() {
	u.cancel()
	<-u.done
	u.cancel, u.done = nil, nil
}

// lastRenewTime returns the spec.renewTime of the last successful renewal, zero if none.
func (u *leaseUpdater) lastRenewTime() time.Time {
	u.stateLock.Lock()
	defer u.stateLock.Unlock()
	return u.lastRenew
}

// run renews at once and then whenever the timer fires. The timer is armed before each
// renewal so the period is measured start to start, and so that a fake clock stepped
// right after a renewal is observed always fires it.
func (u *leaseUpdater) run(ctx context.Context, period time.Duration, done chan struct{}) {
	defer close(done)
	defer utilruntime.HandleCrashWithContext(ctx)
	for {
		timer := u.clock.NewTimer(u.wait(period))
		u.renew(ctx, period)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C():
		}
	}
}

// wait returns the time until the next renewal: period plus its jitter.
func (u *leaseUpdater) wait(period time.Duration) time.Duration {
	if u.jitter <= 0 || u.rand == nil {
		return period
	}
	return period + time.Duration(u.jitter*u.rand()*float64(period))
}

func (u *leaseUpdater) jitterDescription(period time.Duration) string {
	if u.jitter <= 0 || u.rand == nil {
		return ""
	}
	return fmt.Sprintf(" to %s (jitter spreads renewals)", period+time.Duration(u.jitter*float64(period)))
}

// renew sets spec.renewTime of the hub lease to now and reports the renewal.
func (u *leaseUpdater) renew(ctx context.Context, period time.Duration) {
	if ctx.Err() != nil {
		return
	}
	logger := klog.FromContext(ctx).WithValues("lease", klog.KRef(u.clusterName, LeaseName))
	if u.conflict != nil {
		if conflict, _ := u.conflict.Conflict(); conflict || !u.conflict.Verified() {
			logger.V(2).Info("Identity unverified or in conflict; lease not renewed", "conflict", conflict)
			return
		}
	}
	renewTime, ok := u.renewLocked(ctx, logger, period)
	if ok && u.onRenewed != nil {
		u.onRenewed(renewTime)
	}
}

// renewLocked does the hub calls of one renewal under stateLock.
func (u *leaseUpdater) renewLocked(ctx context.Context, logger klog.Logger, period time.Duration) (time.Time, bool) {
	u.stateLock.Lock()
	defer u.stateLock.Unlock()

	client := u.leases.Leases(u.clusterName)
	lease := u.cached
	if lease == nil {
		current, err := client.Get(ctx, LeaseName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			u.reportLocked(ReasonLeaseNotFound, fmt.Sprintf("Lease %s/%s does not exist on the hub yet; the agent never creates it and looks again in %s", u.clusterName, LeaseName, period))
			logger.Info("Hub lease not found; waiting for the hub to create it", "retryAfter", period)
			return time.Time{}, false
		case err != nil:
			u.failLocked(ctx, fmt.Errorf("unable to get Lease %s/%s from the hub: %w", u.clusterName, LeaseName, err))
			return time.Time{}, false
		}
		lease = current
	}

	renewTime := u.clock.Now().Truncate(time.Microsecond)
	lease = lease.DeepCopy()
	lease.Spec.RenewTime = &metav1.MicroTime{Time: renewTime}
	updated, err := client.Update(ctx, lease, metav1.UpdateOptions{FieldManager: fieldManager})
	if err != nil {
		// A conflict or a deleted lease: look it up again next time.
		u.cached = nil
		if ctx.Err() == nil {
			u.failLocked(ctx, fmt.Errorf("unable to update Lease %s/%s on the hub: %w", u.clusterName, LeaseName, err))
		}
		return time.Time{}, false
	}
	u.cached = updated
	u.lastRenew = renewTime
	u.reported = ""
	logger.V(4).Info("Renewed the hub lease", "renewTime", renewTime)
	return renewTime, true
}

func (u *leaseUpdater) failLocked(ctx context.Context, err error) {
	utilruntime.HandleErrorWithContext(ctx, err, "Lease renewal failed", "lease", klog.KRef(u.clusterName, LeaseName))
	u.reportLocked(ReasonLeaseUpdateFailed, err.Error())
}

// reportLocked emits a Warning once per failure streak and reason.
func (u *leaseUpdater) reportLocked(reason, message string) {
	if u.reported == reason {
		return
	}
	u.reported = reason
	u.recorder.Warning(reason, message)
}
