// Package leaselock frees a leader election Lease that the agent's own previous container still holds.
//
// library-go names a leader election candidate <hostname>_<uuid>; in a pod the hostname is the pod's name. When
// the agent's container is killed (a crash, an OOM kill, `kill -9`), it cannot release its Lease, and the kubelet
// restarts it in the same pod: the new container is a new candidate and waits for its own dead predecessor's Lease
// to expire, up to the lease duration (137 s by default), while nobody manages the cluster. Only one container of
// a pod's name runs at a time, so a Lease held by "<this pod>_<another uuid>" is a dead holder's: it is freed at
// start, and the election goes on as usual (another replica may win it). The candidate name is library-go's
// choice, not an API: TestLibraryGoCandidateIdentity pins it, so that a library-go that names candidates otherwise
// fails the tests instead of silently leaving a restarted container waiting.
package leaselock

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// HeldByEarlierContainer reports whether holder (a Lease's spec.holderIdentity) names an earlier container of the
// pod podName: it starts with "<podName>_". An empty podName (not in a pod) never matches.
func HeldByEarlierContainer(holder, podName string) bool {
	return podName != "" && strings.HasPrefix(holder, podName+"_")
}

// ReleaseIfHeldByEarlierContainer clears spec.holderIdentity of Lease namespace/name when
// HeldByEarlierContainer(holder, podName), with an Update carrying the resourceVersion just read, so that a
// Lease another candidate took meanwhile is left alone. It returns the identity it freed ("" when it changed
// nothing). A missing Lease, a Lease of another holder and a lost race (Conflict) change nothing and are not
// errors; other API errors are returned, naming the Lease.
func ReleaseIfHeldByEarlierContainer(ctx context.Context, leases coordinationv1client.LeasesGetter, namespace, name, podName string) (string, error) {
	if podName == "" {
		return "", nil
	}
	lease, err := leases.Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("get Lease %s/%s: %w", namespace, name, err)
	}
	if lease.Spec.HolderIdentity == nil || !HeldByEarlierContainer(*lease.Spec.HolderIdentity, podName) {
		return "", nil
	}
	freed := *lease.Spec.HolderIdentity
	lease = lease.DeepCopy()
	empty := ""
	lease.Spec.HolderIdentity = &empty
	if _, err := leases.Leases(namespace).Update(ctx, lease, metav1.UpdateOptions{}); apierrors.IsConflict(err) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("free Lease %s/%s held by %s: %w", namespace, name, freed, err)
	}
	return freed, nil
}
