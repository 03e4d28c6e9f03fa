package registration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// secretsFor returns the Secret client of a registration's cluster.
func (c *AddOnRegistrationController) secretsFor(cfg Config) corev1client.SecretInterface {
	if cfg.Hosted {
		return c.o.HostingSecrets.Secrets(cfg.Namespace)
	}
	return c.o.SpokeSecrets.Secrets(cfg.Namespace)
}

// getSecret reads the registration's Secret live (it may predate the label the informer selects on); nil when
// absent.
func (c *AddOnRegistrationController) getSecret(ctx context.Context, cfg Config) (*corev1.Secret, error) {
	secret, err := c.secretsFor(cfg).Get(ctx, cfg.SecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("add-on %s: get Secret %s: %w", cfg.AddOnName, cfg.Key(), err)
	}
	return secret, nil
}

// writeSecret writes data in one Create or Update (the live Secret's other metadata kept), with the add-on label
// and the issuing hub annotation.
func (c *AddOnRegistrationController) writeSecret(ctx context.Context, cfg Config, live *corev1.Secret, data map[string][]byte) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), secretWriteTimeout)
	defer cancel()
	client := c.secretsFor(cfg)
	if live == nil {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:   cfg.Namespace,
				Name:        cfg.SecretName,
				Labels:      map[string]string{AddOnNameLabel: cfg.AddOnName},
				Annotations: map[string]string{IssuingHubAnnotation: c.o.HubName},
			},
			Type: corev1.SecretTypeOpaque,
			Data: data,
		}
		if _, err := client.Create(ctx, secret, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
			return fmt.Errorf("create Secret %s: %w", cfg.Key(), err)
		}
		return nil
	}
	secret := live.DeepCopy()
	markOwned(secret, cfg.AddOnName, c.o.HubName)
	secret.Data = data
	if _, err := client.Update(ctx, secret, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("update Secret %s: %w", cfg.Key(), err)
	}
	return nil
}

// adopt labels and annotates a valid Secret that lacks the agent's metadata (written by OCM's agent before the
// migration), so that the label-filtered informer and the start-up scan see it. No write when nothing is missing.
func (c *AddOnRegistrationController) adopt(ctx context.Context, cfg Config, live *corev1.Secret) error {
	if live.Labels[AddOnNameLabel] == cfg.AddOnName && live.Annotations[IssuingHubAnnotation] == c.o.HubName {
		return nil
	}
	secret := live.DeepCopy()
	markOwned(secret, cfg.AddOnName, c.o.HubName)
	if _, err := c.secretsFor(cfg).Update(ctx, secret, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("label Secret %s: %w", cfg.Key(), err)
	}
	return nil
}

func markOwned(secret *corev1.Secret, addOnName, hubName string) {
	if secret.Labels == nil {
		secret.Labels = map[string]string{}
	}
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Labels[AddOnNameLabel] = addOnName
	secret.Annotations[IssuingHubAnnotation] = hubName
}
