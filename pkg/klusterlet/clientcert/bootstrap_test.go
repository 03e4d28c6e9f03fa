package clientcert_test

import (
	"bytes"
	"crypto/x509/pkix"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

// bootstrapFixture is a directory with a hub CA, a bootstrap client certificate and key, and a token.
type bootstrapFixture struct {
	dir                string
	caPEM              []byte
	certPEM, keyPEM    []byte
	otherKeyPEM        []byte
	bootstrapNotBefore time.Time
	bootstrapNotAfter  time.Time
}

func newBootstrapFixture(t *testing.T) *bootstrapFixture {
	t.Helper()
	ca := mustCA(t, "hub-ca")
	f := &bootstrapFixture{dir: t.TempDir(), caPEM: ca.CertPEM, bootstrapNotBefore: testNow.Add(-time.Hour), bootstrapNotAfter: testNow.Add(time.Hour)}
	var err error
	f.certPEM, f.keyPEM, err = ca.IssueClientCertWithSubject(pkix.Name{CommonName: "system:bootstrap:abcdef"}, f.bootstrapNotBefore, f.bootstrapNotAfter)
	if err != nil {
		t.Fatal(err)
	}
	_, f.otherKeyPEM, err = ca.IssueClientCertWithSubject(pkix.Name{CommonName: "other"}, f.bootstrapNotBefore, f.bootstrapNotAfter)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		"ca.crt": f.caPEM, "client.crt": f.certPEM, "client.key": f.keyPEM, "other.key": f.otherKeyPEM,
		"token": []byte("abc.0123456789abcdef\n"), "bad.crt": []byte("not pem"),
	} {
		if err := os.WriteFile(filepath.Join(f.dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// bootstrapConfig is a kubeconfig with relative file references, as `clusteradm` users often hand-write.
func bootstrapConfig() *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: "https://hub.example.com:6443", CertificateAuthority: "ca.crt"}
	cfg.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{ClientCertificate: "client.crt", ClientKey: "client.key"}
	cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "bootstrap"}
	cfg.CurrentContext = "ctx"
	return cfg
}

func writeKubeconfig(t *testing.T, path string, cfg *clientcmdapi.Config) []byte {
	t.Helper()
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return data
}

func TestLoadBootstrapKubeconfigFileErrors(t *testing.T) {
	f := newBootstrapFixture(t)
	path := filepath.Join(f.dir, "bootstrap.kubeconfig")
	cases := []struct {
		name      string
		mutate    func(cfg *clientcmdapi.Config)
		raw       []byte // written instead of the config when not nil
		wantField string
		wantErr   string // exact message; "<dir>" and "<path>" are substituted
	}{
		{
			name:      "CA file does not exist (absolute)",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.Clusters["hub"].CertificateAuthority = "/nope/ca.crt" },
			wantField: `clusters["hub"].certificate-authority`,
			wantErr:   `bootstrap kubeconfig <path>: clusters["hub"].certificate-authority "/nope/ca.crt": no such file`,
		},
		{
			name:      "CA file does not exist (relative)",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.Clusters["hub"].CertificateAuthority = "missing.crt" },
			wantField: `clusters["hub"].certificate-authority`,
			wantErr:   `bootstrap kubeconfig <path>: clusters["hub"].certificate-authority "missing.crt (<dir>/missing.crt)": no such file`,
		},
		{
			name:      "CA file is not PEM",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.Clusters["hub"].CertificateAuthority = "bad.crt" },
			wantField: `clusters["hub"].certificate-authority`,
			wantErr:   `bootstrap kubeconfig <path>: clusters["hub"].certificate-authority "bad.crt": not a PEM certificate bundle: data does not contain any valid RSA or ECDSA certificates`,
		},
		{
			name:      "client certificate file does not exist",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.AuthInfos["bootstrap"].ClientCertificate = "/nope/client.crt" },
			wantField: `users["bootstrap"].client-certificate`,
			wantErr:   `bootstrap kubeconfig <path>: users["bootstrap"].client-certificate "/nope/client.crt": no such file`,
		},
		{
			name:      "client key file does not exist",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.AuthInfos["bootstrap"].ClientKey = "gone.key" },
			wantField: `users["bootstrap"].client-key`,
			wantErr:   `bootstrap kubeconfig <path>: users["bootstrap"].client-key "gone.key (<dir>/gone.key)": no such file`,
		},
		{
			name: "token file does not exist",
			mutate: func(cfg *clientcmdapi.Config) {
				cfg.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{TokenFile: "/nope/token"}
			},
			wantField: `users["bootstrap"].tokenFile`,
			wantErr:   `bootstrap kubeconfig <path>: users["bootstrap"].tokenFile "/nope/token": no such file`,
		},
		{
			name:      "client key does not match the certificate",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.AuthInfos["bootstrap"].ClientKey = "other.key" },
			wantField: `users["bootstrap"].client-key-data`,
			wantErr:   `bootstrap kubeconfig <path>: users["bootstrap"].client-key-data: does not match the client certificate: tls: private key does not match public key`,
		},
		{
			name:      "client certificate without key",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.AuthInfos["bootstrap"].ClientKey = "" },
			wantField: `users["bootstrap"].client-key-data`,
			wantErr:   `bootstrap kubeconfig <path>: users["bootstrap"].client-key-data: missing while a client certificate is set`,
		},
		{
			name:      "no current-context",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.CurrentContext = "" },
			wantField: "current-context",
			wantErr:   `bootstrap kubeconfig <path>: current-context: not set`,
		},
		{
			name:      "current-context names a missing context",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.CurrentContext = "nope" },
			wantField: "current-context",
			wantErr:   `bootstrap kubeconfig <path>: current-context "nope": no such context`,
		},
		{
			name:      "context names a missing cluster",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.Contexts["ctx"].Cluster = "other" },
			wantField: `contexts["ctx"].cluster`,
			wantErr:   `bootstrap kubeconfig <path>: contexts["ctx"].cluster "other": no such cluster`,
		},
		{
			name:      "context names a missing user",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.Contexts["ctx"].AuthInfo = "ghost" },
			wantField: `contexts["ctx"].user`,
			wantErr:   `bootstrap kubeconfig <path>: contexts["ctx"].user "ghost": no such user`,
		},
		{
			name:      "context without user",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.Contexts["ctx"].AuthInfo = "" },
			wantField: `contexts["ctx"].user`,
			wantErr:   `bootstrap kubeconfig <path>: contexts["ctx"].user: not set`,
		},
		{
			name:      "proxy-url unparsable",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.Clusters["hub"].ProxyURL = "http://[::1" },
			wantField: `clusters["hub"].proxy-url`,
			wantErr:   `bootstrap kubeconfig <path>: clusters["hub"].proxy-url "http://[::1": not a URL: missing ']' in host`,
		},
		{
			name:      "proxy-url with an unsupported scheme",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.Clusters["hub"].ProxyURL = "ftp://proxy:21" },
			wantField: `clusters["hub"].proxy-url`,
			wantErr:   `bootstrap kubeconfig <path>: clusters["hub"].proxy-url "ftp://proxy:21": scheme must be http, https or socks5`,
		},
		{
			name:      "server unparsable",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.Clusters["hub"].Server = "https://hub example:6443" },
			wantField: `clusters["hub"].server`,
			wantErr:   `bootstrap kubeconfig <path>: clusters["hub"].server "https://hub example:6443": not a URL: invalid character " " in host name`,
		},
		{
			name:      "server without scheme",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.Clusters["hub"].Server = "10.0.0.1:6443" },
			wantField: `clusters["hub"].server`,
			wantErr:   `bootstrap kubeconfig <path>: clusters["hub"].server "10.0.0.1:6443": not a URL: first path segment in URL cannot contain colon`,
		},
		{
			name:      "server not set",
			mutate:    func(cfg *clientcmdapi.Config) { cfg.Clusters["hub"].Server = "" },
			wantField: `clusters["hub"].server`,
			wantErr:   `bootstrap kubeconfig <path>: clusters["hub"].server: not set`,
		},
		{
			name:    "empty file",
			raw:     []byte("\n"),
			wantErr: `bootstrap kubeconfig <path>: empty`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.raw != nil {
				if err := os.WriteFile(path, tc.raw, 0o600); err != nil {
					t.Fatal(err)
				}
			} else {
				cfg := bootstrapConfig()
				tc.mutate(cfg)
				writeKubeconfig(t, path, cfg)
			}
			_, err := clientcert.LoadBootstrapKubeconfigFile(path)
			want := strings.NewReplacer("<path>", path, "<dir>", f.dir).Replace(tc.wantErr)
			if err == nil || err.Error() != want {
				t.Fatalf("error = %v\nwant   %s", err, want)
			}
			var ke *clientcert.KubeconfigError
			if !errors.As(err, &ke) || ke.Field != tc.wantField || ke.Source != path {
				t.Errorf("KubeconfigError = %+v, want Field %q Source %q", ke, tc.wantField, path)
			}
		})
	}

	t.Run("missing kubeconfig file", func(t *testing.T) {
		_, err := clientcert.LoadBootstrapKubeconfigFile("/nope/bootstrap.kubeconfig")
		if err == nil || err.Error() != "bootstrap kubeconfig /nope/bootstrap.kubeconfig: no such file" || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("not a kubeconfig", func(t *testing.T) {
		if err := os.WriteFile(path, []byte("{{{"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := clientcert.LoadBootstrapKubeconfigFile(path)
		if err == nil || !strings.HasPrefix(err.Error(), "bootstrap kubeconfig "+path+": not a kubeconfig: ") {
			t.Errorf("error = %v", err)
		}
	})
}

func TestLoadBootstrapKubeconfigFileInlinesReferences(t *testing.T) {
	f := newBootstrapFixture(t)
	path := filepath.Join(f.dir, "bootstrap.kubeconfig")
	raw := writeKubeconfig(t, path, func() *clientcmdapi.Config {
		cfg := bootstrapConfig()
		cfg.Clusters["hub"].ProxyURL = "http://127.0.0.1:3128"
		cfg.Clusters["hub"].TLSServerName = "hub.internal"
		return cfg
	}())

	b, err := clientcert.LoadBootstrapKubeconfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wantHub := clientcert.HubInfo{Server: "https://hub.example.com:6443", ProxyURL: "http://127.0.0.1:3128", CAData: f.caPEM, TLSServerName: "hub.internal"}
	if diff := cmp.Diff(wantHub, b.Hub); diff != "" {
		t.Errorf("Hub (-want +got):\n%s", diff)
	}
	if b.Source != path || b.ContextName != "ctx" || b.ClusterName != "hub" || b.UserName != "bootstrap" || !bytes.Equal(b.Raw, raw) {
		t.Errorf("names/raw: %q %q %q %q raw equal %t", b.Source, b.ContextName, b.ClusterName, b.UserName, bytes.Equal(b.Raw, raw))
	}
	rc := b.RestConfig
	if rc.Host != "https://hub.example.com:6443" || rc.CAFile != "" || rc.CertFile != "" || rc.KeyFile != "" ||
		!bytes.Equal(rc.CAData, f.caPEM) || !bytes.Equal(rc.CertData, f.certPEM) || !bytes.Equal(rc.KeyData, f.keyPEM) ||
		rc.ServerName != "hub.internal" || rc.Proxy == nil {
		t.Errorf("RestConfig not inlined: host %q files %q %q %q, CA/cert/key inline %t %t %t, server name %q, proxy set %t",
			rc.Host, rc.CAFile, rc.CertFile, rc.KeyFile, bytes.Equal(rc.CAData, f.caPEM), bytes.Equal(rc.CertData, f.certPEM),
			bytes.Equal(rc.KeyData, f.keyPEM), rc.ServerName, rc.Proxy != nil)
	}
	// Inlined: the files may go away.
	if err := os.Remove(filepath.Join(f.dir, "ca.crt")); err != nil {
		t.Fatal(err)
	}
	if len(b.RestConfig.CAData) == 0 {
		t.Error("CA data lost")
	}

	notAfter, ok := b.ClientCertNotAfter()
	if !ok || !notAfter.Equal(f.bootstrapNotAfter) {
		t.Errorf("ClientCertNotAfter = %v, %t; want %v", notAfter, ok, f.bootstrapNotAfter)
	}
	for _, tc := range []struct {
		now  time.Time
		want bool
	}{
		{testNow, false},
		{f.bootstrapNotAfter.Add(-time.Second), false},
		{f.bootstrapNotAfter, true},
		{f.bootstrapNotAfter.Add(time.Hour), true},
	} {
		if got := b.Expired(tc.now); got != tc.want {
			t.Errorf("Expired(%v) = %t, want %t", tc.now, got, tc.want)
		}
	}
}

func TestLoadBootstrapKubeconfigFileTokenAndNoCA(t *testing.T) {
	f := newBootstrapFixture(t)
	path := filepath.Join(f.dir, "bootstrap.kubeconfig")
	cfg := bootstrapConfig()
	cfg.Clusters["hub"].CertificateAuthority = ""
	cfg.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{TokenFile: "token"}
	writeKubeconfig(t, path, cfg)

	b, err := clientcert.LoadBootstrapKubeconfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Hub.CAData) != 0 || b.RestConfig.BearerToken != "abc.0123456789abcdef" || b.RestConfig.BearerTokenFile != "" {
		t.Errorf("CA %q token %q token file %q", b.Hub.CAData, b.RestConfig.BearerToken, b.RestConfig.BearerTokenFile)
	}
	if _, ok := b.ClientCertNotAfter(); ok || b.Expired(testNow.Add(100*365*24*time.Hour)) {
		t.Error("a token-authenticated bootstrap kubeconfig must not report a certificate expiry")
	}
}

// TestLoadBootstrapKubeconfigFileExecCommand: an exec plugin's command with a path separator resolves against the
// kubeconfig's directory, as kubectl does; one without is left to PATH.
func TestLoadBootstrapKubeconfigFileExecCommand(t *testing.T) {
	for _, tc := range []struct{ command, want string }{
		{command: "bin/get-token", want: "DIR/bin/get-token"},
		{command: "/usr/local/bin/get-token", want: "/usr/local/bin/get-token"},
		{command: "get-token", want: "get-token"},
	} {
		t.Run(tc.command, func(t *testing.T) {
			f := newBootstrapFixture(t)
			path := filepath.Join(f.dir, "bootstrap.kubeconfig")
			cfg := bootstrapConfig()
			cfg.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: tc.command, APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}
			writeKubeconfig(t, path, cfg)
			b, err := clientcert.LoadBootstrapKubeconfigFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(tc.want, "DIR", f.dir, 1)
			if b.RestConfig.ExecProvider == nil || b.RestConfig.ExecProvider.Command != want {
				t.Errorf("exec command = %+v, want %q", b.RestConfig.ExecProvider, want)
			}
		})
	}
}

func TestParseBootstrapKubeconfigFromSecret(t *testing.T) {
	f := newBootstrapFixture(t)
	const source = "secret ns/hub-b-bootstrap key kubeconfig"
	inline := func() *clientcmdapi.Config {
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["hub-b"] = &clientcmdapi.Cluster{Server: "https://hub-b:6443", CertificateAuthorityData: f.caPEM}
		cfg.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{ClientCertificateData: f.certPEM, ClientKeyData: f.keyPEM}
		cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "hub-b", AuthInfo: "bootstrap"}
		cfg.CurrentContext = "ctx"
		return cfg
	}
	cases := []struct {
		name    string
		mutate  func(cfg *clientcmdapi.Config)
		wantErr string
	}{
		{name: "self-contained", mutate: func(*clientcmdapi.Config) {}},
		{
			name: "CA file reference",
			mutate: func(cfg *clientcmdapi.Config) {
				cfg.Clusters["hub-b"].CertificateAuthorityData = nil
				cfg.Clusters["hub-b"].CertificateAuthority = filepath.Join(f.dir, "ca.crt")
			},
			wantErr: source + `: clusters["hub-b"].certificate-authority "` + filepath.Join(f.dir, "ca.crt") +
				`": file references are not allowed in a kubeconfig read from a Secret; inline the data`,
		},
		{
			name: "client certificate file reference",
			mutate: func(cfg *clientcmdapi.Config) {
				cfg.AuthInfos["bootstrap"].ClientCertificateData = nil
				cfg.AuthInfos["bootstrap"].ClientCertificate = "client.crt"
			},
			wantErr: source + `: users["bootstrap"].client-certificate "client.crt": file references are not allowed in a kubeconfig read from a Secret; inline the data`,
		},
		{
			name: "token file reference",
			mutate: func(cfg *clientcmdapi.Config) {
				cfg.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{TokenFile: "/var/run/token"}
			},
			wantErr: source + `: users["bootstrap"].tokenFile "/var/run/token": file references are not allowed in a kubeconfig read from a Secret; inline the data`,
		},
		{
			name: "exec plugin",
			mutate: func(cfg *clientcmdapi.Config) {
				cfg.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "get-token", APIVersion: "client.authentication.k8s.io/v1"}}
			},
			wantErr: source + `: users["bootstrap"].exec "get-token": exec credential plugins are not allowed in a kubeconfig read from a Secret`,
		},
		{
			name:    "CA data not PEM",
			mutate:  func(cfg *clientcmdapi.Config) { cfg.Clusters["hub-b"].CertificateAuthorityData = []byte("garbage") },
			wantErr: source + `: clusters["hub-b"].certificate-authority-data: not a PEM certificate bundle: data does not contain any valid RSA or ECDSA certificates`,
		},
		{
			name:    "insecure with CA",
			mutate:  func(cfg *clientcmdapi.Config) { cfg.Clusters["hub-b"].InsecureSkipTLSVerify = true },
			wantErr: source + `: clusters["hub-b"].insecure-skip-tls-verify: cannot be combined with a certificate authority`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := inline()
			tc.mutate(cfg)
			data, err := clientcmd.Write(*cfg)
			if err != nil {
				t.Fatal(err)
			}
			b, err := clientcert.ParseBootstrapKubeconfig(data, source)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if b.Hub.Server != "https://hub-b:6443" || !bytes.Equal(b.RestConfig.CertData, f.certPEM) {
					t.Errorf("parsed %+v", b.Hub)
				}
				return
			}
			if want := "bootstrap kubeconfig " + tc.wantErr; err == nil || err.Error() != want {
				t.Errorf("error = %v\nwant   %s", err, want)
			}
		})
	}

	t.Run("Secret without the kubeconfig key", func(t *testing.T) {
		_, err := clientcert.BootstrapKubeconfigFromSecret(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hub-b-bootstrap"}})
		if want := "bootstrap kubeconfig secret ns/hub-b-bootstrap key kubeconfig: key not found in the Secret"; err == nil || err.Error() != want {
			t.Errorf("error = %v, want %s", err, want)
		}
	})
	t.Run("Secret with a valid kubeconfig", func(t *testing.T) {
		data, err := clientcmd.Write(*inline())
		if err != nil {
			t.Fatal(err)
		}
		b, err := clientcert.BootstrapKubeconfigFromSecret(&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hub-b-bootstrap"},
			Data:       map[string][]byte{"kubeconfig": data},
		})
		if err != nil || b.Source != source {
			t.Errorf("BootstrapKubeconfigFromSecret = %+v, %v", b, err)
		}
	})
}

func TestHubInfoDiff(t *testing.T) {
	ca1 := mustCA(t, "ca1")
	ca2 := mustCA(t, "ca2")
	base := clientcert.HubInfo{Server: "https://hub:6443", ProxyURL: "http://proxy:3128", CAData: ca1.CertPEM}
	reformatted := append([]byte("\n"), ca1.CertPEM...)
	cases := []struct {
		name  string
		other clientcert.HubInfo
		want  []string
	}{
		{"same", base, nil},
		{"trailing slash and reformatted CA", clientcert.HubInfo{Server: "https://hub:6443/", ProxyURL: "http://proxy:3128", CAData: reformatted}, nil},
		{"all differ", clientcert.HubInfo{Server: "https://hub-b:6443", CAData: ca2.CertPEM, TLSServerName: "x", InsecureSkipTLSVerify: true},
			[]string{"server", "proxy-url", "certificate-authority-data", "tls-server-name", "insecure-skip-tls-verify"}},
		{"no CA", clientcert.HubInfo{Server: "https://hub:6443", ProxyURL: "http://proxy:3128"}, []string{"certificate-authority-data"}},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, base.Diff(tc.other)); diff != "" {
			t.Errorf("%s: Diff (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestParseBootstrapKubeconfigFileData: the content of a bootstrap kubeconfig file, parsed with its path, has its
// relative file references resolved against the file's directory and inlined, while the same bytes parsed as
// Secret data are rejected; a missing referenced file is named with its field (FC-15).
func TestParseBootstrapKubeconfigFileData(t *testing.T) {
	f := newBootstrapFixture(t)
	path := filepath.Join(f.dir, "bootstrap.kubeconfig")
	raw := writeKubeconfig(t, path, bootstrapConfig())

	b, err := clientcert.ParseBootstrapKubeconfigFileData(raw, path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Hub.CAData, f.caPEM) || !bytes.Equal(b.RestConfig.CertData, f.certPEM) || !bytes.Equal(b.RestConfig.KeyData, f.keyPEM) || b.Source != path {
		t.Errorf("references not inlined or wrong source: CA %t cert %t key %t source %q", bytes.Equal(b.Hub.CAData, f.caPEM),
			bytes.Equal(b.RestConfig.CertData, f.certPEM), bytes.Equal(b.RestConfig.KeyData, f.keyPEM), b.Source)
	}
	if _, err := clientcert.ParseBootstrapKubeconfig(raw, path); err == nil {
		t.Error("ParseBootstrapKubeconfig accepted file references; it is meant for Secret data")
	}

	missing := bootstrapConfig()
	missing.Clusters["hub"].CertificateAuthority = "nope/ca.crt"
	raw = writeKubeconfig(t, path, missing)
	_, err = clientcert.ParseBootstrapKubeconfigFileData(raw, path)
	var ke *clientcert.KubeconfigError
	if !errors.As(err, &ke) || ke.Field != `clusters["hub"].certificate-authority` || !errors.Is(err, fs.ErrNotExist) ||
		!strings.Contains(err.Error(), filepath.Join(f.dir, "nope/ca.crt")) {
		t.Errorf("error = %v; want a KubeconfigError naming clusters[\"hub\"].certificate-authority and the missing file", err)
	}
}
