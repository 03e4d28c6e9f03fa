package fence

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

func TestFencedCustomKinds(t *testing.T) {
	custom := func(resource string, namespaced bool, scope failoverv1alpha1.CustomKindScope, selector string) mirror.Kind {
		return mirror.CustomKindOf(failoverv1alpha1.CustomKind{Group: "example.com", Version: "v1", Resource: resource,
			Namespaced: namespaced, Scope: scope, LabelSelector: selector})
	}
	kinds := append(slices.Clone(mirror.Kinds),
		custom("widgets", true, failoverv1alpha1.ScopeClusterByNamespace, ""),
		custom("gadgets", true, failoverv1alpha1.ScopeClusterByNamespaceIfCluster, ""),
		custom("selected", true, failoverv1alpha1.ScopeClusterByNamespace, "replicate"),
		custom("shared", true, failoverv1alpha1.ScopeHubWide, ""),
		custom("clusterwide", false, failoverv1alpha1.ScopeClusterByName, ""),
	)
	var got []string
	for _, k := range FencedCustomKinds(kinds) {
		got = append(got, string(k.Name))
	}
	// Built-in kinds are fenced by their own rules; a hub-wide or cluster-scoped custom kind has no cluster
	// namespace to fence; one with a label selector cannot be told from the objects it does not select.
	if diff := cmp.Diff([]string{"widgets.example.com", "gadgets.example.com"}, got); diff != "" {
		t.Errorf("FencedCustomKinds (-want +got):\n%s", diff)
	}
}

func TestPolicyFencesCustomKinds(t *testing.T) {
	widgets := mirror.CustomKindOf(failoverv1alpha1.CustomKind{Group: "example.com", Version: "v1", Resource: "widgets", Namespaced: true,
		Scope: failoverv1alpha1.ScopeClusterByNamespace, Fields: []string{"spec", "data"}, GeneratedLabels: []string{"example.com/generated-by"}})
	without, err := Policy("hub-a", "system:serviceaccount:ns:replicator", mirror.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	with, err := Policy("hub-a", "system:serviceaccount:ns:replicator", append(slices.Clone(mirror.Kinds), widgets))
	if err != nil {
		t.Fatal(err)
	}
	var before, after []string
	for _, r := range without.Spec.MatchConstraints.ResourceRules {
		before = append(before, r.APIGroups[0]+"/"+strings.Join(r.Resources, ","))
	}
	for _, r := range with.Spec.MatchConstraints.ResourceRules {
		after = append(after, r.APIGroups[0]+"/"+strings.Join(r.Resources, ","))
	}
	if diff := cmp.Diff(append(before, "example.com/widgets"), after); diff != "" {
		t.Errorf("resource rules with a custom kind (-want +got):\n%s", diff)
	}
	vars := map[string]string{}
	for _, v := range with.Spec.Variables {
		vars[v.Name] = v.Expression
	}
	for name, want := range map[string]string{
		"generatedCustom": `"example.com/generated-by" in variables.newLabels`,
		"changes":         `(request.resource.group == 'example.com' && request.resource.resource == 'widgets') ? (object[?'spec'] != oldObject[?'spec'] || object[?'data'] != oldObject[?'data'])`,
		"fencedKind":      "!variables.generatedCustom",
	} {
		if !strings.Contains(vars[name], want) {
			t.Errorf("variable %s = %s, want it to contain %s", name, vars[name], want)
		}
	}
	for _, v := range without.Spec.Variables {
		if v.Name == "generatedCustom" && v.Expression != "false" {
			t.Errorf("without custom kinds, generatedCustom = %s, want false", v.Expression)
		}
	}
}

// The built-in kinds of a cluster's namespace are fenced only when they are replicated; the ManagedCluster
// always.
func TestPolicyFencesReplicatedKindsOnly(t *testing.T) {
	work, _ := mirror.KindByName(failoverv1alpha1.KindManifestWork)
	secret, _ := mirror.KindByName(failoverv1alpha1.KindSecret)
	policy, err := Policy("hub-a", "system:serviceaccount:ns:replicator", []mirror.Kind{work, secret})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range policy.Spec.MatchConstraints.ResourceRules {
		got = append(got, r.APIGroups[0]+"/"+strings.Join(r.Resources, ","))
	}
	want := []string{"cluster.open-cluster-management.io/managedclusters", "work.open-cluster-management.io/manifestworks", "/secrets"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resource rules (-want +got):\n%s", diff)
	}
}
