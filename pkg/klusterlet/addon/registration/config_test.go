package registration

import (
	"crypto/x509/pkix"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	clientcerttesting "github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert/testing"
)

// TestInstallNamespace: status.namespace, then spec.installNamespace, then OCM's default.
func TestInstallNamespace(t *testing.T) {
	cases := []struct {
		name, status, spec, want string
	}{
		{"status wins", "from-status", "from-spec", "from-status"},
		{"spec", "", "from-spec", "from-spec"},
		{"default", "", "", DefaultInstallNamespace},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &addonv1alpha1.ManagedClusterAddOn{Spec: addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: tc.spec},
				Status: addonv1alpha1.ManagedClusterAddOnStatus{Namespace: tc.status}}
			if got := InstallNamespace(a); got != tc.want {
				t.Errorf("InstallNamespace = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSecretNameAndSubject: OCM's Secret names and subject defaults.
func TestSecretNameAndSubject(t *testing.T) {
	cases := []struct {
		name       string
		reg        addonv1alpha1.RegistrationConfig
		wantSecret string
		want       pkix.Name
	}{
		{"kube client, empty subject", addonv1alpha1.RegistrationConfig{SignerName: KubeClientSigner}, "hello-hub-kubeconfig",
			pkix.Name{CommonName: "system:open-cluster-management:cluster:c1:addon:hello:agent:a1",
				Organization: []string{"system:open-cluster-management:cluster:c1:addon:hello"}}},
		{"kube client, subject given", addonv1alpha1.RegistrationConfig{SignerName: KubeClientSigner,
			Subject: addonv1alpha1.Subject{User: "u", Groups: []string{"g1", "g2"}, OrganizationUnits: []string{"ou"}}}, "hello-hub-kubeconfig",
			pkix.Name{CommonName: "u", Organization: []string{"g1", "g2"}, OrganizationalUnit: []string{"ou"}}},
		{"custom signer, empty subject: no default O", addonv1alpha1.RegistrationConfig{SignerName: "example.com/s1"}, "hello-example.com-s1-client-cert",
			pkix.Name{CommonName: "system:open-cluster-management:cluster:c1:addon:hello:agent:a1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := SecretNameFor("hello", tc.reg.SignerName); got != tc.wantSecret {
				t.Errorf("SecretNameFor = %q, want %q", got, tc.wantSecret)
			}
			if diff := cmp.Diff(tc.want, ResolveSubject("c1", "a1", "hello", tc.reg)); diff != "" {
				t.Errorf("ResolveSubject (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConfigsForRejectsBadInput: an empty signer or a signer that makes an invalid Secret name is an error naming
// the field; the valid registrations are kept; a repeated signer is one registration.
func TestConfigsForRejectsBadInput(t *testing.T) {
	a := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: "hello"},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{Registrations: []addonv1alpha1.RegistrationConfig{
			{SignerName: ""}, {SignerName: "Bad_Signer"}, {SignerName: KubeClientSigner}, {SignerName: KubeClientSigner},
		}}}
	configs, errs := ConfigsFor("c1", "a1", a)
	if len(configs) != 1 || configs[0].SecretName != "hello-hub-kubeconfig" {
		t.Errorf("configs %+v, want hello-hub-kubeconfig alone", configs)
	}
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "status.registrations[0].signerName is empty") ||
		!strings.Contains(errs[1].Error(), `status.registrations[1].signerName "Bad_Signer"`) {
		t.Errorf("errors %v", errs)
	}
	a.Spec.InstallNamespace = "Not A Namespace"
	if _, errs := ConfigsFor("c1", "a1", a); len(errs) != 1 || !strings.Contains(errs[0].Error(), `install namespace "Not A Namespace"`) {
		t.Errorf("bad namespace errors %v", errs)
	}
}

// TestAssess: the order of Assess's rules, with a fake clock.
func TestAssess(t *testing.T) {
	ca, err := clientcerttesting.NewCA("ca")
	if err != nil {
		t.Fatal(err)
	}
	hub := clientcert.HubInfo{Server: "https://hub.example:6443", CAData: ca.CertPEM}
	cfg := Config{AddOnName: "hello", SignerName: KubeClientSigner, SecretName: "hello-hub-kubeconfig",
		Subject: pkix.Name{CommonName: "cn", Organization: []string{"o1", "o2"}}}
	additional, err := AdditionalData(cfg, "c1", hub)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueClientCertWithSubject(pkix.Name{CommonName: "cn", Organization: []string{"o2", "o1"}}, t0, t0.Add(100*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey, _ := ca.IssueClientCertWithSubject(pkix.Name{CommonName: "cn"}, t0, t0.Add(time.Hour))
	otherSubject, otherSubjectKey, _ := ca.IssueClientCertWithSubject(pkix.Name{CommonName: "other"}, t0, t0.Add(100*time.Minute))
	good := SecretData(nil, certPEM, keyPEM, additional)
	with := func(k string, v []byte) map[string][]byte {
		d := SecretData(good, good[TLSCertKey], good[TLSKeyKey], nil)
		d[k] = v
		return d
	}
	cases := []struct {
		name   string
		data   map[string][]byte
		issuer string
		now    time.Time
		want   string // "" = valid
	}{
		{"valid (O order does not matter)", good, testHub, t0.Add(time.Minute), ""},
		{"no Secret", nil, "", t0, ReasonNoCertificate},
		{"key mismatch", with(TLSKeyKey, otherKey), "", t0, ReasonCertificateInvalid},
		{"expired", good, "", t0.Add(101 * time.Minute), ReasonCertificateInvalid},
		{"subject changed", SecretData(good, otherSubject, otherSubjectKey, nil), "", t0, ReasonSubjectChanged},
		{"other hub's kubeconfig", with(KubeconfigKey, []byte("other")), "", t0, ReasonHubChanged},
		{"other issuing hub", good, "hub-b", t0, ReasonHubChanged},
		{"cluster name changed", with(ClusterNameKey, []byte("c2")), "", t0, ReasonHubChanged},
		{"same hub, other kubeconfig layout (OCM's agent)", with(KubeconfigKey, ocmLayout(t, hub)), "", t0, ""},
		{"same hub, kubeconfig with a token", with(KubeconfigKey, ocmLayoutToken(t, hub)), "", t0, ReasonHubChanged},
		{"rotation due at 22.5 % remaining", good, testHub, t0.Add(78 * time.Minute), ReasonRotationDue},
		{"just before the deadline", good, testHub, t0.Add(77 * time.Minute), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := Assess(tc.data, cfg, additional, tc.issuer, testHub, tc.now, 0.5)
			if a.Valid != (tc.want == "") || a.Reason != tc.want {
				t.Errorf("Assess = valid %v reason %q (%s), want reason %q", a.Valid, a.Reason, a.Message, tc.want)
			}
		})
	}
}

// ocmLayout is a kubeconfig for hub laid out as OCM's agent writes it (its own cluster and context names,
// context namespace "configuration").
func ocmLayout(t *testing.T, hub clientcert.HubInfo) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: hub.Server, CertificateAuthorityData: hub.CAData}
	cfg.AuthInfos["default-auth"] = &clientcmdapi.AuthInfo{ClientCertificate: "tls.crt", ClientKey: "tls.key"}
	cfg.Contexts["default-context"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "default-auth", Namespace: "configuration"}
	cfg.CurrentContext = "default-context"
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ocmLayoutToken(t *testing.T, hub clientcert.HubInfo) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(ocmLayout(t, hub))
	if err != nil {
		t.Fatal(err)
	}
	cfg.AuthInfos["default-auth"].Token = "secret-token"
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
