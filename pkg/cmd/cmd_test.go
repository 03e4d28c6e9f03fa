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
	// Column widths depend on the longest flag name: compare with white space folded.
	fold := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	help := fold(out.String())
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
		if !strings.Contains(help, fold(want)) {
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

// TestArgs: the klusterlet operator's invocation reaches `registration agent`, whether the binary is called
// registration or our binary is the entrypoint in front of the operator's args.
func TestArgs(t *testing.T) {
	cases := []struct {
		name string
		in   []string
		want []string
	}{
		{name: "canonical", in: []string{"/klusterlet-failover", "agent", "failover", "--cluster-name=c1"}, want: []string{"agent", "failover", "--cluster-name=c1"}},
		{name: "called registration", in: []string{"/registration", "agent", "--spoke-cluster-name=c1"}, want: []string{"registration", "agent", "--spoke-cluster-name=c1"}},
		{name: "entrypoint then the operator's args", in: []string{"/klusterlet-failover", "/registration", "agent", "--spoke-cluster-name=c1"}, want: []string{"registration", "agent", "--spoke-cluster-name=c1"}},
		{name: "registration subcommand", in: []string{"klusterlet-failover", "registration", "agent"}, want: []string{"registration", "agent"}},
		{name: "no args", in: nil, want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Args(tc.in)
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("Args(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestRegistrationAgentHelp: `registration agent` accepts every flag the klusterlet operator v1.2.0 template
// can render, and leader election is on by default in both agent commands.
func TestRegistrationAgentHelp(t *testing.T) {
	help := func(args ...string) string {
		root := NewRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append(args, "--help"))
		if err := root.Execute(); err != nil {
			t.Fatalf("%v --help: %v", args, err)
		}
		return out.String()
	}
	ocm := help("registration", "agent")
	for _, flag := range []string{
		"--spoke-cluster-name", "--bootstrap-kubeconfig ", "--bootstrap-kubeconfigs", "else at least 10. (default 600)",
		"--feature-gates", "--spoke-external-server-urls", "--spoke-kubeconfig", "--terminate-on-files",
		"--client-cert-expiration-seconds", "--cluster-annotations", "--kube-api-qps", "--kube-api-burst",
		"--max-custom-cluster-claims", "--reserved-cluster-claim-suffixes", "--addon-kubeclient-registration-auth",
		"--addon-token-expiration-seconds", "--registration-auth", "--hub-cluster-arn", "--managed-cluster-arn",
		"--managed-cluster-role-suffix", "--grpc-bootstrap-config", "--grpc-config", "--agent-id", "--hub-kubeconfig ",
		"--hub-kube-api-qps", "--disable-leader-election", "--leader-election-lease-duration duration",
	} {
		if !strings.Contains(ocm, flag) {
			t.Errorf("registration agent --help lacks %q", flag)
		}
	}
	for name, text := range map[string]string{"registration agent": ocm, "agent failover": help("agent", "failover")} {
		line := ""
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, "--disable-leader-election") {
				line = l
			}
		}
		if line == "" || strings.Contains(line, "(default true)") {
			t.Errorf("%s: leader election must be on by default; help line %q", name, line)
		}
	}
}

// TestAgentFlagsRefusedBeforeAnyIO: bad flags fail in PreRunE, before controllercmd reads a kubeconfig or
// takes the leader election lock; the message names the flag and the value.
func TestAgentFlagsRefusedBeforeAnyIO(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{args: []string{"registration", "agent", "--spoke-cluster-name=c1", "--bootstrap-kubeconfig=/b", "--registration-auth=awsirsa"}, want: `--registration-auth "awsirsa": not supported`},
		{args: []string{"registration", "agent", "--spoke-cluster-name=Not_A_Label", "--bootstrap-kubeconfig=/b"}, want: `--cluster-name "Not_A_Label": must be a DNS-1123 label`},
		{args: []string{"agent", "failover", "--bootstrap-kubeconfig=/b", "--leader-election-lease-duration=5s", "--leader-election-renew-deadline=10s", "--leader-election-retry-period=2s"}, want: "--leader-election-lease-duration 5s: must be greater than --leader-election-renew-deadline (10s)"},
		{args: []string{"agent", "failover"}, want: `--bootstrap-kubeconfig "": must name the bootstrap kubeconfig file`},
		// The unknown-flag policy of `registration agent`: a flag that may change how the agent registers is
		// refused, naming the flag, the value and the rule.
		{args: []string{"registration", "agent", "--spoke-cluster-name=c1", "--bootstrap-kubeconfig=/b", "--registration-driver", "awsirsa"},
			want: `--registration-driver "awsirsa": not supported by klusterlet-failover, and not ignored: an unknown flag whose name contains "driver"`},
		// Other unknown flags and feature gates are let through: the error is the next check's.
		{args: []string{"registration", "agent", "--spoke-cluster-name=Not_A_Label", "--bootstrap-kubeconfig=/b", "--hosting-cluster-claim-enabled",
			"--status-sync-interval=30s", "--feature-gates=AddonManagement=true,SomeNewGate=true"}, want: `--cluster-name "Not_A_Label": must be a DNS-1123 label`},
		// The canonical command stays strict.
		{args: []string{"agent", "failover", "--bootstrap-kubeconfig=/b", "--status-sync-interval=30s"}, want: "unknown flag: --status-sync-interval"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			root := NewRootCommand()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&out)
			// A kubeconfig that does not exist: reaching controllercmd would fail differently.
			root.SetArgs(append(tc.args, "--kubeconfig=/nonexistent/kubeconfig"))
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Execute() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
