package clientcert

import (
	"context"
	"fmt"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// ensureCertificate drives the single in-flight CSR: create it, or follow it to a written Secret.
// newCredentials is true for every CSR but a RotationOnly controller's rotation of valid credentials: those are
// subject to BootstrapBackoff.
func (c *ClientCertForHubController) ensureCertificate(ctx context.Context, syncCtx factory.SyncContext, logger klog.Logger,
	now time.Time, reason InvalidReason, why string, newCredentials bool) error {
	if c.pending == nil || c.pending.name == "" {
		return c.createCSR(ctx, syncCtx, logger, now, reason, why, newCredentials)
	}
	name := c.pending.name
	csr, err := c.csrLister.Get(name)
	if apierrors.IsNotFound(err) {
		// Not (yet) in the informer: ask the hub, which also tells a deleted CSR from informer lag.
		csr, err = c.opts.HubCSRs.Get(ctx, name, metav1.GetOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
		c.failAttempt(syncCtx, logger, now, ReasonCSRDeleted, fmt.Sprintf("CSR %s was deleted before a certificate was issued", name))
		return nil
	case err != nil:
		c.setStatusError(PhaseWaitingForApproval, reason, fmt.Sprintf("cannot read CSR %s", name), err)
		return fmt.Errorf("get CSR %s: %w", name, err)
	}

	outcome, cond := OutcomeOf(csr)
	switch outcome {
	case CSRPending:
		msg := fmt.Sprintf("waiting for approval of CSR %s on the hub", name)
		if cond != nil {
			msg = fmt.Sprintf("CSR %s approved; waiting for the signer to issue the certificate", name)
		}
		c.setStatus(Status{Phase: PhaseWaitingForApproval, Reason: reason, Message: msg, CSRName: name})
		return nil
	case CSRDenied, CSRFailed:
		c.failAttempt(syncCtx, logger, now, ReasonCSRDenied,
			fmt.Sprintf("CSR %s %s: %s: %s", name, cond.Type, cond.Reason, cond.Message))
		return nil
	}

	certPEM := csr.Status.Certificate
	leaf, err := VerifyIssuedCertificate(certPEM, c.pending.keyPEM, c.opts.ClusterName, c.opts.AgentName, now)
	if err != nil {
		c.failAttempt(syncCtx, logger, now, ReasonClientCertificateInvalid, fmt.Sprintf("CSR %s: %v", name, err))
		return nil
	}
	kubeconfig, err := BuildHubKubeconfig(c.opts.Hub)
	if err != nil {
		return err
	}
	data := map[string][]byte{
		failoverv1alpha1.KubeconfigSecretKey: kubeconfig,
		TLSCertSecretKey:                     certPEM,
		TLSKeySecretKey:                      c.pending.keyPEM,
		ClusterNameSecretKey:                 []byte(c.opts.ClusterName),
		AgentNameSecretKey:                   []byte(c.opts.AgentName),
	}
	if c.opts.BootstrapBackoff != nil {
		// Before the write: a session that sees the Secret change must know these credentials as the process's.
		c.opts.BootstrapBackoff.RecordWritten(certPEM)
	}
	created, err := c.writeSecret(ctx, data)
	if err != nil && ctx.Err() != nil {
		// The controller is being stopped (moving to another hub): a warning would be noise.
		return ctx.Err()
	}
	if err != nil {
		c.setStatusError(PhaseSecretWriteFailing, reason, fmt.Sprintf("certificate from CSR %s issued; writing the Secret failed", name), err)
		c.warnOnce(syncCtx, ReasonHubKubeconfigSecretWriteFailed, fmt.Sprintf("writing Secret %s/%s failed: %v", c.opts.Namespace, c.opts.SecretName, err))
		return err
	}
	logger.Info("Client certificate issued and stored", "csr", name, "notAfter", leaf.NotAfter)
	syncCtx.Recorder().Eventf(ReasonClientCertificateIssued, "client certificate for %s issued by CSR %s, valid until %s",
		CommonName(c.opts.ClusterName, c.opts.AgentName), name, text.Time(leaf.NotAfter))
	secretReason := ReasonHubKubeconfigSecretUpdated
	if created {
		secretReason = ReasonHubKubeconfigSecretCreated
	}
	syncCtx.Recorder().Eventf(secretReason, "Secret %s/%s written with keys %v", c.opts.Namespace, c.opts.SecretName, SecretKeys())
	c.pending, c.failures, c.retryAt, c.lastEventMsg = nil, 0, time.Time{}, ""
	c.mu.Lock()
	c.forced = ""
	c.mu.Unlock()
	c.setStatus(Status{Phase: PhaseCredentialsValid, Message: fmt.Sprintf("client certificate issued by CSR %s, valid until %s", name, text.Time(leaf.NotAfter)),
		NotAfter: leaf.NotAfter})
	// The Secret informer triggers the next sync, which schedules the rotation.
	return nil
}

// createCSR creates the in-flight CSR (reusing the key and template of a previous failed create), honouring the
// back-off after failed attempts and, for new credentials, the hub's BootstrapBackoff.
func (c *ClientCertForHubController) createCSR(ctx context.Context, syncCtx factory.SyncContext, logger klog.Logger,
	now time.Time, reason InvalidReason, why string, newCredentials bool) error {
	if newCredentials && c.opts.BootstrapBackoff != nil {
		if st := c.opts.BootstrapBackoff.State(c.opts.BackoffHub); !st.NotBefore.IsZero() {
			msg := fmt.Sprintf("next CSR for %s not before %s: %d bootstrap(s) in a row failed or were undone (%s)",
				c.opts.BackoffHub, text.Time(st.NotBefore), st.Failures, why)
			if c.Status().Phase != PhaseBackingOff {
				syncCtx.Recorder().Warningf(ReasonCSRBackoff, "%s", msg)
			}
			c.setStatus(Status{Phase: PhaseBackingOff, Reason: reason, RetryAt: st.NotBefore, Message: msg})
			syncCtx.Queue().AddAfter(syncCtx.QueueKey(), st.NotBefore.Sub(now))
			return nil
		}
	}
	if now.Before(c.retryAt) {
		c.setStatus(Status{Phase: PhaseBackingOff, Reason: reason, RetryAt: c.retryAt, LastError: c.Status().LastError,
			Message: fmt.Sprintf("next CSR attempt at %s (%s)", text.Time(c.retryAt), why)})
		syncCtx.Queue().AddAfter(syncCtx.QueueKey(), c.retryAt.Sub(now))
		return nil
	}
	if c.pending == nil {
		keyPEM, err := NewPrivateKey()
		if err != nil {
			return err
		}
		template, err := NewCSR(c.opts.ClusterName, c.opts.AgentName, keyPEM, c.opts.ExpirationSeconds)
		if err != nil {
			return err
		}
		c.pending = &pendingCSR{keyPEM: keyPEM, template: template, reason: reason}
	} else if name := c.findCreatedCSR(); name != "" {
		// A create that reported an error did reach the hub: adopt that CSR instead of sending another one.
		c.pending.name = name
		if newCredentials && c.opts.BootstrapBackoff != nil {
			c.opts.BootstrapBackoff.CSRCreated(c.opts.BackoffHub)
		}
		logger.Info("Adopted CSR created by an earlier attempt", "csr", name)
		c.setStatus(Status{Phase: PhaseWaitingForApproval, Reason: reason, CSRName: name, Message: fmt.Sprintf("waiting for approval of CSR %s on the hub", name)})
		return nil
	}

	created, err := c.opts.HubCSRs.Create(ctx, c.pending.template.DeepCopy(), metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil {
		c.failures++
		c.retryAt = now.Add(c.opts.RetryBackoff.Delay(c.failures))
		c.setStatusError(PhaseCSRCreateFailing, reason, fmt.Sprintf("creating a CSR for cluster %s failed; next attempt at %s", c.opts.ClusterName, text.Time(c.retryAt)), err)
		c.warnOnce(syncCtx, ReasonCSRCreateFailed, fmt.Sprintf("creating a CSR for cluster %s failed: %v", c.opts.ClusterName, err))
		return fmt.Errorf("create CSR for cluster %s: %w", c.opts.ClusterName, err)
	}
	c.pending.name = created.Name
	c.lastEventMsg = ""
	if newCredentials && c.opts.BootstrapBackoff != nil {
		c.opts.BootstrapBackoff.CSRCreated(c.opts.BackoffHub)
	}
	logger.Info("Created CSR", "csr", created.Name, "reason", reason)
	syncCtx.Recorder().Eventf(ReasonCSRCreated, "CSR %s created for %s: %s", created.Name, CommonName(c.opts.ClusterName, c.opts.AgentName), why)
	c.setStatus(Status{Phase: PhaseWaitingForApproval, Reason: reason, CSRName: created.Name,
		Message: fmt.Sprintf("waiting for approval of CSR %s on the hub", created.Name)})
	return nil
}

// findCreatedCSR looks in the informer for a CSR carrying the in-flight request (a create that timed out but
// succeeded).
func (c *ClientCertForHubController) findCreatedCSR() string {
	csrs, err := c.csrLister.List(labelsForCluster(c.opts.ClusterName))
	if err != nil {
		return ""
	}
	for _, csr := range csrs {
		if string(csr.Spec.Request) == string(c.pending.template.Spec.Request) {
			return csr.Name
		}
	}
	return ""
}

// failAttempt drops the in-flight CSR after a terminal outcome and schedules the next attempt after back-off.
func (c *ClientCertForHubController) failAttempt(syncCtx factory.SyncContext, logger klog.Logger, now time.Time, eventReason, msg string) {
	reason := c.pending.reason
	c.pending = nil
	c.failures++
	c.retryAt = now.Add(c.opts.RetryBackoff.Delay(c.failures))
	logger.Info("CSR attempt failed; backing off", "reason", eventReason, "message", msg, "retryAt", c.retryAt)
	syncCtx.Recorder().Warningf(eventReason, "%s; next CSR at %s", msg, text.Time(c.retryAt))
	c.setStatus(Status{Phase: PhaseBackingOff, Reason: reason, RetryAt: c.retryAt, Message: msg})
	syncCtx.Queue().AddAfter(syncCtx.QueueKey(), c.retryAt.Sub(now))
}
