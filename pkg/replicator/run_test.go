package replicator

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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
