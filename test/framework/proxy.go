package framework

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"
)

// proxyState is what a Proxy does with traffic.
type proxyState int

const (
	proxyOpen      proxyState = iota // forward both ways
	proxyCut                         // listener closed: dials are refused
	proxyBlackhole                   // accept, forward nothing, answer nothing
)

// Proxy is a TCP proxy on a fixed port of 127.0.0.1 (or of a pod network's host address) in front of a hub's
// kube-apiserver. TLS passes through it untouched (the apiserver's serving certificate is valid for that
// address), so kubeconfigs that name the proxy
// work like kubeconfigs that name the apiserver, until the test cuts the proxy.
//
// Cut, Blackhole and Heal must be called from the test goroutine (they call t.Fatal on failure).
type Proxy struct {
	t      testing.TB
	target string
	addr   string

	mu       sync.Mutex
	state    proxyState
	listener net.Listener
	conns    map[net.Conn]struct{}
	stopped  bool
	wg       sync.WaitGroup
}

// ProxyTo starts another TCP proxy in front of hub h's apiserver (beside HubOptions.Proxy's, which agents use),
// on a free port of the same host, for a client the test cuts off separately (e.g. the replicator). It stops in
// t.Cleanup.
func ProxyTo(t testing.TB, h *Hub) *Proxy {
	t.Helper()
	target := h.AdminConfig.Host
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		target = u.Host
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		t.Fatalf("hub %s: apiserver address %q: %v", h.Name, target, err)
	}
	return startProxy(t, host, target)
}

// startProxy listens on a free port of host and forwards to target (host:port). It stops in t.Cleanup.
func startProxy(t testing.TB, host, target string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatalf("starting the TCP proxy in front of %s: %v", target, err)
	}
	p := &Proxy{t: t, target: target, addr: l.Addr().String(), listener: l, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.acceptLoop(l)
	t.Cleanup(p.stop)
	return p
}

// Addr returns the proxy's host:port; it does not change across Cut and Heal.
func (p *Proxy) Addr() string { return p.addr }

// Port returns the port the proxy listens on.
func (p *Proxy) Port() int {
	_, port, _ := net.SplitHostPort(p.addr)
	n, _ := strconv.Atoi(port)
	return n
}

// URL returns https://<Addr>.
func (p *Proxy) URL() string { return "https://" + p.addr }

// Target returns the host:port the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// Cut makes the hub unreachable through the proxy the loud way: the listener closes, so new connections are
// refused, and every open connection is closed. Clients see errors at once.
func (p *Proxy) Cut() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state = proxyCut
	if p.listener != nil {
		_ = p.listener.Close()
		p.listener = nil
	}
	p.closeConnsLocked()
}

// Blackhole makes the hub unreachable through the proxy the silent way, like a network partition: connections
// are still accepted, but no byte is forwarded either way, so clients only notice through their own timeouts.
// Connections open at the time stall the same way.
func (p *Proxy) Blackhole() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.listener == nil {
		p.listenLocked()
	}
	p.state = proxyBlackhole
}

// Heal forwards traffic again. Connections that were black-holed are closed (their streams lost bytes), so
// clients reconnect. After a Cut, the proxy listens again on the same port.
func (p *Proxy) Heal() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == proxyBlackhole {
		p.closeConnsLocked()
	}
	if p.listener == nil {
		p.listenLocked()
	}
	p.state = proxyOpen
}

// listenLocked listens on the proxy's address again, retrying for a few seconds while the port is in use.
func (p *Proxy) listenLocked() {
	p.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l, err := net.Listen("tcp", p.addr)
		if err == nil {
			p.listener = l
			p.wg.Add(1)
			go p.acceptLoop(l)
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("TCP proxy for %s: listening again on %s: %v", p.target, p.addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *Proxy) acceptLoop(l net.Listener) {
	defer p.wg.Done()
	for {
		client, err := l.Accept()
		if err != nil {
			return // listener closed by Cut or stop
		}
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			_ = client.Close()
			return
		}
		p.conns[client] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(1)
		go p.serve(client)
	}
}

// serve forwards one client connection to the target, consulting the proxy state for every chunk.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer p.forget(client)
	if !p.waitUntilNotBlackholed(client) {
		return
	}
	upstream, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(upstream) {
		return
	}
	defer p.forget(upstream)
	done := make(chan struct{}, 2)
	go func() { p.pipe(upstream, client); done <- struct{}{} }()
	go func() { p.pipe(client, upstream); done <- struct{}{} }()
	<-done
	_ = client.Close()
	_ = upstream.Close()
	<-done
}

// waitUntilNotBlackholed reads and discards what a client sends while the proxy is black-holed; it returns false
// when the connection ends first.
func (p *Proxy) waitUntilNotBlackholed(client net.Conn) bool {
	buf := make([]byte, 4096)
	for p.currentState() == proxyBlackhole {
		_ = client.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := client.Read(buf); err != nil {
			var netErr net.Error
			if !errors.As(err, &netErr) || !netErr.Timeout() {
				return false
			}
		}
	}
	_ = client.SetReadDeadline(time.Time{})
	return p.currentState() == proxyOpen
}

// pipe copies src to dst, dropping data while the proxy is black-holed.
func (p *Proxy) pipe(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 && p.currentState() == proxyOpen {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) currentState() proxyState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// track registers an upstream connection so Cut can close it; it returns false (and closes c) when the proxy
// was stopped meanwhile.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) forget(c net.Conn) {
	_ = c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) closeConnsLocked() {
	for c := range p.conns {
		_ = c.Close()
	}
}

// stop closes the listener and every connection and waits for the proxy's goroutines.
func (p *Proxy) stop() {
	p.mu.Lock()
	p.stopped = true
	p.state = proxyCut
	if p.listener != nil {
		_ = p.listener.Close()
		p.listener = nil
	}
	p.closeConnsLocked()
	p.mu.Unlock()
	p.wg.Wait()
}

// String describes the proxy for test messages.
func (p *Proxy) String() string { return fmt.Sprintf("proxy %s -> %s", p.addr, p.target) }
