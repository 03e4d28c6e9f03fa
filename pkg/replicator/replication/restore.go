package replication

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/metrics"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// restoreSource writes on the source the newer state of an object the source holds an older state of, from the
// newest copy made from it (mirror.DecideRestore): a hub restored from a backup, still its cluster's source, gets
// back the state its standbys kept rather than running its older one on the spoke. The newest copy is the one,
// among the ready hubs the identity check saw (checked) and the copies made from src, that records the highest
// source generation; only it is considered, read whole from its hub. wrote reports a write, or one refused
// because the source's cache is behind (conflict, not found): the source's watch event syncs the key again.
func (c *Controller) restoreSource(ctx context.Context, k mirror.Kind, key Key, source *hubconn.Hub, src *unstructured.Unstructured,
	checked func(*hubconn.Hub) bool) (wrote bool, err error) {
	if src == nil || !mirror.HoldsDeletes(k) || !perCluster(k, key, c.isCluster) {
		return false, nil
	}
	var from *hubconn.Hub
	var newest *unstructured.Unstructured
	for _, h := range c.opts.Hubs {
		if h == source || !h.Ready() || !h.Serves(k.Name) || !checked(h) || !mirroredTo(k, key, source, h) {
			continue
		}
		// The cached copy holds the marks; its content is read below, if it is the newest.
		cp, _ := h.Peek(k.Name, key.Namespace, key.Name)
		if cp == nil || cp.GetDeletionTimestamp() != nil || cp.GetLabels()[mirror.LabelReplicatedFrom] != source.Name() ||
			cp.GetAnnotations()[mirror.AnnotationSourceUID] != string(src.GetUID()) {
			continue
		}
		if mirror.NewerCopy(cp, newest) {
			from, newest = h, cp
		}
	}
	if from == nil || mirror.LineageGeneration(src) >= mirror.RecordedGeneration(newest) {
		return false, nil
	}
	whole, err := from.Get(ctx, k.Name, key.Namespace, key.Name)
	if err != nil || whole == nil {
		// The copy changed or went meanwhile: its event syncs the key again.
		return false, err
	}
	d := mirror.DecideRestore(k, src, whole, source.Name())
	if d.Action != mirror.ActionUpdate {
		return false, nil
	}
	err = c.update(ctx, source, k, d.Object)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		c.logger.V(4).Info("Source object changed before it was restored", "object", key.String(), "hub", source.Name())
		return true, nil
	}
	source.ReportError(err)
	if err != nil {
		metrics.WriteErrors.WithLabelValues(string(k.Name), source.Name()).Inc()
		return false, fmt.Errorf("restoring on source hub %s the newer state kept on hub %s: %w", source.Name(), from.Name(), err)
	}
	metrics.SourceRestores.WithLabelValues(string(k.Name), source.Name(), string(d.Action)).Inc()
	c.logger.Info("Restored the newer state of an object on its source hub from a copy", "object", key.String(),
		"source", source.Name(), "from", from.Name(), "sourceGeneration", src.GetGeneration(), "copyRecorded", newest.GetAnnotations()[mirror.AnnotationSourceGeneration])
	c.opts.Recorder.Warningf(ReasonSourceRestored, "%s: source hub %s held an older state of it (restored from a backup): updated there to the newer state the copy on hub %s kept",
		key, source.Name(), from.Name())
	return true, nil
}
