package replicator_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// configMapGVR is the core ConfigMap resource.
var configMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// fenceUser is the hub user the fence checks play: a cluster admin who is neither the replicator nor an agent.
const fenceUser = "alice"

// userClient returns a dynamic client of hub h that impersonates user with groups (system:authenticated
// added), after binding user to cluster-admin there.
func userClient(t *testing.T, h *framework.Hub, user string, groups ...string) dynamic.Interface {
	t.Helper()
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "fence-test-" + user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}
	if _, err := h.Kube.RbacV1().ClusterRoleBindings().Create(context.Background(), binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// The apiserver's RBAC authorizer learns of the binding through its informer: wait until it allows the user.
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		review, err := h.Kube.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups,
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "create", Group: workGVR.Group, Resource: workGVR.Resource}},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return review.Status.Allowed, nil
	}, "user %s bound to cluster-admin on hub %s", user, h.Name)
	cfg := rest.CopyConfig(h.AdminConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append([]string{"system:authenticated"}, groups...)}
	return dynamic.NewForConfigOrDie(cfg)
}

// waitNamespaceMark waits until cluster's namespace on h carries fence.LabelClusterHub = source ("" : none).
func waitNamespaceMark(t *testing.T, h *framework.Hub, cluster, source string) {
	t.Helper()
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		ns, err := h.Kube.CoreV1().Namespaces().Get(context.Background(), cluster, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got, ok := ns.Labels[fence.LabelClusterHub]
		if source == "" {
			return !ok && ns.Annotations[mirror.AnnotationClusterHub] == "", nil
		}
		return got == source && ns.Annotations[mirror.AnnotationClusterHub] == source && ns.Annotations[mirror.AnnotationClusterHubSince] != "", nil
	}, "namespace %s on hub %s marked as managed from %q", cluster, h.Name, source)
	waitFence(t, h, cluster, source != "")
}

// waitFence waits until hub h's fence acts on cluster's namespace as fenced says. The apiserver's admission
// reads namespaces from its own cache, so a change of a namespace's marks or of fence.LabelUnfenced takes effect
// a moment after the write that made it. The probe is a ManifestWork create, dry run, by the hub's admin.
func waitFence(t *testing.T, h *framework.Hub, cluster string, fenced bool) {
	t.Helper()
	probe := configMapWork(t, cluster, "fence-probe", map[string]string{"cm": "probe"})
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		_, err := dyn(h).Resource(workGVR).Namespace(cluster).Create(context.Background(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		refused := apierrors.IsForbidden(err) && strings.Contains(err.Error(), "cluster "+cluster+" is managed from hub ")
		if fenced {
			return refused, err
		}
		return err == nil, err
	}, "the fence on hub %s %s ManifestWorks in namespace %s", h.Name, map[bool]string{true: "refuses", false: "lets through"}[fenced], cluster)
}

// unfence labels cluster's namespace on h fence.LabelUnfenced=true, the fence's emergency override, and returns
// the func that removes the label again; each waits until the fence acts on it.
func unfence(t *testing.T, h *framework.Hub, cluster string) func() {
	t.Helper()
	setLabel := func(value any) {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{fence.LabelUnfenced: value}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Kube.CoreV1().Namespaces().Patch(context.Background(), cluster, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatalf("hub %s: label namespace %s %s=%v: %v", h.Name, cluster, fence.LabelUnfenced, value, err)
		}
	}
	setLabel("true")
	waitFence(t, h, cluster, false)
	return func() {
		t.Helper()
		setLabel(nil)
		waitFence(t, h, cluster, true)
	}
}

// expectFenced checks that err is the fence's refusal naming cluster, source and hub.
func expectFenced(t *testing.T, what string, err error, cluster, source, hub string) {
	t.Helper()
	want := "cluster " + cluster + " is managed from hub " + source + " since "
	if err == nil || !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "this hub, "+hub+",") {
		t.Errorf("%s on hub %s: got %v, want a refusal containing %q", what, hub, err, want)
	}
}

// checkFence is the fence part of TestReplicationFaults, with cluster on hub source (B) and hubs stale (A, C)
// that hold its copies and a ManifestWork work there.
func checkFence(t *testing.T, cluster, work string, source *framework.Hub, sourceName string, stale ...*framework.Hub) {
	t.Helper()
	ctx := context.Background()
	waitNamespaceMark(t, source, cluster, "")
	for _, h := range stale {
		waitNamespaceMark(t, h, cluster, sourceName)
		c := userClient(t, h, fenceUser)
		works := c.Resource(workGVR).Namespace(cluster)
		// An edit of the spec, a new ManifestWork and a delete are refused; so is hubAcceptsClient.
		cur, err := works.Get(ctx, work, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		edited := cur.DeepCopy()
		edited.Object["spec"] = configMapWork(t, cluster, work, map[string]string{"cm": "edited-on-stale-hub"}).Object["spec"]
		_, err = works.Update(ctx, edited, metav1.UpdateOptions{})
		expectFenced(t, "ManifestWork spec update", err, cluster, sourceName, h.Name)
		t.Logf("hub %s refused a user's ManifestWork edit: %v", h.Name, err)
		if !strings.Contains(err.Error(), "=true on namespace "+cluster+" overrides") {
			t.Errorf("the refusal of a ManifestWork edit does not name the namespace to label: %v", err)
		}
		// Adding the add-on manager's label in the same update does not pass the fence.
		disguised := edited.DeepCopy()
		disguised.SetLabels(map[string]string{mirror.AddonNameLabel: "fake-addon"})
		_, err = works.Update(ctx, disguised, metav1.UpdateOptions{})
		expectFenced(t, "ManifestWork spec update that adds the add-on label", err, cluster, sourceName, h.Name)
		_, err = works.Create(ctx, configMapWork(t, cluster, "new-on-stale-hub", map[string]string{"cm": "x"}), metav1.CreateOptions{})
		expectFenced(t, "ManifestWork create", err, cluster, sourceName, h.Name)
		// What the replicator never mirrors passes: a ManifestWorkReplicaSet's work (the hub's work manager
		// makes it), an add-on manager's own ManagedClusterAddOn (its ClusterManagementAddOn is the controller).
		setWork := configMapWork(t, cluster, "made-by-a-set", map[string]string{"cm": "set"})
		setWork.SetLabels(map[string]string{mirror.ManifestWorkReplicaSetLabel: "apps.set"})
		if _, err := works.Create(ctx, setWork, metav1.CreateOptions{}); err != nil {
			t.Errorf("a ManifestWorkReplicaSet's ManifestWork create on hub %s: %v (want allowed)", h.Name, err)
		} else if err := works.Delete(ctx, setWork.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Errorf("a ManifestWorkReplicaSet's ManifestWork delete on hub %s: %v (want allowed)", h.Name, err)
		}
		addOns := c.Resource(mustKind(failoverv1alpha1.KindManagedClusterAddOn).GVR).Namespace(cluster)
		addOn := func(name string, owned bool) *unstructured.Unstructured {
			o := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn",
				"metadata": map[string]any{"name": name, "namespace": cluster}, "spec": map[string]any{}}}
			if owned {
				controller := true
				o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "addon.open-cluster-management.io/v1alpha1",
					Kind: "ClusterManagementAddOn", Name: name, UID: "0f7a3a34-1111-4222-8333-944455556666", Controller: &controller}})
			}
			return o
		}
		_, err = addOns.Create(ctx, addOn("by-user", false), metav1.CreateOptions{})
		expectFenced(t, "ManagedClusterAddOn create", err, cluster, sourceName, h.Name)
		if _, err := addOns.Create(ctx, addOn("by-strategy", true), metav1.CreateOptions{}); err != nil {
			t.Errorf("an add-on manager's ManagedClusterAddOn (controller ClusterManagementAddOn) create on hub %s: %v (want allowed)", h.Name, err)
		} else if err := addOns.Delete(ctx, "by-strategy", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			// (NotFound: the garbage collector deleted it first, its owner does not exist.)
			t.Errorf("an add-on manager's ManagedClusterAddOn delete on hub %s: %v (want allowed)", h.Name, err)
		}
		err = works.Delete(ctx, work, metav1.DeleteOptions{})
		expectFenced(t, "ManifestWork delete", err, cluster, sourceName, h.Name)
		mcs := c.Resource(mcGVR)
		// Read and write again on a conflict: the hub controller labels the ManagedCluster after the add-on
		// creates and deletes above.
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			mc, err := mcs.Get(ctx, cluster, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			denied := mc.DeepCopy()
			_ = unstructured.SetNestedField(denied.Object, false, "spec", "hubAcceptsClient")
			_, err = mcs.Update(ctx, denied, metav1.UpdateOptions{})
			return err
		})
		expectFenced(t, "ManagedCluster hubAcceptsClient=false", err, cluster, sourceName, h.Name)
		if err != nil && !strings.Contains(err.Error(), "=true on the ManagedCluster overrides") {
			t.Errorf("the refusal of a ManagedCluster change does not name the ManagedCluster to label: %v", err)
		}
		// A Secret or ConfigMap labelled for backup in the namespace is fenced; any other is not.
		backup := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "fence-backup", "namespace": cluster, "labels": map[string]any{mirror.BackupLabel: "true"}},
			"data":     map[string]any{"k": "v"}}}
		_, err = c.Resource(configMapGVR).Namespace(cluster).Create(ctx, backup, metav1.CreateOptions{})
		expectFenced(t, "backup ConfigMap create", err, cluster, sourceName, h.Name)
		// (Made by the admin under the emergency override.) Dropping the backup label with a data change is
		// refused.
		refence := unfence(t, h, cluster)
		if _, err := dyn(h).Resource(configMapGVR).Namespace(cluster).Create(ctx, backup, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		refence()
		relabelled := backup.DeepCopy()
		relabelled.SetLabels(nil)
		relabelled.Object["data"] = map[string]any{"k": "changed"}
		_, err = c.Resource(configMapGVR).Namespace(cluster).Update(ctx, relabelled, metav1.UpdateOptions{})
		expectFenced(t, "backup ConfigMap data change that drops the backup label", err, cluster, sourceName, h.Name)
		plain := backup.DeepCopy()
		plain.SetName("fence-plain")
		plain.SetLabels(nil)
		if _, err := c.Resource(configMapGVR).Namespace(cluster).Create(ctx, plain, metav1.CreateOptions{}); err != nil {
			t.Errorf("a ConfigMap without the backup label on hub %s: %v (want allowed)", h.Name, err)
		}
		// A change that does not reach the spoke (a label) passes.
		labelled := cur.DeepCopy()
		labels := labelled.GetLabels()
		labels["fence-test"] = "metadata-only"
		labelled.SetLabels(labels)
		if _, err := works.Update(ctx, labelled, metav1.UpdateOptions{}); err != nil {
			t.Errorf("a label-only update of ManifestWork %s/%s on hub %s: %v (want allowed)", cluster, work, h.Name, err)
		}
		// An agent of a managed cluster is never fenced (it follows its cluster).
		agent := userClient(t, h, "system:open-cluster-management:"+cluster+":agent", fence.GroupManagedClusters)
		if _, err := agent.Resource(workGVR).Namespace(cluster).Create(ctx, configMapWork(t, cluster, "by-agent", map[string]string{"cm": "a"}), metav1.CreateOptions{}); err != nil {
			t.Errorf("an agent's ManifestWork create on hub %s: %v (want allowed)", h.Name, err)
		}
		_ = agent.Resource(workGVR).Namespace(cluster).Delete(ctx, "by-agent", metav1.DeleteOptions{})
	}
	// On the source the same user changes what they like.
	updated := configMapWork(t, cluster, "made-by-user-on-source", map[string]string{"cm": "ok"})
	if _, err := userClient(t, source, fenceUser).Resource(workGVR).Namespace(cluster).Create(ctx, updated, metav1.CreateOptions{}); err != nil {
		t.Errorf("a user's ManifestWork create on the source hub %s: %v", source.Name, err)
	}
	// The emergency override: label unfenced=true on the namespace of one stale hub.
	h := stale[0]
	ns, err := h.Kube.CoreV1().Namespaces().Get(ctx, cluster, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Labels[fence.LabelUnfenced] = "true"
	if _, err := h.Kube.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		_, err := userClient(t, h, fenceUser).Resource(workGVR).Namespace(cluster).Create(ctx,
			configMapWork(t, cluster, "made-while-unfenced", map[string]string{"cm": "override"}), metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), err
	}, "a user's create on hub %s with namespace %s labelled %s=true", h.Name, cluster, fence.LabelUnfenced)
}
