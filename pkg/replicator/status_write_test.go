package replicator

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned/fake"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/replication"
)

// TestWriteStatusRereadsOnConflict: a status write from a stale copy of the ReplicationConfig (the informer's,
// after the hub holding it restarted) is refused with a conflict; writeStatus reads the object and writes again,
// instead of failing at every interval until the informer catches up.
func TestWriteStatusRereadsOnConflict(t *testing.T) {
	stored := &failoverv1alpha1.ReplicationConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "replication", ResourceVersion: "7"}}
	client := fake.NewSimpleClientset(stored)
	var updates []string
	client.PrependReactor("update", "replicationconfigs", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "status" {
			return false, nil, nil
		}
		rv := a.(clienttesting.UpdateAction).GetObject().(*failoverv1alpha1.ReplicationConfig).ResourceVersion
		updates = append(updates, rv)
		if rv != "7" {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: failoverv1alpha1.GroupName, Resource: "replicationconfigs"}, "replication",
				nil)
		}
		return false, nil, nil
	})
	stale := stored.DeepCopy()
	stale.ResourceVersion = "3"
	o := NewOptions()
	o.writeStatus(context.Background(), client, stale, nil, replication.Snapshot{}, "", time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	if len(updates) != 2 || updates[0] != "3" || updates[1] != "7" {
		t.Errorf("status updates from resourceVersions %v, want [3 7]: the stale write, then one from the object read again", updates)
	}
}
