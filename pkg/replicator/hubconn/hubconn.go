// Package hubconn is the replicator's connection to one hub: a dynamic client, the informers over the
// mirrored kinds, the ManagedClusters and the clusters' leases, and a reachability probe that starts the
// informers when the hub answers and drops them (and their caches) when it stops answering, so that a hub
// that comes back is listed afresh — including the deletes that happened while it was away — before it counts
// as ready.
//
// States: Unreachable (the probe failed; no informers) → Syncing (the probe succeeded; informers listing) →
// Ready (every informer synced) → Unreachable (a probe failed).
package hubconn

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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// State is the connection state of a hub.
type State string

const (
	// StateUnreachable: the last probe failed (or none has run); the hub has no informers.
	StateUnreachable State = "Unreachable"
	// StateSyncing: the last probe succeeded and the informers are listing.
	StateSyncing State = "Syncing"
	// StateReady: the last probe succeeded and every informer has synced; the caches reflect the hub.
	StateReady State = "Ready"
)

// Handler hears what happens on a hub. Calls come from informer and probe goroutines; they must not block.
type Handler interface {
	// OnObject is called for every add, update and delete of a mirrored object (kind k), of a ManagedCluster
	// (k.Name is KindManagedCluster even when that kind is not mirrored) and of a ClusterManagementAddOn while
	// ManagedClusterAddOns are mirrored (likewise).
	OnObject(hub string, k mirror.Kind, namespace, name string)
	// OnLease is called when a cluster's managed-cluster-lease is added or updated.
	OnLease(hub, cluster string, event LeaseEvent)
	// OnState is called when the hub's State changes; err is the probe error for StateUnreachable.
	OnState(hub string, state State, err error)
}

// LeaseEvent is what happened to a cluster's managed-cluster-lease.
type LeaseEvent string

const (
	// LeaseAdded: the lease appeared (created, or listed when the informer started).
	LeaseAdded LeaseEvent = "Added"
	// LeaseRenewed: an update moved spec.renewTime forward (an agent renewed it).
	LeaseRenewed LeaseEvent = "Renewed"
	// LeaseUpdated: any other update.
	LeaseUpdated LeaseEvent = "Updated"
)

// Options configure a Hub.
type Options struct {
	// Name is the hub's name (ReplicationConfig spec.hubs[].name).
	Name string
	// Server is the hub's API server URL, for status.
	Server string
	// Client is a dynamic client for the hub.
	Client dynamic.Interface
	// Kinds are the mirrored kinds to watch. The ManagedCluster informer runs whether or not
	// KindManagedCluster is among them.
	Kinds []mirror.Kind
	// ProbeInterval is how often the hub is probed (a LIST of one ManagedCluster); ProbeTimeout bounds each probe.
	ProbeInterval, ProbeTimeout time.Duration
	// Handler hears events; required.
	Handler Handler
	// Clock drives the probe ticker and stamps state transitions.
	Clock clock.WithTicker
	// Fenced says that the replicator's fence keeps users out of a cluster's namespace on a hub that is not the
	// cluster's source (replication Options.Fencing): a copy deleted there is then a loss, not a user's delete
	// (recordDelete). Without the fence, a user may delete a copy anywhere, and every delete is one.
	Fenced bool
}

// Hub is the connection to one hub. Create it with New and run it with Run.
type Hub struct {
	opts Options

	mu             sync.RWMutex
	state          State
	lastErr        error
	lastTransition time.Time
	stopInformers  context.CancelFunc
	informers      map[failoverv1alpha1.ReplicatedKind]cache.SharedIndexInformer
	leases         cache.SharedIndexInformer
	generation     int

	// wholeMu guards keepWhole and fetched.
	wholeMu sync.Mutex
	// keepWhole holds the copies that Get was asked for whole: the informers cache them whole from their next
	// event on, instead of without their mirrored fields.
	keepWhole sets.Set[objectKey]
	// fetched holds the copies Get read from the hub, whole, until the informer's next event for them: valid
	// while the informer's entry has the same resourceVersion.
	fetched map[objectKey]*cachedObject

	// deletesMu guards deletes and pruned.
	deletesMu sync.Mutex
	// deletes holds the deletes a live watch delivered (recordDelete), until an object of that name appears
	// again or DeleteMemory passed (they are matched by UID: mirror.Deleted.Explains). They outlive the hub's
	// caches: a delete seen stays seen.
	deletes map[objectKey]seenDelete
	// ownDeletes holds the deletes the replicator itself made (ExpectDelete), by object and UID, until
	// DeleteMemory passed: they are not a user's deletes on this hub, and an object of that UID a cache shows is
	// on its way out (DeleteSent).
	ownDeletes map[objectKey]seenDelete
	// pruned is when deletes and ownDeletes were last cleared of entries older than DeleteMemory.
	pruned time.Time
}

// DeleteMemory is how long a Hub remembers a delete its watch delivered (Deleted): long enough for a hub that held
// a copy to come back from an outage of that length and have the copy deleted; a delete older than that (or one
// made before the replicator's last start) leaves the copy in place, reported (mirror.ConflictSourceMissing). The
// kinds that hold deletes (mirror.HoldsDeletes) need little of it: their finalizer keeps the delete of an original
// on the hub, and the delete of a copy made before the hold reached it is recorded as a tombstone where it was
// seen (mirror.AnnotationDeletesSeen), which Deleted also reads.
const DeleteMemory = time.Hour

// seenDelete is one delete a hub's watch delivered, and when the replicator saw it (its own clock).
type seenDelete struct {
	deleted mirror.Deleted
	at      time.Time
}

// objectKey names one object of a mirrored kind on a hub.
type objectKey struct {
	kind            failoverv1alpha1.ReplicatedKind
	namespace, name string
}

// New returns a Hub in StateUnreachable. It fails when a required option is missing.
func New(opts Options) (*Hub, error) {
	switch {
	case opts.Name == "":
		return nil, fmt.Errorf("hubconn: Options.Name is required")
	case opts.Client == nil:
		return nil, fmt.Errorf("hubconn: Options.Client is required (hub %s)", opts.Name)
	case opts.Handler == nil:
		return nil, fmt.Errorf("hubconn: Options.Handler is required (hub %s)", opts.Name)
	case opts.ProbeInterval <= 0:
		return nil, fmt.Errorf("hubconn: Options.ProbeInterval must be positive (hub %s)", opts.Name)
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = opts.ProbeInterval
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Hub{opts: opts, state: StateUnreachable, lastErr: errNotProbed,
		keepWhole: sets.New[objectKey](), fetched: map[objectKey]*cachedObject{}, deletes: map[objectKey]seenDelete{},
		ownDeletes: map[objectKey]seenDelete{}}, nil
}

// Name returns the hub's name.
func (h *Hub) Name() string { return h.opts.Name }

// Server returns the hub's API server URL.
func (h *Hub) Server() string { return h.opts.Server }

// Client returns the hub's dynamic client.
func (h *Hub) Client() dynamic.Interface { return h.opts.Client }

// State returns the hub's state, the last probe or request error (nil after a success) and when the state
// last changed.
func (h *Hub) State() (State, error, time.Time) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.state, h.lastErr, h.lastTransition
}

// errNotProbed is the error of a hub that no probe has answered or failed yet.
var errNotProbed = errors.New("not probed yet")

// Settled reports whether the hub's state is known: Ready, or Unreachable after a probe. A hub still listing
// (StateSyncing), or not probed yet, may hold objects the replicator has not seen.
func (h *Hub) Settled() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.state == StateReady || (h.state == StateUnreachable && !errors.Is(h.lastErr, errNotProbed))
}

// Ready reports whether the hub is in StateReady.
func (h *Hub) Ready() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.state == StateReady
}

// Run probes the hub every ProbeInterval until ctx ends, starting and stopping the informers as the hub comes
// and goes. It returns when ctx is done, with the informers stopped.
func (h *Hub) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("hub", h.opts.Name)
	defer h.setUnreachable(fmt.Errorf("replication stopped"), false)
	ticker := h.opts.Clock.NewTicker(h.opts.ProbeInterval)
	defer ticker.Stop()
	for {
		err := h.probe(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			if h.setUnreachable(err, true) {
				logger.Info("Hub unreachable", "err", err.Error())
			}
		default:
			h.ensureInformers(ctx, logger)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
	}
}

// ReportError records the outcome of a request to the hub: a nil err clears the last error of a ready hub;
// any other error becomes the last error (status.hubs[].lastError), and a connection error (the hub does not
// answer) makes the hub unreachable at once, without waiting for the next probe.
func (h *Hub) ReportError(err error) {
	if err == nil {
		h.mu.Lock()
		if h.state == StateReady {
			h.lastErr = nil
		}
		h.mu.Unlock()
		return
	}
	if !isConnectionError(err) {
		h.mu.Lock()
		h.lastErr = err
		h.mu.Unlock()
		return
	}
	if h.setUnreachable(err, true) {
		klog.Background().Info("Hub unreachable", "hub", h.opts.Name, "err", err.Error())
	}
}

// fetchTimeout bounds Get's read of a copy from the hub.
const fetchTimeout = 30 * time.Second

// Get returns the object of kind k (a mirrored kind or ManagedCluster) at namespace/name, whole, or nil when it
// is absent or the hub is not ready. It is read from the cache; a copy the cache holds without its mirrored
// fields is read from the hub (one GET, bounded by fetchTimeout) and is cached whole from its next event on.
// The error is that GET's, or ErrCacheBehind (wrapped) when the hub holds another version than the cache, or
// none: what Get returns is always the version the cache holds, so that it agrees with LastWrite.
func (h *Hub) Get(ctx context.Context, k failoverv1alpha1.ReplicatedKind, namespace, name string) (*unstructured.Unstructured, error) {
	switch o := h.cached(k, namespace, name).(type) {
	case *cachedObject:
		if o.whole() {
			return o.object(), nil
		}
		return h.fetchWhole(ctx, k, o)
	case *unstructured.Unstructured:
		return o, nil
	}
	return nil, nil
}

// Peek returns the cached object of kind k at namespace/name as the cache holds it, or nil when it is absent
// or the hub is not ready. For a copy held without its mirrored fields (mirror.WithoutContent), contentHash is
// the hash of those fields (what mirror.Decide takes as tgtHash); for a whole object it is "". Peek never reads
// from the hub: it is for the object's metadata and for comparing a target's copy.
func (h *Hub) Peek(k failoverv1alpha1.ReplicatedKind, namespace, name string) (obj *unstructured.Unstructured, contentHash string) {
	switch o := h.cached(k, namespace, name).(type) {
	case *cachedObject:
		return o.object(), o.contentHash
	case *unstructured.Unstructured:
		return o, ""
	}
	return nil, ""
}

// Cluster returns the facts of the cached ManagedCluster name (see Cluster; its Labels must not be modified)
// and whether the hub is ready and holds it. It decodes nothing.
func (h *Hub) Cluster(name string) (Cluster, bool) {
	if c, ok := h.cached(failoverv1alpha1.KindManagedCluster, "", name).(*cachedObject); ok && c.cluster != nil {
		return *c.cluster, true
	}
	return Cluster{}, false
}

// AddOnInstall reports whether the hub is ready and holds ClusterManagementAddOn name (known), and whether
// that object has the hub's add-on manager make and delete the ManagedClusterAddOns of that name
// (installs, mirror.InstallsByStrategy). It decodes nothing; both are false when the hub holds no such
// ClusterManagementAddOn or does not serve the kind.
func (h *Hub) AddOnInstall(name string) (installs, known bool) {
	c, ok := h.cached(failoverv1alpha1.KindClusterManagementAddOn, "", name).(*cachedObject)
	return ok && c.installsByStrategy, ok
}

// fetchWhole returns copy c of kind k whole: from fetched when the hub was read at c's resourceVersion, else
// read from the hub. Either way the key joins keepWhole, so that the informer caches the object whole from its
// next event on.
func (h *Hub) fetchWhole(ctx context.Context, k failoverv1alpha1.ReplicatedKind, c *cachedObject) (*unstructured.Unstructured, error) {
	key := objectKey{kind: k, namespace: c.namespace, name: c.name}
	h.wholeMu.Lock()
	h.keepWhole.Insert(key)
	f := h.fetched[key]
	h.wholeMu.Unlock()
	if f != nil && f.resourceVersion == c.resourceVersion {
		return f.object(), nil
	}
	kinds := h.watchedKinds()
	i := slices.IndexFunc(kinds, func(wk mirror.Kind) bool { return wk.Name == k })
	if i < 0 {
		return nil, fmt.Errorf("hubconn: kind %s is not watched on hub %s", k, h.opts.Name)
	}
	mk := kinds[i]
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	live, err := h.opts.Client.Resource(mk.GVR).Namespace(c.namespace).Get(ctx, c.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading %s %s/%s from hub %s: not found: %w", k, c.namespace, c.name, h.opts.Name, ErrCacheBehind)
	case err != nil:
		return nil, fmt.Errorf("reading %s %s/%s from hub %s: %w", k, c.namespace, c.name, h.opts.Name, err)
	case live.GetResourceVersion() != c.resourceVersion:
		return nil, fmt.Errorf("reading %s %s/%s from hub %s: resourceVersion %s, cached %s: %w", k, c.namespace, c.name,
			h.opts.Name, live.GetResourceVersion(), c.resourceVersion, ErrCacheBehind)
	}
	compacted, err := compact(live, &mk, nil)
	if err != nil {
		return nil, err
	}
	whole := compacted.(*cachedObject)
	h.wholeMu.Lock()
	h.fetched[key] = whole
	h.wholeMu.Unlock()
	return whole.object(), nil
}

// keepsWhole reports whether the informer of kind k caches the copy at namespace/name whole.
func (h *Hub) keepsWhole(k failoverv1alpha1.ReplicatedKind, namespace, name string) bool {
	h.wholeMu.Lock()
	defer h.wholeMu.Unlock()
	return h.keepWhole.Has(objectKey{kind: k, namespace: namespace, name: name})
}

// ForgetWhole lets the informer of kind k cache the copy at namespace/name without its mirrored fields again
// from its next event on: the replicator wrote it as a copy of another hub's object.
func (h *Hub) ForgetWhole(k failoverv1alpha1.ReplicatedKind, namespace, name string) {
	h.dropFetched(k, namespace, name, true)
}

// dropFetched forgets what fetchWhole read of the object at namespace/name, on its informer's next event;
// deleted also drops it from keepWhole.
func (h *Hub) dropFetched(k failoverv1alpha1.ReplicatedKind, namespace, name string, deleted bool) {
	key := objectKey{kind: k, namespace: namespace, name: name}
	h.wholeMu.Lock()
	defer h.wholeMu.Unlock()
	delete(h.fetched, key)
	if deleted {
		h.keepWhole.Delete(key)
	}
}

// Deleted returns the delete of the object of kind k at namespace/name that the hub's watch delivered while the
// replicator watched it, within DeleteMemory, else the tombstone of it the replicator recorded on the cluster's
// ManagedCluster here (mirror.AnnotationDeletesSeen, for an object in a cluster's namespace: it outlives a
// restart); nil when there is neither. A hub restored from a backup, rebuilt, or listed again after an outage
// shows its missing objects as absent, never as deleted.
func (h *Hub) Deleted(k failoverv1alpha1.ReplicatedKind, namespace, name string) *mirror.Deleted {
	h.deletesMu.Lock()
	seen, ok := h.deletes[objectKey{kind: k, namespace: namespace, name: name}]
	h.deletesMu.Unlock()
	if ok && h.opts.Clock.Since(seen.at) <= DeleteMemory {
		deleted := seen.deleted
		return &deleted
	}
	if namespace == "" {
		return nil
	}
	// A tombstone the replicator recorded on the cluster's ManagedCluster here, before a restart.
	if c, ok := h.Cluster(namespace); ok {
		if deleted, ok := c.Tombstones[mirror.TombstoneKey(k, name)]; ok {
			return &deleted
		}
	}
	return nil
}

// ExpectDelete tells h that the replicator is about to delete the object of kind k at namespace/name whose
// metadata.uid is uid (a copy, or an original its cluster's new source deleted): its delete event is not a
// delete a user made on h, and Deleted does not report it, also if h becomes the object's source later.
func (h *Hub) ExpectDelete(k failoverv1alpha1.ReplicatedKind, namespace, name string, uid types.UID) {
	h.deletesMu.Lock()
	defer h.deletesMu.Unlock()
	now := h.opts.Clock.Now()
	h.ownDeletes[objectKey{kind: k, namespace: namespace, name: name}] = seenDelete{deleted: mirror.Deleted{UID: string(uid)}, at: now}
	h.pruneDeletesLocked(now)
}

// DeleteSent reports whether the replicator sent a delete of the object of kind k at namespace/name whose
// metadata.uid is uid (ExpectDelete) within DeleteMemory: a cache that shows that object has not caught up
// with the delete yet, or shows what its finalizers hold. It is kept after the delete event came, so that a
// cache read before that event and this call after it agree.
func (h *Hub) DeleteSent(k failoverv1alpha1.ReplicatedKind, namespace, name string, uid types.UID) bool {
	h.deletesMu.Lock()
	defer h.deletesMu.Unlock()
	own, ok := h.ownDeletes[objectKey{kind: k, namespace: namespace, name: name}]
	return ok && own.deleted.UID == string(uid) && h.opts.Clock.Since(own.at) <= DeleteMemory
}

// recordDelete remembers obj's delete (its uid and mirror.AnnotationSourceUID) when seen is true — unless obj is
// a copy lost on a fenced standby (below) —, and forgets any earlier delete of that name otherwise (the name holds an
// object again). When a delete is recorded, entries
// older than DeleteMemory are dropped (pruneDeletesLocked).
func (h *Hub) recordDelete(k failoverv1alpha1.ReplicatedKind, n cache.ObjectName, obj any, seen bool) {
	key := objectKey{kind: k, namespace: n.Namespace, name: n.Name}
	now := h.opts.Clock.Now()
	var u *unstructured.Unstructured
	if seen {
		switch o := obj.(type) {
		case *cachedObject:
			u = o.object()
		case *unstructured.Unstructured:
			u = o
		}
	}
	// With the fence, a copy deleted on a hub whose ManagedCluster of the cluster records another hub as the
	// cluster's (mirror.AnnotationClusterHub, the mark of a standby, whose namespace the fence keeps users out of)
	// was lost — its namespace deleted, a person's override of the fence, the hub rebuilt —, not deleted by a
	// user of the cluster: were the hub to become the cluster's source, it must not delete the originals. (On the
	// hub the cluster moved to, the mark stays until the replicator's next sync of the ManagedCluster; users are
	// kept out there until the copies are held, and a held copy's delete is seen while it is held.) Read before
	// deletesMu is taken (Cluster takes the hub's lock).
	standbyCopy := false
	if h.opts.Fenced && u != nil && mirror.IsCopy(u) && n.Namespace != "" {
		if c, ok := h.Cluster(n.Namespace); ok && c.RecordedHub != "" && c.RecordedHub != h.opts.Name {
			standbyCopy = true
		}
	}
	h.deletesMu.Lock()
	defer h.deletesMu.Unlock()
	if !seen || standbyCopy {
		if standbyCopy {
			klog.V(4).InfoS("Copy lost on a standby: no delete", "hub", h.opts.Name, "kind", k, "namespace", n.Namespace, "name", n.Name)
		}
		delete(h.deletes, key)
		return
	}
	if u == nil {
		return
	}
	if own, ok := h.ownDeletes[key]; ok && own.deleted.UID == string(u.GetUID()) {
		// The replicator's own delete.
		return
	}
	h.deletes[key] = seenDelete{deleted: mirror.DeletedOf(u), at: now}
	klog.V(4).InfoS("Delete seen", "hub", h.opts.Name, "kind", k, "namespace", n.Namespace, "name", n.Name, "uid", u.GetUID())
	h.pruneDeletesLocked(now)
}

// pruneDeletesLocked drops the deletes and own deletes older than DeleteMemory, at most once a minute (Deleted
// and DeleteSent ignore them meanwhile). h.deletesMu is held.
func (h *Hub) pruneDeletesLocked(now time.Time) {
	if now.Sub(h.pruned) < time.Minute {
		return
	}
	h.pruned = now
	for _, m := range []map[objectKey]seenDelete{h.deletes, h.ownDeletes} {
		for k, d := range m {
			if now.Sub(d.at) > DeleteMemory {
				delete(m, k)
			}
		}
	}
}

// LastWrite returns the time of the last write by a user of the cached object of kind k (mirror.LastWrite,
// read from its managedFields before the cache dropped them), or the zero time when the hub is not ready or
// does not hold it.
func (h *Hub) LastWrite(k failoverv1alpha1.ReplicatedKind, namespace, name string) time.Time {
	switch o := h.cached(k, namespace, name).(type) {
	case *cachedObject:
		return o.lastWrite
	case *unstructured.Unstructured:
		return mirror.LastWrite(o)
	}
	return time.Time{}
}

// cached returns what the informer of kind k stores at namespace/name (a *cachedObject, or what passed the
// transform unchanged), or nil when it is absent or the hub is not ready.
func (h *Hub) cached(k failoverv1alpha1.ReplicatedKind, namespace, name string) any {
	h.mu.RLock()
	inf := h.informers[k]
	ready := h.state == StateReady
	h.mu.RUnlock()
	if inf == nil || !ready {
		return nil
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, ok, err := inf.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return nil
	}
	return obj
}

// Objects returns how many objects of the mirrored kinds the hub's caches hold (originals, copies and objects of
// the hub's own), and false when the hub is not ready. It lists every cache's keys: call it seldom.
func (h *Hub) Objects() (int, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.state != StateReady {
		return 0, false
	}
	n := 0
	for _, inf := range h.informers {
		n += len(inf.GetStore().ListKeys())
	}
	return n, true
}

// List returns the names of the cached objects of kind k in namespace ("" for all namespaces); nil when the
// hub is not ready.
func (h *Hub) List(k failoverv1alpha1.ReplicatedKind, namespace string) []cache.ObjectName {
	h.mu.RLock()
	inf := h.informers[k]
	ready := h.state == StateReady
	h.mu.RUnlock()
	if inf == nil || !ready {
		return nil
	}
	var items []any
	if namespace == "" {
		items = inf.GetIndexer().List()
	} else {
		items, _ = inf.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
	}
	out := make([]cache.ObjectName, 0, len(items))
	for _, item := range items {
		if n, ok := objectName(item); ok {
			out = append(out, n)
		}
	}
	return out
}

// Lease returns the spec.renewTime and the creation time of cluster's cached managed-cluster-lease, and
// false when the hub has no such lease, or it has no renewTime, or the hub is not ready.
func (h *Hub) Lease(cluster string) (renewTime, created time.Time, ok bool) {
	h.mu.RLock()
	inf := h.leases
	ready := h.state == StateReady
	h.mu.RUnlock()
	if inf == nil || !ready {
		return time.Time{}, time.Time{}, false
	}
	obj, found, err := inf.GetIndexer().GetByKey(cluster + "/" + direction.LeaseName)
	if err != nil || !found {
		return time.Time{}, time.Time{}, false
	}
	c, isCached := obj.(*cachedObject)
	if !isCached || c.lease == nil || !c.lease.set {
		return time.Time{}, time.Time{}, false
	}
	return c.lease.renewTime, c.lease.created, true
}

// probe lists at most one ManagedCluster: the hub answers, the identity is authenticated and may read
// ManagedClusters.
func (h *Hub) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, h.opts.ProbeTimeout)
	defer cancel()
	mc, _ := mirror.KindByName(failoverv1alpha1.KindManagedCluster)
	_, err := h.opts.Client.Resource(mc.GVR).List(ctx, metav1.ListOptions{Limit: 1})
	return err
}

// ensureInformers starts the informers when none run, and moves the hub to StateReady once they synced.
func (h *Hub) ensureInformers(ctx context.Context, logger klog.Logger) {
	h.mu.RLock()
	running := h.stopInformers != nil
	h.mu.RUnlock()
	if running {
		return
	}
	// A kind whose resource the hub does not serve (its CRD is not installed) is left out on this hub:
	// an informer on it would never sync and keep the hub from ever becoming ready.
	kinds, missing, err := h.servedKinds(ctx)
	if err != nil {
		if h.setUnreachable(err, true) {
			logger.Info("Hub unreachable", "err", err.Error())
		}
		return
	}
	for _, k := range missing {
		logger.Info("Hub does not serve a replicated kind: it is not replicated to or from this hub", "kind", k, "hub", h.opts.Name)
	}

	h.mu.Lock()
	if h.stopInformers != nil {
		h.mu.Unlock()
		return
	}
	infCtx, cancel := context.WithCancel(ctx)
	h.stopInformers = cancel
	h.generation++
	generation := h.generation
	h.informers = map[failoverv1alpha1.ReplicatedKind]cache.SharedIndexInformer{}
	for _, k := range kinds {
		h.informers[k.Name] = h.newInformer(k)
	}
	h.leases = h.newLeaseInformer()
	all := make([]cache.SharedIndexInformer, 0, len(h.informers)+1)
	for _, inf := range h.informers {
		all = append(all, inf)
	}
	all = append(all, h.leases)
	h.state, h.lastErr, h.lastTransition = StateSyncing, nil, h.opts.Clock.Now()
	h.mu.Unlock()
	h.opts.Handler.OnState(h.opts.Name, StateSyncing, nil)
	logger.Info("Hub reachable, listing")

	synced := make([]cache.InformerSynced, 0, len(all))
	for _, inf := range all {
		go inf.Run(infCtx.Done())
		synced = append(synced, inf.HasSynced)
	}
	go func() {
		if !cache.WaitForCacheSync(infCtx.Done(), synced...) {
			return
		}
		h.mu.Lock()
		if h.generation != generation || h.state != StateSyncing {
			h.mu.Unlock()
			return
		}
		h.state, h.lastTransition = StateReady, h.opts.Clock.Now()
		h.mu.Unlock()
		logger.Info("Hub ready: caches synced")
		h.opts.Handler.OnState(h.opts.Name, StateReady, nil)
	}()
}

// setUnreachable moves the hub to StateUnreachable, stopping the informers; it reports whether the state
// changed. notify says whether the Handler hears of it.
func (h *Hub) setUnreachable(err error, notify bool) bool {
	h.mu.Lock()
	h.lastErr = err
	if h.state == StateUnreachable {
		h.mu.Unlock()
		return false
	}
	if h.stopInformers != nil {
		h.stopInformers()
	}
	h.stopInformers, h.informers, h.leases = nil, nil, nil
	// The next listing caches every copy without its mirrored fields again; Get reads the ones it needs.
	h.wholeMu.Lock()
	clear(h.fetched)
	clear(h.keepWhole)
	h.wholeMu.Unlock()
	h.state, h.lastTransition = StateUnreachable, h.opts.Clock.Now()
	h.mu.Unlock()
	if notify {
		h.opts.Handler.OnState(h.opts.Name, StateUnreachable, err)
	}
	return true
}

// servedKinds returns the watched kinds the hub serves (one LIST of at most one object each) and the names of
// those it answers 404 for. Any other error is returned: the hub is not usable now.
func (h *Hub) servedKinds(ctx context.Context) ([]mirror.Kind, []failoverv1alpha1.ReplicatedKind, error) {
	var served []mirror.Kind
	var missing []failoverv1alpha1.ReplicatedKind
	for _, k := range h.watchedKinds() {
		listCtx, cancel := context.WithTimeout(ctx, h.opts.ProbeTimeout)
		_, err := h.opts.Client.Resource(k.GVR).List(listCtx, metav1.ListOptions{Limit: 1, LabelSelector: k.LabelSelector})
		cancel()
		switch {
		case err == nil:
			served = append(served, k)
		case apierrors.IsNotFound(err) && k.Name != failoverv1alpha1.KindManagedCluster:
			missing = append(missing, k.Name)
		default:
			return nil, nil, fmt.Errorf("listing %s: %w", k.GVR.Resource, err)
		}
	}
	return served, missing, nil
}

// Serves reports whether the hub is ready and serves kind k (its informer runs).
func (h *Hub) Serves(k failoverv1alpha1.ReplicatedKind) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	_, ok := h.informers[k]
	return ok && h.state == StateReady
}

// watchedKinds returns the mirrored kinds plus ManagedCluster when it is not among them, and
// ClusterManagementAddOn when ManagedClusterAddOn is among them and it is not (AddOnInstall reads it).
func (h *Hub) watchedKinds() []mirror.Kind {
	kinds := append([]mirror.Kind(nil), h.opts.Kinds...)
	has := func(name failoverv1alpha1.ReplicatedKind) bool {
		return slices.ContainsFunc(kinds, func(k mirror.Kind) bool { return k.Name == name })
	}
	if !has(failoverv1alpha1.KindManagedCluster) {
		mc, _ := mirror.KindByName(failoverv1alpha1.KindManagedCluster)
		kinds = append(kinds, mc)
	}
	if has(failoverv1alpha1.KindManagedClusterAddOn) && !has(failoverv1alpha1.KindClusterManagementAddOn) {
		cma, _ := mirror.KindByName(failoverv1alpha1.KindClusterManagementAddOn)
		kinds = append(kinds, cma)
	}
	return kinds
}

// newInformer returns an informer over kind k, indexed by namespace, whose cache holds cachedObjects (see
// cachedObject: the JSON of each object without managedFields and status, never mirrored; a copy without its
// mirrored fields unless Get was asked for it whole).
func (h *Hub) newInformer(k mirror.Kind) cache.SharedIndexInformer {
	tweak := func(o *metav1.ListOptions) { o.LabelSelector = k.LabelSelector }
	inf := dynamicinformer.NewFilteredDynamicInformer(h.opts.Client, k.GVR, metav1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, tweak).Informer()
	keepWhole := func(namespace, name string) bool { return h.keepsWhole(k.Name, namespace, name) }
	_ = inf.SetTransform(func(obj any) (any, error) { return compact(obj, &k, keepWhole) })
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { h.onObject(k, obj, false) },
		UpdateFunc: func(_, obj any) { h.onObject(k, obj, false) },
		DeleteFunc: func(obj any) { h.onObject(k, obj, true) },
	})
	return inf
}

// onObject handles an informer event of obj, of kind k (deleted for a delete) and tells the Handler. A delete
// the watch delivered is recorded (Deleted); one the informer inferred from a new list (a
// cache.DeletedFinalStateUnknown) is not: the object may be missing because the hub was restored from a backup.
func (h *Hub) onObject(k mirror.Kind, obj any, deleted bool) {
	tomb, inferred := obj.(cache.DeletedFinalStateUnknown)
	if inferred {
		obj = tomb.Obj
	}
	if n, ok := objectName(obj); ok {
		h.dropFetched(k.Name, n.Namespace, n.Name, deleted)
		h.recordDelete(k.Name, n, obj, deleted && !inferred)
		h.opts.Handler.OnObject(h.opts.Name, k, n.Namespace, n.Name)
	}
}

// newLeaseInformer returns an informer over every managed-cluster-lease of the hub.
func (h *Hub) newLeaseInformer() cache.SharedIndexInformer {
	tweak := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", direction.LeaseName).String()
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(h.opts.Client, mirror.LeaseGVR, metav1.NamespaceAll, 0,
		cache.Indexers{}, tweak).Informer()
	_ = inf.SetTransform(func(obj any) (any, error) { return compact(obj, nil, nil) })
	name := h.opts.Name
	handler := h.opts.Handler
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if n, ok := objectName(obj); ok {
				handler.OnLease(name, n.Namespace, LeaseAdded)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*cachedObject)
			n, ok2 := newObj.(*cachedObject)
			if !ok1 || !ok2 || o.lease == nil || n.lease == nil {
				return
			}
			event := LeaseUpdated
			if n.lease.renewTime.After(o.lease.renewTime) {
				event = LeaseRenewed
			}
			handler.OnLease(name, n.namespace, event)
		},
	})
	return inf
}

// objectName returns the namespace and name of obj, a cachedObject or any other metav1.Object an informer
// passed through unchanged.
func objectName(obj any) (cache.ObjectName, bool) {
	switch o := obj.(type) {
	case *cachedObject:
		return cache.ObjectName{Namespace: o.namespace, Name: o.name}, true
	case metav1.Object:
		return cache.ObjectName{Namespace: o.GetNamespace(), Name: o.GetName()}, true
	}
	return cache.ObjectName{}, false
}

// RenewTime returns a Lease's spec.renewTime and whether it is set and parses (RFC 3339 with microseconds,
// metav1.MicroTime's format).
func RenewTime(lease *unstructured.Unstructured) (time.Time, bool) {
	s, found, err := unstructured.NestedString(lease.Object, "spec", "renewTime")
	if err != nil || !found {
		return time.Time{}, false
	}
	t, err := time.Parse(metav1.RFC3339Micro, s)
	if err != nil {
		if t, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return time.Time{}, false
		}
	}
	return t, true
}
