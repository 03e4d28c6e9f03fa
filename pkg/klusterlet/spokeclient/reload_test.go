package spokeclient

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	testingclock "k8s.io/utils/clock/testing"
)

// apiserver is a TLS server answering /version for the tokens it accepts and 401 otherwise; it records which
// token each request carried.
type apiserver struct {
	*httptest.Server
	mu       sync.Mutex
	accepted map[string]bool
	seen     []string
}

func newAPIServer(t *testing.T, tokens ...string) *apiserver {
	s := &apiserver{accepted: map[string]bool{}}
	for _, tok := range tokens {
		s.accepted[tok] = true
	}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		tok := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		s.seen = append(s.seen, tok)
		ok := s.accepted[tok]
		s.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"34","gitVersion":"v1.34.3"}`))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *apiserver) setAccepted(tokens ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accepted = map[string]bool{}
	for _, tok := range tokens {
		s.accepted[tok] = true
	}
}

func (s *apiserver) lastToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) == 0 {
		return ""
	}
	return s.seen[len(s.seen)-1]
}

func (s *apiserver) caPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

// writeKubeconfig writes a kubeconfig for server with an inline token (and the CA inline unless caFile is set).
func writeKubeconfig(t *testing.T, path, server string, ca []byte, caFile, token string) {
	t.Helper()
	cluster := &clientcmdapi.Cluster{Server: server}
	if caFile != "" {
		cluster.CertificateAuthority = caFile
	} else {
		cluster.CertificateAuthorityData = ca
	}
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"spoke": cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"agent": {Token: token}},
		Contexts:       map[string]*clientcmdapi.Context{"spoke": {Cluster: "spoke", AuthInfo: "agent"}},
		CurrentContext: "spoke",
	}
	data, err := clientcmd.Write(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Replace the file as the kubelet replaces a mounted Secret: write aside, then rename over it.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func getVersion(t *testing.T, r *Reloader) error {
	t.Helper()
	client, err := kubernetes.NewForConfig(r.Config())
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Discovery().ServerVersion()
	return err
}

func TestReloaderFollowsTheFile(t *testing.T) {
	type step struct {
		name string
		// rewrite, if set, replaces the file before the request; garbage writes content that is not a kubeconfig.
		rewrite string
		garbage bool
		// accepted are the tokens the server accepts from this step on (nil: unchanged).
		accepted []string
		advance  time.Duration
		// wantToken is the token the request carries; wantErr whether the request fails; wantReloads the count.
		wantToken   string
		wantErr     bool
		wantReloads int
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "a changed file is used after the check interval, not before",
			steps: []step{
				{name: "initial", wantToken: "token-a"},
				{name: "changed, not due", rewrite: "token-b", advance: 5 * time.Second, wantToken: "token-a"},
				{name: "due", advance: 5 * time.Second, wantToken: "token-b", wantReloads: 1},
			},
		},
		{
			name: "a 401 makes it look at once (FC-13: token revoked, then re-issued)",
			steps: []step{
				{name: "initial", wantToken: "token-a"},
				{name: "revoked: the 401 makes it look, the file is the same", accepted: []string{}, advance: time.Second, wantToken: "token-a", wantErr: true},
				{name: "re-issued within a second of that look: not looked at again yet", rewrite: "token-b", accepted: []string{"token-b"}, wantToken: "token-a", wantErr: true},
				{name: "a second later the 401 makes it look again", advance: time.Second, wantToken: "token-a", wantErr: true, wantReloads: 1},
				{name: "next request uses it, well before the check interval", wantToken: "token-b", wantReloads: 1},
			},
		},
		{
			name: "content that does not load keeps the credentials in use",
			steps: []step{
				{name: "initial", wantToken: "token-a"},
				{name: "garbage", garbage: true, advance: 10 * time.Second, wantToken: "token-a"},
				{name: "garbage again", advance: 10 * time.Second, wantToken: "token-a"},
				{name: "fixed", rewrite: "token-b", advance: 10 * time.Second, wantToken: "token-b", wantReloads: 1},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			server := newAPIServer(t, "token-a", "token-b")
			path := filepath.Join(t.TempDir(), "kubeconfig")
			writeKubeconfig(t, path, server.URL, server.caPEM(), "", "token-a")
			clk := testingclock.NewFakeClock(time.Now())
			r, err := New(path, Options{Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.steps {
				if s.accepted != nil {
					server.setAccepted(s.accepted...)
				}
				if s.rewrite != "" {
					writeKubeconfig(t, path, server.URL, server.caPEM(), "", s.rewrite)
				}
				if s.garbage {
					if err := os.WriteFile(path, []byte("apiVersion: v1\nclusters: [half-written"), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				clk.Step(s.advance)
				err := getVersion(t, r)
				if (err != nil) != s.wantErr {
					t.Fatalf("%s: request error %v, want error %v", s.name, err, s.wantErr)
				}
				if got := server.lastToken(); got != s.wantToken {
					t.Fatalf("%s: request carried %q, want %q", s.name, got, s.wantToken)
				}
				if got := r.Reloads(); got != s.wantReloads {
					t.Fatalf("%s: %d reloads, want %d", s.name, got, s.wantReloads)
				}
			}
		})
	}
}

func TestReloaderFollowsAServerChange(t *testing.T) {
	first := newAPIServer(t, "token-a")
	second := newAPIServer(t, "token-a")
	path := filepath.Join(t.TempDir(), "kubeconfig")
	writeKubeconfig(t, path, first.URL, first.caPEM(), "", "token-a")
	clk := testingclock.NewFakeClock(time.Now())
	r, err := New(path, Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := getVersion(t, r); err != nil {
		t.Fatal(err)
	}
	writeKubeconfig(t, path, second.URL, second.caPEM(), "", "token-a")
	clk.Step(10 * time.Second)
	if err := getVersion(t, r); err != nil {
		t.Fatal(err)
	}
	if second.lastToken() != "token-a" {
		t.Fatalf("the request after the server change did not reach the new server")
	}
}

func TestReloaderResolvesFilesRelativeToTheKubeconfig(t *testing.T) {
	server := newAPIServer(t, "token-a")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), server.caPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kubeconfig")
	writeKubeconfig(t, path, server.URL, nil, "ca.crt", "token-a")
	r, err := New(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := getVersion(t, r); err != nil {
		t.Fatalf("CA file relative to the kubeconfig: %v", err)
	}
	ca, err := r.CAData()
	if err != nil || string(ca) != string(server.caPEM()) {
		t.Fatalf("CAData() = %d bytes, %v; want the CA file's content", len(ca), err)
	}
}

func TestNewRejectsUnusableKubeconfigs(t *testing.T) {
	dir := t.TempDir()
	noServer := filepath.Join(dir, "kubeconfig-without-url")
	if err := os.WriteFile(noServer, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, wantSubstr string
	}{
		{name: "missing file", path: filepath.Join(dir, "absent"), wantSubstr: "absent"},
		{name: "no server", path: noServer, wantSubstr: "server"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.path, Options{})
			if err == nil {
				t.Fatal("New returned no error")
			}
			if !strings.Contains(err.Error(), "--spoke-kubeconfig") || !strings.Contains(err.Error(), tc.wantSubstr) {
				t.Fatalf("error %q does not name the flag and %q", err, tc.wantSubstr)
			}
		})
	}
}
