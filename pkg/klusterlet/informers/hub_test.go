package informers

import (
	"context"
	"testing"

	clienttesting "k8s.io/client-go/testing"

	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
)

const testCluster = "cluster1"

// TestHubManagedClusterInformerIsScoped: list and watch of the ManagedCluster informer
// carry fieldSelector=metadata.name=<cluster>, the only list the hub RBAC allows.
func TestHubManagedClusterInformerIsScoped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := clusterfake.NewSimpleClientset()
	factory := NewHubManagedClusterFactory(client, testCluster, 0)
	factory.Cluster().V1().ManagedClusters().Informer()
	factory.Start(ctx.Done())
	for informerType, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			t.Fatalf("informer %v not synced", informerType)
		}
	}
	var lists []clienttesting.Action
	for _, action := range client.Actions() {
		if action.GetVerb() == "list" {
			lists = append(lists, action)
		}
	}
	if len(lists) == 0 {
		t.Fatal("no list call")
	}
	for _, action := range lists {
		if got := action.(clienttesting.ListAction).GetListRestrictions().Fields.String(); got != "metadata.name="+testCluster {
			t.Errorf("list field selector = %q, want metadata.name=%s", got, testCluster)
		}
	}
}
