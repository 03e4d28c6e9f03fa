package clientcert

import (
	"context"
	"fmt"
	"maps"

	"github.com/openshift/library-go/pkg/controller/factory"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// rebuildKubeconfig rewrites only the kubeconfig key for a changed hub CA / proxy-url / TLS options (FC-03).
func (c *ClientCertForHubController) rebuildKubeconfig(ctx context.Context, syncCtx factory.SyncContext, logger klog.Logger,
	invalid *InvalidHubKubeconfigError) error {
	kubeconfig, err := BuildHubKubeconfig(c.opts.Hub)
	if err != nil {
		return err
	}
	if _, err := c.writeSecret(ctx, map[string][]byte{failoverv1alpha1.KubeconfigSecretKey: kubeconfig}); err != nil {
		c.setStatusError(PhaseSecretWriteFailing, invalid.Reason, "rebuilding the hub kubeconfig failed", err)
		return err
	}
	c.pending = nil
	logger.Info("Rebuilt hub kubeconfig for changed hub settings", "fields", invalid.HubFields)
	syncCtx.Recorder().Eventf(ReasonHubKubeconfigRebuilt, "Secret %s/%s key %s rebuilt for the hub's new %v; key and certificate kept",
		c.opts.Namespace, c.opts.SecretName, failoverv1alpha1.KubeconfigSecretKey, invalid.HubFields)
	return nil
}

// writeSecret writes data over the live Secret in one Create or Update (WriteSecretData).
func (c *ClientCertForHubController) writeSecret(ctx context.Context, data map[string][]byte) (created bool, err error) {
	return WriteSecretData(ctx, c.opts.SpokeSecrets, c.opts.Namespace, c.opts.SecretName, data, c.opts.SecretLabels)
}

// WriteSecretData writes data over the live Secret namespace/name in one Create or Update, keeping its labels,
// annotations, type and keys not in data; a Secret it creates is Opaque with labels (may be nil). created
// reports a Create. The Update carries the resourceVersion just read and a Create fails if another Secret was
// created since, so a newer Secret is never overwritten: the error (wrapping the API's Conflict or
// AlreadyExists) names the Secret, and the caller retries.
func WriteSecretData(ctx context.Context, secrets corev1client.SecretsGetter, namespace, name string, data map[string][]byte,
	labels map[string]string) (created bool, err error) {
	return WriteSecretDataIf(ctx, secrets, namespace, name, data, labels, nil)
}

// WriteSecretDataIf is WriteSecretData that first calls check with the Secret as just read (nil when absent), the
// one its Update will replace: an error from check is returned as is and nothing is written. A caller that
// decided to write from an earlier read (whose Secret another writer may have replaced since) re-checks there
// what it decided on; a retry after a Conflict reads and checks again.
func WriteSecretDataIf(ctx context.Context, secrets corev1client.SecretsGetter, namespace, name string, data map[string][]byte,
	labels map[string]string, check func(existing *corev1.Secret) error) (created bool, err error) {
	client := secrets.Secrets(namespace)
	existing, err := client.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		existing = nil
	case err != nil:
		return false, fmt.Errorf("get secret %s/%s: %w", namespace, name, err)
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if check != nil {
		if err := check(existing); err != nil {
			return false, err
		}
	}
	// The Create or Update itself outlives the caller's context: the session stops the bootstrap controller
	// as soon as its informer sees the Secret, which can be before this goroutine has read the response, and the
	// outcome and its events must not be lost then (a cancelled Create reports a failure for a Secret that
	// landed).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), secretWriteTimeout)
	defer cancel()
	if existing == nil {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
			Type:       corev1.SecretTypeOpaque,
			Data:       data,
		}
		if _, err := client.Create(ctx, secret, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
			return false, fmt.Errorf("create secret %s/%s: %w", namespace, name, err)
		}
		return true, nil
	}
	secret := existing.DeepCopy()
	merged := make(map[string][]byte, len(secret.Data)+len(data))
	maps.Copy(merged, secret.Data)
	maps.Copy(merged, data)
	secret.Data = merged
	if _, err := client.Update(ctx, secret, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return false, fmt.Errorf("update secret %s/%s: %w", namespace, name, err)
	}
	return false, nil
}

// getLiveSecret reads the Secret from the API; nil if it does not exist.
func (c *ClientCertForHubController) getLiveSecret(ctx context.Context) (*corev1.Secret, error) {
	secret, err := c.opts.SpokeSecrets.Secrets(c.opts.Namespace).Get(ctx, c.opts.SecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get secret %s/%s: %w", c.opts.Namespace, c.opts.SecretName, err)
	}
	return secret, nil
}

// secretNameFilter passes events (tombstones included) of one Secret.
func secretNameFilter(namespace, name string) factory.EventFilterFunc {
	return func(obj any) bool {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		secret, ok := obj.(*corev1.Secret)
		return ok && secret.Namespace == namespace && secret.Name == name
	}
}

// labelsForCluster selects the CSRs of one cluster.
func labelsForCluster(clusterName string) labels.Selector {
	return labels.SelectorFromSet(labels.Set{ClusterNameLabel: clusterName})
}
