package clientcert_test

import (
	"crypto/x509"
	"math"
	"testing"
	"time"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

func TestRotationDeadline(t *testing.T) {
	notBefore := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cert := &x509.Certificate{NotBefore: notBefore, NotAfter: notBefore.Add(100 * time.Hour)}
	cases := []struct {
		name   string
		cert   *x509.Certificate
		jitter float64
		want   time.Time
	}{
		{"jitter 0: 20% remaining", cert, 0, notBefore.Add(80 * time.Hour)},
		{"jitter 0.5: 22.5% remaining", cert, 0.5, notBefore.Add(77*time.Hour + 30*time.Minute)},
		{"jitter just below 1: about 25% remaining", cert, 0.999999, notBefore.Add(75 * time.Hour)},
		{"jitter 1 is clamped below 1", cert, 1, notBefore.Add(75 * time.Hour)},
		{"negative jitter is clamped to 0", cert, -3, notBefore.Add(80 * time.Hour)},
		{"NaN jitter is treated as 0", cert, math.NaN(), notBefore.Add(80 * time.Hour)},
		{"ten-minute certificate", &x509.Certificate{NotBefore: notBefore, NotAfter: notBefore.Add(10 * time.Minute)}, 0, notBefore.Add(8 * time.Minute)},
		{"zero lifetime is due at NotAfter", &x509.Certificate{NotBefore: notBefore, NotAfter: notBefore}, 0.5, notBefore},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := clientcert.RotationDeadline(tc.cert, tc.jitter)
			if d := got.Sub(tc.want); d < -time.Second || d > time.Second {
				t.Errorf("RotationDeadline = %v, want %v (±1s)", got, tc.want)
			}
		})
	}
}

func TestRotationDeadlineBand(t *testing.T) {
	notBefore := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lifetime := 365 * 24 * time.Hour
	cert := &x509.Certificate{NotBefore: notBefore, NotAfter: notBefore.Add(lifetime)}
	for i := range 100 {
		jitter := float64(i) / 100
		remaining := cert.NotAfter.Sub(clientcert.RotationDeadline(cert, jitter))
		fraction := float64(remaining) / float64(lifetime)
		if fraction < 0.20-1e-9 || fraction > 0.25+1e-9 {
			t.Fatalf("jitter %.2f: %.4f of the lifetime remains at the deadline, want within [0.20, 0.25]", jitter, fraction)
		}
	}
}
