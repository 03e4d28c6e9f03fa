package util

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// CountingProxy is a TCP proxy on 127.0.0.1 that counts the connections clients open through it, so a test can
// bound how often an agent tries a hub that is down (no busy loop). TLS passes through untouched; a hub's
// serving certificate is valid for 127.0.0.1 on any port. Put it in front of framework.Hub.URL() (the hub's own
// proxy, which the test can still Cut) and give the agent WithServer(kubeconfig, proxy.URL()).
type CountingProxy struct {
	target   string
	listener net.Listener
	accepted atomic.Int64

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// StartCountingProxy forwards a free loopback port to the host:port of targetURL until the test ends.
func StartCountingProxy(t testing.TB, targetURL string) *CountingProxy {
	t.Helper()
	u, err := url.Parse(targetURL)
	if err != nil || u.Host == "" {
		t.Fatalf("counting proxy: target %q is not a URL with a host: %v", targetURL, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("counting proxy in front of %s: %v", targetURL, err)
	}
	p := &CountingProxy{target: u.Host, listener: l, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.acceptLoop()
	t.Cleanup(p.stop)
	return p
}

// URL returns https://<listen address>.
func (p *CountingProxy) URL() string { return "https://" + p.listener.Addr().String() }

// Connections returns how many client connections were accepted so far.
func (p *CountingProxy) Connections() int64 { return p.accepted.Load() }

func (p *CountingProxy) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.listener.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		if !p.track(c) {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *CountingProxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer p.forget(client)
	upstream, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(upstream) {
		return
	}
	defer p.forget(upstream)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(upstream, client); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, upstream); done <- struct{}{} }()
	<-done
	_ = client.Close()
	_ = upstream.Close()
	<-done
}

func (p *CountingProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *CountingProxy) forget(c net.Conn) {
	_ = c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *CountingProxy) stop() {
	p.mu.Lock()
	p.closed = true
	_ = p.listener.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
