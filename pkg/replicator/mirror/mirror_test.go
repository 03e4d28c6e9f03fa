package mirror_test

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// The objects below are written as an informer on a real apiserver holds them: JSON-decoded maps, numbers as
// int64, lists as []any, labels and annotations as map[string]any of strings.

const (
	hubA = "hub-a" // the source hub in most cases
	hubB = "hub-b" // the target hub in most cases
	hubC = "hub-c" // a third hub

	taintUnavailable = "cluster.open-cluster-management.io/unavailable"
	taintUnreachable = "cluster.open-cluster-management.io/unreachable"

	featureLabel    = "feature.open-cluster-management.io/addon-work-manager"
	agentAnnotation = "agent.open-cluster-management.io/region"

	since = "2024-05-01T10:00:00Z"
)

// ---------------------------------------------------------------------------------------------------------
// helpers

func u(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }

// mod returns a deep copy of o changed by f.
func mod(o *unstructured.Unstructured, f func(m map[string]any)) *unstructured.Unstructured {
	c := o.DeepCopy()
	f(c.Object)
	return c
}

func meta(m map[string]any) map[string]any   { return m["metadata"].(map[string]any) }
func labels(m map[string]any) map[string]any { return meta(m)["labels"].(map[string]any) }
func annots(m map[string]any) map[string]any { return meta(m)["annotations"].(map[string]any) }
func spec(m map[string]any) map[string]any   { return m["spec"].(map[string]any) }

func setLabel(m map[string]any, k, v string) {
	md := meta(m)
	if md["labels"] == nil {
		md["labels"] = map[string]any{}
	}
	md["labels"].(map[string]any)[k] = v
}

func setAnnotation(m map[string]any, k, v string) {
	md := meta(m)
	if md["annotations"] == nil {
		md["annotations"] = map[string]any{}
	}
	md["annotations"].(map[string]any)[k] = v
}

func deleting(m map[string]any) { meta(m)["deletionTimestamp"] = "2024-05-02T00:00:00Z" }

// withEntry returns a copy of m with key set to v.
func withEntry(m map[string]string, key, v string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	out[key] = v
	return out
}

func kind(t *testing.T, name failoverv1alpha1.ReplicatedKind) mirror.Kind {
	t.Helper()
	k, ok := mirror.KindByName(name)
	if !ok {
		t.Fatalf("KindByName(%q) not found", name)
	}
	return k
}

// clusterHubExtra is the extraAnnotations the replicator passes for a ManagedCluster copy.
func clusterHubExtra(hub string) map[string]string {
	return map[string]string{mirror.AnnotationClusterHub: hub, mirror.AnnotationClusterHubSince: since}
}

// written simulates the replicator writing d on the target hub: the apiserver assigns a new resourceVersion
// (and on create a uid and creationTimestamp).
func written(d *unstructured.Unstructured, rv string) *unstructured.Unstructured {
	c := d.DeepCopy()
	if c.GetUID() == "" {
		c.SetUID("uid-target-created")
		meta(c.Object)["creationTimestamp"] = "2024-04-01T00:00:00Z"
	}
	c.SetResourceVersion(rv)
	return c
}

// sortedTaints returns a deep copy of obj with spec.taints sorted by key (the order of the taints is not
// specified by Desired's contract).
func sortedTaints(obj map[string]any) map[string]any {
	c := runtime.DeepCopyJSON(obj)
	s, ok := c["spec"].(map[string]any)
	if !ok {
		return c
	}
	list, ok := s["taints"].([]any)
	if !ok {
		return c
	}
	sort.SliceStable(list, func(i, j int) bool {
		return list[i].(map[string]any)["key"].(string) < list[j].(map[string]any)["key"].(string)
	})
	return c
}

// taintKeys returns the keys of obj's spec.taints, sorted.
func taintKeys(obj *unstructured.Unstructured) []string {
	var keys []string
	s, _ := obj.Object["spec"].(map[string]any)
	list, _ := s["taints"].([]any)
	for _, t := range list {
		keys = append(keys, t.(map[string]any)["key"].(string))
	}
	sort.Strings(keys)
	return keys
}

// ---------------------------------------------------------------------------------------------------------
// fixtures

// mcSource is cluster1's ManagedCluster on hub-a, the hub the cluster is connected to. It carries a
// hub-owned taint of its own hub (briefly unavailable), OCM feature labels, agent annotations and
// source-only metadata (uid, finalizers, ownerReferences, managedFields).
func mcSource() *unstructured.Unstructured {
	return u(map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1",
		"kind":       "ManagedCluster",
		"metadata": map[string]any{
			"name":              "cluster1",
			"uid":               "uid-source",
			"resourceVersion":   "1001",
			"generation":        int64(4),
			"creationTimestamp": "2024-03-01T08:00:00Z",
			"finalizers":        []any{"cluster.open-cluster-management.io/api-resource-cleanup"},
			"ownerReferences": []any{map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "uid-owner",
			}},
			"managedFields": []any{map[string]any{"manager": "registration", "operation": "Update"}},
			"labels": map[string]any{
				"name":   "cluster1",
				"vendor": "OpenShift",
				"env":    "prod",
				"cluster.open-cluster-management.io/clusterset": "default",
				featureLabel: "available",
			},
			"annotations": map[string]any{
				"open-cluster-management.io/owner": "team-a",
				agentAnnotation:                    "eu-west-1",
			},
		},
		"spec": map[string]any{
			"hubAcceptsClient":     true,
			"leaseDurationSeconds": int64(60),
			"managedClusterClientConfigs": []any{map[string]any{
				"url": "https://api.cluster1.example.com:6443", "caBundle": "Y2EtYnVuZGxl",
			}},
			"taints": []any{
				map[string]any{"key": "example.com/maintenance", "value": "true", "effect": "NoSelect", "timeAdded": "2024-03-02T00:00:00Z"},
				map[string]any{"key": taintUnavailable, "effect": "NoSelect", "timeAdded": "2024-03-03T00:00:00Z"},
			},
		},
		"status": map[string]any{
			"conditions": []any{map[string]any{"type": "ManagedClusterConditionAvailable", "status": "True"}},
			"version":    map[string]any{"kubernetes": "v1.30.2"},
		},
	})
}

// mcTarget is an existing, outdated copy of cluster1 on hub-b, with hub-b's own hub-owned taint, feature
// label, agent annotation, status and metadata.
func mcTarget() *unstructured.Unstructured {
	return u(map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1",
		"kind":       "ManagedCluster",
		"metadata": map[string]any{
			"name":              "cluster1",
			"uid":               "uid-target",
			"resourceVersion":   "555",
			"generation":        int64(2),
			"creationTimestamp": "2024-03-05T00:00:00Z",
			"finalizers":        []any{"cluster.open-cluster-management.io/api-resource-cleanup"},
			"labels": map[string]any{
				"name":  "cluster1",
				"env":   "staging",
				"stale": "yes",
				"feature.open-cluster-management.io/addon-x": "unreachable",
				mirror.LabelReplicatedFrom:                   hubA,
			},
			"annotations": map[string]any{
				"open-cluster-management.io/owner":      "team-old",
				"agent.open-cluster-management.io/zone": "b",
				mirror.AnnotationContentHash:            "0000000000000000",
				mirror.AnnotationSourceResourceVersion:  "900",
				mirror.AnnotationClusterHub:             hubC,
				mirror.AnnotationClusterHubSince:        "2024-01-01T00:00:00Z",
			},
		},
		"spec": map[string]any{
			"hubAcceptsClient":     false,
			"leaseDurationSeconds": int64(30),
			"taints": []any{
				map[string]any{"key": taintUnreachable, "effect": "NoSelect", "timeAdded": "2024-03-06T00:00:00Z"},
				map[string]any{"key": "example.com/old", "effect": "NoSelect", "timeAdded": "2024-01-01T00:00:00Z"},
			},
		},
		"status": map[string]any{
			"conditions": []any{map[string]any{"type": "ManagedClusterConditionAvailable", "status": "Unknown"}},
		},
	})
}

func mwSource() *unstructured.Unstructured {
	return u(map[string]any{
		"apiVersion": "work.open-cluster-management.io/v1",
		"kind":       "ManifestWork",
		"metadata": map[string]any{
			"name":              "app",
			"namespace":         "cluster1",
			"uid":               "uid-mw-source",
			"resourceVersion":   "2001",
			"generation":        int64(7),
			"creationTimestamp": "2024-03-01T08:00:00Z",
			"finalizers":        []any{"cluster.open-cluster-management.io/manifest-work-cleanup"},
			"labels":            map[string]any{"app": "demo"},
		},
		"spec": map[string]any{
			"workload": map[string]any{
				"manifests": []any{map[string]any{
					"apiVersion": "v1",
					"kind":       "ConfigMap",
					"metadata":   map[string]any{"name": "demo", "namespace": "default"},
					"data":       map[string]any{"replicas": "3"},
				}},
			},
			"deleteOption": map[string]any{"propagationPolicy": "Foreground"},
			"manifestConfigs": []any{map[string]any{
				"resourceIdentifier": map[string]any{"group": "apps", "resource": "deployments", "name": "demo", "namespace": "default"},
				"feedbackRules":      []any{map[string]any{"type": "WellKnownStatus"}},
				"updateStrategy":     map[string]any{"type": "ServerSideApply", "serverSideApply": map[string]any{"force": true}},
			}},
		},
		"status": map[string]any{
			"conditions": []any{map[string]any{"type": "Applied", "status": "True", "observedGeneration": int64(7)}},
		},
	})
}

func secretSource() *unstructured.Unstructured {
	return u(map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata": map[string]any{
			"name": "creds", "namespace": "cluster1", "uid": "uid-secret", "resourceVersion": "3001",
			"labels": map[string]any{mirror.BackupLabel: "cluster-activation"},
		},
		"type": "Opaque",
		"data": map[string]any{"token": "dG9rZW4=", "ca.crt": "Y2E="},
	})
}

func configMapSource() *unstructured.Unstructured {
	return u(map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name": "settings", "namespace": "open-cluster-management-backup", "uid": "uid-cm", "resourceVersion": "4001",
			"labels": map[string]any{mirror.BackupLabel: ""},
		},
		"data":       map[string]any{"mode": "active"},
		"binaryData": map[string]any{"blob": "AAEC"},
	})
}

// ---------------------------------------------------------------------------------------------------------
// KindByName, Kinds, ClusterOf

func TestKindByName(t *testing.T) {
	tests := []struct {
		name      failoverv1alpha1.ReplicatedKind
		wantOK    bool
		gvr       schema.GroupVersionResource
		namespace bool
		scope     mirror.ClusterScope
		fields    []string
		selector  string
		generated mirror.Generated
	}{
		{failoverv1alpha1.KindManagedCluster, true, schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1", Resource: "managedclusters"}, false, mirror.ClusterByName, []string{"spec"}, "", mirror.Generated{}},
		{failoverv1alpha1.KindManagedClusterSet, true, schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta2", Resource: "managedclustersets"}, false, mirror.HubWide, []string{"spec"}, "", mirror.Generated{}},
		{failoverv1alpha1.KindManagedClusterSetBinding, true, schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta2", Resource: "managedclustersetbindings"}, true, mirror.HubWide, []string{"spec"}, "", mirror.Generated{}},
		{failoverv1alpha1.KindPlacement, true, schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Resource: "placements"}, true, mirror.HubWide, []string{"spec"}, "", mirror.Generated{}},
		{failoverv1alpha1.KindManifestWork, true, schema.GroupVersionResource{Group: "work.open-cluster-management.io", Version: "v1", Resource: "manifestworks"}, true, mirror.ClusterByNamespace, []string{"spec"}, "",
			mirror.Generated{Labels: []string{mirror.AddonNameLabel, mirror.ManifestWorkReplicaSetLabel}, ControllerKinds: []schema.GroupKind{mirror.ClusterPermissionGroupKind}, CopiedBefore: true}},
		{failoverv1alpha1.KindManagedClusterAddOn, true, schema.GroupVersionResource{Group: "addon.open-cluster-management.io", Version: "v1alpha1", Resource: "managedclusteraddons"}, true, mirror.ClusterByNamespace, []string{"spec"}, "", mirror.Generated{}},
		{failoverv1alpha1.KindSecret, true, schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, true, mirror.ClusterByNamespaceIfCluster, []string{"type", "data"}, mirror.BackupLabel, mirror.Generated{}},
		{failoverv1alpha1.KindConfigMap, true, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, true, mirror.ClusterByNamespaceIfCluster, []string{"data", "binaryData"}, mirror.BackupLabel, mirror.Generated{}},
		{failoverv1alpha1.KindPolicy, true, schema.GroupVersionResource{Group: "policy.open-cluster-management.io", Version: "v1", Resource: "policies"}, true, mirror.HubWide, []string{"spec"}, "",
			mirror.Generated{Labels: []string{mirror.RootPolicyLabel}}},
		{failoverv1alpha1.KindPlacementBinding, true, schema.GroupVersionResource{Group: "policy.open-cluster-management.io", Version: "v1", Resource: "placementbindings"}, true, mirror.HubWide,
			[]string{"placementRef", "subjects", "bindingOverrides", "subFilter"}, "", mirror.Generated{}},
		{failoverv1alpha1.KindPolicySet, true, schema.GroupVersionResource{Group: "policy.open-cluster-management.io", Version: "v1beta1", Resource: "policysets"}, true, mirror.HubWide, []string{"spec"}, "", mirror.Generated{}},
		{failoverv1alpha1.KindManagedServiceAccount, true, schema.GroupVersionResource{Group: "authentication.open-cluster-management.io", Version: "v1beta1", Resource: "managedserviceaccounts"}, true, mirror.ClusterByNamespace, []string{"spec"}, "", mirror.Generated{}},
		{failoverv1alpha1.KindClusterPermission, true, schema.GroupVersionResource{Group: "rbac.open-cluster-management.io", Version: "v1alpha1", Resource: "clusterpermissions"}, true, mirror.ClusterByNamespace, []string{"spec"}, "", mirror.Generated{}},
		{name: "Pod"},
		{name: "managedcluster"}, // names are case-sensitive
		{name: ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.name), func(t *testing.T) {
			got, ok := mirror.KindByName(tt.name)
			if ok != tt.wantOK {
				t.Fatalf("KindByName(%q) ok = %v, want %v", tt.name, ok, tt.wantOK)
			}
			if !ok {
				if diff := cmp.Diff(mirror.Kind{}, got); diff != "" {
					t.Errorf("KindByName(%q) for an unknown kind returned a non-zero Kind (-want +got):\n%s", tt.name, diff)
				}
				return
			}
			want := mirror.Kind{Name: tt.name, GVR: tt.gvr, Namespaced: tt.namespace, Scope: tt.scope, Fields: tt.fields, LabelSelector: tt.selector, Generated: tt.generated}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("KindByName(%q) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestResolveKinds(t *testing.T) {
	widgets := failoverv1alpha1.CustomKind{Group: "example.com", Version: "v1", Resource: "widgets", Namespaced: true,
		Scope: failoverv1alpha1.ScopeClusterByNamespace, LabelSelector: "replicate", GeneratedLabels: []string{"example.com/owner"}}
	spec := &failoverv1alpha1.ReplicationConfigSpec{
		Kinds:       []failoverv1alpha1.ReplicatedKind{failoverv1alpha1.KindManifestWork, failoverv1alpha1.KindManagedCluster},
		CustomKinds: []failoverv1alpha1.CustomKind{widgets, {Version: "v1", Resource: "serviceaccounts", Namespaced: true, Scope: failoverv1alpha1.ScopeHubWide, Fields: []string{"secrets"}}},
	}
	got, err := mirror.ResolveKinds(spec)
	if err != nil {
		t.Fatalf("ResolveKinds: %v", err)
	}
	mc, _ := mirror.KindByName(failoverv1alpha1.KindManagedCluster)
	mw, _ := mirror.KindByName(failoverv1alpha1.KindManifestWork)
	want := []mirror.Kind{mc, mw,
		{Name: "widgets.example.com", GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Namespaced: true,
			Scope: mirror.ClusterByNamespace, Fields: []string{"spec"}, LabelSelector: "replicate", Generated: mirror.Generated{Labels: []string{"example.com/owner"}}},
		{Name: "serviceaccounts", GVR: schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, Namespaced: true,
			Scope: mirror.HubWide, Fields: []string{"secrets"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ResolveKinds (-want +got):\n%s", diff)
	}
	// A custom kind's objects carrying a generated label are Excluded.
	obj := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "w", "namespace": "c1", "labels": map[string]any{"example.com/owner": "x"}}}}
	if !mirror.Excluded(got[2], obj) || mirror.Excluded(got[3], obj) {
		t.Errorf("Excluded by generatedLabels: widgets %t (want true), serviceaccounts %t (want false)", mirror.Excluded(got[2], obj), mirror.Excluded(got[3], obj))
	}

	// What the replicator reads or writes for itself is no custom kind.
	for _, tc := range []struct {
		ck   failoverv1alpha1.CustomKind
		want string
	}{
		{failoverv1alpha1.CustomKind{Group: "policy.open-cluster-management.io", Version: "v1", Resource: "policies", Namespaced: true, Scope: failoverv1alpha1.ScopeHubWide}, "kind Policy"},
		{failoverv1alpha1.CustomKind{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespaced: true, Scope: failoverv1alpha1.ScopeClusterByNamespace}, "managed-cluster-lease"},
		{failoverv1alpha1.CustomKind{Version: "v1", Resource: "namespaces", Scope: failoverv1alpha1.ScopeClusterByName}, "fence's marks"},
		{failoverv1alpha1.CustomKind{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies", Scope: failoverv1alpha1.ScopeHubWide}, "fence is each hub's own"},
		{failoverv1alpha1.CustomKind{Group: failoverv1alpha1.GroupName, Version: "v1alpha1", Resource: "replicationconfigs", Namespaced: true, Scope: failoverv1alpha1.ScopeHubWide}, "own API group"},
	} {
		bad := *spec
		bad.CustomKinds = append(slices.Clone(spec.CustomKinds), tc.ck)
		_, err = mirror.ResolveKinds(&bad)
		if err == nil || !strings.Contains(err.Error(), "spec.customKinds[2]") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ResolveKinds with custom kind %s: error %v, want one naming spec.customKinds[2] and %q", tc.ck.Name(), err, tc.want)
		}
	}
}

func TestKindsOrder(t *testing.T) {
	var names []failoverv1alpha1.ReplicatedKind
	for _, k := range mirror.Kinds {
		names = append(names, k.Name)
	}
	if diff := cmp.Diff(failoverv1alpha1.AllReplicatedKinds, names); diff != "" {
		t.Errorf("Kinds is not in AllReplicatedKinds order (-want +got):\n%s", diff)
	}
}

func TestClusterOf(t *testing.T) {
	known := func(name string) bool { return name == "cluster1" || name == "cluster2" }
	mustNotCall := func(name string) bool { panic("isCluster called for a kind whose scope does not need it") }
	tests := []struct {
		name        string
		kind        failoverv1alpha1.ReplicatedKind
		namespace   string
		objName     string
		isCluster   func(string) bool
		wantCluster string
		wantOK      bool
	}{
		{"ManagedCluster is its own cluster", failoverv1alpha1.KindManagedCluster, "", "cluster1", mustNotCall, "cluster1", true},
		{"ManagedCluster not known still by name", failoverv1alpha1.KindManagedCluster, "", "new-cluster", mustNotCall, "new-cluster", true},
		{"ManagedClusterSet hub-wide", failoverv1alpha1.KindManagedClusterSet, "", "default", mustNotCall, "", false},
		{"ManagedClusterSetBinding hub-wide even in a cluster namespace", failoverv1alpha1.KindManagedClusterSetBinding, "cluster1", "default", mustNotCall, "", false},
		{"Placement hub-wide", failoverv1alpha1.KindPlacement, "apps", "all", mustNotCall, "", false},
		{"ManifestWork by namespace", failoverv1alpha1.KindManifestWork, "cluster2", "app", mustNotCall, "cluster2", true},
		{"ManifestWork without namespace", failoverv1alpha1.KindManifestWork, "", "app", mustNotCall, "", false},
		{"ManagedClusterAddOn by namespace", failoverv1alpha1.KindManagedClusterAddOn, "cluster1", "work-manager", mustNotCall, "cluster1", true},
		{"Secret in a cluster namespace", failoverv1alpha1.KindSecret, "cluster1", "creds", known, "cluster1", true},
		{"Secret in another namespace", failoverv1alpha1.KindSecret, "open-cluster-management-backup", "creds", known, "", false},
		{"Secret without namespace", failoverv1alpha1.KindSecret, "", "creds", mustNotCall, "", false},
		{"ConfigMap in a cluster namespace", failoverv1alpha1.KindConfigMap, "cluster2", "cm", known, "cluster2", true},
		{"ConfigMap in another namespace", failoverv1alpha1.KindConfigMap, "default", "cm", known, "", false},
		{"ClusterManagementAddOn hub-wide", failoverv1alpha1.KindClusterManagementAddOn, "", "hello", mustNotCall, "", false},
		{"AddOnTemplate hub-wide", failoverv1alpha1.KindAddOnTemplate, "", "hello-template", mustNotCall, "", false},
		{"ManifestWorkReplicaSet hub-wide even in a cluster namespace", failoverv1alpha1.KindManifestWorkReplicaSet, "cluster1", "web", mustNotCall, "", false},
		{"AddOnDeploymentConfig in a cluster namespace", failoverv1alpha1.KindAddOnDeploymentConfig, "cluster1", "proxy", known, "cluster1", true},
		{"AddOnDeploymentConfig in another namespace", failoverv1alpha1.KindAddOnDeploymentConfig, "open-cluster-management", "proxy", known, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := kind(t, tt.kind)
			got, ok := k.ClusterOf(tt.namespace, tt.objName, tt.isCluster)
			if got != tt.wantCluster || ok != tt.wantOK {
				t.Errorf("%s.ClusterOf(%q, %q) = (%q, %v), want (%q, %v)", tt.kind, tt.namespace, tt.objName, got, ok, tt.wantCluster, tt.wantOK)
			}
		})
	}
}

// ---------------------------------------------------------------------------------------------------------
// ContentOf, Hash, Equal

func TestContentOf(t *testing.T) {
	empty := mirror.Content{Fields: map[string]any{}, Labels: map[string]string{}, Annotations: map[string]string{}}
	tests := []struct {
		name string
		kind failoverv1alpha1.ReplicatedKind
		obj  *unstructured.Unstructured
		want mirror.Content
	}{
		{
			name: "nil object: empty, non-nil maps",
			kind: failoverv1alpha1.KindManagedCluster,
			obj:  nil,
			want: empty,
		},
		{
			name: "ManagedCluster: spec without hub-owned taints, user labels and annotations only",
			kind: failoverv1alpha1.KindManagedCluster,
			obj:  mcSource(),
			want: mirror.Content{
				Fields: map[string]any{"spec": map[string]any{
					"hubAcceptsClient":     true,
					"leaseDurationSeconds": int64(60),
					"managedClusterClientConfigs": []any{map[string]any{
						"url": "https://api.cluster1.example.com:6443", "caBundle": "Y2EtYnVuZGxl",
					}},
					"taints": []any{
						map[string]any{"key": "example.com/maintenance", "value": "true", "effect": "NoSelect"},
					},
				}},
				Labels: map[string]string{
					"name": "cluster1", "vendor": "OpenShift", "env": "prod",
					"cluster.open-cluster-management.io/clusterset": "default",
				},
				Annotations: map[string]string{"open-cluster-management.io/owner": "team-a"},
			},
		},
		{
			name: "ManagedCluster: replicator's own labels and annotations are not content",
			kind: failoverv1alpha1.KindManagedCluster,
			obj:  mcTarget(),
			want: mirror.Content{
				Fields: map[string]any{"spec": map[string]any{
					"hubAcceptsClient":     false,
					"leaseDurationSeconds": int64(30),
					"taints": []any{
						map[string]any{"key": "example.com/old", "effect": "NoSelect"},
					},
				}},
				Labels:      map[string]string{"name": "cluster1", "env": "staging", "stale": "yes"},
				Annotations: map[string]string{"open-cluster-management.io/owner": "team-old"},
			},
		},
		{
			name: "ManagedCluster: only hub-owned taints: taints dropped",
			kind: failoverv1alpha1.KindManagedCluster,
			obj: mod(mcSource(), func(m map[string]any) {
				spec(m)["taints"] = []any{
					map[string]any{"key": taintUnavailable, "effect": "NoSelect"},
					map[string]any{"key": taintUnreachable, "effect": "NoSelect"},
				}
				delete(meta(m), "labels")
				delete(meta(m), "annotations")
			}),
			want: mirror.Content{
				Fields: map[string]any{"spec": map[string]any{
					"hubAcceptsClient":     true,
					"leaseDurationSeconds": int64(60),
					"managedClusterClientConfigs": []any{map[string]any{
						"url": "https://api.cluster1.example.com:6443", "caBundle": "Y2EtYnVuZGxl",
					}},
				}},
				Labels:      map[string]string{},
				Annotations: map[string]string{},
			},
		},
		{
			name: "ManagedCluster: empty taints list dropped",
			kind: failoverv1alpha1.KindManagedCluster,
			obj: u(map[string]any{
				"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
				"metadata": map[string]any{"name": "c"},
				"spec":     map[string]any{"hubAcceptsClient": true, "taints": []any{}},
			}),
			want: mirror.Content{Fields: map[string]any{"spec": map[string]any{"hubAcceptsClient": true}}, Labels: map[string]string{}, Annotations: map[string]string{}},
		},
		{
			name: "ManagedCluster: no spec",
			kind: failoverv1alpha1.KindManagedCluster,
			obj: u(map[string]any{
				"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
				"metadata": map[string]any{"name": "c"},
				"status":   map[string]any{"x": "y"},
			}),
			want: empty,
		},
		{
			name: "ManifestWork: spec whole (taint filtering is for ManagedCluster only), no status",
			kind: failoverv1alpha1.KindManifestWork,
			obj: mod(mwSource(), func(m map[string]any) {
				spec(m)["taints"] = []any{map[string]any{"key": taintUnavailable}}
			}),
			want: mirror.Content{
				Fields: map[string]any{"spec": func() map[string]any {
					s := runtime.DeepCopyJSONValue(spec(mwSource().Object)).(map[string]any)
					s["taints"] = []any{map[string]any{"key": taintUnavailable}}
					return s
				}()},
				Labels:      map[string]string{"app": "demo"},
				Annotations: map[string]string{},
			},
		},
		{
			name: "Secret: type and data",
			kind: failoverv1alpha1.KindSecret,
			obj:  secretSource(),
			want: mirror.Content{
				Fields:      map[string]any{"type": "Opaque", "data": map[string]any{"token": "dG9rZW4=", "ca.crt": "Y2E="}},
				Labels:      map[string]string{mirror.BackupLabel: "cluster-activation"},
				Annotations: map[string]string{},
			},
		},
		{
			name: "ConfigMap: data and binaryData",
			kind: failoverv1alpha1.KindConfigMap,
			obj:  configMapSource(),
			want: mirror.Content{
				Fields:      map[string]any{"data": map[string]any{"mode": "active"}, "binaryData": map[string]any{"blob": "AAEC"}},
				Labels:      map[string]string{mirror.BackupLabel: ""},
				Annotations: map[string]string{},
			},
		},
		{
			name: "ConfigMap: null field omitted",
			kind: failoverv1alpha1.KindConfigMap,
			obj: mod(configMapSource(), func(m map[string]any) {
				m["binaryData"] = nil
			}),
			want: mirror.Content{
				Fields:      map[string]any{"data": map[string]any{"mode": "active"}},
				Labels:      map[string]string{mirror.BackupLabel: ""},
				Annotations: map[string]string{},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mirror.ContentOf(kind(t, tt.kind), tt.obj)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ContentOf (-want +got):\n%s", diff)
			}
			if got.Fields == nil || got.Labels == nil || got.Annotations == nil {
				t.Errorf("ContentOf returned a nil map: %#v", got)
			}
		})
	}
}

func TestContentOfSharesNoMemory(t *testing.T) {
	for _, tc := range []struct {
		kind failoverv1alpha1.ReplicatedKind
		obj  func() *unstructured.Unstructured
	}{
		{failoverv1alpha1.KindManagedCluster, mcSource},
		{failoverv1alpha1.KindManifestWork, mwSource},
		{failoverv1alpha1.KindSecret, secretSource},
		{failoverv1alpha1.KindConfigMap, configMapSource},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			obj := tc.obj()
			before := obj.DeepCopy()
			c := mirror.ContentOf(kind(t, tc.kind), obj)
			if diff := cmp.Diff(before.Object, obj.Object); diff != "" {
				t.Fatalf("ContentOf modified its input (-before +after):\n%s", diff)
			}
			scribble(c.Fields)
			for k := range c.Labels {
				c.Labels[k] = "scribbled"
			}
			c.Labels["new"] = "x"
			c.Annotations["new"] = "x"
			if diff := cmp.Diff(before.Object, obj.Object); diff != "" {
				t.Errorf("changing ContentOf's result changed the object (-before +after):\n%s", diff)
			}
		})
	}
}

// scribble overwrites every nested value of v it can reach.
func scribble(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch e.(type) {
			case map[string]any, []any:
				scribble(e)
			default:
				x[k] = "scribbled"
			}
		}
		x["scribbled"] = true
	case []any:
		for i, e := range x {
			switch e.(type) {
			case map[string]any, []any:
				scribble(e)
			default:
				x[i] = "scribbled"
			}
		}
	}
}

// contentInOrder builds the same content with its maps filled in the given key order.
func contentInOrder(order []int) mirror.Content {
	keys := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	c := mirror.Content{Fields: map[string]any{}, Labels: map[string]string{}, Annotations: map[string]string{}}
	nested := map[string]any{}
	for _, i := range order {
		k := keys[i]
		c.Labels[k] = "l-" + k
		c.Annotations[k] = "a-" + k
		nested[k] = map[string]any{"n": int64(i), "s": k, "list": []any{k, int64(i)}}
	}
	c.Fields["spec"] = nested
	c.Fields["data"] = map[string]any{"x": "1", "y": "2"}
	return c
}

func TestContentHash(t *testing.T) {
	hexRE := regexp.MustCompile(`^[0-9a-f]{16}$`)
	base := contentInOrder([]int{0, 1, 2, 3, 4, 5, 6, 7})

	t.Run("format", func(t *testing.T) {
		if h := base.Hash(); !hexRE.MatchString(h) {
			t.Errorf("Hash() = %q, want 16 lowercase hex digits", h)
		}
		empty := mirror.Content{Fields: map[string]any{}, Labels: map[string]string{}, Annotations: map[string]string{}}
		if h := empty.Hash(); !hexRE.MatchString(h) {
			t.Errorf("empty Hash() = %q, want 16 lowercase hex digits", h)
		}
	})

	t.Run("stable across map orderings", func(t *testing.T) {
		want := base.Hash()
		for _, order := range [][]int{
			{7, 6, 5, 4, 3, 2, 1, 0},
			{3, 1, 4, 0, 5, 2, 6, 7},
			{6, 0, 2, 7, 1, 5, 3, 4},
		} {
			c := contentInOrder(order)
			for i := 0; i < 5; i++ { // Go randomises map iteration: hash several times
				if got := c.Hash(); got != want {
					t.Fatalf("Hash() for insertion order %v = %q, want %q", order, got, want)
				}
			}
		}
		// ContentOf of the same object, built twice, hashes the same.
		k := kind(t, failoverv1alpha1.KindManagedCluster)
		if a, b := mirror.ContentOf(k, mcSource()).Hash(), mirror.ContentOf(k, mcSource()).Hash(); a != b {
			t.Errorf("ContentOf(mcSource).Hash() not stable: %q vs %q", a, b)
		}
	})

	differing := []struct {
		name   string
		change func(c *mirror.Content)
	}{
		{"nested field value", func(c *mirror.Content) {
			c.Fields["spec"].(map[string]any)["alpha"].(map[string]any)["n"] = int64(99)
		}},
		{"number vs string", func(c *mirror.Content) {
			c.Fields["spec"].(map[string]any)["alpha"].(map[string]any)["n"] = "0"
		}},
		{"list order", func(c *mirror.Content) {
			c.Fields["spec"].(map[string]any)["alpha"].(map[string]any)["list"] = []any{int64(0), "alpha"}
		}},
		{"extra field", func(c *mirror.Content) { c.Fields["binaryData"] = map[string]any{"b": "AA=="} }},
		{"missing field", func(c *mirror.Content) { delete(c.Fields, "data") }},
		{"label value", func(c *mirror.Content) { c.Labels["alpha"] = "other" }},
		{"extra label", func(c *mirror.Content) { c.Labels["new"] = "" }},
		{"annotation value", func(c *mirror.Content) { c.Annotations["bravo"] = "other" }},
		{"removed annotation", func(c *mirror.Content) { delete(c.Annotations, "bravo") }},
		{"label moved to annotations", func(c *mirror.Content) {
			c.Annotations["zulu"] = "z"
			c.Labels["zulu"] = "z"
			delete(c.Labels, "zulu")
		}},
	}
	for _, tt := range differing {
		t.Run("differs: "+tt.name, func(t *testing.T) {
			c := contentInOrder([]int{0, 1, 2, 3, 4, 5, 6, 7})
			tt.change(&c)
			if c.Hash() == base.Hash() {
				t.Errorf("Hash() unchanged (%q) after changing the content", c.Hash())
			}
			if c.Equal(base) || base.Equal(c) {
				t.Errorf("Equal() = true for different contents")
			}
		})
	}

	t.Run("label and annotation with same key and value are distinguished", func(t *testing.T) {
		a := mirror.Content{Fields: map[string]any{}, Labels: map[string]string{"k": "v"}, Annotations: map[string]string{}}
		b := mirror.Content{Fields: map[string]any{}, Labels: map[string]string{}, Annotations: map[string]string{"k": "v"}}
		if a.Hash() == b.Hash() {
			t.Errorf("label k=v and annotation k=v hash the same: %q", a.Hash())
		}
	})

	t.Run("ManagedCluster hub-owned taints do not change the hash", func(t *testing.T) {
		k := kind(t, failoverv1alpha1.KindManagedCluster)
		src := mcSource()
		other := mod(src, func(m map[string]any) {
			spec(m)["taints"] = append(spec(m)["taints"].([]any), map[string]any{"key": taintUnreachable, "effect": "NoSelect"})
			setLabel(m, "feature.open-cluster-management.io/addon-other", "available")
			setAnnotation(m, "agent.open-cluster-management.io/other", "x")
			m["status"] = map[string]any{"changed": true}
			meta(m)["resourceVersion"] = "99999"
		})
		if a, b := mirror.ContentOf(k, src).Hash(), mirror.ContentOf(k, other).Hash(); a != b {
			t.Errorf("hash changed with only non-mirrored parts changed: %q vs %q", a, b)
		}
	})
}

func TestContentEqual(t *testing.T) {
	mk := func(f map[string]any, l, a map[string]string) mirror.Content {
		return mirror.Content{Fields: f, Labels: l, Annotations: a}
	}
	tests := []struct {
		name string
		a, b mirror.Content
		want bool
	}{
		{"both empty", mk(map[string]any{}, map[string]string{}, map[string]string{}), mk(map[string]any{}, map[string]string{}, map[string]string{}), true},
		{"same built in different orders", contentInOrder([]int{0, 1, 2, 3, 4, 5, 6, 7}), contentInOrder([]int{7, 6, 5, 4, 3, 2, 1, 0}), true},
		{"field differs", mk(map[string]any{"spec": map[string]any{"a": int64(1)}}, map[string]string{}, map[string]string{}), mk(map[string]any{"spec": map[string]any{"a": int64(2)}}, map[string]string{}, map[string]string{}), false},
		{"label differs", mk(map[string]any{}, map[string]string{"a": "1"}, map[string]string{}), mk(map[string]any{}, map[string]string{"a": "2"}, map[string]string{}), false},
		{"annotation missing", mk(map[string]any{}, map[string]string{}, map[string]string{"a": "1"}), mk(map[string]any{}, map[string]string{}, map[string]string{}), false},
		{"ContentOf same object twice", mirror.ContentOf(kind(t, failoverv1alpha1.KindManifestWork), mwSource()), mirror.ContentOf(kind(t, failoverv1alpha1.KindManifestWork), mwSource()), true},
		{"ContentOf objects differing in status only", mirror.ContentOf(kind(t, failoverv1alpha1.KindManifestWork), mwSource()),
			mirror.ContentOf(kind(t, failoverv1alpha1.KindManifestWork), mod(mwSource(), func(m map[string]any) { m["status"] = map[string]any{} })), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Equal(tt.b); got != tt.want {
				t.Errorf("a.Equal(b) = %v, want %v", got, tt.want)
			}
			if got := tt.b.Equal(tt.a); got != tt.want {
				t.Errorf("b.Equal(a) = %v, want %v", got, tt.want)
			}
			if tt.want && tt.a.Hash() != tt.b.Hash() {
				t.Errorf("equal contents hash differently: %q vs %q", tt.a.Hash(), tt.b.Hash())
			}
		})
	}
}

// ---------------------------------------------------------------------------------------------------------
// Desired

func TestDesiredManagedCluster(t *testing.T) {
	k := kind(t, failoverv1alpha1.KindManagedCluster)
	srcHash := mirror.ContentOf(k, mcSource()).Hash()

	// The mirrored spec: the source's, without the source hub's own (unavailable) taint.
	mirroredSpec := func(targetHubTaints ...any) map[string]any {
		return map[string]any{
			"hubAcceptsClient":     true,
			"leaseDurationSeconds": int64(60),
			"managedClusterClientConfigs": []any{map[string]any{
				"url": "https://api.cluster1.example.com:6443", "caBundle": "Y2EtYnVuZGxl",
			}},
			"taints": append([]any{
				map[string]any{"key": "example.com/maintenance", "value": "true", "effect": "NoSelect"},
			}, targetHubTaints...),
		}
	}
	mirroredLabels := func(extra map[string]any) map[string]any {
		l := map[string]any{
			"name": "cluster1", "vendor": "OpenShift", "env": "prod",
			"cluster.open-cluster-management.io/clusterset": "default",
			mirror.LabelReplicatedFrom:                      hubA,
		}
		for k, v := range extra {
			l[k] = v
		}
		return l
	}

	tests := []struct {
		name  string
		tgt   *unstructured.Unstructured
		extra map[string]string
		want  map[string]any
	}{
		{
			name:  "create: only the mirrored content and the marks, no source metadata, no status",
			tgt:   nil,
			extra: clusterHubExtra(hubA),
			want: map[string]any{
				"apiVersion": "cluster.open-cluster-management.io/v1",
				"kind":       "ManagedCluster",
				"metadata": map[string]any{
					"name":   "cluster1",
					"labels": mirroredLabels(nil),
					"annotations": map[string]any{
						"open-cluster-management.io/owner":     "team-a",
						mirror.AnnotationContentHash:           srcHash,
						mirror.AnnotationSourceResourceVersion: "1001",
						mirror.AnnotationSourceGeneration:      "4",
						mirror.AnnotationSourceUID:             "uid-source",
						mirror.AnnotationClusterHub:            hubA,
						mirror.AnnotationClusterHubSince:       since,
					},
				},
				"spec": mirroredSpec(),
			},
		},
		{
			name:  "update: target's metadata, status, reserved labels/annotations and hub-owned taints kept",
			tgt:   mcTarget(),
			extra: clusterHubExtra(hubA),
			want: map[string]any{
				"apiVersion": "cluster.open-cluster-management.io/v1",
				"kind":       "ManagedCluster",
				"metadata": map[string]any{
					"name":              "cluster1",
					"uid":               "uid-target",
					"resourceVersion":   "555",
					"generation":        int64(2),
					"creationTimestamp": "2024-03-05T00:00:00Z",
					"finalizers":        []any{"cluster.open-cluster-management.io/api-resource-cleanup"},
					"labels":            mirroredLabels(map[string]any{"feature.open-cluster-management.io/addon-x": "unreachable"}),
					"annotations": map[string]any{
						"open-cluster-management.io/owner":      "team-a",
						"agent.open-cluster-management.io/zone": "b",
						mirror.AnnotationContentHash:            srcHash,
						mirror.AnnotationSourceResourceVersion:  "1001",
						mirror.AnnotationSourceGeneration:       "4",
						mirror.AnnotationSourceUID:              "uid-source",
						mirror.AnnotationClusterHub:             hubA,
						mirror.AnnotationClusterHubSince:        since,
					},
				},
				"spec": mirroredSpec(map[string]any{"key": taintUnreachable, "effect": "NoSelect", "timeAdded": "2024-03-06T00:00:00Z"}),
				"status": map[string]any{
					"conditions": []any{map[string]any{"type": "ManagedClusterConditionAvailable", "status": "Unknown"}},
				},
			},
		},
		{
			name:  "update without extraAnnotations: cluster-hub annotations removed",
			tgt:   mod(mcTarget(), func(m map[string]any) { delete(spec(m), "taints") }),
			extra: nil,
			want: map[string]any{
				"apiVersion": "cluster.open-cluster-management.io/v1",
				"kind":       "ManagedCluster",
				"metadata": map[string]any{
					"name":              "cluster1",
					"uid":               "uid-target",
					"resourceVersion":   "555",
					"generation":        int64(2),
					"creationTimestamp": "2024-03-05T00:00:00Z",
					"finalizers":        []any{"cluster.open-cluster-management.io/api-resource-cleanup"},
					"labels":            mirroredLabels(map[string]any{"feature.open-cluster-management.io/addon-x": "unreachable"}),
					"annotations": map[string]any{
						"open-cluster-management.io/owner":      "team-a",
						"agent.open-cluster-management.io/zone": "b",
						mirror.AnnotationContentHash:            srcHash,
						mirror.AnnotationSourceResourceVersion:  "1001",
						mirror.AnnotationSourceGeneration:       "4",
						mirror.AnnotationSourceUID:              "uid-source",
					},
				},
				"spec": mirroredSpec(),
				"status": map[string]any{
					"conditions": []any{map[string]any{"type": "ManagedClusterConditionAvailable", "status": "Unknown"}},
				},
			},
		},
		{
			name: "update with empty extraAnnotations, target's only taint hub-owned: kept, cluster-hub annotations removed",
			tgt: mod(mcTarget(), func(m map[string]any) {
				spec(m)["taints"] = []any{map[string]any{"key": taintUnavailable, "effect": "NoSelect"}}
			}),
			extra: map[string]string{},
			want: map[string]any{
				"apiVersion": "cluster.open-cluster-management.io/v1",
				"kind":       "ManagedCluster",
				"metadata": map[string]any{
					"name":              "cluster1",
					"uid":               "uid-target",
					"resourceVersion":   "555",
					"generation":        int64(2),
					"creationTimestamp": "2024-03-05T00:00:00Z",
					"finalizers":        []any{"cluster.open-cluster-management.io/api-resource-cleanup"},
					"labels":            mirroredLabels(map[string]any{"feature.open-cluster-management.io/addon-x": "unreachable"}),
					"annotations": map[string]any{
						"open-cluster-management.io/owner":      "team-a",
						"agent.open-cluster-management.io/zone": "b",
						mirror.AnnotationContentHash:            srcHash,
						mirror.AnnotationSourceResourceVersion:  "1001",
						mirror.AnnotationSourceGeneration:       "4",
						mirror.AnnotationSourceUID:              "uid-source",
					},
				},
				"spec": mirroredSpec(map[string]any{"key": taintUnavailable, "effect": "NoSelect"}),
				"status": map[string]any{
					"conditions": []any{map[string]any{"type": "ManagedClusterConditionAvailable", "status": "Unknown"}},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mirror.Desired(k, mcSource(), tt.tgt, hubA, tt.extra)
			if got == nil {
				t.Fatal("Desired returned nil")
			}
			// The hash annotation is checked separately below, with a message of its own.
			wantObj, gotObj := sortedTaints(tt.want), sortedTaints(got.Object)
			delete(annots(wantObj), mirror.AnnotationContentHash)
			delete(annots(gotObj), mirror.AnnotationContentHash)
			if diff := cmp.Diff(wantObj, gotObj); diff != "" {
				t.Errorf("Desired (-want +got):\n%s", diff)
			}
			// Desired's mirrored content is the source's.
			if diff := cmp.Diff(mirror.ContentOf(k, mcSource()), mirror.ContentOf(k, got)); diff != "" {
				t.Errorf("ContentOf(Desired) != ContentOf(src) (-src +desired):\n%s", diff)
			}
			// AnnotationContentHash is the hash of the mirrored content written (ContentOf(desired) ==
			// ContentOf(src)); the target's hub-owned taints, which are not mirrored, are not part of it.
			// (Desired appends them to the spec map it shares with the content, so the hash must be taken first.)
			if h := got.GetAnnotations()[mirror.AnnotationContentHash]; h != srcHash || h != mirror.ContentOf(k, got).Hash() {
				t.Errorf("Desired: %s = %q, want %q (= ContentOf(src).Hash() = ContentOf(desired).Hash() = %q); taints on desired %v",
					mirror.AnnotationContentHash, h, srcHash, mirror.ContentOf(k, got).Hash(), taintKeys(got))
			}
		})
	}
}

func TestDesiredManagedClusterTaints(t *testing.T) {
	k := kind(t, failoverv1alpha1.KindManagedCluster)
	taint := func(key string) map[string]any { return map[string]any{"key": key, "effect": "NoSelect"} }
	withTaints := func(o *unstructured.Unstructured, keys ...string) *unstructured.Unstructured {
		return mod(o, func(m map[string]any) {
			if len(keys) == 0 {
				delete(spec(m), "taints")
				return
			}
			var list []any
			for _, key := range keys {
				list = append(list, taint(key))
			}
			spec(m)["taints"] = list
		})
	}
	tests := []struct {
		name    string
		srcKeys []string
		tgtKeys []string // nil target taints; tgt absent when noTgt
		noTgt   bool
		want    []string
	}{
		{"create: source hub taints not copied", []string{"user/a", taintUnavailable, taintUnreachable}, nil, true, []string{"user/a"}},
		{"create: only hub taints on source: no taints", []string{taintUnreachable}, nil, true, nil},
		{"update: target keeps its hub taints, source's are not copied", []string{"user/a", taintUnavailable}, []string{taintUnreachable}, false, []string{taintUnreachable, "user/a"}},
		{"update: target's user taint removed when gone on source", []string{"user/a"}, []string{"user/old", taintUnavailable}, false, []string{taintUnavailable, "user/a"}},
		{"update: no taints anywhere", nil, nil, false, nil},
		{"update: source has none, target keeps both hub taints", nil, []string{taintUnavailable, taintUnreachable}, false, []string{taintUnavailable, taintUnreachable}},
		{"update: source has the same hub taint as target: not duplicated", []string{taintUnavailable}, []string{taintUnavailable}, false, []string{taintUnavailable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := withTaints(mcSource(), tt.srcKeys...)
			var tgt *unstructured.Unstructured
			if !tt.noTgt {
				tgt = withTaints(mcTarget(), tt.tgtKeys...)
			}
			got := mirror.Desired(k, src, tgt, hubA, clusterHubExtra(hubA))
			if diff := cmp.Diff(tt.want, taintKeys(got)); diff != "" {
				t.Errorf("taint keys of Desired (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDesiredManifestWork(t *testing.T) {
	k := kind(t, failoverv1alpha1.KindManifestWork)
	srcHash := mirror.ContentOf(k, mwSource()).Hash()
	tgt := u(map[string]any{
		"apiVersion": "work.open-cluster-management.io/v1",
		"kind":       "ManifestWork",
		"metadata": map[string]any{
			"name": "app", "namespace": "cluster1", "uid": "uid-mw-target", "resourceVersion": "77",
			"finalizers": []any{"cluster.open-cluster-management.io/manifest-work-cleanup"},
			"labels":     map[string]any{"app": "old", "gone": "x", mirror.LabelReplicatedFrom: hubA},
			"annotations": map[string]any{
				"gone":                                 "y",
				mirror.AnnotationContentHash:           "stale",
				mirror.AnnotationSourceResourceVersion: "1",
			},
		},
		"spec": map[string]any{
			"workload":     map[string]any{"manifests": []any{}},
			"executor":     map[string]any{"subject": map[string]any{"type": "ServiceAccount"}},
			"deleteOption": map[string]any{"propagationPolicy": "Orphan"},
		},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "False"}}},
	})
	tests := []struct {
		name  string
		tgt   *unstructured.Unstructured
		extra map[string]string
		want  map[string]any
	}{
		{
			name: "create",
			tgt:  nil,
			want: map[string]any{
				"apiVersion": "work.open-cluster-management.io/v1",
				"kind":       "ManifestWork",
				"metadata": map[string]any{
					"name": "app", "namespace": "cluster1",
					"labels": map[string]any{"app": "demo", mirror.LabelReplicatedFrom: hubA},
					"annotations": map[string]any{
						mirror.AnnotationContentHash:           srcHash,
						mirror.AnnotationSourceResourceVersion: "2001",
						mirror.AnnotationSourceGeneration:      "7",
						mirror.AnnotationSourceUID:             "uid-mw-source",
					},
				},
				"spec": spec(mwSource().Object),
			},
		},
		{
			name: "update: spec replaced whole (target-only spec fields gone), status and metadata of target kept",
			tgt:  tgt,
			want: map[string]any{
				"apiVersion": "work.open-cluster-management.io/v1",
				"kind":       "ManifestWork",
				"metadata": map[string]any{
					"name": "app", "namespace": "cluster1", "uid": "uid-mw-target", "resourceVersion": "77",
					"finalizers": []any{"cluster.open-cluster-management.io/manifest-work-cleanup"},
					"labels":     map[string]any{"app": "demo", mirror.LabelReplicatedFrom: hubA},
					"annotations": map[string]any{
						mirror.AnnotationContentHash:           srcHash,
						mirror.AnnotationSourceResourceVersion: "2001",
						mirror.AnnotationSourceGeneration:      "7",
						mirror.AnnotationSourceUID:             "uid-mw-source",
					},
				},
				"spec":   spec(mwSource().Object),
				"status": map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "False"}}},
			},
		},
		{
			name:  "extraAnnotations set on other kinds too",
			tgt:   nil,
			extra: map[string]string{"example.com/extra": "yes"},
			want: map[string]any{
				"apiVersion": "work.open-cluster-management.io/v1",
				"kind":       "ManifestWork",
				"metadata": map[string]any{
					"name": "app", "namespace": "cluster1",
					"labels": map[string]any{"app": "demo", mirror.LabelReplicatedFrom: hubA},
					"annotations": map[string]any{
						mirror.AnnotationContentHash:           srcHash,
						mirror.AnnotationSourceResourceVersion: "2001",
						mirror.AnnotationSourceGeneration:      "7",
						mirror.AnnotationSourceUID:             "uid-mw-source",
						"example.com/extra":                    "yes",
					},
				},
				"spec": spec(mwSource().Object),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mirror.Desired(k, mwSource(), tt.tgt, hubA, tt.extra)
			if diff := cmp.Diff(tt.want, got.Object); diff != "" {
				t.Errorf("Desired (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDesiredFieldRemoved(t *testing.T) {
	secretK := kind(t, failoverv1alpha1.KindSecret)
	cmK := kind(t, failoverv1alpha1.KindConfigMap)
	secretCopy := written(mirror.Desired(secretK, secretSource(), nil, hubA, nil), "10")
	cmCopy := written(mirror.Desired(cmK, configMapSource(), nil, hubA, nil), "20")

	tests := []struct {
		name       string
		kind       mirror.Kind
		src, tgt   *unstructured.Unstructured
		wantFields map[string]any // the kind's fields on the result; absent ones must be absent
	}{
		{
			name:       "Secret: data removed on source",
			kind:       secretK,
			src:        mod(secretSource(), func(m map[string]any) { delete(m, "data") }),
			tgt:        secretCopy,
			wantFields: map[string]any{"type": "Opaque"},
		},
		{
			name:       "Secret: type removed on source",
			kind:       secretK,
			src:        mod(secretSource(), func(m map[string]any) { delete(m, "type") }),
			tgt:        secretCopy,
			wantFields: map[string]any{"data": map[string]any{"token": "dG9rZW4=", "ca.crt": "Y2E="}},
		},
		{
			name:       "Secret: one data key removed on source",
			kind:       secretK,
			src:        mod(secretSource(), func(m map[string]any) { delete(m["data"].(map[string]any), "ca.crt") }),
			tgt:        secretCopy,
			wantFields: map[string]any{"type": "Opaque", "data": map[string]any{"token": "dG9rZW4="}},
		},
		{
			name:       "ConfigMap: binaryData removed on source",
			kind:       cmK,
			src:        mod(configMapSource(), func(m map[string]any) { delete(m, "binaryData") }),
			tgt:        cmCopy,
			wantFields: map[string]any{"data": map[string]any{"mode": "active"}},
		},
		{
			name:       "ConfigMap: data removed on source",
			kind:       cmK,
			src:        mod(configMapSource(), func(m map[string]any) { delete(m, "data") }),
			tgt:        cmCopy,
			wantFields: map[string]any{"binaryData": map[string]any{"blob": "AAEC"}},
		},
		{
			name:       "ConfigMap: both removed on source",
			kind:       cmK,
			src:        mod(configMapSource(), func(m map[string]any) { delete(m, "data"); delete(m, "binaryData") }),
			tgt:        cmCopy,
			wantFields: map[string]any{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(t *testing.T, got *unstructured.Unstructured) {
				t.Helper()
				gotFields := map[string]any{}
				for _, f := range tt.kind.Fields {
					if v, ok := got.Object[f]; ok {
						gotFields[f] = v
					}
				}
				if diff := cmp.Diff(tt.wantFields, gotFields); diff != "" {
					t.Errorf("mirrored fields (-want +got):\n%s", diff)
				}
			}
			t.Run("Desired", func(t *testing.T) {
				check(t, mirror.Desired(tt.kind, tt.src, tt.tgt, hubA, nil))
			})
			t.Run("Decide", func(t *testing.T) {
				d := mirror.Decide(tt.kind, tt.src, tt.tgt, "", hubA, hubB, nil, nil)
				if d.Action != mirror.ActionUpdate || d.Conflict != mirror.ConflictNone || d.Object == nil {
					t.Fatalf("Decide = {%s, conflict %q, object %v}, want Update without conflict", d.Action, d.Conflict, d.Object != nil)
				}
				check(t, d.Object)
			})
		})
	}
}

func TestDesiredDoesNotModifyInputs(t *testing.T) {
	mc := kind(t, failoverv1alpha1.KindManagedCluster)
	mw := kind(t, failoverv1alpha1.KindManifestWork)
	sec := kind(t, failoverv1alpha1.KindSecret)
	cm := kind(t, failoverv1alpha1.KindConfigMap)
	tests := []struct {
		name     string
		kind     mirror.Kind
		src, tgt *unstructured.Unstructured
		extra    map[string]string
	}{
		{"ManagedCluster create", mc, mcSource(), nil, clusterHubExtra(hubA)},
		{"ManagedCluster update with hub taints on both", mc, mcSource(), mcTarget(), clusterHubExtra(hubA)},
		{"ManagedCluster update without extra", mc, mcSource(), mcTarget(), nil},
		{"ManagedCluster update, target taints only hub-owned, source none", mc,
			mod(mcSource(), func(m map[string]any) { delete(spec(m), "taints") }),
			mod(mcTarget(), func(m map[string]any) {
				spec(m)["taints"] = []any{map[string]any{"key": taintUnreachable}}
			}), nil},
		{"ManifestWork update", mw, mwSource(), written(mirror.Desired(mw, mod(mwSource(), func(m map[string]any) { spec(m)["x"] = "y" }), nil, hubC, nil), "5"), nil},
		{"ManifestWork adoption", mw, mod(mwSource(), func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubB) }),
			mod(mwSource(), func(m map[string]any) { meta(m)["uid"] = "uid-original" }), nil},
		{"Secret update", sec, secretSource(), written(mirror.Desired(sec, mod(secretSource(), func(m map[string]any) { delete(m, "data") }), nil, hubA, nil), "7"), nil},
		{"ConfigMap create", cm, configMapSource(), nil, map[string]string{"x": "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcBefore := tt.src.DeepCopy()
			var tgtBefore *unstructured.Unstructured
			if tt.tgt != nil {
				tgtBefore = tt.tgt.DeepCopy()
			}
			extraBefore := map[string]string(nil)
			if tt.extra != nil {
				extraBefore = map[string]string{}
				for k, v := range tt.extra {
					extraBefore[k] = v
				}
			}
			assertUnchanged := func(when string) {
				t.Helper()
				if diff := cmp.Diff(srcBefore.Object, tt.src.Object); diff != "" {
					t.Errorf("%s: src modified (-before +after):\n%s", when, diff)
				}
				if tt.tgt != nil {
					if diff := cmp.Diff(tgtBefore.Object, tt.tgt.Object); diff != "" {
						t.Errorf("%s: tgt modified (-before +after):\n%s", when, diff)
					}
				}
				if diff := cmp.Diff(extraBefore, tt.extra); diff != "" {
					t.Errorf("%s: extraAnnotations modified (-before +after):\n%s", when, diff)
				}
			}

			got := mirror.Desired(tt.kind, tt.src, tt.tgt, hubA, tt.extra)
			assertUnchanged("after Desired")
			d := mirror.Decide(tt.kind, tt.src, tt.tgt, "", hubA, hubB, nil, tt.extra)
			assertUnchanged("after Decide")

			// The result shares no memory with the inputs: a caller may change it (e.g. before an update).
			scribble(got.Object)
			if d.Object != nil {
				scribble(d.Object.Object)
			}
			assertUnchanged("after changing the results")
		})
	}
}

// ---------------------------------------------------------------------------------------------------------
// Decide

func TestDecide(t *testing.T) {
	mc := kind(t, failoverv1alpha1.KindManagedCluster)
	mw := kind(t, failoverv1alpha1.KindManifestWork)
	sec := kind(t, failoverv1alpha1.KindSecret)

	// A ManifestWork copy on hub-b as the replicator wrote it from hub-a's current object.
	mwCopy := written(mirror.Desired(mw, mwSource(), nil, hubA, nil), "500")
	// A ManagedCluster copy on hub-b as the replicator wrote it, with hub-b's status since.
	mcCopy := mod(written(mirror.Desired(mc, mcSource(), nil, hubA, clusterHubExtra(hubA)), "600"), func(m map[string]any) {
		m["status"] = map[string]any{"conditions": []any{map[string]any{"type": "ManagedClusterConditionAvailable", "status": "Unknown"}}}
	})
	// A user's ManifestWork on hub-b that the replicator did not make.
	mwForeign := mod(mwSource(), func(m map[string]any) {
		meta(m)["uid"] = "uid-foreign"
		meta(m)["resourceVersion"] = "42"
		spec(m)["workload"] = map[string]any{"manifests": []any{}}
	})
	// The original ManifestWork on hub-b, and hub-a's copy of it (the cluster moved from hub-b to hub-a and
	// the work was changed there since).
	mwOriginal := mod(mwSource(), func(m map[string]any) {
		meta(m)["uid"] = "uid-original"
		meta(m)["resourceVersion"] = "43"
		delete(meta(m), "labels")
		spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
	})
	// The source's copy was made from the original as it is now (its hash), then changed on the source.
	mwSourceIsCopyOfTarget := mod(mwSource(), func(m map[string]any) {
		setLabel(m, mirror.LabelReplicatedFrom, hubB)
		setAnnotation(m, mirror.AnnotationContentHash, mirror.ContentOf(mw, mwOriginal).Hash())
	})
	// The same, but the original was changed on the target after the copy was made.
	mwSourceIsCopyOfEarlierOriginal := mod(mwSource(), func(m map[string]any) {
		setLabel(m, mirror.LabelReplicatedFrom, hubB)
		setAnnotation(m, mirror.AnnotationContentHash, "0123456789abcdef")
	})

	tests := []struct {
		name         string
		kind         mirror.Kind
		src, tgt     *unstructured.Unstructured
		source       string
		target       string
		extra        map[string]string
		deleted      *mirror.Deleted
		wantAction   mirror.Action
		wantConflict mirror.Conflict
		wantAdopted  bool
		// wantOffset: the generation offset an adopted original gets besides Desired ("": none).
		wantOffset string
		check      func(t *testing.T, obj *unstructured.Unstructured)
	}{
		// Rule 0: a target object its hub generated is left alone.
		{
			name: "rule 0: no source, target a ManifestWorkReplicaSet's work with the set's copy label: not deleted",
			kind: mw, src: nil, tgt: mod(mwCopy, func(m map[string]any) {
				setLabel(m, mirror.ManifestWorkReplicaSetLabel, "apps.web")
				delete(meta(m)["annotations"].(map[string]any), mirror.AnnotationContentHash)
			}),
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 0 does not apply to a copy an earlier replicator made of a set's work: source deleted, deleted",
			kind: mw, src: nil, tgt: mod(mwCopy, func(m map[string]any) {
				setLabel(m, mirror.ManifestWorkReplicaSetLabel, "apps.web")
				setAnnotation(m, mirror.AnnotationContentHash, "0123456789abcdef")
			}),
			deleted:    &mirror.Deleted{UID: "uid-mw-source"},
			wantAction: mirror.ActionDelete,
		},
		{
			name: "rule 0: source a user's work, target an add-on's work of that name: left alone, no conflict",
			kind: mw, src: mwSource(), tgt: mod(mwForeign, func(m map[string]any) { setLabel(m, mirror.AddonNameLabel, "hello") }),
			wantAction: mirror.ActionNone,
		},

		// Rule 1: a target object being deleted is left alone.
		{
			name: "rule 1: target copy being deleted, source changed: left alone",
			kind: mw, src: mod(mwSource(), func(m map[string]any) { spec(m)["deleteOption"] = nil }), tgt: mod(mwCopy, deleting),
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 1: target copy being deleted, no source: not deleted again",
			kind: mw, src: nil, tgt: mod(mwCopy, deleting),
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 1: target original being deleted, source is a copy of it: not adopted",
			kind: mw, src: mwSourceIsCopyOfTarget, tgt: mod(mwOriginal, deleting),
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 1: foreign target being deleted: no conflict reported",
			kind: mw, src: mwSource(), tgt: mod(mwForeign, deleting),
			wantAction: mirror.ActionNone,
		},

		// Rule 2: the source object is being deleted.
		{
			name: "rule 2: source being deleted: copy deleted",
			kind: mw, src: mod(mwSource(), deleting), tgt: mwCopy,
			wantAction: mirror.ActionDelete,
		},
		{
			name: "rule 2: source being deleted: ManagedCluster original whose has-copies lists the source deleted",
			kind: mc, src: mod(mcSource(), deleting),
			tgt: mod(mcTarget(), func(m map[string]any) {
				delete(labels(m), mirror.LabelReplicatedFrom)
				setAnnotation(m, mirror.AnnotationHasCopies, hubA)
			}),
			wantAction: mirror.ActionDelete,
		},
		{
			name: "rule 2: source deleted again by the replicator (a restored remnant): its copies left to the logs of deletes made",
			kind: mw, src: mod(mod(mwSource(), deleting), func(m map[string]any) { setAnnotation(m, mirror.AnnotationDeletedAgain, hubB) }),
			tgt:        mwCopy,
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 2: source being deleted: foreign object left alone, no conflict",
			kind: mw, src: mod(mwSource(), deleting), tgt: mwForeign,
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 2: source being deleted, no target: not created",
			kind: mw, src: mod(mwSource(), deleting), tgt: nil,
			wantAction: mirror.ActionNone,
		},

		// Rule 3: no source object: a copy goes only for a delete that was seen.
		{
			name: "rule 3: source deleted (seen): its copy deleted",
			kind: mw, src: nil, tgt: mwCopy, deleted: &mirror.Deleted{UID: "uid-mw-source"},
			wantAction: mirror.ActionDelete,
		},
		{
			name: "rule 3: source missing, no delete seen (a restored or rebuilt hub): copy kept, reported",
			kind: mw, src: nil, tgt: mwCopy,
			wantAction: mirror.ActionNone, wantConflict: mirror.ConflictSourceMissing,
		},
		{
			name: "rule 3: the delete seen was of another object of that name: copy kept, reported",
			kind: mw, src: nil, tgt: mwCopy, deleted: &mirror.Deleted{UID: "uid-made-again"},
			wantAction: mirror.ActionNone, wantConflict: mirror.ConflictSourceMissing,
		},
		{
			name: "rule 3: the source's copy of the same original deleted (seen): copy from another hub deleted too",
			kind: mw, src: nil, tgt: mod(mwCopy, func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubC) }),
			deleted:    &mirror.Deleted{UID: "uid-copy-on-a", SourceUID: "uid-mw-source"},
			wantAction: mirror.ActionDelete,
		},
		{
			name: "rule 3: a copy that records no source UID goes with any delete seen of its name",
			kind: mw, src: nil, tgt: mod(mwCopy, func(m map[string]any) { delete(meta(m)["annotations"].(map[string]any), mirror.AnnotationSourceUID) }),
			deleted:    &mirror.Deleted{UID: "uid-other"},
			wantAction: mirror.ActionDelete,
		},
		{
			name: "rule 3: source deleted (seen): ManagedCluster copy deleted",
			kind: mc, src: nil, tgt: mcCopy, deleted: &mirror.Deleted{UID: "uid-source"},
			wantAction: mirror.ActionDelete,
		},
		{
			name: "rule 3: ManagedCluster missing on the source, no delete seen: copy kept",
			kind: mc, src: nil, tgt: mcCopy,
			wantAction: mirror.ActionNone, wantConflict: mirror.ConflictSourceMissing,
		},
		{
			name: "rule 3: source gone: foreign object left alone, no conflict",
			kind: mw, src: nil, tgt: mwForeign, deleted: &mirror.Deleted{UID: "uid-mw-source"},
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 3: the source's copy of an original whose has-copies lists the source deleted (seen): the original deleted",
			kind: mw, src: nil, tgt: mod(mwOriginal, func(m map[string]any) { setAnnotation(m, mirror.AnnotationHasCopies, hubA+","+hubC) }),
			deleted:    &mirror.Deleted{UID: "uid-copy-on-a", SourceUID: "uid-original"},
			wantAction: mirror.ActionDelete,
		},
		{
			name: "rule 3: an original whose has-copies lists the source, missing there with no delete seen (a standby that lost its copies): kept",
			kind: mw, src: nil, tgt: mod(mwOriginal, func(m map[string]any) { setAnnotation(m, mirror.AnnotationHasCopies, hubA+","+hubC) }),
			wantAction: mirror.ActionNone, wantConflict: mirror.ConflictSourceMissing,
		},
		{
			name: "rule 3: a delete seen of a copy made from another original: the listed original kept",
			kind: mw, src: nil, tgt: mod(mwOriginal, func(m map[string]any) { setAnnotation(m, mirror.AnnotationHasCopies, hubA) }),
			deleted:    &mirror.Deleted{UID: "uid-copy-on-a", SourceUID: "uid-other-original"},
			wantAction: mirror.ActionNone, wantConflict: mirror.ConflictSourceMissing,
		},
		{
			name: "rule 3: source gone: original whose has-copies does not list the source left alone (the source never held it)",
			kind: mw, src: nil, tgt: mod(mwOriginal, func(m map[string]any) { setAnnotation(m, mirror.AnnotationHasCopies, hubC) }),
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 3: source gone: unmarked original (never copied) left alone",
			kind: mw, src: nil, tgt: mwOriginal, deleted: &mirror.Deleted{UID: "uid-original"},
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 3: neither exists",
			kind: mw, src: nil, tgt: nil,
			wantAction: mirror.ActionNone,
		},

		// Rule 3: no target object: create Desired.
		{
			name: "rule 3: ManifestWork created",
			kind: mw, src: mwSource(), tgt: nil,
			wantAction: mirror.ActionCreate,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if obj.GetResourceVersion() != "" {
					t.Errorf("created object has resourceVersion %q, want none", obj.GetResourceVersion())
				}
				if obj.GetLabels()[mirror.LabelReplicatedFrom] != hubA {
					t.Errorf("created object replicated-from = %q, want %q", obj.GetLabels()[mirror.LabelReplicatedFrom], hubA)
				}
			},
		},
		{
			name: "rule 3: ManagedCluster created with source metadata not copied",
			kind: mc, src: mcSource(), tgt: nil, extra: clusterHubExtra(hubA),
			wantAction: mirror.ActionCreate,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				md := meta(obj.Object)
				for _, f := range []string{"uid", "resourceVersion", "finalizers", "ownerReferences", "managedFields", "generation", "creationTimestamp", "deletionTimestamp"} {
					if v, ok := md[f]; ok {
						t.Errorf("created object has metadata.%s = %v, want none", f, v)
					}
				}
				if _, ok := obj.Object["status"]; ok {
					t.Errorf("created object has a status")
				}
			},
		},
		{
			name: "rule 3: source that is itself a copy (of a third hub): created, marked from the source",
			kind: mw, src: mod(mwSource(), func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubC) }), tgt: nil,
			wantAction: mirror.ActionCreate,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if got := obj.GetLabels()[mirror.LabelReplicatedFrom]; got != hubA {
					t.Errorf("replicated-from = %q, want %q", got, hubA)
				}
			},
		},

		// Rule 4: a target object that is not a copy.
		{
			name: "rule 4: foreign object left alone with ConflictForeignObject",
			kind: mw, src: mwSource(), tgt: mwForeign,
			wantAction: mirror.ActionNone, wantConflict: mirror.ConflictForeignObject,
		},
		{
			name: "rule 4: foreign object whose content equals the source's: left alone, no conflict",
			kind: mw, src: mwSource(), tgt: mod(mwSource(), func(m map[string]any) { meta(m)["uid"] = "uid-foreign" }),
			wantAction: mirror.ActionNone, wantConflict: mirror.ConflictNone,
		},
		{
			name: "rule 4: source is a copy from a third hub: target still foreign",
			kind: mw, src: mod(mwSource(), func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubC) }), tgt: mwForeign,
			wantAction: mirror.ActionNone, wantConflict: mirror.ConflictForeignObject,
		},
		{
			name: "rule 4: original changed on the target after the source's copy was made: adopted, CopyModified",
			kind: mw, src: mwSourceIsCopyOfEarlierOriginal, tgt: mwOriginal,
			wantAction: mirror.ActionUpdate, wantAdopted: true, wantConflict: mirror.ConflictCopyModified,
		},
		{
			name: "rule 4: source is a copy of the target's original: adopted",
			kind: mw, src: mwSourceIsCopyOfTarget,
			tgt:        mod(mwOriginal, func(m map[string]any) { setAnnotation(m, mirror.AnnotationHasCopies, hubA) }),
			wantAction: mirror.ActionUpdate, wantAdopted: true,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if v, ok := obj.GetAnnotations()[mirror.AnnotationHasCopies]; ok {
					t.Errorf("adopted object keeps %s=%q: a copy needs no mark", mirror.AnnotationHasCopies, v)
				}
				if got := obj.GetLabels()[mirror.LabelReplicatedFrom]; got != hubA {
					t.Errorf("adopted object replicated-from = %q, want %q (the source)", got, hubA)
				}
				if obj.GetResourceVersion() != "43" || obj.GetUID() != "uid-original" {
					t.Errorf("adopted object rv/uid = %q/%q, want the target's 43/uid-original", obj.GetResourceVersion(), obj.GetUID())
				}
				if diff := cmp.Diff(spec(mwSource().Object), obj.Object["spec"]); diff != "" {
					t.Errorf("adopted object spec is not the source's (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "rule 4: an original at a lower generation than its copy was made from (its hub restored while the cluster was away): adopted with an offset above the copy's lineage",
			kind: mw, src: mod(mwSourceIsCopyOfTarget, func(m map[string]any) {
				setAnnotation(m, mirror.AnnotationSourceUID, "uid-original")
				setAnnotation(m, mirror.AnnotationSourceGeneration, "9")
			}),
			tgt:        mod(mwOriginal, func(m map[string]any) { meta(m)["generation"] = int64(4) }),
			wantAction: mirror.ActionUpdate, wantAdopted: true, wantOffset: "5",
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if got := obj.GetAnnotations()[mirror.AnnotationGenerationOffset]; got != "5" {
					t.Errorf("adopted original's %s = %q, want 5 (the copy records lineage 9, the original is at generation 4)", mirror.AnnotationGenerationOffset, got)
				}
				obj.SetGeneration(5) // the update raises it
				if mirror.Lineage(obj) <= 9 {
					t.Errorf("adopted original's lineage after the update = %d, want above 9", mirror.Lineage(obj))
				}
			},
		},
		{
			name: "rule 4: an original already past the lineage its copy records: adopted, no offset",
			kind: mw, src: mod(mwSourceIsCopyOfTarget, func(m map[string]any) {
				setAnnotation(m, mirror.AnnotationSourceUID, "uid-original")
				setAnnotation(m, mirror.AnnotationSourceGeneration, "3")
			}),
			tgt:        mod(mwOriginal, func(m map[string]any) { meta(m)["generation"] = int64(4) }),
			wantAction: mirror.ActionUpdate, wantAdopted: true,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if got, ok := obj.GetAnnotations()[mirror.AnnotationGenerationOffset]; ok {
					t.Errorf("adopted original's %s = %q, want none", mirror.AnnotationGenerationOffset, got)
				}
			},
		},
		{
			name: "rule 4: ManagedCluster moved back: original adopted, its hub taints kept",
			kind: mc,
			src: mod(mcSource(), func(m map[string]any) {
				setLabel(m, mirror.LabelReplicatedFrom, hubB)
				original := mod(mcTarget(), func(m map[string]any) { delete(labels(m), mirror.LabelReplicatedFrom) })
				setAnnotation(m, mirror.AnnotationContentHash, mirror.ContentOf(mc, original).Hash())
			}),
			tgt: mod(mcTarget(), func(m map[string]any) {
				delete(labels(m), mirror.LabelReplicatedFrom)
				a := annots(m)
				delete(a, mirror.AnnotationContentHash)
				delete(a, mirror.AnnotationSourceResourceVersion)
			}),
			extra:      clusterHubExtra(hubA),
			wantAction: mirror.ActionUpdate, wantAdopted: true,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if got := obj.GetLabels()[mirror.LabelReplicatedFrom]; got != hubA {
					t.Errorf("replicated-from = %q, want %q", got, hubA)
				}
				if diff := cmp.Diff([]string{taintUnreachable, "example.com/maintenance"}, taintKeys(obj)); diff != "" {
					t.Errorf("taints (-want +got):\n%s", diff)
				}
			},
		},

		// Rule 6: a source older than the copy's own source state (same UID, lower generation) never overwrites it.
		{
			name: "rule 6: source restored to a lower generation than the copy records: copy kept, SourceOlder",
			kind: mw, src: mod(mwSource(), func(m map[string]any) {
				meta(m)["generation"] = int64(6)
				spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
			}),
			tgt:        mwCopy,
			wantAction: mirror.ActionNone, wantConflict: mirror.ConflictSourceOlder,
		},
		{
			name: "rule 6: a source written back after a restore, its lineage (generation + offset) above the copy's: copy updated, lineage recorded",
			kind: mw, src: mod(mwSource(), func(m map[string]any) {
				meta(m)["generation"] = int64(6)
				meta(m)["annotations"] = map[string]any{mirror.AnnotationGenerationOffset: "2"}
				spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
			}),
			tgt:        mwCopy,
			wantAction: mirror.ActionUpdate,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				a := obj.GetAnnotations()
				if a[mirror.AnnotationSourceGeneration] != "8" || a[mirror.AnnotationSourceGenerationOffset] != "2" {
					t.Errorf("%s, %s = %q, %q, want 8 (generation 6 + offset 2), 2", mirror.AnnotationSourceGeneration,
						mirror.AnnotationSourceGenerationOffset, a[mirror.AnnotationSourceGeneration], a[mirror.AnnotationSourceGenerationOffset])
				}
			},
		},
		{
			name: "rule 6: a source that lost the generation offset its copy recorded (a kubectl replace): not compared, copy updated",
			kind: mw, src: mod(mwSource(), func(m map[string]any) {
				meta(m)["generation"] = int64(8)
				spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
			}),
			tgt: mod(mwCopy, func(m map[string]any) {
				setAnnotation(m, mirror.AnnotationSourceGeneration, "10")
				setAnnotation(m, mirror.AnnotationSourceGenerationOffset, "3")
			}),
			wantAction: mirror.ActionUpdate,
		},
		{
			name: "rule 6: a source that kept its offset, at a lower lineage than the copy records: copy kept, SourceOlder",
			kind: mw, src: mod(mwSource(), func(m map[string]any) {
				meta(m)["generation"] = int64(6)
				meta(m)["annotations"] = map[string]any{mirror.AnnotationGenerationOffset: "3"}
				spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
			}),
			tgt: mod(mwCopy, func(m map[string]any) {
				setAnnotation(m, mirror.AnnotationSourceGeneration, "10")
				setAnnotation(m, mirror.AnnotationSourceGenerationOffset, "3")
			}),
			wantAction: mirror.ActionNone, wantConflict: mirror.ConflictSourceOlder,
		},
		{
			name: "rule 6: a source made again under the name (another UID) with a lower generation: copy updated",
			kind: mw, src: mod(mwSource(), func(m map[string]any) {
				meta(m)["uid"] = "uid-made-again"
				meta(m)["generation"] = int64(1)
				spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
			}),
			tgt:        mwCopy,
			wantAction: mirror.ActionUpdate,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if got := obj.GetAnnotations()[mirror.AnnotationSourceGeneration]; got != "1" {
					t.Errorf("%s = %q, want 1", mirror.AnnotationSourceGeneration, got)
				}
			},
		},
		{
			name: "rule 6: a copy made from another hub's object of that UID and generation: not compared, updated",
			kind: mw, src: mod(mwSource(), func(m map[string]any) {
				meta(m)["generation"] = int64(2)
				spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
			}),
			tgt:        mod(mwCopy, func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubC) }),
			wantAction: mirror.ActionUpdate,
		},
		{
			name: "rule 6: a copy that records no generation: updated",
			kind: mw, src: mod(mwSource(), func(m map[string]any) {
				meta(m)["generation"] = int64(2)
				spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
			}),
			tgt: mod(mwCopy, func(m map[string]any) {
				delete(meta(m)["annotations"].(map[string]any), mirror.AnnotationSourceGeneration)
			}),
			wantAction: mirror.ActionUpdate,
		},
		{
			name: "rule 6: a later generation of the source: updated, the copy records it",
			kind: mw, src: mod(mwSource(), func(m map[string]any) {
				meta(m)["generation"] = int64(8)
				spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
			}),
			tgt:        mwCopy,
			wantAction: mirror.ActionUpdate,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if got := obj.GetAnnotations()[mirror.AnnotationSourceGeneration]; got != "8" {
					t.Errorf("%s = %q, want 8", mirror.AnnotationSourceGeneration, got)
				}
			},
		},

		// Rule 7: a copy.
		{
			name: "rule 5: ManifestWork copy up to date: nothing",
			kind: mw, src: mwSource(), tgt: mwCopy,
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 5: only the source's status and resourceVersion changed: nothing",
			kind: mw,
			src: mod(mwSource(), func(m map[string]any) {
				meta(m)["resourceVersion"] = "2002"
				m["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "True"}}}
			}),
			tgt:        mwCopy,
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 5: only the source's non-mirrored metadata changed: nothing",
			kind: mw,
			src: mod(mwSource(), func(m map[string]any) {
				meta(m)["resourceVersion"] = "2003"
				meta(m)["generation"] = int64(8)
				meta(m)["finalizers"] = []any{}
				meta(m)["managedFields"] = []any{map[string]any{"manager": "x"}}
				setLabel(m, "feature.open-cluster-management.io/x", "y")
				setAnnotation(m, "agent.open-cluster-management.io/x", "y")
			}),
			tgt:        mwCopy,
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 5: target's status and reserved labels changed: nothing",
			kind: mw, src: mwSource(),
			tgt: mod(mwCopy, func(m map[string]any) {
				m["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Applied", "status": "False"}}}
				meta(m)["resourceVersion"] = "501"
				setLabel(m, featureLabel, "available")
				setAnnotation(m, agentAnnotation, "x")
				meta(m)["finalizers"] = []any{"some/finalizer"}
			}),
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 5: source spec changed: update, no conflict",
			kind: mw,
			src: mod(mwSource(), func(m map[string]any) {
				meta(m)["resourceVersion"] = "2010"
				spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
			}),
			tgt:        mwCopy,
			wantAction: mirror.ActionUpdate,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if got := nestedString(obj, "spec", "deleteOption", "propagationPolicy"); got != "Orphan" {
					t.Errorf("spec.deleteOption.propagationPolicy = %q, want Orphan", got)
				}
				if obj.GetResourceVersion() != "500" {
					t.Errorf("resourceVersion = %q, want the target's 500", obj.GetResourceVersion())
				}
				if got := obj.GetAnnotations()[mirror.AnnotationSourceResourceVersion]; got != "2010" {
					t.Errorf("%s = %q, want 2010", mirror.AnnotationSourceResourceVersion, got)
				}
			},
		},
		{
			name: "rule 5: source user label changed: update, no conflict",
			kind: mw, src: mod(mwSource(), func(m map[string]any) { setLabel(m, "app", "demo2") }), tgt: mwCopy,
			wantAction: mirror.ActionUpdate,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if got := obj.GetLabels()["app"]; got != "demo2" {
					t.Errorf("label app = %q, want demo2", got)
				}
			},
		},
		{
			name: "rule 5: copy's spec edited on the target: CopyModified, source wins",
			kind: mw, src: mwSource(),
			tgt:          mod(mwCopy, func(m map[string]any) { spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"} }),
			wantAction:   mirror.ActionUpdate,
			wantConflict: mirror.ConflictCopyModified,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if diff := cmp.Diff(spec(mwSource().Object), obj.Object["spec"]); diff != "" {
					t.Errorf("spec not restored to the source's (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "rule 5: copy's user annotation added on the target: CopyModified",
			kind: mw, src: mwSource(),
			tgt:          mod(mwCopy, func(m map[string]any) { setAnnotation(m, "note", "edited by hand") }),
			wantAction:   mirror.ActionUpdate,
			wantConflict: mirror.ConflictCopyModified,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if _, ok := obj.GetAnnotations()["note"]; ok {
					t.Errorf("annotation added on the target kept")
				}
			},
		},
		{
			name: "rule 5: copy edited on the target and source changed too: CopyModified",
			kind: mw,
			src: mod(mwSource(), func(m map[string]any) {
				spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "SelectivelyOrphan"}
			}),
			tgt:        mod(mwCopy, func(m map[string]any) { spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"} }),
			wantAction: mirror.ActionUpdate, wantConflict: mirror.ConflictCopyModified,
		},
		{
			name: "rule 5: copy made from another hub, content differs: update, no conflict, now from the source",
			kind: mw, src: mwSource(),
			tgt: written(mirror.Desired(mw,
				mod(mwSource(), func(m map[string]any) { spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"} }),
				nil, hubC, nil), "510"),
			wantAction: mirror.ActionUpdate,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if got := obj.GetLabels()[mirror.LabelReplicatedFrom]; got != hubA {
					t.Errorf("replicated-from = %q, want %q", got, hubA)
				}
			},
		},
		{
			name: "rule 5: copy made from another hub and edited since: no conflict (not the same source)",
			kind: mw, src: mwSource(),
			tgt: mod(written(mirror.Desired(mw, mwSource(), nil, hubC, nil), "511"), func(m map[string]any) {
				spec(m)["deleteOption"] = map[string]any{"propagationPolicy": "Orphan"}
			}),
			wantAction: mirror.ActionUpdate,
		},
		{
			name: "rule 5: copy from another hub with the same content (direction change): update of the mark",
			kind: mw, src: mwSource(),
			tgt:        written(mirror.Desired(mw, mwSource(), nil, hubC, nil), "512"),
			wantAction: mirror.ActionUpdate,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if got := obj.GetLabels()[mirror.LabelReplicatedFrom]; got != hubA {
					t.Errorf("replicated-from = %q, want %q", got, hubA)
				}
			},
		},
		{
			name: "rule 5: copy's hash annotation removed, content unchanged: marks refreshed, no conflict",
			kind: mw, src: mwSource(),
			tgt:        mod(mwCopy, func(m map[string]any) { delete(annots(m), mirror.AnnotationContentHash) }),
			wantAction: mirror.ActionUpdate,
		},
		{
			name: "rule 5: a user taint with the target hub's own timeAdded (set by OCM's webhook): nothing",
			kind: mc, src: mcSource(),
			tgt: mod(mcCopy, func(m map[string]any) {
				for _, t := range spec(m)["taints"].([]any) {
					if tm := t.(map[string]any); tm["key"] == "example.com/maintenance" {
						tm["timeAdded"] = "2024-05-05T05:05:05Z"
					}
				}
			}),
			extra:      clusterHubExtra(hubA),
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 5: only the copy's source-resource-version differs: nothing",
			kind: mw, src: mwSource(),
			tgt:        mod(mwCopy, func(m map[string]any) { annots(m)[mirror.AnnotationSourceResourceVersion] = "1" }),
			wantAction: mirror.ActionNone,
		},
		{
			name:       "rule 5: Secret data key removed on the source: update",
			kind:       sec,
			src:        mod(secretSource(), func(m map[string]any) { delete(m["data"].(map[string]any), "ca.crt") }),
			tgt:        written(mirror.Desired(sec, secretSource(), nil, hubA, nil), "9"),
			wantAction: mirror.ActionUpdate,
		},
		{
			name: "rule 5: ManagedCluster copy up to date (target has its own status): nothing",
			kind: mc, src: mcSource(), tgt: mcCopy, extra: clusterHubExtra(hubA),
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 5: ManagedCluster source status, resourceVersion and own hub taint changed: nothing",
			kind: mc,
			src: mod(mcSource(), func(m map[string]any) {
				meta(m)["resourceVersion"] = "1002"
				m["status"] = map[string]any{"conditions": []any{}}
				spec(m)["taints"] = []any{
					map[string]any{"key": "example.com/maintenance", "value": "true", "effect": "NoSelect", "timeAdded": "2024-03-02T00:00:00Z"},
					map[string]any{"key": taintUnreachable, "effect": "NoSelect", "timeAdded": "2024-03-04T00:00:00Z"},
				}
			}),
			tgt: mcCopy, extra: clusterHubExtra(hubA),
			wantAction: mirror.ActionNone,
		},
		{
			// The target hub taints a copy of a cluster that is not connected to it: that hub-owned taint is not
			// mirrored content, so there is nothing to write (rule 5: no write that changes nothing mirrored).
			name: "rule 5: target hub added a hub-owned taint to the ManagedCluster copy: nothing",
			kind: mc, src: mcSource(),
			tgt: mod(mcCopy, func(m map[string]any) {
				spec(m)["taints"] = append(spec(m)["taints"].([]any), map[string]any{"key": taintUnreachable, "effect": "NoSelect", "timeAdded": "2024-04-02T00:00:00Z"})
			}),
			extra:      clusterHubExtra(hubA),
			wantAction: mirror.ActionNone,
		},
		{
			// The copy was written while the target hub had its unreachable taint on it; the hub has since
			// removed the taint. The copy was not edited by anyone: no CopyModified, and nothing to write.
			name: "rule 5: target hub removed its hub-owned taint from a ManagedCluster copy: nothing, no conflict",
			kind: mc, src: mcSource(),
			tgt: func() *unstructured.Unstructured {
				tainted := mod(mcCopy, func(m map[string]any) {
					spec(m)["taints"] = append(spec(m)["taints"].([]any), map[string]any{"key": taintUnreachable, "effect": "NoSelect"})
				})
				// The replicator's write while the taint was there, then the hub removes the taint.
				w := written(mirror.Desired(mc, mcSource(), tainted, hubA, clusterHubExtra(hubA)), "601")
				return mod(w, func(m map[string]any) {
					spec(m)["taints"] = []any{spec(mcCopy.Object)["taints"].([]any)[0]}
				})
			}(),
			extra:      clusterHubExtra(hubA),
			wantAction: mirror.ActionNone,
		},
		{
			name: "rule 5: ManagedCluster copy's user taint edited on the target: CopyModified, target hub taint kept",
			kind: mc, src: mcSource(),
			tgt: mod(mcCopy, func(m map[string]any) {
				spec(m)["taints"] = []any{
					map[string]any{"key": "example.com/hand-made", "effect": "NoSelect"},
					map[string]any{"key": taintUnavailable, "effect": "NoSelect"},
				}
			}),
			extra:        clusterHubExtra(hubA),
			wantAction:   mirror.ActionUpdate,
			wantConflict: mirror.ConflictCopyModified,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if diff := cmp.Diff([]string{taintUnavailable, "example.com/maintenance"}, taintKeys(obj)); diff != "" {
					t.Errorf("taints (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "rule 5: ManagedCluster spec field changed on source (leaseDurationSeconds): update",
			kind: mc,
			src:  mod(mcSource(), func(m map[string]any) { spec(m)["leaseDurationSeconds"] = int64(120) }),
			tgt:  mcCopy, extra: clusterHubExtra(hubA),
			wantAction: mirror.ActionUpdate,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if v := spec(obj.Object)["leaseDurationSeconds"]; v != int64(120) {
					t.Errorf("leaseDurationSeconds = %#v, want int64(120)", v)
				}
				if diff := cmp.Diff(mcCopy.Object["status"], obj.Object["status"]); diff != "" {
					t.Errorf("target status not kept (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "rule 5: ManagedCluster hubAcceptsClient edited on the target: CopyModified",
			kind: mc, src: mcSource(),
			tgt:          mod(mcCopy, func(m map[string]any) { spec(m)["hubAcceptsClient"] = false }),
			extra:        clusterHubExtra(hubA),
			wantAction:   mirror.ActionUpdate,
			wantConflict: mirror.ConflictCopyModified,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if v := spec(obj.Object)["hubAcceptsClient"]; v != true {
					t.Errorf("hubAcceptsClient = %#v, want true", v)
				}
			},
		},
		{
			name: "rule 5: ManagedCluster cluster-hub changed (cluster moved): update of the marks, no conflict",
			kind: mc, src: mcSource(), tgt: mcCopy,
			extra:      map[string]string{mirror.AnnotationClusterHub: hubC, mirror.AnnotationClusterHubSince: "2024-06-01T00:00:00Z"},
			wantAction: mirror.ActionUpdate,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if got := obj.GetAnnotations()[mirror.AnnotationClusterHub]; got != hubC {
					t.Errorf("cluster-hub = %q, want %q", got, hubC)
				}
			},
		},
		{
			name: "rule 5: ManagedCluster without extraAnnotations: cluster-hub annotations removed",
			kind: mc, src: mcSource(), tgt: mcCopy, extra: nil,
			wantAction: mirror.ActionUpdate,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				for _, a := range []string{mirror.AnnotationClusterHub, mirror.AnnotationClusterHubSince} {
					if v, ok := obj.GetAnnotations()[a]; ok {
						t.Errorf("annotation %s = %q kept, want removed", a, v)
					}
				}
			},
		},
		{
			name: "rule 5: ManagedCluster feature label and agent annotation on the target: kept, nothing to do",
			kind: mc, src: mcSource(),
			tgt: mod(mcCopy, func(m map[string]any) {
				setLabel(m, "feature.open-cluster-management.io/addon-other", "unreachable")
				setAnnotation(m, "agent.open-cluster-management.io/zone", "b")
			}),
			extra:      clusterHubExtra(hubA),
			wantAction: mirror.ActionNone,
		},
		{
			name:       "rule 5: ManagedCluster user label removed on source: update, target's feature label kept",
			kind:       mc,
			src:        mod(mcSource(), func(m map[string]any) { delete(labels(m), "env") }),
			tgt:        mod(mcCopy, func(m map[string]any) { setLabel(m, "feature.open-cluster-management.io/addon-other", "unreachable") }),
			extra:      clusterHubExtra(hubA),
			wantAction: mirror.ActionUpdate,
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				l := obj.GetLabels()
				if _, ok := l["env"]; ok {
					t.Errorf("label env kept, want removed")
				}
				if l["feature.open-cluster-management.io/addon-other"] != "unreachable" {
					t.Errorf("target's feature label not kept: %v", l)
				}
				if _, ok := l[featureLabel]; ok {
					t.Errorf("source's feature label %s copied", featureLabel)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			source, target := tt.source, tt.target
			if source == "" {
				source = hubA
			}
			if target == "" {
				target = hubB
			}
			d := mirror.Decide(tt.kind, tt.src, tt.tgt, "", source, target, tt.deleted, tt.extra)
			if d.Action != tt.wantAction {
				t.Errorf("Action = %s, want %s", d.Action, tt.wantAction)
			}
			if d.Conflict != tt.wantConflict {
				t.Errorf("Conflict = %q, want %q", d.Conflict, tt.wantConflict)
			}
			if d.Adopted != tt.wantAdopted {
				t.Errorf("Adopted = %v, want %v", d.Adopted, tt.wantAdopted)
			}
			switch d.Action {
			case mirror.ActionCreate, mirror.ActionUpdate:
				if d.Object == nil {
					t.Fatalf("Action %s without an Object", d.Action)
				}
				var tgt *unstructured.Unstructured
				if d.Action == mirror.ActionUpdate {
					tgt = tt.tgt
				}
				want := mirror.Desired(tt.kind, tt.src, tgt, source, tt.extra)
				if tt.wantOffset != "" {
					// An adopted original keeps a lineage above its copy's (withAdoptedLineage).
					want.SetAnnotations(withEntry(want.GetAnnotations(), mirror.AnnotationGenerationOffset, tt.wantOffset))
				}
				if diff := cmp.Diff(want.Object, d.Object.Object); diff != "" {
					t.Errorf("Object is not Desired (-want +got):\n%s", diff)
				}
				if d.Action == mirror.ActionUpdate && d.Object.GetResourceVersion() != tt.tgt.GetResourceVersion() {
					t.Errorf("update Object resourceVersion = %q, want the target's %q", d.Object.GetResourceVersion(), tt.tgt.GetResourceVersion())
				}
				if tt.check != nil {
					tt.check(t, d.Object)
				}
			default:
				if d.Object != nil {
					t.Errorf("Action %s with an Object, want nil", d.Action)
				}
			}
			// The caches hold copies without their mirrored fields (WithoutContent): Decide must decide the same
			// from that form and the content hash.
			if tt.tgt != nil && mirror.IsCopy(tt.tgt) {
				trimmed, hash := mirror.WithoutContent(tt.kind, tt.tgt)
				for _, f := range tt.kind.Fields {
					if _, kept := trimmed.Object[f]; kept {
						t.Fatalf("WithoutContent kept mirrored field %q", f)
					}
				}
				got := mirror.Decide(tt.kind, tt.src, trimmed, hash, source, target, tt.deleted, tt.extra)
				if got.Action != d.Action || got.Conflict != d.Conflict || got.Adopted != d.Adopted {
					t.Errorf("Decide on the copy without content = {%s, %q, %v}, on the whole copy {%s, %q, %v}",
						got.Action, got.Conflict, got.Adopted, d.Action, d.Conflict, d.Adopted)
				}
				if d.Object != nil && tt.kind.Name != failoverv1alpha1.KindManagedCluster {
					if diff := cmp.Diff(d.Object.Object, got.Object.Object); diff != "" {
						t.Errorf("Object from the copy without content differs (-whole +trimmed):\n%s", diff)
					}
				}
			}
		})
	}
}

// TestDecideConverges checks that after the replicator writes Decide's Object, the next Decide has nothing
// left to do (for every kind of write Decide asks for).
func TestDecideConverges(t *testing.T) {
	mc := kind(t, failoverv1alpha1.KindManagedCluster)
	mw := kind(t, failoverv1alpha1.KindManifestWork)
	cm := kind(t, failoverv1alpha1.KindConfigMap)
	tests := []struct {
		name     string
		kind     mirror.Kind
		src, tgt *unstructured.Unstructured
		extra    map[string]string
	}{
		{"ManifestWork create", mw, mwSource(), nil, nil},
		{"ManifestWork update", mw, mwSource(), written(mirror.Desired(mw, mod(mwSource(), func(m map[string]any) { delete(m, "spec") }), nil, hubA, nil), "3"), nil},
		{"ManagedCluster create", mc, mcSource(), nil, clusterHubExtra(hubA)},
		{"ManagedCluster outdated copy with target hub taint", mc, mcSource(), mcTarget(), clusterHubExtra(hubA)},
		{"ManagedCluster adoption", mc, mod(mcSource(), func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubB) }),
			mod(mcTarget(), func(m map[string]any) { delete(labels(m), mirror.LabelReplicatedFrom) }), clusterHubExtra(hubA)},
		{"ConfigMap create", cm, configMapSource(), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mirror.Decide(tt.kind, tt.src, tt.tgt, "", hubA, hubB, nil, tt.extra)
			if d.Action != mirror.ActionCreate && d.Action != mirror.ActionUpdate {
				t.Fatalf("first Decide = %s, want a write", d.Action)
			}
			next := mirror.Decide(tt.kind, tt.src, written(d.Object, "9000"), "", hubA, hubB, nil, tt.extra)
			if next.Action != mirror.ActionNone || next.Conflict != mirror.ConflictNone {
				t.Errorf("Decide after writing its Object = {%s, %q}, want {None, \"\"}", next.Action, next.Conflict)
			}
		})
	}
}

func nestedString(obj *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(obj.Object, path...)
	return s
}

// ---------------------------------------------------------------------------------------------------------
// SourceCleanup, IsCopy

func TestSourceCleanup(t *testing.T) {
	withAnnotations := func(a map[string]any) *unstructured.Unstructured {
		return mod(mcSource(), func(m map[string]any) {
			if a == nil {
				delete(meta(m), "annotations")
			} else {
				meta(m)["annotations"] = a
			}
		})
	}
	tests := []struct {
		name            string
		obj             *unstructured.Unstructured
		wantNil         bool
		wantAnnotations map[string]string
	}{
		{name: "no annotations", obj: withAnnotations(nil), wantNil: true},
		{name: "other annotations only", obj: withAnnotations(map[string]any{"a": "b", mirror.AnnotationContentHash: "x"}), wantNil: true},
		{
			name:            "cluster-hub only: kept as moved-from",
			obj:             withAnnotations(map[string]any{"a": "b", mirror.AnnotationClusterHub: hubB}),
			wantAnnotations: map[string]string{"a": "b", mirror.AnnotationMovedFrom: hubB},
		},
		{
			name:            "cluster-hub naming the source itself: no moved-from",
			obj:             withAnnotations(map[string]any{"a": "b", mirror.AnnotationClusterHub: hubA}),
			wantAnnotations: map[string]string{"a": "b"},
		},
		{
			name:            "cluster-hub-since only",
			obj:             withAnnotations(map[string]any{"a": "b", mirror.AnnotationClusterHubSince: since}),
			wantAnnotations: map[string]string{"a": "b"},
		},
		{
			name: "both, other failover annotations kept",
			obj: withAnnotations(map[string]any{
				"a": "b", mirror.AnnotationClusterHub: hubB, mirror.AnnotationClusterHubSince: since,
				mirror.AnnotationContentHash: "h",
			}),
			wantAnnotations: map[string]string{"a": "b", mirror.AnnotationContentHash: "h", mirror.AnnotationMovedFrom: hubB},
		},
		{
			name:            "both and nothing else",
			obj:             withAnnotations(map[string]any{mirror.AnnotationClusterHub: hubB, mirror.AnnotationClusterHubSince: since}),
			wantAnnotations: map[string]string{mirror.AnnotationMovedFrom: hubB},
		},
		{
			name:            "empty values still removed",
			obj:             withAnnotations(map[string]any{mirror.AnnotationClusterHub: ""}),
			wantAnnotations: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.obj.DeepCopy()
			got := mirror.SourceCleanup(tt.obj, hubA)
			if diff := cmp.Diff(before.Object, tt.obj.Object); diff != "" {
				t.Errorf("SourceCleanup modified its input (-before +after):\n%s", diff)
			}
			if tt.wantNil {
				if got != nil {
					t.Errorf("SourceCleanup = %v, want nil", got.Object)
				}
				return
			}
			if got == nil {
				t.Fatal("SourceCleanup = nil, want an object")
			}
			gotAnn := got.GetAnnotations()
			if gotAnn == nil {
				gotAnn = map[string]string{}
			}
			if diff := cmp.Diff(tt.wantAnnotations, gotAnn); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			// Everything else is the input's (resourceVersion included, for an optimistic update).
			rest, restBefore := runtime.DeepCopyJSON(got.Object), runtime.DeepCopyJSON(before.Object)
			delete(meta(rest), "annotations")
			delete(meta(restBefore), "annotations")
			if diff := cmp.Diff(restBefore, rest); diff != "" {
				t.Errorf("SourceCleanup changed more than the annotations (-input +got):\n%s", diff)
			}
			scribble(got.Object)
			if diff := cmp.Diff(before.Object, tt.obj.Object); diff != "" {
				t.Errorf("SourceCleanup's result shares memory with its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestCopiesMark(t *testing.T) {
	original := mod(mwSource(), func(m map[string]any) { meta(m)["uid"] = "uid-1" })
	marked := mod(original, func(m map[string]any) { setAnnotation(m, mirror.AnnotationHasCopies, hubB) })
	cp := mod(original, func(m map[string]any) { setLabel(m, mirror.LabelReplicatedFrom, hubA) })
	markedCopy := mod(cp, func(m map[string]any) { setAnnotation(m, mirror.AnnotationHasCopies, hubB) })
	for _, tc := range []struct {
		name      string
		obj       *unstructured.Unstructured
		holding   []string
		wantOn    []string
		wantPatch string // the annotation value the patch sets; "" for no patch
		onB, onC  bool
	}{
		{"unmarked original, nobody holds a copy yet", original, nil, nil, "", false, false},
		{"unmarked original, hub-c holds a copy now", original, []string{hubC}, nil, hubC, false, false},
		{"marked original, hub-b again", marked, []string{hubB}, []string{hubB}, "", true, false},
		{"marked original, hub-c too: sorted union", marked, []string{hubC, hubB}, []string{hubB}, hubB + "," + hubC, true, false},
		{"copy: never marked", cp, []string{hubC}, nil, "", false, false},
		{"copy with a stale mark: not an original", markedCopy, []string{hubC}, nil, "", false, false},
		{"nil", nil, []string{hubC}, nil, "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mirror.CopiesOn(tc.obj); !cmp.Equal(got, tc.wantOn) {
				t.Errorf("CopiesOn = %q, want %q", got, tc.wantOn)
			}
			if tc.obj != nil {
				if mirror.HasCopyOn(tc.obj, hubB) != tc.onB || mirror.HasCopyOn(tc.obj, hubC) != tc.onC {
					t.Errorf("HasCopyOn(hub-b, hub-c) = %v, %v; want %v, %v", mirror.HasCopyOn(tc.obj, hubB), mirror.HasCopyOn(tc.obj, hubC), tc.onB, tc.onC)
				}
			}
			patch := mirror.CopiesPatch(tc.obj, tc.holding)
			if tc.wantPatch == "" {
				if patch != nil {
					t.Errorf("CopiesPatch = %s, want none", patch)
				}
				return
			}
			var got map[string]any
			if err := json.Unmarshal(patch, &got); err != nil {
				t.Fatalf("CopiesPatch %q is not JSON: %v", patch, err)
			}
			want := map[string]any{"metadata": map[string]any{"uid": "uid-1", "annotations": map[string]any{mirror.AnnotationHasCopies: tc.wantPatch}}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("CopiesPatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsCopy(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]any
		want   bool
	}{
		{"no labels", nil, false},
		{"other labels", map[string]any{"app": "x", "failover.open-cluster-management.io/other": hubA}, false},
		{"replicated-from", map[string]any{mirror.LabelReplicatedFrom: hubA}, true},
		{"replicated-from empty value", map[string]any{mirror.LabelReplicatedFrom: ""}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := u(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "namespace": "y"}})
			if tt.labels != nil {
				meta(obj.Object)["labels"] = tt.labels
			}
			if got := mirror.IsCopy(obj); got != tt.want {
				t.Errorf("IsCopy(labels %v) = %v, want %v", tt.labels, got, tt.want)
			}
		})
	}
}

func TestStepPatch(t *testing.T) {
	withSteps := func(inStep, behind string) *unstructured.Unstructured {
		return mod(mcSource(), func(m map[string]any) {
			setAnnotation(m, mirror.AnnotationHubsInStep, inStep)
			setAnnotation(m, mirror.AnnotationHubsBehind, behind)
		})
	}
	ready := func(hub string) mirror.HubStep { return mirror.HubStep{Hub: hub, Ready: true} }
	for _, tc := range []struct {
		name       string
		src        *unstructured.Unstructured
		steps      []mirror.HubStep
		wantPatch  bool
		wantInStep string
		wantBehind string
		confirm    bool
	}{
		{"no annotations yet, both in step", mcSource(), []mirror.HubStep{ready(hubB), ready(hubC)}, true, hubB + "," + hubC, "", false},
		{"already published: no write", withSteps(hubB+","+hubC, ""), []mirror.HubStep{ready(hubB), ready(hubC)}, false, "", "", false},
		{"already published, confirmation due: written again", withSteps(hubB+","+hubC, ""), []mirror.HubStep{ready(hubB), ready(hubC)}, true, hubB + "," + hubC, "", true},
		{"unreachable hub is behind", withSteps(hubB+","+hubC, ""), []mirror.HubStep{ready(hubB), {Hub: hubC}}, true, hubB, hubC, false},
		{"ready hub with objects pending is behind", withSteps(hubB, hubC), []mirror.HubStep{{Hub: hubB, Ready: true, Pending: true}, {Hub: hubC}}, true, "", hubB + "," + hubC, false},
		{"caught up again", withSteps("", hubB), []mirror.HubStep{ready(hubB)}, true, hubB, "", false},
		{"only one list present: written", mod(mcSource(), func(m map[string]any) { setAnnotation(m, mirror.AnnotationHubsInStep, hubB) }),
			[]mirror.HubStep{ready(hubB)}, true, hubB, "", false},
		{"no other hub: both empty", mcSource(), nil, true, "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const report = "writer=fleet,time=2026-12-05T08:00:00Z,every=5m0s"
			patch := mirror.StepPatch(tc.src, tc.steps, report, tc.confirm)
			if (patch != nil) != tc.wantPatch {
				t.Fatalf("StepPatch = %s, want a patch: %v", patch, tc.wantPatch)
			}
			if patch == nil {
				return
			}
			var got map[string]any
			if err := json.Unmarshal(patch, &got); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"metadata": map[string]any{"annotations": map[string]any{
				mirror.AnnotationHubsInStep: tc.wantInStep, mirror.AnnotationHubsBehind: tc.wantBehind, mirror.AnnotationHubsReported: report}}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
}
