package replication

import (
	"errors"

	replv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
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
	switch c.brake.Admit(hub, key, c.replicatedObjects(hub)) {
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
				hub, key, s.Limit, c.opts.DeleteBrake.Window, hub, replv1alpha1.AnnotationReleaseDeletes, s.Token())
		}
	}
	c.logger.V(2).Info("Delete held by the hub's delete brake", "hub", hub, "object", key.String())
	return errDeleteHeld
}

// replicatedObjects is the base of a hub's share of deletes: the source objects of every mirrored kind, or the
// copies on hub when those are more.
func (c *Controller) replicatedObjects(hub string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, keys := range c.objects {
		n += keys.Len()
	}
	return max(n, c.copies[hub].Len())
}

// ReleaseDeletes releases the engaged brakes whose release tokens are among tokens (the value of
// replv1alpha1.AnnotationReleaseDeletes): each held delete is synced again and made once, uncounted. It returns
// the tokens that released a brake; tokens of no engaged brake are ignored. A release waits (the token is not
// used, the caller offers it again later) until every key out of step on the brake's hub is a held delete: after
// a restart the brake (engaged from the status) learns again which deletes it holds only as the first comparison
// of every object asks for them, and a release before that would let them count against a fresh window.
func (c *Controller) ReleaseDeletes(tokens []string) []string {
	var released []string
	for _, token := range tokens {
		hub, held, ok := c.brake.Holding(token)
		if !ok {
			continue
		}
		c.mu.Lock()
		asked := c.listed[hub] && (c.dirty[hub] == nil || held.IsSuperset(c.dirty[hub]))
		c.mu.Unlock()
		if !asked {
			c.logger.V(2).Info("Delete brake release waits for the hub's first comparison", "hub", hub, "releaseToken", token)
			continue
		}
		hub, keys, ok := c.brake.Release(token)
		if !ok {
			continue
		}
		released = append(released, token)
		metrics.DeleteBrakeEngaged.WithLabelValues(hub).Set(0)
		c.logger.Info("Delete brake released", "hub", hub, "releaseToken", token, "deletes", len(keys))
		c.opts.Recorder.Eventf(ReasonDeletesReleased, "hub %s: delete brake %s released: %d held deletes are made", hub, token, len(keys))
		for _, key := range keys {
			c.queue.Add(key)
		}
	}
	return released
}

// EngagedBrakes returns the engaged delete brakes, sorted by hub.
func (c *Controller) EngagedBrakes() []brake.State {
	return c.brake.Engaged()
}
