package lease

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	clusterv1informer "open-cluster-management.io/api/client/cluster/informers/externalversions/cluster/v1"
	clusterv1listers "open-cluster-management.io/api/client/cluster/listers/cluster/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

const (
	// LeaseName is the name of the Lease the hub creates in namespace <cluster>.
	LeaseName = "managed-cluster-lease"
	// DefaultLeaseDurationSeconds is the renewal period when the ManagedCluster's
	// spec.leaseDurationSeconds is 0 (OCM API documentation).
	DefaultLeaseDurationSeconds = 60
	// DefaultJitterFactor is the largest extra wait between two renewals, as a fraction of
	// the period: a renewal follows the previous one after period × (1 + [0, 0.25)), as with
	// OCM's registration agent (leaseUpdateJitterFactor). The hub only marks a cluster
	// unknown after 5 periods without a renewal, so the spread costs nothing and keeps the
	// renewals of many clusters from lining up.
	DefaultJitterFactor = 0.25
	// MaxJitterFactor caps Options.JitterFactor: at most twice the period between renewals.
	MaxJitterFactor = 1.0

	controllerName = "ManagedClusterLeaseController"
	fieldManager   = "klusterlet-failover"
)

// Event reasons of the lease controller. They are user-visible API.
const (
	// ReasonLeaseUpdateStarted (Normal): the renewal loop started (cluster accepted, no
	// conflict); the message gives the period.
	ReasonLeaseUpdateStarted = "LeaseUpdateStarted"
	// ReasonLeaseUpdateStopped (Normal): the renewal loop stopped; the message gives why
	// (ManagedCluster gone, not accepted, identity conflict).
	ReasonLeaseUpdateStopped = "LeaseUpdateStopped"
	// ReasonLeaseNotFound (Warning): the hub lease does not exist; the agent waits for the
	// hub to create it. Once per failure streak.
	ReasonLeaseNotFound = "LeaseNotFound"
	// ReasonLeaseUpdateFailed (Warning): a get or update of the lease failed. Once per
	// failure streak.
	ReasonLeaseUpdateFailed = "LeaseUpdateFailed"
)

// ConflictChecker reports the identity verdict of the status controller (satisfied by
// *managedcluster.ConflictTracker).
type ConflictChecker interface {
	// Verified reports whether this spoke's identity was compared with the hub's at least
	// once; no renewal happens before.
	Verified() bool
	// Conflict reports whether another spoke owns this cluster name, with a message.
	Conflict() (bool, string)
	// Changed returns a channel closed at the next change of the verdict.
	Changed() <-chan struct{}
}

// Options are the dependencies of the lease controller.
type Options struct {
	// ClusterName is the ManagedCluster name, also the namespace of the lease. Required.
	ClusterName string
	// HubLeaseClient gets and updates the lease on the hub (hub kubeClient.CoordinationV1()).
	// Required.
	HubLeaseClient coordinationv1client.LeasesGetter
	// HubClusterInformer is the hub ManagedCluster informer scoped with
	// fieldSelector=metadata.name=<cluster>; it gives acceptance and
	// spec.leaseDurationSeconds. Required.
	HubClusterInformer clusterv1informer.ManagedClusterInformer
	// ConflictChecker holds renewals until it is verified and stops them while it reports
	// a conflict (FC-06). Optional: without it renewal depends on acceptance only.
	ConflictChecker ConflictChecker
	// Clock drives the renewal timer and spec.renewTime. Default: real clock.
	Clock clock.Clock
	// JitterFactor is the largest extra wait between renewals as a fraction of the period
	// (see DefaultJitterFactor). 0 means DefaultJitterFactor; a negative value means none
	// (renewal exactly every period); values above MaxJitterFactor are capped, so a renewal
	// always comes well within the hub's 5 periods.
	JitterFactor float64
	// Rand returns the random number in [0, 1) that picks each wait within the jitter. It is
	// called from the renewal goroutine. Default: math/rand/v2 Float64.
	Rand func() float64
	// OnRenewed, if set, is called from the renewal goroutine after each successful
	// renewal with the spec.renewTime written (agent clock). It must not block.
	OnRenewed func(renewTime time.Time)
	// Recorder receives the spoke events of this controller. Required.
	Recorder events.Recorder
}

// LeaseController is the factory controller "ManagedClusterLeaseController" plus an
// accessor for the last successful renewal. Run it with one worker; cancelling Run's
// context stops the renewal loop too.
type LeaseController struct {
	factory.Controller
	updater *leaseUpdater
}

// LastRenewTime returns the spec.renewTime (agent clock, microsecond precision) of the last
// successful renewal of the hub lease, or the zero time before the first one. Safe for
// concurrent use.
func (c *LeaseController) LastRenewTime() time.Time {
	return c.updater.lastRenewTime()
}

// leaseController decides whether the renewal loop runs. Requeue policy: it reacts to
// ManagedCluster events and ConflictChecker changes; it does no hub call itself, so it
// never returns an error except for an unexpected lister failure.
type leaseController struct {
	clusterName string
	lister      clusterv1listers.ManagedClusterLister
	conflict    ConflictChecker
	updater     leaseUpdaterInterface
}

// NewLeaseController returns the lease controller.
func NewLeaseController(opts Options) *LeaseController {
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	jitter := opts.JitterFactor
	switch {
	case jitter == 0:
		jitter = DefaultJitterFactor
	case jitter < 0:
		jitter = 0
	case jitter > MaxJitterFactor:
		jitter = MaxJitterFactor
	}
	random := opts.Rand
	if random == nil {
		random = rand.Float64
	}
	updater := &leaseUpdater{
		clusterName: opts.ClusterName,
		leases:      opts.HubLeaseClient,
		clock:       clk,
		jitter:      jitter,
		rand:        random,
		conflict:    opts.ConflictChecker,
		recorder:    opts.Recorder.WithComponentSuffix(strings.ToLower(controllerName)),
		onRenewed:   opts.OnRenewed,
	}
	c := &leaseController{
		clusterName: opts.ClusterName,
		lister:      opts.HubClusterInformer.Lister(),
		conflict:    opts.ConflictChecker,
		updater:     updater,
	}
	f := factory.New().
		WithFilteredEventsInformers(factory.NamesFilter(opts.ClusterName), opts.HubClusterInformer.Informer()).
		WithSync(c.sync)
	if opts.ConflictChecker != nil {
		f = f.WithPostStartHooks(c.watchConflicts)
	}
	return &LeaseController{Controller: f.ToController(controllerName, opts.Recorder), updater: updater}
}

func (c *leaseController) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	logger := klog.FromContext(ctx).WithValues("controller", controllerName, "managedCluster", c.clusterName)

	cluster, err := c.lister.Get(c.clusterName)
	reason := ""
	switch {
	case apierrors.IsNotFound(err):
		reason = fmt.Sprintf("ManagedCluster %q is not on the hub", c.clusterName)
	case err != nil:
		return fmt.Errorf("unable to get ManagedCluster %q from the hub cache: %w", c.clusterName, err)
	case !meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted):
		reason = fmt.Sprintf("ManagedCluster %q is not accepted by the hub", c.clusterName)
	case c.conflict != nil && !c.conflict.Verified():
		reason = "the identity of this spoke is not verified against the hub yet"
	case c.conflict != nil:
		if conflict, message := c.conflict.Conflict(); conflict {
			reason = message
		}
	}
	if reason != "" {
		if c.updater.stop() {
			syncCtx.Recorder().Eventf(ReasonLeaseUpdateStopped, "stopped renewing Lease %s/%s: %s", c.clusterName, LeaseName, reason)
			logger.Info("Stopped renewing the hub lease", "reason", reason)
		}
		return nil
	}

	period := leaseDuration(cluster)
	if c.updater.start(ctx, period) {
		syncCtx.Recorder().Eventf(ReasonLeaseUpdateStarted, "renewing Lease %s/%s every %s%s", c.clusterName, LeaseName, period, c.updater.jitterDescription(period))
		logger.Info("Started renewing the hub lease", "period", period)
	}
	return nil
}

// watchConflicts requeues the controller whenever the conflict verdict changes.
func (c *leaseController) watchConflicts(ctx context.Context, syncCtx factory.SyncContext) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.conflict.Changed():
			syncCtx.Queue().Add(factory.DefaultQueueKey)
		}
	}
}

// leaseDuration returns spec.leaseDurationSeconds, 0 meaning DefaultLeaseDurationSeconds.
func leaseDuration(cluster *clusterv1.ManagedCluster) time.Duration {
	seconds := cluster.Spec.LeaseDurationSeconds
	if seconds <= 0 {
		seconds = DefaultLeaseDurationSeconds
	}
	return time.Duration(seconds) * time.Second
}
