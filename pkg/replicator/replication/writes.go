package replication

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/metrics"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// create creates obj, a copy, on hub h. A namespaced copy's namespace is created first unless it is known to
// exist there (c.namespaces): the first copy of a cluster on a standby costs one request more, not a refused
// create, a namespace create and a retry per worker racing on that namespace.
func (c *Controller) create(ctx context.Context, h *hubconn.Hub, k mirror.Kind, obj *unstructured.Unstructured) error {
	client := h.Client().Resource(k.GVR).Namespace(obj.GetNamespace())
	namespace := obj.GetNamespace()
	if k.Namespaced && !c.namespaceKnown(h.Name(), namespace) {
		if _, err := c.ensureNamespace(ctx, h, namespace, nil); err != nil {
			return err
		}
	}
	_, err := client.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
	if apierrors.IsNotFound(err) && k.Namespaced {
		// The namespace was deleted since it was known: create it again, then the copy.
		if _, nsErr := c.ensureNamespace(ctx, h, namespace, nil); nsErr != nil {
			return nsErr
		}
		_, err = client.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
	}
	return err
}

// ensureNamespace creates namespace on hub h unless it exists, with the labels and annotations of meta (a
// metadata map as in a merge patch; nil values and a nil meta add none), and records it as known there.
// Concurrent calls for the same hub and namespace (the workers of one new cluster's objects, the fence marks of
// its namespace) share one create and its result, so a new cluster costs one namespace create per hub, not one
// per caller with all but the first refused (409). made reports whether this call's own create made the
// namespace, with meta; false when it existed or another call's create made it. The shared create runs under the
// first caller's ctx (every caller passes Run's).
func (c *Controller) ensureNamespace(ctx context.Context, h *hubconn.Hub, namespace string, meta map[string]any) (made bool, err error) {
	_, err, _ = c.namespaceCreates.Do(h.Name()+"/"+namespace, func() (any, error) {
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": namespace}}}
		for _, field := range []string{"labels", "annotations"} {
			kept := map[string]any{}
			values, _ := meta[field].(map[string]any)
			for k, v := range values {
				if v != nil {
					kept[k] = v
				}
			}
			if len(kept) > 0 {
				ns.Object["metadata"].(map[string]any)[field] = kept
			}
		}
		_, err := h.Client().Resource(mirror.NamespaceGVR).Create(ctx, ns, metav1.CreateOptions{FieldManager: FieldManager})
		switch {
		case err == nil:
			made = true
		case !apierrors.IsAlreadyExists(err):
			return nil, fmt.Errorf("creating namespace %s: %w", namespace, err)
		}
		c.namespaces.add(h.Name(), namespace)
		return nil, nil
	})
	return made, err
}

// namespaceKnown reports whether namespace is known to exist on hub.
func (c *Controller) namespaceKnown(hub, namespace string) bool {
	return c.namespaces.has(hub, namespace)
}

func (c *Controller) update(ctx context.Context, h *hubconn.Hub, k mirror.Kind, obj *unstructured.Unstructured) error {
	_, err := h.Client().Resource(k.GVR).Namespace(obj.GetNamespace()).Update(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
	return err
}

// hookRemovalAttempts is how many times deleteCopy removes a copy's hub finalizers (mirror.CopyFinalizers) and deletes it on
// the resourceVersion that left before it deletes the copy on its UID alone. A hub's add-on manager puts the
// finalizer back within about one round trip of its removal: in three runs of the integration test on the test bed
// it won 2 races of 5, both in one run. At that rate ten attempts leave about one delete in 10,000 (0.4^10) to
// the fallback; lost races that come in runs leave it more.
const hookRemovalAttempts = 10

// deleteCopy deletes obj, a copy (or an original of a cluster now managed elsewhere) on hub h, a hub other than
// the cluster's source, unless it is being deleted already. The copy goes without the finalizers of h's own
// controllers that would wait there (mirror.CopyFinalizers: a ManagedClusterAddOn's pre-delete hook, a
// ManifestWork's work-agent cleanup):
//  1. those finalizers are removed, on obj's UID and resourceVersion;
//  2. the copy is deleted on the resourceVersion that left: without the finalizers, h's add-on manager makes no
//     hook ManifestWork for it. When either request is refused with 409 (h's add-on manager put a finalizer
//     back in between, or wrote the object otherwise), the copy is read again and steps 1 and 2 are repeated,
//     hookRemovalAttempts times in all;
//  3. when the last attempt is refused too, the copy is deleted on its UID alone, and read again: an object
//     being deleted takes no new finalizer, so
//  4. removing them once more lets the delete finish. A hook work made meanwhile goes with the copy: the
//     ManagedClusterAddOn owns it.
//
// A copy without those finalizers is deleted on its resourceVersion, and read again after a 409 like the others;
// a copy read again without them (another write came in between) is deleted on its new resourceVersion, in the
// same count of attempts; an object of that name with another UID (the copy was deleted
// and an object made again) is left alone. A copy being deleted already gets step 4 only, and no request at all
// without those finalizers. That is at most 3×hookRemovalAttempts+2 requests. The errors are the requests'; an
// object already gone is no error. A copy not being deleted yet is deleted only when h's delete brake admits it
// (admitDelete); otherwise nothing is sent and the error is errDeleteHeld.
func (c *Controller) deleteCopy(ctx context.Context, h *hubconn.Hub, k mirror.Kind, obj *unstructured.Unstructured) error {
	if obj.GetDeletionTimestamp() == nil {
		// A delete the replicator makes (not the end of one made already) passes the hub's delete brake.
		if err := c.admitDelete(h.Name(), Key{Kind: k.Name, Namespace: obj.GetNamespace(), Name: obj.GetName()}); err != nil {
			return err
		}
	}
	// Its delete event is the replicator's, not a user's delete on h (hubconn.Hub.Deleted).
	h.ExpectDelete(k.Name, obj.GetNamespace(), obj.GetName(), obj.GetUID())
	patch := mirror.CopyFinalizersPatch(k, obj)
	if patch == nil && obj.GetDeletionTimestamp() != nil {
		return nil
	}
	client := h.Client().Resource(k.GVR).Namespace(obj.GetNamespace())
	uid := obj.GetUID()
	for attempt := 1; obj.GetDeletionTimestamp() == nil; attempt++ {
		if attempt > hookRemovalAttempts {
			return fmt.Errorf("the copy was not deleted after %d attempts and a delete on its UID", hookRemovalAttempts)
		}
		// One attempt: the finalizers removed (when the copy holds them), then the delete on the
		// resourceVersion that left. A 409 on either is a lost race.
		target := obj
		var err error
		if patch != nil {
			target, err = client.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
			switch {
			case apierrors.IsNotFound(err):
				return nil
			case apierrors.IsConflict(err):
				target = nil
			case err != nil:
				return fmt.Errorf("removing the hub's finalizers from the copy: %w", err)
			}
		}
		if target != nil {
			if err = c.delete(ctx, h, k, target); !apierrors.IsConflict(err) {
				return err
			}
		}
		if attempt == hookRemovalAttempts {
			err = client.Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				// Gone, or made again: not this copy any more.
				return nil
			}
			if err != nil {
				return err
			}
		}
		if obj, err = client.Get(ctx, obj.GetName(), metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		if obj.GetUID() != uid {
			// The copy is gone and an object of that name was made again: the next sync decides about it.
			return nil
		}
		patch = mirror.CopyFinalizersPatch(k, obj)
		switch {
		case patch == nil && obj.GetDeletionTimestamp() != nil:
			return nil
		case patch != nil && attempt == hookRemovalAttempts:
			c.logger.Info("Deleted a copy on its UID alone, a finalizer of its hub on: removing it now",
				"object", obj.GetNamespace()+"/"+obj.GetName(), "hub", h.Name(), "attempts", attempt)
		case patch != nil:
			c.logger.V(2).Info("A finalizer of the copy's hub came back before its delete: removing it again",
				"object", obj.GetNamespace()+"/"+obj.GetName(), "hub", h.Name(), "attempt", attempt)
		}
	}
	_, err := client.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing the hub's finalizers from the copy being deleted: %w", err)
	}
	return nil
}

// delete deletes obj on hub h, on condition that its UID and resourceVersion are still obj's. An object
// already gone is no error.
func (c *Controller) delete(ctx context.Context, h *hubconn.Hub, k mirror.Kind, obj *unstructured.Unstructured) error {
	uid := types.UID(obj.GetUID())
	rv := obj.GetResourceVersion()
	err := h.Client().Resource(k.GVR).Namespace(obj.GetNamespace()).Delete(ctx, obj.GetName(),
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// recordConflict keeps the conflict state of key on hub, with an event and a metric when a conflict appears
// or changes reason.
func (c *Controller) recordConflict(k mirror.Kind, key Key, hub string, conflict mirror.Conflict) {
	prev, had := c.hubCopies.setConflict(hub, key, conflict)
	if conflict == mirror.ConflictNone || (had && prev == conflict) {
		return
	}
	metrics.Conflicts.WithLabelValues(string(k.Name), hub, string(conflict)).Inc()
	switch conflict {
	case mirror.ConflictForeignObject:
		c.opts.Recorder.Warningf(ReasonReplicationConflict, "%s on hub %s was not made by the replicator: left alone, not replicated there", key, hub)
	case mirror.ConflictCopyModified:
		c.opts.Recorder.Warningf(ReasonReplicationConflict, "%s on hub %s was changed there since the replicator wrote it: overwritten from the source hub", key, hub)
	case mirror.ConflictSourceMissing:
		c.opts.Recorder.Warningf(ReasonCopyKept, "%s: the source hub holds no object of this name and no delete of it was seen (a hub restored from a backup or rebuilt, a lost namespace, or a delete while the replicator was away): the copy on hub %s is kept; delete it there if the object is meant to be gone", key, hub)
	case mirror.ConflictSourceOlder:
		c.opts.Recorder.Warningf(ReasonCopyKept, "%s: the source hub holds an older state of the object the copy on hub %s was made from (a lower metadata.generation: a hub restored from a backup): the copy, newer, is kept and not rolled back", key, hub)
	}
}

func (c *Controller) setCopy(hub string, key Key, isCopy bool) {
	c.hubCopies.setCopy(hub, key, isCopy)
}

// markBehind puts key back among hub's out-of-step keys after a write there failed (or waits), also once the hub
// was caught up: until the key is compared there again, hub is not caught up, and the source's ManagedCluster of
// key's cluster names hub behind (publishSteps). The next comparison that succeeds takes it out (clearDirty).
func (c *Controller) markBehind(key Key, hub string) {
	cluster := c.keyCluster(key)
	// A hub not ready is left alone: OnState lists every key again when it is.
	added := c.steps.behind(key, hub)
	if _, ok := c.kinds[failoverv1alpha1.KindManagedCluster]; ok && added && cluster != "" {
		// The source's ManagedCluster names hub behind from now on.
		c.queue.Add(Key{Kind: failoverv1alpha1.KindManagedCluster, Name: cluster})
	}
}

func (c *Controller) markCaughtUp(hub string) {
	c.brake.CaughtUp(hub)
	already, reopened := c.steps.caughtUp(hub)
	if reopened {
		// Caught up again after a failed write (markBehind): the cluster whose key it was is queued by
		// clearDirty; the event is for a hub's catch-up after it became ready.
		return
	}
	if !already {
		c.opts.Recorder.Eventf(ReasonHubCaughtUp, "hub %s is caught up", hub)
		// Every source's ManagedCluster names this hub in step from now on.
		if _, ok := c.kinds[failoverv1alpha1.KindManagedCluster]; ok {
			for _, cluster := range c.knownClusters() {
				c.queue.Add(Key{Kind: failoverv1alpha1.KindManagedCluster, Name: cluster})
			}
		}
	}
}
