package secretvolume

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1informers "k8s.io/client-go/informers/core/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// ContentHashAnnotation is the pod annotation the controller sets to the hash of the Secret's data (hex
	// SHA-256 of the sorted keys and values, first 16 bytes): a change of it is the pod update that makes the
	// kubelet remount the pod's Secret volumes.
	ContentHashAnnotation = "failover.open-cluster-management.io/hub-kubeconfig-hash"

	// ReasonSecretVolumesRefreshed (Normal): pods mounting the hub kubeconfig Secret were annotated with its new
	// content hash, so the kubelet remounts their volumes now rather than on its next periodic sync.
	ReasonSecretVolumesRefreshed = "SecretVolumesRefreshed"
	// ReasonSecretVolumeRefreshForbidden (Warning, once per content): the agent may not list or patch pods in its
	// namespace; pods that mount the Secret see the new content only on the kubelet's periodic sync (about a
	// minute). Grant list and patch on pods in the agent namespace to remove the delay.
	ReasonSecretVolumeRefreshForbidden = "SecretVolumeRefreshForbidden"
	// ReasonHubKubeconfigConsumerBackOff (Warning, once per container restart): a container of a pod that mounts
	// the Secret waits in the kubelet's restart back-off (waiting reason CrashLoopBackOff). OCM's work agent and
	// add-on agents exit when their hub kubeconfig changes and the kubelet restarts them; it restarts a container
	// at once only if it last restarted it more than ten minutes before, and otherwise waits 10 s, then 20 s, 40 s
	// ... up to 5 minutes, during which that agent serves no hub.
	ReasonHubKubeconfigConsumerBackOff = "HubKubeconfigConsumerBackOff"

	// crashLoopBackOff is the kubelet's waiting reason of a container whose restart it delays
	// (k8s.io/kubernetes pkg/kubelet/container ErrCrashLoopBackOff).
	crashLoopBackOff = "CrashLoopBackOff"
)

// After pods were annotated, the controller syncs every backOffCheckInterval for backOffCheckWindow to look for
// their containers in the kubelet's restart back-off: a consumer of the Secret exits a few seconds after the
// kubelet remounted it, and the kubelet shows the back-off (the container waiting, reason CrashLoopBackOff) for
// as long as it delays the restart, 10 s at the least.
const (
	backOffCheckInterval = 5 * time.Second
	backOffCheckWindow   = time.Minute
)

// RefreshController annotates the pods of one namespace that mount one Secret (as a secret volume or a projected
// source) whenever the Secret's data changes. Pods that are being deleted and pods whose annotation already
// holds the current hash are left alone. For backOffCheckWindow after it annotated pods it syncs every
// backOffCheckInterval and reports containers of those pods that wait in the kubelet's restart back-off
// (ReasonHubKubeconfigConsumerBackOff).
type RefreshController struct {
	namespace string
	name      string
	secrets   corev1listers.SecretLister
	pods      corev1client.PodsGetter

	// forbiddenFor is the hash of the content a Forbidden answer was reported for (one Warning per content).
	forbiddenFor string
	// backOffReported holds, per container in back-off already reported, "<pod UID>/<container>/<restart count>";
	// it keeps only the containers of the last sync.
	backOffReported map[string]bool
	// checkBackOffUntil is the end of the back-off check window of the last annotation; annotated holds the UIDs
	// of the pods annotated since the window opened, the only ones checked.
	checkBackOffUntil time.Time
	annotated         map[types.UID]bool
	clock             clock.PassiveClock
}

// NewRefreshController returns the controller for Secret namespace/name, watching it through secretInformer (an
// informer of namespace) and listing and patching pods through pods. It syncs on every event of the Secret and
// every resync (0: none), which retries what an earlier sync could not do: after a Forbidden answer (the sync
// returns nil, the Warning was emitted) only the resync tries again; any other failed patch returns an error,
// and library-go requeues the sync with back-off.
func NewRefreshController(namespace, name string, secretInformer corev1informers.SecretInformer, pods corev1client.PodsGetter,
	resync time.Duration, recorder events.Recorder) factory.Controller {
	c := &RefreshController{namespace: namespace, name: name, secrets: secretInformer.Lister(), pods: pods, clock: clock.RealClock{}}
	f := factory.New().
		WithFilteredEventsInformers(factory.NamesFilter(name), secretInformer.Informer()).
		WithSync(c.sync)
	if resync > 0 {
		f = f.ResyncEvery(resync)
	}
	return f.ToController("SecretVolumeRefreshController", recorder)
}

func (c *RefreshController) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	logger := klog.FromContext(ctx).WithValues("secret", klog.KRef(c.namespace, c.name))
	secret, err := c.secrets.Secrets(c.namespace).Get(c.name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get secret %s/%s: %w", c.namespace, c.name, err)
	}
	hash := ContentHash(secret.Data)
	pods, err := c.pods.Pods(c.namespace).List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		c.reportForbidden(syncCtx, hash, err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("list pods in %s: %w", c.namespace, err)
	}
	var patched []string
	var patchedUIDs []types.UID
	var errs []error
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !NeedsRefresh(pod, c.name, hash) {
			continue
		}
		err := c.annotate(ctx, pod, hash)
		switch {
		case err == nil:
			patched = append(patched, pod.Name)
			patchedUIDs = append(patchedUIDs, pod.UID)
			continue
		case apierrors.IsNotFound(err), apierrors.IsInvalid(err), apierrors.IsConflict(err):
			// Deleted, or re-created under the same name (the UID in the patch no longer matches): the pod
			// that mounts the Secret now was created after the change and has its new content.
			logger.V(2).Info("Pod gone or replaced; not annotated", "pod", pod.Name, "err", err)
			continue
		case apierrors.IsForbidden(err):
			c.reportForbidden(syncCtx, hash, err)
		default:
			errs = append(errs, err)
			continue
		}
		break // forbidden: so are the others
	}
	if len(patched) > 0 {
		logger.Info("Annotated pods so that the kubelet refreshes their Secret volumes", "pods", patched, "hash", hash)
		syncCtx.Recorder().Eventf(ReasonSecretVolumesRefreshed, "Secret %s/%s changed: annotated pod(s) %v (%s=%s) so that the kubelet remounts it now",
			c.namespace, c.name, patched, ContentHashAnnotation, hash)
		if !c.clock.Now().Before(c.checkBackOffUntil) {
			c.annotated = map[types.UID]bool{}
		}
		for _, uid := range patchedUIDs {
			c.annotated[uid] = true
		}
		c.checkBackOffUntil = c.clock.Now().Add(backOffCheckWindow)
	}
	if c.clock.Now().Before(c.checkBackOffUntil) {
		c.reportBackOff(syncCtx, pods.Items)
		syncCtx.Queue().AddAfter(syncCtx.QueueKey(), backOffCheckInterval)
	}
	return errors.Join(errs...)
}

// reportBackOff emits one ReasonHubKubeconfigConsumerBackOff per container restart for the containers (init
// containers included) of the pods annotated in the current check window that wait in the kubelet's restart
// back-off.
func (c *RefreshController) reportBackOff(syncCtx factory.SyncContext, pods []corev1.Pod) {
	seen := map[string]bool{}
	for i := range pods {
		pod := &pods[i]
		if !c.annotated[pod.UID] {
			continue
		}
		for _, st := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
			if st.State.Waiting == nil || st.State.Waiting.Reason != crashLoopBackOff {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", pod.UID, st.Name, st.RestartCount)
			seen[key] = true
			if c.backOffReported[key] {
				continue
			}
			syncCtx.Recorder().Warningf(ReasonHubKubeconfigConsumerBackOff,
				"container %s of pod %s, which reads Secret %s/%s, waits in the kubelet's restart back-off after %d restarts and serves no hub until it is restarted: %s; "+
					"by default the kubelet delays a restart (10 s, doubling up to 5 min) when the container last restarted less than 10 minutes before, as after hub switches in quick succession",
				st.Name, pod.Name, c.namespace, c.name, st.RestartCount, st.State.Waiting.Message)
		}
	}
	c.backOffReported = seen
}

// annotate sets ContentHashAnnotation on pod with a merge patch that also carries the pod's UID: the apiserver
// rejects a patch that would change a pod's UID (422 Invalid, metadata.uid is immutable), so a pod re-created
// under the same name is not patched.
func (c *RefreshController) annotate(ctx context.Context, pod *corev1.Pod, hash string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         pod.UID,
		"annotations": map[string]string{ContentHashAnnotation: hash},
	}})
	if err != nil {
		return err
	}
	if _, err := c.pods.Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("annotate pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// reportForbidden emits one ReasonSecretVolumeRefreshForbidden per content hash.
func (c *RefreshController) reportForbidden(syncCtx factory.SyncContext, hash string, err error) {
	if c.forbiddenFor == hash {
		return
	}
	c.forbiddenFor = hash
	syncCtx.Recorder().Warningf(ReasonSecretVolumeRefreshForbidden,
		"pods mounting Secret %s/%s see its new content only on the kubelet's next sync (about a minute): %v; grant list and patch on pods in namespace %s",
		c.namespace, c.name, err, c.namespace)
}

// NeedsRefresh reports whether pod mounts Secret secretName (a secret volume or a projected volume's secret
// source), is not being deleted, and does not carry hash in ContentHashAnnotation yet.
func NeedsRefresh(pod *corev1.Pod, secretName, hash string) bool {
	if pod.DeletionTimestamp != nil || pod.Annotations[ContentHashAnnotation] == hash {
		return false
	}
	return mountsSecret(pod, secretName)
}

// mountsSecret reports whether pod mounts Secret secretName as a secret volume or a projected volume's source.
func mountsSecret(pod *corev1.Pod, secretName string) bool {
	return slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool {
		if v.Secret != nil && v.Secret.SecretName == secretName {
			return true
		}
		return v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(s corev1.VolumeProjection) bool {
			return s.Secret != nil && s.Secret.Name == secretName
		})
	})
}

// ContentHash returns the hex SHA-256 (first 16 bytes) of data's keys and values in key order: equal data gives
// equal hashes, whatever the map order.
func ContentHash(data map[string][]byte) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s=%d:", len(k), k, len(data[k]))
		h.Write(data[k])
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
