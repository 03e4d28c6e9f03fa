package managedcluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	clusterv1alpha1client "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// SpokeIdentity returns the spoke's identity as the agent reports it on every hub (FC-06, and the replicator's
// cluster identity): the value of its id.k8s.io ClusterClaim (KEP-2149), else the UID of its kube-system
// Namespace. claims and namespaces are clients of the managed cluster. It returns an error naming the object
// it could not read.
func SpokeIdentity(ctx context.Context, claims clusterv1alpha1client.ClusterClaimsGetter, namespaces corev1client.NamespacesGetter) (string, error) {
	claim, err := claims.ClusterClaims().Get(ctx, ClusterClaimID, metav1.GetOptions{})
	switch {
	case err == nil && claim.Spec.Value != "":
		return claim.Spec.Value, nil
	case err != nil && !apierrors.IsNotFound(err):
		return "", fmt.Errorf("unable to get ClusterClaim %q of the spoke: %w", ClusterClaimID, err)
	}
	ns, err := namespaces.Namespaces().Get(ctx, kubeSystemNamespace, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("unable to get Namespace %q of the spoke: %w", kubeSystemNamespace, err)
	}
	return string(ns.UID), nil
}

// OwnedByAnotherSpoke reports whether mc, the ManagedCluster of the agent's cluster name on a hub, belongs to a
// spoke other than the one whose identity is spokeID (SpokeIdentity), with a sentence saying why. Joining such a
// hub would make OCM's work agent run the other spoke's ManifestWorks here and evict this spoke's. The rules,
// in order:
//  1. mc carries failoverv1alpha1.AnnotationClusterID with another value: a copy the replicator keeps for that
//     spoke, which lives on another hub (a copy's lease is not renewed, so its freshness says nothing).
//  2. Its id.k8s.io claim has another value and its ManagedClusterConditionAvailable is True: a registration
//     the hub sees kept fresh (OCM's hub sets it Unknown once the lease is five lease durations old, the same
//     bound as the active hub's check, FC-06).
//  3. Otherwise it does not: none, this spoke's, or a stale registration the agent may take over.
//
// A nil mc or an empty spokeID never belongs to another spoke.
func OwnedByAnotherSpoke(mc *clusterv1.ManagedCluster, spokeID string) (bool, string) {
	if mc == nil || spokeID == "" {
		return false, ""
	}
	if id := mc.Annotations[failoverv1alpha1.AnnotationClusterID]; id != "" && id != spokeID {
		return true, fmt.Sprintf("ManagedCluster %q is the replicator's copy for another spoke (%s %q, this spoke's identity is %q)",
			mc.Name, failoverv1alpha1.AnnotationClusterID, id, spokeID)
	}
	if id := claimValue(mc.Status.ClusterClaims, ClusterClaimID); id != "" && id != spokeID &&
		meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
		return true, fmt.Sprintf("ManagedCluster %q is registered by another spoke, available (its %s claim is %q, this spoke's identity is %q)",
			mc.Name, ClusterClaimID, id, spokeID)
	}
	return false, ""
}
