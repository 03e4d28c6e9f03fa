package clientcert_test

import (
	"crypto/x509/pkix"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	clientcerttesting "github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert/testing"
)

// testNow is the fixed "now" of these tests.
var testNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func mustCA(t *testing.T, cn string) *clientcerttesting.CA {
	t.Helper()
	ca, err := clientcerttesting.NewCA(cn)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func TestSubjectBuilders(t *testing.T) {
	if got, want := clientcert.CommonName("c1", "abcde"), "system:open-cluster-management:c1:abcde"; got != want {
		t.Errorf("CommonName = %q, want %q", got, want)
	}
	want := []string{"system:open-cluster-management:c1", "system:open-cluster-management:managed-clusters"}
	if diff := cmp.Diff(want, clientcert.Organizations("c1")); diff != "" {
		t.Errorf("Organizations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"kubeconfig", "tls.crt", "tls.key", "cluster-name", "agent-name"}, clientcert.SecretKeys()); diff != "" {
		t.Errorf("SecretKeys (-want +got):\n%s", diff)
	}
	if clientcert.ClusterNameLabel != "open-cluster-management.io/cluster-name" || clientcert.SignerName != "kubernetes.io/kube-apiserver-client" {
		t.Errorf("label %q signer %q", clientcert.ClusterNameLabel, clientcert.SignerName)
	}
}

func TestParseCommonName(t *testing.T) {
	cases := []struct {
		cn             string
		cluster, agent string
		ok             bool
	}{
		{"system:open-cluster-management:c1:abcde", "c1", "abcde", true},
		{"system:open-cluster-management:c1", "", "", false},
		{"system:open-cluster-management::abcde", "", "", false},
		{"system:open-cluster-management:c1:", "", "", false},
		{"system:open-cluster-management:c1:a:b", "", "", false},
		{"admin", "", "", false},
	}
	for _, tc := range cases {
		cluster, agent, ok := clientcert.ParseCommonName(tc.cn)
		if cluster != tc.cluster || agent != tc.agent || ok != tc.ok {
			t.Errorf("ParseCommonName(%q) = %q, %q, %t; want %q, %q, %t", tc.cn, cluster, agent, ok, tc.cluster, tc.agent, tc.ok)
		}
	}
}

func TestIdentityFromSecretDataAndDir(t *testing.T) {
	ca := mustCA(t, "hub-ca")
	certPEM, _, err := ca.IssueClientCert("cert-cluster", "certa", testNow, testNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	otherPEM, _, err := ca.IssueClientCertWithSubject(pkix.Name{CommonName: "admin"}, testNow, testNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name           string
		data           map[string][]byte
		cluster, agent string
	}{
		{"keys win", map[string][]byte{"cluster-name": []byte("key-cluster\n"), "agent-name": []byte("keya"), "tls.crt": certPEM}, "key-cluster", "keya"},
		{"certificate CN fills missing keys", map[string][]byte{"agent-name": []byte("keya"), "tls.crt": certPEM}, "cert-cluster", "keya"},
		{"certificate only", map[string][]byte{"tls.crt": certPEM}, "cert-cluster", "certa"},
		{"non-agent CN", map[string][]byte{"tls.crt": otherPEM}, "", ""},
		{"truncated certificate", map[string][]byte{"tls.crt": certPEM[:40]}, "", ""},
		{"nothing", nil, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cluster, agent := clientcert.IdentityFromSecretData(tc.data)
			if cluster != tc.cluster || agent != tc.agent {
				t.Errorf("IdentityFromSecretData = %q, %q; want %q, %q", cluster, agent, tc.cluster, tc.agent)
			}
			dir := t.TempDir()
			for k, v := range tc.data {
				if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cluster, agent, err := clientcert.IdentityFromDir(dir)
			if err != nil || cluster != tc.cluster || agent != tc.agent {
				t.Errorf("IdentityFromDir = %q, %q, %v; want %q, %q, nil", cluster, agent, err, tc.cluster, tc.agent)
			}
		})
	}
	if _, _, err := clientcert.IdentityFromDir(filepath.Join(t.TempDir(), "absent")); err != nil {
		t.Errorf("IdentityFromDir(absent dir) error = %v, want nil", err)
	}
}

func TestGeneratedNames(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		cluster := clientcert.GenerateClusterName()
		if errs := validation.IsDNS1123Label(cluster); len(errs) > 0 {
			t.Fatalf("GenerateClusterName() = %q: %v", cluster, errs)
		}
		if cluster[0] < 'a' || cluster[0] > 'z' || len(cluster) != 36 || strings.Count(cluster, "-") != 4 {
			t.Fatalf("GenerateClusterName() = %q, want a UUID-style name starting with a letter", cluster)
		}
		if seen[cluster] {
			t.Fatalf("GenerateClusterName() repeated %q", cluster)
		}
		seen[cluster] = true

		agent := clientcert.GenerateAgentName()
		if len(agent) != 5 || strings.Trim(agent, "abcdefghijklmnopqrstuvwxyz") != "" {
			t.Fatalf("GenerateAgentName() = %q, want 5 lower-case letters", agent)
		}
	}
}
