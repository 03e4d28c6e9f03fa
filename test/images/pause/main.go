// Command pause is the pod sandbox process of the test clusters' pause image (internal/ociimage.PauseSpec): it holds
// the pod's namespaces by blocking forever, exits 0 on SIGINT or SIGTERM, and, as PID 1 of a pod that shares its
// process namespace, reaps zombie children on SIGCHLD. Standard library only; build it with CGO_ENABLED=0 for a
// static binary.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	reap() // children that exited before Notify sent no signal we could see
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap waits for every exited child without blocking; one SIGCHLD may stand for several exits.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 { // ECHILD: no children; 0: children, none exited
			return
		}
	}
}
