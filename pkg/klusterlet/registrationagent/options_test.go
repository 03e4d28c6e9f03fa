package registrationagent

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
)

// parseOCM parses args (without the leading "/registration agent") as `registration agent` would.
func parseOCM(t *testing.T, args ...string) (*Options, *pflag.FlagSet, error) {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
	o.AddFlags(fs)
	return o, fs, fs.Parse(args)
}

// TestOCMFlagsDefaultMode: the args the klusterlet operator v1.2.0 renders for a Default-mode Klusterlet with
// every optional setting map onto the failover agent's options with OCM's meaning.
func TestOCMFlagsDefaultMode(t *testing.T) {
	o, fs, err := parseOCM(t,
		"--spoke-cluster-name=cluster1",
		"--bootstrap-kubeconfig=/spoke/bootstrap/kubeconfig",
		"--feature-gates=AddonManagement=true,ClusterClaim=true",
		"--spoke-external-server-urls=https://spoke.example:6443",
		"--client-cert-expiration-seconds=86400",
		"--cluster-annotations=agent.open-cluster-management.io/owner=team-a,other=x",
		"--kube-api-qps=20", "--kube-api-burst=40",
		"--max-custom-cluster-claims=5",
		"--reserved-cluster-claim-suffixes=.example.com,.example.org",
		"--addon-kubeclient-registration-auth=csr",
		"--addon-token-expiration-seconds=3600",
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.ValidateOCMFlags(); err != nil {
		t.Fatalf("ValidateOCMFlags: %v", err)
	}
	if err := o.ValidateFlags(); err != nil {
		t.Fatalf("ValidateFlags: %v", err)
	}
	got := struct {
		Cluster, Bootstrap, Secret, Dir string
		URLs, Suffixes                  []string
		Expiration                      int32
		Annotations                     map[string]string
		QPS                             float32
		Burst, Claims                   int
		Timeout                         int32
	}{o.ClusterName, o.BootstrapKubeconfig, o.HubKubeconfigSecret, o.HubKubeconfigDir, o.SpokeExternalServerURLs,
		o.ReservedClusterClaimSuffixes, o.ClientCertExpirationSeconds, o.ClusterAnnotations, o.KubeAPIQPS, o.KubeAPIBurst,
		o.MaxCustomClusterClaims, o.HubConnectionTimeoutSeconds}
	want := got
	want.Cluster, want.Bootstrap, want.Secret, want.Dir = "cluster1", "/spoke/bootstrap/kubeconfig", "hub-kubeconfig-secret", "/spoke/hub-kubeconfig"
	want.URLs, want.Suffixes = []string{"https://spoke.example:6443"}, []string{".example.com", ".example.org"}
	want.Expiration = 86400
	want.Annotations = map[string]string{"agent.open-cluster-management.io/owner": "team-a", "other": "x"}
	want.QPS, want.Burst, want.Claims, want.Timeout = 20, 40, 5, DefaultHubConnectionTimeoutSeconds
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ClusterClaim=true"}, o.IgnoredFeatureGates(fs)); diff != "" {
		t.Errorf("ignored feature gates (-want +got):\n%s", diff)
	}
	o.CompleteOCMFlags()
	if o.DisableAddOnManagement {
		t.Errorf("AddonManagement=true: add-on management disabled, want enabled")
	}
	primary, hubs, err := o.HubFiles()
	if err != nil || primary != "/spoke/bootstrap/kubeconfig" || len(hubs) != 0 {
		t.Errorf("HubFiles() = %q, %v, %v; want the bootstrap kubeconfig alone", primary, hubs, err)
	}
}

// TestOCMFlagsAddonManagementOff: OCM's gate AddonManagement=false turns the add-on controllers off.
func TestOCMFlagsAddonManagementOff(t *testing.T) {
	o, _, err := parseOCM(t, "--spoke-cluster-name=cluster1", "--bootstrap-kubeconfig=/spoke/bootstrap/kubeconfig",
		"--feature-gates=AddonManagement=false")
	if err != nil {
		t.Fatal(err)
	}
	o.CompleteOCMFlags()
	if !o.DisableAddOnManagement {
		t.Errorf("AddonManagement=false: DisableAddOnManagement false, want true")
	}
}

// TestOCMFlagsMultipleHubs: MultipleHubs' bootstrap kubeconfigs are the hub list, the first the primary, the
// others named after their Secret's mount directory; the timeout flag is the connection timeout.
func TestOCMFlagsMultipleHubs(t *testing.T) {
	o, fs, err := parseOCM(t,
		"--spoke-cluster-name=cluster1",
		"--bootstrap-kubeconfigs=/spoke/hub1-bootstrap/kubeconfig",
		"--bootstrap-kubeconfigs=/spoke/hub2-bootstrap/kubeconfig",
		"--bootstrap-kubeconfigs=/spoke/hub3.bootstrap/kubeconfig",
		"--hub-connection-timeout-seconds=45",
		"--feature-gates=MultipleHubs=true",
		"--cluster-name=cluster1", // OCM's deprecated alias
		"--agent-id=agent1",
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.ValidateOCMFlags(); err != nil {
		t.Fatalf("ValidateOCMFlags: %v", err)
	}
	if err := o.ValidateFlags(); err != nil {
		t.Fatalf("ValidateFlags: %v", err)
	}
	primary, hubs, err := o.HubFiles()
	if err != nil {
		t.Fatal(err)
	}
	if primary != "/spoke/hub1-bootstrap/kubeconfig" {
		t.Errorf("primary = %q", primary)
	}
	want := []failover.FileHub{{Name: "hub2-bootstrap", Path: "/spoke/hub2-bootstrap/kubeconfig"}, {Name: "hub3-bootstrap", Path: "/spoke/hub3.bootstrap/kubeconfig"}}
	if diff := cmp.Diff(want, hubs); diff != "" {
		t.Errorf("file hubs (-want +got):\n%s", diff)
	}
	if time.Duration(o.HubConnectionTimeoutSeconds)*time.Second != 45*time.Second || o.AgentName != "agent1" {
		t.Errorf("timeout %d s, agent %q", o.HubConnectionTimeoutSeconds, o.AgentName)
	}
	if ignored := o.IgnoredFeatureGates(fs); len(ignored) != 0 {
		t.Errorf("MultipleHubs listed as ignored: %v", ignored)
	}
}

// TestOCMFlagsRefused: values this agent cannot honour fail at start with one message naming the flag, the
// value and what is supported.
func TestOCMFlagsRefused(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		parseErr string // a flag-parsing error
		want     []string
	}{
		{name: "awsirsa", args: []string{"--registration-auth=awsirsa", "--hub-cluster-arn=arn:aws:eks:x", "--managed-cluster-arn=arn:aws:eks:y", "--managed-cluster-role-suffix=z"},
			want: []string{`--registration-auth "awsirsa": not supported`, `"csr"`}},
		{name: "grpc", args: []string{"--registration-auth=grpc", "--grpc-bootstrap-config=/spoke/bootstrap/config.yaml", "--grpc-config=/spoke/hub-kubeconfig/config.yaml"},
			want: []string{`--registration-auth "grpc": not supported`}},
		{name: "token add-on registration", args: []string{"--addon-kubeclient-registration-auth=token"},
			want: []string{`--addon-kubeclient-registration-auth "token": not supported`}},
		{name: "another hub kubeconfig path", args: []string{"--hub-kubeconfig=/elsewhere/kubeconfig"},
			want: []string{`--hub-kubeconfig "/elsewhere/kubeconfig": must be empty or "/spoke/hub-kubeconfig/kubeconfig"`}},
		{name: "MultipleHubs with one hub", args: []string{"--feature-gates=MultipleHubs=true", "--bootstrap-kubeconfigs=/spoke/a/kubeconfig"},
			want: []string{"--bootstrap-kubeconfigs (1 given): the MultipleHubs feature gate needs at least 2"}},
		// An unknown gate name is ignored (TestUnknownFeatureGates); a bad value is not.
		{name: "feature gate without a bool value", args: []string{"--feature-gates=AddonManagement=maybe"}, parseErr: "AddonManagement=maybe"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, _, err := parseOCM(t, append([]string{"--bootstrap-kubeconfig=/spoke/bootstrap/kubeconfig"}, tc.args...)...)
			if tc.parseErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.parseErr) {
					t.Fatalf("parse error = %v, want one naming %q", err, tc.parseErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			err = o.ValidateOCMFlags()
			if err == nil {
				t.Fatal("ValidateOCMFlags accepted it")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestCompleteOCMFlags: OCM's rule for the two bootstrap flags follows the MultipleHubs gate.
func TestCompleteOCMFlags(t *testing.T) {
	both := []string{"--bootstrap-kubeconfig=/spoke/bootstrap/kubeconfig",
		"--bootstrap-kubeconfigs=/spoke/a/kubeconfig", "--bootstrap-kubeconfigs=/spoke/b/kubeconfig"}
	o, _, err := parseOCM(t, append(both, "--feature-gates=MultipleHubs=true")...)
	if err != nil {
		t.Fatal(err)
	}
	if ignored := o.CompleteOCMFlags(); !strings.Contains(ignored, "--bootstrap-kubeconfig=/spoke/bootstrap/kubeconfig") {
		t.Errorf("gate on: ignored %q, want --bootstrap-kubeconfig", ignored)
	}
	if o.BootstrapKubeconfig != "" || len(o.BootstrapKubeconfigs) != 2 || o.ValidateFlags() != nil {
		t.Errorf("gate on: bootstrap %q, list %v, ValidateFlags %v; want the list alone", o.BootstrapKubeconfig, o.BootstrapKubeconfigs, o.ValidateFlags())
	}
	o, _, err = parseOCM(t, both...)
	if err != nil {
		t.Fatal(err)
	}
	if ignored := o.CompleteOCMFlags(); !strings.Contains(ignored, "--bootstrap-kubeconfigs=") {
		t.Errorf("gate off: ignored %q, want --bootstrap-kubeconfigs", ignored)
	}
	if o.BootstrapKubeconfig != "/spoke/bootstrap/kubeconfig" || o.BootstrapKubeconfigs != nil || o.ValidateFlags() != nil {
		t.Errorf("gate off: bootstrap %q, list %v; want --bootstrap-kubeconfig alone", o.BootstrapKubeconfig, o.BootstrapKubeconfigs)
	}
}
