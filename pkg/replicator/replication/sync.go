package replication

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/metrics"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// catchUpGrace bounds how long a cluster's direction waits for a hub that just became ready to be caught up
// before it flips to that hub (see syncDirection).
const catchUpGrace = time.Minute

// syncDirection recomputes the source of cluster. When it changes, or when the cluster starts to be selected,
// every object of the cluster is enqueued. A flip to a hub that became ready less than catchUpGrace ago and is
// not caught up yet waits while the previous source is still ready: the returning hub first receives what
// changed on the previous source (a quick failback must not make its stale originals the source).
//
// A name that stands for several spokes (checkIdentity) gets no source: standDown takes down what the
// replicator kept of it.
func (c *Controller) syncDirection(ctx context.Context, cluster string) error {
	now := c.opts.Clock.Now()
	views := make([]direction.HubView, 0, len(c.opts.Hubs))
	read := c.directions.read(cluster)
	prev := read.prev
	allReady, anyHas := true, false
	for _, h := range c.opts.Hubs {
		v := hubView(h, cluster, read.renewed[h.Name()], read.seen[h.Name()])
		v.LeaseAddedSeen = read.added[h.Name()]
		allReady = allReady && v.Reachable
		anyHas = anyHas || v.HasCluster
		views = append(views, v)
	}
	if c.viewsRead != nil {
		c.viewsRead(cluster)
	}
	if c.checkIdentity(ctx, cluster, views).Conflict {
		return c.standDown(ctx, cluster)
	}
	if allReady && !anyHas {
		// The cluster is gone from every hub.
		c.directions.gone(cluster)
		return nil
	}
	if prev.Hub == "" && !c.allSettled() {
		// No first decision from a partial view: a hub still listing, or not probed yet, may hold the cluster's
		// latest record (its epoch, its copies' record), and without lease evidence the decision would stick.
		c.queue.AddAfter(Key{Name: cluster}, time.Second)
		return nil
	}
	next := direction.DecideSource(prev, views, now)
	if expiry := direction.NextExpiry(views, now); !expiry.IsZero() {
		// Without an event the decision can change only once a fresh lease goes stale: decide again then.
		c.queue.AddAfter(Key{Name: cluster}, expiry.Sub(now)+time.Second)
	}
	c.logger.V(4).Info("Direction", "cluster", cluster, "previous", prev.Hub, "source", next.Hub, "rule", next.Reason, "views", views)
	if next.Hub == "" {
		return nil
	}
	if prev.Hub != "" && next.Hub != prev.Hub && c.byName[prev.Hub].Ready() {
		if state, _, since := c.byName[next.Hub].State(); state == hubconn.StateReady && !c.caughtUp(next.Hub) && now.Sub(since) < catchUpGrace {
			c.logger.Info("Cluster moved to a hub that is not caught up yet: keeping the previous source meanwhile",
				"cluster", cluster, "from", prev.Hub, "to", next.Hub)
			c.queue.AddAfter(Key{Name: cluster}, time.Second)
			return nil
		}
	}
	selected := c.selectedOn(c.byName[next.Hub], cluster)
	var movedFrom, version string
	if next.Hub != prev.Hub {
		mc, _ := c.byName[next.Hub].Peek(failoverv1alpha1.KindManagedCluster, "", cluster)
		movedFrom = mirror.MovedFrom(mc, next.Hub, c.configured)
		if mc != nil {
			version = mc.GetResourceVersion()
		}
	}
	// The hub it moved from is recorded before the cluster's keys are enqueued below: the first sync of each
	// already knows where it came from. A renewal OnLease only recorded while this sync ran is not in its views:
	// decide again with it.
	wasSelected, again := c.directions.decided(cluster, next, selected, next.Hub != prev.Hub, movedFrom, version, read.deferred)
	if again {
		c.queue.Add(Key{Name: cluster})
	}
	if next.Hub == prev.Hub {
		if selected && !wasSelected && prev.Hub != "" {
			c.logger.Info("Cluster selected: replicating its state", "cluster", cluster, "source", next.Hub)
			for _, key := range c.clusterKeys(cluster) {
				c.queue.Add(key)
			}
		}
		return nil
	}
	metrics.SourceChanges.WithLabelValues(next.Hub).Inc()
	if prev.Hub == "" {
		c.logger.V(2).Info("Cluster source found", "cluster", cluster, "hub", next.Hub, "rule", next.Reason)
	} else {
		c.opts.Recorder.Eventf(ReasonClusterSourceChanged, "managed cluster %s is now on hub %s (was %s): its state is copied from %s to the other hubs",
			cluster, next.Hub, prev.Hub, next.Hub)
		c.logger.Info("Cluster source changed", "cluster", cluster, "from", prev.Hub, "to", next.Hub, "rule", next.Reason)
	}
	for _, key := range c.clusterKeys(cluster) {
		c.queue.Add(key)
	}
	return nil
}

// allSettled reports whether every hub's state is known (hubconn.Hub.Settled).
func (c *Controller) allSettled() bool {
	for _, h := range c.opts.Hubs {
		if !h.Settled() {
			return false
		}
	}
	return true
}

// selectedOn reports whether cluster's ManagedCluster on hub h matches the cluster selector.
func (c *Controller) selectedOn(h *hubconn.Hub, cluster string) bool {
	if h == nil {
		return false
	}
	mc, ok := h.Cluster(cluster)
	return ok && c.opts.ClusterSelector.Matches(labels.Set(mc.Labels))
}

// caughtUp reports whether hub has no out-of-step object left since it became ready (and OnState has handled
// that: see Controller.listed).
func (c *Controller) caughtUp(hub string) bool {
	return c.steps.isCaughtUp(hub)
}

// hubView builds the direction view of cluster on hub h; renewed says whether an agent was seen renewing its
// lease there, seen when a renewal was last seen (zero: never).
func hubView(h *hubconn.Hub, cluster string, renewed bool, seen time.Time) direction.HubView {
	v := direction.HubView{Hub: h.Name(), Reachable: h.Ready(), LeaseDuration: direction.DefaultLeaseDuration, RenewSeen: seen}
	if !v.Reachable {
		return v
	}
	if state, _, since := h.State(); state == hubconn.StateReady {
		v.ReadySince = since
	}
	if mc, ok := h.Cluster(cluster); ok {
		v.HasCluster = true
		v.IsCopy = mc.IsCopy
		if mc.LeaseDuration > 0 {
			v.LeaseDuration = mc.LeaseDuration
		}
		v.RecordedHub, v.RecordedSince = mc.RecordedHub, mc.RecordedSince
		v.ClusterID, v.RecordedClusterID = mc.ID, mc.RecordedID
		v.Epoch = mc.Epoch.Number
	}
	if renewTime, created, ok := h.Lease(cluster); ok {
		v.HasLease = true
		v.RenewTime = renewTime
		v.AgentRenewed = renewed || renewTime.Sub(created) > direction.CreationSlack
	}
	return v
}

// syncObject brings every ready target hub's object of key in step with the source hub's. It runs the steps of
// an objectSync in order: resolve (the source, its object, or why nothing is replicated now), writeBack (a write
// the hub the cluster moved from made, written on the source first), restoreSource (the newest state a copy
// holds, written back onto a source restored from a backup), recordSource, selectTargets, holdFirstCopy
// (the original held before its first copy), writeTargets (every target at once), and finish (fence marks,
// has-copies, the release of a held delete, tombstones, the hubs' steps and, for a ManagedCluster, its report).
func (c *Controller) syncObject(ctx context.Context, key Key) error {
	s, err := c.resolve(ctx, key)
	if s == nil || err != nil {
		return err
	}
	if s.writeBack(ctx) {
		// The source's watch event syncs the key again, from what was written.
		return nil
	}
	if !s.restoreWait && s.failed.Len() == 0 && s.restoreSource(ctx) {
		// Likewise: the copies are compared with what was written on the source.
		return errors.Join(s.errs...)
	}
	s.recordSource(ctx)
	targets := s.selectTargets(ctx)
	if !s.holdFirstCopy(ctx, targets) {
		// No copy without the hold; a refused hold (the cache is behind) is retried on the watch event.
		return errors.Join(s.errs...)
	}
	s.writeTargets(ctx, targets)
	s.finish(ctx)
	if len(s.errs) > 0 {
		return fmt.Errorf("%s: %w", key, errors.Join(s.errs...))
	}
	c.lag.stop(key, s.seen)
	return nil
}

// objectSync is one sync of a key (syncObject): what its steps decided and found, in the order they run.
type objectSync struct {
	c   *Controller
	k   mirror.Kind
	key Key
	// checked says whether the identity check saw hub h ready. A cluster's object is written on no other hub:
	// one that became ready since may hold another spoke of that name, and OnState queues every key for it.
	checked func(*hubconn.Hub) bool
	source  *hubconn.Hub
	// extra are the extra annotations of the copies (sourceOf).
	extra map[string]string
	// src is the source's object (nil: none).
	src *unstructured.Unstructured
	// seen is when the change being synced was first seen (hasSeen: one was), for the replication lag.
	seen    time.Time
	hasSeen bool
	// failed are the hubs to write back from (writeBackHubs) whose write-back failed, or waits until whether the
	// hub was restored from a backup is known (Controller.writeBack): left untouched by this sync.
	failed sets.Set[string]
	// restoreWait: a write-back waits until whether its hub was restored is known. restoreSource, whose writes
	// and deletes on the source the write-back may answer, waits with it, as it does after a failed write-back.
	restoreWait bool
	// known: hub → whether the replicator knew, when the sync began, whether the hub was restored from a backup
	// (restoreKnown); a hub it did not is neither written nor released by this sync, and neither is any hub when
	// a hub was found restored since the sync began (restores, the count of restores found then).
	known    map[string]bool
	restores uint64
	// compared are the hubs the key was found or brought in step on; holding, the targets that hold a copy
	// of src after the sync.
	compared, holding []string
	errs              []error
}

// resolve returns the sync of key: its kind, identity check, source and source object. It returns nil (and the
// error, if any) when there is nothing to write now: the kind is not replicated, the name stands for several
// spokes or its cluster is not selected (notReplicated), the source is not known or ready yet, its read failed,
// the object just left the source's cache (decided again after goneRecheck), or it is a generated object (its
// stale copies are dropped).
func (c *Controller) resolve(ctx context.Context, key Key) (*objectSync, error) {
	k, ok := c.kinds[key.Kind]
	if !ok {
		return nil, nil
	}
	// A key that is not replicated has nothing to reconcile on a restored hub; one that waits for its source
	// (or a read) is not reconciled yet.
	settled := func() {
		if c.allReady() {
			c.incarnations.reconciled(key)
		}
	}
	s := &objectSync{c: c, k: k, key: key, checked: func(*hubconn.Hub) bool { return true }, known: map[string]bool{}, failed: sets.New[string]()}
	// Before writeBack reads the claims: when a hub is found restored meanwhile, the sync writes on no hub.
	s.restores = c.incarnations.restoresFound()
	for _, h := range c.opts.Hubs {
		s.known[h.Name()] = c.restoreKnown(h)
	}
	var identity direction.Identity
	if cluster, ok := k.ClusterOf(key.Namespace, key.Name, c.isCluster); ok {
		views := c.identityViews(cluster)
		if identity = c.checkIdentity(ctx, cluster, views); identity.Conflict {
			// The name stands for several spokes: nothing of it is replicated, and no hub waits for it.
			settled()
			return nil, c.notReplicated(ctx, k, key)
		}
		seen := map[string]bool{}
		for _, v := range views {
			seen[v.Hub] = v.Reachable
		}
		s.checked = func(h *hubconn.Hub) bool { return seen[h.Name()] }
	}
	source, extra, outcome := c.sourceOf(k, key, identity)
	switch outcome {
	case sourceWait:
		// The source is not known or not ready yet: the key is enqueued again when that changes, and stays
		// out of step on the hubs that wait for it.
		c.logger.V(4).Info("No source to replicate from yet", "object", key.String())
		return nil, nil
	case sourceNone:
		settled()
		return nil, c.notReplicated(ctx, k, key)
	}
	s.source, s.extra = source, extra
	src, err := source.Get(ctx, k.Name, key.Namespace, key.Name)
	if err != nil {
		// One read's failure says nothing of the hub's reachability: the probe judges that.
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if src == nil && !source.Serves(k.Name) {
		// The source stopped being ready between the check and the read: an empty cache is no delete.
		return nil, nil
	}
	src = c.withHold(source, key, src)
	if src == nil && source.Deleted(k.Name, key.Namespace, key.Name) == nil && c.justGone(k, key) {
		// The object was there at the last sync: an informer drops it from its cache before its handler hears
		// the delete. Decided again in a moment, with the delete if there was one.
		c.queue.AddAfter(key, goneRecheck)
		return nil, nil
	}
	if mirror.Excluded(k, src) {
		settled()
		c.forget(key)
		return nil, errors.Join(c.dropStaleCopies(ctx, k, key, source), c.releaseOthers(ctx, k, key, nil, nil, c.restoreKnown))
	}
	s.src = src
	return s, nil
}

// writeBack writes on the source what the hub the cluster moved from made and never replicated
// (Controller.writeBack), and lets go of the deletes held on the other hubs (releaseOthers). It reports whether
// it wrote on the source: the rest of the sync waits for the source's watch event then. A write-back that must
// wait until whether its hub was restored from a backup is known (errRestoreUnknown) leaves that hub untouched
// and sets restoreWait, so that nothing the write-back may answer is done on the source before it — a delete
// that a log records of an object made again there since, say (deleteAgainOnSource); the other hubs are brought
// in step with the source meanwhile.
func (s *objectSync) writeBack(ctx context.Context) (wrote bool) {
	c := s.c
	if cluster, ok := s.k.ClusterOf(s.key.Namespace, s.key.Name, c.isCluster); ok {
		for _, from := range c.writeBackHubs(cluster, s.source) {
			wrote, failedHub, err := c.writeBack(ctx, s.k, s.key, s.source, s.src, s.checked, s.restoreKnown, from)
			if wrote {
				return true
			}
			if errors.Is(err, errRestoreUnknown) {
				s.restoreWait = true
				err = nil
			}
			if failedHub != "" {
				s.failed.Insert(failedHub)
			}
			if err != nil {
				s.errs = append(s.errs, err)
			}
		}
	}
	if err := c.releaseOthers(ctx, s.k, s.key, s.source, s.failed, s.restoreKnown); err != nil {
		s.errs = append(s.errs, err)
	}
	return false
}

// restoreSource writes the newest state a copy holds back onto the source's object when the source holds an
// older state of it (mirror.DecideRestore: the source's hub was restored from a backup), or makes the object
// again there from a copy when the source lost it (mirror.DecideRecreate: the copy was made in a later
// incarnation of the source hub than the one it shows), and reports whether it wrote or failed to: the rest of
// the sync waits for the source's watch event then, so that no copy is compared with the older state, or read
// as a delete, meanwhile. It weighs every configured hub's copy, so it does nothing while a hub is not ready or
// not checked by the identity check (the copies stay, mirror.Decide rules 3 and 6: the newest state may be on
// that hub). A failed write is retried. A key it weighed and found nothing to write for is reconciled for a
// restored hub (incarnations.reconciled).
func (s *objectSync) restoreSource(ctx context.Context) (wrote bool) {
	c, k, key, src, source := s.c, s.k, s.key, s.src, s.source
	if s.deleteAgainOnSource(ctx) {
		return true
	}
	var candidates []mirror.RestoreCandidate
	for _, h := range c.opts.Hubs {
		if h == source {
			continue
		}
		if !h.Ready() || !s.checked(h) {
			return false
		}
		if h.Serves(k.Name) {
			obj, hash := h.Peek(k.Name, key.Namespace, key.Name)
			candidates = append(candidates, mirror.RestoreCandidate{Hub: h.Name(), Copy: obj, Hash: hash})
		}
	}
	if src == nil {
		return s.recreateOnSource(ctx, candidates)
	}
	r, ok := mirror.DecideRestore(k, src, source.Name(), candidates)
	if !ok {
		s.reconciled()
		return false
	}
	cp, err := c.heldCopy(ctx, r.Hub, k, key)
	if err != nil {
		s.errs = append(s.errs, fmt.Errorf("%s: reading the copy on hub %s to write back onto restored hub %s: %w", key, r.Hub, source.Name(), err))
		return true
	}
	err = c.update(ctx, source, k, mirror.RestoreOnto(k, src, cp, r.Lineage))
	source.ReportError(err)
	if err != nil {
		metrics.WriteErrors.WithLabelValues(string(k.Name), source.Name()).Inc()
		s.errs = append(s.errs, fmt.Errorf("%s: writing back the state of hub %s's copy onto restored hub %s: %w", key, r.Hub, source.Name(), err))
		return true
	}
	metrics.ObjectsMirrored.WithLabelValues(string(k.Name), source.Name(), string(mirror.ActionUpdate)).Inc()
	if r.SameContent {
		c.logger.Info("Raised the lineage of an object on a restored hub", "object", key.String(), "hub", source.Name(), "lineage", r.Lineage)
		return true
	}
	c.opts.Recorder.Eventf(ReasonWrittenBack, "%s: hub %s holds an older state (generation %d) than its copy on hub %s (made from lineage %d): "+
		"the hub was restored from a backup; the copy's state is written back onto it", key, source.Name(), src.GetGeneration(), r.Hub, r.Lineage)
	return true
}

// reconciled records the sync's key as reconciled for the hubs found restored (incarnations.reconciled), unless a
// write-back failed in this sync (that hub's writes are still to take) or a hub was found restored after the sync
// began (its writes were not asked for).
func (s *objectSync) reconciled() {
	if s.failed.Len() == 0 && s.c.incarnations.restoresFound() == s.restores {
		s.c.incarnations.reconciled(s.key)
	}
}

// restoreKnown reports whether h may be written or released by this sync: whether it was restored from a backup
// was known when the sync began, and no hub was found restored since.
func (s *objectSync) restoreKnown(h *hubconn.Hub) bool {
	return s.known[h.Name()] && s.c.incarnations.restoresFound() == s.restores
}

// deleteAgainOnSource deletes the source's object of the sync's key when another hub's log of deletes made, or
// a tombstone on its ManagedCluster, records its delete (deleteMadeOf): the source was restored from a backup
// taken before the delete, which brought it back, or was down when the delete was released and became the source
// before it caught up. The delete passes the source's brake; the object is first marked (mirror.DeletedAgainPatch), so that
// its delete is not carried to the other hubs, whose objects of the name may be of one made again since (what
// remains there of the deleted one goes by the logs too, syncTarget), and loses the replicator's hold; OCM's work
// agent removes what it applied. It reports whether it wrote or failed to (or the brake held it, or a hub's log
// could not be read): the rest of the sync waits.
func (s *objectSync) deleteAgainOnSource(ctx context.Context) (wrote bool) {
	c, k, key, src, source := s.c, s.k, s.key, s.src, s.source
	if src == nil || src.GetDeletionTimestamp() != nil {
		return false
	}
	hub, own, known := c.deleteMadeOf(ctx, k, key, src, source.Name())
	if !known {
		// A hub's log could not be read: the object may be a remnant, and is neither copied nor deleted yet.
		s.errs = append(s.errs, fmt.Errorf("%s: a hub's log of deletes made could not be read: waiting", key))
		return true
	}
	if hub == "" {
		return false
	}
	if !own && mirror.IsCopy(src) && !mirror.UnchangedCopy(k, src) {
		// src is a copy made from the deleted object and changed on the source since it was written (the delete
		// was released on a hub that could not reach the source, which the cluster had moved to): the change is
		// kept and the delete not carried here, as for a delete on a hub the cluster moved from
		// (mirror.DecideWriteBack rule 2): no clock orders the two writes, and the change is the outcome that can
		// be undone.
		if c.notWrittenBack.first(key.String() + "@" + string(src.GetUID())) {
			c.opts.Recorder.Warningf(ReasonDeleteNotWrittenBack, "%s: deleted on hub %s, whose log of deletes made or ManagedCluster's tombstones record it, and changed on hub %s, its source, "+
				"since it was copied there: the change is kept, the delete is not carried there", key, hub, source.Name())
		}
		return false
	}
	// Marked, its delete is not carried to the other hubs (mirror.Decide rule 2): the name may hold an object
	// made again since; and it waits for no copy.
	err := c.admitDelete(source.Name(), key)
	if err == nil {
		_, err = source.Client().Resource(k.GVR).Namespace(key.Namespace).Patch(ctx, key.Name, types.MergePatchType,
			mirror.DeletedAgainPatch(src, hub), metav1.PatchOptions{FieldManager: FieldManager})
		if err == nil {
			uid := src.GetUID()
			err = source.Client().Resource(k.GVR).Namespace(key.Namespace).Delete(ctx, key.Name,
				metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		}
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			// Gone, made again, or changed meanwhile: the next sync decides again.
			return true
		}
	}
	if errors.Is(err, errDeleteHeld) {
		return true
	}
	source.ReportError(err)
	if err != nil {
		metrics.WriteErrors.WithLabelValues(string(k.Name), source.Name()).Inc()
		s.errs = append(s.errs, fmt.Errorf("%s: deleting again on hub %s the object whose delete hub %s records: %w", key, source.Name(), hub, err))
		return true
	}
	metrics.ObjectsMirrored.WithLabelValues(string(k.Name), source.Name(), string(mirror.ActionDelete)).Inc()
	c.opts.Recorder.Eventf(ReasonDeleteProven, "%s: the object on hub %s, the source, was deleted, as hub %s's log of deletes made (%s/%s) or its ManagedCluster's tombstones record (its hub was down then, or restored from a backup taken before): deleted again",
		key, source.Name(), hub, c.opts.MarkerNamespace, DeleteLog)
	return true
}

// recreateOnSource makes the object of the sync's key again on its source, which no longer holds it, from the
// copy mirror.DecideRecreate chooses among candidates (every other hub's object of the key), as
// mirror.RecreateFrom gives it; see restoreSource.
func (s *objectSync) recreateOnSource(ctx context.Context, candidates []mirror.RestoreCandidate) (wrote bool) {
	c, k, key, source := s.c, s.k, s.key, s.source
	for _, cand := range candidates {
		if cand.Copy != nil && cand.Copy.GetLabels()[mirror.LabelReplicatedFrom] == source.Name() {
			c.incarnations.observe(source.Name(), mirror.SourceIncarnation(cand.Copy))
		}
	}
	shown, read := c.incarnations.of(source.Name())
	if !read {
		// Decided once the source's marker is read: syncIncarnation syncs every key again then.
		return false
	}
	r, ok := mirror.DecideRecreate(k, source.Name(), shown, source.Deleted(k.Name, key.Namespace, key.Name), candidates)
	if !ok {
		s.reconciled()
		return false
	}
	cp, err := c.heldCopy(ctx, r.Hub, k, key)
	if err != nil {
		s.errs = append(s.errs, fmt.Errorf("%s: reading the copy on hub %s to make it again on restored hub %s: %w", key, r.Hub, source.Name(), err))
		return true
	}
	err = c.create(ctx, source, k, mirror.RecreateFrom(k, cp))
	source.ReportError(err)
	if apierrors.IsAlreadyExists(err) {
		// The source holds an object of that name that its cache does not show (its watch event syncs the key
		// again), or one its informer does not select (a Secret without the backup label): nothing is lost.
		s.reconciled()
		return true
	}
	if err != nil {
		metrics.WriteErrors.WithLabelValues(string(k.Name), source.Name()).Inc()
		s.errs = append(s.errs, fmt.Errorf("%s: making it again on restored hub %s from hub %s's copy: %w", key, source.Name(), r.Hub, err))
		return true
	}
	metrics.ObjectsMirrored.WithLabelValues(string(k.Name), source.Name(), string(mirror.ActionCreate)).Inc()
	c.opts.Recorder.Eventf(ReasonWrittenBack, "%s: hub %s lost it (it shows incarnation %d of its marker, the copy on hub %s was made in incarnation %d): "+
		"the hub was restored from a backup; the object is made again there from the copy", key, source.Name(), shown.N, r.Hub, r.Incarnation.N)
	return true
}

// heldCopy reads hub's copy of key whole, for a write-back onto its source; an error when the hub no longer holds
// it or it no longer holds the state it records (changed on that hub since the decision, which read its cache).
func (c *Controller) heldCopy(ctx context.Context, hub string, k mirror.Kind, key Key) (*unstructured.Unstructured, error) {
	cp, err := c.byName[hub].Get(ctx, k.Name, key.Namespace, key.Name)
	switch {
	case err != nil:
		return nil, err
	case cp == nil:
		return nil, fmt.Errorf("hub %s no longer holds it", hub)
	case !mirror.HoldsRecordedState(k, cp):
		return nil, fmt.Errorf("the copy on hub %s was changed there since it was written", hub)
	}
	return cp, nil
}

// allReady reports whether every configured hub is ready.
func (c *Controller) allReady() bool {
	for _, h := range c.opts.Hubs {
		if !h.Ready() {
			return false
		}
	}
	return true
}

// recordSource records what the source holds: the key among the replicated objects (or not), when its change
// was first seen, and, for a ManagedCluster, the hub it moved from, and removes the cluster-hub annotations a copy
// left on the source's ManagedCluster. The source counts neither copies nor conflicts of the key.
func (s *objectSync) recordSource(ctx context.Context) {
	c, k, key, src, source := s.c, s.k, s.key, s.src, s.source
	c.objects.set(key, src != nil)
	s.seen, s.hasSeen = c.lag.of(key)

	if k.Name == failoverv1alpha1.KindManagedCluster && src != nil {
		c.directions.setMovedFrom(key.Name, source.Name(), mirror.MovedFrom(src, source.Name(), c.configured), src.GetResourceVersion())
		if cleaned := mirror.SourceCleanup(src, source.Name()); cleaned != nil {
			err := c.update(ctx, source, k, cleaned)
			source.ReportError(err)
			if err != nil {
				metrics.WriteErrors.WithLabelValues(string(k.Name), source.Name()).Inc()
				s.errs = append(s.errs, fmt.Errorf("removing the cluster-hub annotations on source hub %s: %w", source.Name(), err))
			}
		}
	}
	c.setCopy(source.Name(), key, false)
	c.recordConflict(k, key, source.Name(), mirror.ConflictNone)
	s.compared = []string{source.Name()}
}

// selectTargets returns the hubs to write the key on. A ready hub without the kind's CRD holds nothing of it
// (left out there) and is in step for the key, not behind for good. The source, a hub not ready, not checked by
// the identity check, or whose write-back failed (it keeps its object as it is, the evidence, until it can), is
// left alone. A hub whose add-on manager installs the add-on of this name (mirroredTo) loses the replicator's copy
// instead, and is in step once it holds none.
func (s *objectSync) selectTargets(ctx context.Context) []*hubconn.Hub {
	c, k, key := s.c, s.k, s.key
	var targets []*hubconn.Hub
	for _, target := range c.opts.Hubs {
		switch {
		case target != s.source && target.Ready() && !target.Serves(k.Name) && s.checked(target):
			s.compared = append(s.compared, target.Name())
		case target == s.source || !target.Serves(k.Name) || s.failed.Has(target.Name()) || !s.checked(target):
		case !mirroredTo(k, key, s.source, target) && !s.restoreKnown(target):
			c.markBehind(key, target.Name())
			c.queue.AddAfter(key, c.opts.IncarnationInterval)
		case !mirroredTo(k, key, s.source, target):
			if err := c.dropCopy(ctx, k, key, target); errors.Is(err, errDeleteHeld) {
				c.markBehind(key, target.Name())
			} else if err != nil {
				s.errs = append(s.errs, err)
			} else {
				s.compared = append(s.compared, target.Name())
			}
		default:
			targets = append(targets, target)
		}
	}
	return targets
}

// holdFirstCopy holds the source's original of a cluster's object before its first copy is written
// (holdBeforeCopies: the finalizer and has-copies of the hubs about to get a copy, or holding one; a hub holding
// a foreign object of that name gets none). It reports false when the copies must wait: the hold failed or was
// refused because the source's cache is behind.
func (s *objectSync) holdFirstCopy(ctx context.Context, targets []*hubconn.Hub) bool {
	c, k, key := s.c, s.k, s.key
	if s.src == nil || !firstCopy(k, key, targets) || !perCluster(k, key, c.isCluster) {
		return true
	}
	names := make([]string, 0, len(targets))
	for _, t := range targets {
		if obj, _ := t.Peek(k.Name, key.Namespace, key.Name); obj == nil || mirror.IsCopyOn(k, obj) {
			names = append(names, t.Name())
		}
	}
	held, err := c.holdBeforeCopies(ctx, s.source, k, key, s.src, names)
	if err != nil {
		s.errs = append(s.errs, err)
	}
	if err != nil || held == nil {
		return false
	}
	s.src = held
	return true
}

// writeTargets brings every target in step at once (syncTarget; a key costs one round trip, not one per
// standby) and records the outcome: the targets holding a copy, those compared, and those left behind. A copy
// still going, a delete the brake holds or a hub whose restore is not known yet (errRestoreUnknown) or a claimed ManagedCluster (errClaimHeld) is no failure: the copy's delete event, or the brake's release, syncs
// the key again. A write refused for a cache that lags (409, 404, already exists) is retried at once; any other
// failure leaves the hub behind until the retry goes through.
func (s *objectSync) writeTargets(ctx context.Context, targets []*hubconn.Hub) {
	c, key := s.c, s.key
	type targetResult struct {
		holds bool
		err   error
	}
	results := make([]targetResult, len(targets))
	var wg sync.WaitGroup
	for i, target := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !s.restoreKnown(target) {
				// The target may be restored from a backup taken while it was the cluster's source, and hold
				// writes its users made there since, to be written back first: nothing is written there until
				// that is known (syncIncarnation syncs every key again then), its ManagedCluster included, which
				// tells.
				results[i] = targetResult{err: errRestoreUnknown}
				return
			}
			holds, err := c.syncTarget(ctx, s.k, key, s.source, target, s.src, s.extra, s.seen, s.hasSeen)
			results[i] = targetResult{holds: holds, err: err}
		}()
	}
	wg.Wait()
	for i, target := range targets {
		if results[i].holds {
			s.holding = append(s.holding, target.Name())
		}
		if errors.Is(results[i].err, errRestoreUnknown) {
			// Synced again when the hub's marker is read; and after an interval, in case whether it was restored
			// becomes known otherwise (another hub's marker given up on, or left unread when that hub went away).
			c.queue.AddAfter(key, c.opts.IncarnationInterval)
		}
		if errors.Is(results[i].err, errCopyGoing) || errors.Is(results[i].err, errDeleteHeld) || errors.Is(results[i].err, errRestoreUnknown) ||
			errors.Is(results[i].err, errClaimHeld) {
			c.markBehind(key, target.Name())
			continue
		}
		if err := results[i].err; err != nil {
			s.errs = append(s.errs, err)
			if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) && !apierrors.IsNotFound(err) {
				c.markBehind(key, target.Name())
			}
			continue
		}
		s.compared = append(s.compared, target.Name())
	}
}

// finish does what follows the writes: the fence marks of a ManagedCluster's namespace on every hub; has-copies
// (and the hold) on a cluster's object, so that a delete on a hub holding a copy, once the cluster is on it,
// reaches it also if the source is down then; the release of the source's held delete once every copy is gone;
// the tombstone of a delete seen here; the key's step on the hubs compared; and, after that (the key no longer
// counts as waiting there), for a ManagedCluster its tombstoned objects queued, its in-step report and the end
// of a finished write-back.
func (s *objectSync) finish(ctx context.Context) {
	c, k, key, src, source := s.c, s.k, s.key, s.src, s.source
	live := src != nil && src.GetDeletionTimestamp() == nil
	if k.Name == failoverv1alpha1.KindManagedCluster && live {
		dir, _ := c.directions.source(key.Name)
		if c.opts.Fencing && dir.Hub == source.Name() {
			if err := c.syncFenceMarks(ctx, key.Name, dir.Hub, dir.Since); err != nil {
				s.errs = append(s.errs, err)
			}
		}
	}
	if perCluster(k, key, c.isCluster) && live {
		if err := c.markCopies(ctx, source, k, key, src, s.holding); err != nil {
			s.errs = append(s.errs, err)
		}
	}
	// The tombstone comes first: a delete released while a hub is not ready is recorded before the hold lets go,
	// so that no restart, relist or engine restart in between can forget it. A tombstone the apiserver refuses
	// for good (the ManagedCluster's annotations at their size limit: 422, 413) holds nothing up: the logs of
	// deletes made cover that delete.
	tombstoneErr := c.keepTombstone(ctx, k, key, source, src, s.compared)
	if tombstoneErr != nil {
		s.errs = append(s.errs, tombstoneErr)
	}
	refusedForGood := apierrors.IsInvalid(tombstoneErr) || apierrors.IsRequestEntityTooLargeError(tombstoneErr)
	if mirror.HoldsDelete(src) && c.copiesGone(k, key, source) && (tombstoneErr == nil || refusedForGood) {
		// The delete is logged on every hub before it goes from the source: a hub restored from an older backup
		// learns of it there. Until it is, the key waits for the log's write, which syncs it again.
		logged, err := c.recordDeleteMade(ctx, k, key, src)
		if err != nil {
			s.errs = append(s.errs, fmt.Errorf("%s: %w", key, err))
		}
		if logged {
			if err := c.release(ctx, source, k, key, src, mirror.ReleasePatch(src)); err != nil {
				s.errs = append(s.errs, err)
			}
		}
	}
	c.clearDirty(key, s.compared)
	if k.Name == failoverv1alpha1.KindManagedCluster && live {
		c.syncTombstoned(key.Name, src)
		if err := c.publishSteps(ctx, key.Name, source, src); err != nil {
			s.errs = append(s.errs, err)
		}
		if err := c.finishWriteBack(ctx, key.Name, source, src); err != nil {
			s.errs = append(s.errs, err)
		}
	}
}

// writeBack writes on the source what from's hub, one the cluster moved from (writeBackHubs), wrote and never
// replicated (mirror.DecideWriteBack), while it is ready, the identity check saw it ready (checked) and whether it
// was restored from a backup is known (restoreKnown; until then failedHub names it, with errRestoreUnknown). From a hub
// restored from a backup (from.restored), an object the source lacks is made there only when the hub wrote it
// after from.after (claim: its users made it since the restore): one the backup holds may have been deleted
// since. wrote reports a write, or a write refused because the source's cache is behind (conflict, not
// found): the source's watch event syncs the key again. A create refused because the source holds an object
// of that name its cache does not show is no write: the key is compared as usual. On another error,
// failedHub names the old hub, which the caller leaves untouched for this sync.
func (c *Controller) writeBack(ctx context.Context, k mirror.Kind, key Key, source *hubconn.Hub, src *unstructured.Unstructured,
	checked, restoreKnown func(*hubconn.Hub) bool, from writeBackFrom) (wrote bool, failedHub string, err error) {
	cluster, ok := k.ClusterOf(key.Namespace, key.Name, c.isCluster)
	if !ok || k.Name == failoverv1alpha1.KindManagedCluster {
		return false, "", nil
	}
	old := c.byName[from.hub]
	if old == nil || !old.Ready() || !old.Serves(k.Name) {
		return false, "", nil
	}
	if !checked(old) {
		// Ready since the identity check: left untouched (its held deletes stay held) until it is checked.
		return false, old.Name(), nil
	}
	if !restoreKnown(old) {
		// Whether the hub was restored from a backup decides which of its objects are its users' writes (rule 3
		// of mirror.DecideWriteBack): it is left untouched, and behind, and the key waits (errRestoreUnknown),
		// until that is known. syncIncarnation syncs every key again then; the key is also synced again after an
		// interval, in case it becomes known otherwise (the replicator's warm-up over, or another hub's marker no
		// longer waited for).
		c.markBehind(key, old.Name())
		c.queue.AddAfter(key, c.opts.IncarnationInterval)
		return false, old.Name(), errRestoreUnknown
	}
	// A copy on the old hub (cached without its mirrored fields) is written back only when it was the cluster's
	// object there (mirror.HeldAsSource): for any other, Peek holds what the rules read.
	oldObj, _ := old.Peek(k.Name, key.Namespace, key.Name)
	if oldObj != nil && old.DeleteSent(k.Name, key.Namespace, key.Name, oldObj.GetUID()) {
		// The replicator deleted it there (a delete seen on the source reached it), and the old hub's cache does
		// not show that yet; by then the source may have dropped its record of the delete. Its delete event
		// syncs the key again.
		return false, "", nil
	}
	if oldObj != nil && mirror.IsCopy(oldObj) && mirror.HeldAsSource(oldObj) && oldObj.GetDeletionTimestamp() == nil {
		whole, err := old.Get(ctx, k.Name, key.Namespace, key.Name)
		if errors.Is(err, hubconn.ErrCacheBehind) {
			// Written or deleted there since the cache's version: its watch event syncs the key again.
			return false, old.Name(), nil
		}
		if err != nil {
			return false, old.Name(), fmt.Errorf("%s: reading hub %s's object, held there while the cluster was on it, to write it back: %w", key, old.Name(), err)
		}
		oldObj = whole
	}
	if hub, _, known := c.deleteMadeOf(ctx, k, key, oldObj, old.Name()); !known {
		return false, old.Name(), fmt.Errorf("%s: a hub's log of deletes made could not be read: nothing written back from hub %s", key, old.Name())
	} else if hub != "" {
		// What the old hub holds again of a delete another hub logged (it was restored from a backup taken
		// before) is no change made there: syncTarget deletes it there.
		return false, "", nil
	}
	var deleted *mirror.Deleted
	if src == nil {
		deleted = source.Deleted(k.Name, key.Namespace, key.Name)
	}
	var restoredAfter *time.Time
	if from.restored {
		restoredAfter = &from.after
	}
	d := mirror.DecideWriteBack(k, src, oldObj, source.Name(), old.Name(), old.LastWrite(k.Name, key.Namespace, key.Name), deleted, restoredAfter)
	c.logger.V(4).Info("Decided write-back", "object", key.String(), "from", old.Name(), "source", source.Name(), "action", d.Action,
		"sourceHolds", src != nil, "deleteSeen", deleted)
	if d.Action != mirror.ActionDelete {
		// A delete of the source's object the brake held is no longer asked for.
		c.brake.Forget(source.Name(), key)
	}
	switch d.Action {
	case mirror.ActionNone:
		if d.Conflict == mirror.ConflictCopyModified {
			// A delete on the old hub met a change of the source's copy (rule 2): that change is kept, and the
			// delete is let go of (releaseOthers) without reaching it.
			c.opts.Recorder.Warningf(ReasonDeleteNotWrittenBack, "%s: deleted on hub %s, which cluster %s moved from, and changed on hub %s, its source, "+
				"since it was copied there: the change is kept, the delete is not written back", key, old.Name(), cluster, source.Name())
		}
		return false, "", nil
	case mirror.ActionCreate:
		err = c.create(ctx, source, k, d.Object)
	case mirror.ActionUpdate:
		err = c.update(ctx, source, k, d.Object)
	case mirror.ActionDelete:
		if err = c.admitDelete(source.Name(), key); err == nil {
			err = c.delete(ctx, source, k, src)
		}
	}
	switch {
	case errors.Is(err, errDeleteHeld):
		// The old hub keeps its object as it is (the evidence, its delete held there) until the brake of the
		// source is released, which syncs the key again.
		return false, old.Name(), nil
	case apierrors.IsAlreadyExists(err):
		c.logger.V(2).Info("Source holds an object its cache does not show: not written back", "object", key.String(), "hub", source.Name())
		return false, "", nil
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		c.logger.V(4).Info("Source object changed before the write-back", "object", key.String(), "hub", source.Name())
		return true, "", nil
	}
	source.ReportError(err)
	if err != nil {
		metrics.WriteErrors.WithLabelValues(string(k.Name), source.Name()).Inc()
		return false, old.Name(), fmt.Errorf("writing back the %s made on hub %s to source hub %s: %w", strings.ToLower(string(d.Action)), old.Name(), source.Name(), err)
	}
	metrics.WritesBack.WithLabelValues(string(k.Name), source.Name(), string(d.Action)).Inc()
	c.logger.Info("Wrote back a change made on the hub the cluster moved from", "object", key.String(), "action", d.Action,
		"from", old.Name(), "source", source.Name(), "cluster", cluster)
	which := fmt.Sprintf("which cluster %s moved from", cluster)
	if from.restored {
		which = fmt.Sprintf("restored from a backup taken while it was cluster %s's source, its fence marks gone with the restore", cluster)
	}
	c.opts.Recorder.Eventf(ReasonWrittenBack, "%s: the %s made on hub %s, %s, never reached hub %s: written there",
		key, strings.ToLower(string(d.Action)), old.Name(), which, source.Name())
	return true, "", nil
}

// writeBackFrom is a hub whose writes a cluster's objects take on their source before anything else (writeBack).
type writeBackFrom struct {
	hub string
	// restored: the hub was found restored from a backup, and claimed the cluster (claim); after is the claim's.
	restored bool
	after    time.Time
}

// writeBackHubs returns, in order, the hubs whose writes cluster's objects take on source before anything else:
// the hub the cluster moved from while the source's ManagedCluster names it (mirror.MovedFrom, as c.directions last
// read it), then every other hub found restored from a backup taken while it was the cluster's source, until it is
// reconciled (incarnations.claimants). A hub the cluster moved from that was also found restored is written back
// from as a restored one (writeBackFrom.restored): its backup holds objects deleted since, which are not its
// users' writes.
func (c *Controller) writeBackHubs(cluster string, source *hubconn.Hub) []writeBackFrom {
	prev := c.directions.movedFromOf(cluster)
	claimants := c.incarnations.claimants(cluster, source.Name())
	var out []writeBackFrom
	if prev != "" && prev != source.Name() {
		from := writeBackFrom{hub: prev}
		if i := slices.IndexFunc(claimants, func(cl writeBackFrom) bool { return cl.hub == prev }); i >= 0 {
			from = claimants[i]
		}
		out = append(out, from)
	}
	for _, from := range claimants {
		if from.hub != prev {
			out = append(out, from)
		}
	}
	return out
}

// releaseOthers lets go of the deletes that mirror.FinalizerDeleteCopies holds on hubs other than source
// (except those of skip; every hub when source is nil: the key's cluster is not replicated): writeBack did not write one
// back now, so none of them is written back from this state (the hub is not the one the cluster moved from, or
// the source's object is not the copy it held). With a source, an object being deleted on a hub the cluster has
// left (agentLeft) also goes without that hub's finalizers (mirror.CopyFinalizers, as a copy deleted there),
// whether it is held or not: OCM's work agent, which alone removes its cleanup finalizer, is connected to the
// source now (where the delete was written back, or the object is the user's to keep), and an add-on's
// pre-delete hook runs from there; left, the object would stay Terminating for good. While an agent is still
// seen renewing its lease on such a hub, only the hold is let go, and the key is synced again once that lease
// would be stale. A hub not known (known, restoreKnown) not to be restored from a backup is left until it is: a
// delete held there may be a user's since the restore, which writeBack writes back.
func (c *Controller) releaseOthers(ctx context.Context, k mirror.Kind, key Key, source *hubconn.Hub, skip sets.Set[string], known func(*hubconn.Hub) bool) error {
	cluster, perCluster := k.ClusterOf(key.Namespace, key.Name, c.isCluster)
	var errs []error
	for _, h := range c.opts.Hubs {
		if h == source || skip.Has(h.Name()) || !h.Ready() || !h.Serves(k.Name) || !known(h) {
			continue
		}
		obj, _ := h.Peek(k.Name, key.Namespace, key.Name)
		if obj == nil || obj.GetDeletionTimestamp() == nil {
			continue
		}
		patch := mirror.ReleasePatch(obj)
		if source != nil && perCluster && k.Name != failoverv1alpha1.KindManagedCluster {
			if withHubs := mirror.CopyFinalizersPatch(k, obj); withHubs != nil {
				if left, after := c.agentLeft(h, cluster); left {
					patch = withHubs
				} else {
					c.queue.AddAfter(key, after)
				}
			}
		}
		if patch == nil {
			continue
		}
		if err := c.release(ctx, h, k, key, obj, patch); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// agentLeft reports whether no agent was seen renewing cluster's lease on hub h (on the replicator's clock, since
// it started) within direction.FreshnessFactor lease durations: OCM's work agent, which shares the registration
// agent's hub kubeconfig, is not connected to h then. When one was, it also returns how long until that
// renewal is that old.
func (c *Controller) agentLeft(h *hubconn.Hub, cluster string) (bool, time.Duration) {
	seen := c.directions.renewSeenAt(h.Name(), cluster)
	if seen.IsZero() {
		return true, 0
	}
	duration := direction.DefaultLeaseDuration
	if mc, ok := h.Cluster(cluster); ok && mc.LeaseDuration > 0 {
		duration = mc.LeaseDuration
	}
	stale := seen.Add(direction.FreshnessFactor * duration)
	now := c.opts.Clock.Now()
	if now.After(stale) {
		return true, 0
	}
	return false, stale.Sub(now) + time.Second
}

// copiesGone reports whether every ready hub but source that serves kind k holds no copy of key that is not
// being deleted: the delete of the source's original has reached every hub the replicator can write. A hub that
// is not ready holds nothing up (a delete never waits on a standby): the caller logs the delete on every ready
// hub, the source included, before it lets go (recordDeleteMade), and a copy found on a hub when it is back is
// deleted by that log (syncTarget: deleteMadeOf), also after a restart of the replicator, which forgets
// hubconn.Hub.Deleted.
func (c *Controller) copiesGone(k mirror.Kind, key Key, source *hubconn.Hub) bool {
	for _, h := range c.opts.Hubs {
		if h == source || !h.Ready() || !h.Serves(k.Name) {
			continue
		}
		if !mirroredTo(k, key, source, h) {
			// The replicator neither writes nor deletes a copy there: that hub's add-on manager does.
			continue
		}
		if obj, _ := h.Peek(k.Name, key.Namespace, key.Name); mirror.IsCopyOn(k, obj) && obj.GetDeletionTimestamp() == nil {
			return false
		}
	}
	return true
}

// mirroredTo reports whether key's object of kind k is mirrored from source to target, a ready hub serving k:
// always, except a ManagedClusterAddOn on a hub whose ClusterManagementAddOn of that name installs it by
// strategy (hubconn.Hub.AddOnInstall), or that holds no ClusterManagementAddOn of that name while the source's
// installs it by strategy (its copy of that ClusterManagementAddOn is on its way). That hub's add-on manager
// makes the add-on in the namespaces of the clusters its install Placements decide and deletes it everywhere
// else, a copy included: a copy there would be deleted and written again in a loop. The replicator writes no
// copy there, deletes only its own earlier copy (dropCopy), and waits for none before it releases a delete.
func mirroredTo(k mirror.Kind, key Key, source, target *hubconn.Hub) bool {
	if k.Name != failoverv1alpha1.KindManagedClusterAddOn {
		return true
	}
	if installs, known := target.AddOnInstall(key.Name); known {
		return !installs
	}
	installs, _ := source.AddOnInstall(key.Name)
	return !installs
}

// dropStaleCopies deletes, on the ready hubs other than source, the copies of key's object (mirror.IsCopyOn,
// not being deleted) while the source's object is a generated one (mirror.Excluded): copies an earlier version
// of the replicator made before that kind of generated object was excluded. That hub's own generator makes its
// own; its object of that name is never a copy (mirror.GeneratedHere) and stays. The error joins the deletes'.
func (c *Controller) dropStaleCopies(ctx context.Context, k mirror.Kind, key Key, source *hubconn.Hub) error {
	var errs []error
	for _, h := range c.opts.Hubs {
		if h == source || !h.Ready() || !h.Serves(k.Name) {
			continue
		}
		tgt, _ := h.Peek(k.Name, key.Namespace, key.Name)
		if !mirror.IsCopyOn(k, tgt) || tgt.GetDeletionTimestamp() != nil {
			continue
		}
		c.setCopy(h.Name(), key, false)
		err := c.deleteCopy(ctx, h, k, tgt)
		if errors.Is(err, errDeleteHeld) {
			c.markBehind(key, h.Name())
			continue
		}
		h.ReportError(err)
		if err != nil {
			metrics.WriteErrors.WithLabelValues(string(k.Name), h.Name()).Inc()
			errs = append(errs, fmt.Errorf("deleting on hub %s the copy of %s, generated on each hub now: %w", h.Name(), key, err))
			continue
		}
		metrics.ObjectsMirrored.WithLabelValues(string(k.Name), h.Name(), string(mirror.ActionDelete)).Inc()
	}
	return errors.Join(errs...)
}

// dropCopy leaves key's object on target, a hub mirroredTo excludes, to that hub: it counts neither as a copy
// nor as a conflict, and a copy the replicator wrote there earlier (before that hub's ClusterManagementAddOn
// installed the add-on by strategy, or before the replicator saw that it does) is deleted; that hub's add-on
// manager makes its own where its Placements decide. A copy there being deleted already only loses its hub's
// finalizers (mirror.CopyFinalizers, deleteCopy). The error is the delete's.
func (c *Controller) dropCopy(ctx context.Context, k mirror.Kind, key Key, target *hubconn.Hub) error {
	c.setCopy(target.Name(), key, false)
	c.recordConflict(k, key, target.Name(), mirror.ConflictNone)
	tgt, _ := target.Peek(k.Name, key.Namespace, key.Name)
	if !mirror.IsCopyOn(k, tgt) {
		c.brake.Forget(target.Name(), key)
		return nil
	}
	err := c.deleteCopy(ctx, target, k, tgt)
	if errors.Is(err, errDeleteHeld) {
		return err
	}
	target.ReportError(err)
	if err != nil {
		metrics.WriteErrors.WithLabelValues(string(k.Name), target.Name()).Inc()
		return fmt.Errorf("deleting the copy on hub %s, whose add-on manager installs it: %w", target.Name(), err)
	}
	if tgt.GetDeletionTimestamp() == nil {
		metrics.ObjectsMirrored.WithLabelValues(string(k.Name), target.Name(), string(mirror.ActionDelete)).Inc()
	}
	return nil
}

// release sends patch, which removes mirror.FinalizerDeleteCopies from obj (key's object on hub h; ReleasePatch
// or CopyFinalizersPatch), and lets its delete finish; a nil patch sends nothing. An object gone or changed since
// it was read is no error: its watch event syncs the key again.
func (c *Controller) release(ctx context.Context, h *hubconn.Hub, k mirror.Kind, key Key, obj *unstructured.Unstructured, patch []byte) error {
	if patch == nil {
		return nil
	}
	_, err := h.Client().Resource(k.GVR).Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	h.ReportError(err)
	if err != nil {
		metrics.WriteErrors.WithLabelValues(string(k.Name), h.Name()).Inc()
		return fmt.Errorf("%s: releasing the delete held on hub %s: %w", key, h.Name(), err)
	}
	c.logger.V(2).Info("Delete reached every copy: released", "object", key.String(), "hub", h.Name())
	return nil
}

// finishWriteBack ends the write-back from the hub mirror.MovedFrom names on src (cluster's ManagedCluster on its
// source hub: mirror.MovedFromDonePatch) once that hub has nothing left to write back: it is no longer configured, or it is ready, has taken its
// ManagedCluster over as a copy (or has none), and none of the cluster's objects waits to be compared there.
func (c *Controller) finishWriteBack(ctx context.Context, cluster string, source *hubconn.Hub, src *unstructured.Unstructured) error {
	prev := mirror.MovedFrom(src, source.Name(), c.configured)
	if prev == "" {
		return nil
	}
	if old := c.byName[prev]; old != nil {
		if !old.Ready() || c.pendingFor(prev, cluster) {
			return nil
		}
		if mc, ok := old.Cluster(cluster); ok && !mc.IsCopy {
			return nil
		}
	}
	k := c.kinds[failoverv1alpha1.KindManagedCluster]
	return c.patchSourceOnce(ctx, source, k, Key{Kind: k.Name, Name: cluster}, src, mirror.MovedFromDonePatch(src, prev), "ending the write-back from the hub the cluster moved from")
}

// configured reports whether hub is one of the ReplicationConfig's hubs.
func (c *Controller) configured(hub string) bool {
	_, ok := c.byName[hub]
	return ok
}

// pendingFor reports whether some object of cluster waits to be compared on hub since it became ready, or OnState
// has not handled its becoming ready yet (Controller.listed).
func (c *Controller) pendingFor(hub, cluster string) bool {
	return c.steps.pendingFor(hub, cluster)
}

// goneRecheck is how long syncObject waits before it decides about an object its source's cache no longer shows
// while the last sync saw it, when no delete of it was heard: the informer's handler hears a delete a moment after
// the cache drops the object.
const goneRecheck = 2 * time.Second

// justGone reports whether the last sync of key saw its object on the source (Controller.objects), and forgets
// that: the next sync decides about the absence.
func (c *Controller) justGone(k mirror.Kind, key Key) bool {
	return c.objects.takeOut(key)
}

// firstCopy reports whether one of targets holds no object of key yet: a copy is about to be made there.
func firstCopy(k mirror.Kind, key Key, targets []*hubconn.Hub) bool {
	for _, h := range targets {
		if obj, _ := h.Peek(k.Name, key.Namespace, key.Name); obj == nil {
			return true
		}
	}
	return false
}

// holdWrite names the hold written before a first copy (mirror.HoldPatch, with has-copies) among the source writes that
// patchSourceOnce remembers until the source's cache shows them (withHold).
const holdWrite = "holding the original's delete"

// holdBeforeCopies returns src, a per-cluster object on its source hub, with mirror.FinalizerDeleteCopies and the
// hubs of targets in its has-copies (it writes both in one patch when the finalizer is missing: mirror.HoldPatch),
// or src as it is when it needs no hold. It returns nil and no error when the write was refused because src
// changed or went since it was read: its watch event syncs the key again.
func (c *Controller) holdBeforeCopies(ctx context.Context, source *hubconn.Hub, k mirror.Kind, key Key, src *unstructured.Unstructured,
	targets []string) (*unstructured.Unstructured, error) {
	patch := mirror.HoldPatch(k, src, targets)
	if patch == nil {
		// Held (or held by an earlier write the source's cache does not show yet: withHold).
		return src, nil
	}
	if err := c.patchSourceOnce(ctx, source, k, key, src, patch, holdWrite); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if held := c.withHold(source, key, src); mirror.HoldPatch(k, held, targets) == nil {
		return held, nil
	}
	c.logger.V(4).Info("Source object changed before it was held", "object", key.String(), "hub", source.Name())
	return nil, nil
}

// withHold returns src as its source hub holds it: with what holdBeforeCopies wrote on this very object
// (mirror.FinalizerDeleteCopies and has-copies) when the source's cache does not show it yet, so that no later
// patch writes it again.
func (c *Controller) withHold(source *hubconn.Hub, key Key, src *unstructured.Unstructured) *unstructured.Unstructured {
	if src == nil {
		return src
	}
	memoKey := holdWrite + " " + key.String()
	if slices.Contains(src.GetFinalizers(), mirror.FinalizerDeleteCopies) {
		// The cache shows the hold: nothing to remember any more.
		c.patched.forget(memoKey)
		return src
	}
	prefix := source.Name() + " " + string(src.GetUID()) + " "
	written, ok := strings.CutPrefix(c.patched.get(memoKey), prefix)
	if !ok {
		return src
	}
	var patch struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal([]byte(written), &patch)
	held := src.DeepCopy()
	held.SetFinalizers(append(held.GetFinalizers(), mirror.FinalizerDeleteCopies))
	if len(patch.Metadata.Annotations) > 0 {
		annotations := held.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		maps.Copy(annotations, patch.Metadata.Annotations)
		held.SetAnnotations(annotations)
	}
	return held
}

// markCopies adds the hubs of holding to src's mirror.AnnotationHasCopies (src is a per-cluster object on its
// source hub) when it does not list them yet, and, to an object of a kind that holds deletes with copies (a copy
// included), mirror.FinalizerDeleteCopies (mirror.MarkPatch).
func (c *Controller) markCopies(ctx context.Context, source *hubconn.Hub, k mirror.Kind, key Key, src *unstructured.Unstructured, holding []string) error {
	return c.patchSourceOnce(ctx, source, k, key, src, mirror.MarkPatch(k, src, holding), "marking the original with the hubs holding copies")
}

// patchSourceOnce merge-patches obj (the object of key on its source hub) with patch, what naming the write in
// errors. A nil patch (nothing to change) writes nothing; nor does a patch written already that the source's
// cache does not show yet (remembered per what and key). An object gone, or made again since it was read (a
// UID precondition in patch), is no error: its watch event syncs the key again.
func (c *Controller) patchSourceOnce(ctx context.Context, source *hubconn.Hub, k mirror.Kind, key Key, obj *unstructured.Unstructured,
	patch []byte, what string) error {
	memoKey := what + " " + key.String()
	written := source.Name() + " " + string(obj.GetUID()) + " " + string(patch)
	if patch == nil {
		c.patched.forget(memoKey)
		return nil
	}
	if c.patched.get(memoKey) == written {
		return nil
	}
	_, err := source.Client().Resource(k.GVR).Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		c.logger.V(4).Info("Source object changed before it was patched", "object", key.String(), "hub", source.Name(), "write", what)
		return nil
	}
	source.ReportError(err)
	if err != nil {
		metrics.WriteErrors.WithLabelValues(string(k.Name), source.Name()).Inc()
		return fmt.Errorf("%s on source hub %s: %w", what, source.Name(), err)
	}
	c.patched.set(memoKey, written)
	return nil
}

// notReplicated handles key, whose cluster is not replicated (not selected, or its name stands for several
// spokes): it waits on no hub, no delete is held for it, and for its ManagedCluster no hub is reported in step.
func (c *Controller) notReplicated(ctx context.Context, k mirror.Kind, key Key) error {
	c.forget(key)
	err := c.releaseOthers(ctx, k, key, nil, nil, c.restoreKnown)
	if k.Name == failoverv1alpha1.KindManagedCluster {
		err = errors.Join(err, c.reportUnreplicated(ctx, key.Name))
	}
	return err
}

// perCluster reports whether key, of kind k, belongs to a managed cluster (its source is the cluster's hub).
func perCluster(k mirror.Kind, key Key, isCluster func(string) bool) bool {
	_, ok := k.ClusterOf(key.Namespace, key.Name, isCluster)
	return ok
}

// sourceOutcome says whether a key can be replicated now.
type sourceOutcome int

const (
	// sourceOK: the source hub is ready and serves the kind.
	sourceOK sourceOutcome = iota
	// sourceWait: the source is not known, not ready, or (for hub-wide objects) the first reachable hub is
	// still listing: replicate later.
	sourceWait
	// sourceNone: nothing is replicated for the key (its cluster is not selected).
	sourceNone
)

// sourceOf returns the source hub of key and the extra annotations of its copies, or why there is none. identity
// is the identity check of key's cluster (syncObject's; zero for a hub-wide object): a copy of its ManagedCluster
// records the spoke's identity when one is known. Hub-wide objects come from the first hub in spec order that answers; while that hub is still listing after
// it came back, nothing flows (no other hub becomes the source for that moment).
func (c *Controller) sourceOf(k mirror.Kind, key Key, identity direction.Identity) (*hubconn.Hub, map[string]string, sourceOutcome) {
	cluster, perCluster := k.ClusterOf(key.Namespace, key.Name, c.isCluster)
	if !perCluster {
		for _, h := range c.opts.Hubs {
			state, _, _ := h.State()
			switch {
			case state == hubconn.StateUnreachable:
				continue
			case state == hubconn.StateSyncing:
				return nil, nil, sourceWait
			case h.Serves(k.Name):
				return h, nil, sourceOK
			}
		}
		return nil, nil, sourceWait
	}
	src, _ := c.directions.source(cluster)
	if src.Hub == "" {
		if !c.isCluster(cluster) && !c.anyListing() {
			// No hub, every one listed, knows such a cluster (an object of a cluster-scoped kind in a namespace
			// that is no cluster's, or named after none): nothing to replicate, and nothing for a hub to wait
			// for. syncDirection queues the key again when that cluster's source is found.
			return nil, nil, sourceNone
		}
		return nil, nil, sourceWait
	}
	source := c.byName[src.Hub]
	if source == nil || !source.Serves(k.Name) {
		return nil, nil, sourceWait
	}
	mc, ok := source.Cluster(cluster)
	if !ok {
		// The cluster is gone from its source: only the ManagedCluster itself (its delete) is mirrored.
		if k.Name != failoverv1alpha1.KindManagedCluster {
			return nil, nil, sourceWait
		}
	} else if !c.opts.ClusterSelector.Matches(labels.Set(mc.Labels)) {
		return nil, nil, sourceNone
	}
	var extra map[string]string
	if k.Name == failoverv1alpha1.KindManagedCluster {
		extra = map[string]string{
			mirror.AnnotationClusterHub:      src.Hub,
			mirror.AnnotationClusterHubSince: src.Since.UTC().Format(time.RFC3339),
		}
		if identity.ID != "" {
			extra[mirror.AnnotationClusterID] = identity.ID
		}
	}
	return source, extra, sourceOK
}

// anyListing reports whether some hub is listing (StateSyncing): its caches may not show every cluster yet.
func (c *Controller) anyListing() bool {
	for _, h := range c.opts.Hubs {
		if state, _, _ := h.State(); state == hubconn.StateSyncing {
			return true
		}
	}
	return false
}

// errCopyGoing is syncTarget's answer for a target whose copy is being deleted while the source holds an object
// of that name: the target is not in step, and nothing failed.
var errCopyGoing = errors.New("the copy is being deleted")

// errRestoreUnknown is writeTargets' answer for a target, and Controller.writeBack's for a hub to write back
// from, not known (objectSync.restoreKnown) not to be restored from a backup: nothing is written there, or from
// there, yet.
var errRestoreUnknown = errors.New("whether the hub was restored from a backup is not known yet")

// errClaimHeld is syncTarget's answer for the ManagedCluster of a cluster that a target found restored claims
// (claim): it is written once the target is reconciled, which syncs it again.
var errClaimHeld = errors.New("the hub was restored holding the cluster as its source: its ManagedCluster waits for the hub's reconcile")

// syncTarget applies mirror.Decide for one target hub. holds reports whether the target holds a copy of src
// afterwards (written now, or already there).
func (c *Controller) syncTarget(ctx context.Context, k mirror.Kind, key Key, source, target *hubconn.Hub,
	src *unstructured.Unstructured, extra map[string]string, seen time.Time, hasSeen bool) (holds bool, err error) {
	if k.Name == failoverv1alpha1.KindManagedCluster && c.incarnations.claimed(target.Name(), key.Name) {
		// The claim of the restored target rests on its ManagedCluster (claim): written once it is reconciled.
		return false, errClaimHeld
	}
	tgt, tgtHash := target.Peek(k.Name, key.Namespace, key.Name)
	if tgt != nil && tgt.GetLabels()[mirror.LabelReplicatedFrom] == source.Name() {
		c.incarnations.observe(source.Name(), mirror.SourceIncarnation(tgt))
	}
	var deleted *mirror.Deleted
	if src == nil {
		deleted = source.Deleted(k.Name, key.Namespace, key.Name)
	}
	d := mirror.Decide(k, src, tgt, tgtHash, source.Name(), target.Name(), deleted, extra)
	// A target object may remain of a delete another hub logged (its hub was restored from a backup taken before
	// the delete): named by its own UID, it is deleted, never rewritten into a copy that would keep that UID (a
	// later failover would delete it as that remnant); made from a logged object, it is deleted when the source
	// holds no object of its name or one not made from it (otherwise it is brought in step with the source's).
	loggedOn := ""
	if tgt != nil && tgt.GetDeletionTimestamp() == nil && !mirror.GeneratedHere(k, tgt) {
		hub, own, known := c.deleteMadeOf(ctx, k, key, tgt, target.Name())
		if !known {
			return false, fmt.Errorf("a hub's log of deletes made could not be read: hub %s's object waits", target.Name())
		}
		if hub != "" && (own || d.Conflict == mirror.ConflictSourceMissing || d.Conflict == mirror.ConflictForeignObject) {
			loggedOn, d = hub, mirror.Decision{Action: mirror.ActionDelete}
		}
	}
	c.logger.V(4).Info("Decided", "object", key.String(), "source", source.Name(), "target", target.Name(),
		"action", d.Action, "conflict", d.Conflict, "adopted", d.Adopted)
	c.recordConflict(k, key, target.Name(), d.Conflict)
	if d.Action != mirror.ActionDelete {
		// A delete the brake held is no longer asked for: it is not made at the release.
		c.brake.Forget(target.Name(), key)
	}

	switch d.Action {
	case mirror.ActionNone:
		// A generated object carrying its generator's copy label is no copy (mirror.Decide rule 0).
		isCopy := mirror.IsCopyOn(k, tgt)
		if isCopy && tgt.GetDeletionTimestamp() != nil {
			// A copy being deleted (rule 1) goes without its hub's finalizers (no request without one).
			if err := c.deleteCopy(ctx, target, k, tgt); err != nil {
				target.ReportError(err)
				metrics.WriteErrors.WithLabelValues(string(k.Name), target.Name()).Inc()
				return false, fmt.Errorf("finishing the delete of the copy on hub %s: %w", target.Name(), err)
			}
			if src != nil && src.GetDeletionTimestamp() == nil {
				// The source holds an object of that name (made again since): this hub holds no copy of it
				// until the old one is gone and the new one written, which its delete event brings about.
				c.setCopy(target.Name(), key, false)
				return false, errCopyGoing
			}
		}
		c.setCopy(target.Name(), key, isCopy && d.Conflict == mirror.ConflictNone)
		if isCopy && tgt.GetLabels()[mirror.LabelReplicatedFrom] == source.Name() {
			if err := c.restampIncarnation(ctx, source, target, k, tgt, src != nil && d.Conflict == mirror.ConflictNone); err != nil {
				return isCopy, err
			}
		}
		return isCopy, nil
	case mirror.ActionCreate, mirror.ActionUpdate:
		incarnation := c.incarnationFor(ctx, source)
		obj := mirror.WithSourceIncarnation(mirror.WithSourceWrittenAt(d.Object, source.LastWrite(k.Name, key.Namespace, key.Name)), incarnation)
		if d.Action == mirror.ActionCreate {
			err = c.create(ctx, target, k, obj)
		} else {
			err = c.update(ctx, target, k, obj)
		}
	case mirror.ActionDelete:
		err = c.deleteCopy(ctx, target, k, tgt)
		if errors.Is(err, errDeleteHeld) {
			return false, err
		}
	}
	target.ReportError(err)
	if err != nil {
		metrics.WriteErrors.WithLabelValues(string(k.Name), target.Name()).Inc()
		return false, fmt.Errorf("%s on hub %s: %w", d.Action, target.Name(), err)
	}
	metrics.ObjectsMirrored.WithLabelValues(string(k.Name), target.Name(), string(d.Action)).Inc()
	// The target holds a copy of the source's object now: its cache needs it without content only.
	target.ForgetWhole(k.Name, key.Namespace, key.Name)
	if hasSeen {
		metrics.ReplicationLag.WithLabelValues(string(k.Name), target.Name()).Observe(c.opts.Clock.Since(seen).Seconds())
	}
	c.setCopy(target.Name(), key, d.Action != mirror.ActionDelete)
	if loggedOn != "" {
		c.opts.Recorder.Eventf(ReasonDeleteProven, "%s: the object on hub %s was deleted, as hub %s's log of deletes made (%s/%s) or its ManagedCluster's tombstones record (its hub was down then, or restored from a backup taken before): deleted again",
			key, target.Name(), loggedOn, c.opts.MarkerNamespace, DeleteLog)
	}
	if d.Adopted {
		c.logger.Info("Took over the original of a copy", "hub", target.Name(), "object", key.String(), "source", source.Name())
	}
	return d.Action != mirror.ActionDelete, nil
}

// restampIncarnation corrects the incarnation of source that tgt, target's copy made from it, records, when the
// source's marker was read since it became ready. A copy in step with the source's object (inStep) records what
// the source shows when it records none (it was written before the marker was read) or a later incarnation of
// the same marker (the source was restored, and holds the object: kept, that mark would make the object again on
// the source after a delete there that the replicator no longer remembers, mirror.DecideRecreate). A copy whose
// source object is missing, and that records an incarnation the source has reached, loses it: the object was
// deleted unseen (or lost earlier), and no later restore must take that copy for proof of a loss. A source that
// shows no incarnation yet, for an in-step copy that records none, gets its first one (incarnationFor). One merge
// patch on the copy's UID; none when the record is right.
func (c *Controller) restampIncarnation(ctx context.Context, source, target *hubconn.Hub, k mirror.Kind, tgt *unstructured.Unstructured, inStep bool) error {
	shown, read := c.incarnations.of(source.Name())
	recorded := mirror.SourceIncarnation(tgt)
	if read && !shown.Known() && inStep && !recorded.Known() {
		// The source shows no incarnation yet (its copies were written while no counter could advance, and
		// nothing was copied from it since): its first one is made now (which compares every key again), not at
		// its next change.
		shown = c.incarnationFor(ctx, source)
	}
	if !read || !shown.Known() {
		return nil
	}
	var value any
	switch {
	case inStep && (!recorded.Known() || shown.Before(recorded)):
		value = shown.String()
	case !inStep && recorded.Known() && !shown.Before(recorded) && recorded.UID == shown.UID:
		if src, _ := source.Peek(k.Name, tgt.GetNamespace(), tgt.GetName()); src != nil {
			return nil // the source holds it: not a missing object
		}
		value = nil
	default:
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": string(tgt.GetUID()), "annotations": map[string]any{mirror.AnnotationSourceIncarnation: value}}})
	_, err := target.Client().Resource(k.GVR).Namespace(tgt.GetNamespace()).Patch(ctx, tgt.GetName(), types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	target.ReportError(err)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		metrics.WriteErrors.WithLabelValues(string(k.Name), target.Name()).Inc()
		return fmt.Errorf("recording incarnation %s of hub %s on the copy on hub %s: %w", shown, source.Name(), target.Name(), err)
	}
	return nil
}

// syncTombstoned queues the objects whose tombstones mc, the source's ManagedCluster of cluster, carries
// (mirror.AnnotationDeletesSeen): keepTombstone removes a tombstone only in a sync of its object's key, and an
// object gone from every hub (its last copies deleted while the replicator was stopped) brings no watch event that
// would sync it. A tombstone of a kind not mirrored, or of one keepTombstone records none of, is left alone.
func (c *Controller) syncTombstoned(cluster string, mc *unstructured.Unstructured) {
	for tombstone := range mirror.ParseTombstones(mc.GetAnnotations()[mirror.AnnotationDeletesSeen]) {
		kind, name, _ := strings.Cut(tombstone, "/")
		if k, ok := c.kinds[failoverv1alpha1.ReplicatedKind(kind)]; ok && mirror.HoldsDeletes(k) {
			c.queue.Add(Key{Kind: k.Name, Namespace: cluster, Name: name})
		}
	}
}

// keepTombstone records on the source's ManagedCluster of key's cluster (mirror.AnnotationDeletesSeen) the delete
// seen there of key's object, a kind that holds deletes (ManifestWork, ManagedClusterAddOn) in the cluster's
// namespace, while that delete has not reached every hub (one of them is not ready, or was not compared in this
// sync: compared names the hubs that were), and removes it once it has, or once the name holds an object again.
// The delete of a copy (one with a source UID: the source's object after a move, deleted before the
// replicator's hold reached it) is recorded, and so is that of an original, whose hold lets go without waiting
// for a hub that is not ready (copiesGone): the record is what tells the delete apart, after a restart of the
// replicator, from a copy the source lost (mirror.DecideWriteBack and Decide read it through
// hubconn.Hub.Deleted), for as long as the hub is away, where the logs of deletes made keep only the last
// mirror.MaxDeletesMade of every cluster; and, on a hub the cluster moves to first, deleteMadeOf reads it. While
// the object is still being deleted (its deletionTimestamp set; not one the replicator deletes again,
// mirror.AnnotationDeletedAgain), it is recorded when a hub is not ready — before finish releases the hold —
// since its delete then goes without that hub, and no memory of the delete event is needed: a restart, a relist
// or an engine restart before the event cannot lose it. A delete that reaches every hub in the sync that sees
// it costs no write. The error is the patch's; a 409 (the ManagedCluster changed meanwhile) is retried with the
// key and counts as no hub error.
func (c *Controller) keepTombstone(ctx context.Context, k mirror.Kind, key Key, source *hubconn.Hub, src *unstructured.Unstructured, compared []string) error {
	if !mirror.HoldsDeletes(k) || key.Namespace == "" || !c.isCluster(key.Namespace) {
		return nil
	}
	// The record and the resourceVersion the patch is conditioned on come from one read.
	mc, _ := source.Peek(failoverv1alpha1.KindManagedCluster, "", key.Namespace)
	if mc == nil {
		return nil
	}
	tombstones := mirror.ParseTombstones(mc.GetAnnotations()[mirror.AnnotationDeletesSeen])
	tombstone := mirror.TombstoneKey(k.Name, key.Name)
	recorded, isRecorded := tombstones[tombstone]
	var deleted *mirror.Deleted
	// reached: every other hub is ready and was compared in this sync (or does not serve the kind).
	reached, allReady := true, true
	for _, h := range c.opts.Hubs {
		if h == source {
			continue
		}
		allReady = allReady && h.Ready()
		if !h.Ready() || h.Serves(k.Name) && !slices.Contains(compared, h.Name()) {
			reached = false
		}
	}
	switch {
	case src == nil:
		deleted = source.Deleted(k.Name, key.Namespace, key.Name)
	case src.GetDeletionTimestamp() != nil && !allReady && src.GetAnnotations()[mirror.AnnotationDeletedAgain] == "":
		// Being deleted while a hub is away (so not reached): its copy there goes when the hub is back, by this
		// record.
		d := mirror.DeletedOf(src)
		deleted = &d
	}
	want := deleted != nil && !reached
	if want == isRecorded && (!want || recorded == *deleted) {
		return nil
	}
	if want {
		tombstones[tombstone] = *deleted
	} else {
		delete(tombstones, tombstone)
	}
	patch := mirror.TombstonesPatch(mc, tombstones)
	if patch == nil {
		return nil
	}
	mcKind, _ := mirror.KindByName(failoverv1alpha1.KindManagedCluster)
	_, err := source.Client().Resource(mcKind.GVR).Patch(ctx, key.Namespace, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
	if apierrors.IsConflict(err) {
		return fmt.Errorf("%s: the ManagedCluster on hub %s changed before the tombstone was recorded, trying again: %w", key, source.Name(), err)
	}
	source.ReportError(err)
	if err != nil {
		metrics.WriteErrors.WithLabelValues(string(failoverv1alpha1.KindManagedCluster), source.Name()).Inc()
		return fmt.Errorf("%s: recording on hub %s the tombstone of the delete seen there: %w", key, source.Name(), err)
	}
	c.logger.V(2).Info("Tombstone of a delete seen on the source", "object", key.String(), "hub", source.Name(), "recorded", want)
	return nil
}
