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
			s := &Session{o: Options{Clock: clocktesting.NewFakeClock(now)}, hub: Hub{Name: "primary", Bootstrap: b}}
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
			s := &Session{o: Options{HubQPS: tc.qps, HubBurst: tc.burst}}
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

// TestTakeover walks the takeover rules over a sequence of Secret contents: each takeover of this process's
// credentials is reported once; a deletion in between does not hide one; a Secret that was never ours is not one.
func TestTakeover(t *testing.T) {
	ourCert, theirCert, otherCert := []byte("ours"), []byte("theirs"), []byte("other")
	type look struct {
		cert       []byte
		wrote      bool
		wantReport bool
	}
	cases := []struct {
		name  string
		ours  bool
		looks []look
	}{
		{name: "foreign credentials at start are not a takeover", looks: []look{
			{cert: theirCert}, {cert: otherCert}, {cert: ourCert, wrote: true}, {cert: theirCert, wantReport: true}}},
		{name: "each takeover once", ours: true, looks: []look{
			{cert: theirCert, wantReport: true}, {cert: theirCert}, {cert: otherCert},
			{cert: ourCert, wrote: true}, {cert: otherCert, wantReport: true}}},
		{name: "deleted, then created by another writer", ours: true, looks: []look{
			{cert: nil}, {cert: theirCert, wantReport: true}}},
		{name: "deleted and written again by this process", ours: true, looks: []look{
			{cert: nil}, {cert: ourCert, wrote: true}, {cert: nil}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ours := tc.ours
			for i, l := range tc.looks {
				var report bool
				report, ours = Takeover(ours, l.cert, l.wrote)
				if report != l.wantReport {
					t.Fatalf("look %d (%q, wrote %t): report %t, want %t", i, l.cert, l.wrote, report, l.wantReport)
				}
			}
		})
	}
}
