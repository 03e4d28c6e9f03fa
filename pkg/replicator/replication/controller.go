// Package replication is the replicator's controller: it keeps every hub's copy of each managed cluster's
// management state in step with the cluster's source hub.
//
// Queue keys are objects (kind, namespace, name) and clusters (a direction key: recompute the cluster's
// source). Every watch event of any hub enqueues the object's key; lease events (but an agent's renewal on its
// cluster's settled source, see OnLease), the moment the freshest lease of a cluster goes stale
// (direction.NextExpiry) and a slow periodic recheck enqueue direction keys; a hub that
// becomes ready enqueues every key. A sync of an object key reads the object from the source hub's cache and
// from each other ready hub's cache, asks mirror.Decide what to do, and writes.
//
// The queue is client-go's typed rate-limited workqueue rather than library-go's factory: each hub's informers
// are created and dropped as the hub comes and goes, which a factory's fixed informer list does not model.
//
// Requeue policy: a failed write returns an error (rate-limited retry); a key whose source hub or direction is
// not known yet is dropped — it is enqueued again when the hub becomes ready, the direction is decided or
// changes, or the cluster becomes selected; a direction flip that waits for a returning hub to catch up is
// rechecked after a second.
package replication

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/brake"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/metrics"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// FieldManager is the field manager of every write the replicator makes.
const FieldManager = mirror.FieldManager

// Event reasons of the replicator.
const (
	// ReasonClusterSourceChanged: a cluster's source hub changed (it failed over, or the replicator found where
	// it is).
	ReasonClusterSourceChanged = "ClusterSourceChanged"
	// ReasonReplicationConflict: a target hub holds an object the replicator must not overwrite (a foreign
	// object) or a copy that was changed on that hub (overwritten).
	ReasonReplicationConflict = "ReplicationConflict"
	// ReasonCopyKept: a copy is kept against its source hub, which holds no object of its name with no delete
	// of it seen (mirror.ConflictSourceMissing), or an older state of it (mirror.ConflictSourceOlder).
	ReasonCopyKept = "CopyKept"
	// ReasonHubUnreachable: a hub stopped answering; replication among the others goes on.
	ReasonHubUnreachable = "HubUnreachable"
	// ReasonHubReady: a hub answers again and its caches are synced; it is caught up from now on.
	ReasonHubReady = "HubReady"
	// ReasonHubCaughtUp: every object that was out of step on a hub after it became ready has been written.
	ReasonHubCaughtUp = "HubCaughtUp"
	// ReasonFenceUnavailable: a hub does not serve ValidatingAdmissionPolicy; changes made there to clusters
	// managed from another hub are not refused.
	ReasonFenceUnavailable = "FenceUnavailable"
	// ReasonClusterIdentityConflict (Warning): a managed cluster name stands for more than one spoke (their
	// agents report different id.k8s.io claims, direction.DecideIdentity): nothing of it is replicated, fenced
	// or written back until one identity is left.
	ReasonClusterIdentityConflict = "ClusterIdentityConflict"
	// ReasonClusterIdentityResolved: a name that stood for several spokes stands for one again, on every hub:
	// it is replicated.
	ReasonClusterIdentityResolved = "ClusterIdentityResolved"
	// ReasonCopiesWithdrawn (Warning): a spoke of another identity joined a hub's ManagedCluster copy of a
	// cluster whose spoke is registered under that name on another hub: the copies the replicator had made there
	// for the other spoke were deleted (those changed on that hub kept), and the ManagedCluster became the joining
	// spoke's own (withdrawCopies). The message names the hub, both identities and the objects.
	ReasonCopiesWithdrawn = "CopiesWithdrawn"
	// ReasonDeletesHeld (Warning): the replicator's deletes on a hub within failoverv1alpha1.DeleteBrakeWindow would
	// go beyond spec.deleteBrake: the hub's brake engaged and every delete there waits for a person (package
	// brake). The message names the hub, the limit and the release token.
	ReasonDeletesHeld = "DeletesHeld"
	// ReasonDeletesReleased: a person released a hub's delete brake (failoverv1alpha1.AnnotationReleaseDeletes): the
	// deletes it held are made.
	ReasonDeletesReleased = "DeletesReleased"
	// ReasonHubRestored (Warning): a hub's incarnation marker shows a lower counter than the replicator recorded
	// (IncarnationMarker): the hub was restored from a backup or rebuilt. The objects it lost are made again there
	// from copies made in a later incarnation (mirror.DecideRecreate); its counter is advanced once every object
	// was compared with every hub.
	ReasonHubRestored = "HubRestored"
	// ReasonWrittenBack: a create, edit or delete made on a cluster's previous source before the cluster moved,
	// which never reached the new source, was written there (mirror.DecideWriteBack); or the newer state a copy
	// holds of an object was written back onto its source, which holds an older state of it after a restore
	// from a backup (mirror.DecideRestore).
	ReasonWrittenBack = "WrittenBack"
	// ReasonDeleteNotWrittenBack (Warning): a user's delete on the hub a cluster moved from, made before the
	// replicator fenced that hub (held there, or released and logged while the replicator could not reach the
	// cluster's new hub), met a change of the same object on the cluster's source since its copy was written: the
	// source's state is kept, and the delete is not carried there (no clock orders the two writes).
	ReasonDeleteNotWrittenBack = "DeleteNotWrittenBack"
	// ReasonDeleteProven: an object, on the source or another hub, whose delete another hub's log of deletes made
	// records (mirror.DeleteMadeOf: its hub was down when the delete was released, or restored from a backup
	// taken before the delete, which brought it back) was deleted again.
	ReasonDeleteProven = "DeleteProven"
)

// Key is a queue key: an object (Kind set) or a cluster's direction (Kind empty, Name the cluster).
type Key struct {
	Kind      failoverv1alpha1.ReplicatedKind
	Namespace string
	Name      string
}

func (k Key) String() string {
	if k.Kind == "" {
		return "cluster/" + k.Name
	}
	if k.Namespace == "" {
		return string(k.Kind) + "/" + k.Name
	}
	return string(k.Kind) + "/" + k.Namespace + "/" + k.Name
}

// Options configure a Controller.
type Options struct {
	// Hubs are the hubs in spec order (ReplicationConfig spec.hubs); at least two.
	Hubs []*hubconn.Hub
	// Kinds are the mirrored kinds.
	Kinds []mirror.Kind
	// ClusterSelector selects clusters by the labels of their ManagedCluster on the source hub; nil selects all.
	ClusterSelector labels.Selector
	// DirectionRecheck is how often every cluster's direction is recomputed besides the events that drive it
	// (lease, ManagedCluster and hub state changes, and the moment a fresh lease goes stale, which
	// direction.NextExpiry gives): a safety net. Default 5 min.
	DirectionRecheck time.Duration
	// Recorder records the replicator's events.
	Recorder events.Recorder
	// Logger is the controller's logger; default klog's.
	Logger klog.Logger
	// Clock is the controller's clock (timestamps, lag, the direction recheck ticker).
	Clock clock.WithTicker
	// Fencing installs the fence (package fence) on every hub when it becomes ready and keeps the fence marks
	// of every cluster namespace.
	Fencing bool
	// DeleteBrake bounds the deletes on each hub (spec.deleteBrake, brake.LimitsOf); zero: brake.LimitsOf(nil).
	DeleteBrake brake.Limits
	// EngagedBrakes are the brakes engaged before this controller started (hub → when, from the
	// ReplicationConfig's status): they stay engaged until released.
	EngagedBrakes map[string]time.Time
	// BrakeEngaged, when set, is called after a hub's delete brake engaged (the caller writes the status at
	// once, so that the brake outlives a crash right after).
	BrakeEngaged func()
	// ReportWriter names the writer in each cluster's in-step report (mirror.AnnotationHubsReported): the
	// ReplicationConfig's name.
	ReportWriter string
	// ReportInterval is the longest time between two writes of a cluster's in-step report (the report is
	// rewritten, unchanged but for its time, when nothing else changed it); default 5 min.
	ReportInterval time.Duration
	// MarkerNamespace is the namespace of the incarnation marker (IncarnationMarker) on every hub; default
	// DefaultMarkerNamespace.
	MarkerNamespace string
	// IncarnationInterval is how often a hub's incarnation marker is read, and the shortest time between two
	// advances of its counter (one write of its marker, made before a copy from the hub is written): an object
	// copied less than this after the last advance before a backup the hub is restored to may not be made again
	// there from its copies (mirror.DecideRecreate). Default 30 s.
	IncarnationInterval time.Duration
}

// Controller replicates. Create it with New, feed it the hubs' events (it is their hubconn.Handler) and run it
// with Run.
type Controller struct {
	opts   Options
	byName map[string]*hubconn.Hub
	kinds  map[failoverv1alpha1.ReplicatedKind]mirror.Kind
	queue  workqueue.TypedRateLimitingInterface[Key]
	logger klog.Logger

	// directions: each cluster's source, selection, the hub it moved from, and the lease sightings; its own lock.
	directions *clusterDirections

	// viewsRead, when set (tests only), is called by syncDirection once it has read the hubs' views.
	viewsRead func(cluster string)
	// hubCopies: each hub's copies in step and conflicts; its own lock.
	hubCopies hubCopies
	// identityConflicts: the names that stand for several spokes; written by checkIdentity alone, its own lock.
	identityConflicts identityConflicts
	// objects: the keys whose object the last sync found on its source; its own lock.
	objects sourceObjects
	// lag: when each key's change was first seen on its source, until it is in step everywhere; its own lock.
	lag lagClocks
	// steps: each hub's keys out of step (hubSteps; its own lock).
	steps *hubSteps
	// fenceMarks: the fence marks written on each cluster's namespace on each hub since it became ready; its own
	// lock.
	fenceMarks fenceMarkMemo
	// patched: the last patch patchSourceOnce wrote on each source object, until the source's cache shows it;
	// its own lock.
	patched sourcePatches
	// addOnInstalls: what each hub's add-on manager last said of each add-on it may install; a change re-syncs
	// the add-ons of that name. Its own lock.
	addOnInstalls addOnFacts
	// namespaces: hub → the namespaces the replicator made sure of there (ensureNamespace), since the hub became
	// reachable; its own lock.
	namespaces hubNamespaces
	// namespaceCreates: "<hub>/<namespace>" → the namespace create in flight there (ensureNamespace).
	namespaceCreates singleflight.Group
	// brake admits or holds every delete the replicator makes (admitDelete); it has its own lock.
	brake *brake.Brake[Key]
	// objectCounts: hub → the last count of hubObjects; its own lock.
	objectCounts objectCounts
	// reports: when each cluster's in-step report was last written (publishSteps); it has its own lock.
	reports reportTimes
	// incarnations: the hubs' incarnations (syncIncarnation); its own lock.
	incarnations *incarnations
	// deleteLogs: each hub's log of deletes made (recordDeleteMade, deleteMadeOf); its own locks. flushes counts
	// the goroutines writing them (flushDeleteLog): Run waits for them.
	deleteLogs map[string]*deleteLog
	flushes    sync.WaitGroup
	// notWrittenBack: the logged deletes a change on the source outranked (deleteAgainOnSource), each reported
	// once; its own lock.
	notWrittenBack reportedOnce
}

// reportedOnceSize is how many reports a reportedOnce remembers; beyond it the least recently reported is
// forgotten, and may be reported again.
const reportedOnceSize = 4096

// reportedOnce remembers what was reported (an event made once per object, not at every sync), the last
// reportedOnceSize reports at most; its own lock.
type reportedOnce struct {
	mu   sync.Mutex
	seen *lru.Cache
}

// first reports whether id was not reported yet (or was forgotten since), and remembers it.
func (r *reportedOnce) first(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = lru.New(reportedOnceSize)
	}
	if _, ok := r.seen.Get(id); ok {
		return false
	}
	r.seen.Add(id, struct{}{})
	return true
}

// New returns a Controller for opts. It fails when fewer than two hubs are given.
func New(opts Options) (*Controller, error) {
	if len(opts.Hubs) < 2 {
		return nil, fmt.Errorf("replication: at least 2 hubs are required, got %d", len(opts.Hubs))
	}
	if opts.Recorder == nil {
		return nil, fmt.Errorf("replication: Options.Recorder is required")
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = klog.Background()
	}
	if opts.ClusterSelector == nil {
		opts.ClusterSelector = labels.Everything()
	}
	if opts.ReportInterval <= 0 {
		opts.ReportInterval = 5 * time.Minute
	}
	if opts.DirectionRecheck <= 0 {
		opts.DirectionRecheck = 5 * time.Minute
	}
	if opts.MarkerNamespace == "" {
		opts.MarkerNamespace = DefaultMarkerNamespace
	}
	if opts.IncarnationInterval <= 0 {
		opts.IncarnationInterval = 30 * time.Second
	}
	if opts.DeleteBrake == (brake.Limits{}) {
		opts.DeleteBrake = brake.LimitsOf(nil)
	}
	c := &Controller{
		opts:   opts,
		byName: map[string]*hubconn.Hub{},
		kinds:  map[failoverv1alpha1.ReplicatedKind]mirror.Kind{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[Key](50*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[Key]{Name: "replication", Clock: opts.Clock}),
		logger: opts.Logger.WithName("replication"),
		brake:  brake.New[Key](opts.DeleteBrake, opts.Clock, opts.EngagedBrakes),
	}
	for _, h := range opts.Hubs {
		metrics.HubReachable.WithLabelValues(h.Name()).Set(0) // until it is ready
		engaged := 0.0
		if _, ok := opts.EngagedBrakes[h.Name()]; ok {
			engaged = 1
		}
		metrics.DeleteBrakeEngaged.WithLabelValues(h.Name()).Set(engaged)
		c.byName[h.Name()] = h
	}
	for _, k := range opts.Kinds {
		c.kinds[k.Name] = k
	}
	hubNames := make([]string, 0, len(opts.Hubs))
	for _, h := range opts.Hubs {
		hubNames = append(hubNames, h.Name())
	}
	c.directions = newClusterDirections(hubNames)
	c.steps = newHubSteps(hubNames, c.keyCluster)
	c.incarnations = newIncarnations(hubNames, opts.Clock.Now())
	c.deleteLogs = map[string]*deleteLog{}
	for _, h := range hubNames {
		c.deleteLogs[h] = &deleteLog{}
	}
	return c, nil
}

// Run processes the queue with workers goroutines until ctx ends, and recomputes every cluster's direction
// every DirectionRecheck. It returns once every worker has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	defer func() {
		// Every worker, and every write of a log of deletes made they started, has returned before Run does, so
		// that a new controller never overlaps this one.
		c.queue.ShutDown()
		wg.Wait()
		c.flushes.Wait()
	}()
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c.processNext(ctx) {
			}
		}()
	}
	ticker := c.opts.Clock.NewTicker(c.opts.DirectionRecheck)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			for _, cluster := range c.knownClusters() {
				c.queue.Add(Key{Name: cluster})
			}
		}
	}
}

// OnObject implements hubconn.Handler.
func (c *Controller) OnObject(hub string, k mirror.Kind, namespace, name string) {
	if k.Name == failoverv1alpha1.KindManagedCluster {
		c.queue.Add(Key{Name: name})
	}
	if k.Name == failoverv1alpha1.KindClusterManagementAddOn {
		c.onClusterManagementAddOn(hub, name)
	}
	if _, mirrored := c.kinds[k.Name]; !mirrored {
		return
	}
	key := Key{Kind: k.Name, Namespace: namespace, Name: name}
	if c.isSourceEvent(k, key, hub) {
		c.lag.start(key, c.opts.Clock.Now())
	}
	c.queue.Add(key)
}

// onClusterManagementAddOn queues every ManagedClusterAddOn named name that a source holds when whether hub's
// add-on manager installs that add-on by strategy changed (it decides where they are mirrored: mirroredTo); a
// status write of the add-on manager queues nothing.
func (c *Controller) onClusterManagementAddOn(hub, name string) {
	h := c.byName[hub]
	if h == nil {
		return
	}
	installs, known := h.AddOnInstall(name)
	fact := [2]bool{installs, known}
	if !c.addOnInstalls.changed(hub, name, fact) {
		return
	}
	for _, key := range c.objects.named(failoverv1alpha1.KindManagedClusterAddOn, name) {
		c.queue.Add(key)
	}
}

// isSourceEvent reports whether an event for key on hub comes from key's source (or its source is not known
// yet): only those start the replication lag clock, not the echo of the replicator's own writes.
func (c *Controller) isSourceEvent(k mirror.Kind, key Key, hub string) bool {
	cluster, perCluster := k.ClusterOf(key.Namespace, key.Name, c.isCluster)
	if perCluster {
		src, _ := c.directions.source(cluster)
		return src.Hub == "" || src.Hub == hub
	}
	for _, h := range c.opts.Hubs {
		if h.Serves(k.Name) {
			return h.Name() == hub
		}
	}
	return true
}

// forget drops key from every hub's out-of-step set and its lag clock: nothing is replicated for it.
func (c *Controller) forget(key Key) {
	c.clearDirty(key, nil)
	c.lag.forget(key)
}

// clearDirty removes key from the out-of-step sets of hubs (every hub when hubs is nil), marking hubs caught
// up when it was their last.
func (c *Controller) clearDirty(key Key, hubs []string) {
	caughtUp, inStep := c.steps.compared(key, hubs)
	for _, hub := range caughtUp {
		c.markCaughtUp(hub)
	}
	// The cluster's last object waiting on a hub was compared: its source's ManagedCluster names the hub in
	// step now.
	if _, ok := c.kinds[failoverv1alpha1.KindManagedCluster]; ok {
		for _, cluster := range inStep {
			c.queue.Add(Key{Kind: failoverv1alpha1.KindManagedCluster, Name: cluster})
		}
	}
}

// keyCluster returns the cluster a key's object belongs to by its name or namespace ("" for none, or when
// that depends on which namespaces are cluster namespaces: then the namespace).
func (c *Controller) keyCluster(key Key) string {
	switch {
	case key.Kind == failoverv1alpha1.KindManagedCluster || c.kinds[key.Kind].Scope == mirror.ClusterByName:
		return key.Name
	case key.Kind == "" || key.Kind == keyFencePolicy || key.Kind == keyIncarnation:
		return ""
	}
	return key.Namespace
}

// OnLease implements hubconn.Handler. An agent's renewal of the lease on its cluster's current source, while
// that lease was the fresh one that decided the source, is only recorded: it cannot change the decision
// (rule 1 of direction.DecideSource keeps the hub with the newest renewal), and the re-decision that
// syncDirection scheduled for the moment the lease would have gone stale reads the new renewTime then; a
// syncDirection of the cluster already under way, whose views may predate the renewal, decides again once it is
// done (deferred). Every other lease event decides the cluster's direction again at once.
func (c *Controller) OnLease(hub, cluster string, event hubconn.LeaseEvent) {
	settled := false
	switch event {
	case hubconn.LeaseRenewed:
		settled = c.directions.renewal(hub, cluster, c.opts.Clock.Now())
	case hubconn.LeaseAdded:
		// A new lease (or the first listing of the hub): no renewal of it has been seen yet.
		c.directions.leaseAdded(hub, cluster, c.opts.Clock.Now())
	}
	if settled {
		return
	}
	c.queue.Add(Key{Name: cluster})
}

// OnState implements hubconn.Handler.
func (c *Controller) OnState(hub string, state hubconn.State, err error) {
	if state != hubconn.StateReady {
		c.steps.left(hub)
	}
	switch state {
	case hubconn.StateUnreachable:
		metrics.HubReachable.WithLabelValues(hub).Set(0)
		msg := "no answer"
		if err != nil {
			msg = err.Error()
		}
		c.opts.Recorder.Warningf(ReasonHubUnreachable, "hub %s is unreachable (%s); replication among the other hubs goes on", hub, msg)
		c.hubCopies.forget(hub)
		c.namespaces.forget(hub)
		c.fenceMarks.forget(hub)
		c.incarnations.forget(hub)
		c.forgetDeleteLog(hub)
		for _, cluster := range c.knownClusters() {
			c.queue.Add(Key{Name: cluster})
			// The source's ManagedCluster names this hub behind from now on.
			c.queue.Add(Key{Kind: failoverv1alpha1.KindManagedCluster, Name: cluster})
		}
	case hubconn.StateReady:
		metrics.HubReachable.WithLabelValues(hub).Set(1)
		keys := c.allKeys()
		c.fenceMarks.reset(hub)
		// This hub, and every hub not caught up yet, must see every object known now. hubconn reports Ready
		// outside its lock: a hub that left Ready since is not listed.
		if c.steps.ready(hub, keys, func() bool { return c.byName[hub] != nil && c.byName[hub].Ready() }) {
			c.markCaughtUp(hub)
		}
		c.opts.Recorder.Eventf(ReasonHubReady, "hub %s is ready: %d objects to check", hub, len(keys))
		if c.opts.Fencing {
			c.queue.Add(Key{Kind: keyFencePolicy, Name: hub})
		}
		c.queue.Add(Key{Kind: keyIncarnation, Name: hub})
		for _, cluster := range c.knownClusters() {
			c.queue.Add(Key{Name: cluster})
		}
		for _, key := range keys {
			c.queue.Add(key)
		}
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	var err error
	switch key.Kind {
	case "":
		err = c.syncDirection(ctx, key.Name)
	case keyFencePolicy:
		err = c.syncFencePolicy(ctx, key.Name)
	case keyIncarnation:
		err = c.syncIncarnation(ctx, key.Name)
	default:
		err = c.syncObject(ctx, key)
	}
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Replication failed, will retry", "key", key.String())
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}
