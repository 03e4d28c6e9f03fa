// Command dial is the node suite's connectivity probe, run as a pod: it opens a TCP connection to each of its
// arguments (host:port), with a 3-second timeout, closes it, and writes one line per address to
// /dev/termination-log — "<address> reached" or "<address> not reached: <error>" — which the kubelet reports as
// the container's termination message; then it exits 0. Standard library only; build it with CGO_ENABLED=0.
package main

import (
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// timeout bounds each connection attempt: a dropped SYN is retried by the kernel for longer than that.
const timeout = 3 * time.Second

func main() {
	var report strings.Builder
	for _, addr := range os.Args[1:] {
		conn, err := net.DialTimeout("tcp", addr, timeout)
		if err != nil {
			fmt.Fprintf(&report, "%s not reached: %v\n", addr, err)
			continue
		}
		_ = conn.Close()
		fmt.Fprintf(&report, "%s reached\n", addr)
	}
	fmt.Print(report.String())
	if err := os.WriteFile("/dev/termination-log", []byte(report.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
