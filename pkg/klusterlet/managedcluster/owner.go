package managedcluster

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	clusterv1alpha1client "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// SpokeIdentities are the identities a spoke may have reported to hubs (FC-06, and the replicator's cluster
// identity): the value of its id.k8s.io ClusterClaim (KEP-2149; "" when it has none) and the UID of its
// kube-system Namespace, which the agent reports while the spoke has no such claim. A spoke that gets the claim
// later (ACM's work-manager add-on makes one) has reported both.
type SpokeIdentities struct {
	Claim         string
	KubeSystemUID string
}

// Current returns the identity the agent reports now: the claim, else the kube-system UID ("" when neither is
// known).
func (s SpokeIdentities) Current() string {
	if s.Claim != "" {
		return s.Claim
	}
	return s.KubeSystemUID
}

// Has reports whether id, not empty, is one of s.
func (s SpokeIdentities) Has(id string) bool {
	return id != "" && (id == s.Claim || id == s.KubeSystemUID)
}

// SpokeIdentityReader reads the spoke's identities for every part of the agent that checks them (the status
// controller of each hub session, the standby probes), so that all agree on one answer and the kube-system
// Namespace is read once per process: its UID is the cluster's for the cluster's life (a --spoke-kubeconfig
// repointed at another cluster is another spoke: restart the agent). The agent's composition root builds one; it
// is safe for concurrent use, and no caller waits on another's read.
type SpokeIdentityReader struct {
	namespaces corev1client.NamespacesGetter

	mu            sync.Mutex
	kubeSystemUID string
}

// NewSpokeIdentityReader returns a reader that reads the kube-system Namespace through namespaces, a client of the
// managed cluster.
func NewSpokeIdentityReader(namespaces corev1client.NamespacesGetter) *SpokeIdentityReader {
	return &SpokeIdentityReader{namespaces: namespaces}
}

// NewKnownSpokeIdentityReader returns a reader whose kube-system UID is uid (not empty), read from no cluster:
// for agents that share one spoke apiserver but each stand for a cluster of their own (hollow agents).
func NewKnownSpokeIdentityReader(uid string) *SpokeIdentityReader {
	return &SpokeIdentityReader{kubeSystemUID: uid}
}

// KubeSystemUID returns the UID of the spoke's kube-system Namespace, read until a read succeeds (concurrent first
// reads each make their own, bounded by their ctx). It returns an error naming the Namespace when it cannot be
// read.
func (r *SpokeIdentityReader) KubeSystemUID(ctx context.Context) (string, error) {
	r.mu.Lock()
	uid := r.kubeSystemUID
	r.mu.Unlock()
	if uid != "" {
		return uid, nil
	}
	ns, err := r.namespaces.Namespaces().Get(ctx, kubeSystemNamespace, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("unable to get Namespace %q of the spoke: %w", kubeSystemNamespace, err)
	}
	r.mu.Lock()
	r.kubeSystemUID = string(ns.UID)
	r.mu.Unlock()
	return string(ns.UID), nil
}

// Read returns the spoke's identities: the id.k8s.io ClusterClaim read now through claims, a client of the managed
// cluster (an absent claim is no error), and KubeSystemUID. It returns an error naming the object it could not
// read.
func (r *SpokeIdentityReader) Read(ctx context.Context, claims clusterv1alpha1client.ClusterClaimsGetter) (SpokeIdentities, error) {
	var ids SpokeIdentities
	claim, err := claims.ClusterClaims().Get(ctx, ClusterClaimID, metav1.GetOptions{})
	switch {
	case err == nil:
		ids.Claim = claim.Spec.Value
	case !apierrors.IsNotFound(err):
		return SpokeIdentities{}, fmt.Errorf("unable to get ClusterClaim %q of the spoke: %w", ClusterClaimID, err)
	}
	if ids.KubeSystemUID, err = r.KubeSystemUID(ctx); err != nil {
		return SpokeIdentities{}, err
	}
	return ids, nil
}

// OwnedByAnotherSpoke reports whether mc, the ManagedCluster of the agent's cluster name on a hub, belongs to a
// spoke other than the one of ids, with a sentence saying why. Joining such a hub would make OCM's work agent
// run the other spoke's ManifestWorks here and evict this spoke's. The rules, in order:
//  1. mc is the replicator's copy (failoverv1alpha1.LabelReplicatedFrom) and its
//     failoverv1alpha1.AnnotationClusterID names an identity that is none of ids: a copy kept for another
//     spoke, which lives on another hub (a copy's lease is not renewed, so its freshness says nothing).
//  2. Its id.k8s.io claim is none of ids and its ManagedClusterConditionAvailable is True: a registration the
//     hub sees kept fresh (OCM's hub sets it Unknown once the lease is five lease durations old, the bound of the
//     active hub's check, FC-06).
//  3. Otherwise it does not: none, this spoke's (under its claim or its kube-system UID), or a stale
//     registration the agent may take over.
//
// A nil mc or ids without a current identity never belong to another spoke.
func OwnedByAnotherSpoke(mc *clusterv1.ManagedCluster, ids SpokeIdentities) (bool, string) {
	if mc == nil || ids.Current() == "" {
		return false, ""
	}
	if _, isCopy := mc.Labels[failoverv1alpha1.LabelReplicatedFrom]; isCopy {
		if id := mc.Annotations[failoverv1alpha1.AnnotationClusterID]; id != "" && !ids.Has(id) {
			return true, fmt.Sprintf("ManagedCluster %q is the replicator's copy for another spoke (%s %q, this spoke's identity is %q)",
				mc.Name, failoverv1alpha1.AnnotationClusterID, id, ids.Current())
		}
	}
	if id := claimValue(mc.Status.ClusterClaims, ClusterClaimID); id != "" && !ids.Has(id) &&
		meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
		return true, fmt.Sprintf("ManagedCluster %q is registered by another spoke, available (its %s claim is %q, this spoke's identity is %q)",
			mc.Name, ClusterClaimID, id, ids.Current())
	}
	return false, ""
}
