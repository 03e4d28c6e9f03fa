package replication

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/metrics"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// deleteMadeAttempts bounds the read-and-patch rounds of one hub's log write when its ManagedCluster changes
// meanwhile (409).
const deleteMadeAttempts = 3

// keyedLocks is a mutex per key, made on first use; the zero value is ready.
type keyedLocks struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// lock locks key's mutex and returns its unlock.
func (l *keyedLocks) lock(key string) func() {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*sync.Mutex{}
	}
	m := l.locks[key]
	if m == nil {
		m = &sync.Mutex{}
		l.locks[key] = m
	}
	l.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// recordDeleteMade appends the delete of src (key's object on source, being deleted, its delete held until now)
// to the log of deletes made (mirror.AnnotationDeletesMade) on the cluster's ManagedCluster of every ready hub,
// before the source's hold is released: a hub restored later from a backup taken before the delete is then told
// by the others that its object was deleted (deleteMadeOf). Nothing for an object outside a cluster's namespace or
// of a kind that holds no deletes. Each hub's log is read and written under its own lock (one GET and one merge
// patch on its resourceVersion; none when the log holds the delete already); the error is the first hub's
// that failed: the release waits for the next sync.
func (c *Controller) recordDeleteMade(ctx context.Context, k mirror.Kind, key Key, src *unstructured.Unstructured) error {
	cluster, ok := k.ClusterOf(key.Namespace, key.Name, c.isCluster)
	if !ok || !mirror.HoldsDeletes(k) || k.Name == failoverv1alpha1.KindManagedCluster {
		return nil
	}
	entry := mirror.DeleteMade{Key: mirror.TombstoneKey(k.Name, key.Name), Deleted: mirror.Deleted{
		UID: string(src.GetUID()), SourceUID: src.GetAnnotations()[mirror.AnnotationSourceUID]}}
	for _, h := range c.opts.Hubs {
		if !h.Ready() {
			continue
		}
		if facts, ok := h.Cluster(cluster); !ok || mirror.HoldsEntry(facts.DeletesMade, entry) {
			continue
		}
		if err := c.appendDeleteMade(ctx, h, cluster, entry); err != nil {
			return fmt.Errorf("%s: recording its delete on hub %s's ManagedCluster before releasing it: %w", key, h.Name(), err)
		}
	}
	return nil
}

// appendDeleteMade appends entry to the log of deletes made on hub h's ManagedCluster of cluster.
func (c *Controller) appendDeleteMade(ctx context.Context, h *hubconn.Hub, cluster string, entry mirror.DeleteMade) error {
	defer c.deletesMade.lock(h.Name() + "/" + cluster)()
	mcKind := c.kinds[failoverv1alpha1.KindManagedCluster]
	client := h.Client().Resource(mcKind.GVR)
	var err error
	for attempt := 0; attempt < deleteMadeAttempts; attempt++ {
		var mc *unstructured.Unstructured
		mc, err = client.Get(ctx, cluster, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			break
		}
		patch := mirror.DeletesMadePatch(mc, mirror.WithDeleteMade(mirror.ParseDeletesMade(mc.GetAnnotations()[mirror.AnnotationDeletesMade]), entry))
		if patch == nil {
			return nil
		}
		if _, err = client.Patch(ctx, cluster, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}); !apierrors.IsConflict(err) {
			break
		}
	}
	h.ReportError(err)
	if err != nil {
		metrics.WriteErrors.WithLabelValues(string(failoverv1alpha1.KindManagedCluster), h.Name()).Inc()
	}
	return err
}

// deleteMadeOf returns the hub whose log of deletes made (mirror.AnnotationDeletesMade, as its cache holds the
// cluster's ManagedCluster) records the delete that obj, key's object on hub skip, remains of
// (mirror.DeleteMadeOf), and that delete; ok is false when no ready hub but skip records one.
func (c *Controller) deleteMadeOf(k mirror.Kind, key Key, obj *unstructured.Unstructured, skip string) (hub string, d mirror.Deleted, ok bool) {
	cluster, isCluster := k.ClusterOf(key.Namespace, key.Name, c.isCluster)
	if !isCluster || !mirror.HoldsDeletes(k) || k.Name == failoverv1alpha1.KindManagedCluster || obj == nil {
		return "", mirror.Deleted{}, false
	}
	tombstone := mirror.TombstoneKey(k.Name, key.Name)
	for _, h := range c.opts.Hubs {
		if h.Name() == skip || !h.Ready() {
			continue
		}
		if facts, found := h.Cluster(cluster); found {
			if d, ok := mirror.DeleteMadeOf(facts.DeletesMade, tombstone, obj); ok {
				return h.Name(), d, true
			}
		}
	}
	return "", mirror.Deleted{}, false
}
