package profiling

import (
	"net"
	"net/http"
	"strconv"
	"testing"
)

// TestStartServer: unset serves nothing; a non-loopback address is refused; a loopback one serves the
// profile index.
func TestStartServer(t *testing.T) {
	t.Setenv(AddrEnv, "")
	if err := StartServer(); err != nil {
		t.Errorf("unset: %v", err)
	}
	for _, addr := range []string{"0.0.0.0:6060", "10.1.2.3:6060", ":6060", "no-port"} {
		t.Setenv(AddrEnv, addr)
		if err := StartServer(); err == nil {
			t.Errorf("%s: served, want it refused", addr)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	t.Setenv(AddrEnv, addr)
	if err := StartServer(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET heap profile: %s", resp.Status)
	}
}
