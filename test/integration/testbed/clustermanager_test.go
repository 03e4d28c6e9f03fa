package testbed_test

import (
	"context"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

var (
	managedClusterGVR    = schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1", Resource: "managedclusters"}
	mwrsGVR              = schema.GroupVersionResource{Group: "work.open-cluster-management.io", Version: "v1alpha1", Resource: "manifestworkreplicasets"}
	placementGVR         = schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Resource: "placements"}
	placementDecisionGVR = schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Resource: "placementdecisions"}
	setBindingGVR        = schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta2", Resource: "managedclustersetbindings"}
	addOnV1alpha1GVR     = schema.GroupVersionResource{Group: "addon.open-cluster-management.io", Version: "v1alpha1", Resource: "managedclusteraddons"}
	addOnV1beta1GVR      = schema.GroupVersionResource{Group: "addon.open-cluster-management.io", Version: "v1beta1", Resource: "managedclusteraddons"}
)

// TestCompleteHub: a hub with HubOptions.ClusterManager runs what OCM v1.2.0's cluster-manager runs, and each
// part acts: the ManagedCluster mutating webhook puts a new cluster in the default set, the work webhook refuses
// a ManifestWork without manifests and an executor the writer may not execute as (and accepts it once allowed),
// the add-on webhook converts a ManagedClusterAddOn to v1beta1, the placement controller decides, and the work
// manager makes a ManifestWorkReplicaSet's ManifestWork in the decided cluster's namespace.
func TestCompleteHub(t *testing.T) {
	hub := framework.StartHub(t, framework.HubOptions{Name: "complete", Signer: framework.SignerInProcess, ClusterManager: true})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dyn := dynamic.NewForConfigOrDie(hub.AdminConfig)

	// Registration webhook (mutating): DefaultClusterSet, on by default, labels a cluster without a set.
	mc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
		"metadata": map[string]any{"name": testCluster},
		"spec":     map[string]any{"hubAcceptsClient": true, "leaseDurationSeconds": int64(60)},
	}}
	created, err := dyn.Resource(managedClusterGVR).Create(ctx, mc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating ManagedCluster %s: %v", testCluster, err)
	}
	if got := created.GetLabels()["cluster.open-cluster-management.io/clusterset"]; got != "default" {
		t.Errorf("ManagedCluster %s created with labels %v, want the mutating webhook's clusterset=default", testCluster, created.GetLabels())
	}
	framework.Eventually(t, hubControllerTimeout, pollInterval, func() (bool, error) {
		_, err := hub.Kube.CoreV1().Namespaces().Get(ctx, testCluster, metav1.GetOptions{})
		return err == nil, nil
	}, "the hub controller made namespace %s", testCluster)

	// Work webhook: manifests are required.
	empty := manifestWork("empty", nil)
	if _, err := dyn.Resource(manifestWorkGVR).Namespace(testCluster).Create(ctx, empty, metav1.CreateOptions{}); err == nil ||
		!strings.Contains(err.Error(), "manifests should not be empty") {
		t.Errorf("a ManifestWork without manifests: err %v, want the work webhook's refusal", err)
	}

	// Work webhook: an executor needs manifestworks execute-as for its ServiceAccount.
	const user = "bob"
	grant(t, hub, "work-writer", []rbacv1.PolicyRule{{APIGroups: []string{"work.open-cluster-management.io"}, Resources: []string{"manifestworks"},
		Verbs: []string{"get", "list", "create", "update", "delete"}}}, user)
	bob := dynamic.NewForConfigOrDie(hub.UserConfig(user))
	execWork := manifestWork("exec", configMap("cm-exec"))
	_ = unstructured.SetNestedMap(execWork.Object, map[string]any{"subject": map[string]any{
		"type": "ServiceAccount", "serviceAccount": map[string]any{"namespace": "default", "name": "deployer"},
	}}, "spec", "executor")
	if _, err := bob.Resource(manifestWorkGVR).Namespace(testCluster).Create(ctx, execWork, metav1.CreateOptions{}); err == nil ||
		!strings.Contains(err.Error(), "cannot manipulate the Manifestwork with executor") {
		t.Errorf("an executor ManifestWork from a user without execute-as: err %v, want the work webhook's refusal", err)
	}
	grant(t, hub, "work-executor", []rbacv1.PolicyRule{{APIGroups: []string{"work.open-cluster-management.io"}, Resources: []string{"manifestworks"},
		Verbs: []string{"execute-as"}}}, user)
	if _, err := bob.Resource(manifestWorkGVR).Namespace(testCluster).Create(ctx, execWork, metav1.CreateOptions{}); err != nil {
		t.Errorf("an executor ManifestWork from a user allowed execute-as: %v", err)
	}

	// Add-on webhook: the v1alpha1 ManagedClusterAddOn is served as v1beta1 through the conversion webhook.
	addOn := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn",
		"metadata": map[string]any{"name": "helloworld", "namespace": testCluster},
		"spec":     map[string]any{"installNamespace": "open-cluster-management-agent-addon"},
	}}
	if _, err := dyn.Resource(addOnV1alpha1GVR).Namespace(testCluster).Create(ctx, addOn, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ManagedClusterAddOn helloworld: %v", err)
	}
	if got, err := dyn.Resource(addOnV1beta1GVR).Namespace(testCluster).Get(ctx, "helloworld", metav1.GetOptions{}); err != nil {
		t.Errorf("reading ManagedClusterAddOn helloworld as v1beta1 (conversion webhook): %v", err)
	} else if got.GetAPIVersion() != "addon.open-cluster-management.io/v1beta1" {
		t.Errorf("ManagedClusterAddOn helloworld read as v1beta1 has apiVersion %s", got.GetAPIVersion())
	}

	// Placement controller: a Placement bound to the default set, tolerating the taints the hub puts on a cluster
	// no agent has reported from, decides the cluster.
	const ns = "apps"
	if _, err := hub.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	create(t, dyn, setBindingGVR, ns, map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
		"metadata": map[string]any{"name": "default", "namespace": ns}, "spec": map[string]any{"clusterSet": "default"},
	})
	create(t, dyn, placementGVR, ns, map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
		"metadata": map[string]any{"name": "all", "namespace": ns},
		"spec": map[string]any{"tolerations": []any{
			map[string]any{"key": "cluster.open-cluster-management.io/unreachable", "operator": "Exists"},
			map[string]any{"key": "cluster.open-cluster-management.io/unavailable", "operator": "Exists"},
		}},
	})
	framework.Eventually(t, hubControllerTimeout, pollInterval, func() (bool, error) {
		list, err := dyn.Resource(placementDecisionGVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: "cluster.open-cluster-management.io/placement=all"})
		if err != nil {
			return false, err
		}
		for _, d := range list.Items {
			decisions, _, _ := unstructured.NestedSlice(d.Object, "status", "decisions")
			for _, dec := range decisions {
				if m, ok := dec.(map[string]any); ok && m["clusterName"] == testCluster {
					return true, nil
				}
			}
		}
		return false, nil
	}, "the placement controller decided %s for Placement %s/all", testCluster, ns)

	// Work manager: a ManifestWorkReplicaSet on that Placement makes its ManifestWork in the cluster's namespace.
	create(t, dyn, mwrsGVR, ns, map[string]any{
		"apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet",
		"metadata": map[string]any{"name": "fleet", "namespace": ns},
		"spec": map[string]any{
			"placementRefs":        []any{map[string]any{"name": "all"}},
			"manifestWorkTemplate": map[string]any{"workload": map[string]any{"manifests": []any{configMap("cm-fleet")}}},
		},
	})
	framework.Eventually(t, hubControllerTimeout, pollInterval, func() (bool, error) {
		_, err := dyn.Resource(manifestWorkGVR).Namespace(testCluster).Get(ctx, "fleet", metav1.GetOptions{})
		return err == nil, nil
	}, "the work manager made ManifestWork %s/fleet from ManifestWorkReplicaSet %s/fleet", testCluster, ns)
}

// manifestWork returns ManifestWork name in testCluster's namespace with the given manifests (none when nil).
func manifestWork(name string, manifest map[string]any) *unstructured.Unstructured {
	manifests := []any{}
	if manifest != nil {
		manifests = append(manifests, manifest)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
		"metadata": map[string]any{"name": name, "namespace": testCluster},
		"spec":     map[string]any{"workload": map[string]any{"manifests": manifests}},
	}}
}

// configMap returns ConfigMap name in namespace default, as a manifest.
func configMap(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "default"}}
}

// create creates obj (of gvr) in namespace ns as the hub's admin, failing the test on error.
func create(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string, obj map[string]any) {
	t.Helper()
	if _, err := dyn.Resource(gvr).Namespace(ns).Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s %s/%v: %v", gvr.Resource, ns, obj["metadata"].(map[string]any)["name"], err)
	}
}

// grant binds a new ClusterRole name with rules to user.
func grant(t *testing.T, hub *framework.Hub, name string, rules []rbacv1.PolicyRule, user string) {
	t.Helper()
	ctx := context.Background()
	if _, err := hub.Kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := hub.Kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAllowed(t, hub, user, &authorizationv1.ResourceAttributes{Group: rules[0].APIGroups[0], Resource: rules[0].Resources[0],
		Verb: rules[0].Verbs[0], Namespace: testCluster, Name: "system:serviceaccount:default:deployer"})
}

// waitAllowed waits until the hub's authorizer allows user attrs (its RBAC informer has seen a new binding).
func waitAllowed(t *testing.T, hub *framework.Hub, user string, attrs *authorizationv1.ResourceAttributes) {
	t.Helper()
	framework.Eventually(t, hubControllerTimeout, pollInterval, func() (bool, error) {
		sar, err := hub.Kube.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: attrs},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return sar.Status.Allowed, nil
	}, "hub %s allows %s to %s %s", hub.Name, user, attrs.Verb, attrs.Resource)
}
