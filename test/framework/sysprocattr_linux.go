package framework

import "syscall"

// sysProcAttr puts a started process in its own process group and asks the kernel to SIGKILL it when the
// thread that started it (and so, normally, the test binary) dies, so a crashed or timed-out test leaves no
// kube-controller-manager or registration controller behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
