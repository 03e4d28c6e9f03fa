package framework

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// agentBinaryOnce builds the agent once per test binary.
var (
	agentBinaryOnce  = sync.OnceValues(func() (string, error) { return buildBinary("klusterlet-failover", "./cmd/klusterlet-failover") })
	hollowBinaryOnce = sync.OnceValues(func() (string, error) { return buildBinary("hollow-agents", "./test/hollow/cmd/hollow-agents") })
)

// AgentBinary returns the path of a klusterlet-failover binary built from this repository's
// ./cmd/klusterlet-failover (with the caller's GOFLAGS and CGO_ENABLED=0: under make, the Makefile's settings, so
// the packages make build compiled are reused from the build cache), building it once per test binary into a
// temporary directory. It fails t with the build output when the build fails.
func AgentBinary(t testing.TB) string {
	t.Helper()
	path, err := agentBinaryOnce()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// HollowBinary returns the path of the hollow-agents binary (test/hollow/cmd/hollow-agents: many agents in one
// process), built once per test binary as AgentBinary builds the agent. It fails t with the build output when the
// build fails.
func HollowBinary(t testing.TB) string {
	t.Helper()
	path, err := hollowBinaryOnce()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// buildBinary builds the main package pkg (a ./-relative path in the repository) into a new temporary directory
// as name, with CGO_ENABLED=0, and returns its path, or an error with the build output.
func buildBinary(name, pkg string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", name+"-bin-")
	if err != nil {
		return "", fmt.Errorf("building %s: %w", name, err)
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if output, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s (go build %s in %s): %v\n%s", name, pkg, root, err, output)
	}
	return out, nil
}

// AgentProcess is a klusterlet-failover (or any other) binary started by StartAgentProcess, its output in one
// log file. It is stopped (SIGTERM, then SIGKILL after 10 s) in t.Cleanup.
type AgentProcess struct {
	p *process
}

// StartAgentProcess starts binary with args as component name (logs under the test's log directory, see
// KF_TEST_LOG_DIR), with env (KEY=value) added to the test's environment. The process gets its own process
// group and SIGKILL when the test binary dies.
func StartAgentProcess(t testing.TB, name, binary string, args []string, env ...string) *AgentProcess {
	t.Helper()
	p, err := startProcessEnv(name, logDir(t, name), binary, args, env)
	if err != nil {
		t.Fatal(err)
	}
	a := &AgentProcess{p: p}
	t.Cleanup(func() { _ = a.Stop() })
	return a
}

// Stop sends SIGTERM and waits up to 10 s for the exit, then kills the process. It returns nil when the process
// exited on SIGTERM (or had exited before).
func (a *AgentProcess) Stop() error { return a.p.stop(10 * time.Second) }

// Kill sends SIGKILL (no graceful shutdown: a leader keeps its lock until the lease expires) and waits for
// the exit.
func (a *AgentProcess) Kill() {
	if done, _ := a.p.exited(); done {
		return
	}
	_ = a.p.cmd.Process.Signal(syscall.SIGKILL)
	<-a.p.done
}

// Exited reports whether the process has ended, and its wait error.
func (a *AgentProcess) Exited() (bool, error) { return a.p.exited() }

// LogPath is the file holding the process's stdout and stderr.
func (a *AgentProcess) LogPath() string { return a.p.logPath }

// PID returns the process ID of the process.
func (a *AgentProcess) PID() int { return a.p.cmd.Process.Pid }

// LogTail returns the last n lines of the log.
func (a *AgentProcess) LogTail(n int) string { return tailFile(a.p.logPath, n) }

// FreeLoopbackPort returns a TCP port on 127.0.0.1 that was free a moment ago (for a process's --listen).
func FreeLoopbackPort(t testing.TB) int {
	t.Helper()
	port, err := freeLoopbackPort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
