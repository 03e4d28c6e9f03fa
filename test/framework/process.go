package framework

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// EnvLogDir names a directory that keeps the logs of every process the framework starts after the test
	// ends (one sub-directory per test); without it logs live in t.TempDir() and only their tails are printed
	// when a test fails.
	EnvLogDir = "KF_TEST_LOG_DIR"

	// logTailLines is how many lines of each log a failed test prints.
	logTailLines = 40
)

// process is an external binary the framework started (kube-controller-manager, OCM's registration controller),
// its stdout and stderr going to one log file.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	logFile *os.File

	done    chan struct{}
	mu      sync.Mutex
	exitErr error
}

// startProcess starts binary with args, appending its output to <logDir>/<name>.log. The process gets its own
// process group and, on Linux, SIGKILL when the test binary dies, so it does not outlive a crashed test.
func startProcess(name, logDir, binary string, args []string) (*process, error) {
	return startProcessEnv(name, logDir, binary, args, nil)
}

// startProcessEnv is startProcess with env (KEY=value) added to the test's environment.
func startProcessEnv(name, logDir, binary string, args, env []string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating the log of %s: %w", name, err)
	}
	fmt.Fprintf(logFile, "### %s %s\n", binary, strings.Join(args, " "))
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, binary, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, logFile: logFile, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.exitErr
	default:
		return false, nil
	}
}

// stop sends SIGTERM, waits up to timeout, then sends SIGKILL and waits for the exit.
func (p *process) stop(timeout time.Duration) error {
	if done, _ := p.exited(); done {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stopping %s: %w", p.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return fmt.Errorf("stopping %s: still running %s after SIGTERM, killed", p.name, timeout)
}

// waitHealthy polls url (https, certificate not verified) until it answers 200, the process exits or timeout
// passes. The error names the process and its log.
func (p *process) waitHealthy(url string, timeout time.Duration) error {
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback health check
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ticker := time.NewTicker(200 * time.Millisecond)
	defer ticker.Stop()
	lastErr := errors.New("no answer yet")
	for {
		if done, err := p.exited(); done {
			return fmt.Errorf("%s exited before becoming healthy (%v); log %s:\n%s", p.name, err, p.logPath, tailFile(p.logPath, logTailLines))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			lastErr = fmt.Errorf("%s answered %d", url, resp.StatusCode)
		} else {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not healthy within %s (last: %v); log %s:\n%s", p.name, timeout, lastErr, p.logPath, tailFile(p.logPath, logTailLines))
		case <-ticker.C:
		}
	}
}

// logDir returns the directory for the logs of what t starts: $KF_TEST_LOG_DIR/<test name>/<component> when
// that variable is set, else a fresh directory under t.TempDir(). When t fails, cleanup prints the directory and
// the tail of every *.log file in it.
func logDir(t testing.TB, component string) string {
	t.Helper()
	var dir string
	if base := os.Getenv(EnvLogDir); base != "" {
		dir = filepath.Join(base, sanitizeFileName(t.Name()), component)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatalf("creating the log directory of %s: %v", component, err)
		}
	} else {
		dir = filepath.Join(t.TempDir(), component+"-logs")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatalf("creating the log directory of %s: %v", component, err)
		}
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		for _, f := range files {
			t.Logf("log %s (last %d lines; set %s to keep whole logs):\n%s", f, logTailLines, EnvLogDir, tailFile(f, logTailLines))
		}
	})
	return dir
}

// tailFile returns the last n lines of file, or a note when it cannot be read.
func tailFile(file string, n int) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", file, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// sanitizeFileName replaces the characters of a test name that are awkward in paths.
func sanitizeFileName(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '/', '\\', ':', ' ', '*', '?', '"', '<', '>', '|':
			return '_'
		}
		return r
	}, name)
}

// freeLoopbackPort returns a TCP port on 127.0.0.1 that was free a moment ago. A process started on it can still
// lose a race; its start then fails and the test fails naming that process.
func freeLoopbackPort() (int, error) { return freePort("127.0.0.1") }
