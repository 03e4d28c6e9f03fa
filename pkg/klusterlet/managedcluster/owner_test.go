package managedcluster

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

func TestOwnedByAnotherSpoke(t *testing.T) {
	available := func(status metav1.ConditionStatus) []metav1.Condition {
		return []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: status}}
	}
	// mc returns a ManagedCluster: a replicator's copy made for copyFor (when set; "?" a copy that names no
	// identity), or an original annotated for annotatedFor, with the id.k8s.io claim claimed (when set).
	mc := func(copyFor, annotatedFor, claimed string, conditions []metav1.Condition) *clusterv1.ManagedCluster {
		m := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "local-cluster", Annotations: map[string]string{}}}
		if copyFor != "" {
			m.Labels = map[string]string{failoverv1alpha1.LabelReplicatedFrom: "hub-a"}
			if copyFor != "?" {
				m.Annotations[failoverv1alpha1.AnnotationClusterID] = copyFor
			}
		}
		if annotatedFor != "" {
			m.Annotations[failoverv1alpha1.AnnotationClusterID] = annotatedFor
		}
		if claimed != "" {
			m.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "region", Value: "eu"}, {Name: ClusterClaimID, Value: claimed}}
		}
		m.Status.Conditions = conditions
		return m
	}
	us := SpokeIdentities{KubeSystemUID: "us"}
	claimedLater := SpokeIdentities{Claim: "us-claim", KubeSystemUID: "us"}
	for _, tc := range []struct {
		name string
		mc   *clusterv1.ManagedCluster
		ids  SpokeIdentities
		want bool
		says string
	}{
		{name: "no ManagedCluster", mc: nil, ids: us},
		{name: "identity unknown", mc: mc("them", "", "them", available(metav1.ConditionTrue)), ids: SpokeIdentities{}},
		{name: "a ManagedCluster that says nothing of its spoke", mc: mc("", "", "", available(metav1.ConditionTrue)), ids: us},
		{name: "rule 1: a copy for another spoke", mc: mc("them", "", "", nil), ids: us, want: true,
			says: `copy for another spoke (failover.open-cluster-management.io/cluster-id "them", this spoke's identity is "us")`},
		{name: "rule 1: a copy for another spoke whose stale claim is ours", mc: mc("them", "", "us", available(metav1.ConditionUnknown)), ids: us, want: true, says: "copy"},
		{name: "rule 1: our copy", mc: mc("us", "", "", nil), ids: us},
		{name: "rule 1: our copy made before the spoke got its claim", mc: mc("us", "", "", nil), ids: claimedLater},
		{name: "rule 1: a copy that names no identity", mc: mc("?", "", "", nil), ids: us},
		{name: "rule 1: the annotation on an original is no copy's", mc: mc("", "them", "", nil), ids: us},
		{name: "rule 2: another spoke's registration, available", mc: mc("", "", "them", available(metav1.ConditionTrue)), ids: us, want: true,
			says: `registered by another spoke, available (its id.k8s.io claim is "them", this spoke's identity is "us")`},
		{name: "rule 2: our registration from before the spoke got its claim", mc: mc("", "", "us", available(metav1.ConditionTrue)), ids: claimedLater},
		{name: "rule 3: another spoke's registration gone stale", mc: mc("", "", "them", available(metav1.ConditionUnknown)), ids: us},
		{name: "rule 3: another spoke's registration never available", mc: mc("", "", "them", nil), ids: us},
		{name: "rule 3: our registration", mc: mc("us", "", "us", available(metav1.ConditionTrue)), ids: us},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := OwnedByAnotherSpoke(tc.mc, tc.ids)
			if got != tc.want {
				t.Fatalf("OwnedByAnotherSpoke = %t (%q), want %t", got, why, tc.want)
			}
			if !strings.Contains(why, tc.says) || (!got && why != "") {
				t.Errorf("reason %q, want it to contain %q (empty when not another spoke's)", why, tc.says)
			}
		})
	}
}

// TestSpokeIdentityReader: the claim is current when it has a value, else the kube-system UID; the kube-system
// Namespace is read once for every later read, and a failed read is tried again.
func TestSpokeIdentityReader(t *testing.T) {
	kubeSystem := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kubeSystemNamespace, UID: types.UID("ks-uid")}}
	claim := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: ClusterClaimID}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: "claimed-id"}}
	emptyClaim := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: ClusterClaimID}}
	ctx := context.Background()

	read := func(claims *clusterfake.Clientset, kube *kubefake.Clientset) (SpokeIdentities, error) {
		return NewSpokeIdentityReader(kube.CoreV1()).Read(ctx, claims.ClusterV1alpha1())
	}
	got, err := read(clusterfake.NewSimpleClientset(claim), kubefake.NewClientset(kubeSystem))
	if err != nil || got != (SpokeIdentities{Claim: "claimed-id", KubeSystemUID: "ks-uid"}) || got.Current() != "claimed-id" {
		t.Errorf("with an id.k8s.io claim: %+v, %v; want both, the claim current", got, err)
	}
	for name, clusterClient := range map[string]*clusterfake.Clientset{"no claim": clusterfake.NewSimpleClientset(), "an empty claim": clusterfake.NewSimpleClientset(emptyClaim)} {
		got, err := read(clusterClient, kubefake.NewClientset(kubeSystem))
		if err != nil || got.Current() != "ks-uid" || got.Claim != "" {
			t.Errorf("%s: %+v, %v; want the kube-system UID current", name, got, err)
		}
	}
	if _, err := read(clusterfake.NewSimpleClientset(), kubefake.NewClientset()); err == nil || !strings.Contains(err.Error(), `Namespace "kube-system"`) {
		t.Errorf("without kube-system: error %v, want one naming the kube-system Namespace", err)
	}
	kube := kubefake.NewClientset()
	r := NewSpokeIdentityReader(kube.CoreV1())
	if _, err := r.Read(ctx, clusterfake.NewSimpleClientset().ClusterV1alpha1()); err == nil {
		t.Fatal("read before kube-system exists: no error")
	}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, kubeSystem, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if uid, err := r.KubeSystemUID(ctx); err != nil || uid != "ks-uid" {
			t.Fatalf("read %d: %q, %v; want ks-uid", i, uid, err)
		}
	}
	gets := 0
	for _, a := range kube.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "namespaces" {
			gets++
		}
	}
	if gets != 2 {
		t.Errorf("kube-system read %d times, want 2 (the failed read, then once)", gets)
	}

	// A known UID (a hollow agent's) is the current identity without a read of the spoke; a claim still wins.
	known := NewKnownSpokeIdentityReader("hollow-uid")
	if got, err := known.Read(ctx, clusterfake.NewSimpleClientset().ClusterV1alpha1()); err != nil || got.Current() != "hollow-uid" {
		t.Errorf("known UID: %+v, %v; want hollow-uid current", got, err)
	}
	if got, err := known.Read(ctx, clusterfake.NewSimpleClientset(claim).ClusterV1alpha1()); err != nil || got.Current() != "claimed-id" || got.KubeSystemUID != "hollow-uid" {
		t.Errorf("known UID with a claim: %+v, %v; want the claim current", got, err)
	}
}
