package klusterlet

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func validOptions() *FailoverAgentOptions {
	o := NewFailoverAgentOptions()
	o.BootstrapKubeconfig = "/spoke/bootstrap/kubeconfig"
	o.ClusterName = "cluster1"
	o.AgentName = "abcde"
	o.ComponentNamespace = "open-cluster-management-agent"
	return o
}

func TestValidate(t *testing.T) {
	long := strings.Repeat("a", 64)
	cases := []struct {
		name    string
		mutate  func(o *FailoverAgentOptions)
		wantErr []string // substrings; empty means valid
	}{
		{name: "valid", mutate: func(o *FailoverAgentOptions) {}},
		{name: "no bootstrap kubeconfig", mutate: func(o *FailoverAgentOptions) { o.BootstrapKubeconfig = "" },
			wantErr: []string{`--bootstrap-kubeconfig ""`}},
		// FC-05
		{name: "cluster name with dots", mutate: func(o *FailoverAgentOptions) { o.ClusterName = "cluster0.example.internal" },
			wantErr: []string{`--cluster-name "cluster0.example.internal": must be a DNS-1123 label`}},
		{name: "cluster name starting with a digit is a valid label", mutate: func(o *FailoverAgentOptions) { o.ClusterName = "20abc" }},
		{name: "cluster name of 64 characters", mutate: func(o *FailoverAgentOptions) { o.ClusterName = long },
			wantErr: []string{`--cluster-name "` + long + `": must be a DNS-1123 label`, "63"}},
		{name: "upper-case cluster name", mutate: func(o *FailoverAgentOptions) { o.ClusterName = "Upper" },
			wantErr: []string{`--cluster-name "Upper": must be a DNS-1123 label`}},
		{name: "empty cluster name after resolution", mutate: func(o *FailoverAgentOptions) { o.ClusterName = "" },
			wantErr: []string{`--cluster-name "": the cluster name must not be empty`}},
		{name: "upper-case agent name", mutate: func(o *FailoverAgentOptions) { o.AgentName = "Agent" },
			wantErr: []string{`--agent-name "Agent": must be a DNS-1123 label`}},
		// FC-04
		{name: "url without scheme", mutate: func(o *FailoverAgentOptions) { o.SpokeExternalServerURLs = []string{"10.0.0.1:6443"} },
			wantErr: []string{`--spoke-external-server-urls "10.0.0.1:6443": must be an absolute https:// URL`}},
		{name: "scheme only", mutate: func(o *FailoverAgentOptions) { o.SpokeExternalServerURLs = []string{"https://"} },
			wantErr: []string{`--spoke-external-server-urls "https://": must be an absolute https:// URL`}},
		{name: "http url", mutate: func(o *FailoverAgentOptions) { o.SpokeExternalServerURLs = []string{"http://10.0.0.1:6443"} },
			wantErr: []string{`--spoke-external-server-urls "http://10.0.0.1:6443": must be an absolute https:// URL`}},
		{name: "empty url", mutate: func(o *FailoverAgentOptions) { o.SpokeExternalServerURLs = []string{""} },
			wantErr: []string{`--spoke-external-server-urls "": must be an absolute https:// URL`}},
		{name: "bad port", mutate: func(o *FailoverAgentOptions) { o.SpokeExternalServerURLs = []string{"https://10.0.0.1:99999"} },
			wantErr: []string{`--spoke-external-server-urls "https://10.0.0.1:99999"`, "port 99999"}},
		{name: "ipv6 and trailing slash accepted", mutate: func(o *FailoverAgentOptions) {
			o.SpokeExternalServerURLs = []string{"https://[::1]:6443", "https://10.0.0.1:6443/"}
		}},
		{name: "zero health-check period", mutate: func(o *FailoverAgentOptions) { o.ClusterHealthCheckPeriod = 0 },
			wantErr: []string{`--cluster-healthcheck-period "0s": must be greater than 0`}},
		{name: "zero spoke QPS and negative hub burst", mutate: func(o *FailoverAgentOptions) { o.KubeAPIQPS, o.HubKubeAPIBurst = 0, -1 },
			wantErr: []string{`--kube-api-qps 0: must be greater than 0`, `--hub-kube-api-burst -1: must be greater than 0`}},
		{name: "negative claims cap", mutate: func(o *FailoverAgentOptions) { o.MaxCustomClusterClaims = -1 },
			wantErr: []string{`--max-custom-cluster-claims -1: must be 0 or greater`}},
		{name: "too short certificate lifetime", mutate: func(o *FailoverAgentOptions) { o.ClientCertExpirationSeconds = 60 },
			wantErr: []string{`--client-cert-expiration-seconds 60: must be 0 (hub default) or at least 600`}},
		{name: "every violation reported", mutate: func(o *FailoverAgentOptions) {
			o.BootstrapKubeconfig = ""
			o.ClusterHealthCheckPeriod = -time.Second
		}, wantErr: []string{"--bootstrap-kubeconfig", "--cluster-healthcheck-period"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := validOptions()
			tc.mutate(o)
			err := o.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error containing %q", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Validate() = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

func TestValidateFlagsAllowsUnresolvedNames(t *testing.T) {
	o := validOptions()
	o.ClusterName, o.AgentName = "", ""
	if err := o.ValidateFlags(); err != nil {
		t.Fatalf("ValidateFlags() = %v, want nil: names are resolved later", err)
	}
}

func TestFlagDefaults(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o := NewFailoverAgentOptions()
	o.AddFlags(fs)
	want := map[string]string{
		"cluster-name":               "",
		"agent-name":                 "",
		"bootstrap-kubeconfig":       "",
		"hub-kubeconfig-secret":      "hub-kubeconfig-secret",
		"hub-kubeconfig-dir":         "/spoke/hub-kubeconfig",
		"spoke-external-server-urls": "[]",
		"cluster-healthcheck-period": "1m0s",
		"max-custom-cluster-claims":  "20",
		"kube-api-qps":               "50",
		"kube-api-burst":             "100",
		"hub-kube-api-qps":           "50",
		"hub-kube-api-burst":         "100",
		"disable-addon-management":   "false",
	}
	for name, def := range want {
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("flag --%s is not registered", name)
			continue
		}
		if f.DefValue != def {
			t.Errorf("flag --%s default = %q, want %q", name, f.DefValue, def)
		}
	}
	if err := fs.Parse([]string{"--spoke-external-server-urls=https://a:6443", "--spoke-external-server-urls=https://b:6443"}); err != nil {
		t.Fatal(err)
	}
	if got := len(o.SpokeExternalServerURLs); got != 2 {
		t.Errorf("repeated --spoke-external-server-urls gave %d URLs, want 2", got)
	}
}

// TestHubFilesErrors: --bootstrap-kubeconfigs entries must be named by their directory as DNS-1123 labels,
// uniquely, and exclude --bootstrap-kubeconfig.
func TestHubFilesErrors(t *testing.T) {
	cases := []struct {
		name string
		mod  func(o *FailoverAgentOptions)
		want string
	}{
		{name: "both flags", mod: func(o *FailoverAgentOptions) {
			o.BootstrapKubeconfig = "/b/kubeconfig"
			o.BootstrapKubeconfigs = []string{"/a/kubeconfig", "/c/kubeconfig"}
		}, want: `--bootstrap-kubeconfig "/b/kubeconfig": must be empty when --bootstrap-kubeconfigs lists the hubs`},
		{name: "not a label", mod: func(o *FailoverAgentOptions) {
			o.BootstrapKubeconfigs = []string{"/a/kubeconfig", "/spoke/Hub_B/kubeconfig"}
		}, want: `--bootstrap-kubeconfigs "/spoke/Hub_B/kubeconfig": the hub is named after the file's directory, and "Hub_B" is not a DNS-1123 label`},
		{name: "primary", mod: func(o *FailoverAgentOptions) {
			o.BootstrapKubeconfigs = []string{"/a/kubeconfig", "/spoke/primary/kubeconfig"}
		}, want: `"primary" is already the name of another hub`},
		{name: "duplicate", mod: func(o *FailoverAgentOptions) {
			o.BootstrapKubeconfigs = []string{"/a/kubeconfig", "/x/b/kubeconfig", "/y/b/kubeconfig"}
		}, want: `--bootstrap-kubeconfigs "/y/b/kubeconfig": the hub is named after the file's directory, and "b" is already the name of another hub`},
		{name: "empty entry", mod: func(o *FailoverAgentOptions) {
			o.BootstrapKubeconfigs = []string{"/a/kubeconfig", ""}
		}, want: `--bootstrap-kubeconfigs "": entry 2 must name a bootstrap kubeconfig file`},
		{name: "timeout below the minimum", mod: func(o *FailoverAgentOptions) {
			o.BootstrapKubeconfig = "/b/kubeconfig"
			o.HubConnectionTimeoutSeconds = 5
		}, want: "--hub-connection-timeout-seconds 5: must be 0 (the default, 90) or at least 10"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := NewFailoverAgentOptions()
			tc.mod(o)
			err := o.ValidateFlags()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ValidateFlags() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
