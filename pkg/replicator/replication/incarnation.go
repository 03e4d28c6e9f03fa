package replication

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/retry"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/metrics"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// keyIncarnation is the Kind of the queue key (Name: a hub) that reads a hub's incarnation marker
// (syncIncarnation).
const keyIncarnation = "Incarnation"

// IncarnationMarker is the name of the ConfigMap, in Options.MarkerNamespace on every hub, that holds the hub's
// incarnation: its data key named after the hub holds the hub's counter (a decimal number), which the replicator
// advances before it copies from the hub when Options.IncarnationInterval passed since it last did, and after it
// marked namespaces there as a standby's (markWritten); the other keys hold the highest counter of each other hub
// the replicator knew then ("<marker uid>/<counter>"), and a standby's counter advanced after its marks is written
// into the other hubs' markers at once (recordOnOthers). The
// incarnation is the marker's UID and that counter (mirror.Incarnation): a hub restored from a backup shows the
// same marker at an older counter; a marker made anew (the hub rebuilt, the replicator uninstalled) has another
// UID.
const IncarnationMarker = "klusterlet-failover-incarnations"

// DefaultMarkerNamespace is the default Options.MarkerNamespace: the namespace manifests/replicator/hub makes
// on every hub.
const DefaultMarkerNamespace = "open-cluster-management-replicator"

// incarnationWarmUp is how many incarnation intervals after its start the controller waits for a hub that is
// not ready before it advances the others' counters without its marker read (that marker may record a higher
// counter of a hub restored while the replicator was away).
const incarnationWarmUp = 5

var configMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// incarnations is what the replicator knows of the hubs' incarnations; its own lock. A hub's marker is read by
// syncIncarnation and written by advance, one at a time per hub (lock); a read or write begun before the hub
// left Ready (forget) is not stored.
type incarnations struct {
	mu sync.Mutex
	// shown: hub → the incarnation its marker showed at the last read or write since it became ready (the
	// zero value: no marker); absent: not read since.
	shown map[string]mirror.Incarnation
	// recorded: hub → marker UID → the highest counter of that marker seen anywhere: in a hub's marker, on a
	// copy (observe), or written.
	recorded map[string]map[string]int64
	// restored: hub → the keys not yet synced with every hub ready since the hub was found restored: its
	// counter is not advanced until they are (a copy of an object it lost must stay of a later incarnation).
	restored map[string]sets.Set[Key]
	// claims: restored hub → what it claimed when it was found restored (claimedBy), until it is reconciled.
	claims map[string]claim
	// advanced: hub → when (the controller's clock) its counter was last advanced.
	advanced map[string]time.Time
	// found counts the hubs found restored since the controller started (restoresFound).
	found uint64
	// marked: the hubs whose namespaces syncFenceMarks marked as a standby's since syncIncarnation last took the
	// mark up: it advances the hub's counter after the marks, so that a backup taken before them (while the hub
	// was the source of those clusters, unmarked) shows a lower counter once restored, and the restore is found.
	marked sets.Set[string]
	// read: the hubs whose marker was read since the controller started; started, when it started.
	read    sets.Set[string]
	started time.Time
	// readyRun: hub → a number forget raises: a read or write begun before is not stored.
	readyRun map[string]uint64
	// locks: hub → the lock of its marker's reads and writes.
	locks map[string]*sync.Mutex
}

func newIncarnations(hubs []string, started time.Time) *incarnations {
	in := &incarnations{shown: map[string]mirror.Incarnation{}, recorded: map[string]map[string]int64{},
		restored: map[string]sets.Set[Key]{}, claims: map[string]claim{}, marked: sets.New[string](), advanced: map[string]time.Time{}, read: sets.New[string](), started: started,
		readyRun: map[string]uint64{}, locks: map[string]*sync.Mutex{}}
	for _, h := range hubs {
		in.recorded[h] = map[string]int64{}
		in.locks[h] = &sync.Mutex{}
	}
	return in
}

// of returns the incarnation hub shows, and whether its marker was read since it became ready.
func (in *incarnations) of(hub string) (mirror.Incarnation, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	i, ok := in.shown[hub]
	return i, ok
}

// forget drops what hub showed: it is read again when the hub is ready again (it may be restored meanwhile).
func (in *incarnations) forget(hub string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.shown, hub)
	in.readyRun[hub]++
}

// observe records i, the incarnation of hub that a copy made from it records.
func (in *incarnations) observe(hub string, i mirror.Incarnation) {
	if !i.Known() {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if rec := in.recorded[hub]; rec != nil && i.N > rec[i.UID] {
		rec[i.UID] = i.N
	}
}

// reconciled records that key was synced with every hub ready, nothing left to make again from it.
func (in *incarnations) reconciled(key Key) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, pending := range in.restored {
		pending.Delete(key)
	}
}

// behindLocked reports whether hub shows an earlier counter of its marker than was recorded: it was restored.
func (in *incarnations) behindLocked(hub string) bool {
	shown, ok := in.shown[hub]
	return ok && shown.Known() && shown.N < in.recorded[hub][shown.UID]
}

// mayAdvanceLocked reports whether no hub's marker is still to be read before a counter is advanced: every
// hub's was read since the start, or, for one that is not ready, incarnationWarmUp intervals passed.
func (c *Controller) mayAdvanceLocked(in *incarnations) bool {
	warm := c.opts.Clock.Since(in.started) >= incarnationWarmUp*c.opts.IncarnationInterval
	for _, h := range c.opts.Hubs {
		if !in.read.Has(h.Name()) && (h.Ready() || !warm) {
			return false
		}
	}
	return true
}

// syncIncarnation reads hub's incarnation marker and records what it holds. A hub whose counter is below the
// one recorded for its marker (in another hub's marker, on a copy, or by this controller) was restored from a
// backup: event HubRestored, every key is synced again, and what it lost is made again there from copies of a
// later incarnation (mirror.DecideRecreate); its counter is advanced once every key known then was synced with
// every hub ready (reconciled), so that those copies stay of a later incarnation until they were used. It runs
// again after Options.IncarnationInterval. A hub not ready is left: OnState queues it when it is. It also
// advances the counter of a hub marked as a standby since its last read (incarnations.marked), once every
// configured hub's marker was read (a marker not read may record that hub's restore), and records the new counter
// on the other hubs' markers (recordOnOthers); otherwise a hub's counter is advanced when the replicator copies
// from it (incarnationFor).
func (c *Controller) syncIncarnation(ctx context.Context, hub string) error {
	h := c.byName[hub]
	if h == nil || !h.Ready() {
		return nil
	}
	// An advance after fence marks is recorded on the other hubs' markers once this hub's lock is released:
	// recordOnOthers takes theirs, and a worker syncing one of them may hold it while it waits for this one.
	var advancedAfterMarks mirror.Incarnation
	defer func() {
		if advancedAfterMarks.Known() {
			c.recordOnOthers(ctx, hub, advancedAfterMarks)
		}
	}()
	in := c.incarnations
	lock := in.locks[hub]
	lock.Lock()
	defer lock.Unlock()
	in.mu.Lock()
	run := in.readyRun[hub]
	_, readSinceReady := in.shown[hub]
	in.mu.Unlock()
	// The marker's requests are bounded: workers copying from a hub without a marker wait for this lock.
	markerCtx, cancel := context.WithTimeout(ctx, markerTimeout)
	defer cancel()
	marker, err := c.readMarker(markerCtx, h)
	if err != nil {
		return err
	}
	if !readSinceReady {
		// The copies made from this hub record its incarnations too: the only record of a restore the
		// replicator did not see, when no other hub's marker has one. So do the copies this hub holds of the
		// others: read now, they are all read before any counter is advanced (mayAdvanceLocked waits for every
		// hub's marker), so that no restored hub's counter is advanced before its restore is found.
		c.observeCopiesOf(hub)
		c.observeCopiesOn(hub)
	}
	in.mu.Lock()
	if in.readyRun[hub] != run {
		in.mu.Unlock()
		return nil
	}
	in.recordMarkerLocked(hub, marker)
	allRead := !in.read.Has(hub) && in.read.Len() == len(c.opts.Hubs)-1
	in.read.Insert(hub)
	for other := range in.shown {
		if _, restored := in.restored[other]; other != hub && !restored && in.behindLocked(other) {
			// This marker shows that another hub was restored: found at once, not after an interval.
			c.queue.Add(Key{Kind: keyIncarnation, Name: other})
		}
	}
	if allRead {
		// The last marker read: a hub marked before it was waits for no interval to advance after its marks.
		for other := range in.marked {
			if other != hub {
				c.queue.Add(Key{Kind: keyIncarnation, Name: other})
			}
		}
	}
	shown := in.shown[hub]
	recorded := in.recorded[hub][shown.UID]
	_, wasRestored := in.restored[hub]
	restoredNow := !wasRestored && in.behindLocked(hub)
	in.mu.Unlock()

	// Every key is listed (every hub's cache, no request) only when it is needed: at the first read since the
	// hub became ready, or while it is restored; not at every interval.
	var keys sets.Set[Key]
	if !readSinceReady || wasRestored || restoredNow {
		keys = sets.New(c.allKeys()...)
	}
	var claims claim
	if restoredNow {
		claims = c.claimedBy(h, marker)
	}
	in.mu.Lock()
	if restoredNow {
		in.restored[hub] = keys.Clone()
		if left, ok := in.claims[hub]; ok {
			// Claims an earlier reconciliation left (endClaims): their records still name this hub.
			claims.clusters = claims.clusters.Union(left.clusters)
		}
		in.claims[hub] = claims
		in.found++
	}
	pending := in.restored[hub]
	if wasRestored {
		// Keys gone since are not waited for.
		for key := range pending {
			if !keys.Has(key) {
				pending.Delete(key)
			}
		}
	}
	reconciledNow := wasRestored && pending.Len() == 0 && c.mayAdvanceLocked(in)
	afterMarks := !wasRestored && !restoredNow && in.marked.Has(hub) && in.read.Len() == len(c.opts.Hubs)
	if afterMarks {
		in.marked.Delete(hub) // marks written from now on ask for another advance
	}
	in.mu.Unlock()

	defer c.queue.AddAfter(Key{Kind: keyIncarnation, Name: hub}, c.opts.IncarnationInterval)
	if restoredNow {
		// The fence marks of its namespaces went back with it: they are written again (the ManagedClusters' keys
		// are synced below).
		c.fenceMarks.resetIfReady(hub)
		// So did its log of deletes made: read again, and written again as deletes are released.
		c.forgetDeleteLog(hub)
		c.opts.Recorder.Warningf(ReasonHubRestored, "hub %s shows incarnation %d of its marker, and %d was recorded: it was restored from a backup; "+
			"objects it lost are made again there from copies made in a later incarnation, and the newer states its copies hold are written back onto it",
			hub, shown.N, recorded)
		if claims.clusters.Len() > 0 {
			c.logger.Info("Restored hub holds clusters as their source does: what was written there since its restore is written back where another hub manages them",
				"hub", hub, "clusters", sets.List(claims.clusters), "writtenAfter", claims.after)
		}
	}
	if restoredNow || !readSinceReady {
		// Every key is compared again with the incarnation known: what a restored hub lost is made again,
		// and copies written before the marker was read record it (restampIncarnation).
		for key := range keys {
			c.queue.Add(key)
		}
	}
	if afterMarks {
		next, err := c.advanceLocked(markerCtx, h, marker, run)
		if err != nil {
			in.mu.Lock()
			in.marked.Insert(hub)
			in.mu.Unlock()
			return err
		}
		c.logger.V(2).Info("Incarnation advanced after fence marks", "hub", hub, "incarnation", next.String())
		advancedAfterMarks = next
	}
	if !reconciledNow {
		if !wasRestored && !restoredNow {
			// Claims a reconciliation left, their write-back records not all ended yet.
			return c.endClaims(markerCtx, hub)
		}
		return nil
	}
	next, err := c.advanceLocked(markerCtx, h, marker, run)
	if err != nil {
		return err
	}
	in.mu.Lock()
	delete(in.restored, hub)
	in.mu.Unlock()
	c.logger.Info("Restored hub reconciled: its incarnation advanced", "hub", hub, "incarnation", next.String())
	return c.endClaims(markerCtx, hub)
}

// endClaims drops the claims of hub, a restored hub now reconciled, cluster by cluster, each once the record that
// names hub as the hub the cluster moved from has ended on the cluster's source (endWriteBackFrom), and syncs
// that cluster's ManagedCluster, which the restore brought back and the claim left as it was (syncTarget). hub
// was reconciled: every key was weighed with the rule of a restored hub, which writes back only what its users
// wrote since the restore; the rest of what it holds came from the backup, which a write-back as from a hub the
// cluster moved from (rule 3 of mirror.DecideWriteBack) would make again on the source where it was deleted since.
// The record ends on the source's ManagedCluster, so that a replicator started again does not write back from hub
// either. A claim whose record cannot be ended yet (its source not known or not ready, the write refused) stays,
// and is tried again at hub's next marker read; the others go.
func (c *Controller) endClaims(ctx context.Context, hub string) error {
	in := c.incarnations
	in.mu.Lock()
	var clusters []string
	if cl, ok := in.claims[hub]; ok {
		clusters = sets.List(cl.clusters)
	}
	in.mu.Unlock()
	var errs []error
	for _, cluster := range clusters {
		if err := c.endWriteBackFrom(ctx, hub, cluster); err != nil {
			errs = append(errs, err)
			continue
		}
		in.mu.Lock()
		if cl, ok := in.claims[hub]; ok {
			cl.clusters.Delete(cluster)
			if cl.clusters.Len() == 0 {
				delete(in.claims, hub)
			}
		}
		in.mu.Unlock()
		c.queue.Add(Key{Kind: failoverv1alpha1.KindManagedCluster, Name: cluster})
	}
	return errors.Join(errs...)
}

// endWriteBackFrom ends, on cluster's source, every record that names hub as the hub the cluster moved from
// (the agent's epoch, AnnotationMovedFrom: one mirror.MovedFromDonePatch each), whichever mirror.MovedFrom reads
// first, for endClaims. Each patch carries the ManagedCluster's uid and resourceVersion as read: a record changed since is
// read again at the next try. It returns nil once no record names hub, or when no hub but hub holds the cluster
// any more (nothing to write back onto); an error while one may (the source not known or not ready, a record only
// a copy's cluster-hub annotation makes, which recordSource removes first, a write refused).
func (c *Controller) endWriteBackFrom(ctx context.Context, hub, cluster string) error {
	k, ok := c.kinds[failoverv1alpha1.KindManagedCluster]
	if !ok {
		return nil
	}
	dir, _ := c.directions.source(cluster)
	source := c.byName[dir.Hub]
	switch {
	case source == nil && !c.heldElsewhere(hub, cluster):
		return nil
	case source == nil:
		return fmt.Errorf("ending the write-back of cluster %s from restored hub %s: its source is not known", cluster, hub)
	case source.Name() == hub:
		return nil
	case !source.Ready():
		return fmt.Errorf("ending the write-back of cluster %s from restored hub %s: its source hub %s is not ready", cluster, hub, source.Name())
	}
	mc, err := source.Get(ctx, k.Name, "", cluster)
	if err != nil {
		return fmt.Errorf("ending the write-back of cluster %s from restored hub %s: reading its ManagedCluster on hub %s: %w", cluster, hub, source.Name(), err)
	}
	if mc == nil {
		return nil
	}
	var versions []string // the versions ended, each still naming hub
	// Every record naming hub, whichever MovedFrom reads first: one behind the agent's epoch of a later move
	// (from another hub) is read once that move's write-back ends.
	for patch := mirror.MovedFromDonePatch(mc, hub); patch != nil; patch = mirror.MovedFromDonePatch(mc, hub) {
		if len(versions) == 2 {
			// Two records (the agent's epoch, AnnotationMovedFrom) end in two patches; a third is a record
			// written meanwhile, ended at the next try.
			return fmt.Errorf("ending the write-back of cluster %s from restored hub %s: its ManagedCluster on hub %s names it again", cluster, hub, source.Name())
		}
		if patch, err = mirror.WithPreconditions(patch, mc); err != nil {
			return err
		}
		versions = append(versions, mc.GetResourceVersion())
		mc, err = source.Client().Resource(k.GVR).Patch(ctx, cluster, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		source.ReportError(err)
		if err != nil {
			metrics.WriteErrors.WithLabelValues(string(k.Name), source.Name()).Inc()
			return fmt.Errorf("ending the write-back of cluster %s from restored hub %s on its source hub %s: %w", cluster, hub, source.Name(), err)
		}
		c.directions.endMovedFrom(cluster, source.Name(), hub, versions)
	}
	if mc.GetAnnotations()[mirror.AnnotationClusterHub] == hub {
		return fmt.Errorf("ending the write-back of cluster %s from restored hub %s: its ManagedCluster on hub %s still carries a copy's record", cluster, hub, source.Name())
	}
	if len(versions) > 0 {
		c.logger.Info("Write-back from a restored hub finished with its reconciliation", "cluster", cluster, "hub", hub, "source", source.Name())
	}
	return nil
}

// heldElsewhere reports whether a hub other than hub holds cluster's ManagedCluster (or is not ready: it may).
func (c *Controller) heldElsewhere(hub, cluster string) bool {
	for _, h := range c.opts.Hubs {
		if h.Name() == hub {
			continue
		}
		if _, ok := h.Cluster(cluster); ok || !h.Ready() {
			return true
		}
	}
	return false
}

// restoresFound returns how many times a hub was found restored since the controller started.
func (in *incarnations) restoresFound() uint64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.found
}

// restoreKnown reports whether the replicator knows whether hub h was restored from a backup: h's marker was read
// since it became ready, every other ready hub's since the start (their markers record h's counters) unless
// incarnationWarmUp intervals passed since the start (a hub whose marker cannot be read holds no other hub's
// writes for longer), and h, when it shows a lower counter than was recorded, was found restored by
// syncIncarnation.
func (c *Controller) restoreKnown(h *hubconn.Hub) bool {
	in := c.incarnations
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, read := in.shown[h.Name()]; !read {
		return false
	}
	if c.opts.Clock.Since(in.started) < incarnationWarmUp*c.opts.IncarnationInterval {
		for _, g := range c.opts.Hubs {
			if g.Ready() && !in.read.Has(g.Name()) {
				return false
			}
		}
	}
	_, restored := in.restored[h.Name()]
	return restored || !in.behindLocked(h.Name())
}

// recordOnOthers writes inc, hub's incarnation just advanced, into every other ready hub's marker whose record of
// hub's marker is lower (one update each; a hub without a marker gets none, a failure is logged): until the next
// advance of one of them, that hub's own marker, which a restore takes back, is not the only record. The other
// hubs' own counters are not changed. The caller holds no marker lock: each hub's is taken in turn.
func (c *Controller) recordOnOthers(ctx context.Context, hub string, inc mirror.Incarnation) {
	for _, g := range c.opts.Hubs {
		if g.Name() == hub || !g.Ready() {
			continue
		}
		lock := c.incarnations.locks[g.Name()]
		lock.Lock()
		ctx, cancel := context.WithTimeout(ctx, markerTimeout)
		// A conflict (the marker written by someone else since it was read: an older replica of the replicator
		// handing over) is read again and retried.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			marker, err := c.readMarker(ctx, g)
			if err != nil || marker == nil {
				return err
			}
			data, _, _ := unstructured.NestedStringMap(marker.Object, "data")
			if uid, n, ok := strings.Cut(data[hub], "/"); ok && uid == inc.UID {
				if have, err := strconv.ParseInt(n, 10, 64); err == nil && have >= inc.N {
					return nil
				}
			}
			out := marker.DeepCopy()
			if err := unstructured.SetNestedField(out.Object, inc.String(), "data", hub); err != nil {
				return err
			}
			_, err = g.Client().Resource(configMapGVR).Namespace(c.opts.MarkerNamespace).Update(ctx, out, metav1.UpdateOptions{FieldManager: FieldManager})
			g.ReportError(err)
			return err
		})
		cancel()
		lock.Unlock()
		if err != nil {
			c.logger.Error(err, "Incarnation not recorded on another hub's marker; its next advance records it", "hub", hub, "marker", g.Name())
		}
	}
}

// markWritten records that syncFenceMarks marked a namespace of hub as a standby's, and has the hub's marker read
// (syncIncarnation), which advances its counter after the marks (incarnations.marked).
func (c *Controller) markWritten(hub string) {
	in := c.incarnations
	in.mu.Lock()
	in.marked.Insert(hub)
	in.mu.Unlock()
	c.queue.Add(Key{Kind: keyIncarnation, Name: hub})
}

// claim is what a hub found restored from a backup claimed then: the clusters whose ManagedCluster it holds as
// their source holds it (without mirror.AnnotationClusterHub, which every copy on another hub carries and the
// fence reads; the restore undid the fence marks of their namespaces, and its users' writes were accepted there
// until the replicator found the restore), and after, the last write of its incarnation marker as the marker
// records it (metadata.managedFields, the hub's own clock) plus one incarnation interval. The replicator advances
// the marker before it copies from the hub once an interval passed, so what the backup holds and any hub copied
// was written before after, and an object the hub wrote later is one its users made since the restore, or one no
// hub ever copied (zero: no marker or no time in it, and nothing counts as made since). Until the hub is
// reconciled, where another hub is a claimed cluster's source, the writes made on the restored hub are written
// back onto that source like those of a hub the cluster moved from (writeBackHubs, Controller.writeBack), and the
// restored hub's ManagedCluster of the cluster is left as it is (syncTarget, errClaimHeld), so that a replicator
// started again finds the claim again.
type claim struct {
	clusters sets.Set[string]
	after    time.Time
}

// claimedBy returns what hub h, found restored with marker (nil: none), claims (claim).
func (c *Controller) claimedBy(h *hubconn.Hub, marker *unstructured.Unstructured) claim {
	cl := claim{clusters: sets.New[string]()}
	for _, n := range h.List(failoverv1alpha1.KindManagedCluster, "") {
		if mc, ok := h.Cluster(n.Name); ok && mc.RecordedHub == "" {
			cl.clusters.Insert(n.Name)
		}
	}
	if marker != nil {
		for _, mf := range marker.GetManagedFields() {
			if mf.Time != nil && mf.Time.After(cl.after) {
				cl.after = mf.Time.Time
			}
		}
	}
	if !cl.after.IsZero() {
		cl.after = cl.after.Add(c.opts.IncarnationInterval)
	}
	return cl
}

// claimants returns the hubs other than source that were found restored, are not reconciled yet, and claimed
// cluster then (claimedBy), by name, each with the time after which its writes are its users' since the restore.
func (in *incarnations) claimants(cluster, source string) []writeBackFrom {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []writeBackFrom
	for hub, cl := range in.claims {
		if hub != source && cl.clusters.Has(cluster) {
			out = append(out, writeBackFrom{hub: hub, restored: true, after: cl.after})
		}
	}
	slices.SortFunc(out, func(a, b writeBackFrom) int { return strings.Compare(a.hub, b.hub) })
	return out
}

// claimed reports whether hub, found restored and not reconciled yet, claimed cluster (claimedBy).
func (in *incarnations) claimed(hub, cluster string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	cl, ok := in.claims[hub]
	return ok && cl.clusters.Has(cluster)
}

// incarnationFor returns the incarnation of source that a copy about to be written from it records. It first
// advances source's counter (one write of its marker) when Options.IncarnationInterval passed since it last did
// and nothing holds it: the marker must be read since the hub became ready, every hub's marker read since the
// start (mayAdvanceLocked), and the hub not restored (behind what was recorded, or reconciling). Otherwise, or
// when the write fails (logged; the next copy tries again), it returns what the marker showed (the zero value
// when it is not read yet: the copy records none). A copy that is due waits while another worker holds the hub's
// marker (reads, advances or makes it; up to markerWait once the hub has a marker), then decides again.
func (c *Controller) incarnationFor(ctx context.Context, source *hubconn.Hub) mirror.Incarnation {
	in, hub := c.incarnations, source.Name()
	due := func() (mirror.Incarnation, uint64, bool) {
		in.mu.Lock()
		defer in.mu.Unlock()
		shown, read := in.shown[hub]
		_, restored := in.restored[hub]
		last, advanced := in.advanced[hub]
		if !read || restored || in.behindLocked(hub) || !c.mayAdvanceLocked(in) ||
			(advanced && c.opts.Clock.Since(last) < c.opts.IncarnationInterval) {
			return shown, 0, false
		}
		return shown, in.readyRun[hub], true
	}
	shown, _, ok := due()
	if !ok {
		return shown
	}
	// Another worker may hold the lock: one advancing the counter (this copy records the new incarnation), or
	// syncIncarnation reading the marker or making it. Both are waited for, so that a copy made after the interval
	// records an incarnation after the last advance, never the one a backup taken then holds: while the hub has
	// no marker, for as long as it takes (each request is bounded by markerTimeout); otherwise for up to
	// markerWait, so that a hub slow to answer does not hold every worker copying from it (the copy then records
	// what was shown).
	lock := in.locks[hub]
	if !shown.Known() {
		lock.Lock()
	} else if !lockWithin(lock, markerWait) {
		return shown
	}
	defer lock.Unlock()
	shown, run, ok := due() // another worker may have advanced it meanwhile
	if !ok {
		return shown
	}
	ctx, cancel := context.WithTimeout(ctx, markerTimeout)
	defer cancel()
	marker, err := c.readMarker(ctx, source)
	if err == nil && marker != nil && string(marker.GetUID()) == shown.UID && markerCounter(marker, hub) < shown.N {
		// The hub went back since its marker was last read: restored. syncIncarnation reports it.
		c.queue.Add(Key{Kind: keyIncarnation, Name: hub})
		return mirror.Incarnation{}
	}
	if err == nil {
		var next mirror.Incarnation
		next, err = c.advanceLocked(ctx, source, marker, run)
		if err == nil {
			return next
		}
	}
	in.mu.Lock()
	in.advanced[hub] = c.opts.Clock.Now() // tried again after an interval, not before every copy
	in.mu.Unlock()
	c.logger.Error(err, "Incarnation not advanced; the copy records the current one", "hub", hub)
	return shown
}

// markerTimeout bounds each read and write of an incarnation marker made while a copy waits.
const markerTimeout = 10 * time.Second

// markerWait is how long a copy due to advance its source's incarnation waits for another holder of the hub's
// marker lock (incarnationFor); a marker read or write of a hub that answers takes milliseconds.
const markerWait = 2 * time.Second

// lockWithin takes m within d and reports whether it did (polling: sync.Mutex has no timed lock).
func lockWithin(m *sync.Mutex, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !m.TryLock() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// observeCopiesOf records the incarnations of hub that the copies made from it on the other ready hubs record
// (as their caches hold them).
func (c *Controller) observeCopiesOf(hub string) {
	for _, h := range c.opts.Hubs {
		if h.Name() != hub {
			c.observeCopiesIn(h, func(from string) bool { return from == hub })
		}
	}
}

// observeCopiesOn records the incarnations of the other hubs that the copies hub holds record.
func (c *Controller) observeCopiesOn(hub string) {
	if h := c.byName[hub]; h != nil {
		c.observeCopiesIn(h, func(from string) bool { return from != "" && from != hub })
	}
}

// observeCopiesIn records the incarnation each copy in ready hub h's cache records of the hub it was made from,
// for the source hubs from accepts.
func (c *Controller) observeCopiesIn(h *hubconn.Hub, from func(string) bool) {
	if !h.Ready() {
		return
	}
	for name := range c.kinds {
		for _, n := range h.List(name, "") {
			if obj, _ := h.Peek(name, n.Namespace, n.Name); obj != nil {
				if source := obj.GetLabels()[mirror.LabelReplicatedFrom]; from(source) {
					c.incarnations.observe(source, mirror.SourceIncarnation(obj))
				}
			}
		}
	}
}

// advanceLocked writes hub h's marker (read as marker; nil: none) with its counter one above the highest
// recorded for that marker, and every other hub's incarnation as shown, and records it as what h shows unless h
// left Ready since run. The caller holds h's lock.
func (c *Controller) advanceLocked(ctx context.Context, h *hubconn.Hub, marker *unstructured.Unstructured, run uint64) (mirror.Incarnation, error) {
	in, hub := c.incarnations, h.Name()
	in.mu.Lock()
	first := !in.shown[hub].Known()
	uid := ""
	if marker != nil {
		uid = string(marker.GetUID())
	}
	n := in.recorded[hub][uid]
	if marker != nil {
		n = max(n, markerCounter(marker, hub))
	}
	data := map[string]any{hub: strconv.FormatInt(n+1, 10)}
	if marker != nil {
		// A hub not shown now (unreachable since) keeps its record, raised to what is recorded of that marker.
		kept, _, _ := unstructured.NestedStringMap(marker.Object, "data")
		for other, v := range kept {
			uid, count, ok := strings.Cut(v, "/")
			counter, err := strconv.ParseInt(count, 10, 64)
			if other == hub || !ok || err != nil {
				continue
			}
			data[other] = mirror.Incarnation{UID: uid, N: max(counter, in.recorded[other][uid])}.String()
		}
	}
	for _, other := range slices.Sorted(maps.Keys(in.shown)) {
		if i := in.shown[other]; other != hub && i.Known() {
			// The highest counter known of that marker, not what the hub shows: a hub restored and not yet
			// reconciled must stay found after a restart of the replicator.
			i.N = max(i.N, in.recorded[other][i.UID])
			data[other] = i.String()
		}
	}
	in.mu.Unlock()

	client := h.Client().Resource(configMapGVR).Namespace(c.opts.MarkerNamespace)
	var written *unstructured.Unstructured
	var err error
	if marker != nil {
		out := marker.DeepCopy()
		out.Object["data"] = data
		written, err = client.Update(ctx, out, metav1.UpdateOptions{FieldManager: FieldManager})
	} else {
		out := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": data}}
		out.SetName(IncarnationMarker)
		out.SetNamespace(c.opts.MarkerNamespace)
		if _, err = c.ensureNamespace(ctx, h, c.opts.MarkerNamespace, nil); err == nil {
			written, err = client.Create(ctx, out, metav1.CreateOptions{FieldManager: FieldManager})
		}
	}
	h.ReportError(err)
	if err != nil {
		return mirror.Incarnation{}, fmt.Errorf("writing the incarnation marker %s/%s on hub %s: %w", c.opts.MarkerNamespace, IncarnationMarker, hub, err)
	}
	next := mirror.Incarnation{UID: string(written.GetUID()), N: n + 1}
	in.mu.Lock()
	if rec := in.recorded[hub]; next.N > rec[next.UID] {
		rec[next.UID] = next.N
	}
	in.advanced[hub] = c.opts.Clock.Now()
	current := in.readyRun[hub] == run
	if current {
		in.shown[hub] = next
	}
	in.mu.Unlock()
	if current && first {
		// The copies written from h before it showed an incarnation record none: every key is compared again,
		// and restampIncarnation gives them this incarnation now rather than at their next change.
		for _, key := range c.allKeys() {
			c.queue.Add(key)
		}
	}
	return next, nil
}

// readMarker reads hub h's incarnation marker: nil when there is none.
func (c *Controller) readMarker(ctx context.Context, h *hubconn.Hub) (*unstructured.Unstructured, error) {
	marker, err := h.Client().Resource(configMapGVR).Namespace(c.opts.MarkerNamespace).Get(ctx, IncarnationMarker, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	h.ReportError(err)
	if err != nil {
		return nil, fmt.Errorf("reading the incarnation marker %s/%s on hub %s: %w", c.opts.MarkerNamespace, IncarnationMarker, h.Name(), err)
	}
	return marker, nil
}

// recordMarkerLocked records what hub's marker (nil: none) holds: hub's own incarnation as what it shows, and
// the other hubs' incarnations it recorded.
func (in *incarnations) recordMarkerLocked(hub string, marker *unstructured.Unstructured) {
	if marker == nil {
		in.shown[hub] = mirror.Incarnation{}
		return
	}
	own := mirror.Incarnation{UID: string(marker.GetUID()), N: markerCounter(marker, hub)}
	in.shown[hub] = own
	if own.N > in.recorded[hub][own.UID] {
		in.recorded[hub][own.UID] = own.N
	}
	data, _, _ := unstructured.NestedStringMap(marker.Object, "data")
	for other, v := range data {
		uid, n, ok := strings.Cut(v, "/")
		counter, err := strconv.ParseInt(n, 10, 64)
		if other == hub || !ok || err != nil || in.recorded[other] == nil {
			continue
		}
		if counter > in.recorded[other][uid] {
			in.recorded[other][uid] = counter
		}
	}
}

// markerCounter returns hub's own counter in its marker (0 when absent or not a positive number).
func markerCounter(marker *unstructured.Unstructured, hub string) int64 {
	v, _, _ := unstructured.NestedString(marker.Object, "data", hub)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
