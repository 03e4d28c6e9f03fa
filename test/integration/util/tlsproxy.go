package util

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
)

// ReencryptingProxy is an HTTPS reverse proxy in front of a hub's kube-apiserver that serves a certificate of a
// CA of its own, which the test can replace (RotateServingCA), so a test can make "the hub" serve a certificate
// the agent does not trust (FC-03) while the apiserver stays as it is. It forwards each request over TLS to the
// apiserver with the client certificate the caller presented, which it must be able to use: the certificate and
// key come from AddIdentity or, for certificates it has not seen, from the Identities function (e.g. the
// agent's hub kubeconfig Secret). Callers whose certificate it cannot use get 502.
type ReencryptingProxy struct {
	t        testing.TB
	upstream *url.URL
	rootCAs  *x509.CertPool
	listener net.Listener
	server   *http.Server

	mu         sync.Mutex
	serving    *tls.Certificate
	caPEM      []byte
	identities map[string]tls.Certificate // by the DER of the leaf certificate
	transports map[string]*http.Transport
	conns      map[net.Conn]struct{}
	// Identities, if set, is asked for certificate/key pairs (PEM) when a caller presents an unknown one.
	Identities func() [][2][]byte

	// fault, if set, may answer a request itself (see SetFault).
	fault func(r *http.Request) (status int, handled bool)
}

// SetFault installs f, which sees every request first and, when it returns handled, answers it with status
// instead of forwarding it (e.g. a flaky /livez, FC-11). nil removes it.
func (p *ReencryptingProxy) SetFault(f func(r *http.Request) (status int, handled bool)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = f
}

// StartReencryptingProxy serves on a free 127.0.0.1 port with a fresh CA and forwards to upstreamURL, whose
// serving certificate upstreamCA verifies. It stops when the test ends.
func StartReencryptingProxy(t testing.TB, upstreamURL string, upstreamCA []byte) *ReencryptingProxy {
	t.Helper()
	u, err := url.Parse(upstreamURL)
	if err != nil {
		t.Fatalf("reencrypting proxy: upstream %q: %v", upstreamURL, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(upstreamCA) {
		t.Fatalf("reencrypting proxy: no certificate in the upstream CA bundle")
	}
	p := &ReencryptingProxy{t: t, upstream: u, rootCAs: pool, identities: map[string]tls.Certificate{},
		transports: map[string]*http.Transport{}, conns: map[net.Conn]struct{}{}}
	p.RotateServingCA()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("reencrypting proxy: %v", err)
	}
	p.listener = l
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(p.upstream)
			r.Out.Host = p.upstream.Host
		},
		Transport:     roundTripperFunc(p.roundTrip),
		FlushInterval: -1, // watches stream
	}
	p.server = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p.mu.Lock()
			fault := p.fault
			p.mu.Unlock()
			if fault != nil {
				if status, handled := fault(r); handled {
					w.WriteHeader(status)
					return
				}
			}
			rp.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(c net.Conn, state http.ConnState) {
			p.mu.Lock()
			defer p.mu.Unlock()
			switch state {
			case http.StateNew:
				p.conns[c] = struct{}{}
			case http.StateClosed, http.StateHijacked:
				delete(p.conns, c)
			}
		},
		TLSConfig: &tls.Config{
			MinVersion: tls.VersionTLS12,
			ClientAuth: tls.RequestClientCert,
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
				p.mu.Lock()
				defer p.mu.Unlock()
				return p.serving, nil
			},
		},
	}
	go func() { _ = p.server.ServeTLS(l, "", "") }()
	t.Cleanup(func() { _ = p.server.Close() })
	return p
}

// URL returns https://127.0.0.1:<port>.
func (p *ReencryptingProxy) URL() string { return "https://" + p.listener.Addr().String() }

// CAData returns the PEM certificate of the CA that signed the current serving certificate.
func (p *ReencryptingProxy) CAData() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.caPEM
}

// RotateServingCA replaces the serving certificate by one from a new CA; connections already open keep the
// old certificate until they are closed (CloseClientConnections closes them).
func (p *ReencryptingProxy) RotateServingCA() {
	p.t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		p.t.Fatalf("reencrypting proxy: generate a serving certificate: %v", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		p.t.Fatalf("reencrypting proxy: %v", err)
	}
	// certPEM is the serving certificate followed by its CA.
	rest := certPEM
	var blocks [][]byte
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		blocks = append(blocks, pem.EncodeToMemory(b))
	}
	if len(blocks) < 2 {
		p.t.Fatalf("reencrypting proxy: expected a serving certificate and its CA, got %d certificates", len(blocks))
	}
	p.mu.Lock()
	p.serving, p.caPEM = &pair, blocks[len(blocks)-1]
	p.mu.Unlock()
}

// CloseClientConnections closes every client connection, so clients reconnect and see the current serving
// certificate.
func (p *ReencryptingProxy) CloseClientConnections() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
}

// AddIdentity lets the proxy use the client certificate certPEM (with keyPEM) towards the apiserver.
func (p *ReencryptingProxy) AddIdentity(certPEM, keyPEM []byte) error {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.identities[string(pair.Certificate[0])] = pair
	return nil
}

// AddKubeconfigIdentity adds the client certificate and key of kubeconfig's current user.
func (p *ReencryptingProxy) AddKubeconfigIdentity(kubeconfig []byte) error {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return err
	}
	return p.AddIdentity(cfg.CertData, cfg.KeyData)
}

func (p *ReencryptingProxy) roundTrip(req *http.Request) (*http.Response, error) {
	if req.TLS == nil || len(req.TLS.PeerCertificates) == 0 {
		return nil, errors.New("reencrypting proxy: the client presented no certificate")
	}
	leaf := req.TLS.PeerCertificates[0].Raw
	rt, err := p.transportFor(leaf)
	if err != nil {
		return nil, err
	}
	return rt.RoundTrip(req)
}

// transportFor returns the upstream transport that authenticates with the identity whose leaf is der.
func (p *ReencryptingProxy) transportFor(der []byte) (*http.Transport, error) {
	key := string(der)
	p.mu.Lock()
	if tr, ok := p.transports[key]; ok {
		p.mu.Unlock()
		return tr, nil
	}
	pair, ok := p.identities[key]
	lookup := p.Identities
	p.mu.Unlock()
	if !ok && lookup != nil {
		for _, kp := range lookup() {
			candidate, err := tls.X509KeyPair(kp[0], kp[1])
			if err == nil && bytes.Equal(candidate.Certificate[0], der) {
				pair, ok = candidate, true
				break
			}
		}
	}
	if !ok {
		return nil, fmt.Errorf("reencrypting proxy: no key for the client certificate presented")
	}
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: p.rootCAs, Certificates: []tls.Certificate{pair}},
		ForceAttemptHTTP2: true,
		IdleConnTimeout:   30 * time.Second,
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.identities[key] = pair
	p.transports[key] = tr
	return tr, nil
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// WithServerAndCA returns kubeconfig with the server and CA data of every cluster replaced.
func WithServerAndCA(t testing.TB, kubeconfig []byte, server string, caPEM []byte) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatalf("parse kubeconfig: %v", err)
	}
	for _, c := range cfg.Clusters {
		c.Server = server
		c.CertificateAuthority = ""
		c.CertificateAuthorityData = caPEM
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatalf("write kubeconfig: %v", err)
	}
	return out
}
