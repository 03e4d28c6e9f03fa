package managedcluster

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openshift/library-go/pkg/controller/factory"
	"k8s.io/klog/v2"

	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
)

func TestClaimReconcile(t *testing.T) {
	spokeOnly := map[string]string{LabelSpokeOnly: ""}
	reserved := []*clusterv1alpha1.ClusterClaim{
		newClaim("product.open-cluster-management.io", "Kind", nil),
		newClaim("id.k8s.io", "spoke-a", nil),
		newClaim("platform.open-cluster-management.io", "Other", nil),
		newClaim("kubeversion.open-cluster-management.io", "v1.34.3", nil),
	}
	wantReserved := []clusterv1.ManagedClusterClaim{
		{Name: "id.k8s.io", Value: "spoke-a"},
		{Name: "kubeversion.open-cluster-management.io", Value: "v1.34.3"},
		{Name: "platform.open-cluster-management.io", Value: "Other"},
		{Name: "product.open-cluster-management.io", Value: "Kind"},
	}
	customClaims := func(names ...string) []*clusterv1alpha1.ClusterClaim {
		var claims []*clusterv1alpha1.ClusterClaim
		for _, name := range names {
			claims = append(claims, newClaim(name, "v-"+name, nil))
		}
		return claims
	}
	managed := func(names ...string) []clusterv1.ManagedClusterClaim {
		var claims []clusterv1.ManagedClusterClaim
		for _, name := range names {
			claims = append(claims, clusterv1.ManagedClusterClaim{Name: name, Value: "v-" + name})
		}
		return claims
	}
	cases := []struct {
		name           string
		claims         []*clusterv1alpha1.ClusterClaim
		max            int
		suffixes       []string
		expectedClaims []clusterv1.ManagedClusterClaim
		expectedEvent  string
	}{
		{
			name:           "custom claims sorted by name after the reserved ones",
			claims:         append(customClaims("zone", "app", "env"), reserved...),
			max:            20,
			expectedClaims: append(append([]clusterv1.ManagedClusterClaim{}, wantReserved...), managed("app", "env", "zone")...),
		},
		{
			name:           "reserved claims are kept beyond the limit, custom ones are cut",
			claims:         append(customClaims("c", "b", "a"), reserved...),
			max:            2,
			expectedClaims: append(append([]clusterv1.ManagedClusterClaim{}, wantReserved...), managed("a", "b")...),
			expectedEvent:  "3 custom ClusterClaims found, 2 allowed (--max-custom-cluster-claims), 1 dropped",
		},
		{
			name:           "spoke-only claims are skipped, reserved or not",
			claims:         []*clusterv1alpha1.ClusterClaim{newClaim("a", "v-a", nil), newClaim("hidden", "x", spokeOnly), newClaim("platform.open-cluster-management.io", "x", spokeOnly)},
			max:            1,
			expectedClaims: managed("a"),
		},
		{
			name:   "limit 0 exposes reserved claims only",
			claims: append(customClaims("a"), reserved...),
			max:    0,
			// the event counts are exact
			expectedClaims: wantReserved,
			expectedEvent:  "1 custom ClusterClaims found, 0 allowed (--max-custom-cluster-claims), 1 dropped",
		},
		{
			name:     "claims with a reserved suffix are reserved: sorted with them and never cut",
			claims:   append(customClaims("b", "a", "region.example.com", "zone.example.com"), reserved...),
			max:      1,
			suffixes: []string{".example.com"},
			expectedClaims: append(append([]clusterv1.ManagedClusterClaim{}, wantReserved[:3]...),
				append([]clusterv1.ManagedClusterClaim{wantReserved[3]}, append(managed("region.example.com", "zone.example.com"), managed("a")...)...)...),
			expectedEvent: "2 custom ClusterClaims found, 1 allowed (--max-custom-cluster-claims), 1 dropped",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			informer := clusterinformers.NewSharedInformerFactory(clusterfake.NewSimpleClientset(), 0).Cluster().V1alpha1().ClusterClaims()
			for _, claim := range tc.claims {
				if err := informer.Informer().GetStore().Add(claim); err != nil {
					t.Fatal(err)
				}
			}
			r := &claimReconciler{claimLister: informer.Lister(), maxCustom: tc.max, reservedSuffixes: tc.suffixes}
			recorder := newTestRecorder()
			syncCtx := factory.NewSyncContext("test", recorder)
			cluster := newManagedCluster()
			if _, err := r.reconcile(context.Background(), &statusSyncContext{syncCtx: syncCtx, logger: klog.Background()}, cluster); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.expectedClaims, cluster.Status.ClusterClaims); diff != "" {
				t.Errorf("claims (-want +got):\n%s", diff)
			}
			events := recorder.Events()
			switch {
			case tc.expectedEvent == "" && len(events) != 0:
				t.Errorf("unexpected events %v", events)
			case tc.expectedEvent != "" && (len(events) != 1 || events[0].Reason != ReasonClusterClaimsTruncated || events[0].Type != "Warning" || !strings.Contains(events[0].Message, tc.expectedEvent)):
				t.Errorf("want one Warning %s containing %q, got %v", ReasonClusterClaimsTruncated, tc.expectedEvent, events)
			}
		})
	}
}

// TestStatusClaimsFC14: 25 custom claims, every reserved one, one spoke-only, limit 20;
// then one custom claim deleted. Status keeps every reserved claim and exactly 20 custom
// ones in name order; the warning is emitted once per change of the counts; the deleted
// claim leaves status at the next sync; nothing is written when nothing changed.
func TestStatusClaimsFC14(t *testing.T) {
	var claims []*clusterv1alpha1.ClusterClaim
	for _, name := range clusterv1alpha1.ReservedClusterClaimNames {
		claims = append(claims, newClaim(name, "r-"+name, nil))
	}
	for i := 24; i >= 0; i-- {
		claims = append(claims, newClaim(fmt.Sprintf("custom-%02d", i), "v", nil))
	}
	claims = append(claims, newClaim("aaa-spoke-only", "v", map[string]string{LabelSpokeOnly: "true"}))

	f := newStatusFixture(t, fixtureConfig{cluster: newManagedCluster(accepted()), claims: claims})
	expected := func(skip int) []clusterv1.ManagedClusterClaim {
		var want []clusterv1.ManagedClusterClaim
		for _, name := range clusterv1alpha1.ReservedClusterClaimNames {
			want = append(want, clusterv1.ManagedClusterClaim{Name: name, Value: "r-" + name})
		}
		for i := 0; len(want) < 4+20; i++ {
			if i != skip {
				want = append(want, clusterv1.ManagedClusterClaim{Name: fmt.Sprintf("custom-%02d", i), Value: "v"})
			}
		}
		return want
	}
	truncations := func() []string {
		var messages []string
		for _, event := range f.recorder.Events() {
			if event.Reason == ReasonClusterClaimsTruncated {
				messages = append(messages, event.Message[:strings.Index(event.Message, " dropped")])
			}
		}
		return messages
	}

	f.sync("key")
	f.refreshCache()
	f.sync("key")
	f.sync(spokeEventKey)
	if diff := cmp.Diff(expected(-1), f.hubCluster().Status.ClusterClaims); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	if n := len(f.statusPatches()); n != 1 {
		t.Errorf("status patches = %d, want 1", n)
	}

	store := f.spokeClusters.Cluster().V1alpha1().ClusterClaims().Informer().GetStore()
	f.add(store.Delete(newClaim("custom-03", "v", nil)))
	f.sync(spokeEventKey)
	if diff := cmp.Diff(expected(3), f.hubCluster().Status.ClusterClaims); diff != "" {
		t.Errorf("claims after a deletion (-want +got):\n%s", diff)
	}
	want := []string{
		"25 custom ClusterClaims found, 20 allowed (--max-custom-cluster-claims), 5",
		"24 custom ClusterClaims found, 20 allowed (--max-custom-cluster-claims), 4",
	}
	if diff := cmp.Diff(want, truncations()); diff != "" {
		t.Errorf("truncation events (-want +got):\n%s", diff)
	}
}
