package replication

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
)

// keyIncarnation is the Kind of the queue key (Name: a hub) that reads and advances a hub's incarnation marker
// (syncIncarnation).
const keyIncarnation = "Incarnation"

// IncarnationMarker is the name of the ConfigMap, in Options.MarkerNamespace on every hub, that holds the
// replicator's incarnation counters: one data key per configured hub, its name, whose value is that hub's
// incarnation (a decimal number) as the replicator last recorded it. A hub's own key is its incarnation: the
// replicator advances it every Options.IncarnationInterval while the hub is ready, and records the others'.
// A hub restored from a backup, or rebuilt, shows a lower counter of its own than another hub's marker or the
// replicator's memory records, or none.
const IncarnationMarker = "klusterlet-failover-incarnations"

// DefaultMarkerNamespace is the default Options.MarkerNamespace: the namespace manifests/replicator/hub makes
// on every hub.
const DefaultMarkerNamespace = "open-cluster-management-replicator"

var configMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// incarnations is what the replicator knows of the hubs' incarnations; its own lock. syncIncarnation, for one
// hub at a time (the queue never hands a key to two workers), is the only writer of shown and recorded;
// restored is written by syncIncarnation and by the object syncs that reconcile a restored hub (reconciled).
type incarnations struct {
	mu sync.Mutex
	// shown: hub → the incarnation its marker showed at the last read since it became ready (absent: not
	// read since; 0: no marker or no key of its own).
	shown map[string]int64
	// recorded: hub → the highest incarnation of it seen in any hub's marker or written.
	recorded map[string]int64
	// restored: hub → the keys not yet synced with every hub ready since the hub was found restored: its
	// counter is not advanced until they are (a copy of an object it lost must stay of a later incarnation).
	restored map[string]sets.Set[Key]
	// read: the hubs whose marker was read since the controller started; started, when it started.
	read    sets.Set[string]
	started time.Time
	// awaited: the hubs whose marker an object sync needed before it was read since they became ready.
	awaited sets.Set[string]
}

// incarnationWarmUp is how many incarnation intervals after its start the controller waits for a hub that is
// not ready before it advances the others' counters without its marker read (that marker may record a higher
// counter of a hub restored while the replicator was away).
const incarnationWarmUp = 5

func newIncarnations(started time.Time) *incarnations {
	return &incarnations{shown: map[string]int64{}, recorded: map[string]int64{}, restored: map[string]sets.Set[Key]{},
		read: sets.New[string](), started: started, awaited: sets.New[string]()}
}

// of returns the incarnation hub shows, and whether its marker was read since it became ready.
func (in *incarnations) of(hub string) (int64, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	n, ok := in.shown[hub]
	return n, ok
}

// forget drops what hub showed: it is read again when the hub is ready again (it may have been restored
// meanwhile).
func (in *incarnations) forget(hub string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.shown, hub)
}

// awaitRead records that an object sync needed hub's incarnation before its marker was read: every key is
// synced again once it is.
func (in *incarnations) awaitRead(hub string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.awaited.Insert(hub)
}

// reconciled records that key was synced with every hub ready, nothing left to make again from it.
func (in *incarnations) reconciled(key Key) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, pending := range in.restored {
		pending.Delete(key)
	}
}

// syncIncarnation reads hub's incarnation marker, records the counters it holds, finds the hub restored when
// its own counter is below the one recorded (event HubRestored; every key is synced again, and what it lost is
// made again there from the copies, DecideRecreate), and otherwise advances its counter: the marker written
// holds the hub's new incarnation and every other hub's recorded one. A restored hub's counter is advanced once
// every key known when it was found restored has been synced with every hub ready (reconciled), or is no
// longer known. It runs again after Options.IncarnationInterval. A hub not ready is left: OnState queues it
// when it is.
func (c *Controller) syncIncarnation(ctx context.Context, hub string) error {
	h := c.byName[hub]
	if h == nil || !h.Ready() {
		return nil
	}
	client := h.Client().Resource(configMapGVR).Namespace(c.opts.MarkerNamespace)
	marker, err := client.Get(ctx, IncarnationMarker, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		marker, err = nil, nil
	}
	h.ReportError(err)
	if err != nil {
		return fmt.Errorf("reading the incarnation marker %s/%s on hub %s: %w", c.opts.MarkerNamespace, IncarnationMarker, hub, err)
	}
	counters := markerCounters(marker)

	in := c.incarnations
	in.mu.Lock()
	for name, n := range counters {
		if c.byName[name] != nil && n > in.recorded[name] {
			in.recorded[name] = n
		}
	}
	own, recorded := counters[hub], in.recorded[hub]
	in.shown[hub] = own
	in.read.Insert(hub)
	awaited := in.awaited.Has(hub)
	in.awaited.Delete(hub)
	pending, wasRestored := in.restored[hub]
	restoredNow := own < recorded && !wasRestored
	if restoredNow {
		pending = sets.New(c.allKeys()...)
		in.restored[hub] = pending
	}
	if wasRestored {
		// Keys gone since are not waited for.
		known := sets.New(c.allKeys()...)
		for key := range pending {
			if !known.Has(key) {
				pending.Delete(key)
			}
		}
	}
	hold := (restoredNow || wasRestored) && pending.Len() > 0
	// No hub's counter is advanced before every hub's marker was read since the start (one of them may record
	// a higher counter of this hub: it was restored while the replicator was away), or, for a hub that is not
	// ready, before incarnationWarmUp intervals passed.
	warm := c.opts.Clock.Since(in.started) >= incarnationWarmUp*c.opts.IncarnationInterval
	for _, other := range c.opts.Hubs {
		if !in.read.Has(other.Name()) && (other.Ready() || !warm) {
			hold = true
		}
	}
	next := recorded + 1
	write := map[string]int64{}
	for name, n := range in.recorded {
		if c.byName[name] != nil {
			write[name] = n
		}
	}
	write[hub] = next
	in.mu.Unlock()

	defer c.queue.AddAfter(Key{Kind: keyIncarnation, Name: hub}, c.opts.IncarnationInterval)
	if restoredNow {
		c.opts.Recorder.Warningf(ReasonHubRestored, "hub %s shows incarnation %d, and %d was recorded: it was restored from a backup or rebuilt; "+
			"objects it lost are made again there from copies made in a later incarnation, and the newer states its copies hold are written back onto it", hub, own, recorded)
	}
	if restoredNow || awaited {
		for _, key := range c.allKeys() {
			c.queue.Add(key)
		}
	}
	if hold {
		return nil
	}
	if err := c.writeMarker(ctx, h, marker, write); err != nil {
		return err
	}
	in.mu.Lock()
	in.shown[hub], in.recorded[hub] = next, max(in.recorded[hub], next)
	delete(in.restored, hub)
	in.mu.Unlock()
	if wasRestored || restoredNow {
		c.logger.Info("Restored hub reconciled: its incarnation advanced", "hub", hub, "incarnation", next)
	}
	return nil
}

// writeMarker writes counters as hub h's incarnation marker: an update of marker, the one read (refused if it
// changed since), or a create when there was none (the namespace made first when missing).
func (c *Controller) writeMarker(ctx context.Context, h *hubconn.Hub, marker *unstructured.Unstructured, counters map[string]int64) error {
	data := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(counters)) {
		data[name] = strconv.FormatInt(counters[name], 10)
	}
	client := h.Client().Resource(configMapGVR).Namespace(c.opts.MarkerNamespace)
	var err error
	if marker != nil {
		out := marker.DeepCopy()
		out.Object["data"] = data
		_, err = client.Update(ctx, out, metav1.UpdateOptions{FieldManager: FieldManager})
	} else {
		out := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": data}}
		out.SetName(IncarnationMarker)
		out.SetNamespace(c.opts.MarkerNamespace)
		if _, err = c.ensureNamespace(ctx, h, c.opts.MarkerNamespace, nil); err == nil {
			_, err = client.Create(ctx, out, metav1.CreateOptions{FieldManager: FieldManager})
		}
	}
	h.ReportError(err)
	if err != nil {
		return fmt.Errorf("writing the incarnation marker %s/%s on hub %s: %w", c.opts.MarkerNamespace, IncarnationMarker, h.Name(), err)
	}
	return nil
}

// markerCounters returns the counters of an incarnation marker (nil: none); a value that is not a positive
// decimal number is left out.
func markerCounters(marker *unstructured.Unstructured) map[string]int64 {
	out := map[string]int64{}
	if marker == nil {
		return out
	}
	data, _, _ := unstructured.NestedStringMap(marker.Object, "data")
	for name, v := range data {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			out[name] = n
		}
	}
	return out
}
