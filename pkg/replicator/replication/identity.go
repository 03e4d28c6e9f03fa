package replication

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/metrics"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// checkIdentity decides which spoke cluster's name stands for (direction.DecideIdentity) from views, the view
// of every hub in spec order (hubView, identityViews), and keeps the record of names that stand
// for several spokes (Controller.identityConflicts). A conflict, once seen, stays until every hub is ready and
// shows no conflict, in the caches and then in a read of each hub's ManagedCluster (liveIdentity): a hub that is
// down may still hold the other spoke's ManagedCluster. The first sync that finds a conflict reports it (event
// ReasonClusterIdentityConflict, metric) and queues the cluster's direction (syncDirection takes the fence marks
// down); the one that finds it gone reports that and queues the cluster's direction and keys.
func (c *Controller) checkIdentity(ctx context.Context, cluster string, views []direction.HubView) direction.Identity {
	id := direction.DecideIdentity(views)
	allReady := true
	for _, v := range views {
		allReady = allReady && v.Reachable
	}
	c.mu.Lock()
	recorded, had := c.identityConflicts[cluster]
	c.mu.Unlock()
	confirmed := false
	if had && allReady && !id.Conflict {
		// A cache may miss an object for a moment: the end of a conflict is confirmed from the hubs.
		live, err := c.liveIdentity(ctx, cluster)
		if err != nil || live.Conflict {
			if err != nil {
				c.logger.V(2).Info("Could not confirm that a cluster name stands for one spoke again", "cluster", cluster, "err", err.Error())
				c.queue.AddRateLimited(Key{Name: cluster})
			}
			return direction.Identity{Conflict: true, Seen: recorded}
		}
		confirmed = true
	}
	c.mu.Lock()
	recorded, had = c.identityConflicts[cluster]
	switch {
	case id.Conflict:
		c.identityConflicts[cluster] = id.Seen
	case had && confirmed:
		delete(c.identityConflicts, cluster)
	case had:
		// Seen by another sync meanwhile, or not confirmed yet: still a conflict.
		id = direction.Identity{Conflict: true, Seen: recorded}
	}
	metrics.ClusterIdentityConflicts.Set(float64(len(c.identityConflicts)))
	c.mu.Unlock()
	switch {
	case id.Conflict && !had:
		c.logger.Info("Managed cluster name stands for more than one spoke: nothing of it is replicated or fenced",
			"cluster", cluster, "identities", id.Seen)
		c.opts.Recorder.Warningf(ReasonClusterIdentityConflict,
			"managed cluster %s stands for more than one spoke (%s): nothing of it is replicated, fenced or written back until one identity is left",
			cluster, id.Seen)
		c.queue.Add(Key{Name: cluster})
	case !id.Conflict && had:
		c.logger.Info("Managed cluster name no longer stands for more than one spoke: replicating it", "cluster", cluster, "identity", id.ID)
		c.opts.Recorder.Eventf(ReasonClusterIdentityResolved, "managed cluster %s no longer stands for more than one spoke (was %s): it is replicated",
			cluster, recorded)
		c.queue.Add(Key{Name: cluster})
		for _, key := range c.clusterKeys(cluster) {
			c.queue.Add(key)
		}
	}
	return id
}

// identityViews returns the direction view of cluster on every hub, in spec order, as the identity check reads it.
func (c *Controller) identityViews(cluster string) []direction.HubView {
	views := make([]direction.HubView, 0, len(c.opts.Hubs))
	for _, h := range c.opts.Hubs {
		views = append(views, hubView(h, cluster, false, time.Time{}))
	}
	return views
}

// standDown undoes, for cluster, whose name stands for several spokes, what the replicator keeps of a
// replicated cluster: it forgets the cluster's source, takes the fence marks off the cluster's namespace on
// every ready hub when Options.Fencing (each spoke's users manage their own cluster of that name on their own
// hub) and from every ManagedCluster copy there (mirror.UnfencePatch), and, on each hub whose ManagedCluster
// reports other hubs in step, names every other hub behind: none holds this cluster's state. A ManagedCluster that
// is no copy and never had that report is left untouched.
func (c *Controller) standDown(ctx context.Context, cluster string) error {
	c.mu.Lock()
	delete(c.sources, cluster)
	delete(c.selected, cluster)
	delete(c.movedFrom, cluster)
	c.mu.Unlock()
	// Its report is not confirmed any more (see reportUnreplicated).
	c.reports.forget(cluster)
	var errs []error
	k, reportSteps := c.kinds[failoverv1alpha1.KindManagedCluster]
	for _, h := range c.opts.Hubs {
		if !h.Ready() {
			continue
		}
		if c.opts.Fencing {
			if err := c.unmarkNamespace(ctx, h.Name(), cluster); err != nil {
				errs = append(errs, err)
			}
		}
		if !reportSteps {
			continue
		}
		mc, _ := h.Peek(failoverv1alpha1.KindManagedCluster, "", cluster)
		if mc == nil || mc.GetDeletionTimestamp() != nil {
			continue
		}
		if c.opts.Fencing && mirror.IsCopy(mc) {
			// The fence reads a copy's cluster-hub annotations: the spoke that joined it manages it here.
			if err := c.patchSourceOnce(ctx, h, k, Key{Kind: k.Name, Name: cluster}, mc, mirror.UnfencePatch(mc),
				"removing the cluster-hub annotations of a copy joined by another spoke on "+h.Name()); err != nil {
				errs = append(errs, err)
			}
		}
		if err := c.reportAllBehind(ctx, h, cluster, mc); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// reportAllBehind names every hub but h behind on mc, cluster's ManagedCluster on hub h, when mc carries an
// in-step report (mirror.AnnotationHubsInStep): the replicator no longer keeps the cluster's state on the other
// hubs (its name stands for several spokes, or the cluster selector no longer selects it), so none of them is in
// step. A ManagedCluster without that report is left untouched.
func (c *Controller) reportAllBehind(ctx context.Context, h *hubconn.Hub, cluster string, mc *unstructured.Unstructured) error {
	k, ok := c.kinds[failoverv1alpha1.KindManagedCluster]
	if !ok || mc == nil || mc.GetDeletionTimestamp() != nil {
		return nil
	}
	if _, reported := mc.GetAnnotations()[mirror.AnnotationHubsInStep]; !reported {
		return nil
	}
	steps := make([]mirror.HubStep, 0, len(c.opts.Hubs)-1)
	for _, other := range c.opts.Hubs {
		if other != h {
			steps = append(steps, mirror.HubStep{Hub: other.Name(), Ready: other.Ready(), Pending: true})
		}
	}
	return c.patchSourceOnce(ctx, h, k, Key{Kind: k.Name, Name: cluster}, mc, mirror.StepPatch(mc, steps, c.hubsReport(c.opts.Clock.Now()), false),
		"naming every other hub behind for a cluster not replicated, on "+h.Name())
}

// reportUnreplicated names every other hub behind on each ready hub's ManagedCluster of cluster that carries an
// in-step report (reportAllBehind): cluster is not replicated.
func (c *Controller) reportUnreplicated(ctx context.Context, cluster string) error {
	// Its report is not confirmed any more (publishSteps runs for replicated clusters only): the hubs it names
	// behind stay behind for the agent.
	c.reports.forget(cluster)
	var errs []error
	for _, h := range c.opts.Hubs {
		if !h.Ready() {
			continue
		}
		mc, _ := h.Peek(failoverv1alpha1.KindManagedCluster, "", cluster)
		if err := c.reportAllBehind(ctx, h, cluster, mc); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// unmarkNamespace removes the fence marks from cluster's namespace on hub, unless the replicator knows it
// has none there; a namespace that does not exist is not created.
func (c *Controller) unmarkNamespace(ctx context.Context, hub, cluster string) error {
	c.mu.Lock()
	have, known := c.fenceMarks[hub][cluster]
	c.mu.Unlock()
	if known && have == "" {
		return nil
	}
	h := c.byName[hub]
	data, err := json.Marshal(fence.NamespaceMark("", time.Time{}))
	if err != nil {
		return err
	}
	_, err = h.Client().Resource(mirror.NamespaceGVR).Patch(ctx, cluster, types.MergePatchType, data, metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil && !apierrors.IsNotFound(err) {
		h.ReportError(err)
		metrics.WriteErrors.WithLabelValues("Namespace", hub).Inc()
		return fmt.Errorf("removing the fence marks of namespace %s on hub %s: %w", cluster, hub, err)
	}
	c.mu.Lock()
	if c.fenceMarks[hub] != nil {
		c.fenceMarks[hub][cluster] = ""
	}
	c.mu.Unlock()
	return nil
}

// liveIdentity decides cluster's identity from its ManagedCluster as every hub returns it now (a GET each, not
// the caches). An error is a hub's read failing.
func (c *Controller) liveIdentity(ctx context.Context, cluster string) (direction.Identity, error) {
	k := c.kinds[failoverv1alpha1.KindManagedCluster]
	if k.Name == "" {
		k, _ = mirror.KindByName(failoverv1alpha1.KindManagedCluster)
	}
	views := make([]direction.HubView, 0, len(c.opts.Hubs))
	for _, h := range c.opts.Hubs {
		mc, err := h.Client().Resource(k.GVR).Get(ctx, cluster, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			views = append(views, direction.HubView{Hub: h.Name(), Reachable: true})
			continue
		}
		if err != nil {
			return direction.Identity{}, fmt.Errorf("reading ManagedCluster %s on hub %s: %w", cluster, h.Name(), err)
		}
		v := direction.HubView{Hub: h.Name(), Reachable: true, HasCluster: true}
		v.ClusterID, v.RecordedClusterID = mirror.ClusterIdentity(mc)
		views = append(views, v)
	}
	return direction.DecideIdentity(views), nil
}
