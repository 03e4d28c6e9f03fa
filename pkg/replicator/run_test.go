package replicator

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

func TestClusterSelector(t *testing.T) {
	prod := labels.Set{"env": "prod"}
	none := labels.Set{}
	cases := []struct {
		name       string
		selector   *metav1.LabelSelector
		prod, none bool
	}{
		{"omitted selects every cluster", nil, true, true},
		{"empty selects every cluster", &metav1.LabelSelector{}, true, true},
		{"matchLabels", &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, true, false},
		{"invalid selects nothing", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Bogus"}}}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := clusterSelector(c.selector)
			if got := s.Matches(prod); got != c.prod {
				t.Errorf("Matches(env=prod) = %v, want %v", got, c.prod)
			}
			if got := s.Matches(none); got != c.none {
				t.Errorf("Matches(no labels) = %v, want %v", got, c.none)
			}
		})
	}
}

func TestReleaseTokens(t *testing.T) {
	rc := &failoverv1alpha1.ReplicationConfig{}
	if got := releaseTokens(rc); got != nil {
		t.Errorf("no annotation: %v, want none", got)
	}
	rc.Annotations = map[string]string{failoverv1alpha1.AnnotationReleaseDeletes: " hub-b@2026-12-05T06:00:00Z, ,hub-c@2026-12-05T06:01:00Z,"}
	if diff := cmp.Diff([]string{"hub-b@2026-12-05T06:00:00Z", "hub-c@2026-12-05T06:01:00Z"}, releaseTokens(rc)); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
}

// TestEngagedBrakesFromStatus: after a restart, the brakes the status recorded stay engaged, but not that of a
// hub no longer in spec.hubs.
func TestEngagedBrakesFromStatus(t *testing.T) {
	since := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	rc := &failoverv1alpha1.ReplicationConfig{
		Spec: failoverv1alpha1.ReplicationConfigSpec{Hubs: []failoverv1alpha1.ReplicationHub{{Name: "hub-a"}, {Name: "hub-b"}}},
		Status: failoverv1alpha1.ReplicationConfigStatus{Hubs: []failoverv1alpha1.ReplicationHubStatus{
			{Name: "hub-a"},
			{Name: "hub-b", DeleteBrake: &failoverv1alpha1.DeleteBrakeStatus{Since: metav1.NewTime(since), ReleaseToken: "hub-b@2026-12-05T06:00:00Z"}},
			{Name: "hub-gone", DeleteBrake: &failoverv1alpha1.DeleteBrakeStatus{Since: metav1.NewTime(since), ReleaseToken: "hub-gone@2026-12-05T06:00:00Z"}},
		}},
	}
	if diff := cmp.Diff(map[string]time.Time{"hub-b": since}, engagedBrakes(rc, nil, nil)); diff != "" {
		t.Errorf("engaged brakes (-want +got):\n%s", diff)
	}
	// Carried from the last engine (none ran since), they win over the status, which an invalid spec emptied.
	carried := map[string]time.Time{"hub-a": since}
	if diff := cmp.Diff(carried, engagedBrakes(rc, nil, carried)); diff != "" {
		t.Errorf("engaged brakes carried (-want +got):\n%s", diff)
	}
	// An engine without a controller (fewer than two usable hubs) reports the brakes it started with.
	e := &engine{engaged: map[string]time.Time{"hub-b": since}}
	if diff := cmp.Diff(map[string]time.Time{"hub-b": since}, engagedBrakes(rc, e, nil)); diff != "" {
		t.Errorf("engaged brakes of an engine without a controller (-want +got):\n%s", diff)
	}
}
