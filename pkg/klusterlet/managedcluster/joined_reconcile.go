package managedcluster

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

// joinedReconciler sets ManagedClusterJoined=True once the hub set
// HubAcceptedManagedCluster=True. Until then it stops the chain: the agent has no RBAC on
// the status before acceptance, and OCM's agent writes nothing either.
type joinedReconciler struct{}

func (r *joinedReconciler) reconcile(_ context.Context, sc *statusSyncContext, cluster *clusterv1.ManagedCluster) (reconcileState, error) {
	if !meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) {
		sc.logger.V(4).Info("ManagedCluster not accepted by the hub yet; no status written")
		return reconcileStop, nil
	}
	setCondition(cluster, metav1.Condition{
		Type:    clusterv1.ManagedClusterConditionJoined,
		Status:  metav1.ConditionTrue,
		Reason:  ConditionReasonManagedClusterJoined,
		Message: "Managed cluster joined",
	}, sc.now)
	return reconcileContinue, nil
}
