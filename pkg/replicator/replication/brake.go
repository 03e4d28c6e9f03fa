package replication

import (
	"errors"
	"time"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/brake"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/metrics"
)

// errDeleteHeld is returned by deleteCopy (and the write-back of a delete) when the hub's delete brake holds the
// delete: the hub is not in step for the key (markBehind) and nothing failed; the key is synced again when a
// person releases the brake (ReleaseDeletes).
var errDeleteHeld = errors.New("the hub's delete brake holds the delete")

// admitDelete asks the brake whether key's object may be deleted on hub now; it returns errDeleteHeld when not.
// The brake engaging is reported once: a Warning event ReasonDeletesHeld naming the hub, the limit and the
// release token, a log line and the metric metrics.DeleteBrakeEngaged.
func (c *Controller) admitDelete(hub string, key Key) error {
	switch c.brake.Admit(hub, key, func() int { return c.hubObjects(hub) }) {
	case brake.Admitted:
		return nil
	case brake.Engaged:
		metrics.DeleteBrakeEngaged.WithLabelValues(hub).Set(1)
		for _, s := range c.brake.Engaged() {
			if s.Hub != hub {
				continue
			}
			c.logger.Info("Delete brake engaged: no delete is made on the hub until a person releases it",
				"hub", hub, "limit", s.Limit, "since", s.Since, "object", key.String(), "releaseToken", s.Token())
			c.opts.Recorder.Warningf(ReasonDeletesHeld,
				"hub %s: deleting %s would make more than %d deletes there within %s (spec.deleteBrake): every delete on hub %s waits until a person releases it with the annotation %s=%s on the ReplicationConfig",
				hub, key, s.Limit, c.opts.DeleteBrake.Window, hub, failoverv1alpha1.AnnotationReleaseDeletes, s.Token())
		}
		if c.opts.BrakeEngaged != nil {
			c.opts.BrakeEngaged()
		}
	}
	c.logger.V(2).Info("Delete held by the hub's delete brake", "hub", hub, "object", key.String())
	return errDeleteHeld
}

// hubObjectsMemo is how long hubObjects reuses a count: counting lists every cache's keys.
const hubObjectsMemo = 10 * time.Second

// hubObjects is the base of hub's share of deletes: the objects of the mirrored kinds its caches hold (counted
// at most every hubObjectsMemo), or, while it is not ready, the source objects the controller knows.
func (c *Controller) hubObjects(hub string) int {
	now := c.opts.Clock.Now()
	memo, ok := c.objectCounts.get(hub)
	if ok && now.Sub(memo.at) < hubObjectsMemo {
		return memo.n
	}
	n, ready := 0, false
	if h := c.byName[hub]; h != nil {
		n, ready = h.Objects()
	}
	if !ready {
		_, total := c.objects.counts()
		return n + total
	}
	c.objectCounts.set(hub, objectCount{n: n, at: now})
	return n
}

// ReleaseDeletes releases the engaged brakes whose release tokens are among tokens (the value of
// failoverv1alpha1.AnnotationReleaseDeletes): each held delete is synced again and made once, uncounted, if its sync
// still asks for it (brake.Brake.Release; a brake restored at the start opens its hub until it is caught up). It
// returns the tokens that released a brake; tokens of no engaged brake are ignored.
func (c *Controller) ReleaseDeletes(tokens []string) []string {
	var released []string
	for _, token := range tokens {
		r, ok := c.brake.Release(token)
		if !ok {
			continue
		}
		released = append(released, token)
		metrics.DeleteBrakeEngaged.WithLabelValues(r.Hub).Set(0)
		c.logger.Info("Delete brake released", "hub", r.Hub, "releaseToken", token, "deletes", len(r.Keys), "restored", r.Restored)
		if r.Restored {
			c.opts.Recorder.Eventf(ReasonDeletesReleased, "hub %s: delete brake %s released: the deletes it held are made as the hub is compared, uncounted, until it is caught up", r.Hub, token)
		} else {
			c.opts.Recorder.Eventf(ReasonDeletesReleased, "hub %s: delete brake %s released: %d held deletes are synced again and made where still asked for", r.Hub, token, len(r.Keys))
		}
		for _, key := range r.Keys {
			c.queue.Add(key)
		}
	}
	return released
}

// EngagedBrakes returns the engaged delete brakes, sorted by hub.
func (c *Controller) EngagedBrakes() []brake.State {
	return c.brake.Engaged()
}
