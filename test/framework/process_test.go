package framework

import (
	"strings"
	"testing"
	"time"
)

func TestProcessWaitHealthyReportsExit(t *testing.T) {
	dir := t.TempDir()
	p, err := startProcess("failing-component", dir, "/bin/sh", []string{"-c", "echo listen tcp 127.0.0.1:1: bind: address already in use; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	err = p.waitHealthy("https://127.0.0.1:1/healthz", 10*time.Second)
	if err == nil {
		t.Fatal("waitHealthy() succeeded for a process that exited")
	}
	for _, want := range []string{"failing-component exited before becoming healthy", "exit status 3", "address already in use"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("waitHealthy() error %q does not contain %q", err, want)
		}
	}
}

func TestProcessStopKillsStubbornProcess(t *testing.T) {
	p, err := startProcess("stubborn", t.TempDir(), "/bin/sh", []string{"-c", `trap "" TERM; echo re""ady; while true; do sleep 1; done`})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := Poll(5*time.Second, 10*time.Millisecond, func() (bool, error) {
		return strings.Contains(tailFile(p.logPath, 1), "ready"), nil
	}); !ok {
		t.Fatal("the process did not start")
	}
	err = p.stop(200 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("stop() error = %v, want one saying the process was killed", err)
	}
	if done, _ := p.exited(); !done {
		t.Error("the process still runs after stop()")
	}
}
