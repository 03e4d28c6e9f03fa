package cmd

import (
	"bytes"
	"strings"
	"testing"
)

// The klusterlet operator and users rely on the seed flags and their defaults (design §1).
func TestFailoverCommandHelpListsSeedFlags(t *testing.T) {
	root := NewRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"agent", "failover", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatalf("agent failover --help: %v", err)
	}
	help := out.String()
	for _, want := range []string{
		"--cluster-name string",
		"--agent-name string",
		"--bootstrap-kubeconfig string",
		`--hub-kubeconfig-secret string             Name of the Secret, in the agent namespace, that receives the hub kubeconfig and client certificate. (default "hub-kubeconfig-secret")`,
		`(default "/spoke/hub-kubeconfig")`,
		"--spoke-external-server-urls stringArray",
		"(default 1m0s)",
		"--max-custom-cluster-claims int",
		"(default 20)",
		"--listen string",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("agent failover --help lacks %q; got:\n%s", want, help)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	root := NewRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"version"})
	if err := root.Execute(); err != nil {
		t.Fatalf("version: %v", err)
	}
	if !strings.HasPrefix(out.String(), "klusterlet-failover v") {
		t.Errorf("version printed %q, want it to start with %q", out.String(), "klusterlet-failover v")
	}
}
