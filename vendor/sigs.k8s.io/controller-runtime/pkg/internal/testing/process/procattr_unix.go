//go:build aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos

/*
Copyright 2023 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package process

import (
	"golang.org/x/sys/unix"
)

// GetSysProcAttr returns the SysProcAttr to use for the process,
// for unix systems this returns a SysProcAttr with Setpgid set to true,
// which inherits the parent's process group id.
func GetSysProcAttr() *unix.SysProcAttr {
	return &unix.SysProcAttr{
		Setpgid: true,
	}
}
