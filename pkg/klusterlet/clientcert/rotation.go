package clientcert

import (
	"crypto/x509"
	"math"
	"time"
)

// Rotation band: a new CSR is due once less than rotationMinRemaining + jitter*rotationJitterSpan of the
// certificate's lifetime remains, i.e. between 25 % (jitter → 1) and 20 % (jitter = 0) (design §4).
const (
	rotationMinRemaining = 0.20
	rotationJitterSpan   = 0.05
)

// RotationDeadline returns the instant from which a new CSR is due for cert: NotAfter minus
// (0.20 + 0.05*jitter) of the lifetime NotAfter−NotBefore. jitter is clamped to [0, 1); callers draw it once per
// certificate (e.g. rand.Float64) so the deadline is stable across syncs and agents do not renew in lockstep.
// A certificate with a non-positive lifetime is due at NotAfter. Pure: no clock is read.
func RotationDeadline(cert *x509.Certificate, jitter float64) time.Time {
	lifetime := cert.NotAfter.Sub(cert.NotBefore)
	if lifetime <= 0 {
		return cert.NotAfter
	}
	switch {
	case jitter < 0 || math.IsNaN(jitter):
		jitter = 0
	case jitter >= 1:
		jitter = 0.999999
	}
	remaining := time.Duration(float64(lifetime) * (rotationMinRemaining + rotationJitterSpan*jitter))
	return cert.NotAfter.Add(-remaining)
}
