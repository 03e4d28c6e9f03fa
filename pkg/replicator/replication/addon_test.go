package replication

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	metricstestutil "k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/clock"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/metrics"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// testClusterManagementAddOn returns ClusterManagementAddOn name with install strategy type strategy.
func testClusterManagementAddOn(name, strategy string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ClusterManagementAddOn",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"installStrategy": map[string]any{"type": strategy}},
	}}
}

// testManagedClusterAddOn returns ManagedClusterAddOn name in cluster's namespace.
func testManagedClusterAddOn(cluster, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn",
		"metadata": map[string]any{"name": name, "namespace": cluster},
		"spec":     map[string]any{"installNamespace": "open-cluster-management-agent-addon"},
	}}
}

// A ManagedClusterAddOn is not mirrored to a hub whose ClusterManagementAddOn of its name installs it by
// strategy (that hub's add-on manager would delete the copy, and the replicator write it again), and that hub
// counts as in step for it; once that hub's ClusterManagementAddOn turns Manual, the copy is written.
func TestControllerLeavesAddOnsInstalledByStrategyToTheHub(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mcaKind := testKind(t, failoverv1alpha1.KindManagedClusterAddOn)
	// ClusterManagementAddOn is not a mirrored kind here: the hubs watch it because ManagedClusterAddOn is.
	cmaKind := testKind(t, failoverv1alpha1.KindClusterManagementAddOn)
	kinds := []mirror.Kind{mcKind, mcaKind}

	handler := &proxyHandler{}
	a := newTestHub(t, testHubA, handler, kinds,
		managedCluster(testCluster, nil),
		testManagedClusterAddOn(testCluster, "placed"),
		testManagedClusterAddOn(testCluster, "manual"),
		testManagedClusterAddOn(testCluster, "unknown-on-b"),
		testClusterManagementAddOn("placed", "Placements"),
		testClusterManagementAddOn("unknown-on-b", "Placements"),
	)
	b := newTestHub(t, testHubB, handler, kinds,
		testClusterManagementAddOn("placed", "Placements"),
		testClusterManagementAddOn("manual", mirror.AddOnInstallStrategyManual),
	)
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: 100 * time.Millisecond}, a, b)
	ctx := context.Background()

	eventually(t, "hub-b holds a copy of the Manual add-on", func() bool {
		cp, _ := b.hub.Peek(mcaKind.Name, testCluster, "manual")
		return cp != nil && cp.GetLabels()[mirror.LabelReplicatedFrom] == testHubA
	})
	quiesce(t, c, a, b)
	if got := b.get(t, mcaKind, testCluster, "placed"); got != nil {
		t.Errorf("hub-b holds ManagedClusterAddOn placed, which its add-on manager installs by strategy: %v", got.Object)
	}
	// Hub A installs unknown-on-b by strategy, hub B has no ClusterManagementAddOn of that name yet: a copy
	// would be hub B's add-on manager's to delete once the ClusterManagementAddOn arrives.
	if got := b.get(t, mcaKind, testCluster, "unknown-on-b"); got != nil {
		t.Errorf("hub-b holds ManagedClusterAddOn unknown-on-b before its ClusterManagementAddOn: %v", got.Object)
	}
	for _, w := range b.writes(mcaKind) {
		if w == "create "+testCluster+"/placed" {
			t.Errorf("the replicator wrote ManagedClusterAddOn placed on hub-b: %s", w)
		}
	}
	if src := a.get(t, mcaKind, testCluster, "placed"); mirror.HasCopyOn(src, testHubB) {
		t.Errorf("hub-a's placed is marked as copied to hub-b: %v", src.GetAnnotations())
	}
	snap := c.Snapshot()
	if !snap.CaughtUp[testHubB] {
		t.Errorf("hub-b is not caught up: a hub left to its add-on manager must count as in step")
	}
	if snap.Conflicts[testHubB] != 0 {
		t.Errorf("hub-b counts %d conflicts, want 0", snap.Conflicts[testHubB])
	}
	if n := len(b.writes(cmaKind)); n != 0 {
		t.Errorf("the replicator wrote %d times to ClusterManagementAddOns, which it only watches here", n)
	}

	// Hub B's add-on manager stops installing placed: the replicator mirrors it there from then on.
	manual := testClusterManagementAddOn("placed", mirror.AddOnInstallStrategyManual)
	if _, err := b.fake.Resource(cmaKind.GVR).Update(ctx, manual, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hub-b holds a copy of placed once its ClusterManagementAddOn is Manual", func() bool {
		cp, _ := b.hub.Peek(mcaKind.Name, testCluster, "placed")
		return cp != nil && cp.GetLabels()[mirror.LabelReplicatedFrom] == testHubA
	})
	eventually(t, "hub-a's placed lists hub-b as holding a copy", func() bool {
		return slices.Contains(mirror.CopiesOn(a.get(t, mcaKind, testCluster, "placed")), testHubB)
	})

	// And installs it by strategy again: the replicator deletes its copy there (hub B's add-on manager makes
	// its own where its Placements decide) and writes none again.
	if _, err := b.fake.Resource(cmaKind.GVR).Update(ctx, testClusterManagementAddOn("placed", "Placements"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the replicator deleted its copy of placed on hub-b", func() bool {
		return b.get(t, mcaKind, testCluster, "placed") == nil
	})
	quiesce(t, c, a, b)
	// The last write of placed on hub-b is that delete: no copy is written again.
	var placed []string
	for _, w := range b.writes(mcaKind) {
		if strings.HasSuffix(w, " "+testCluster+"/placed") {
			placed = append(placed, w)
		}
	}
	if len(placed) == 0 || placed[len(placed)-1] != "delete "+testCluster+"/placed" || slices.Index(placed, "delete "+testCluster+"/placed") != len(placed)-1 {
		t.Errorf("writes of placed on hub-b: %v, want creates while Manual, then one delete, then nothing", placed)
	}
	if got := b.get(t, mcaKind, testCluster, "placed"); got != nil {
		t.Errorf("hub-b holds placed again: %v", got.Object)
	}
	// The ManagedCluster's copy and manual's.
	if snap := c.Snapshot(); snap.Copies[testHubB] != 2 {
		t.Errorf("hub-b counts %d copies, want 2 (the ManagedCluster and manual)", snap.Copies[testHubB])
	}
}

// A ClusterManagementAddOn event queues the add-ons of its name only when whether its hub installs the add-on
// by strategy changed: the add-on manager's status writes queue nothing. The controller runs no worker here,
// so the queue shows what each event added.
func TestClusterManagementAddOnEventsQueueOnlyChanges(t *testing.T) {
	mcaKind := testKind(t, failoverv1alpha1.KindManagedClusterAddOn)
	cmaKind := testKind(t, failoverv1alpha1.KindClusterManagementAddOn)
	kinds := []mirror.Kind{testKind(t, failoverv1alpha1.KindManagedCluster), mcaKind}
	a := newTestHub(t, testHubA, &proxyHandler{}, kinds)
	b := newTestHub(t, testHubB, &proxyHandler{}, kinds, testClusterManagementAddOn("hello", mirror.AddOnInstallStrategyManual))
	c, err := New(Options{Hubs: []*hubconn.Hub{a.hub, b.hub}, Kinds: kinds,
		Recorder: &lockedRecorder{InMemoryRecorder: events.NewInMemoryRecorder("replicator-test", clock.RealClock{})}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.hub.Run(ctx)
	go b.hub.Run(ctx)
	eventually(t, "both hubs are ready", func() bool { return a.hub.Ready() && b.hub.Ready() })
	addOn := Key{Kind: mcaKind.Name, Namespace: testCluster, Name: "hello"}
	c.objects.set(addOn, true)
	c.objects.set(Key{Kind: mcaKind.Name, Namespace: testCluster, Name: "other"}, true)
	drained := func() []Key {
		var out []Key
		for c.queue.Len() > 0 {
			key, _ := c.queue.Get()
			c.queue.Done(key)
			out = append(out, key)
		}
		return out
	}

	c.onClusterManagementAddOn(testHubB, "hello")
	if got := drained(); !slices.Equal(got, []Key{addOn}) {
		t.Errorf("first event of hello on hub-b queued %v, want %v", got, addOn)
	}
	c.onClusterManagementAddOn(testHubB, "hello") // a status write: the fact is the same
	if got := drained(); len(got) != 0 {
		t.Errorf("an event that changed nothing queued %v, want nothing", got)
	}
	if _, err := b.fake.Resource(cmaKind.GVR).Update(ctx, testClusterManagementAddOn("hello", "Placements"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hub-b's cache shows hello installed by strategy", func() bool {
		installs, _ := b.hub.AddOnInstall("hello")
		return installs
	})
	c.onClusterManagementAddOn(testHubB, "hello")
	if got := drained(); !slices.Equal(got, []Key{addOn}) {
		t.Errorf("the switch to a strategy queued %v, want %v", got, addOn)
	}
}

// A ManagedClusterAddOn copy goes without its add-on's pre-delete hook. A standby's add-on manager puts the hook
// finalizer on a copy as on any add-on of an add-on with a hook; a delete it still carries makes that hub write a
// hook ManifestWork, which waits there and runs on the spoke at the next switch to that hub. The replicator
// removes the hook finalizers before it deletes a copy (the source's add-on was deleted; the hub's add-on manager
// now installs the add-on by strategy), and from a copy being deleted already. When the hub's add-on manager
// puts the finalizer back between the two, the replicator removes it again and deletes (contested-once); when the
// add-on manager wins every time (contested), the copy is deleted on its UID alone and the finalizer removed
// from it then, when no finalizer can be added any more. A copy deleted meanwhile by someone else and made again
// under its name (remade, another UID) is left alone. A removal refused with 409 is a lost race too
// (patch-refused).
func TestControllerDeletesAddOnCopiesWithoutTheirPreDeleteHook(t *testing.T) {
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mcaKind := testKind(t, failoverv1alpha1.KindManagedClusterAddOn)
	cmaKind := testKind(t, failoverv1alpha1.KindClusterManagementAddOn)
	kinds := []mirror.Kind{mcKind, mcaKind}
	const (
		otherFinalizer = "example.com/keep"
		hookFinalizer  = "addon.open-cluster-management.io/addon-pre-delete"
	)
	names := []string{"uninstalled", "placed", "deleting", "contested", "contested-once", "remade", "patch-refused"}

	handler := &proxyHandler{}
	a := newTestHub(t, testHubA, handler, kinds,
		managedCluster(testCluster, nil),
		testManagedClusterAddOn(testCluster, "uninstalled"),
		testManagedClusterAddOn(testCluster, "placed"),
		testManagedClusterAddOn(testCluster, "deleting"),
		testManagedClusterAddOn(testCluster, "contested"),
		testManagedClusterAddOn(testCluster, "contested-once"),
		testManagedClusterAddOn(testCluster, "remade"),
		testManagedClusterAddOn(testCluster, "patch-refused"),
	)
	b := newTestHub(t, testHubB, handler, kinds,
		testClusterManagementAddOn("placed", mirror.AddOnInstallStrategyManual),
	)
	// Hub B's add-on manager wins the race on contested every time, on contested-once the first time: it puts
	// the hook finalizer back, and the delete on a resourceVersion finds it (409). A delete on the UID alone
	// marks the copy deleted, with the finalizers it holds, as the apiserver would. On remade, the first delete
	// finds an add-on of hub B's own made under that name (another UID, no copy label) after the copy went. No
	// delete on a resourceVersion may reach a copy that still holds the hook finalizer.
	const remadeUID = types.UID("0f7a3a34-2222-4333-8444-955566667777")
	var (
		mu   sync.Mutex
		lost = map[string]int{}
	)
	b.fake.PrependReactor("delete", "managedclusteraddons", func(action clienttesting.Action) (bool, runtime.Object, error) {
		del := action.(clienttesting.DeleteAction)
		name := del.GetName()
		obj, err := b.fake.Tracker().Get(mcaKind.GVR, testCluster, name)
		if err != nil {
			return false, nil, nil
		}
		u := obj.(*unstructured.Unstructured).DeepCopy()
		if p := del.GetDeleteOptions().Preconditions; p != nil && p.UID != nil && *p.UID != u.GetUID() {
			// As the apiserver does (the fake checks no precondition): a delete sent from a cache that still shows
			// an object of the name that is gone meets the object made again.
			return true, nil, apierrors.NewConflict(mcaKind.GVR.GroupResource(), name, fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *p.UID, u.GetUID()))
		}
		if p := del.GetDeleteOptions().Preconditions; p != nil && p.ResourceVersion != nil && u.GetDeletionTimestamp() == nil &&
			slices.Contains(u.GetFinalizers(), hookFinalizer) {
			t.Errorf("%s deleted with the hook finalizer on: %v", name, u.GetFinalizers())
		}
		if name != "contested" && name != "contested-once" && name != "remade" {
			return false, nil, nil
		}
		mu.Lock()
		wins := name == "contested" || lost[name] == 0
		lost[name]++
		mu.Unlock()
		if name == "remade" {
			if !wins || u.GetUID() == remadeUID {
				t.Errorf("a delete of the add-on hub B made again under the copy's name: %+v", del.GetDeleteOptions())
				return true, nil, nil
			}
			remade := testManagedClusterAddOn(testCluster, name)
			remade.SetUID(remadeUID)
			remade.SetFinalizers([]string{hookFinalizer})
			if err := b.fake.Tracker().Update(mcaKind.GVR, remade, testCluster); err != nil {
				return true, nil, err
			}
			return true, nil, apierrors.NewConflict(mcaKind.GVR.GroupResource(), name, fmt.Errorf("the object has been modified"))
		}
		if p := del.GetDeleteOptions().Preconditions; p != nil && p.ResourceVersion != nil {
			if !wins {
				return false, nil, nil
			}
			u.SetFinalizers([]string{hookFinalizer, otherFinalizer})
			if err := b.fake.Tracker().Update(mcaKind.GVR, u, testCluster); err != nil {
				return true, nil, err
			}
			return true, nil, apierrors.NewConflict(mcaKind.GVR.GroupResource(), name, fmt.Errorf("the object has been modified"))
		}
		now := metav1.Now()
		u.SetDeletionTimestamp(&now)
		return true, nil, b.fake.Tracker().Update(mcaKind.GVR, u, testCluster)
	})
	// On patch-refused, hub B's add-on manager writes the copy between the replicator's read and its first
	// removal (409 on the resourceVersion).
	patchRefused := false
	b.fake.PrependReactor("patch", "managedclusteraddons", func(action clienttesting.Action) (bool, runtime.Object, error) {
		patch := action.(clienttesting.PatchAction)
		var body struct {
			Metadata struct {
				UID *types.UID `json:"uid"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(patch.GetPatch(), &body); err == nil && body.Metadata.UID != nil {
			// The UID precondition of a merge patch, which the fake does not check either.
			if obj, err := b.fake.Tracker().Get(mcaKind.GVR, testCluster, patch.GetName()); err == nil && obj.(*unstructured.Unstructured).GetUID() != *body.Metadata.UID {
				return true, nil, apierrors.NewConflict(mcaKind.GVR.GroupResource(), patch.GetName(), fmt.Errorf("precondition failed: UID in precondition: %s", *body.Metadata.UID))
			}
		}
		if patch.GetName() != "patch-refused" {
			return false, nil, nil
		}
		mu.Lock()
		defer mu.Unlock()
		if patchRefused {
			return false, nil, nil
		}
		patchRefused = true
		return true, nil, apierrors.NewConflict(mcaKind.GVR.GroupResource(), "patch-refused", fmt.Errorf("the object has been modified"))
	})
	c, _ := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: 100 * time.Millisecond}, a, b)
	ctx := context.Background()

	// Hub B's add-on manager marks each copy for the add-on's hook.
	for _, name := range names {
		eventually(t, "hub-b holds a copy of "+name, func() bool {
			cp, _ := b.hub.Peek(mcaKind.Name, testCluster, name)
			return cp != nil && cp.GetLabels()[mirror.LabelReplicatedFrom] == testHubA
		})
	}
	quiesce(t, c, a, b)
	before := len(b.writes(mcaKind))
	metrics.Register()
	writeErrors := func() float64 {
		v, err := metricstestutil.GetCounterMetricValue(metrics.WriteErrors.WithLabelValues(string(mcaKind.Name), testHubB))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	errorsBefore := writeErrors()
	for _, name := range names {
		cp := b.get(t, mcaKind, testCluster, name)
		cp.SetFinalizers([]string{hookFinalizer, otherFinalizer})
		if name == "deleting" {
			now := metav1.Now()
			cp.SetDeletionTimestamp(&now)
		}
		if _, err := b.fake.Resource(mcaKind.GVR).Namespace(testCluster).Update(ctx, cp, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Every copy's update is in hub-b's cache before the uninstall: a sync that read a copy without its finalizers
	// would delete it without a removal first, and the races below would not be the ones they are.
	for _, name := range names {
		eventually(t, "hub-b's cache shows the update of "+name, func() bool {
			cp, _ := b.hub.Peek(mcaKind.Name, testCluster, name)
			if name == "deleting" {
				// The replicator answers this update at once, by removing the hook finalizer.
				return cp != nil && cp.GetDeletionTimestamp() != nil
			}
			return cp != nil && len(cp.GetFinalizers()) == 2
		})
	}

	// The add-on is uninstalled on the cluster's hub; hub B's add-on manager starts installing placed by
	// strategy.
	for _, name := range []string{"uninstalled", "contested", "contested-once", "remade", "patch-refused"} {
		if err := a.fake.Resource(mcaKind.GVR).Namespace(testCluster).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.fake.Resource(cmaKind.GVR).Update(ctx, testClusterManagementAddOn("placed", "Placements"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"uninstalled", "placed", "contested-once", "patch-refused"} {
		eventually(t, "the replicator deleted its copy of "+name+" on hub-b", func() bool {
			return b.get(t, mcaKind, testCluster, name) == nil
		})
	}
	for _, name := range []string{"deleting", "contested"} {
		eventually(t, "the copy "+name+", being deleted, lost its hook finalizer", func() bool {
			cp := b.get(t, mcaKind, testCluster, name)
			return cp != nil && cp.GetDeletionTimestamp() != nil && slices.Equal(cp.GetFinalizers(), []string{otherFinalizer})
		})
	}
	quiesce(t, c, a, b)
	if o := b.get(t, mcaKind, testCluster, "remade"); o == nil || o.GetUID() != remadeUID || !slices.Equal(o.GetFinalizers(), []string{hookFinalizer}) {
		t.Errorf("hub B's own add-on made again under the copy's name: %v, want it untouched (UID %s, its hook finalizer)", o, remadeUID)
	}

	// Every lost race was handled within its sync: none failed it.
	if n := writeErrors() - errorsBefore; n != 0 {
		t.Errorf("%v write errors of ManagedClusterAddOns on hub-b, want 0", n)
	}
	writes := b.writes(mcaKind)[before:]
	contestedWrites := []string{"update " + testCluster + "/contested"}
	for range hookRemovalAttempts {
		contestedWrites = append(contestedWrites, "patch "+testCluster+"/contested", "delete "+testCluster+"/contested")
	}
	contestedWrites = append(contestedWrites, "delete "+testCluster+"/contested", "patch "+testCluster+"/contested")
	for name, want := range map[string][]string{
		// The test's update (hub B's add-on manager), then the replicator's.
		"uninstalled": {"update " + testCluster + "/uninstalled", "patch " + testCluster + "/uninstalled", "delete " + testCluster + "/uninstalled"},
		"placed":      {"update " + testCluster + "/placed", "patch " + testCluster + "/placed", "delete " + testCluster + "/placed"},
		// Being deleted already: only the finalizers go; the delete is under way.
		"deleting": {"update " + testCluster + "/deleting", "patch " + testCluster + "/deleting"},
		// The first removal refused: read again, removed, deleted.
		"patch-refused": {"update " + testCluster + "/patch-refused", "patch " + testCluster + "/patch-refused",
			"patch " + testCluster + "/patch-refused", "delete " + testCluster + "/patch-refused"},
		// Found another object under the name after the 409: no more writes.
		"remade": {"update " + testCluster + "/remade", "patch " + testCluster + "/remade", "delete " + testCluster + "/remade"},
		// Lost the race once: 409 on the resourceVersion; the finalizer removed again, then the delete.
		"contested-once": {"update " + testCluster + "/contested-once", "patch " + testCluster + "/contested-once", "delete " + testCluster + "/contested-once",
			"patch " + testCluster + "/contested-once", "delete " + testCluster + "/contested-once"},
		// Lost it every time: hookRemovalAttempts removals each followed by a 409, then the delete on the UID
		// alone and the finalizers once more.
		"contested": contestedWrites,
	} {
		var got []string
		for _, w := range writes {
			if strings.HasSuffix(w, " "+testCluster+"/"+name) {
				got = append(got, w)
			}
		}
		// A sync that ran on a cache not yet showing the delete may repeat it (the fake, like the apiserver,
		// answers 404, or here applies it again: it checks no resourceVersion). Nothing is written back.
		if len(got) < len(want) || !slices.Equal(got[:len(want)], want) ||
			slices.ContainsFunc(got[len(want):], func(w string) bool { return !strings.HasPrefix(w, "patch ") && !strings.HasPrefix(w, "delete ") }) {
			t.Errorf("writes of %s on hub-b from the hook finalizer on: %v, want %v, then at most repeated patches and deletes", name, got, want)
		}
	}
	// Only the hook's finalizers were removed: the patch kept the other one.
	for _, action := range b.fake.Actions() {
		if p, ok := action.(interface{ GetPatch() []byte }); ok && action.GetResource() == mcaKind.GVR {
			if patch := string(p.GetPatch()); strings.Contains(patch, "finalizers") && !strings.Contains(patch, otherFinalizer) {
				t.Errorf("a finalizer patch on hub-b drops %s: %s", otherFinalizer, patch)
			}
		}
	}
}
