package clientcert

import (
	"crypto/x509"
	"fmt"

	"github.com/openshift/library-go/pkg/controller/factory"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// jitterFor returns the jitter of a certificate, drawn once per certificate.
func (c *ClientCertForHubController) jitterFor(leaf *x509.Certificate) float64 {
	key := leaf.SerialNumber.String() + "/" + leaf.NotAfter.String()
	if key != c.jitterKey {
		c.jitterKey, c.jitterValue = key, c.opts.Jitter()
	}
	return c.jitterValue
}

// warnOnce emits a Warning unless the previous one had the same message (no event per retry).
func (c *ClientCertForHubController) warnOnce(syncCtx factory.SyncContext, reason, msg string) {
	if msg == c.lastEventMsg {
		return
	}
	c.lastEventMsg = msg
	syncCtx.Recorder().Warning(reason, msg)
}

func (c *ClientCertForHubController) setStatusError(phase Phase, reason InvalidReason, msg string, err error) {
	s := Status{Phase: phase, Reason: reason, Message: fmt.Sprintf("%s: %v", msg, err), RetryAt: c.retryAt, LastError: err}
	if c.pending != nil {
		s.CSRName = c.pending.name
	}
	c.setStatus(s)
}

func (c *ClientCertForHubController) setStatus(s Status) {
	c.mu.Lock()
	changed := !statusEqual(c.status, s)
	c.status = s
	c.mu.Unlock()
	if changed && c.opts.OnStatusChange != nil {
		c.opts.OnStatusChange(s)
	}
}

func statusEqual(a, b Status) bool {
	aErr, bErr := text.Error(a.LastError), text.Error(b.LastError)
	a.LastError, b.LastError = nil, nil
	return a == b && aErr == bErr
}
