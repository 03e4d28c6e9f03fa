package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// buildPause builds this program with CGO_ENABLED=0 and checks that the result is static (no ELF interpreter).
func buildPause(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the pause image is linux only")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "pause")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatalf("%s has an ELF interpreter: not static", bin)
		}
	}
	return bin
}

// catches reports whether process pid has a handler for sig (SigCgt in /proc/<pid>/status).
func catches(pid int, sig syscall.Signal) bool {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}

func TestExitsZeroOnSignal(t *testing.T) {
	bin := buildPause(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			deadline := time.Now().Add(5 * time.Second)
			for !catches(cmd.Process.Pid, sig) {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("pause did not install a %v handler within 5s", sig)
				}
				time.Sleep(10 * time.Millisecond)
			}
			select {
			case err := <-done:
				t.Fatalf("pause exited before the signal: %v", err)
			case <-time.After(200 * time.Millisecond): // it blocks
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("pause after %v: %v, want exit 0", sig, err)
				}
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("pause still running 5s after %v", sig)
			}
		})
	}
}

// TestReap: reap collects an exited child of this process (left a zombie), and returns when there is none.
func TestReap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := syscall.ForkExec(exe, []string{exe, "-test.run=^$"}, &syscall.ProcAttr{Env: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("/proc/%d/stat", pid)
	// The child is a Go program: its main thread shows as a zombie ("Z" in /proc) while its other threads are
	// still going, and no wait can collect it until they are gone. waitid with WNOWAIT tells when one can,
	// without collecting it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err != nil && !errors.Is(err, unix.EINTR) {
			t.Fatalf("waitid(child %d): %v", pid, err)
		}
		if info.Signo == int32(unix.SIGCHLD) {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(stat)
			t.Fatalf("child %d not exited within 5s: %s", pid, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	reap()
	if _, err := os.Stat(stat); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("child %d still there after reap (%v)", pid, err)
	}
	reap() // no children: returns at once (ECHILD)
}
