package replicator

import (
	"context"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	replisters "github.com/klusterlet-failover/klusterlet-failover/pkg/client/listers/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/replication"
)

// reconfigureControllerName names the controller that keeps the replication engine in line with the
// ReplicationConfig (its queue, logs and events).
const reconfigureControllerName = "ReplicationConfigController"

// reconfigureController keeps one replication engine running for the current ReplicationConfig and the hubs'
// kubeconfig Secrets, and writes the ReplicationConfig's status. Its sync runs on one worker and is the only
// writer of running and carried.
type reconfigureController struct {
	// ctx is RunWithClients's: the engines run under it, with its logger (the factory calls sync with a
	// context of its own, without them).
	ctx        context.Context
	o          *Options
	replClient versioned.Interface
	recorder   events.Recorder
	clk        clock.WithTicker
	configs    replisters.ReplicationConfigNamespaceLister
	secrets    corelisters.SecretNamespaceLister
	// queue asks for a sync (a delete brake engaged, a watched object changed).
	queue func()

	// running is the engine started from the current configuration (nil: none, the ReplicationConfig is
	// deleted or invalid).
	running *engine
	// carried are the brakes of the last engine, kept while no engine runs (an invalid spec): a new engine
	// starts with them.
	carried map[string]time.Time
}

// sync reads the ReplicationConfig (Options.ConfigName): deleted, it stops the engine; invalid (validation, or
// kinds that cannot be resolved), it stops the engine, keeps its engaged brakes and writes the error into the
// status; otherwise it starts an engine when none runs or the spec or a referenced Secret changed
// (configFingerprint), passes on the release tokens of delete brakes, and writes the status. It returns an
// error only when the ReplicationConfig cannot be read (the factory retries it); a status write that fails is
// logged and made again at the next resync.
func (c *reconfigureController) sync(_ context.Context, _ factory.SyncContext) error {
	ctx := c.ctx
	logger := klog.FromContext(ctx)
	rc, err := c.configs.Get(c.o.ConfigName)
	if apierrors.IsNotFound(err) {
		if c.running != nil {
			logger.Info("ReplicationConfig deleted: replication stopped")
			c.running.stop()
			c.running, c.carried = nil, nil
		}
		return nil
	}
	if err != nil {
		return err
	}
	if errs := failoverv1alpha1.ValidateReplicationConfig(rc); len(errs) > 0 {
		c.stopInvalid(rc)
		c.o.writeStatus(ctx, c.replClient, rc, nil, replication.Snapshot{}, errs.ToAggregate().Error(), c.clk.Now())
		return nil
	}
	if _, err := mirror.ResolveKinds(&rc.Spec); err != nil {
		c.stopInvalid(rc)
		c.o.writeStatus(ctx, c.replClient, rc, nil, replication.Snapshot{}, err.Error(), c.clk.Now())
		return nil
	}
	fingerprint := configFingerprint(rc, c.secrets)
	if c.running == nil || c.running.fingerprint != fingerprint {
		engaged := engagedBrakes(rc, c.running, c.carried)
		if c.running != nil {
			logger.Info("ReplicationConfig or a hub kubeconfig Secret changed: restarting replication")
			c.running.stop()
		}
		c.running = c.o.start(ctx, rc, c.secrets, c.recorder, c.clk, fingerprint, engaged, c.queue)
		c.carried = nil
	}
	if c.running.controller != nil {
		if tokens := releaseTokens(rc); len(tokens) > 0 {
			if released := c.running.controller.ReleaseDeletes(tokens); len(released) > 0 {
				logger.Info("Delete brakes released", "tokens", released)
			}
		}
	}
	snap := c.running.snapshot()
	recordSnapshot(snap)
	c.o.writeStatus(ctx, c.replClient, rc, c.running.hubStatus(), snap, "", c.clk.Now())
	return nil
}

// resyncStatus queues a sync every Options.StatusInterval on the injected clock until ctx ends (a post-start
// hook of the factory controller: the factory's own resync runs on the wall clock, and warns of an interval
// under a minute, which the status interval is).
func (c *reconfigureController) resyncStatus(ctx context.Context, _ factory.SyncContext) error {
	ticker := c.clk.NewTicker(c.o.StatusInterval)
	defer ticker.Stop()
	c.queue()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
			c.queue()
		}
	}
}

// stopInvalid stops the running engine, if any, for rc, whose spec cannot run: the brakes it had engaged are
// carried to the next engine.
func (c *reconfigureController) stopInvalid(rc *failoverv1alpha1.ReplicationConfig) {
	if c.running == nil {
		return
	}
	c.carried = engagedBrakes(rc, c.running, c.carried)
	c.running.stop()
	c.running = nil
}

// stop stops the running engine once the controller's workers returned.
func (c *reconfigureController) stop() {
	if c.running != nil {
		c.running.stop()
		c.running = nil
	}
}
