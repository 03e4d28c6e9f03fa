package replication

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/utils/clock"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// The controller is driven here through real hubconn.Hubs over fake dynamic clients, with the real clock: the
// hubs probe, list and watch the fakes, the controller's workers write to them. Every wait is bounded.

const (
	testHubA    = "hub-a"
	testHubB    = "hub-b"
	testHubC    = "hub-c"
	testCluster = "cluster1"
	waitTimeout = 15 * time.Second
)

// ---------------------------------------------------------------------------------------------------------
// A fake dynamic client whose writes wait for the informer's watch.
//
// The fake's tracker sends events only to watches open at the time of the write, and an informer reports
// synced as soon as its initial list is processed, possibly before its reflector opened the watch. A write in
// that window would never reach the informer's cache. gatedClient closes the window: a create, update or
// delete of a resource waits (bounded) until a watch of that resource was opened through the client.

//
// It also holds back a write while a watch of its resource has watchBacklog events its informer has not taken:
// the fake's watch holds at most 100 (watch.DefaultChanSize) and panics past that, where an apiserver would
// buffer; a burst of writes outrunning an informer starved of CPU would otherwise end the test binary.

// watchBacklog is how many events an open watch may hold before a write of its resource waits.
const watchBacklog = 50

type gatedClient struct {
	dynamic.Interface
	mu      sync.Mutex
	watched map[schema.GroupVersionResource]chan struct{}
	// watches: the watches opened through the client, by resource.
	watches map[schema.GroupVersionResource][]watch.Interface
	// slowCreates: resource → how long each create of it takes before it reaches the fake, as on a busy hub.
	// The wait is outside the fake's lock (which serializes its actions), so that other requests overlap it.
	// Set before the client is used.
	slowCreates map[schema.GroupVersionResource]time.Duration
	// lateDeletes: how long the watches opened through the client hold each delete event before passing it on
	// (and the events after it), as a hub's watch that lags. Set before the client is used.
	lateDeletes time.Duration
}

func newGatedClient(c dynamic.Interface) *gatedClient {
	return &gatedClient{Interface: c, watched: map[schema.GroupVersionResource]chan struct{}{}, watches: map[schema.GroupVersionResource][]watch.Interface{}}
}

// IsWatchListSemanticsUnSupported tells the informers not to use WatchList, which the fake cannot serve.
func (c *gatedClient) IsWatchListSemanticsUnSupported() bool { return true }

func (c *gatedClient) gate(gvr schema.GroupVersionResource) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.watched[gvr]
	if !ok {
		ch = make(chan struct{})
		c.watched[gvr] = ch
	}
	return ch
}

func (c *gatedClient) markWatched(gvr schema.GroupVersionResource) {
	ch := c.gate(gvr)
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// waitDrained waits until every open watch of gvr holds fewer than watchBacklog events. After waitTimeout it
// panics, naming the resource: an informer that takes no event for that long is stuck, and the fake's own panic
// (a full channel) would name nothing.
func (c *gatedClient) waitDrained(gvr schema.GroupVersionResource) {
	deadline := time.Now().Add(waitTimeout)
	for {
		if time.Now().After(deadline) {
			panic(fmt.Sprintf("test client: a watch of %s held %d or more events for %s: its informer is stuck", gvr, watchBacklog, waitTimeout))
		}
		c.mu.Lock()
		open := c.watches[gvr][:0]
		full := false
		for _, w := range c.watches[gvr] {
			if s, ok := w.(interface{ IsStopped() bool }); ok && s.IsStopped() {
				continue
			}
			open = append(open, w)
			full = full || len(w.ResultChan()) >= watchBacklog
		}
		c.watches[gvr] = open
		c.mu.Unlock()
		if !full {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (c *gatedClient) waitWatched(gvr schema.GroupVersionResource) {
	c.waitDrained(gvr)
	if gvr == mirror.NamespaceGVR || gvr == fence.SelfSubjectReviewGVR {
		// The replicator creates namespaces and SelfSubjectReviews but never watches them.
		return
	}
	select {
	case <-c.gate(gvr):
	case <-time.After(waitTimeout):
	}
}

func (c *gatedClient) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	inner := c.Interface.Resource(gvr)
	return &gatedResource{NamespaceableResourceInterface: inner, gatedNamespaced: gatedNamespaced{ResourceInterface: inner, c: c, gvr: gvr}}
}

type gatedResource struct {
	dynamic.NamespaceableResourceInterface
	gatedNamespaced
}

func (r *gatedResource) Namespace(ns string) dynamic.ResourceInterface {
	return &gatedNamespaced{ResourceInterface: r.NamespaceableResourceInterface.Namespace(ns), c: r.c, gvr: r.gvr, namespace: ns}
}

func (r *gatedResource) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	return r.gatedNamespaced.Create(ctx, obj, opts, sub...)
}

func (r *gatedResource) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	return r.gatedNamespaced.Update(ctx, obj, opts, sub...)
}

func (r *gatedResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, sub ...string) error {
	return r.gatedNamespaced.Delete(ctx, name, opts, sub...)
}

func (r *gatedResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	return r.gatedNamespaced.Patch(ctx, name, pt, data, opts, sub...)
}

func (r *gatedResource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return r.gatedNamespaced.Watch(ctx, opts)
}

type gatedNamespaced struct {
	dynamic.ResourceInterface
	c         *gatedClient
	gvr       schema.GroupVersionResource
	namespace string
}

// wait is waitWatched, but for the incarnation marker, which the replicator reads and writes without watching it.
func (r *gatedNamespaced) wait() {
	if r.gvr == configMapGVR && r.namespace == DefaultMarkerNamespace {
		return
	}
	r.c.waitWatched(r.gvr)
}

func (r *gatedNamespaced) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := r.ResourceInterface.Watch(ctx, opts)
	if err == nil {
		r.c.mu.Lock()
		r.c.watches[r.gvr] = append(r.c.watches[r.gvr], w)
		r.c.mu.Unlock()
		r.c.markWatched(r.gvr)
		if r.c.lateDeletes > 0 {
			return newLateDeletesWatch(w, r.c.lateDeletes), nil
		}
	}
	return w, err
}

// lateDeletesWatch passes on the events of a watch, each delete event after a delay.
type lateDeletesWatch struct {
	watch.Interface
	events chan watch.Event
	stop   chan struct{}
	once   sync.Once
}

func newLateDeletesWatch(w watch.Interface, delay time.Duration) *lateDeletesWatch {
	l := &lateDeletesWatch{Interface: w, events: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(l.events)
		for ev := range w.ResultChan() {
			if ev.Type == watch.Deleted {
				select {
				case <-time.After(delay):
				case <-l.stop:
					return
				}
			}
			select {
			case l.events <- ev:
			case <-l.stop:
				return
			}
		}
	}()
	return l
}

func (l *lateDeletesWatch) ResultChan() <-chan watch.Event { return l.events }

func (l *lateDeletesWatch) Stop() {
	l.once.Do(func() { close(l.stop) })
	l.Interface.Stop()
}

// Patch is not held until a watch opened (the replicator patches kinds it does not watch), only while one is full.
func (r *gatedNamespaced) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	r.c.waitDrained(r.gvr)
	return r.ResourceInterface.Patch(ctx, name, pt, data, opts, sub...)
}

func (r *gatedNamespaced) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	r.wait()
	time.Sleep(r.c.slowCreates[r.gvr])
	return r.ResourceInterface.Create(ctx, obj, opts, sub...)
}

func (r *gatedNamespaced) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	r.wait()
	return r.ResourceInterface.Update(ctx, obj, opts, sub...)
}

func (r *gatedNamespaced) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, sub ...string) error {
	r.wait()
	return r.ResourceInterface.Delete(ctx, name, opts, sub...)
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

// proxyHandler forwards hub events to the controller, which is built after the hubs.
type proxyHandler struct{ c atomic.Pointer[Controller] }

func (p *proxyHandler) OnObject(hub string, k mirror.Kind, namespace, name string) {
	if c := p.c.Load(); c != nil {
		c.OnObject(hub, k, namespace, name)
	}
}

func (p *proxyHandler) OnLease(hub, cluster string, event hubconn.LeaseEvent) {
	if c := p.c.Load(); c != nil {
		c.OnLease(hub, cluster, event)
	}
}

func (p *proxyHandler) OnState(hub string, state hubconn.State, err error) {
	if c := p.c.Load(); c != nil {
		c.OnState(hub, state, err)
	}
}

// lockedRecorder makes the in-memory recorder safe to read while the controller records.
type lockedRecorder struct {
	events.InMemoryRecorder
	mu sync.Mutex
}

func (r *lockedRecorder) Eventf(reason, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.InMemoryRecorder.Eventf(reason, format, args...)
}

func (r *lockedRecorder) Warningf(reason, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.InMemoryRecorder.Warningf(reason, format, args...)
}

func (r *lockedRecorder) Event(reason, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.InMemoryRecorder.Event(reason, message)
}

func (r *lockedRecorder) Warning(reason, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.InMemoryRecorder.Warning(reason, message)
}

// messages returns the messages of the recorded events with reason.
func (r *lockedRecorder) messages(reason string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.InMemoryRecorder.Events() {
		if e.Reason == reason {
			out = append(out, e.Message)
		}
	}
	return out
}

func testKind(t *testing.T, name failoverv1alpha1.ReplicatedKind) mirror.Kind {
	t.Helper()
	k, ok := mirror.KindByName(name)
	if !ok {
		t.Fatalf("no kind %s", name)
	}
	return k
}

func managedCluster(name string, labels map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1",
		"kind":       "ManagedCluster",
		"metadata":   map[string]any{"name": name, "labels": labels},
		"spec":       map[string]any{"hubAcceptsClient": true, "leaseDurationSeconds": int64(60)},
	}}
}

// heldOriginal returns the original ManifestWork name (of ConfigMap configMap) in testCluster's namespace, of
// metadata.uid uid, as the replicator holds it on the cluster's source once hasCopies hold copies: the has-copies
// mark and FinalizerDeleteCopies.
func heldOriginal(name, configMap, uid, hasCopies string) *unstructured.Unstructured {
	w := manifestWork(testCluster, name, configMap, nil)
	w.SetUID(types.UID(uid))
	w.SetAnnotations(map[string]string{mirror.AnnotationHasCopies: hasCopies})
	w.SetFinalizers([]string{mirror.FinalizerDeleteCopies})
	return w
}

func manifestWork(namespace, name, configMap string, labels map[string]any) *unstructured.Unstructured {
	md := map[string]any{"name": name, "namespace": namespace}
	if labels != nil {
		md["labels"] = labels
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "work.open-cluster-management.io/v1",
		"kind":       "ManifestWork",
		"metadata":   md,
		"spec": map[string]any{"workload": map[string]any{"manifests": []any{
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": configMap, "namespace": "default"}},
		}}},
	}}
}

type testHub struct {
	hub    *hubconn.Hub
	fake   *dynamicfake.FakeDynamicClient
	client *gatedClient
}

func newTestHub(t *testing.T, name string, handler hubconn.Handler, kinds []mirror.Kind, objects ...runtime.Object) *testHub {
	t.Helper()
	listKinds := map[schema.GroupVersionResource]string{
		mirror.LeaseGVR:     "LeaseList",
		mirror.NamespaceGVR: "NamespaceList",
	}
	// Every built-in kind's name is its Kind (e.g. ManagedCluster), its list kind that plus "List"; a custom
	// kind's is taken as the same.
	for _, k := range append(slices.Clone(mirror.Kinds), kinds...) {
		listKinds[k.GVR] = string(k.Name) + "List"
	}
	fake := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objects...)
	client := newGatedClient(fake)
	h, err := hubconn.New(hubconn.Options{
		Name: name, Server: "https://" + name + ":6443", Client: client, Kinds: kinds,
		ProbeInterval: 50 * time.Millisecond, ProbeTimeout: time.Second, Handler: handler, Clock: clock.RealClock{},
	})
	if err != nil {
		t.Fatalf("hubconn.New(%s): %v", name, err)
	}
	return &testHub{hub: h, fake: fake, client: client}
}

// writes returns the create, update, patch and delete actions the fake saw on k's resource, with the names
// they targeted.
func (h *testHub) writes(k mirror.Kind) []string {
	var out []string
	for _, a := range h.fake.Actions() {
		if a.GetResource() != k.GVR {
			continue
		}
		switch verb := a.GetVerb(); verb {
		case "create", "update":
			if o, ok := a.(interface{ GetObject() runtime.Object }); ok {
				out = append(out, verb+" "+objectName(o.GetObject()))
			}
		case "delete", "patch":
			if n, ok := a.(interface{ GetName() string }); ok {
				out = append(out, verb+" "+a.GetNamespace()+"/"+n.GetName())
			}
		}
	}
	return out
}

func objectName(obj runtime.Object) string {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if u.GetNamespace() == "" {
			return u.GetName()
		}
		return u.GetNamespace() + "/" + u.GetName()
	}
	return fmt.Sprintf("%T", obj)
}

// get reads an object from the hub's API (the fake), not the hub's cache.
func (h *testHub) get(t *testing.T, k mirror.Kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := h.fake.Resource(k.GVR).Namespace(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", k.Name, namespace, name, err)
	}
	return obj
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// quiesce waits until the controller's queue has stayed empty and no hub saw a write for a while.
func quiesce(t *testing.T, c *Controller, hubs ...*testHub) {
	t.Helper()
	count := func() int {
		n := 0
		for _, h := range hubs {
			for _, k := range mirror.Kinds {
				n += len(h.writes(k))
			}
		}
		return n
	}
	deadline := time.Now().Add(waitTimeout)
	last, stableSince := count(), time.Now()
	for {
		if time.Now().After(deadline) {
			t.Fatalf("controller did not settle within %s: writes still happening (%d so far) or queue not empty (length %d)", waitTimeout, last, c.queue.Len())
		}
		time.Sleep(20 * time.Millisecond)
		if n := count(); n != last || c.queue.Len() != 0 {
			last, stableSince = n, time.Now()
			continue
		}
		if time.Since(stableSince) > 300*time.Millisecond {
			return
		}
	}
}

func specOf(obj *unstructured.Unstructured) any {
	if obj == nil {
		return nil
	}
	return obj.Object["spec"]
}

// startController runs a Controller made from opts (its Hubs the given ones, at least two, in order; its Recorder
// a new lockedRecorder) with 2 workers until the test ends, with handler forwarding the hubs' events to it, and
// returns it with its recorder once every hub is ready.
func startController(t *testing.T, handler *proxyHandler, opts Options, hubs ...*testHub) (*Controller, *lockedRecorder) {
	t.Helper()
	recorder := &lockedRecorder{InMemoryRecorder: events.NewInMemoryRecorder("replicator-test", clock.RealClock{})}
	opts.Hubs, opts.Recorder = nil, recorder
	for _, h := range hubs {
		opts.Hubs = append(opts.Hubs, h.hub)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	handler.c.Store(c)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	wg.Add(1 + len(hubs))
	go func() { defer wg.Done(); c.Run(ctx, 2) }()
	for _, h := range hubs {
		go func() { defer wg.Done(); h.hub.Run(ctx) }()
	}
	eventually(t, "every hub is ready", func() bool {
		for _, h := range hubs {
			if !h.hub.Ready() {
				return false
			}
		}
		return true
	})
	return c, recorder
}

// ---------------------------------------------------------------------------------------------------------
// The test

func TestControllerMirrorsManifestWorksBetweenHubs(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}

	// hub-a holds the cluster's original ManagedCluster (no lease anywhere: rule 4 makes hub-a the source), a
	// ManifestWork to mirror and one whose name hub-b already uses for its own (foreign) ManifestWork.
	handler := &proxyHandler{}
	a := newTestHub(t, testHubA, handler, kinds,
		managedCluster(testCluster, map[string]any{"env": "prod"}),
		manifestWork(testCluster, "work-1", "cm-1", nil),
		manifestWork(testCluster, "shared", "from-hub-a", nil),
	)
	foreign := manifestWork(testCluster, "shared", "hub-b-own", map[string]any{"owner": "hub-b-team"})
	b := newTestHub(t, testHubB, handler, kinds, foreign.DeepCopy())

	c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: 100 * time.Millisecond}, a, b)
	ctx := context.Background()

	// --- Initial replication.
	source := a.get(t, mwKind, testCluster, "work-1")
	eventually(t, "hub-b holds a copy of work-1 (API and cache)", func() bool {
		cp, _ := b.hub.Peek(mwKind.Name, testCluster, "work-1")
		return cp != nil && cp.GetLabels()[mirror.LabelReplicatedFrom] == testHubA
	})
	quiesce(t, c, a, b)

	if got, want := c.Sources(), [][2]string{{testCluster, testHubA}}; !cmp.Equal(got, want) {
		t.Errorf("Sources() = %v, want %v", got, want)
	}
	cp := b.get(t, mwKind, testCluster, "work-1")
	if cp == nil {
		t.Fatalf("hub-b has no work-1")
	}
	if got := cp.GetLabels()[mirror.LabelReplicatedFrom]; got != testHubA {
		t.Errorf("copy label %s = %q, want %q", mirror.LabelReplicatedFrom, got, testHubA)
	}
	if diff := cmp.Diff(specOf(source), specOf(cp)); diff != "" {
		t.Errorf("copy spec differs from the source's (-source +copy):\n%s", diff)
	}
	if cp.GetAnnotations()[mirror.AnnotationContentHash] == "" {
		t.Errorf("copy has no %s annotation", mirror.AnnotationContentHash)
	}

	// The ManagedCluster is mirrored too, annotated with where the cluster is.
	mcCopy := b.get(t, mcKind, "", testCluster)
	if mcCopy == nil {
		t.Fatalf("hub-b has no copy of ManagedCluster %s", testCluster)
	}
	if got := mcCopy.GetLabels()[mirror.LabelReplicatedFrom]; got != testHubA {
		t.Errorf("ManagedCluster copy label = %q, want %q", got, testHubA)
	}
	if got := mcCopy.GetAnnotations()[mirror.AnnotationClusterHub]; got != testHubA {
		t.Errorf("ManagedCluster copy %s = %q, want %q", mirror.AnnotationClusterHub, got, testHubA)
	}
	if got := mcCopy.GetLabels()["env"]; got != "prod" {
		t.Errorf("ManagedCluster copy label env = %q, want prod", got)
	}

	// The foreign ManifestWork on hub-b is left alone and counted as a conflict.
	if got := b.get(t, mwKind, testCluster, "shared"); !cmp.Equal(foreign.Object, got.Object) {
		t.Errorf("foreign object on hub-b changed:\n%s", cmp.Diff(foreign.Object, got.Object))
	}
	for _, w := range b.writes(mwKind) {
		if w == "update "+testCluster+"/shared" || w == "delete "+testCluster+"/shared" || w == "create "+testCluster+"/shared" {
			t.Errorf("the replicator wrote the foreign object on hub-b: %s", w)
		}
	}
	snap := c.Snapshot()
	if snap.Conflicts[testHubB] != 1 || snap.KindConflicts[failoverv1alpha1.KindManifestWork] != 1 {
		t.Errorf("Snapshot conflicts = %v by hub, %v by kind; want 1 on hub-b, 1 ManifestWork", snap.Conflicts, snap.KindConflicts)
	}
	if snap.Conflicts[testHubA] != 0 {
		t.Errorf("Snapshot conflicts on hub-a = %d, want 0", snap.Conflicts[testHubA])
	}
	if snap.Copies[testHubB] != 2 { // the ManagedCluster and work-1
		t.Errorf("Snapshot copies on hub-b = %d, want 2", snap.Copies[testHubB])
	}
	if snap.Clusters != 1 || snap.SourceClusters[testHubA] != 1 {
		t.Errorf("Snapshot clusters = %d, by source %v; want 1 on hub-a", snap.Clusters, snap.SourceClusters)
	}
	if snap.KindObjects[failoverv1alpha1.KindManifestWork] != 2 || snap.KindObjects[failoverv1alpha1.KindManagedCluster] != 1 {
		t.Errorf("Snapshot objects by kind = %v, want 2 ManifestWorks, 1 ManagedCluster", snap.KindObjects)
	}
	if !snap.CaughtUp[testHubA] || !snap.CaughtUp[testHubB] {
		t.Errorf("Snapshot caught up = %v, want both hubs", snap.CaughtUp)
	}
	if msgs := recorder.messages(ReasonReplicationConflict); len(msgs) != 1 {
		t.Errorf("ReplicationConflict events = %q, want exactly one (for the foreign object)", msgs)
	}
	// On the source, the replicator only marks the originals it copied, in one write before the first copy: the
	// finalizer that holds their delete and the hub about to hold the copy; not the one whose name hub-b uses for
	// its own object.
	if w, want := a.writes(mwKind), []string{"patch " + testCluster + "/work-1"}; !cmp.Equal(w, want) {
		var patches []string
		for _, act := range a.fake.Actions() {
			if p, ok := act.(interface{ GetPatch() []byte }); ok && act.GetResource() == mwKind.GVR {
				patches = append(patches, string(p.GetPatch()))
			}
		}
		t.Errorf("the replicator's ManifestWork writes on the source hub: %v, want %v (patches %q)", w, want, patches)
	}
	// And it publishes on the source's ManagedCluster which hubs are in step: hub-b is behind until it was
	// compared, then in step (patches of the ManagedCluster only, as many as the published value changed).
	for _, w := range a.writes(mcKind) {
		if w != "patch /"+testCluster {
			t.Errorf("the replicator's ManagedCluster write on the source hub: %s, want only patches of %s", w, testCluster)
		}
	}
	// At most: has-copies, hub-b behind while not ready or not compared, in step, and behind/in step once more
	// when hub-a becomes ready after hub-b was compared (every key waits on hub-b again then).
	if n := len(a.writes(mcKind)); n < 2 || n > 5 {
		var patches []string
		for _, a := range a.fake.Actions() {
			if p, ok := a.(interface{ GetPatch() []byte }); ok && a.GetResource() == mcKind.GVR {
				patches = append(patches, string(p.GetPatch()))
			}
		}
		t.Errorf("the replicator patched the source's ManagedCluster %d times, want 2 to 5: %q", n, patches)
	}
	eventually(t, "hub-a's ManagedCluster says hub-b is in step", func() bool {
		mc, _ := a.hub.Peek(mcKind.Name, "", testCluster)
		return mc != nil && mc.GetAnnotations()[mirror.AnnotationHasCopies] == testHubB &&
			mc.GetAnnotations()[mirror.AnnotationHubsInStep] == testHubB && mc.GetAnnotations()[mirror.AnnotationHubsBehind] == ""
	})
	if got := b.get(t, mcKind, "", testCluster).GetAnnotations(); got[mirror.AnnotationHubsInStep] != "" || got[mirror.AnnotationHubsBehind] != "" {
		t.Errorf("hub-b's copy of the ManagedCluster carries the source-only step annotations: %v", got)
	}
	for _, name := range []string{"work-1", "shared"} {
		got := a.get(t, mwKind, testCluster, name).GetAnnotations()[mirror.AnnotationHasCopies]
		if want := map[string]string{"work-1": testHubB, "shared": ""}[name]; got != want {
			t.Errorf("hub-a's original %s: %s = %q, want %q", name, mirror.AnnotationHasCopies, got, want)
		}
	}

	// --- A hub that becomes ready again is compared afresh: the copies are not written again; the source's
	// ManagedCluster may name hub-b behind meanwhile and names it in step at the end.
	beforeA, beforeB := len(a.writes(mwKind)), len(b.writes(mwKind))+len(b.writes(mcKind))
	c.OnState(testHubB, hubconn.StateReady, nil)
	quiesce(t, c, a, b)
	if w := a.writes(mwKind); len(w) != beforeA {
		t.Errorf("hub-b ready again: ManifestWork writes on hub-a: %v", w[beforeA:])
	}
	if w := append(b.writes(mwKind), b.writes(mcKind)...); len(w) != beforeB {
		t.Errorf("hub-b ready again: writes on hub-b: %v", w[beforeB:])
	}
	eventually(t, "hub-a's ManagedCluster says hub-b is in step again", func() bool {
		mc, _ := a.hub.Peek(mcKind.Name, "", testCluster)
		return mc != nil && mc.GetAnnotations()[mirror.AnnotationHubsInStep] == testHubB
	})

	// --- A second pass over everything, directly, writes nothing.
	quiesce(t, c, a, b)
	beforeA, beforeB = len(a.writes(mwKind))+len(a.writes(mcKind)), len(b.writes(mwKind))+len(b.writes(mcKind))
	if err := c.syncDirection(context.Background(), testCluster); err != nil {
		t.Errorf("syncDirection: %v", err)
	}
	for _, key := range c.allKeys() {
		if err := c.syncObject(ctx, key); err != nil {
			t.Errorf("syncObject(%s): %v", key, err)
		}
	}
	if w := append(a.writes(mwKind), a.writes(mcKind)...); len(w) != beforeA {
		t.Errorf("second pass wrote on hub-a: %v", w[beforeA:])
	}
	if w := append(b.writes(mwKind), b.writes(mcKind)...); len(w) != beforeB {
		t.Errorf("second pass wrote on hub-b: %v", w[beforeB:])
	}
	if snap := c.Snapshot(); snap.Conflicts[testHubB] != 1 || snap.Copies[testHubB] != 2 {
		t.Errorf("after the second pass: conflicts %v, copies %v; want 1 and 2 on hub-b", snap.Conflicts, snap.Copies)
	}
	if msgs := recorder.messages(ReasonReplicationConflict); len(msgs) != 1 {
		t.Errorf("ReplicationConflict events after the second pass = %q, want still one", msgs)
	}

	// --- An update of the source is mirrored, with one write.
	beforeB = len(b.writes(mwKind))
	changed := a.get(t, mwKind, testCluster, "work-1")
	changed.Object["spec"] = manifestWork(testCluster, "work-1", "cm-1-v2", nil).Object["spec"]
	if _, err := a.client.Resource(mwKind.GVR).Namespace(testCluster).Update(ctx, changed, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating work-1 on hub-a: %v", err)
	}
	eventually(t, "hub-b's copy of work-1 has the new spec", func() bool {
		return cmp.Equal(specOf(changed), specOf(b.get(t, mwKind, testCluster, "work-1")))
	})
	quiesce(t, c, a, b)
	if w := b.writes(mwKind)[beforeB:]; !cmp.Equal(w, []string{"update " + testCluster + "/work-1"}) {
		t.Errorf("writes on hub-b for the update = %v, want one update of work-1", w)
	}
	if got := b.get(t, mwKind, testCluster, "work-1").GetLabels()[mirror.LabelReplicatedFrom]; got != testHubA {
		t.Errorf("updated copy label = %q, want %q", got, testHubA)
	}

	// --- A delete of the source deletes the copy, and only the copy.
	beforeB = len(b.writes(mwKind))
	if err := a.client.Resource(mwKind.GVR).Namespace(testCluster).Delete(ctx, "work-1", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting work-1 on hub-a: %v", err)
	}
	eventually(t, "hub-b's copy of work-1 is deleted", func() bool { return b.get(t, mwKind, testCluster, "work-1") == nil })
	quiesce(t, c, a, b)
	if w := b.writes(mwKind)[beforeB:]; !cmp.Equal(w, []string{"delete " + testCluster + "/work-1"}) {
		t.Errorf("writes on hub-b for the delete = %v, want one delete of work-1", w)
	}
	if got := b.get(t, mwKind, testCluster, "shared"); !cmp.Equal(foreign.Object, got.Object) {
		t.Errorf("foreign object on hub-b changed:\n%s", cmp.Diff(foreign.Object, got.Object))
	}
	snap = c.Snapshot()
	if snap.Copies[testHubB] != 1 || snap.Conflicts[testHubB] != 1 || snap.KindObjects[failoverv1alpha1.KindManifestWork] != 1 {
		t.Errorf("after the delete: copies %v, conflicts %v, objects %v; want 1 copy (the ManagedCluster) and 1 conflict on hub-b, 1 ManifestWork",
			snap.Copies, snap.Conflicts, snap.KindObjects)
	}
	if got := c.Sources(); !cmp.Equal(got, [][2]string{{testCluster, testHubA}}) {
		t.Errorf("Sources() at the end = %v, want the cluster still on hub-a", got)
	}
	// The cluster's namespace was made sure of once on hub-b, before its first copy, not per copy or write (the
	// incarnation marker's namespace aside).
	var nsCreates []string
	for _, a := range b.fake.Actions() {
		if c, ok := a.(interface{ GetObject() runtime.Object }); ok && a.GetVerb() == "create" && a.GetResource() == mirror.NamespaceGVR {
			if m, ok := c.GetObject().(metav1.Object); ok && m.GetName() != DefaultMarkerNamespace {
				nsCreates = append(nsCreates, m.GetName())
			}
		}
	}
	if !cmp.Equal(nsCreates, []string{testCluster}) {
		t.Errorf("namespace creates on hub-b = %v, want one of %s", nsCreates, testCluster)
	}
}

// TestControllerReplicatesAClusterOnceSelected: a cluster outside the cluster selector is not replicated; once
// its ManagedCluster on the source gets the selected label, its ManifestWorks follow too (not only the
// ManagedCluster, whose own event triggers the change), and its source reports hub-b in step; de-selected again,
// hub-b is reported behind.
func TestControllerReplicatesAClusterOnceSelected(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	a := newTestHub(t, testHubA, handler, kinds,
		managedCluster(testCluster, map[string]any{"env": "dev"}),
		manifestWork(testCluster, "work-1", "cm-1", nil),
	)
	b := newTestHub(t, testHubB, handler, kinds)
	selector, err := labels.Parse("env=prod")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := startController(t, handler, Options{Kinds: kinds, ClusterSelector: selector,
		DirectionRecheck: time.Hour, // only events drive this test
		ReportWriter:     "fleet", ReportInterval: time.Second,
	}, a, b)
	ctx := context.Background()
	quiesce(t, c, a, b)
	if w := b.writes(mwKind); len(w) != 0 {
		t.Fatalf("an unselected cluster's ManifestWork was written to hub-b: %v", w)
	}
	if s := c.Snapshot(); s.Clusters != 0 {
		t.Errorf("Snapshot().Clusters = %d for an unselected cluster, want 0", s.Clusters)
	}

	mc := a.get(t, mcKind, "", testCluster)
	mc.SetLabels(map[string]string{"env": "prod"})
	if _, err := a.client.Resource(mcKind.GVR).Update(ctx, mc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hub-b holds work-1 once the cluster is selected", func() bool {
		cp, _ := b.hub.Peek(mwKind.Name, testCluster, "work-1")
		return cp != nil && cp.GetLabels()[mirror.LabelReplicatedFrom] == testHubA
	})
	if s := c.Snapshot(); s.Clusters != 1 {
		t.Errorf("Snapshot().Clusters = %d once selected, want 1", s.Clusters)
	}
	eventually(t, "hub-a's ManagedCluster names hub-b in step", func() bool {
		mc, _ := a.hub.Peek(mcKind.Name, "", testCluster)
		return mc != nil && mc.GetAnnotations()[mirror.AnnotationHubsInStep] == testHubB
	})
	report := func() string {
		mc, _ := a.hub.Peek(mcKind.Name, "", testCluster)
		return mc.GetAnnotations()[mirror.AnnotationHubsReported]
	}
	first := report()
	if r, err := failoverv1alpha1.ParseHubsReport(first); err != nil || r.Writer != "fleet" || r.Every != time.Second {
		t.Fatalf("hub-a's report %q (%v), want writer fleet every 1s", first, err)
	}
	// Nothing changes, yet the report is written again within its interval: a running replicator confirms it.
	eventually(t, "the report confirmed again while nothing changed", func() bool {
		mc, _ := a.hub.Peek(mcKind.Name, "", testCluster)
		return report() != first && mc.GetAnnotations()[mirror.AnnotationHubsInStep] == testHubB
	})

	// De-selected, the cluster is not replicated any more: hub-b is no longer reported in step.
	mc = a.get(t, mcKind, "", testCluster)
	mc.SetLabels(map[string]string{"env": "dev"})
	if _, err := a.client.Resource(mcKind.GVR).Update(ctx, mc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hub-a's ManagedCluster names hub-b behind once the cluster is de-selected", func() bool {
		mc, _ := a.hub.Peek(mcKind.Name, "", testCluster)
		return mc != nil && mc.GetAnnotations()[mirror.AnnotationHubsInStep] == "" && mc.GetAnnotations()[mirror.AnnotationHubsBehind] == testHubB
	})
	// Nor is that report confirmed: an agent takes it as unknown after three intervals.
	last := report()
	time.Sleep(2500 * time.Millisecond)
	if got := report(); got != last {
		t.Errorf("the report of a de-selected cluster was written again: %q, then %q", last, got)
	}
}

// TestHubNotListedUntilOnStateReady: hubconn reports a hub Ready before the controller's OnState(Ready) has
// filled dirty and pending for its new listing. Until then the hub is neither caught up nor free of pending
// keys, so that the end of a write-back (finishWriteBack) and the steps published on a source do not judge it
// from the state it had before it left. A Ready that arrives once the hub has left that state again (hubconn
// calls OnState outside its lock) does not count.
func TestHubNotListedUntilOnStateReady(t *testing.T) {
	kinds := []mirror.Kind{testKind(t, failoverv1alpha1.KindManagedCluster)}
	handler := &proxyHandler{}
	a := newTestHub(t, "hub-a", handler, kinds)
	b := newTestHub(t, "hub-b", handler, kinds)
	check := func(c *Controller, when string, wantCaughtUp bool) {
		t.Helper()
		if got := c.caughtUp("hub-b"); got != wantCaughtUp {
			t.Errorf("%s: caughtUp = %t, want %t", when, got, wantCaughtUp)
		}
		if got := c.pendingFor("hub-b", "c1"); got == wantCaughtUp {
			t.Errorf("%s: pendingFor = %t, want %t", when, got, !wantCaughtUp)
		}
		if got := c.Snapshot().CaughtUp["hub-b"]; got != wantCaughtUp {
			t.Errorf("%s: Snapshot().CaughtUp = %t, want %t", when, got, wantCaughtUp)
		}
	}
	// A controller whose hubs never started.
	recorder := &lockedRecorder{InMemoryRecorder: events.NewInMemoryRecorder("replicator-test", clock.RealClock{})}
	idle, err := New(Options{Hubs: []*hubconn.Hub{a.hub, b.hub}, Kinds: kinds, Recorder: recorder})
	if err != nil {
		t.Fatal(err)
	}
	check(idle, "before the hub was ever ready", false)
	idle.OnState("hub-b", hubconn.StateReady, nil)
	check(idle, "a late Ready of a hub that is not ready", false)

	c, _ := startController(t, handler, Options{Kinds: kinds}, a, b)
	eventually(t, "hub-b caught up", func() bool { return c.caughtUp("hub-b") })
	check(c, "after OnState(Ready)", true)
	c.OnState("hub-b", hubconn.StateUnreachable, nil)
	check(c, "unreachable", false)
	c.OnState("hub-b", hubconn.StateSyncing, nil)
	check(c, "listing again (hubconn may report it Ready before OnState(Ready) runs)", false)
	c.OnState("hub-b", hubconn.StateReady, nil)
	check(c, "after OnState(Ready) again", true)
}

// TestReportedOnceIsBounded: a report is made once, and reportedOnce remembers reportedOnceSize reports at most
// (the least recently reported is forgotten first).
func TestReportedOnceIsBounded(t *testing.T) {
	var r reportedOnce
	if !r.first("a") || r.first("a") {
		t.Fatal("first(a) twice: want true, then false")
	}
	for i := 0; i < reportedOnceSize; i++ {
		r.first(fmt.Sprintf("other-%d", i))
	}
	if n := r.seen.Len(); n != reportedOnceSize {
		t.Errorf("remembered %d reports, want %d", n, reportedOnceSize)
	}
	if !r.first("a") {
		t.Error("first(a) after reportedOnceSize other reports: want true (forgotten)")
	}
	if r.first(fmt.Sprintf("other-%d", reportedOnceSize-1)) {
		t.Error("the most recent report was forgotten")
	}
}
