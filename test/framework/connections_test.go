package framework

import (
	"net"
	"os"
	"testing"
)

func TestEstablishedConnections(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	count := func() int {
		t.Helper()
		n, err := EstablishedConnections(os.Getpid(), l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("before any dial: %d connections, want 0", n)
	}
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	c, err := net.Dial("tcp", other.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The accepted ends are this process's too, but their remote address is the dialer's port, not l's.
	if n := count(); n != 3 {
		t.Errorf("after 3 dials to the listener and 1 elsewhere: %d connections, want 3", n)
	}
	conns[0].Close()
	if n := count(); n != 2 {
		t.Errorf("after closing one: %d connections, want 2", n)
	}
	for _, c := range conns[1:] {
		c.Close()
	}
	if _, err := EstablishedConnections(os.Getpid(), "localhost"); err == nil {
		t.Error("an address without a port: no error")
	}
}
