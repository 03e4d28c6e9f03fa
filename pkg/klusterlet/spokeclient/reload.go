// Package spokeclient builds the managed cluster's client config in hosted mode (--spoke-kubeconfig) so that a
// re-issued credential is picked up without a restart (field case FC-13).
//
// client-go reloads a token file (tokenFile) and client certificate files on its own, but not a kubeconfig whose
// credentials are inline — the usual shape of a hosted-mode kubeconfig mounted from a Secret, where the whole file
// is replaced when the credential is re-issued. Reloader re-reads that file and swaps the transport underneath
// every client built from its Config.
package spokeclient

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Options tune a Reloader. Zero fields take the defaults.
type Options struct {
	// CheckInterval is how often, at most, a request makes the Reloader compare the file with what it loaded.
	// Default 10 s.
	CheckInterval time.Duration
	// RejectedCheckInterval is how often, at most, a 401 answer makes it compare the file at once, before the
	// next CheckInterval (a revoked credential is the reason to look). Default 1 s.
	RejectedCheckInterval time.Duration
	// Clock measures the intervals. Default: real clock.
	Clock clock.Clock
}

// Reloader is an http.RoundTripper that sends every request with the credentials of the kubeconfig file at
// Path as it was when last (re)loaded. It is safe for concurrent use: a reload runs in the request that found it
// due, while concurrent requests go on with the credentials loaded before.
//
// Followed on a change: credentials, CA data, the server's scheme and host. Not followed: a server path prefix
// and the CA bundle published to the hub (both read once, at start), and the content of files the kubeconfig
// references (client-go reloads token and client certificate files itself, not a certificate-authority file).
// Watches opened before a change keep their connection until they end.
type Reloader struct {
	path string
	o    Options

	current atomic.Pointer[loaded]
	// reloading is held by the request that re-reads the file; others do not wait for it.
	reloading sync.Mutex

	mu        sync.Mutex // guards the fields below
	lastCheck time.Time
	lastForce time.Time
	rejected  []byte // the last content that failed to load, so that it is reported once
	reloads   int
}

// loaded is what one version of the file gave.
type loaded struct {
	content   []byte
	config    *rest.Config
	transport http.RoundTripper
	server    *url.URL
}

// New loads the kubeconfig file at path and returns a Reloader for it. It returns an error naming the flag and
// the path when the file cannot be read or does not give a client config with a server URL.
func New(path string, o Options) (*Reloader, error) {
	if o.CheckInterval <= 0 {
		o.CheckInterval = 10 * time.Second
	}
	if o.RejectedCheckInterval <= 0 {
		o.RejectedCheckInterval = time.Second
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	r := &Reloader{path: path, o: o}
	content, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--spoke-kubeconfig %q: %w", path, err)
	}
	l, err := r.load(content)
	if err != nil {
		return nil, err
	}
	r.current.Store(l)
	r.lastCheck = o.Clock.Now()
	return r, nil
}

// Config returns a client config for the managed cluster whose requests go through the Reloader: its Host is
// the server of the file as first loaded (a later change of scheme or host is followed by the Reloader) and it
// carries no TLS or credential fields of its own. Every client built from it follows the file.
func (r *Reloader) Config() *rest.Config {
	cfg := r.current.Load().config
	return &rest.Config{
		Host:      cfg.Host,
		APIPath:   cfg.APIPath,
		Transport: r,
		QPS:       cfg.QPS,
		Burst:     cfg.Burst,
	}
}

// CAData returns the PEM CA bundle of the kubeconfig as last loaded (CABundle of its config). It returns an error
// naming the flag and the CA file when that file cannot be read.
func (r *Reloader) CAData() ([]byte, error) {
	data, err := CABundle(r.current.Load().config)
	if err != nil {
		return nil, fmt.Errorf("--spoke-kubeconfig %q: %w", r.path, err)
	}
	return data, nil
}

// CABundle returns the PEM CA bundle a client config trusts: its inline CA data, else the content of its CA
// file, nil if it names neither (system roots). It returns an error naming the CA file when it cannot be read.
func CABundle(config *rest.Config) ([]byte, error) {
	if len(config.CAData) > 0 {
		return config.CAData, nil
	}
	if config.CAFile != "" {
		data, err := os.ReadFile(config.CAFile)
		if err != nil {
			return nil, fmt.Errorf("certificate-authority %q: %w", config.CAFile, err)
		}
		return data, nil
	}
	return nil, nil
}

// Reloads returns how many times the file was reloaded after New (content changed and loaded).
func (r *Reloader) Reloads() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reloads
}

// RoundTrip sends req with the current credentials. Every CheckInterval, and after a 401 at most every
// RejectedCheckInterval, it first compares the file with what it loaded and switches to the new content when
// that loads; content that does not load is reported once and the previous credentials stay in use.
func (r *Reloader) RoundTrip(req *http.Request) (*http.Response, error) {
	l := r.use(false)
	if req.URL.Host != l.server.Host || req.URL.Scheme != l.server.Scheme {
		req = req.Clone(req.Context())
		req.URL.Scheme, req.URL.Host, req.Host = l.server.Scheme, l.server.Host, ""
	}
	resp, err := l.transport.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		r.use(true)
	}
	return resp, err
}

// CloseIdleConnections closes the idle connections of the current transport (utilnet.CloseIdleConnectionsFor).
func (r *Reloader) CloseIdleConnections() {
	utilnet.CloseIdleConnectionsFor(r.current.Load().transport)
}

// use returns what to send with, re-reading the file first when a check is due and no other request is
// re-reading it already.
func (r *Reloader) use(rejected bool) *loaded {
	if r.due(rejected) && r.reloading.TryLock() {
		r.reload()
		r.reloading.Unlock()
	}
	return r.current.Load()
}

// due reports whether the file should be compared now, and records the check.
func (r *Reloader) due(rejected bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.o.Clock.Now()
	due := now.Sub(r.lastCheck) >= r.o.CheckInterval
	if rejected && now.Sub(r.lastForce) >= r.o.RejectedCheckInterval {
		due = true
		r.lastForce = now
	}
	if due {
		r.lastCheck = now
	}
	return due
}

// reload runs with r.reloading held.
func (r *Reloader) reload() {
	content, err := os.ReadFile(r.path)
	if err != nil {
		// A mounted Secret is replaced through a symlink swap; a read between the two steps can fail. The
		// credentials in use stay until a later check reads the new file.
		klog.Background().V(2).Info("Reading the spoke kubeconfig failed; keeping the loaded credentials", "path", r.path, "err", err)
		return
	}
	old := r.current.Load()
	r.mu.Lock()
	seenBad := r.rejected != nil && bytes.Equal(content, r.rejected)
	r.mu.Unlock()
	if bytes.Equal(content, old.content) || seenBad {
		return
	}
	l, err := r.load(content)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.rejected = content
		klog.Background().Error(err, "The spoke kubeconfig changed but cannot be used; keeping the loaded credentials", "path", r.path)
		return
	}
	r.current.Store(l)
	r.rejected = nil
	r.reloads++
	utilnet.CloseIdleConnectionsFor(old.transport)
	klog.Background().Info("Spoke kubeconfig changed; using its credentials from now on", "path", r.path, "server", l.config.Host)
}

// load builds what content gives, without changing the Reloader.
func (r *Reloader) load(content []byte) (*loaded, error) {
	kubeconfig, err := clientcmd.Load(content)
	if err != nil {
		return nil, fmt.Errorf("--spoke-kubeconfig %q: %w", r.path, err)
	}
	// File references (certificate-authority, client-certificate, tokenFile) are relative to the kubeconfig's
	// directory, as for kubectl.
	for _, c := range kubeconfig.Clusters {
		c.LocationOfOrigin = r.path
	}
	for _, a := range kubeconfig.AuthInfos {
		a.LocationOfOrigin = r.path
	}
	if err := clientcmd.ResolveLocalPaths(kubeconfig); err != nil {
		return nil, fmt.Errorf("--spoke-kubeconfig %q: %w", r.path, err)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kubeconfig, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--spoke-kubeconfig %q: %w", r.path, err)
	}
	server, err := url.Parse(cfg.Host)
	if err != nil || server.Host == "" {
		return nil, fmt.Errorf("--spoke-kubeconfig %q: cluster server %q is not a URL with a host", r.path, cfg.Host)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("--spoke-kubeconfig %q: %w", r.path, err)
	}
	return &loaded{content: content, config: cfg, transport: transport, server: server}, nil
}
