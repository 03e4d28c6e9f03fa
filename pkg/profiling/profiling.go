// Package profiling serves Go's profiles (/debug/pprof/) on a loopback address for measurements (make
// bench-profile), outside controllercmd's authenticated serving endpoint (StartServer).
package profiling

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"

	"k8s.io/klog/v2"
)

// AddrEnv names the environment variable that turns on the profiling listener (StartServer): a
// loopback host:port such as 127.0.0.1:6060. It is for measurements (make bench-profile), not for production:
// the listener has no authentication, which is why it only binds loopback addresses.
const AddrEnv = "KF_DEBUG_PPROF_ADDR"

// StartServer serves Go's profiles (/debug/pprof/: heap, allocs, goroutine, profile, …) on the loopback
// address AddrEnv names, in the background, when that variable is set; otherwise it does nothing. The
// serving endpoint of controllercmd also has /debug/pprof, but behind the spoke's delegated authentication and
// authorisation, which a benchmark's spoke identity does not get through. It returns an error, and serves
// nothing, when the address is not a loopback host:port or cannot be bound.
func StartServer() error {
	addr := os.Getenv(AddrEnv)
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s=%q: %w", AddrEnv, addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s=%q: only a loopback address may serve the unauthenticated profiles", AddrEnv, addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: %w", AddrEnv, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := server.Serve(l); err != nil {
			klog.ErrorS(err, "Debug profiling listener stopped", "address", addr)
		}
	}()
	return nil
}
