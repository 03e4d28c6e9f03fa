package framework

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// TestProxy runs the proxy in front of a line echo server and checks every state transition.
func TestProxy(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = echo.Close() })
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()

	p := startProxy(t, "127.0.0.1", echo.Addr().String())
	// A round trip expected to fail gets a short deadline (a black hole only fails by timing out); one expected
	// to succeed gets a long one, since a loaded machine may take more than a moment to schedule the proxy and
	// the echo server.
	const failDeadline, okDeadline = 500 * time.Millisecond, 10 * time.Second
	roundTripWithin := func(d time.Duration) error {
		c, err := net.DialTimeout("tcp", p.Addr(), d)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(d))
		if _, err := c.Write([]byte("ping\n")); err != nil {
			return err
		}
		_, err = bufio.NewReader(c).ReadString('\n')
		return err
	}
	roundTrip := func() error { return roundTripWithin(okDeadline) }
	failingRoundTrip := func() error { return roundTripWithin(failDeadline) }

	if err := roundTrip(); err != nil {
		t.Fatalf("open proxy: %v", err)
	}
	held, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := held.Write([]byte("hold\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(held).ReadString('\n'); err != nil {
		t.Fatalf("held connection: %v", err)
	}

	p.Cut()
	if err := failingRoundTrip(); err == nil {
		t.Error("cut proxy: round trip succeeded")
	}
	_ = held.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := held.Read(make([]byte, 1)); err == nil {
		t.Error("cut proxy: connection open before the cut still delivers data")
	}
	p.Heal()
	if err := roundTrip(); err != nil {
		t.Errorf("healed proxy: %v", err)
	}

	p.Blackhole()
	if err := failingRoundTrip(); err == nil {
		t.Error("black-holed proxy: round trip succeeded")
	}
	p.Heal()
	if err := roundTrip(); err != nil {
		t.Errorf("healed proxy after black hole: %v", err)
	}
}
