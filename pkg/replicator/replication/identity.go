package replication

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// identityConflict is what the controller keeps of a name that stands for several spokes.
type identityConflict struct {
	// seen lists the identities seen (direction.Identity.Seen).
	seen string
	// since is when the conflict was first seen, on the replicator's clock: a renewal of a spoke's lease seen
	// after it shows that spoke alive while the conflict stands (aliveElsewhere).
	since time.Time
}

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
	recorded, had := c.identityConflicts.of(cluster)
	confirmed := false
	if had && allReady && !id.Conflict {
		// A cache may miss an object for a moment: the end of a conflict is confirmed from the hubs.
		live, err := c.liveIdentity(ctx, cluster)
		if err != nil || live.Conflict {
			if err != nil {
				c.logger.V(2).Info("Could not confirm that a cluster name stands for one spoke again", "cluster", cluster, "err", err.Error())
				c.queue.AddRateLimited(Key{Name: cluster})
			}
			return direction.Identity{Conflict: true, Seen: recorded.seen}
		}
		confirmed = true
	}
	id, recorded, had, conflicts := c.identityConflicts.record(cluster, id, confirmed, c.opts.Clock.Now())
	metrics.ClusterIdentityConflicts.Set(float64(conflicts))
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
			cluster, recorded.seen)
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
// is no copy and never had that report is left untouched. On a hub whose ManagedCluster is a copy joined by
// another spoke than the one it was made for (joinedByAnotherSpoke), once that one is seen alive elsewhere
// (aliveElsewhere), what was copied there is withdrawn instead (withdrawCopies).
func (c *Controller) standDown(ctx context.Context, cluster string) error {
	c.directions.standDown(cluster)
	conflict, _ := c.identityConflicts.of(cluster)
	since := conflict.since
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
		if facts, _ := h.Cluster(cluster); joinedByAnotherSpoke(facts) && c.aliveElsewhere(h, cluster, facts.RecordedID, since) {
			// What was copied here was the other spoke's. The release takes the fence marks off as well, and
			// its watch event syncs the cluster again, which names the other hubs behind on what it left. A cache
			// can still show a copy released already: the hub's ManagedCluster is read first.
			live, err := h.Client().Resource(k.GVR).Get(ctx, cluster, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				errs = append(errs, fmt.Errorf("reading ManagedCluster %s on hub %s: %w", cluster, h.Name(), err))
			default:
				if joinedByAnotherSpoke(liveFacts(live)) && live.GetDeletionTimestamp() == nil {
					if err := c.withdrawCopies(ctx, h, k, cluster, live); err != nil {
						errs = append(errs, err)
					}
				}
			}
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

// joinedByAnotherSpoke reports whether facts, of a ManagedCluster on a hub, are those of a copy the replicator
// made for one spoke (its mirror.AnnotationClusterID) that the agent of a spoke of another identity joined since
// (it reports another mirror.ClusterIDClaim in the copy's status): what the replicator copied under that name to
// that hub was the first spoke's, not the joining spoke's.
func joinedByAnotherSpoke(facts hubconn.Cluster) bool {
	return facts.IsCopy && facts.ID != "" && facts.RecordedID != "" && facts.ID != facts.RecordedID
}

// liveFacts returns the facts joinedByAnotherSpoke reads of mc, a ManagedCluster read from a hub.
func liveFacts(mc *unstructured.Unstructured) hubconn.Cluster {
	claim, recorded := mirror.ClusterIdentity(mc)
	return hubconn.Cluster{IsCopy: mirror.IsCopy(mc), ID: claim, RecordedID: recorded}
}

// aliveElsewhere reports whether the spoke of identity recorded, for which cluster's ManagedCluster on hub h was
// copied, is alive under that name on another hub at the same time as the spoke that joined h: that hub is
// ready, its ManagedCluster is no copy and reports that identity (its agent's claim), a renewal of its lease was
// seen there after since (the time the conflict was first seen, on the replicator's clock), and a renewal of the
// lease on h was seen after that one. One agent renews one hub at a time, so renewals interleaved that way are
// two agents. A hub keeps the claim a spoke reported there until its agent writes it again: a spoke whose
// identity changed after it left that hub (an id.k8s.io ClusterClaim made on it, the spoke restored or rebuilt)
// and that joined h leaves its old claim there, and renews there again only if it moves back, after which it
// renews h no more; what was copied to h for it stays. A zero since (no conflict recorded) is never alive.
func (c *Controller) aliveElsewhere(h *hubconn.Hub, cluster, recorded string, since time.Time) bool {
	if since.IsZero() {
		return false
	}
	for _, other := range c.opts.Hubs {
		if other == h || !other.Ready() {
			continue
		}
		facts, ok := other.Cluster(cluster)
		if !ok || facts.IsCopy || facts.ID != recorded {
			continue
		}
		seenOther, seenHere := c.directions.renewSeenAt(other.Name(), cluster), c.directions.renewSeenAt(h.Name(), cluster)
		if seenOther.After(since) && seenHere.After(seenOther) {
			return true
		}
	}
	return false
}

// releaseAttempts is how many times withdrawCopies patches a ManagedCluster copy that is written meanwhile (a 409)
// before it returns the conflict, for the queue to retry.
const releaseAttempts = 5

// withdrawCopies undoes what the replicator copied to hub h under cluster's name for another spoke than the one
// that joined h's ManagedCluster mc (joinedByAnotherSpoke) — as when that spoke registered only after the
// replicator had copied the other spoke's objects there (a hub rebuilt, or given the replicator's access, before
// its own local-cluster registered). The cluster's namespace is listed on h (one LIST per namespaced kind h
// serves, not the cache: a copy written just before the conflict may not be cached yet). Every copy of the
// cluster's objects there (mirror.IsCopyOn) whose content is still what the replicator wrote
// (mirror.UnchangedCopy) is deleted (withdrawCopy: its delete passes h's delete brake, and OCM's work agent on the
// joining spoke removes what it applied of it); a copy changed on h is kept and named in the event. Then mc, kind
// k, as read from h, becomes the joining spoke's own ManagedCluster (mirror.ReleaseCopyPatch, on mc's
// resourceVersion; read again after a 409 and released only while still joined by another spoke,
// releaseAttempts times in all; the event is sent once that patch succeeded). The errors are the lists', the
// deletes', the reads' and the patch's (the last 409 included); mc stays a copy while any fails, so the next
// sync tries again.
func (c *Controller) withdrawCopies(ctx context.Context, h *hubconn.Hub, k mirror.Kind, cluster string, mc *unstructured.Unstructured) error {
	var errs []error
	var withdrawn, kept []string
	for name, kind := range c.kinds {
		if !kind.Namespaced || !h.Serves(name) {
			continue
		}
		// Read from the hub: a copy written just before the conflict may not be cached yet, and a user may have
		// changed one since the cache saw it.
		list, err := h.Client().Resource(kind.GVR).Namespace(cluster).List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("listing %s in namespace %s on hub %s: %w", name, cluster, h.Name(), err))
			continue
		}
		for i := range list.Items {
			obj := &list.Items[i]
			if _, ok := kind.ClusterOf(obj.GetNamespace(), obj.GetName(), c.isCluster); !ok || !mirror.IsCopyOn(kind, obj) {
				continue
			}
			key := Key{Kind: name, Namespace: obj.GetNamespace(), Name: obj.GetName()}
			if obj.GetDeletionTimestamp() == nil && !mirror.UnchangedCopy(kind, obj) {
				kept = append(kept, key.String())
				continue
			}
			if err := c.withdrawCopy(ctx, h, kind, key, obj); err != nil {
				errs = append(errs, fmt.Errorf("withdrawing %s from hub %s: %w", key, h.Name(), err))
				continue
			}
			withdrawn = append(withdrawn, key.String())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	client := h.Client().Resource(k.GVR)
	for attempt := 1; ; attempt++ {
		_, err := client.Patch(ctx, cluster, types.MergePatchType, mirror.ReleaseCopyPatch(mc), metav1.PatchOptions{FieldManager: FieldManager})
		if err == nil {
			break
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt == releaseAttempts {
			h.ReportError(err)
			metrics.WriteErrors.WithLabelValues(string(k.Name), h.Name()).Inc()
			return fmt.Errorf("making ManagedCluster %s on hub %s, a copy joined by another spoke, that spoke's own: %w", cluster, h.Name(), err)
		}
		// The joining spoke's agent and OCM's hub controller write its status all the time: read it again.
		if mc, err = client.Get(ctx, cluster, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading ManagedCluster %s on hub %s: %w", cluster, h.Name(), err)
		}
		if !joinedByAnotherSpoke(liveFacts(mc)) {
			// Released by another sync meanwhile, or no longer joined by another spoke.
			return nil
		}
	}
	claim, recorded := mirror.ClusterIdentity(mc)
	slices.Sort(withdrawn)
	slices.Sort(kept)
	c.logger.Info("Withdrew what was copied for another spoke of a cluster name", "cluster", cluster, "hub", h.Name(),
		"copiedFor", recorded, "joinedBy", claim, "withdrawn", withdrawn, "kept", kept)
	c.opts.Recorder.Warningf(ReasonCopiesWithdrawn,
		"managed cluster %s on hub %s was joined by spoke %s, but the replicator had copied it there for spoke %s: %d copies withdrawn %v, %d changed on the hub kept %v (delete them there if they are not this spoke's); the ManagedCluster is now that spoke's own",
		cluster, h.Name(), claim, recorded, len(withdrawn), withdrawn, len(kept), kept)
	return nil
}

// withdrawCopy deletes obj, key's copy on hub h as listed there, unchanged since the replicator wrote it. A copy
// that carries none of h's finalizers (mirror.CopyFinalizersPatch) is deleted on its UID and resourceVersion
// after h's delete brake admits it: a 409 (a user changed it since it was listed) is returned, and the next sync
// lists and checks it again. One that carries them, or is being deleted, goes through deleteCopy, which removes
// them and retries on a 409 without checking the content again.
func (c *Controller) withdrawCopy(ctx context.Context, h *hubconn.Hub, k mirror.Kind, key Key, obj *unstructured.Unstructured) error {
	if obj.GetDeletionTimestamp() != nil || mirror.CopyFinalizersPatch(k, obj) != nil {
		return c.deleteCopy(ctx, h, k, obj)
	}
	if err := c.admitDelete(h.Name(), key); err != nil {
		return err
	}
	h.ExpectDelete(k.Name, obj.GetNamespace(), obj.GetName(), obj.GetUID())
	if err := c.delete(ctx, h, k, obj); err != nil {
		if apierrors.IsConflict(err) {
			return fmt.Errorf("changed since it was listed: %w", err)
		}
		return err
	}
	return nil
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
	have, known := c.fenceMarks.of(hub, cluster)
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
	c.fenceMarks.wrote(hub, cluster, "")
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
