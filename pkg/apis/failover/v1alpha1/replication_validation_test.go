package v1alpha1

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// replicationHubs returns one valid ReplicationHub per name, whose kubeconfig Secret is "<name>-kubeconfig".
func replicationHubs(names ...string) []ReplicationHub {
	out := make([]ReplicationHub, 0, len(names))
	for _, n := range names {
		out = append(out, ReplicationHub{Name: n, KubeconfigSecret: KubeconfigSecretReference{Name: n + "-kubeconfig"}})
	}
	return out
}

// numberedHubs returns n valid hubs named hub-0 … hub-<n-1>.
func numberedHubs(n int) []ReplicationHub {
	names := make([]string, 0, n)
	for i := range n {
		names = append(names, fmt.Sprintf("hub-%d", i))
	}
	return replicationHubs(names...)
}

// withHub returns the two valid hubs "primary" and "hub-b" followed by extra.
func withHub(extra ReplicationHub) []ReplicationHub {
	return append(replicationHubs("primary", "hub-b"), extra)
}

func TestValidateReplicationConfig(t *testing.T) {
	cases := []struct {
		name string
		spec ReplicationConfigSpec
		want []fieldErr
	}{
		{name: "two hubs", spec: ReplicationConfigSpec{Hubs: replicationHubs("primary", "hub-b")}},
		{
			name: "full valid spec",
			spec: ReplicationConfigSpec{
				Hubs: []ReplicationHub{
					{Name: "primary", KubeconfigSecret: KubeconfigSecretReference{Name: "hub-primary-kubeconfig", Key: "kubeconfig"}},
					{Name: "hub-b", KubeconfigSecret: KubeconfigSecretReference{Name: "hub.b.kubeconfig", Key: "hub_b.kubeconfig-1"}},
					{Name: "0", KubeconfigSecret: KubeconfigSecretReference{Name: "0"}},
				},
				ClusterSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{"cluster.open-cluster-management.io/clusterset": "prod"},
					MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"eu", "us"}},
						{Key: "decommissioned", Operator: metav1.LabelSelectorOpDoesNotExist},
					},
				},
				Kinds: []ReplicatedKind{KindManifestWork, KindManagedCluster, KindSecret},
			},
		},
		{name: "the most hubs allowed", spec: ReplicationConfigSpec{Hubs: numberedHubs(MaxReplicationHubs)}},
		{name: "every kind listed", spec: ReplicationConfigSpec{Hubs: numberedHubs(2), Kinds: AllReplicatedKinds}},
		{name: "empty selector", spec: ReplicationConfigSpec{Hubs: numberedHubs(2), ClusterSelector: &metav1.LabelSelector{}}},
		{
			name: "no hubs",
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.hubs"}},
		},
		{
			name: "a single hub",
			spec: ReplicationConfigSpec{Hubs: replicationHubs("primary")},
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.hubs"}},
		},
		{
			name: "one hub too many",
			spec: ReplicationConfigSpec{Hubs: numberedHubs(MaxReplicationHubs + 1)},
			want: []fieldErr{{field.ErrorTypeTooMany, "spec.hubs"}},
		},
		{
			name: "invalid hub names",
			spec: ReplicationConfigSpec{Hubs: []ReplicationHub{
				{Name: "Hub-B", KubeconfigSecret: KubeconfigSecretReference{Name: "s"}},
				{Name: "hub.c", KubeconfigSecret: KubeconfigSecretReference{Name: "s"}},
				{Name: strings.Repeat("a", 64), KubeconfigSecret: KubeconfigSecretReference{Name: "s"}},
				{Name: "-x", KubeconfigSecret: KubeconfigSecretReference{Name: "s"}},
				{Name: "hub_d", KubeconfigSecret: KubeconfigSecretReference{Name: "s"}},
			}},
			want: []fieldErr{
				{field.ErrorTypeInvalid, "spec.hubs[0].name"},
				{field.ErrorTypeInvalid, "spec.hubs[1].name"},
				{field.ErrorTypeInvalid, "spec.hubs[2].name"},
				{field.ErrorTypeInvalid, "spec.hubs[3].name"},
				{field.ErrorTypeInvalid, "spec.hubs[4].name"},
			},
		},
		{
			name: "a 63-character hub name",
			spec: ReplicationConfigSpec{Hubs: replicationHubs("primary", strings.Repeat("a", 63))},
		},
		{
			name: "duplicate hub names",
			spec: ReplicationConfigSpec{Hubs: replicationHubs("primary", "hub-b", "primary")},
			want: []fieldErr{{field.ErrorTypeDuplicate, "spec.hubs[2].name"}},
		},
		{
			name: "an invalid name repeated is invalid once, then a duplicate",
			spec: ReplicationConfigSpec{Hubs: []ReplicationHub{
				{Name: "Hub-B", KubeconfigSecret: KubeconfigSecretReference{Name: "hub-b-kubeconfig"}},
				{Name: "Hub-B", KubeconfigSecret: KubeconfigSecretReference{Name: "hub-b-kubeconfig"}},
			}},
			want: []fieldErr{
				{field.ErrorTypeInvalid, "spec.hubs[0].name"},
				{field.ErrorTypeDuplicate, "spec.hubs[1].name"},
			},
		},
		{
			name: "missing name and Secret name",
			spec: ReplicationConfigSpec{Hubs: withHub(ReplicationHub{})},
			want: []fieldErr{
				{field.ErrorTypeRequired, "spec.hubs[2].name"},
				{field.ErrorTypeRequired, "spec.hubs[2].kubeconfigSecret.name"},
			},
		},
		{
			name: "two hubs may share a Secret",
			spec: ReplicationConfigSpec{Hubs: []ReplicationHub{
				{Name: "primary", KubeconfigSecret: KubeconfigSecretReference{Name: "hubs", Key: "primary"}},
				{Name: "hub-b", KubeconfigSecret: KubeconfigSecretReference{Name: "hubs", Key: "hub-b"}},
			}},
		},
		{
			name: "invalid Secret names",
			spec: ReplicationConfigSpec{Hubs: append(numberedHubs(2),
				ReplicationHub{Name: "c", KubeconfigSecret: KubeconfigSecretReference{Name: "Hub_C"}},
				ReplicationHub{Name: "d", KubeconfigSecret: KubeconfigSecretReference{Name: "a..b"}},
				ReplicationHub{Name: "e", KubeconfigSecret: KubeconfigSecretReference{Name: strings.Repeat("a", 254)}},
			)},
			want: []fieldErr{
				{field.ErrorTypeInvalid, "spec.hubs[2].kubeconfigSecret.name"},
				{field.ErrorTypeInvalid, "spec.hubs[3].kubeconfigSecret.name"},
				{field.ErrorTypeInvalid, "spec.hubs[4].kubeconfigSecret.name"},
			},
		},
		{
			name: "invalid Secret keys",
			spec: ReplicationConfigSpec{Hubs: append(numberedHubs(2),
				ReplicationHub{Name: "c", KubeconfigSecret: KubeconfigSecretReference{Name: "c", Key: "hub/kubeconfig"}},
				ReplicationHub{Name: "d", KubeconfigSecret: KubeconfigSecretReference{Name: "d", Key: ".."}},
				ReplicationHub{Name: "e", KubeconfigSecret: KubeconfigSecretReference{Name: "e", Key: "..kubeconfig"}},
				ReplicationHub{Name: "f", KubeconfigSecret: KubeconfigSecretReference{Name: "f", Key: strings.Repeat("k", 254)}},
			)},
			want: []fieldErr{
				{field.ErrorTypeInvalid, "spec.hubs[2].kubeconfigSecret.key"},
				{field.ErrorTypeInvalid, "spec.hubs[3].kubeconfigSecret.key"},
				{field.ErrorTypeInvalid, "spec.hubs[4].kubeconfigSecret.key"},
				{field.ErrorTypeInvalid, "spec.hubs[5].kubeconfigSecret.key"},
			},
		},
		{
			name: "a hub with every field wrong",
			spec: ReplicationConfigSpec{Hubs: withHub(ReplicationHub{Name: "Hub C", KubeconfigSecret: KubeconfigSecretReference{Name: "-", Key: "a b"}})},
			want: []fieldErr{
				{field.ErrorTypeInvalid, "spec.hubs[2].name"},
				{field.ErrorTypeInvalid, "spec.hubs[2].kubeconfigSecret.name"},
				{field.ErrorTypeInvalid, "spec.hubs[2].kubeconfigSecret.key"},
			},
		},
		{
			name: "selector with an unknown operator",
			spec: ReplicationConfigSpec{Hubs: numberedHubs(2), ClusterSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: "Near", Values: []string{"eu"}}},
			}},
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.clusterSelector"}},
		},
		{
			name: "selector In without values",
			spec: ReplicationConfigSpec{Hubs: numberedHubs(2), ClusterSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: metav1.LabelSelectorOpIn}},
			}},
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.clusterSelector"}},
		},
		{
			name: "selector with an invalid label key",
			spec: ReplicationConfigSpec{Hubs: numberedHubs(2), ClusterSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"not a key": "x"},
			}},
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.clusterSelector"}},
		},
		{
			name: "unknown kinds",
			spec: ReplicationConfigSpec{Hubs: numberedHubs(2), Kinds: []ReplicatedKind{KindPlacement, "Pod", "manifestwork"}},
			want: []fieldErr{
				{field.ErrorTypeNotSupported, "spec.kinds[1]"},
				{field.ErrorTypeNotSupported, "spec.kinds[2]"},
			},
		},
		{
			name: "duplicate kinds",
			spec: ReplicationConfigSpec{Hubs: numberedHubs(2), Kinds: []ReplicatedKind{KindSecret, KindConfigMap, KindSecret}},
			want: []fieldErr{{field.ErrorTypeDuplicate, "spec.kinds[2]"}},
		},
		{
			name: "every violation is reported, in field order",
			spec: ReplicationConfigSpec{
				Hubs: []ReplicationHub{{Name: "A"}},
				ClusterSelector: &metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpExists, Values: []string{"v"}}},
				},
				Kinds: []ReplicatedKind{"Pod"},
			},
			want: []fieldErr{
				{field.ErrorTypeInvalid, "spec.hubs"},
				{field.ErrorTypeInvalid, "spec.hubs[0].name"},
				{field.ErrorTypeRequired, "spec.hubs[0].kubeconfigSecret.name"},
				{field.ErrorTypeInvalid, "spec.clusterSelector"},
				{field.ErrorTypeNotSupported, "spec.kinds[0]"},
			},
		},
		{
			name: "valid custom kinds",
			spec: ReplicationConfigSpec{
				Hubs: replicationHubs("primary", "hub-b"),
				CustomKinds: []CustomKind{
					{Group: "example.com", Version: "v1beta1", Resource: "widgets", Namespaced: true, Scope: ScopeClusterByNamespace,
						Fields: []string{"spec", "data_1"}, LabelSelector: "app in (a,b),!skip", GeneratedLabels: []string{"example.com/generated-by"}},
					{Version: "v1", Resource: "serviceaccounts", Namespaced: true, Scope: ScopeClusterByNamespaceIfCluster},
					{Group: "example.com", Version: "v1", Resource: "clusterwidgets", Scope: ScopeClusterByName},
					{Group: "example.com", Version: "v1", Resource: "gadgets", Scope: ScopeHubWide},
				},
			},
		},
		{
			name: "invalid custom kinds",
			spec: ReplicationConfigSpec{
				Hubs: replicationHubs("primary", "hub-b"),
				CustomKinds: []CustomKind{
					{Group: "Example.com", Version: "v1", Resource: "Widgets", Scope: "Everywhere"},
					{Group: "example.com", Resource: "widgets", Scope: ScopeClusterByName, Namespaced: true,
						Fields: []string{"status", "spec", "spec", "a.b"}, LabelSelector: "a in (", GeneratedLabels: []string{"-x"}},
					{Group: "example.com", Version: "v1", Resource: "widgets", Scope: ScopeClusterByNamespace},
					{Group: "example.com", Version: "v1"},
				},
			},
			want: []fieldErr{
				{field.ErrorTypeInvalid, "spec.customKinds[0].group"},
				{field.ErrorTypeInvalid, "spec.customKinds[0].resource"},
				{field.ErrorTypeNotSupported, "spec.customKinds[0].scope"},
				{field.ErrorTypeRequired, "spec.customKinds[1].version"},
				{field.ErrorTypeInvalid, "spec.customKinds[1].scope"},
				{field.ErrorTypeInvalid, "spec.customKinds[1].fields[0]"},
				{field.ErrorTypeDuplicate, "spec.customKinds[1].fields[2]"},
				{field.ErrorTypeInvalid, "spec.customKinds[1].fields[3]"},
				{field.ErrorTypeInvalid, "spec.customKinds[1].labelSelector"},
				{field.ErrorTypeInvalid, "spec.customKinds[1].generatedLabels[0]"},
				{field.ErrorTypeDuplicate, "spec.customKinds[2]"},
				{field.ErrorTypeInvalid, "spec.customKinds[2].scope"},
				{field.ErrorTypeRequired, "spec.customKinds[3].resource"},
				{field.ErrorTypeRequired, "spec.customKinds[3].scope"},
			},
		},
		{
			name: "delete brake at its bounds",
			spec: ReplicationConfigSpec{Hubs: numberedHubs(2), DeleteBrake: &DeleteBrake{Percent: ptr.To[int32](100), Minimum: ptr.To[int32](MaxDeleteBrakeMinimum)}},
		},
		{
			name: "delete brake off its bounds",
			spec: ReplicationConfigSpec{Hubs: numberedHubs(2), DeleteBrake: &DeleteBrake{Percent: ptr.To[int32](0), Minimum: ptr.To[int32](-1)}},
			want: []fieldErr{
				{field.ErrorTypeInvalid, "spec.deleteBrake.percent"},
				{field.ErrorTypeInvalid, "spec.deleteBrake.minimum"},
			},
		},
		{
			name: "delete brake percent over 100",
			spec: ReplicationConfigSpec{Hubs: numberedHubs(2), DeleteBrake: &DeleteBrake{Percent: ptr.To[int32](101)}},
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.deleteBrake.percent"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateReplicationConfig(&ReplicationConfig{Spec: tc.spec})
			var got []fieldErr
			for _, e := range errs {
				got = append(got, fieldErr{e.Type, e.Field})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nall: %v", diff, errs.ToAggregate())
			}
		})
	}
}

func TestValidateReplicationConfigMessages(t *testing.T) {
	cases := []struct {
		name string
		spec ReplicationConfigSpec
		want []string
	}{
		{
			name: "hub count and names",
			spec: ReplicationConfigSpec{Hubs: []ReplicationHub{{Name: "Hub-B", KubeconfigSecret: KubeconfigSecretReference{Name: "Hub_B"}}}},
			want: []string{
				`spec.hubs: Invalid value: 1: at least 2 hubs are required`,
				`spec.hubs[0].name: Invalid value: "Hub-B": a lowercase RFC 1123 label`,
				`spec.hubs[0].kubeconfigSecret.name: Invalid value: "Hub_B": a lowercase RFC 1123 subdomain`,
			},
		},
		{
			name: "too many hubs",
			spec: ReplicationConfigSpec{Hubs: numberedHubs(9)},
			want: []string{`spec.hubs: Too many: 9: must have at most 8 items`},
		},
		{
			name: "duplicates and kinds",
			spec: ReplicationConfigSpec{
				Hubs:  replicationHubs("primary", "primary"),
				Kinds: []ReplicatedKind{"Pod", KindSecret, KindSecret},
			},
			want: []string{
				`spec.hubs[1].name: Duplicate value: "primary"`,
				`spec.kinds[0]: Unsupported value: "Pod": supported values: "ManagedCluster", "ManagedClusterSet", ` +
					`"ManagedClusterSetBinding", "Placement", "ManifestWork", "ManagedClusterAddOn", "Secret", "ConfigMap"`,
				`spec.kinds[2]: Duplicate value: "Secret"`,
			},
		},
		{
			name: "key and selector",
			spec: ReplicationConfigSpec{
				Hubs: withHub(ReplicationHub{Name: "c", KubeconfigSecret: KubeconfigSecretReference{Name: "c", Key: "a/b"}}),
				ClusterSelector: &metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: "Near"}},
				},
			},
			want: []string{
				`spec.hubs[2].kubeconfigSecret.key: Invalid value: "a/b": a valid config key must consist of alphanumeric characters, '-', '_' or '.'`,
				`spec.clusterSelector: Invalid value:`,
				`"Near" is not a valid label selector operator`,
			},
		}, {
			name: "custom kinds",
			spec: ReplicationConfigSpec{
				Hubs: replicationHubs("primary", "hub-b"),
				CustomKinds: []CustomKind{
					{Group: "example.com", Version: "v1", Resource: "widgets", Scope: ScopeClusterByNamespace, Fields: []string{"metadata"}},
					{Group: "example.com", Version: "v1", Resource: "widgets", Namespaced: true, Scope: ScopeClusterByName},
				},
			},
			want: []string{
				`spec.customKinds[0].scope: Invalid value: "ClusterByNamespace": needs a namespaced resource (namespaced: true)`,
				`spec.customKinds[0].fields[0]: Invalid value: "metadata": a copy never takes apiVersion, kind, metadata or status from its source`,
				`spec.customKinds[1]: Duplicate value: "widgets.example.com"`,
				`spec.customKinds[1].scope: Invalid value: "ClusterByName": needs a cluster-scoped resource (namespaced: false)`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateReplicationConfig(&ReplicationConfig{Spec: tc.spec})
			if len(errs) == 0 {
				t.Fatalf("no errors, want %q", tc.want)
			}
			got := errs.ToAggregate().Error()
			for _, want := range tc.want {
				if !strings.Contains(got, want) {
					t.Errorf("message %q does not contain %q", got, want)
				}
			}
		})
	}
}

func TestValidateReplicationConfigNil(t *testing.T) {
	errs := ValidateReplicationConfig(nil)
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeRequired || errs[0].Field != "spec" {
		t.Errorf("ValidateReplicationConfig(nil) = %v, want one Required error on spec", errs)
	}
}

func TestReplicatedKinds(t *testing.T) {
	cases := []struct {
		name  string
		kinds []ReplicatedKind
		want  []ReplicatedKind
	}{
		{name: "nil means all", kinds: nil, want: AllReplicatedKinds},
		{name: "empty means all", kinds: []ReplicatedKind{}, want: AllReplicatedKinds},
		{name: "one kind", kinds: []ReplicatedKind{KindManifestWork}, want: []ReplicatedKind{KindManifestWork}},
		{
			name:  "listed out of order come back in AllReplicatedKinds order",
			kinds: []ReplicatedKind{KindConfigMap, KindManifestWork, KindManagedCluster},
			want:  []ReplicatedKind{KindManagedCluster, KindManifestWork, KindConfigMap},
		},
		{
			name:  "duplicates once",
			kinds: []ReplicatedKind{KindSecret, KindPlacement, KindSecret},
			want:  []ReplicatedKind{KindPlacement, KindSecret},
		},
		{
			name:  "unknown kinds dropped",
			kinds: []ReplicatedKind{"Pod", KindManagedClusterAddOn, "secret"},
			want:  []ReplicatedKind{KindManagedClusterAddOn},
		},
		// Only unknown kinds: nothing, not all kinds (ValidateReplicationConfig rejects such a spec).
		{name: "only unknown kinds", kinds: []ReplicatedKind{"Pod"}, want: nil},
		{name: "every kind, reversed", kinds: reversed(AllReplicatedKinds), want: AllReplicatedKinds},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := &ReplicationConfigSpec{Kinds: tc.kinds}
			if diff := cmp.Diff(tc.want, spec.ReplicatedKinds()); diff != "" {
				t.Errorf("ReplicatedKinds() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReplicatedKindsReturnsACopy(t *testing.T) {
	before := append([]ReplicatedKind(nil), AllReplicatedKinds...)
	for _, kinds := range [][]ReplicatedKind{nil, {KindSecret}} {
		spec := &ReplicationConfigSpec{Kinds: kinds}
		got := spec.ReplicatedKinds()
		for i := range got {
			got[i] = "Changed"
		}
	}
	if diff := cmp.Diff(before, AllReplicatedKinds); diff != "" {
		t.Errorf("changing the result of ReplicatedKinds changed AllReplicatedKinds (-before +after):\n%s", diff)
	}
}

func TestSecretKey(t *testing.T) {
	cases := []struct {
		key, want string
	}{
		{"", KubeconfigSecretKey},
		{"kubeconfig", "kubeconfig"},
		{"hub-b.kubeconfig", "hub-b.kubeconfig"},
	}
	for _, tc := range cases {
		ref := KubeconfigSecretReference{Name: "hub-b-kubeconfig", Key: tc.key}
		if got := ref.SecretKey(); got != tc.want {
			t.Errorf("SecretKey() with key %q = %q, want %q", tc.key, got, tc.want)
		}
	}
	if KubeconfigSecretKey != "kubeconfig" {
		t.Errorf("KubeconfigSecretKey = %q, want the CRD default \"kubeconfig\"", KubeconfigSecretKey)
	}
}

func reversed(kinds []ReplicatedKind) []ReplicatedKind {
	out := make([]ReplicatedKind, 0, len(kinds))
	for i := len(kinds) - 1; i >= 0; i-- {
		out = append(out, kinds[i])
	}
	return out
}

func TestDeleteBrakeLimits(t *testing.T) {
	cases := []struct {
		name             string
		brake            *DeleteBrake
		percent, minimum int
	}{
		{"omitted", nil, DefaultDeleteBrakePercent, DefaultDeleteBrakeMinimum},
		{"empty", &DeleteBrake{}, DefaultDeleteBrakePercent, DefaultDeleteBrakeMinimum},
		{"percent only", &DeleteBrake{Percent: ptr.To[int32](5)}, 5, DefaultDeleteBrakeMinimum},
		{"minimum zero", &DeleteBrake{Minimum: ptr.To[int32](0)}, DefaultDeleteBrakePercent, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			percent, minimum := tc.brake.Limits()
			if percent != tc.percent || minimum != tc.minimum {
				t.Errorf("Limits() = %d, %d; want %d, %d", percent, minimum, tc.percent, tc.minimum)
			}
		})
	}
}

func TestReleaseToken(t *testing.T) {
	since := time.Date(2026, 12, 5, 6, 7, 8, 900_000_000, time.FixedZone("x", 3600))
	if got, want := ReleaseToken("hub-b", since), "hub-b@2026-12-05T05:07:08Z"; got != want {
		t.Errorf("ReleaseToken = %q, want %q", got, want)
	}
}
