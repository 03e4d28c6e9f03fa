package registration

import (
	"context"
	"fmt"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// createCSR creates the registration's CSR with a fresh key (or the key of a failed create).
func (c *AddOnRegistrationController) createCSR(ctx context.Context, syncCtx factory.SyncContext, addOn *addonv1alpha1.ManagedClusterAddOn, cfg Config, a Assessment, now time.Time) error {
	p := c.pending[cfg.Key()]
	if p == nil {
		keyPEM, err := clientcert.NewPrivateKey()
		if err != nil {
			return err
		}
		template, err := clientcert.NewSubjectCSR(clientcert.SubjectCSRRequest{
			GenerateName: fmt.Sprintf("addon-%s-%s-", c.o.ClusterName, cfg.AddOnName),
			Labels: map[string]string{
				clusterv1.ClusterNameLabelKey: c.o.ClusterName,
				AddOnNameLabel:                cfg.AddOnName,
			},
			Subject:           cfg.Subject,
			DNSNames:          []string{cfg.AddOnName + ".addon.open-cluster-management.io"},
			SignerName:        cfg.SignerName,
			ExpirationSeconds: c.o.ExpirationSeconds,
		}, keyPEM)
		if err != nil {
			return fmt.Errorf("add-on %s: %w", cfg.AddOnName, err)
		}
		p = &pendingCSR{config: cfg, keyPEM: keyPEM, template: template, reason: a.Reason}
		c.pending[cfg.Key()] = p
	}
	created, err := c.o.HubCSRs.Create(ctx, p.template.DeepCopy(), metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil {
		c.backOff(cfg, now)
		c.warnOnce(syncCtx, "create/"+cfg.Key(), ReasonAddOnCSRCreateFailed, fmt.Sprintf("add-on %s: creating a CSR on hub %s for Secret %s failed: %v", cfg.AddOnName, c.o.HubName, cfg.Key(), err))
		c.setRotatedCondition(ctx, addOn, metav1.ConditionFalse, ReasonClientCertificateUpdateFailed, fmt.Sprintf("Failed to create CSR %v", err))
		c.setState(cfg, failoverv1alpha1.AddOnRegistrationFailed, fmt.Sprintf("creating a CSR failed: %v", err), time.Time{})
		return fmt.Errorf("add-on %s: create CSR: %w", cfg.AddOnName, err)
	}
	p.name = created.Name
	delete(c.lastWarns, "create/"+cfg.Key())
	klog.FromContext(ctx).Info("Created add-on CSR", "csr", created.Name, "signer", cfg.SignerName, "reason", a.Reason)
	syncCtx.Recorder().Eventf(ReasonAddOnCSRCreated, "CSR %s created on hub %s for add-on %s (signer %s, subject %q): %s",
		created.Name, c.o.HubName, cfg.AddOnName, cfg.SignerName, cfg.Subject.CommonName, a.Message)
	c.setState(cfg, failoverv1alpha1.AddOnRegistrationPending, fmt.Sprintf("waiting for CSR %s (%s)", created.Name, a.Message), time.Time{})
	return nil
}

// follow reads the in-flight CSR and writes the Secret once it is issued.
func (c *AddOnRegistrationController) follow(ctx context.Context, syncCtx factory.SyncContext, addOn *addonv1alpha1.ManagedClusterAddOn, p *pendingCSR,
	live *corev1.Secret, additional map[string][]byte, now time.Time) (time.Duration, error) {
	cfg := p.config
	csr, err := c.csrLister.Get(p.name)
	if apierrors.IsNotFound(err) {
		csr, err = c.o.HubCSRs.Get(ctx, p.name, metav1.GetOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
		return c.fail(ctx, syncCtx, addOn, p, now, fmt.Sprintf("CSR %s was deleted before a certificate was issued", p.name))
	case err != nil:
		return 0, fmt.Errorf("add-on %s: get CSR %s: %w", cfg.AddOnName, p.name, err)
	}
	outcome, cond := clientcert.OutcomeOf(csr)
	switch outcome {
	case clientcert.CSRPending:
		return 0, nil
	case clientcert.CSRDenied, clientcert.CSRFailed:
		return c.fail(ctx, syncCtx, addOn, p, now, fmt.Sprintf("CSR %s %s: %s: %s", p.name, cond.Type, cond.Reason, cond.Message))
	}
	leaf, err := clientcert.VerifyCertificateForKey(csr.Status.Certificate, p.keyPEM, now)
	if err != nil {
		return c.fail(ctx, syncCtx, addOn, p, now, fmt.Sprintf("CSR %s: %v", p.name, err))
	}
	if !SubjectMatches(leaf.Subject, cfg.Subject) {
		// Stored, the next sync would find SubjectChanged and send another CSR at once: a signer that rewrites
		// the subject must meet the back-off instead.
		return c.fail(ctx, syncCtx, addOn, p, now, fmt.Sprintf("CSR %s: the signer issued subject CN %q O %q, the registration asks for CN %q O %q",
			p.name, leaf.Subject.CommonName, leaf.Subject.Organization, cfg.Subject.CommonName, cfg.Subject.Organization))
	}
	var existing map[string][]byte
	if live != nil {
		existing = live.Data
	}
	data := SecretData(existing, csr.Status.Certificate, p.keyPEM, additional)
	if err := c.writeSecret(ctx, cfg, live, data); err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if live == nil && apierrors.IsNotFound(err) {
			// The install namespace does not exist yet (the add-on's manifests create it): keep the certificate and
			// look again soon, not at the rate limiter's growing delays.
			c.warnOnce(syncCtx, "write/"+cfg.Key(), ReasonAddOnCredentialsWriteFailed, fmt.Sprintf("add-on %s: Secret %s not written yet: %v", cfg.AddOnName, cfg.Key(), err))
			c.setState(cfg, failoverv1alpha1.AddOnRegistrationFailed, fmt.Sprintf("certificate from CSR %s issued; waiting for namespace %s: %v", p.name, cfg.Namespace, err), time.Time{})
			return namespaceRecheck, nil
		}
		c.warnOnce(syncCtx, "write/"+cfg.Key(), ReasonAddOnCredentialsWriteFailed, fmt.Sprintf("add-on %s: writing Secret %s failed: %v", cfg.AddOnName, cfg.Key(), err))
		c.setState(cfg, failoverv1alpha1.AddOnRegistrationFailed, fmt.Sprintf("certificate from CSR %s issued; writing the Secret failed: %v", p.name, err), time.Time{})
		return 0, err
	}
	delete(c.pending, cfg.Key())
	delete(c.failures, cfg.Key())
	delete(c.lastWarns, "write/"+cfg.Key())
	klog.FromContext(ctx).Info("Add-on credentials issued and stored", "csr", p.name, "secret", cfg.Key(), "notAfter", leaf.NotAfter)
	syncCtx.Recorder().Eventf(ReasonAddOnCredentialsIssued, "Secret %s of add-on %s written with a certificate from hub %s (CSR %s, subject %q, valid until %s)",
		cfg.Key(), cfg.AddOnName, c.o.HubName, p.name, leaf.Subject.CommonName, text.Time(leaf.NotAfter))
	c.setRotatedCondition(ctx, addOn, metav1.ConditionTrue, ReasonClientCertificateUpdated,
		fmt.Sprintf("client certificate rotated starting from %v to %v", leaf.NotBefore, leaf.NotAfter))
	deadline := clientcert.RotationDeadline(leaf, c.jitterFor(csr.Status.Certificate))
	c.setState(cfg, failoverv1alpha1.AddOnRegistrationRegistered, fmt.Sprintf("certificate from CSR %s valid until %s, rotation due at %s",
		p.name, text.Time(leaf.NotAfter), text.Time(deadline)), leaf.NotAfter)
	return max(deadline.Sub(now), time.Second), nil
}

// fail drops the in-flight CSR after a terminal outcome and backs off.
func (c *AddOnRegistrationController) fail(ctx context.Context, syncCtx factory.SyncContext, addOn *addonv1alpha1.ManagedClusterAddOn, p *pendingCSR, now time.Time, msg string) (time.Duration, error) {
	delete(c.pending, p.config.Key())
	retryAt := c.backOff(p.config, now)
	syncCtx.Recorder().Warningf(ReasonAddOnCSRFailed, "add-on %s, Secret %s: %s; next CSR at %s", p.config.AddOnName, p.config.Key(), msg, text.Time(retryAt))
	c.setState(p.config, failoverv1alpha1.AddOnRegistrationFailed, fmt.Sprintf("%s; next CSR at %s", msg, text.Time(retryAt)), time.Time{})
	c.setRotatedCondition(ctx, addOn, metav1.ConditionFalse, ReasonClientCertificateUpdateFailed, "Failed to rotated client certificate "+msg)
	return retryAt.Sub(now), nil
}

func (c *AddOnRegistrationController) backOff(cfg Config, now time.Time) time.Time {
	f := c.failures[cfg.Key()]
	f.count++
	f.retryAt = now.Add(c.o.RetryBackoff.Delay(f.count))
	c.failures[cfg.Key()] = f
	return f.retryAt
}

// pendingCSRsOf counts this add-on's CSRs on the hub that are neither issued, denied nor failed.
func (c *AddOnRegistrationController) pendingCSRsOf(addOnName string) int {
	csrs, err := c.csrLister.List(labels.SelectorFromSet(labels.Set{clusterv1.ClusterNameLabelKey: c.o.ClusterName, AddOnNameLabel: addOnName}))
	if err != nil {
		return 0
	}
	n := 0
	for _, csr := range csrs {
		if outcome, cond := clientcert.OutcomeOf(csr); outcome == clientcert.CSRPending && cond == nil {
			n++
		}
	}
	return n
}
