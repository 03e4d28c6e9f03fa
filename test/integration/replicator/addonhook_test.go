package replicator_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// The template add-on with a pre-delete hook that TestAddOnCopyGoesWithoutItsPreDeleteHook installs by hand
// (install strategy Manual) on cluster hookCluster.
const (
	hookCluster            = "cluster-hook"
	hookedAddOn            = "hooked"
	hookedAddOnTempl       = "hooked-template"
	preDeleteHookFinalizer = "addon.open-cluster-management.io/addon-pre-delete"
	// hookWorkName is the ManifestWork OCM's add-on framework (v1.2.0, constants.PreDeleteHookWorkName) makes
	// for the add-on's pre-delete hook when its ManagedClusterAddOn is deleted.
	hookWorkName = "addon-" + hookedAddOn + "-pre-delete"
)

// TestAddOnCopyGoesWithoutItsPreDeleteHook: on two complete hubs, a template add-on whose AddOnTemplate has a
// pre-delete hook Job is installed on a cluster of hub A; the replicator copies it to hub B, whose add-on manager
// puts the hook finalizer on the copy as on any add-on of its own. The add-on is then uninstalled on hub A. Hub
// A's add-on manager makes the hook's ManifestWork for the spoke (the uninstall the user asked for); on hub B the
// copy must go without it: a hook work made there would wait, and run on the spoke at the next switch to hub B.
func TestAddOnCopyGoesWithoutItsPreDeleteHook(t *testing.T) {
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", ClusterManager: true, Signer: framework.SignerInProcess})
	hubBHub := framework.StartHub(t, framework.HubOptions{Name: hubB, ClusterManager: true, Signer: framework.SignerInProcess})
	ctx := context.Background()
	mcaKind, mwKind := mustKind(failoverv1alpha1.KindManagedClusterAddOn), mustKind(failoverv1alpha1.KindManifestWork)

	applyUnstructured(t, hubA, failoverv1alpha1.KindManagedCluster, map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
		"metadata": map[string]any{"name": hookCluster},
		"spec":     map[string]any{"hubAcceptsClient": true},
	})
	applyHookedAddOn(t, hubA)
	applyUnstructured(t, hubA, failoverv1alpha1.KindManagedClusterAddOn, map[string]any{
		"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn",
		"metadata": map[string]any{"name": hookedAddOn, "namespace": hookCluster},
		"spec":     map[string]any{},
	})
	waitObj(t, hubA, failoverv1alpha1.KindManagedClusterAddOn, hookCluster, hookedAddOn, replicationTimeout,
		"the hook finalizer from hub A's add-on manager", hasFinalizer(preDeleteHookFinalizer))

	r := setUpReplicator(t, hubBHub, failoverv1alpha1.ReplicationConfigSpec{},
		namedHub{name: primary, hub: hubA}, namedHub{name: hubB, hub: hubBHub})
	r.start()
	for _, obj := range []struct {
		kind            failoverv1alpha1.ReplicatedKind
		namespace, name string
	}{
		{failoverv1alpha1.KindManagedCluster, "", hookCluster},
		{failoverv1alpha1.KindAddOnTemplate, "", hookedAddOnTempl},
		{failoverv1alpha1.KindClusterManagementAddOn, "", hookedAddOn},
	} {
		waitObj(t, hubBHub, obj.kind, obj.namespace, obj.name, replicationTimeout, "a copy from primary", copiedFrom(primary))
	}
	// Hub B's add-on manager treats the copy as an add-on of its own: the hook finalizer, and the add-on's
	// deploy ManifestWork.
	waitObj(t, hubBHub, failoverv1alpha1.KindManagedClusterAddOn, hookCluster, hookedAddOn, 2*replicationTimeout,
		"a copy from primary with the hook finalizer from hub B's add-on manager", func(o *unstructured.Unstructured) bool {
			return copiedFrom(primary)(o) && hasFinalizer(preDeleteHookFinalizer)(o)
		})
	waitAddOnWork(t, hubBHub, hookCluster, hookedAddOn)

	// Every ManifestWork hub B makes in the cluster's namespace from now on.
	watcher, err := dyn(hubBHub).Resource(mwKind.GVR).Namespace(hookCluster).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		madeOnB []string
		watched = make(chan struct{})
	)
	go func() {
		defer close(watched)
		for ev := range watcher.ResultChan() {
			if o, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type == watch.Added {
				mu.Lock()
				madeOnB = append(madeOnB, o.GetName())
				mu.Unlock()
			}
		}
	}()

	// The user uninstalls the add-on on the cluster's hub.
	if err := dyn(hubA).Resource(mcaKind.GVR).Namespace(hookCluster).Delete(ctx, hookedAddOn, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// There, the hook runs: hub A's add-on manager makes its ManifestWork for the spoke.
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, hookCluster, hookWorkName, replicationTimeout,
		"hub A's add-on manager's pre-delete hook work", func(o *unstructured.Unstructured) bool { return o != nil })
	// On hub B the copy goes, with no hook.
	waitObj(t, hubBHub, failoverv1alpha1.KindManagedClusterAddOn, hookCluster, hookedAddOn, replicationTimeout,
		"the copy deleted", absent)
	watcher.Stop()
	<-watched
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(madeOnB, hookWorkName) {
		t.Errorf("hub B made the add-on's pre-delete hook work %s for a copy: it would run on the spoke at the next switch to hub B", hookWorkName)
	}
	if w, err := getObj(hubBHub, mwKind, hookCluster, hookWorkName); err != nil || w != nil {
		t.Errorf("hub B holds ManifestWork %s/%s: %s (err %v), want none", hookCluster, hookWorkName, describe(w), err)
	}
	// The uninstall on the cluster's hub still waits for its hook: the replicator left hub A's finalizer alone.
	if o, err := getObj(hubA, mcaKind, hookCluster, hookedAddOn); err != nil || o == nil || o.GetDeletionTimestamp() == nil ||
		!hasFinalizer(preDeleteHookFinalizer)(o) {
		t.Errorf("hub A's ManagedClusterAddOn %s/%s: %s (err %v), want it being deleted, held by %s until the spoke completes the hook",
			hookCluster, hookedAddOn, describe(o), err, preDeleteHookFinalizer)
	}
	if w, err := getObj(hubA, mwKind, hookCluster, hookWorkName); err != nil || w == nil {
		t.Errorf("hub A's hook work %s/%s is gone (err %v): the hook must run from the cluster's hub", hookCluster, hookWorkName, err)
	}
	t.Logf("measured: hub A made the hook work %s; hub B's ManifestWorks in the namespace, from before the uninstall until the copy was gone: %v, no hook work", hookWorkName, madeOnB)
}

// applyHookedAddOn makes on hub h the template add-on hookedAddOn: an AddOnTemplate whose agent manifests are a
// ConfigMap and a pre-delete hook Job (annotation addon.open-cluster-management.io/addon-pre-delete), and a
// ClusterManagementAddOn with install strategy Manual naming it as the default config.
func applyHookedAddOn(t *testing.T, h *framework.Hub) {
	t.Helper()
	applyUnstructured(t, h, failoverv1alpha1.KindAddOnTemplate, map[string]any{
		"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "AddOnTemplate",
		"metadata": map[string]any{"name": hookedAddOnTempl},
		"spec": map[string]any{
			"addonName": hookedAddOn,
			"agentSpec": map[string]any{"workload": map[string]any{"manifests": []any{
				map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": "cm-hooked", "namespace": "default"}, "data": map[string]any{"value": "installed"}},
				map[string]any{"apiVersion": "batch/v1", "kind": "Job",
					"metadata": map[string]any{"name": "hooked-cleanup", "namespace": "default",
						"annotations": map[string]any{"addon.open-cluster-management.io/addon-pre-delete": ""}},
					"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
						"restartPolicy": "Never",
						"containers":    []any{map[string]any{"name": "cleanup", "image": "registry.example/cleanup:1"}},
					}}}},
			}}},
		},
	})
	applyTemplateClusterManagementAddOn(t, h, hookedAddOn, hookedAddOnTempl, map[string]any{"type": mirror.AddOnInstallStrategyManual})
}

// hasFinalizer returns a condition: the object exists and carries finalizer f.
func hasFinalizer(f string) func(*unstructured.Unstructured) bool {
	return func(o *unstructured.Unstructured) bool {
		return o != nil && slices.Contains(o.GetFinalizers(), f)
	}
}
