package testbed_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// TestSpoke checks the spoke serves ClusterClaims and that its admin kubeconfig file is self-contained.
func TestSpoke(t *testing.T) {
	spoke := framework.StartSpoke(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	claim := &clusterv1alpha1.ClusterClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "id.k8s.io"},
		Spec:       clusterv1alpha1.ClusterClaimSpec{Value: "spoke-1"},
	}
	if _, err := spoke.Cluster.ClusterV1alpha1().ClusterClaims().Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ClusterClaim %s: %v", claim.Name, err)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", spoke.KubeconfigFile())
	if err != nil {
		t.Fatalf("loading %s: %v", spoke.KubeconfigFile(), err)
	}
	if cfg.Host != spoke.URL() || string(cfg.CAData) != string(spoke.CAData()) || len(cfg.CertData) == 0 || len(cfg.KeyData) == 0 {
		t.Errorf("admin kubeconfig: server %q, inline CA %t, inline cert %t, inline key %t; want server %q with inline CA, cert and key",
			cfg.Host, string(cfg.CAData) == string(spoke.CAData()), len(cfg.CertData) > 0, len(cfg.KeyData) > 0, spoke.URL())
	}
	got, err := clusterclientset.NewForConfigOrDie(cfg).ClusterV1alpha1().ClusterClaims().Get(ctx, claim.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading ClusterClaim %s through the kubeconfig file: %v", claim.Name, err)
	}
	if got.Spec.Value != "spoke-1" {
		t.Errorf("ClusterClaim %s value %q, want %q", claim.Name, got.Spec.Value, "spoke-1")
	}
}
