// Package replication is the replicator's controller: it keeps every hub's copy of each managed cluster's
// management state in step with the cluster's source hub.
//
// Queue keys are objects (kind, namespace, name) and clusters (a direction key: recompute the cluster's
// source). Every watch event of any hub enqueues the object's key; lease events and a periodic recheck enqueue
// direction keys; a hub that becomes ready enqueues every key. A sync of an object key reads the object from
// the source hub's cache and from each other ready hub's cache, asks mirror.Decide what to do, and writes.
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
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	replv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/metrics"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// FieldManager is the field manager of every write the replicator makes.
const FieldManager = "klusterlet-failover-replicator"

// Event reasons of the replicator.
const (
	// ReasonClusterSourceChanged: a cluster's source hub changed (it failed over, or the replicator found where
	// it is).
	ReasonClusterSourceChanged = "ClusterSourceChanged"
	// ReasonReplicationConflict: a target hub holds an object the replicator must not overwrite (a foreign
	// object) or a copy that was changed on that hub (overwritten).
	ReasonReplicationConflict = "ReplicationConflict"
	// ReasonHubUnreachable: a hub stopped answering; replication among the others goes on.
	ReasonHubUnreachable = "HubUnreachable"
	// ReasonHubReady: a hub answers again and its caches are synced; it is caught up from now on.
	ReasonHubReady = "HubReady"
	// ReasonHubCaughtUp: every object that was out of step on a hub after it became ready has been written.
	ReasonHubCaughtUp = "HubCaughtUp"
)

// Key is a queue key: an object (Kind set) or a cluster's direction (Kind empty, Name the cluster).
type Key struct {
	Kind      replv1alpha1.ReplicatedKind
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
	// DirectionRecheck is how often every cluster's direction is recomputed (lease freshness expires without
	// an event). Default 10 s.
	DirectionRecheck time.Duration
	// Recorder records the replicator's events.
	Recorder events.Recorder
	// Logger is the controller's logger; default klog's.
	Logger klog.Logger
	// Clock is the controller's clock (timestamps, lag, the direction recheck ticker).
	Clock clock.WithTicker
}

// Controller replicates. Create it with New, feed it the hubs' events (it is their hubconn.Handler) and run it
// with Run.
type Controller struct {
	opts   Options
	byName map[string]*hubconn.Hub
	kinds  map[replv1alpha1.ReplicatedKind]mirror.Kind
	queue  workqueue.TypedRateLimitingInterface[Key]
	logger klog.Logger

	mu        sync.Mutex
	sources   map[string]direction.Source // cluster → source
	selected  map[string]bool             // cluster → selected by the cluster selector on its source
	renewed   map[string]sets.Set[string] // hub → clusters whose lease an agent was seen renewing
	conflicts map[string]map[Key]mirror.Conflict
	copies    map[string]sets.Set[Key] // hub → keys of copies in step
	objects   map[replv1alpha1.ReplicatedKind]sets.Set[Key]
	firstSeen map[Key]time.Time
	dirty     map[string]sets.Set[Key] // hub → keys not yet synced since the hub became ready
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
	if opts.DirectionRecheck <= 0 {
		opts.DirectionRecheck = 10 * time.Second
	}
	c := &Controller{
		opts:   opts,
		byName: map[string]*hubconn.Hub{},
		kinds:  map[replv1alpha1.ReplicatedKind]mirror.Kind{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[Key](50*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[Key]{Name: "replication"}),
		logger:    opts.Logger.WithName("replication"),
		sources:   map[string]direction.Source{},
		selected:  map[string]bool{},
		renewed:   map[string]sets.Set[string]{},
		conflicts: map[string]map[Key]mirror.Conflict{},
		copies:    map[string]sets.Set[Key]{},
		objects:   map[replv1alpha1.ReplicatedKind]sets.Set[Key]{},
		firstSeen: map[Key]time.Time{},
		dirty:     map[string]sets.Set[Key]{},
	}
	for _, h := range opts.Hubs {
		metrics.HubReachable.WithLabelValues(h.Name()).Set(0) // until it is ready
		c.byName[h.Name()] = h
		c.renewed[h.Name()] = sets.New[string]()
		c.conflicts[h.Name()] = map[Key]mirror.Conflict{}
		c.copies[h.Name()] = sets.New[Key]()
		c.dirty[h.Name()] = sets.New[Key]()
	}
	for _, k := range opts.Kinds {
		c.kinds[k.Name] = k
		c.objects[k.Name] = sets.New[Key]()
	}
	return c, nil
}

// Run processes the queue with workers goroutines until ctx ends, and recomputes every cluster's direction
// every DirectionRecheck. It returns once every worker has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	defer func() {
		// Every worker has returned before Run does, so that a new controller never overlaps this one.
		c.queue.ShutDown()
		wg.Wait()
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
	if k.Name == replv1alpha1.KindManagedCluster {
		c.queue.Add(Key{Name: name})
	}
	if _, mirrored := c.kinds[k.Name]; !mirrored {
		return
	}
	key := Key{Kind: k.Name, Namespace: namespace, Name: name}
	if c.isSourceEvent(k, key, hub) {
		c.mu.Lock()
		if _, ok := c.firstSeen[key]; !ok {
			c.firstSeen[key] = c.opts.Clock.Now()
		}
		c.mu.Unlock()
	}
	c.queue.Add(key)
}

// isSourceEvent reports whether an event for key on hub comes from key's source (or its source is not known
// yet): only those start the replication lag clock, not the echo of the replicator's own writes.
func (c *Controller) isSourceEvent(k mirror.Kind, key Key, hub string) bool {
	cluster, perCluster := k.ClusterOf(key.Namespace, key.Name, c.isCluster)
	if perCluster {
		c.mu.Lock()
		src := c.sources[cluster].Hub
		c.mu.Unlock()
		return src == "" || src == hub
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
	c.mu.Lock()
	delete(c.firstSeen, key)
	c.mu.Unlock()
}

// clearDirty removes key from the out-of-step sets of hubs (every hub when hubs is nil), marking hubs caught
// up when it was their last.
func (c *Controller) clearDirty(key Key, hubs []string) {
	var caughtUp []string
	c.mu.Lock()
	for hub, dirty := range c.dirty {
		if hubs != nil && !slices.Contains(hubs, hub) {
			continue
		}
		if dirty != nil && dirty.Has(key) {
			dirty.Delete(key)
			if dirty.Len() == 0 {
				caughtUp = append(caughtUp, hub)
			}
		}
	}
	c.mu.Unlock()
	for _, hub := range caughtUp {
		c.markCaughtUp(hub)
	}
}

// OnLease implements hubconn.Handler.
func (c *Controller) OnLease(hub, cluster string, event hubconn.LeaseEvent) {
	c.mu.Lock()
	switch event {
	case hubconn.LeaseRenewed:
		c.renewed[hub].Insert(cluster)
	case hubconn.LeaseAdded:
		// A new lease (or the first listing of the hub): no renewal of it has been seen yet.
		c.renewed[hub].Delete(cluster)
	}
	c.mu.Unlock()
	c.queue.Add(Key{Name: cluster})
}

// OnState implements hubconn.Handler.
func (c *Controller) OnState(hub string, state hubconn.State, err error) {
	switch state {
	case hubconn.StateUnreachable:
		metrics.HubReachable.WithLabelValues(hub).Set(0)
		msg := "no answer"
		if err != nil {
			msg = err.Error()
		}
		c.opts.Recorder.Warningf(ReasonHubUnreachable, "hub %s is unreachable (%s); replication among the other hubs goes on", hub, msg)
		c.mu.Lock()
		c.copies[hub] = sets.New[Key]()
		c.conflicts[hub] = map[Key]mirror.Conflict{}
		c.mu.Unlock()
		for _, cluster := range c.knownClusters() {
			c.queue.Add(Key{Name: cluster})
		}
	case hubconn.StateReady:
		metrics.HubReachable.WithLabelValues(hub).Set(1)
		keys := c.allKeys()
		c.mu.Lock()
		// This hub, and every hub not caught up yet, must see every object known now.
		c.dirty[hub] = sets.New(keys...)
		for other, dirty := range c.dirty {
			if other != hub && dirty != nil {
				dirty.Insert(keys...)
			}
		}
		c.mu.Unlock()
		if len(keys) == 0 {
			c.markCaughtUp(hub)
		}
		c.opts.Recorder.Eventf(ReasonHubReady, "hub %s is ready: %d objects to check", hub, len(keys))
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
	if key.Kind == "" {
		err = c.syncDirection(key.Name)
	} else {
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

// catchUpGrace bounds how long a cluster's direction waits for a hub that just became ready to be caught up
// before it flips to that hub (see syncDirection).
const catchUpGrace = time.Minute

// syncDirection recomputes the source of cluster. When it changes, or when the cluster starts to be selected,
// every object of the cluster is enqueued. A flip to a hub that became ready less than catchUpGrace ago and is
// not caught up yet waits while the previous source is still ready: the returning hub first receives what
// changed on the previous source (a quick failback must not make its stale originals the source).
func (c *Controller) syncDirection(cluster string) error {
	now := c.opts.Clock.Now()
	views := make([]direction.HubView, 0, len(c.opts.Hubs))
	c.mu.Lock()
	prev := c.sources[cluster]
	renewed := map[string]bool{}
	for hub, clusters := range c.renewed {
		renewed[hub] = clusters.Has(cluster)
	}
	c.mu.Unlock()
	allReady, anyHas := true, false
	for _, h := range c.opts.Hubs {
		v := hubView(h, cluster, renewed[h.Name()])
		allReady = allReady && v.Reachable
		anyHas = anyHas || v.HasCluster
		views = append(views, v)
	}
	if allReady && !anyHas {
		// The cluster is gone from every hub.
		c.mu.Lock()
		delete(c.sources, cluster)
		delete(c.selected, cluster)
		for _, clusters := range c.renewed {
			clusters.Delete(cluster)
		}
		c.mu.Unlock()
		return nil
	}
	next := direction.DecideSource(prev, views, now)
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
	c.mu.Lock()
	c.sources[cluster] = next
	wasSelected := c.selected[cluster]
	c.selected[cluster] = selected
	c.mu.Unlock()
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

// selectedOn reports whether cluster's ManagedCluster on hub h matches the cluster selector.
func (c *Controller) selectedOn(h *hubconn.Hub, cluster string) bool {
	if h == nil {
		return false
	}
	mc := h.Get(replv1alpha1.KindManagedCluster, "", cluster)
	return mc != nil && c.opts.ClusterSelector.Matches(labels.Set(mc.GetLabels()))
}

// caughtUp reports whether hub has no out-of-step object left since it became ready.
func (c *Controller) caughtUp(hub string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dirty[hub] == nil
}

// hubView builds the direction view of cluster on hub h.
func hubView(h *hubconn.Hub, cluster string, renewed bool) direction.HubView {
	v := direction.HubView{Hub: h.Name(), Reachable: h.Ready(), LeaseDuration: direction.DefaultLeaseDuration}
	if !v.Reachable {
		return v
	}
	if mc := h.Get(replv1alpha1.KindManagedCluster, "", cluster); mc != nil {
		v.HasCluster = true
		v.IsCopy = mirror.IsCopy(mc)
		if seconds, found, _ := unstructured.NestedInt64(mc.Object, "spec", "leaseDurationSeconds"); found && seconds > 0 {
			v.LeaseDuration = time.Duration(seconds) * time.Second
		}
		annotations := mc.GetAnnotations()
		v.RecordedHub = annotations[mirror.AnnotationClusterHub]
		if t, err := time.Parse(time.RFC3339, annotations[mirror.AnnotationClusterHubSince]); err == nil {
			v.RecordedSince = t
		}
	}
	if renewTime, created, ok := h.Lease(cluster); ok {
		v.HasLease = true
		v.RenewTime = renewTime
		v.AgentRenewed = renewed || renewTime.Sub(created) > direction.CreationSlack
	}
	return v
}

// syncObject brings every ready target hub's object of key in step with the source hub's.
func (c *Controller) syncObject(ctx context.Context, key Key) error {
	k, ok := c.kinds[key.Kind]
	if !ok {
		return nil
	}
	source, extra, outcome := c.sourceOf(k, key)
	switch outcome {
	case sourceWait:
		// The source is not known or not ready yet: the key is enqueued again when that changes, and stays
		// out of step on the hubs that wait for it.
		c.logger.V(4).Info("No source to replicate from yet", "object", key.String())
		return nil
	case sourceNone:
		// Nothing is replicated for this key (its cluster is not selected).
		c.forget(key)
		return nil
	}
	src := source.Get(k.Name, key.Namespace, key.Name)
	if src == nil && !source.Serves(k.Name) {
		// The source stopped being ready between the check and the read: an empty cache is no delete.
		return nil
	}
	if mirror.Excluded(k, src) {
		c.forget(key)
		return nil
	}

	c.mu.Lock()
	if src != nil {
		c.objects[k.Name].Insert(key)
	} else {
		c.objects[k.Name].Delete(key)
	}
	seen, hasSeen := c.firstSeen[key]
	c.mu.Unlock()

	var errs []error
	if k.Name == replv1alpha1.KindManagedCluster && src != nil {
		if cleaned := mirror.SourceCleanup(src); cleaned != nil {
			err := c.update(ctx, source, k, cleaned)
			source.ReportError(err)
			if err != nil {
				metrics.WriteErrors.WithLabelValues(string(k.Name), source.Name()).Inc()
				errs = append(errs, fmt.Errorf("removing the cluster-hub annotations on source hub %s: %w", source.Name(), err))
			}
		}
	}
	// The source holds originals: neither copies nor conflicts are counted there for this key.
	c.setCopy(source.Name(), key, false)
	c.recordConflict(k, key, source.Name(), mirror.ConflictNone)
	compared := []string{source.Name()}
	for _, target := range c.opts.Hubs {
		if target == source || !target.Serves(k.Name) {
			continue
		}
		if err := c.syncTarget(ctx, k, key, source, target, src, extra, seen, hasSeen); err != nil {
			errs = append(errs, err)
			continue
		}
		compared = append(compared, target.Name())
	}
	c.clearDirty(key, compared)
	if len(errs) > 0 {
		return fmt.Errorf("%s: %w", key, errors.Join(errs...))
	}
	c.mu.Lock()
	if c.firstSeen[key] == seen {
		delete(c.firstSeen, key)
	}
	c.mu.Unlock()
	return nil
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

// sourceOf returns the source hub of key and the extra annotations of its copies, or why there is none.
// Hub-wide objects come from the first hub in spec order that answers; while that hub is still listing after
// it came back, nothing flows (no other hub becomes the source for that moment).
func (c *Controller) sourceOf(k mirror.Kind, key Key) (*hubconn.Hub, map[string]string, sourceOutcome) {
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
	c.mu.Lock()
	src := c.sources[cluster]
	c.mu.Unlock()
	if src.Hub == "" {
		return nil, nil, sourceWait
	}
	source := c.byName[src.Hub]
	if source == nil || !source.Serves(k.Name) {
		return nil, nil, sourceWait
	}
	mc := source.Get(replv1alpha1.KindManagedCluster, "", cluster)
	if mc == nil {
		// The cluster is gone from its source: only the ManagedCluster itself (its delete) is mirrored.
		if k.Name != replv1alpha1.KindManagedCluster {
			return nil, nil, sourceWait
		}
	} else if !c.opts.ClusterSelector.Matches(labels.Set(mc.GetLabels())) {
		return nil, nil, sourceNone
	}
	var extra map[string]string
	if k.Name == replv1alpha1.KindManagedCluster {
		extra = map[string]string{
			mirror.AnnotationClusterHub:      src.Hub,
			mirror.AnnotationClusterHubSince: src.Since.UTC().Format(time.RFC3339),
		}
	}
	return source, extra, sourceOK
}

// syncTarget applies mirror.Decide for one target hub.
func (c *Controller) syncTarget(ctx context.Context, k mirror.Kind, key Key, source, target *hubconn.Hub,
	src *unstructured.Unstructured, extra map[string]string, seen time.Time, hasSeen bool) error {
	tgt := target.Get(k.Name, key.Namespace, key.Name)
	d := mirror.Decide(k, src, tgt, source.Name(), target.Name(), extra)
	c.logger.V(4).Info("Decided", "object", key.String(), "source", source.Name(), "target", target.Name(),
		"action", d.Action, "conflict", d.Conflict, "adopted", d.Adopted)
	c.recordConflict(k, key, target.Name(), d.Conflict)

	var err error
	switch d.Action {
	case mirror.ActionNone:
		c.setCopy(target.Name(), key, tgt != nil && mirror.IsCopy(tgt) && d.Conflict == mirror.ConflictNone)
		return nil
	case mirror.ActionCreate:
		err = c.create(ctx, target, k, d.Object)
	case mirror.ActionUpdate:
		err = c.update(ctx, target, k, d.Object)
	case mirror.ActionDelete:
		err = c.delete(ctx, target, k, tgt)
	}
	target.ReportError(err)
	if err != nil {
		metrics.WriteErrors.WithLabelValues(string(k.Name), target.Name()).Inc()
		return fmt.Errorf("%s on hub %s: %w", d.Action, target.Name(), err)
	}
	metrics.ObjectsMirrored.WithLabelValues(string(k.Name), target.Name(), string(d.Action)).Inc()
	if hasSeen {
		metrics.ReplicationLag.WithLabelValues(string(k.Name), target.Name()).Observe(c.opts.Clock.Since(seen).Seconds())
	}
	c.setCopy(target.Name(), key, d.Action != mirror.ActionDelete)
	if d.Adopted {
		c.logger.Info("Took over the original of a copy", "hub", target.Name(), "object", key.String(), "source", source.Name())
	}
	return nil
}

func (c *Controller) create(ctx context.Context, h *hubconn.Hub, k mirror.Kind, obj *unstructured.Unstructured) error {
	client := h.Client().Resource(k.GVR).Namespace(obj.GetNamespace())
	_, err := client.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
	if apierrors.IsNotFound(err) && k.Namespaced {
		// The namespace is missing on the target (a cluster namespace the hub has not made yet, or a
		// user namespace): create it, then the copy.
		ns := &unstructured.Unstructured{Object: map[string]any{}}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName(obj.GetNamespace())
		if _, nsErr := h.Client().Resource(mirror.NamespaceGVR).Create(ctx, ns, metav1.CreateOptions{FieldManager: FieldManager}); nsErr != nil && !apierrors.IsAlreadyExists(nsErr) {
			return fmt.Errorf("creating namespace %s: %w", obj.GetNamespace(), nsErr)
		}
		_, err = client.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
	}
	return err
}

func (c *Controller) update(ctx context.Context, h *hubconn.Hub, k mirror.Kind, obj *unstructured.Unstructured) error {
	_, err := h.Client().Resource(k.GVR).Namespace(obj.GetNamespace()).Update(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
	return err
}

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
	c.mu.Lock()
	prev, had := c.conflicts[hub][key]
	if conflict == mirror.ConflictNone {
		delete(c.conflicts[hub], key)
	} else {
		c.conflicts[hub][key] = conflict
	}
	c.mu.Unlock()
	if conflict == mirror.ConflictNone || (had && prev == conflict) {
		return
	}
	metrics.Conflicts.WithLabelValues(string(k.Name), hub, string(conflict)).Inc()
	switch conflict {
	case mirror.ConflictForeignObject:
		c.opts.Recorder.Warningf(ReasonReplicationConflict, "%s on hub %s was not made by the replicator: left alone, not replicated there", key, hub)
	case mirror.ConflictCopyModified:
		c.opts.Recorder.Warningf(ReasonReplicationConflict, "%s on hub %s was changed there since the replicator wrote it: overwritten from the source hub", key, hub)
	}
}

func (c *Controller) setCopy(hub string, key Key, isCopy bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if isCopy {
		c.copies[hub].Insert(key)
	} else {
		c.copies[hub].Delete(key)
	}
}

func (c *Controller) markCaughtUp(hub string) {
	c.mu.Lock()
	already := c.dirty[hub] == nil
	c.dirty[hub] = nil
	c.mu.Unlock()
	if !already {
		c.opts.Recorder.Eventf(ReasonHubCaughtUp, "hub %s is caught up", hub)
	}
}

// isCluster reports whether name is a managed cluster on any ready hub.
func (c *Controller) isCluster(name string) bool {
	c.mu.Lock()
	_, known := c.sources[name]
	c.mu.Unlock()
	if known {
		return true
	}
	for _, h := range c.opts.Hubs {
		if h.Ready() && h.Get(replv1alpha1.KindManagedCluster, "", name) != nil {
			return true
		}
	}
	return false
}

// knownClusters returns the names of the ManagedClusters on every ready hub and of the clusters with a source.
func (c *Controller) knownClusters() []string {
	names := sets.New[string]()
	c.mu.Lock()
	for cluster := range c.sources {
		names.Insert(cluster)
	}
	c.mu.Unlock()
	for _, h := range c.opts.Hubs {
		for _, mc := range h.List(replv1alpha1.KindManagedCluster, "") {
			names.Insert(mc.Name)
		}
	}
	return sets.List(names)
}

// allKeys returns the keys of every mirrored object on every hub.
func (c *Controller) allKeys() []Key {
	keys := sets.New[Key]()
	for _, h := range c.opts.Hubs {
		for name := range c.kinds {
			for _, obj := range h.List(name, "") {
				keys.Insert(Key{Kind: name, Namespace: obj.Namespace, Name: obj.Name})
			}
		}
	}
	return keys.UnsortedList()
}

// clusterKeys returns the keys of cluster's ManagedCluster and of every mirrored object in its namespace, on
// every hub.
func (c *Controller) clusterKeys(cluster string) []Key {
	keys := sets.New[Key]()
	if _, ok := c.kinds[replv1alpha1.KindManagedCluster]; ok {
		keys.Insert(Key{Kind: replv1alpha1.KindManagedCluster, Name: cluster})
	}
	for _, h := range c.opts.Hubs {
		for name, k := range c.kinds {
			if !k.Namespaced {
				continue
			}
			for _, obj := range h.List(name, cluster) {
				keys.Insert(Key{Kind: name, Namespace: obj.Namespace, Name: obj.Name})
			}
		}
	}
	return keys.UnsortedList()
}

// Snapshot is the controller's state for the status of the ReplicationConfig.
type Snapshot struct {
	// Clusters is the number of selected clusters with a known source.
	Clusters int
	// SourceClusters counts the selected clusters by source hub.
	SourceClusters map[string]int
	// Copies and Conflicts count, by hub, the copies in step and the conflicts.
	Copies, Conflicts map[string]int
	// CaughtUp is true for hubs that have no out-of-step object left since they became ready.
	CaughtUp map[string]bool
	// KindObjects and KindConflicts count source objects and conflicts by kind.
	KindObjects, KindConflicts map[replv1alpha1.ReplicatedKind]int
}

// Snapshot returns the current counts.
func (c *Controller) Snapshot() Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Snapshot{
		SourceClusters: map[string]int{}, Copies: map[string]int{}, Conflicts: map[string]int{},
		CaughtUp: map[string]bool{}, KindObjects: map[replv1alpha1.ReplicatedKind]int{},
		KindConflicts: map[replv1alpha1.ReplicatedKind]int{},
	}
	for cluster, src := range c.sources {
		if src.Hub != "" && c.selected[cluster] {
			s.Clusters++
			s.SourceClusters[src.Hub]++
		}
	}
	for hub, keys := range c.copies {
		s.Copies[hub] = keys.Len()
		s.CaughtUp[hub] = c.dirty[hub] == nil
	}
	for hub, conflicts := range c.conflicts {
		s.Conflicts[hub] = len(conflicts)
		for key := range conflicts {
			s.KindConflicts[key.Kind]++
		}
	}
	for kind, keys := range c.objects {
		s.KindObjects[kind] = keys.Len()
	}
	return s
}

// Sources returns each known cluster's source hub, sorted by cluster name (for logs and tests).
func (c *Controller) Sources() [][2]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([][2]string, 0, len(c.sources))
	for cluster, src := range c.sources {
		out = append(out, [2]string{cluster, src.Hub})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}
