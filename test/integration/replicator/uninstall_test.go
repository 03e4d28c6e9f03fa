package replicator_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/cmd"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// TestUninstall is docs/replicator.md's uninstall procedure on real hubs: with a cluster on hub A, its ManifestWork held
// by the delete-copies finalizer and copied to hub B, hub B fenced and marked, and A's ManagedCluster carrying the
// in-step report, the replicator is stopped and `klusterlet-failover replicator uninstall` runs on each hub. Then
// no fence, finalizer, namespace mark or report is left; a user's delete of the work on A finishes at once, and
// a user of hub B may write in the cluster's namespace there. B's copy keeps its copy marks. A second work,
// deleted on A after the replicator stopped (its delete held), loses its copy on B too: the uninstall on A is
// given hub B with --peer-kubeconfig, so that no switch to B would run the deleted work again.
func TestUninstall(t *testing.T) {
	const cluster, work, deletedWork = "gone1", "held", "deleted-while-stopped"
	hubA, hubBHub, stopOnA, r := twoHubsLeased(t, cluster, work)
	defer stopOnA()
	createWork(t, hubA, configMapWork(t, cluster, deletedWork, map[string]string{"v": "2"}))
	r.start()
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, work, replicationTimeout, "a copy from hub-a", copiedFrom("hub-a"))
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, deletedWork, replicationTimeout, "a copy from hub-a", copiedFrom("hub-a"))
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, work, replicationTimeout, "held and marked has-copies", func(o *unstructured.Unstructured) bool {
		return o != nil && mirror.HasCopyOn(o, hubB) && slices.Contains(o.GetFinalizers(), mirror.FinalizerDeleteCopies)
	})
	waitObj(t, hubA, failoverv1alpha1.KindManagedCluster, "", cluster, replicationTimeout, "the in-step report", func(o *unstructured.Unstructured) bool {
		return o != nil && o.GetAnnotations()[mirror.AnnotationHubsInStep] == hubB
	})
	waitNamespaceMark(t, hubBHub, cluster, "hub-a")
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, deletedWork, replicationTimeout, "held", func(o *unstructured.Unstructured) bool {
		return o != nil && slices.Contains(o.GetFinalizers(), mirror.FinalizerDeleteCopies)
	})
	r.stop()
	deleteObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, deletedWork)
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, deletedWork, replicationTimeout, "its delete held while the replicator is stopped",
		func(o *unstructured.Unstructured) bool { return o != nil && mirror.HoldsDelete(o) })

	peers := map[*framework.Hub]*framework.Hub{hubA: hubBHub, hubBHub: hubA}
	for _, h := range []*framework.Hub{hubA, hubBHub} {
		root := cmd.NewRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs([]string{"replicator", "uninstall", "--kubeconfig", h.AdminKubeconfigFile(), "--peer-kubeconfig", peers[h].AdminKubeconfigFile()})
		if err := root.Execute(); err != nil {
			t.Fatalf("replicator uninstall on hub %s: %v\n%s", h.Name, err, out.String())
		}
		t.Logf("replicator uninstall on hub %s: %s", h.Name, strings.TrimSpace(out.String()))
		for _, gvr := range []schema.GroupVersionResource{fence.PolicyGVR, fence.BindingGVR} {
			if _, err := dyn(h).Resource(gvr).Get(context.Background(), fence.PolicyName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("hub %s: fence %s %s: %v, want not found", h.Name, gvr.Resource, fence.PolicyName, err)
			}
		}
	}
	orig, err := getObj(hubA, mustKind(failoverv1alpha1.KindManifestWork), cluster, work)
	if err != nil || orig == nil || slices.Contains(orig.GetFinalizers(), mirror.FinalizerDeleteCopies) || mirror.HasCopyOn(orig, hubB) {
		t.Errorf("hub-a's work after the uninstall: %s (err %v), want it without the finalizer and has-copies", describe(orig), err)
	}
	if mc, err := getObj(hubA, mustKind(failoverv1alpha1.KindManagedCluster), "", cluster); err != nil || mc == nil ||
		mc.GetAnnotations()[mirror.AnnotationHubsInStep] != "" || mc.GetAnnotations()[mirror.AnnotationHubsBehind] != "" ||
		mc.GetAnnotations()[mirror.AnnotationHubsReported] != "" {
		t.Errorf("hub-a's ManagedCluster after the uninstall: %s (err %v), want no in-step report", describe(mc), err)
	}
	if mc, err := getObj(hubBHub, mustKind(failoverv1alpha1.KindManagedCluster), "", cluster); err != nil || mc == nil || mc.GetAnnotations()[mirror.AnnotationClusterHub] != "" {
		t.Errorf("hub-b's ManagedCluster after the uninstall: %s (err %v), want no cluster-hub mark", describe(mc), err)
	}
	waitNamespaceMark(t, hubBHub, cluster, "") // unmarked, and the fence no longer refuses a write there
	if cp, err := getObj(hubBHub, mustKind(failoverv1alpha1.KindManifestWork), cluster, work); err != nil || !copiedFrom("hub-a")(cp) {
		t.Errorf("hub-b's copy after the uninstall: %s (err %v), want it kept with its copy marks", describe(cp), err)
	}

	// The delete held on A finished on both hubs.
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, deletedWork, replicationTimeout, "deleted once its hold went", absent)
	if cp, err := getObj(hubBHub, mustKind(failoverv1alpha1.KindManifestWork), cluster, deletedWork); err != nil || cp != nil {
		t.Errorf("hub-b's copy of the work deleted on hub-a while the replicator was stopped: %s (err %v), want it deleted by the uninstall", describe(cp), err)
	}

	deleteObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, work)
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, work, replicationTimeout, "deleted: no finalizer of the replicator holds it", absent)
}
