package managedcluster

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	clusterv1alpha1listers "open-cluster-management.io/api/client/cluster/listers/cluster/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

const (
	// hubLeaseName is the Lease the hub creates in namespace <cluster> and the agent renews.
	hubLeaseName = "managed-cluster-lease"
	// defaultLeaseDurationSeconds applies when spec.leaseDurationSeconds is 0 (OCM API doc).
	defaultLeaseDurationSeconds = 60
	// leaseStaleFactor: the hub marks a cluster Unknown when its lease is older than this
	// many lease durations; a registration is "kept fresh" while its lease is younger.
	leaseStaleFactor = 5
	// kubeSystemNamespace's UID identifies the spoke when no id.k8s.io claim exists.
	kubeSystemNamespace = "kube-system"
)

// identityReconciler is the first gate of the chain (FC-06). This spoke's identity is the
// value of its id.k8s.io ClusterClaim or, when that claim does not exist, the UID of its
// kube-system Namespace. When the hub ManagedCluster carries an id.k8s.io claim with
// another value and its lease is kept fresh by someone else (renewTime younger than
// 5 x leaseDuration and not the renewTime we wrote), another spoke owns this name: the
// chain stops (no status, no claims), the ConflictTracker is set (the lease controller
// stops renewing) and a Warning event is emitted once. A stale registration is taken
// over: the chain continues and our claims replace the old ones.
//
// The freshness verdict is cached per (hub id, our id) pair and re-evaluated on periodic
// syncs only, so informer churn does not turn into lease GETs.
type identityReconciler struct {
	clusterName  string
	claimLister  clusterv1alpha1listers.ClusterClaimLister
	spoke        *SpokeIdentityReader
	leases       coordinationv1client.LeasesGetter
	ownRenewTime func() time.Time
	tracker      *ConflictTracker

	verdict *identityVerdict
}

type identityVerdict struct {
	hubID, ourID string
	conflict     bool
	detail       string
}

func (r *identityReconciler) reconcile(ctx context.Context, sc *statusSyncContext, cluster *clusterv1.ManagedCluster) (reconcileState, error) {
	ourID, fromKubeSystem, err := r.spokeID(ctx)
	if err != nil {
		return reconcileStop, err
	}
	sc.spokeID, sc.spokeIDFromKubeSystem = ourID, fromKubeSystem

	hubID := claimValue(cluster.Status.ClusterClaims, ClusterClaimID)
	if ourID == "" || hubID == "" || hubID == ourID {
		r.verdict = nil
		r.clear(sc, "the identities match")
		return reconcileContinue, nil
	}

	if v := r.verdict; v == nil || v.hubID != hubID || v.ourID != ourID || sc.periodic {
		verdict, err := r.evaluate(ctx, sc, cluster, hubID, ourID)
		if err != nil {
			return reconcileStop, err
		}
		r.verdict = verdict
	}
	if !r.verdict.conflict {
		if r.clear(sc, r.verdict.detail) || sc.periodic {
			sc.logger.Info("Taking over a stale registration with another identity", "hubID", hubID, "spokeID", ourID, "detail", r.verdict.detail)
		}
		return reconcileContinue, nil
	}

	message := fmt.Sprintf("ManagedCluster %q on the hub belongs to another spoke: its %s claim is %q, this spoke's is %q, and %s; this agent writes no status, claims or lease until that registration goes stale",
		r.clusterName, ClusterClaimID, hubID, ourID, r.verdict.detail)
	if r.tracker.Set(message) {
		sc.syncCtx.Recorder().Warning(ReasonManagedClusterIdentityConflict, message)
	}
	sc.logger.V(2).Info("Identity conflict, no status written", "hubID", hubID, "spokeID", ourID)
	return reconcileStop, nil
}

// clear resets the tracker and reports a resolved conflict; it returns true on that transition.
func (r *identityReconciler) clear(sc *statusSyncContext, detail string) bool {
	if !r.tracker.Clear() {
		return false
	}
	sc.syncCtx.Recorder().Eventf(ReasonManagedClusterIdentityConflictResolved,
		"identity conflict on ManagedCluster %q resolved: %s", r.clusterName, detail)
	return true
}

// spokeID returns the id.k8s.io ClusterClaim value, else the kube-system UID (SpokeIdentityReader), else ""
// when no reader was given.
func (r *identityReconciler) spokeID(ctx context.Context) (string, bool, error) {
	claim, err := r.claimLister.Get(ClusterClaimID)
	switch {
	case err == nil && claim.Spec.Value != "":
		return claim.Spec.Value, false, nil
	case err != nil && !apierrors.IsNotFound(err):
		return "", false, fmt.Errorf("unable to get ClusterClaim %q: %w", ClusterClaimID, err)
	}
	if r.spoke == nil {
		return "", false, nil
	}
	uid, err := r.spoke.KubeSystemUID(ctx)
	if err != nil {
		return "", false, err
	}
	return uid, true, nil
}

// evaluate decides whether a registration with another identity is alive.
func (r *identityReconciler) evaluate(ctx context.Context, sc *statusSyncContext, cluster *clusterv1.ManagedCluster, hubID, ourID string) (*identityVerdict, error) {
	verdict := &identityVerdict{hubID: hubID, ourID: ourID}
	if r.leases == nil {
		verdict.conflict, verdict.detail = true, "its lease freshness cannot be checked"
		return verdict, nil
	}
	lease, err := r.leases.Leases(r.clusterName).Get(ctx, hubLeaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		verdict.detail = fmt.Sprintf("Lease %s/%s does not exist", r.clusterName, hubLeaseName)
		return verdict, nil
	}
	if err != nil {
		return nil, fmt.Errorf("unable to get Lease %s/%s from the hub: %w", r.clusterName, hubLeaseName, err)
	}
	fresh, ours, detail := leaseFreshness(lease, leaseDuration(cluster), sc.now, r.ownRenewTime)
	verdict.conflict, verdict.detail = fresh && !ours, detail
	return verdict, nil
}

// leaseFreshness reports whether the lease was renewed within leaseStaleFactor lease
// durations of now and whether that renewal is the one we wrote (compared at the
// microsecond precision of spec.renewTime).
func leaseFreshness(lease *coordinationv1.Lease, duration time.Duration, now time.Time, ownRenewTime func() time.Time) (fresh, ours bool, detail string) {
	if lease.Spec.RenewTime == nil {
		return false, false, fmt.Sprintf("Lease %s/%s was never renewed", lease.Namespace, lease.Name)
	}
	renewed := lease.Spec.RenewTime.Time
	if ownRenewTime != nil {
		if own := ownRenewTime(); !own.IsZero() && own.Truncate(time.Microsecond).Equal(renewed.Truncate(time.Microsecond)) {
			ours = true
		}
	}
	age := now.Sub(renewed)
	fresh = age < leaseStaleFactor*duration
	switch {
	case ours:
		detail = fmt.Sprintf("Lease %s/%s was last renewed by this agent", lease.Namespace, lease.Name)
	case fresh:
		detail = fmt.Sprintf("its Lease %s/%s was renewed %s ago (stale after %s)", lease.Namespace, lease.Name, age.Round(time.Second), leaseStaleFactor*duration)
	default:
		detail = fmt.Sprintf("its Lease %s/%s is stale (renewed %s ago)", lease.Namespace, lease.Name, age.Round(time.Second))
	}
	return fresh, ours, detail
}

// leaseDuration returns spec.leaseDurationSeconds, 0 meaning 60 s.
func leaseDuration(cluster *clusterv1.ManagedCluster) time.Duration {
	seconds := cluster.Spec.LeaseDurationSeconds
	if seconds <= 0 {
		seconds = defaultLeaseDurationSeconds
	}
	return time.Duration(seconds) * time.Second
}

func claimValue(claims []clusterv1.ManagedClusterClaim, name string) string {
	for _, claim := range claims {
		if claim.Name == name {
			return claim.Value
		}
	}
	return ""
}
