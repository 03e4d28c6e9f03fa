package replication

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/metrics"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// DeleteLog is the name of the ConfigMap, in Options.MarkerNamespace on every hub, that holds the hub's log of
// deletes made (mirror.DeleteMade, under mirror.DeleteLogKey): the last mirror.MaxDeletesMade deletes of objects
// of the kinds that hold deletes (mirror.HoldsDeletes: ManifestWorks, ManagedClusterAddOns and the other
// namespaced kinds without a label selector) that users made on a cluster's source and the replicator carried to
// every hub. The replicator writes it on every ready hub before it releases the source's hold of such a delete
// (recordDeleteMade), so that a hub restored from a backup taken before the delete, which holds the object again,
// is told by another hub that it was deleted (deleteMadeOf).
const DeleteLog = "klusterlet-failover-deletes"

// deleteLogLinger is how long the first delete of a batch waits for others before the batch is written: the
// deletes made within a second cost one write per hub, not one each. A user's delete completes on its source
// (the hold released) about that much later — more while an earlier batch is being written or failing; its
// copies are deleted before, without waiting.
const deleteLogLinger = time.Second

// deleteLogTimeout bounds one write of a hub's log (its read and write, with their retries on a 409).
const deleteLogTimeout = 10 * time.Second

// deleteLog is what the replicator knows of one hub's log of deletes made, and the deletes waiting to be written
// there. Its lock guards every field.
type deleteLog struct {
	mu sync.Mutex
	// loaded: entries hold the hub's log as last read or written since it became ready (run).
	loaded bool
	run    uint64
	// entries is the log, oldest first; byKey indexes it by mirror.DeleteMadeKey.
	entries []mirror.DeleteMade
	byKey   map[string][]mirror.DeleteMade
	// object is the log's ConfigMap as last read or written, nil when unknown or absent: the next batch is
	// written onto its resourceVersion without reading it first (a 409 reads it).
	object *unstructured.Unstructured
	// written are the deletes written there since run whose holds were not released yet: a batch larger than
	// mirror.MaxDeletesMade trims its own oldest deletes from the log, and they count as logged all the same.
	written map[mirror.DeleteMade]bool
	// pending are the deletes to write, requeue the keys to sync once they are written; flushing is true while
	// a goroutine writes them (flushDeleteLog); failed is the error of its last write, nil once one succeeded.
	pending  []mirror.DeleteMade
	requeue  []Key
	flushing bool
	failed   error
	// readFailed is when (the controller's clock) the last read of the log failed: not read again before
	// deleteLogReadRetry passed.
	readFailed time.Time
}

// deleteLogReadRetry is how long after a failed read of a hub's log it is not read again (deleteLogOf).
const deleteLogReadRetry = 10 * time.Second

// setLocked replaces what l holds of the hub's log by entries.
func (l *deleteLog) setLocked(entries []mirror.DeleteMade) {
	l.entries, l.loaded = entries, true
	l.byKey = map[string][]mirror.DeleteMade{}
	for _, d := range entries {
		l.byKey[d.Key] = append(l.byKey[d.Key], d)
	}
}

// forgetDeleteLog drops what the replicator knows of hub's log: it is read again when the hub is ready again (it
// may have been restored meanwhile).
func (c *Controller) forgetDeleteLog(hub string) {
	if l := c.deleteLogs[hub]; l != nil {
		l.mu.Lock()
		l.loaded, l.entries, l.byKey, l.written, l.readFailed, l.object = false, nil, nil, nil, time.Time{}, nil
		l.run++
		l.mu.Unlock()
	}
}

// recordDeleteMade reports whether the delete of src (key's object on its source, being deleted, its delete held
// until now) is in the log of deletes made of every ready hub, as last read or written: the hold is released only
// then. Otherwise it adds the delete to the pending deletes of the hubs that lack it, to be written in one batch
// per hub (flushDeleteLog, after deleteLogLinger: the deletes of many objects at once cost one write per hub, not
// one each), and key is synced again once the batch is written; the sync does not wait for it. The error is
// that of the last batch written on such a hub, when it failed (its deletes are written again with the next
// one). Nothing for an object outside a cluster's namespace or of a kind that holds no deletes: true.
func (c *Controller) recordDeleteMade(ctx context.Context, k mirror.Kind, key Key, src *unstructured.Unstructured) (bool, error) {
	if _, ok := k.ClusterOf(key.Namespace, key.Name, c.isCluster); !ok || !mirror.HoldsDeletes(k) || k.Name == failoverv1alpha1.KindManagedCluster {
		return true, nil
	}
	entry := mirror.DeleteMade{Key: mirror.DeleteMadeKey(k.Name, key.Namespace, key.Name), Deleted: mirror.Deleted{
		UID: string(src.GetUID()), SourceUID: src.GetAnnotations()[mirror.AnnotationSourceUID]}}
	logged := true
	var errs []error
	var ready []*deleteLog
	for _, h := range c.opts.Hubs {
		if !h.Ready() {
			continue
		}
		l := c.deleteLogs[h.Name()]
		ready = append(ready, l)
		l.mu.Lock()
		if !l.loaded || !l.written[entry] && !slices.Contains(l.byKey[entry.Key], entry) {
			logged = false
			if !slices.Contains(l.pending, entry) {
				l.pending = append(l.pending, entry)
			}
			l.requeue = append(l.requeue, key)
			if l.failed != nil {
				errs = append(errs, fmt.Errorf("logging the delete on hub %s: %w", h.Name(), l.failed))
			}
			if !l.flushing {
				l.flushing = true
				c.flushes.Add(1)
				go c.flushDeleteLog(ctx, h, l)
			}
		}
		l.mu.Unlock()
	}
	if logged {
		// The hold is released now: its delete need not be remembered as written any more.
		for _, l := range ready {
			l.mu.Lock()
			delete(l.written, entry)
			l.mu.Unlock()
		}
	}
	return logged, errors.Join(errs...)
}

// flushDeleteLog writes h's pending deletes, after deleteLogLinger, and the batches that gather meanwhile, one
// after the other, and syncs the keys of each batch again once it is written (after a back-off when it failed).
// It returns when nothing is pending, or when ctx (the controller's run) is done: what is pending then is not
// written (its holds stay, and are logged by the next controller).
func (c *Controller) flushDeleteLog(ctx context.Context, h *hubconn.Hub, l *deleteLog) {
	defer c.flushes.Done()
	for {
		select {
		case <-ctx.Done():
			l.mu.Lock()
			l.pending, l.requeue, l.flushing = nil, nil, false
			l.mu.Unlock()
			return
		case <-time.After(deleteLogLinger):
		}
		l.mu.Lock()
		batch, keys, run, known := l.pending, l.requeue, l.run, l.object
		l.pending, l.requeue = nil, nil
		l.mu.Unlock()

		writeCtx, cancel := context.WithTimeout(ctx, deleteLogTimeout)
		entries, written, err := c.writeDeleteLog(writeCtx, h, batch, known)
		cancel()
		if err != nil {
			c.logger.Error(err, "Log of deletes made not written; the holds of those deletes stay until it is", "hub", h.Name(), "deletes", len(batch))
		}
		l.mu.Lock()
		l.failed = err
		if err != nil {
			l.object = nil
		}
		if err == nil && l.run == run {
			l.setLocked(entries)
			l.object = written
			if l.written == nil {
				l.written = map[mirror.DeleteMade]bool{}
			}
			for _, d := range batch {
				l.written[d] = true
			}
		}
		more := len(l.pending) > 0
		l.flushing = more
		l.mu.Unlock()
		for _, key := range keys {
			if err != nil {
				c.queue.AddRateLimited(key)
			} else {
				c.queue.Add(key)
			}
		}
		if !more {
			return
		}
	}
}

// writeDeleteLog adds batch to h's log of deletes made (mirror.WithDeletesMade) and writes it (created when there
// is none; its namespace too), on the resourceVersion of known — the log's ConfigMap as last read or written, when
// not nil — or else of a read of it: a 409 (or a 404 on known: the log was deleted) reads and writes again, up to
// three times in all. It returns the log and its ConfigMap as written, or as read when the batch was there
// already.
func (c *Controller) writeDeleteLog(ctx context.Context, h *hubconn.Hub, batch []mirror.DeleteMade, known *unstructured.Unstructured) ([]mirror.DeleteMade, *unstructured.Unstructured, error) {
	client := h.Client().Resource(configMapGVR).Namespace(c.opts.MarkerNamespace)
	var err error
	for attempt := 0; attempt < deleteMadeAttempts; attempt++ {
		var cm *unstructured.Unstructured
		if attempt == 0 && known != nil {
			cm = known.DeepCopy()
		} else {
			cm, err = client.Get(ctx, DeleteLog, metav1.GetOptions{})
		}
		var log []mirror.DeleteMade
		switch {
		case apierrors.IsNotFound(err):
			cm, err = nil, nil
		case err != nil:
			h.ReportError(err)
			return nil, nil, fmt.Errorf("reading %s/%s: %w", c.opts.MarkerNamespace, DeleteLog, err)
		default:
			value, _, _ := unstructured.NestedString(cm.Object, "data", mirror.DeleteLogKey)
			log = mirror.ParseDeletesMade(value)
		}
		missing := slices.DeleteFunc(slices.Clone(batch), func(d mirror.DeleteMade) bool { return slices.Contains(log, d) })
		if cm != nil && len(missing) == 0 {
			// Every delete of the batch is there already (written before a restart, or by a batch whose outcome
			// was not stored): nothing to write.
			return log, cm, nil
		}
		log = mirror.WithDeletesMade(log, missing...)
		data := map[string]any{mirror.DeleteLogKey: mirror.FormatDeletesMade(log)}
		var written *unstructured.Unstructured
		if cm != nil {
			cm.Object["data"] = data
			written, err = client.Update(ctx, cm, metav1.UpdateOptions{FieldManager: FieldManager})
		} else {
			cm = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": data}}
			cm.SetName(DeleteLog)
			cm.SetNamespace(c.opts.MarkerNamespace)
			if _, err = c.ensureNamespace(ctx, h, c.opts.MarkerNamespace, nil); err == nil {
				written, err = client.Create(ctx, cm, metav1.CreateOptions{FieldManager: FieldManager})
			}
		}
		if err == nil {
			return log, written, nil
		}
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) && !(attempt == 0 && known != nil && apierrors.IsNotFound(err)) {
			break
		}
	}
	h.ReportError(err)
	metrics.WriteErrors.WithLabelValues("ConfigMap", h.Name()).Inc()
	return nil, nil, fmt.Errorf("writing %s/%s: %w", c.opts.MarkerNamespace, DeleteLog, err)
}

// deleteMadeOf returns the hub whose log of deletes made records the delete that obj, key's object on hub skip,
// remains of (mirror.DeleteMadeOf), or whose ManagedCluster of the cluster carries a tombstone of it
// (mirror.AnnotationDeletesSeen: the record of a delete released while a hub was away outlasts the logs' last
// mirror.MaxDeletesMade entries, and is what a hub the cluster moved to before it caught up learns the delete
// from), and whether it names obj by its own UID; hub is "" when no ready hub but skip records one (an own match
// is preferred). known is false when a ready hub's log could not be read: obj may
// be a remnant, and the caller writes nothing of it yet. A hub's log not read since it became ready is read first
// (one GET; after a failure, not again within deleteLogReadRetry).
func (c *Controller) deleteMadeOf(ctx context.Context, k mirror.Kind, key Key, obj *unstructured.Unstructured, skip string) (hub string, own, known bool) {
	if _, isCluster := k.ClusterOf(key.Namespace, key.Name, c.isCluster); !isCluster || !mirror.HoldsDeletes(k) ||
		k.Name == failoverv1alpha1.KindManagedCluster || obj == nil {
		return "", false, true
	}
	entryKey := mirror.DeleteMadeKey(k.Name, key.Namespace, key.Name)
	known = true
	for _, h := range c.opts.Hubs {
		if h.Name() == skip || !h.Ready() {
			continue
		}
		// A tombstone names objects by UID: a copy that does not say what it was made from is left to the logs.
		if cluster, ok := h.Cluster(key.Namespace); ok && (!mirror.IsCopy(obj) || obj.GetAnnotations()[mirror.AnnotationSourceUID] != "") {
			if d, ok := cluster.Tombstones[mirror.TombstoneKey(k.Name, key.Name)]; ok && d.Explains(obj) {
				isOwn := string(obj.GetUID()) == d.UID
				if isOwn || hub == "" {
					hub, own = h.Name(), isOwn
				}
			}
		}
		entries, read := c.deleteLogOf(ctx, h, entryKey)
		if !read {
			known = false
			continue
		}
		if _, isOwn, ok := mirror.DeleteMadeOf(entries, entryKey, obj); ok && (isOwn || hub == "") {
			hub, own = h.Name(), isOwn
		}
	}
	if hub != "" {
		// A record is a record, whatever an unreadable log holds.
		known = true
	}
	return hub, own, known
}

// deleteLogOf returns the entries of key in h's log of deletes made, reading the log first when it was not read
// since h became ready; read is false when it could not be read (not tried again within deleteLogReadRetry of a
// failure).
func (c *Controller) deleteLogOf(ctx context.Context, h *hubconn.Hub, key string) (entries []mirror.DeleteMade, read bool) {
	l := c.deleteLogs[h.Name()]
	l.mu.Lock()
	loaded, run, readFailed := l.loaded, l.run, l.readFailed
	entries = l.byKey[key]
	l.mu.Unlock()
	if loaded {
		return entries, true
	}
	if !readFailed.IsZero() && c.opts.Clock.Since(readFailed) < deleteLogReadRetry {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, deleteLogTimeout)
	defer cancel()
	cm, err := h.Client().Resource(configMapGVR).Namespace(c.opts.MarkerNamespace).Get(ctx, DeleteLog, metav1.GetOptions{})
	var log []mirror.DeleteMade
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		h.ReportError(err)
		c.logger.Error(err, "Log of deletes made not read: what it may record of an object waits", "hub", h.Name())
		l.mu.Lock()
		l.readFailed = c.opts.Clock.Now()
		l.mu.Unlock()
		return nil, false
	default:
		value, _, _ := unstructured.NestedString(cm.Object, "data", mirror.DeleteLogKey)
		log = mirror.ParseDeletesMade(value)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.run == run && !l.loaded {
		l.setLocked(log)
		l.object = cm
	}
	return l.byKey[key], true
}

// deleteMadeAttempts bounds the read-and-write rounds of one write of a hub's log when it changes meanwhile (409).
const deleteMadeAttempts = 3
