package replication

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/metrics"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// keyFencePolicy is the Kind of the queue key (Name: a hub) that installs the fence policy on a hub.
const keyFencePolicy = "FencePolicy"

// syncFencePolicy installs (server-side apply, forced) fence.Policy and fence.Binding on hub, exempting the
// replicator's own username there (a SelfSubjectReview). A hub that does not serve the policy API (Kubernetes
// before 1.30) is reported once (event ReasonFenceUnavailable) and left unfenced.
func (c *Controller) syncFencePolicy(ctx context.Context, hub string) error {
	h := c.byName[hub]
	if h == nil || !h.Ready() {
		return nil // enqueued again when the hub becomes ready
	}
	user, err := whoAmI(ctx, h)
	if apierrors.IsNotFound(err) {
		c.opts.Recorder.Warningf(ReasonFenceUnavailable, "hub %s does not serve SelfSubjectReview (authentication.k8s.io/v1, Kubernetes 1.28 or later): "+
			"changes to clusters managed from another hub are not refused there", hub)
		return nil
	}
	if err != nil {
		return fmt.Errorf("fence on hub %s: %w", hub, err)
	}
	policy, err := fence.Policy(hub, user, c.opts.Kinds)
	if err != nil {
		return err
	}
	for _, obj := range []struct {
		what string
		gvr  schema.GroupVersionResource
		obj  runtime.Object
	}{{"ValidatingAdmissionPolicy", fence.PolicyGVR, policy}, {"ValidatingAdmissionPolicyBinding", fence.BindingGVR, fence.Binding()}} {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj.obj)
		if err != nil {
			return fmt.Errorf("fence on hub %s: %s: %w", hub, obj.what, err)
		}
		u := &unstructured.Unstructured{Object: content}
		_, err = h.Client().Resource(obj.gvr).Apply(ctx, fence.PolicyName, u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
		if apierrors.IsNotFound(err) {
			c.opts.Recorder.Warningf(ReasonFenceUnavailable, "hub %s does not serve %s (admissionregistration.k8s.io/v1, Kubernetes 1.30 or later): "+
				"changes to clusters managed from another hub are not refused there", hub, obj.what)
			return nil
		}
		h.ReportError(err)
		if err != nil {
			metrics.WriteErrors.WithLabelValues(obj.what, hub).Inc()
			return fmt.Errorf("fence on hub %s: applying %s %s: %w", hub, obj.what, fence.PolicyName, err)
		}
	}
	c.logger.Info("Fence installed", "hub", hub, "policy", fence.PolicyName, "exemptUser", user, "exemptGroup", fence.GroupManagedClusters)
	return nil
}

// whoAmI returns the replicator's username on hub h (authentication.k8s.io/v1 SelfSubjectReview, which every
// authenticated user may create).
func whoAmI(ctx context.Context, h *hubconn.Hub) (string, error) {
	review := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}}
	out, err := h.Client().Resource(fence.SelfSubjectReviewGVR).Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("asking the hub who the replicator is (SelfSubjectReview): %w", err)
	}
	user, _, _ := unstructured.NestedString(out.Object, "status", "userInfo", "username")
	if user == "" {
		return "", fmt.Errorf("the SelfSubjectReview returned no username")
	}
	return user, nil
}

// syncFenceMarks keeps the fence marks (fence.NamespaceMark) of cluster's namespace on every ready hub: on the
// cluster's source hub none, on every other the source's name and since when. A namespace that does not exist
// yet is created with its marks. A hub marked as a standby has its incarnation advanced after (markWritten): a
// restore of a backup taken before the marks is found. Marks already written are remembered per hub until the
// hub is lost. The source's
// marks are lifted only once every copy there holds deletes (holdCopies); until then users stay fenced out.
func (c *Controller) syncFenceMarks(ctx context.Context, cluster, source string, since time.Time) error {
	var errs []error
	for _, h := range c.opts.Hubs {
		if !h.Ready() {
			continue
		}
		want := ""
		if h.Name() != source {
			want = source + "@" + since.UTC().Format(time.RFC3339)
		}
		have, known := c.fenceMarks.of(h.Name(), cluster)
		if known && have == want {
			continue
		}
		if want == "" {
			held, err := c.holdCopies(ctx, h, cluster)
			if err != nil {
				errs = append(errs, err)
			}
			if !held {
				continue
			}
		}
		markedSource := source
		if h.Name() == source {
			markedSource = ""
		}
		if err := c.markNamespace(ctx, h, cluster, fence.NamespaceMark(markedSource, since)); err != nil {
			h.ReportError(err)
			metrics.WriteErrors.WithLabelValues("Namespace", h.Name()).Inc()
			errs = append(errs, fmt.Errorf("fence marks of namespace %s on hub %s: %w", cluster, h.Name(), err))
			continue
		}
		c.fenceMarks.wrote(h.Name(), cluster, want)
		if want != "" {
			c.markWritten(h.Name())
		}
	}
	return errors.Join(errs...)
}

// holdCopyRetry is how long after a hold refused because the hub's cache was behind holdCopies tries again.
const holdCopyRetry = time.Second

// holdCopies writes mirror.HoldCopyPatch on each copy of cluster's objects on hub h, the cluster's source, that
// does not hold deletes yet (copies are written unheld while their hub is a standby): the user who may delete
// them once the fence is lifted makes a delete the replicator sees, also if it is stopped or cut off from h right
// after, and that reaches the original on the hub the cluster left (mirror.Decide, rule 2) instead of being taken
// for a copy h lost. Only the cluster's own objects are held (a hub-wide kind's object in a namespace of the
// cluster's name is not). held reports whether every such copy is held now; a write refused because h's cache is
// behind (409) is tried again after holdCopyRetry (the ManagedCluster's key is queued), another failure is
// returned. A copy the cache does not show yet is held by its own key's sync (markCopies).
func (c *Controller) holdCopies(ctx context.Context, h *hubconn.Hub, cluster string) (held bool, err error) {
	held = true
	var errs []error
	for _, k := range c.opts.Kinds {
		if !k.Namespaced || !h.Serves(k.Name) {
			continue
		}
		for _, n := range h.List(k.Name, cluster) {
			if _, ok := k.ClusterOf(n.Namespace, n.Name, c.isCluster); !ok {
				continue
			}
			obj, _ := h.Peek(k.Name, n.Namespace, n.Name)
			patch := mirror.HoldCopyPatch(k, obj)
			if patch == nil {
				continue
			}
			_, err := h.Client().Resource(k.GVR).Namespace(n.Namespace).Patch(ctx, n.Name, types.MergePatchType, patch,
				metav1.PatchOptions{FieldManager: FieldManager})
			switch {
			case err == nil, apierrors.IsNotFound(err):
				continue
			case apierrors.IsConflict(err):
				c.queue.AddAfter(Key{Kind: failoverv1alpha1.KindManagedCluster, Name: cluster}, holdCopyRetry)
			default:
				h.ReportError(err)
				metrics.WriteErrors.WithLabelValues(string(k.Name), h.Name()).Inc()
				errs = append(errs, fmt.Errorf("holding the deletes of copy %s/%s of %s on hub %s before lifting the fence: %w", n.Namespace, n.Name, k.Name, h.Name(), err))
			}
			held = false
		}
	}
	return held, errors.Join(errs...)
}

// markNamespace merge-patches namespace name on h with patch. A namespace not there yet is created with patch's
// labels and annotations, through ensureNamespace: when a worker writing the cluster's first copy is creating it
// at the same time, that create is shared, and the marks are patched on once it is made.
func (c *Controller) markNamespace(ctx context.Context, h *hubconn.Hub, name string, patch map[string]any) error {
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	client := h.Client().Resource(mirror.NamespaceGVR)
	_, err = client.Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: FieldManager})
	if !apierrors.IsNotFound(err) {
		return err
	}
	meta, _ := patch["metadata"].(map[string]any)
	made, err := c.ensureNamespace(ctx, h, name, meta)
	if err != nil || made {
		return err
	}
	_, err = client.Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: FieldManager})
	return err
}
