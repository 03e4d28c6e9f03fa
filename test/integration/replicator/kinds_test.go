package replicator_test

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// The governance, ManagedServiceAccount and custom-kind objects applyHubKinds makes on a hub, and the custom
// kind of the test.
const (
	// rootPolicy (namespace apps) is a root Policy bound by placementBinding to Placement prod, and listed by
	// policySet.
	rootPolicy       = "policy-config"
	placementBinding = "binding-config"
	policySet        = "set-config"
	// replicatedPolicy is the name governance's propagator gives rootPolicy's copy in a cluster's namespace
	// (<root namespace>.<root name>, label mirror.RootPolicyLabel); only hub B's propagator made one here.
	replicatedPolicy = "apps." + rootPolicy
	// onlyOnAPolicy is a replicated Policy that only hub A's propagator made.
	onlyOnAPolicy = "apps.only-on-a"
	// managedServiceAccount is a ManagedServiceAccount in the cluster's namespace.
	managedServiceAccount = "msa-1"
	// widget and generatedWidget are Widgets (the custom kind) in the cluster's namespace; generatedWidget
	// carries widgetGeneratedLabel.
	widget               = "widget-1"
	generatedWidget      = "widget-generated"
	widgetGeneratedLabel = "example.com/generated-by"
)

// widgetKind is the test's custom kind, as a user names it in a ReplicationConfig: Widget (example.com/v1,
// namespaced, from widgetCRD), in a cluster's namespace, spec copied, objects labelled widgetGeneratedLabel
// generated on each hub.
var widgetKind = failoverv1alpha1.CustomKind{
	Group: "example.com", Version: "v1", Resource: "widgets", Namespaced: true,
	Scope: failoverv1alpha1.ScopeClusterByNamespace, GeneratedLabels: []string{widgetGeneratedLabel},
}

// installWidgets makes hub h serve Widget (widgetKind) and grants it to the replicator's ServiceAccount in a
// ClusterRole of its own, as docs/replicator.md tells a user to for a custom kind.
func installWidgets(t *testing.T, h *framework.Hub) {
	t.Helper()
	ctx := context.Background()
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", XPreserveUnknownFields: &preserve},
						"status": {Type: "object", XPreserveUnknownFields: &preserve},
					},
				}},
			}},
		},
	}
	if _, err := apiextensionsclient.NewForConfigOrDie(h.AdminConfig).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("hub %s: create CRD %s: %v", h.Name, crd.Name, err)
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "replicator-widgets"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"example.com"}, Resources: []string{"widgets"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "replicator-widgets"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: util.ReplicatorHubNamespace,
			Name: util.ReplicatorHubServiceAccount}},
	}
	if _, err := h.Kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := h.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		_, err := dyn(h).Resource(mirror.CustomKindOf(widgetKind).GVR).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, err
	}, "hub %s serves widgets.example.com", h.Name)
}

// applyHubKinds makes on hub h (the cluster's and the hub-wide source) what the replicator mirrors beyond OCM's
// own kinds: root Policy rootPolicy, PlacementBinding placementBinding, PolicySet policySet (namespace apps),
// ManagedServiceAccount managedServiceAccount and Widgets widget (with a status) and generatedWidget in the
// cluster's namespace; and, as governance's propagator would, replicated Policy onlyOnAPolicy there.
func applyHubKinds(t *testing.T, h *framework.Hub) {
	t.Helper()
	applyUnstructured(t, h, failoverv1alpha1.KindPolicy, policy("apps", rootPolicy, nil, nil))
	applyUnstructured(t, h, failoverv1alpha1.KindPlacementBinding, map[string]any{
		"apiVersion": "policy.open-cluster-management.io/v1", "kind": "PlacementBinding",
		"metadata":     map[string]any{"name": placementBinding, "namespace": "apps"},
		"placementRef": map[string]any{"apiGroup": "cluster.open-cluster-management.io", "kind": "Placement", "name": "prod"},
		"subjects":     []any{map[string]any{"apiGroup": "policy.open-cluster-management.io", "kind": "Policy", "name": rootPolicy}},
	})
	applyUnstructured(t, h, failoverv1alpha1.KindPolicySet, map[string]any{
		"apiVersion": "policy.open-cluster-management.io/v1beta1", "kind": "PolicySet",
		"metadata": map[string]any{"name": policySet, "namespace": "apps"},
		"spec":     map[string]any{"policies": []any{rootPolicy}},
	})
	applyUnstructured(t, h, failoverv1alpha1.KindManagedServiceAccount, map[string]any{
		"apiVersion": "authentication.open-cluster-management.io/v1beta1", "kind": "ManagedServiceAccount",
		"metadata": map[string]any{"name": managedServiceAccount, "namespace": cluster},
		"spec":     map[string]any{"rotation": map[string]any{"enabled": true, "validity": "8640h0m0s"}},
	})
	applyUnstructured(t, h, widgetKind.Name(), map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": widget, "namespace": cluster},
		"spec":     map[string]any{"size": int64(3)},
		"status":   map[string]any{"ready": true},
	})
	applyUnstructured(t, h, widgetKind.Name(), map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": generatedWidget, "namespace": cluster, "labels": map[string]any{widgetGeneratedLabel: "x"}},
		"spec":     map[string]any{"size": int64(1)},
	})
	applyUnstructured(t, h, failoverv1alpha1.KindPolicy, policy(cluster, onlyOnAPolicy, map[string]string{mirror.RootPolicyLabel: onlyOnAPolicy}, nil))
}

// waitHubKindsCopied waits until hub b holds copies from source of what applyHubKinds made, and checks what
// each copy took: the PlacementBinding's top-level fields, never the Widget's status, no generated object.
// Then it makes on b, as b's propagator would from its copy of the root, replicated Policy replicatedPolicy
// carrying the copy's labels and annotations (the propagator copies them), and returns its UID. Hub A holds no
// object of that name: were it taken for a copy, the replicator would delete it (a copy whose source is gone).
func waitHubKindsCopied(t *testing.T, b *framework.Hub, source string) types.UID {
	t.Helper()
	for _, obj := range []struct {
		kind            failoverv1alpha1.ReplicatedKind
		namespace, name string
	}{
		{failoverv1alpha1.KindPolicy, "apps", rootPolicy},
		{failoverv1alpha1.KindPlacementBinding, "apps", placementBinding},
		{failoverv1alpha1.KindPolicySet, "apps", policySet},
		{failoverv1alpha1.KindManagedServiceAccount, cluster, managedServiceAccount},
		{widgetKind.Name(), cluster, widget},
	} {
		waitObj(t, b, obj.kind, obj.namespace, obj.name, replicationTimeout, "a copy from "+source, copiedFrom(source))
	}
	pb, err := getObj(b, mustKind(failoverv1alpha1.KindPlacementBinding), "apps", placementBinding)
	if err != nil {
		t.Fatal(err)
	}
	if name, _, _ := unstructured.NestedString(pb.Object, "placementRef", "name"); name != "prod" {
		t.Errorf("hub %s's PlacementBinding copy has placementRef.name %q, want prod: %v", b.Name, name, pb.Object)
	}
	w, err := getObj(b, mustKind(widgetKind.Name()), cluster, widget)
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size"); size != 3 {
		t.Errorf("hub %s's Widget copy has spec.size %d, want 3", b.Name, size)
	}
	if status, ok := w.Object["status"]; ok {
		t.Errorf("hub %s's Widget copy took the source's status %v: a copy never takes status", b.Name, status)
	}
	// Generated objects are not mirrored. The sync is done (the cluster's Widget, in the same namespace, and
	// the Policies were copied): these would be there by now.
	for _, obj := range []struct {
		kind failoverv1alpha1.ReplicatedKind
		name string
	}{{failoverv1alpha1.KindPolicy, onlyOnAPolicy}, {widgetKind.Name(), generatedWidget}} {
		if o, err := getObj(b, mustKind(obj.kind), cluster, obj.name); err != nil || o != nil {
			t.Errorf("hub %s holds %s %s/%s, a generated object of hub A (err %v): generated objects are never mirrored", b.Name, obj.kind, cluster, obj.name, err)
		}
	}
	rootCopy, err := getObj(b, mustKind(failoverv1alpha1.KindPolicy), "apps", rootPolicy)
	if err != nil {
		t.Fatal(err)
	}
	labels := rootCopy.GetLabels()
	labels[mirror.RootPolicyLabel] = replicatedPolicy
	ownReplica := policy(cluster, replicatedPolicy, labels, rootCopy.GetAnnotations())
	applyUnstructured(t, b, failoverv1alpha1.KindPolicy, ownReplica)
	own, err := getObj(b, mustKind(failoverv1alpha1.KindPolicy), cluster, replicatedPolicy)
	if err != nil || own == nil {
		t.Fatalf("hub %s's own replicated Policy: %v", b.Name, err)
	}
	if !mirror.IsCopy(own) || own.GetAnnotations()[mirror.AnnotationContentHash] == "" {
		t.Fatalf("hub %s's own replicated Policy lacks the copy marks its root's copy passes on: the checks after would prove nothing: %v", b.Name, own.GetLabels())
	}
	return own.GetUID()
}

// policy returns a Policy (policy.open-cluster-management.io/v1) that informs on a ConfigurationPolicy.
func policy(namespace, name string, labels, annotations map[string]string) map[string]any {
	meta := map[string]any{"name": name, "namespace": namespace}
	if labels != nil {
		l := map[string]any{}
		for k, v := range labels {
			l[k] = v
		}
		meta["labels"] = l
	}
	if annotations != nil {
		a := map[string]any{}
		for k, v := range annotations {
			a[k] = v
		}
		meta["annotations"] = a
	}
	return map[string]any{
		"apiVersion": "policy.open-cluster-management.io/v1", "kind": "Policy",
		"metadata": meta,
		"spec": map[string]any{
			"disabled": false, "remediationAction": "inform",
			"policy-templates": []any{map[string]any{"objectDefinition": map[string]any{
				"apiVersion": "policy.open-cluster-management.io/v1", "kind": "ConfigurationPolicy",
				"metadata": map[string]any{"name": "namespace-apps"},
				"spec": map[string]any{"severity": "low", "object-templates": []any{map[string]any{
					"complianceType": "musthave",
					"objectDefinition": map[string]any{"apiVersion": "v1", "kind": "Namespace",
						"metadata": map[string]any{"name": "apps"}},
				}}},
			}}},
		},
	}
}

// checkWidgetFence checks the fence on the custom kind on stale, a hub the cluster is not on (its source is
// sourceName): a user's change of a Widget's spec, and a new Widget, are refused; a label change and a
// generated Widget (widgetGeneratedLabel) pass.
func checkWidgetFence(t *testing.T, stale *framework.Hub, sourceName string) {
	t.Helper()
	ctx := context.Background()
	waitNamespaceMark(t, stale, cluster, sourceName)
	widgets := userClient(t, stale, fenceUser).Resource(mirror.CustomKindOf(widgetKind).GVR).Namespace(cluster)
	cur, err := widgets.Get(ctx, widget, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	edited := cur.DeepCopy()
	if err := unstructured.SetNestedField(edited.Object, int64(99), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	_, err = widgets.Update(ctx, edited, metav1.UpdateOptions{})
	expectFenced(t, "Widget spec update", err, cluster, sourceName, stale.Name)
	fresh := func(name string, labels map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": name, "namespace": cluster, "labels": labels}, "spec": map[string]any{"size": int64(2)}}}
	}
	_, err = widgets.Create(ctx, fresh("new-on-stale-hub", nil), metav1.CreateOptions{})
	expectFenced(t, "Widget create", err, cluster, sourceName, stale.Name)
	if _, err := widgets.Create(ctx, fresh("generated-on-stale-hub", map[string]any{widgetGeneratedLabel: "y"}), metav1.CreateOptions{}); err != nil {
		t.Errorf("a generated Widget (label %s) create on hub %s: %v (want allowed)", widgetGeneratedLabel, stale.Name, err)
	}
	labelled := cur.DeepCopy()
	labels := labelled.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["fence-test"] = "metadata-only"
	labelled.SetLabels(labels)
	if _, err := widgets.Update(ctx, labelled, metav1.UpdateOptions{}); err != nil {
		t.Errorf("a label-only update of Widget %s/%s on hub %s: %v (want allowed)", cluster, widget, stale.Name, err)
	}
}
