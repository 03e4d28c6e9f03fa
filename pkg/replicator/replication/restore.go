package replication

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/metrics"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// restoreSource writes on the source what it lost, or holds an older state of, from the newest copy made from it
// (mirror.DecideRestore): a hub restored from a backup or rebuilt, still its cluster's source, gets back the
// state its standbys kept, rather than running its older one on the spoke. The copy is the one, among the
// ready hubs the identity check saw (checked), that records the highest source generation; it is read whole
// from its hub. wrote reports a write, or one refused because the source's cache is behind (already exists,
// conflict, not found): the source's watch event syncs the key again.
func (c *Controller) restoreSource(ctx context.Context, k mirror.Kind, key Key, source *hubconn.Hub, src *unstructured.Unstructured,
	checked func(*hubconn.Hub) bool) (wrote bool, err error) {
	if !mirror.HoldsDeletes(k) || !perCluster(k, key, c.isCluster) {
		return false, nil
	}
	deleted := source.Deleted(k.Name, key.Namespace, key.Name)
	var from *hubconn.Hub
	var newest *unstructured.Unstructured
	for _, h := range c.opts.Hubs {
		if h == source || !h.Ready() || !h.Serves(k.Name) || !checked(h) {
			continue
		}
		// The cached copy holds the marks DecideRestore reads first; its content is read below, if need be.
		cp, _ := h.Peek(k.Name, key.Namespace, key.Name)
		if cp == nil || mirror.DecideRestore(k, src, cp, source.Name(), deleted).Action == mirror.ActionNone {
			continue
		}
		if mirror.NewerCopy(cp, newest) {
			from, newest = h, cp
		}
	}
	if from == nil {
		return false, nil
	}
	whole, err := from.Get(ctx, k.Name, key.Namespace, key.Name)
	if err != nil || whole == nil {
		// The copy changed or went meanwhile: its event syncs the key again.
		return false, err
	}
	d := mirror.DecideRestore(k, src, whole, source.Name(), deleted)
	switch d.Action {
	case mirror.ActionNone:
		return false, nil
	case mirror.ActionCreate:
		err = c.create(ctx, source, k, d.Object)
	case mirror.ActionUpdate:
		err = c.update(ctx, source, k, d.Object)
	}
	if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		c.logger.V(4).Info("Source object changed before it was restored", "object", key.String(), "hub", source.Name())
		return true, nil
	}
	source.ReportError(err)
	if err != nil {
		metrics.WriteErrors.WithLabelValues(string(k.Name), source.Name()).Inc()
		return false, fmt.Errorf("restoring on source hub %s from the copy on hub %s: %w", source.Name(), from.Name(), err)
	}
	metrics.SourceRestores.WithLabelValues(string(k.Name), source.Name(), string(d.Action)).Inc()
	what := "lost"
	if d.Action == mirror.ActionUpdate {
		what = "held an older state of"
	}
	c.logger.Info("Restored an object on its source hub from a newer copy", "object", key.String(), "action", d.Action,
		"source", source.Name(), "from", from.Name())
	c.opts.Recorder.Warningf(ReasonSourceRestored, "%s: source hub %s %s it (restored from a backup, or rebuilt): %s there from the copy on hub %s, the newest state kept",
		key, source.Name(), what, strings.ToLower(string(d.Action))+"d", from.Name())
	return true, nil
}
