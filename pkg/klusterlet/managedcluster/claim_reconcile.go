package managedcluster

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	clusterv1alpha1listers "open-cluster-management.io/api/client/cluster/listers/cluster/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
)

const (
	// ClusterClaimID is the reserved ClusterClaim holding the spoke's unique identifier; its
	// value is compared with the hub's copy to detect two spokes under one name (FC-06).
	ClusterClaimID = "id.k8s.io"
	// LabelSpokeOnly marks ClusterClaims that stay on the spoke: any value excludes the
	// claim from status.clusterClaims (as OCM's agent).
	LabelSpokeOnly = "open-cluster-management.io/spoke-only"
)

// reservedClaimNames are always exposed, regardless of MaxCustomClusterClaims
// (clusterv1alpha1.ReservedClusterClaimNames: id.k8s.io, kubeversion, platform, product).
var reservedClaimNames = sets.New(clusterv1alpha1.ReservedClusterClaimNames[:]...)

// claimReconciler sets status.clusterClaims: the reserved claims (the reserved names and every
// name ending with one of reservedSuffixes) sorted by name, then the custom claims sorted by
// name and cut to maxCustom. Claims labelled LabelSpokeOnly are
// skipped. When this spoke's identity is its kube-system UID (no id.k8s.io ClusterClaim),
// that UID is published as the id.k8s.io claim so that other agents can detect a name
// clash. A truncation is reported once per change of the found/allowed counts.
type claimReconciler struct {
	claimLister clusterv1alpha1listers.ClusterClaimLister
	maxCustom   int
	// reservedSuffixes are OCM's --reserved-cluster-claim-suffixes.
	reservedSuffixes []string

	// lastTruncation is the last reported "found/allowed" pair, "" when not truncated.
	lastTruncation string
}

func (r *claimReconciler) reconcile(_ context.Context, sc *statusSyncContext, cluster *clusterv1.ManagedCluster) (reconcileState, error) {
	claims, err := r.claimLister.List(labels.Everything())
	if err != nil {
		return reconcileContinue, fmt.Errorf("unable to list the ClusterClaims of ManagedCluster %q: %w", cluster.Name, err)
	}

	var reserved, custom []clusterv1.ManagedClusterClaim
	idClaimExists := false
	for _, claim := range claims {
		if claim.Name == ClusterClaimID {
			idClaimExists = true
		}
		if _, spokeOnly := claim.Labels[LabelSpokeOnly]; spokeOnly {
			continue
		}
		item := clusterv1.ManagedClusterClaim{Name: claim.Name, Value: claim.Spec.Value}
		if r.reserved(claim.Name) {
			reserved = append(reserved, item)
		} else {
			custom = append(custom, item)
		}
	}
	if !idClaimExists && sc.spokeIDFromKubeSystem && sc.spokeID != "" {
		reserved = append(reserved, clusterv1.ManagedClusterClaim{Name: ClusterClaimID, Value: sc.spokeID})
	}
	sortClaims(reserved)
	sortClaims(custom)

	truncation := ""
	if found := len(custom); found > r.maxCustom {
		truncation = fmt.Sprintf("%d/%d", found, r.maxCustom)
		if truncation != r.lastTruncation {
			sc.syncCtx.Recorder().Warningf(ReasonClusterClaimsTruncated,
				"%d custom ClusterClaims found, %d allowed (--max-custom-cluster-claims), %d dropped from the status of ManagedCluster %q (first dropped: %q)",
				found, r.maxCustom, found-r.maxCustom, cluster.Name, custom[r.maxCustom].Name)
		}
		custom = custom[:r.maxCustom]
	}
	r.lastTruncation = truncation

	cluster.Status.ClusterClaims = append(reserved, custom...)
	return reconcileContinue, nil
}

// reserved reports whether a claim name is reserved: one of the reserved names, or ending with one of the
// configured reserved suffixes.
func (r *claimReconciler) reserved(name string) bool {
	if reservedClaimNames.Has(name) {
		return true
	}
	for _, suffix := range r.reservedSuffixes {
		if strings.HasSuffix(name, suffix) { // as OCM: an empty suffix makes every claim reserved
			return true
		}
	}
	return false
}

func sortClaims(claims []clusterv1.ManagedClusterClaim) {
	sort.Slice(claims, func(i, j int) bool { return claims[i].Name < claims[j].Name })
}
