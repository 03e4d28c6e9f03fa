package framework

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/util/cert"
)

func TestRequestedDuration(t *testing.T) {
	seconds := func(s int32) *int32 { return &s }
	cases := []struct {
		name    string
		expSecs *int32
		max     time.Duration
		want    time.Duration
	}{
		{name: "unset uses the max", expSecs: nil, max: time.Hour, want: time.Hour},
		{name: "shorter than max is honoured", expSecs: seconds(900), max: time.Hour, want: 15 * time.Minute},
		{name: "longer than max is capped", expSecs: seconds(7200), max: time.Hour, want: time.Hour},
		{name: "below 10 minutes is raised", expSecs: seconds(60), max: time.Hour, want: 10 * time.Minute},
		{name: "a max below 10 minutes wins", expSecs: seconds(600), max: 2 * time.Minute, want: 2 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := requestedDuration(tc.expSecs, tc.max); got != tc.want {
				t.Errorf("requestedDuration() = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestSignCSR(t *testing.T) {
	ca, err := newTestCA("test-ca", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	subject := pkix.Name{CommonName: "system:open-cluster-management:c1:a1", Organization: []string{"system:open-cluster-management:c1"}}
	csrPEM, err := cert.MakeCSR(key, &subject, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(csrPEM)
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	clientUsages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}

	cases := []struct {
		name          string
		usages        []certificatesv1.KeyUsage
		ttl           time.Duration
		wantErr       string
		wantNotBefore time.Time
		wantNotAfter  time.Time
	}{
		{name: "short lifetime is not backdated at the end", usages: clientUsages, ttl: 2 * time.Minute,
			wantNotBefore: now.Add(-5 * time.Minute), wantNotAfter: now.Add(2 * time.Minute)},
		{name: "long lifetime is backdated at both ends", usages: clientUsages, ttl: 24 * time.Hour,
			wantNotBefore: now.Add(-5 * time.Minute), wantNotAfter: now.Add(24*time.Hour - 5*time.Minute)},
		{name: "server auth is refused", usages: []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth, certificatesv1.UsageClientAuth},
			ttl: time.Hour, wantErr: "invalid usage for client certificate: server auth"},
		{name: "client auth is required", usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature},
			ttl: time.Hour, wantErr: "missing required usage for client certificate: client auth"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			certPEM, err := ca.signCSR(req, tc.usages, tc.ttl, now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("signCSR() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			block, _ := pem.Decode(certPEM)
			issued, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if err := issued.CheckSignatureFrom(ca.cert); err != nil {
				t.Errorf("not signed by the CA: %v", err)
			}
			got := []any{issued.Subject.CommonName, issued.Subject.Organization, issued.NotBefore.UTC(), issued.NotAfter.UTC(), issued.ExtKeyUsage}
			want := []any{subject.CommonName, subject.Organization, tc.wantNotBefore, tc.wantNotAfter, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("issued certificate (-want +got):\n%s", diff)
			}
		})
	}
}
