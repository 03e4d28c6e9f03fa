package clientcert_test

import (
	"bytes"
	"crypto/x509/pkix"
	"errors"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	clientcerttesting "github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert/testing"
)

const (
	testCluster = "cluster1"
	testAgent   = "abcde"
)

func TestBuildHubKubeconfigRoundTrip(t *testing.T) {
	hubCA := mustCA(t, "hub-serving-ca")
	clientCA := mustCA(t, "hub-client-ca")
	hub := clientcert.HubInfo{Server: "https://hub.example.com:6443", ProxyURL: "http://proxy.local:3128", CAData: hubCA.CertPEM}
	data, err := clientcerttesting.NewHubKubeconfigSecretData(clientCA, hub, testCluster, testAgent, testNow.Add(-time.Hour), testNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}

	// The written kubeconfig is self-contained apart from tls.crt / tls.key relative to its own directory.
	cfg, err := clientcmd.Load(data[failoverv1alpha1.KubeconfigSecretKey])
	if err != nil {
		t.Fatal(err)
	}
	cluster := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]
	user := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
	if cluster.CertificateAuthority != "" || !bytes.Equal(cluster.CertificateAuthorityData, hubCA.CertPEM) ||
		cluster.Server != hub.Server || cluster.ProxyURL != hub.ProxyURL {
		t.Errorf("cluster entry %+v", cluster)
	}
	if user.ClientCertificate != "tls.crt" || user.ClientKey != "tls.key" || len(user.ClientCertificateData) != 0 {
		t.Errorf("user entry %+v, want relative tls.crt / tls.key", user)
	}

	// Mirrored to a directory, client-go resolves the references against that directory.
	dir := t.TempDir()
	if _, err := clientcert.MirrorToDir(data, dir); err != nil {
		t.Fatal(err)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	if rc.CertFile != filepath.Join(dir, "tls.crt") || rc.KeyFile != filepath.Join(dir, "tls.key") || rc.Host != hub.Server {
		t.Errorf("rest config cert %q key %q host %q", rc.CertFile, rc.KeyFile, rc.Host)
	}
	if _, err := rest.TLSConfigFor(rc); err != nil {
		t.Errorf("TLS config from the mirrored dir: %v", err)
	}

	// From the Secret data alone.
	rc2, err := clientcert.RestConfigFromSecretData(data)
	if err != nil {
		t.Fatal(err)
	}
	if rc2.CertFile != "" || rc2.KeyFile != "" || !bytes.Equal(rc2.CertData, data["tls.crt"]) || !bytes.Equal(rc2.KeyData, data["tls.key"]) ||
		!bytes.Equal(rc2.CAData, hubCA.CertPEM) || rc2.Host != hub.Server || rc2.Proxy == nil {
		t.Errorf("RestConfigFromSecretData: files %q %q, inline %t %t %t, host %q", rc2.CertFile, rc2.KeyFile,
			bytes.Equal(rc2.CertData, data["tls.crt"]), bytes.Equal(rc2.KeyData, data["tls.key"]), bytes.Equal(rc2.CAData, hubCA.CertPEM), rc2.Host)
	}
	if _, err := rest.TLSConfigFor(rc2); err != nil {
		t.Errorf("TLS config from Secret data: %v", err)
	}
	noKey := maps.Clone(data)
	delete(noKey, "tls.key")
	if _, err := clientcert.RestConfigFromSecretData(noKey); err == nil || err.Error() != "hub kubeconfig secret data: missing key tls.key" {
		t.Errorf("RestConfigFromSecretData without tls.key: %v", err)
	}

	got, err := clientcert.HubInfoFromKubeconfig(data[failoverv1alpha1.KubeconfigSecretKey])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hub, got); diff != "" {
		t.Errorf("HubInfoFromKubeconfig (-want +got):\n%s", diff)
	}
}

func TestBuildHubKubeconfigRejectsBadHub(t *testing.T) {
	for _, hub := range []clientcert.HubInfo{
		{},
		{Server: "hub:6443"},
		{Server: "https://hub:6443", ProxyURL: "ftp://proxy"},
	} {
		if _, err := clientcert.BuildHubKubeconfig(hub); err == nil {
			t.Errorf("BuildHubKubeconfig(%+v) succeeded", hub)
		}
	}
}

func TestCheckHubKubeconfig(t *testing.T) {
	hubCA := mustCA(t, "hub-serving-ca")
	otherCA := mustCA(t, "other-serving-ca")
	clientCA := mustCA(t, "hub-client-ca")
	hub := clientcert.HubInfo{Server: "https://hub.example.com:6443", ProxyURL: "http://proxy.local:3128", CAData: hubCA.CertPEM}
	valid, err := clientcerttesting.NewHubKubeconfigSecretData(clientCA, hub, testCluster, testAgent, testNow.Add(-24*time.Hour), testNow.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	with := func(changes map[string][]byte) map[string][]byte {
		out := maps.Clone(valid)
		for k, v := range changes {
			if v == nil {
				delete(out, k)
			} else {
				out[k] = v
			}
		}
		return out
	}
	issue := func(cluster, agent string, notBefore, notAfter time.Time) map[string][]byte {
		certPEM, keyPEM, err := clientCA.IssueClientCert(cluster, agent, notBefore, notAfter)
		if err != nil {
			t.Fatal(err)
		}
		return map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM}
	}
	merge := func(a, b map[string][]byte) map[string][]byte {
		out := maps.Clone(a)
		maps.Copy(out, b)
		return out
	}
	kubeconfigFor := func(h clientcert.HubInfo) []byte {
		k, err := clientcert.BuildHubKubeconfig(h)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	kubeconfigWith := func(mutate func(*clientcmdapi.Config)) []byte {
		cfg, err := clientcmd.Load(valid["kubeconfig"])
		if err != nil {
			t.Fatal(err)
		}
		mutate(cfg)
		out, err := clientcmd.Write(*cfg)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	otherKey := issue(testCluster, testAgent, testNow.Add(-time.Hour), testNow.Add(time.Hour))["tls.key"]
	expired := issue(testCluster, testAgent, testNow.Add(-25*time.Hour), testNow.Add(-time.Hour))
	notYet := issue(testCluster, testAgent, testNow.Add(time.Hour), testNow.Add(25*time.Hour))
	noGroupCert, noGroupKey, err := clientCA.IssueClientCertWithSubject(pkix.Name{
		CommonName: clientcert.CommonName(testCluster, testAgent), Organization: []string{clientcert.ManagedClustersGroup},
	}, testNow.Add(-time.Hour), testNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	adminCert, adminKey, err := clientCA.IssueClientCertWithSubject(pkix.Name{CommonName: "kube-admin"}, testNow.Add(-time.Hour), testNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name       string
		data       map[string][]byte
		cluster    string
		agent      string
		hub        clientcert.HubInfo
		wantReason clientcert.InvalidReason
		wantMsg    string // exact Message; "" to skip (then wantPrefix)
		wantPrefix string
		wantFields []string
	}{
		{name: "valid", data: valid},
		{name: "valid with empty expected names", data: valid, cluster: "-", agent: "-"},
		{name: "valid with reformatted CA and trailing slash", data: valid,
			hub: clientcert.HubInfo{Server: hub.Server + "/", ProxyURL: hub.ProxyURL, CAData: append(append([]byte{}, hubCA.CertPEM...), '\n')}},
		{name: "FC-07 tls.crt expired an hour ago", data: merge(valid, expired),
			wantReason: clientcert.ReasonCertificateExpired, wantMsg: "tls.crt expired at 2026-03-04T04:06:07Z"},
		{name: "FC-07 tls.crt and tls.key from different key pairs", data: with(map[string][]byte{"tls.key": otherKey}),
			wantReason: clientcert.ReasonKeyMismatch, wantMsg: "tls.key does not match tls.crt: tls: private key does not match public key"},
		{name: "FC-07 truncated tls.crt PEM", data: with(map[string][]byte{"tls.crt": valid["tls.crt"][:len(valid["tls.crt"])/2]}),
			wantReason: clientcert.ReasonCertificateUnparsable, wantMsg: "tls.crt unparsable: data does not contain any valid RSA or ECDSA certificates"},
		{name: "FC-07 truncated tls.key PEM", data: with(map[string][]byte{"tls.key": valid["tls.key"][:len(valid["tls.key"])/2]}),
			wantReason: clientcert.ReasonKeyUnparsable, wantPrefix: "tls.key unparsable: "},
		{name: "FC-07 kubeconfig key missing with tls.* present", data: with(map[string][]byte{"kubeconfig": nil}),
			wantReason: clientcert.ReasonMissingKey, wantMsg: "missing key kubeconfig"},
		{name: "several keys missing", data: with(map[string][]byte{"cluster-name": nil, "agent-name": []byte{}}),
			wantReason: clientcert.ReasonMissingKey, wantMsg: "missing key cluster-name, agent-name"},
		{name: "no Secret data", data: nil,
			wantReason: clientcert.ReasonMissingKey, wantMsg: "missing key kubeconfig, tls.crt, tls.key, cluster-name, agent-name"},
		{name: "not yet valid", data: merge(valid, notYet),
			wantReason: clientcert.ReasonCertificateNotYetValid, wantMsg: "tls.crt not yet valid: valid from 2026-03-04T06:06:07Z, now is 2026-03-04T05:06:07Z"},
		{name: "certificate names another cluster", data: valid, cluster: "cluster2",
			wantReason: clientcert.ReasonIdentityMismatch, wantMsg: "tls.crt subject CN names cluster/agent cluster1:abcde, not cluster2:abcde"},
		{name: "certificate names another agent", data: valid, agent: "zzzzz",
			wantReason: clientcert.ReasonIdentityMismatch, wantMsg: "tls.crt subject CN names cluster/agent cluster1:abcde, not cluster1:zzzzz"},
		{name: "certificate is not an agent identity", data: with(map[string][]byte{"tls.crt": adminCert, "tls.key": adminKey}),
			wantReason: clientcert.ReasonIdentityMismatch, wantMsg: `tls.crt subject CN "kube-admin" is not an OCM agent identity (system:open-cluster-management:<cluster>:<agent>)`},
		{name: "certificate lacks the cluster group", data: with(map[string][]byte{"tls.crt": noGroupCert, "tls.key": noGroupKey}),
			wantReason: clientcert.ReasonIdentityMismatch,
			wantMsg:    `tls.crt subject O ["system:open-cluster-management:managed-clusters"] lacks the cluster group "system:open-cluster-management:cluster1"`},
		{name: "cluster-name key disagrees with the certificate", data: with(map[string][]byte{"cluster-name": []byte("cluster9")}), cluster: "-",
			wantReason: clientcert.ReasonIdentityMismatch, wantMsg: "keys cluster-name/agent-name name cluster/agent cluster9:abcde, but tls.crt names cluster1:abcde"},
		{name: "kubeconfig unparsable", data: with(map[string][]byte{"kubeconfig": []byte("{{{")}),
			wantReason: clientcert.ReasonKubeconfigUnparsable, wantPrefix: "kubeconfig unparsable: "},
		{name: "kubeconfig without current-context", data: with(map[string][]byte{"kubeconfig": kubeconfigWith(func(c *clientcmdapi.Config) { c.CurrentContext = "" })}),
			wantReason: clientcert.ReasonKubeconfigUnparsable, wantMsg: "kubeconfig: current-context: not set"},
		{name: "kubeconfig authenticates with a token", data: with(map[string][]byte{"kubeconfig": kubeconfigWith(func(c *clientcmdapi.Config) {
			c.AuthInfos["default-auth"] = &clientcmdapi.AuthInfo{Token: "t"}
		})}),
			wantReason: clientcert.ReasonKubeconfigCredentialsMismatch,
			wantMsg:    `kubeconfig users["default-auth"] does not authenticate with client-certificate tls.crt and client-key tls.key only`},
		{name: "kubeconfig with absolute tls paths is accepted", data: with(map[string][]byte{"kubeconfig": kubeconfigWith(func(c *clientcmdapi.Config) {
			c.AuthInfos["default-auth"] = &clientcmdapi.AuthInfo{ClientCertificate: "/spoke/hub-kubeconfig/tls.crt", ClientKey: "/spoke/hub-kubeconfig/tls.key"}
		})})},
		{name: "server differs from the hub", data: with(map[string][]byte{"kubeconfig": kubeconfigFor(clientcert.HubInfo{Server: "https://hub-b:6443", ProxyURL: hub.ProxyURL, CAData: hubCA.CertPEM})}),
			wantReason: clientcert.ReasonHubMismatch, wantFields: []string{"server"},
			wantMsg: `kubeconfig clusters["default-cluster"] differs from the hub's bootstrap kubeconfig in server ("https://hub-b:6443", hub "https://hub.example.com:6443")`},
		{name: "proxy-url differs from the hub", data: with(map[string][]byte{"kubeconfig": kubeconfigFor(clientcert.HubInfo{Server: hub.Server, CAData: hubCA.CertPEM})}),
			wantReason: clientcert.ReasonHubMismatch, wantFields: []string{"proxy-url"},
			wantMsg: `kubeconfig clusters["default-cluster"] differs from the hub's bootstrap kubeconfig in proxy-url ("", hub "http://proxy.local:3128")`},
		{name: "CA differs from the hub", data: with(map[string][]byte{"kubeconfig": kubeconfigFor(clientcert.HubInfo{Server: hub.Server, ProxyURL: hub.ProxyURL, CAData: otherCA.CertPEM})}),
			wantReason: clientcert.ReasonHubMismatch, wantFields: []string{"certificate-authority-data"},
			wantMsg: `kubeconfig clusters["default-cluster"] differs from the hub's bootstrap kubeconfig in certificate-authority-data (CN other-serving-ca, hub CN hub-serving-ca)`},
		{name: "CA missing while the hub has one", data: with(map[string][]byte{"kubeconfig": kubeconfigFor(clientcert.HubInfo{Server: hub.Server, ProxyURL: hub.ProxyURL})}),
			wantReason: clientcert.ReasonHubMismatch, wantFields: []string{"certificate-authority-data"},
			wantMsg: `kubeconfig clusters["default-cluster"] differs from the hub's bootstrap kubeconfig in certificate-authority-data (none, hub CN hub-serving-ca)`},
		{name: "CA as a file reference", data: with(map[string][]byte{"kubeconfig": kubeconfigWith(func(c *clientcmdapi.Config) {
			c.Clusters["default-cluster"].CertificateAuthorityData = nil
			c.Clusters["default-cluster"].CertificateAuthority = "/etc/hub-ca.crt"
		})}),
			wantReason: clientcert.ReasonHubMismatch, wantFields: []string{"certificate-authority-data"},
			wantMsg: `kubeconfig clusters["default-cluster"] differs from the hub's bootstrap kubeconfig in certificate-authority-data (file "/etc/hub-ca.crt", hub CN hub-serving-ca)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cluster, agent, h := testCluster, testAgent, hub
			if tc.cluster != "" {
				cluster = strings.TrimPrefix(tc.cluster, "-")
			}
			if tc.agent != "" {
				agent = strings.TrimPrefix(tc.agent, "-")
			}
			if tc.hub.Server != "" {
				h = tc.hub
			}
			err := clientcert.CheckHubKubeconfig(tc.data, cluster, agent, h, testNow)
			if tc.wantReason == "" {
				if err != nil {
					t.Fatalf("CheckHubKubeconfig = %v, want nil", err)
				}
				return
			}
			var ie *clientcert.InvalidHubKubeconfigError
			if !errors.As(err, &ie) {
				t.Fatalf("CheckHubKubeconfig = %v, want an *InvalidHubKubeconfigError", err)
			}
			if ie.Reason != tc.wantReason || clientcert.InvalidReasonOf(err) != tc.wantReason {
				t.Errorf("Reason = %q, want %q (%s)", ie.Reason, tc.wantReason, ie.Message)
			}
			if tc.wantMsg != "" && ie.Message != tc.wantMsg {
				t.Errorf("Message = %s\nwant      %s", ie.Message, tc.wantMsg)
			}
			if tc.wantPrefix != "" && !strings.HasPrefix(ie.Message, tc.wantPrefix) {
				t.Errorf("Message = %s, want prefix %s", ie.Message, tc.wantPrefix)
			}
			if diff := cmp.Diff(tc.wantFields, ie.HubFields); diff != "" {
				t.Errorf("HubFields (-want +got):\n%s", diff)
			}
			if err.Error() != "invalid hub kubeconfig: "+ie.Message {
				t.Errorf("Error() = %q", err.Error())
			}
		})
	}
}
