package framework

import (
	"path/filepath"
	"testing"
)

func TestLocalContainerRemapArg(t *testing.T) {
	root := "/tmp/root"
	lc := &LocalContainer{Root: root, Mounts: map[string]string{
		"/spoke/bootstrap":      filepath.Join(root, "spoke/bootstrap"),
		"/spoke/hub-kubeconfig": filepath.Join(root, "spoke/hub-kubeconfig"),
		"/tmp":                  filepath.Join(root, "tmp"),
	}}
	cases := map[string]string{
		"/registration": "/registration", // the executable is under no mount
		"agent":         "agent",
		"--bootstrap-kubeconfig=/spoke/bootstrap/kubeconfig":        "--bootstrap-kubeconfig=/tmp/root/spoke/bootstrap/kubeconfig",
		"--hub-kubeconfig-dir=/spoke/hub-kubeconfig":                "--hub-kubeconfig-dir=/tmp/root/spoke/hub-kubeconfig",
		"--terminate-on-files=/spoke/hub-kubeconfig/../bootstrap/x": "--terminate-on-files=/tmp/root/spoke/bootstrap/x",
		"--other=/spoke/bootstrapper/kubeconfig":                    "--other=/spoke/bootstrapper/kubeconfig", // a sibling, not under the mount
		"--spoke-cluster-name=c1":                                   "--spoke-cluster-name=c1",
		"--disable-leader-election":                                 "--disable-leader-election",
		"/tmp/file":                                                 "/tmp/root/tmp/file",
		"--relative=spoke/bootstrap/kubeconfig":                     "--relative=spoke/bootstrap/kubeconfig",
	}
	for in, want := range cases {
		if got := lc.remapArg(in); got != want {
			t.Errorf("remapArg(%q) = %q, want %q", in, got, want)
		}
	}
	if got, ok := lc.LocalPath("/etc/passwd"); ok || got != "/etc/passwd" {
		t.Errorf("LocalPath(/etc/passwd) = %q, %t; want it unchanged and false", got, ok)
	}
}
