package clientcert_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

// TestLeaseBootstrapBackoffStore: no Lease loads as no records; Save creates the Lease, then merges by key
// (another agent's record is kept); a broken annotation fails Load with its name and is replaced by Save.
func TestLeaseBootstrapBackoffStore(t *testing.T) {
	ctx := context.Background()
	client := kubefake.NewClientset()
	store := clientcert.NewLeaseBootstrapBackoffStore(client.CoordinationV1(), agentNamespace, clientcert.BootstrapBackoffLeaseName)
	if got, err := store.Load(ctx); err != nil || len(got) != 0 {
		t.Fatalf("Load without a Lease: %v, %v; want no records", got, err)
	}
	a := clientcert.BootstrapRecord{Failures: 2, Last: metav1.NewTime(testNow), Pending: true}
	b := clientcert.BootstrapRecord{Failures: 5, Last: metav1.NewTime(testNow), ContestedAt: &metav1.Time{Time: testNow}}
	if err := store.Save(ctx, map[string]clientcert.BootstrapRecord{"c1@https://hub-a": a}); err != nil {
		t.Fatal(err)
	}
	if err := store.Save(ctx, map[string]clientcert.BootstrapRecord{"c1@https://hub-b": b}); err != nil {
		t.Fatal(err)
	}
	a.Failures = 3
	if err := store.Save(ctx, map[string]clientcert.BootstrapRecord{"c1@https://hub-a": a}); err != nil {
		t.Fatal(err)
	}
	got, err := store.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]clientcert.BootstrapRecord{"c1@https://hub-a": a, "c1@https://hub-b": b}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}

	leases := client.CoordinationV1().Leases(agentNamespace)
	lease, err := leases.Get(ctx, clientcert.BootstrapBackoffLeaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lease.Annotations[clientcert.BootstrapBackoffAnnotation] = "{not json"
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Load(ctx); err == nil || !strings.Contains(err.Error(), clientcert.BootstrapBackoffAnnotation) {
		t.Errorf("Load of a broken annotation: %v; want an error naming the annotation", err)
	}
	if err := store.Save(ctx, map[string]clientcert.BootstrapRecord{"c1@https://hub-a": a}); err != nil {
		t.Fatal(err)
	}
	if got, err := store.Load(ctx); err != nil || len(got) != 1 {
		t.Errorf("after Save over a broken annotation: %v, %v; want hub-a's record only", got, err)
	}
}
