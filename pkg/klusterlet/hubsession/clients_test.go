package hubsession

import (
	"crypto/x509"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

// TestBootstrapCreateClient: the main controllers re-create a ManagedCluster deleted on the hub with the
// bootstrap identity (OCM's hub never lets the agent identity create one), unless the bootstrap certificate has
// expired: scenario 3 never uses an expired bootstrap kubeconfig.
func TestBootstrapCreateClient(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name       string
		notAfter   time.Time
		certAuth   bool
		wantClient bool
	}{
		{name: "valid bootstrap certificate", notAfter: now.Add(time.Hour), certAuth: true, wantClient: true},
		{name: "expired bootstrap certificate", notAfter: now.Add(-time.Hour), certAuth: true, wantClient: false},
		{name: "token bootstrap (no visible expiry)", wantClient: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := &clientcert.BootstrapKubeconfig{Source: "test", RestConfig: &rest.Config{Host: "https://hub.example.com:6443", BearerToken: "t"}}
			if tc.certAuth {
				b.ClientCertificate = &x509.Certificate{NotAfter: tc.notAfter}
			}
			s := &Session{config: Config{Clock: clocktesting.NewFakeClock(now)}, hub: Hub{Name: "primary", Bootstrap: b}}
			if got := s.bootstrapCreateClient(klog.Background()) != nil; got != tc.wantClient {
				t.Errorf("bootstrap create client built = %t, want %t", got, tc.wantClient)
			}
		})
	}
}

// TestHubConfigRateLimits: hub clients get --hub-kube-api-qps/--hub-kube-api-burst; zero keeps the base's values,
// and the base config is never changed.
func TestHubConfigRateLimits(t *testing.T) {
	cases := []struct {
		name      string
		qps       float32
		burst     int
		wantQPS   float32
		wantBurst int
	}{
		{name: "flags set", qps: 50, burst: 100, wantQPS: 50, wantBurst: 100},
		{name: "unset keeps the base", wantQPS: 7, wantBurst: 9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := &rest.Config{Host: "https://hub.example.com:6443", QPS: 7, Burst: 9}
			s := &Session{config: Config{HubQPS: tc.qps, HubBurst: tc.burst}}
			got := s.hubConfig(base, "bootstrap")
			if got.QPS != tc.wantQPS || got.Burst != tc.wantBurst {
				t.Errorf("QPS/Burst = %v/%d, want %v/%d", got.QPS, got.Burst, tc.wantQPS, tc.wantBurst)
			}
			if base.QPS != 7 || base.Burst != 9 {
				t.Errorf("the base config was changed: %v/%d", base.QPS, base.Burst)
			}
		})
	}
}
