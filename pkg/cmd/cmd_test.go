package cmd

import (
	"bytes"
	"strings"
	"testing"

	clientfeatures "k8s.io/client-go/features"
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

// TestPreferListForInformers: WatchListClient is off unless KUBE_FEATURE_WatchListClient is set; other gates are
// client-go's.
func TestPreferListForInformers(t *testing.T) {
	cases := []struct {
		name string
		env  string // "" leaves the variable unset
		want bool
	}{
		{name: "unset: LIST", want: false},
		{name: "explicitly on", env: "true", want: true},
		{name: "explicitly off", env: "false", want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(watchListClientEnv, tc.env)
			}
			// client-go v0.35 defaults WatchListClient to on; the environment variable, when set, decides.
			base := fakeGates{clientfeatures.WatchListClient: tc.env != "false", clientfeatures.InOrderInformers: true}
			g := listPreferringGates{base}
			if got := g.Enabled(clientfeatures.WatchListClient); got != tc.want {
				t.Errorf("WatchListClient enabled = %t, want %t", got, tc.want)
			}
			if !g.Enabled(clientfeatures.InOrderInformers) {
				t.Errorf("InOrderInformers: another gate was changed")
			}
		})
	}
}

// fakeGates is a fixed set of client-go feature gates.
type fakeGates map[clientfeatures.Feature]bool

func (g fakeGates) Enabled(key clientfeatures.Feature) bool { return g[key] }
