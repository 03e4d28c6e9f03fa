//go:build !linux

package framework

import "syscall"

// sysProcAttr puts a started process in its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
