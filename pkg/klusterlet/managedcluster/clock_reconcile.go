package managedcluster

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

// clockReconciler is the second gate of the chain (FC-10): while the hub says
// ManagedClusterConditionClockSynced=False, the chain stops and no status is written (the
// lease keeps being renewed, so the hub can see the clocks agree again). On the transition
// it emits ClockSkewDetected once with the hub's message and the skew measured from the hub
// Lease (see measureClockSkew); when the condition is no longer False it emits
// ClockSkewResolved.
type clockReconciler struct {
	clusterName string
	leases      coordinationv1client.LeasesGetter

	reported bool
}

func (r *clockReconciler) reconcile(ctx context.Context, sc *statusSyncContext, cluster *clusterv1.ManagedCluster) (reconcileState, error) {
	condition := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.ManagedClusterConditionClockSynced)
	if condition == nil || condition.Status != metav1.ConditionFalse {
		if r.reported {
			r.reported = false
			sc.syncCtx.Recorder().Eventf(ReasonClockSkewResolved, "the hub reports the clocks of ManagedCluster %q in sync again; status updates resume", r.clusterName)
			sc.logger.Info("Clock skew resolved; status updates resume")
		}
		return reconcileContinue, nil
	}
	if r.reported {
		return reconcileStop, nil
	}
	r.reported = true

	measured := "skew not measurable"
	if r.leases != nil {
		lease, err := r.leases.Leases(r.clusterName).Get(ctx, hubLeaseName, metav1.GetOptions{})
		if err != nil {
			measured = fmt.Sprintf("skew not measurable: %v", err)
		} else if skew, ok := measureClockSkew(lease); ok {
			measured = fmt.Sprintf("measured skew: hub clock is %s ahead of this agent (±1s)", skew.Round(time.Second))
		}
	}
	sc.syncCtx.Recorder().Warningf(ReasonClockSkewDetected,
		"the hub reports the clock of ManagedCluster %q out of sync (%s: %s); %s; status updates stop until it is in sync",
		r.clusterName, condition.Reason, condition.Message, measured)
	sc.logger.Info("Clock skew detected by the hub; no status written", "reason", condition.Reason, "message", condition.Message, "measurement", measured)
	return reconcileStop, nil
}

// measureClockSkew estimates hub clock minus agent clock from the hub Lease alone: the
// newest managedFields timestamp is set by the hub API server (hub clock, one-second
// precision) at the last write, while spec.renewTime is the agent's clock at that same
// write. Their difference is the skew plus the write latency, within ±1 s. A negative
// value means the hub is behind. ok is false when either timestamp is missing.
func measureClockSkew(lease *coordinationv1.Lease) (skew time.Duration, ok bool) {
	if lease.Spec.RenewTime == nil {
		return 0, false
	}
	var written time.Time
	for _, entry := range lease.ManagedFields {
		if entry.Time != nil && entry.Time.After(written) {
			written = entry.Time.Time
		}
	}
	if written.IsZero() {
		return 0, false
	}
	return written.Sub(lease.Spec.RenewTime.Time), true
}
