// Package uninstall removes from a hub what the replicator put there that would hold users or mislead agents once
// the replicator is gone: the fence, the delete-copies finalizer, the cluster-hub marks and the in-step report.
// It is `klusterlet-failover replicator uninstall`, run on every hub after the replicator is stopped.
//
// A delete the finalizer holds is one the replicator had still to make on the other hubs: given the other hubs
// (Peer), the uninstall makes it there first — the copies of the deleted object are deleted, then the finalizer
// goes — so that no later switch to another hub runs the deleted object again. A held delete whose copies cannot
// all be deleted keeps its finalizer (the delete stays held, the error is returned); without peers the finalizer
// is removed and the copies stay (Report.HeldWithoutPeers).
//
// What stays: the marks by which the replicator recognises its copies (mirror.LabelReplicatedFrom and the
// source annotations). Without a replicator they are inert labels and annotations; a replicator installed again
// takes those copies up where it left them.
package uninstall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// clusterAnnotations are the annotations the replicator keeps on ManagedClusters that say where a cluster is and
// how the other hubs stand: an agent reads the in-step report, a person the cluster-hub marks; and the tombstones
// of deletes seen there (deletes-seen: a delete not yet made on every hub is not made by uninstall). has-copies,
// on originals of every kind, is removed with them.
var clusterAnnotations = []string{
	mirror.AnnotationHubsInStep, mirror.AnnotationHubsBehind, mirror.AnnotationHubsReported, mirror.AnnotationMovedFrom, mirror.AnnotationWrittenBackEpoch, mirror.AnnotationDeletesSeen,
	mirror.AnnotationClusterHub, mirror.AnnotationClusterHubSince,
}

// Report is what Hub removed, for the command's output.
type Report struct {
	// Fence is true when the fence's ValidatingAdmissionPolicy or its binding was there and was deleted.
	Fence bool
	// Finalizers is the number of objects that lost mirror.FinalizerDeleteCopies (deletes it held finish).
	Finalizers int
	// Annotated is the number of objects that lost the in-step report, cluster-hub marks or has-copies.
	Annotated int
	// Namespaces is the number of cluster namespaces that lost the fence's marks.
	Namespaces int
	// NotServed are the kinds the hub does not serve (skipped).
	NotServed []failoverv1alpha1.ReplicatedKind
	// CopiesDeleted is the number of copies, on the peers, of objects whose delete was held here.
	CopiesDeleted int
	// HeldWithoutPeers is the number of held deletes finished here without peers: their copies on the other hubs
	// stay, and a switch to one of those hubs runs them again.
	HeldWithoutPeers int
	// TombstonesWithoutPeers is the number of tombstones (mirror.AnnotationDeletesSeen: deletes seen here that had
	// not reached every hub) dropped here without peers: the objects they stand for on the other hubs stay.
	TombstonesWithoutPeers int
}

// Peer is another hub of the ReplicationConfig, on which the copies of this hub's held deletes are deleted.
type Peer struct {
	// Name names the hub in messages (its kubeconfig's server).
	Name string
	// Client talks to the hub as a user who may get, patch and delete every replicated kind.
	Client dynamic.Interface
}

// String is the one-line summary the command prints.
func (r Report) String() string {
	out := fmt.Sprintf("fence removed: %t; delete-copies finalizers removed: %d; objects unannotated: %d; cluster namespaces unmarked: %d; kinds not served: %v; copies of held deletes deleted on the peers: %d",
		r.Fence, r.Finalizers, r.Annotated, r.Namespaces, r.NotServed, r.CopiesDeleted)
	if r.HeldWithoutPeers > 0 {
		out += fmt.Sprintf("; WARNING: %d held deletes finished here without --peer-kubeconfig: their copies on the other hubs stay, and a switch to one of them runs them again", r.HeldWithoutPeers)
	}
	if r.TombstonesWithoutPeers > 0 {
		out += fmt.Sprintf("; WARNING: %d deletes recorded here (tombstones) dropped without --peer-kubeconfig: the objects they stand for on the other hubs stay, and a switch to one of them runs them again", r.TombstonesWithoutPeers)
	}
	return out
}

// Hub removes the replicator's fence, finalizers, marks and report from the hub client talks to, for kinds (the
// replicated kinds: mirror.ResolveKinds of the ReplicationConfig, or mirror.Kinds). For an object whose delete
// the finalizer holds, its copies on peers are deleted first (deleteCopies), the fence on the peers removed
// before (it would refuse those deletes); one whose copies could not all be deleted keeps its finalizer. The
// replicator must be stopped first: it would put them back. Each object is patched on its resourceVersion and read again after a
// conflict (client-go's retry.DefaultRetry), so no write of another client is lost. It goes on past an object
// that fails and returns the errors joined, with what it did; running it again finishes the rest.
func Hub(ctx context.Context, client dynamic.Interface, kinds []mirror.Kind, peers ...Peer) (Report, error) {
	var r Report
	var errs []error
	removed, err := removeFence(ctx, client)
	r.Fence = removed
	if err != nil {
		errs = append(errs, err)
	}
	for _, p := range peers {
		// The fence there would refuse the deletes of copies of a cluster managed from another hub.
		if _, err := removeFence(ctx, p.Client); err != nil {
			errs = append(errs, fmt.Errorf("hub %s: %w", p.Name, err))
		}
	}
	for _, k := range kinds {
		// Secrets and ConfigMaps only by the backup label the replicator mirrors them by (Kind.LabelSelector).
		list, err := client.Resource(k.GVR).List(ctx, metav1.ListOptions{LabelSelector: k.LabelSelector})
		if apierrors.IsNotFound(err) {
			r.NotServed = append(r.NotServed, k.Name)
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("listing %s: %w", k.Name, err))
			continue
		}
		for i := range list.Items {
			obj := &list.Items[i]
			if mirror.HoldsDelete(obj) {
				if len(peers) == 0 {
					r.HeldWithoutPeers++
				} else {
					held := mirror.DeletedOf(obj)
					n, err := deleteCopies(ctx, k, obj.GetNamespace(), obj.GetName(), &held, peers)
					r.CopiesDeleted += n
					if err != nil {
						// The delete stays held here: its copies must not outlive it.
						errs = append(errs, fmt.Errorf("%s %s/%s is being deleted: deleting its copies first: %w", k.Name, obj.GetNamespace(), obj.GetName(), err))
						continue
					}
				}
			}
			if k.Name == failoverv1alpha1.KindManagedCluster {
				n, dropped, err := deleteTombstoned(ctx, kinds, obj, peers)
				r.CopiesDeleted += n
				r.TombstonesWithoutPeers += dropped
				if err != nil {
					// The tombstones stay here: the deletes they record must not be lost.
					errs = append(errs, fmt.Errorf("ManagedCluster %s: making the deletes it records (%s) on the other hubs first: %w", obj.GetName(), mirror.AnnotationDeletesSeen, err))
					continue
				}
			}
			finalizer, annotated, err := clean(ctx, client, k, obj)
			if finalizer {
				r.Finalizers++
			}
			if annotated {
				r.Annotated++
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	namespaces, err := client.Resource(mirror.NamespaceGVR).List(ctx, metav1.ListOptions{LabelSelector: fence.LabelClusterHub})
	if err != nil {
		errs = append(errs, fmt.Errorf("listing the cluster namespaces marked %s: %w", fence.LabelClusterHub, err))
	} else {
		patch, _ := json.Marshal(fence.NamespaceMark("", metav1.Now().Time))
		for _, ns := range namespaces.Items {
			if _, err := client.Resource(mirror.NamespaceGVR).Patch(ctx, ns.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				if !apierrors.IsNotFound(err) {
					errs = append(errs, fmt.Errorf("unmarking namespace %s: %w", ns.GetName(), err))
				}
				continue
			}
			r.Namespaces++
		}
	}
	return r, errors.Join(errs...)
}

// clean removes mirror.FinalizerDeleteCopies and the replicator's cluster annotations and has-copies from obj,
// in one patch on its resourceVersion, reading it again after a conflict. It reports what was removed.
func clean(ctx context.Context, client dynamic.Interface, k mirror.Kind, obj *unstructured.Unstructured) (finalizer, annotated bool, err error) {
	res := client.Resource(k.GVR).Namespace(obj.GetNamespace())
	if !k.Namespaced {
		res = client.Resource(k.GVR).Namespace("")
	}
	first := true
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			fresh, err := res.Get(ctx, obj.GetName(), metav1.GetOptions{})
			if err != nil {
				return err
			}
			obj = fresh
		}
		first = false
		patch, hasFinalizer, hasAnnotations := cleanPatch(obj)
		if patch == nil {
			return nil
		}
		if _, err := res.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
		finalizer, annotated = hasFinalizer, hasAnnotations
		return nil
	})
	if apierrors.IsNotFound(err) {
		return finalizer, annotated, nil
	}
	if err != nil {
		return finalizer, annotated, fmt.Errorf("cleaning %s %s/%s: %w", k.Name, obj.GetNamespace(), obj.GetName(), err)
	}
	return finalizer, annotated, nil
}

// cleanPatch returns the JSON merge patch (RFC 7386) that removes mirror.FinalizerDeleteCopies, the cluster
// annotations and mirror.AnnotationHasCopies from obj, with its resourceVersion as a precondition; nil when obj
// carries none of them.
func cleanPatch(obj *unstructured.Unstructured) (patch []byte, finalizer, annotated bool) {
	metadata := map[string]any{"resourceVersion": obj.GetResourceVersion()}
	finalizers := obj.GetFinalizers()
	if slices.Contains(finalizers, mirror.FinalizerDeleteCopies) {
		finalizer = true
		left := slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool { return f == mirror.FinalizerDeleteCopies })
		if len(left) == 0 {
			metadata["finalizers"] = nil
		} else {
			metadata["finalizers"] = left
		}
	}
	annotations := map[string]any{}
	for _, a := range append(slices.Clone(clusterAnnotations), mirror.AnnotationHasCopies) {
		if _, ok := obj.GetAnnotations()[a]; ok {
			annotations[a] = nil
		}
	}
	if len(annotations) > 0 {
		annotated = true
		metadata["annotations"] = annotations
	}
	if !finalizer && !annotated {
		return nil, false, false
	}
	patch, _ = json.Marshal(map[string]any{"metadata": metadata})
	return patch, finalizer, annotated
}

// fenceGone bounds how long a delete on a peer is retried while the peer's apiserver still applies the fence it
// was told to drop (a ValidatingAdmissionPolicy's removal takes effect within seconds).
const fenceGone = 30 * time.Second

// removeFence deletes the fence's ValidatingAdmissionPolicyBinding and ValidatingAdmissionPolicy from the hub
// client talks to; removed reports that either was there.
func removeFence(ctx context.Context, client dynamic.Interface) (removed bool, err error) {
	var errs []error
	for _, gvr := range [...]struct {
		what string
		res  dynamic.NamespaceableResourceInterface
	}{{"binding", client.Resource(fence.BindingGVR)}, {"policy", client.Resource(fence.PolicyGVR)}} {
		err := gvr.res.Delete(ctx, fence.PolicyName, metav1.DeleteOptions{})
		switch {
		case err == nil:
			removed = true
		case apierrors.IsNotFound(err):
		default:
			errs = append(errs, fmt.Errorf("deleting the fence's ValidatingAdmission %s %s: %w", gvr.what, fence.PolicyName, err))
		}
	}
	return removed, errors.Join(errs...)
}

// deleteTombstoned makes on peers the deletes mc's tombstones record (mirror.AnnotationDeletesSeen: a copy
// deleted on this hub, its cluster's source, before the delete reached every hub): for each of a kind in kinds,
// the object of that name in the cluster's namespace that the delete stands for (deleteCopies). Without peers it
// deletes nothing and counts those tombstones as dropped. The tombstones of a ManagedCluster that is a copy (this
// hub is not the cluster's source) are left to be dropped: the replicator never honoured them. It returns how many
// objects it deleted, how many tombstones it dropped and the peers' errors joined.
func deleteTombstoned(ctx context.Context, kinds []mirror.Kind, mc *unstructured.Unstructured, peers []Peer) (deleted, dropped int, err error) {
	if mirror.IsCopy(mc) {
		// This hub is not the cluster's source: the replicator honours only the source's tombstones (one left here
		// from before the cluster moved may be older than what the source holds now).
		return 0, 0, nil
	}
	tombstones := mirror.ParseTombstones(mc.GetAnnotations()[mirror.AnnotationDeletesSeen])
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(tombstones)) {
		kind, name, _ := strings.Cut(key, "/")
		i := slices.IndexFunc(kinds, func(k mirror.Kind) bool { return string(k.Name) == kind })
		if i < 0 {
			continue
		}
		if len(peers) == 0 {
			dropped++
			continue
		}
		d := tombstones[key]
		n, err := deleteCopies(ctx, kinds[i], mc.GetName(), name, &d, peers)
		deleted += n
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s/%s: %w", kind, mc.GetName(), name, err))
		}
	}
	return deleted, dropped, errors.Join(errs...)
}

// deleteCopies deletes, on every peer, the object of kind k, namespace and name that stands for held, a delete
// held or seen here (mirror.Deleted.Explains: a copy made from the deleted object or from the original it was made
// from, or that original); never the deleted object itself (a peer that is this hub), nor an object the peer's
// own controllers generated (mirror.GeneratedHere). The delete is a plain one on the object's UID: with no
// replicator left, each hub's controllers finish it as they would a user's (OCM's work agent, once the cluster is
// on that hub; the add-on manager's pre-delete hook). It returns how many it deleted; an error names the peer.
func deleteCopies(ctx context.Context, k mirror.Kind, namespace, name string, held *mirror.Deleted, peers []Peer) (int, error) {
	deleted := 0
	var errs []error
	for _, p := range peers {
		res := p.Client.Resource(k.GVR).Namespace(namespace)
		other, err := res.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("hub %s: %w", p.Name, err))
			continue
		case string(other.GetUID()) == held.UID || other.GetDeletionTimestamp() != nil || mirror.GeneratedHere(k, other) || !held.Explains(other):
			continue
		}
		uid := other.GetUID()
		// The fence, just removed from the peer, may still refuse for the moments its apiserver takes to drop
		// the policy: its 403 is retried, for fenceGone at most; any other 403 (RBAC) fails at once.
		err = wait.PollUntilContextTimeout(ctx, time.Second, fenceGone, true, func(ctx context.Context) (bool, error) {
			err := res.Delete(ctx, other.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if apierrors.IsForbidden(err) && strings.Contains(err.Error(), fence.PolicyName) {
				return false, nil
			}
			return true, err
		})
		if wait.Interrupted(err) {
			err = fmt.Errorf("refused (403) for %s after the fence was removed: %w", fenceGone, err)
		}
		switch {
		case err == nil:
			deleted++
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			// Gone, or made again under the name since it was read: not this copy any more.
		default:
			errs = append(errs, fmt.Errorf("hub %s: deleting %s %s/%s: %w", p.Name, k.Name, other.GetNamespace(), other.GetName(), err))
		}
	}
	return deleted, errors.Join(errs...)
}
