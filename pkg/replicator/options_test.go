package replicator_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator"
)

// valid returns the defaults with a namespace, which Validate accepts.
func valid() *replicator.Options {
	o := replicator.NewOptions()
	o.Namespace = "open-cluster-management-replicator"
	return o
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		mod  func(o *replicator.Options)
		// wantErr are substrings of the error, each naming a flag and its value; none means valid.
		wantErr []string
	}{
		{name: "defaults with a namespace", mod: func(*replicator.Options) {}},
		{name: "workers lower bound", mod: func(o *replicator.Options) { o.Workers = 1 }},
		{name: "workers upper bound", mod: func(o *replicator.Options) { o.Workers = 64 }},
		{name: "probe interval lower bound", mod: func(o *replicator.Options) { o.HubProbeInterval = time.Second }},
		{name: "status interval lower bound", mod: func(o *replicator.Options) { o.StatusInterval = time.Second }},
		{name: "report interval lower bound", mod: func(o *replicator.Options) { o.ReportInterval = time.Second }},
		{name: "report interval upper bound", mod: func(o *replicator.Options) { o.ReportInterval = time.Hour }},
		{name: "smallest positive QPS", mod: func(o *replicator.Options) { o.HubQPS = 0.01 }},
		{name: "burst lower bound", mod: func(o *replicator.Options) { o.HubBurst = 1 }},
		{name: "63-character namespace", mod: func(o *replicator.Options) { o.Namespace = strings.Repeat("n", 63) }},
		{name: "dotted config name (DNS-1123 subdomain)", mod: func(o *replicator.Options) { o.ConfigName = "replication.hub-a" }},

		{name: "empty namespace", mod: func(o *replicator.Options) { o.Namespace = "" }, wantErr: []string{`--namespace ""`}},
		{name: "upper-case namespace", mod: func(o *replicator.Options) { o.Namespace = "Replicator" }, wantErr: []string{`--namespace "Replicator"`}},
		{name: "dotted namespace (not a DNS-1123 label)", mod: func(o *replicator.Options) { o.Namespace = "a.b" }, wantErr: []string{`--namespace "a.b"`}},
		{name: "64-character namespace", mod: func(o *replicator.Options) { o.Namespace = strings.Repeat("n", 64) }, wantErr: []string{`--namespace "` + strings.Repeat("n", 64) + `"`}},
		{name: "empty config name", mod: func(o *replicator.Options) { o.ConfigName = "" }, wantErr: []string{`--config-name ""`}},
		{name: "invalid config name", mod: func(o *replicator.Options) { o.ConfigName = "My_Config" }, wantErr: []string{`--config-name "My_Config"`}},
		{name: "zero workers", mod: func(o *replicator.Options) { o.Workers = 0 }, wantErr: []string{"--workers 0", "between 1 and 64"}},
		{name: "negative workers", mod: func(o *replicator.Options) { o.Workers = -3 }, wantErr: []string{"--workers -3"}},
		{name: "65 workers", mod: func(o *replicator.Options) { o.Workers = 65 }, wantErr: []string{"--workers 65", "between 1 and 64"}},
		{name: "probe interval below 1s", mod: func(o *replicator.Options) { o.HubProbeInterval = 999 * time.Millisecond }, wantErr: []string{"--hub-probe-interval 999ms", "at least 1s"}},
		{name: "zero probe interval", mod: func(o *replicator.Options) { o.HubProbeInterval = 0 }, wantErr: []string{"--hub-probe-interval 0s"}},
		{name: "status interval below 1s", mod: func(o *replicator.Options) { o.StatusInterval = 500 * time.Millisecond }, wantErr: []string{"--status-interval 500ms", "at least 1s"}},
		{name: "report interval below 1s", mod: func(o *replicator.Options) { o.ReportInterval = 100 * time.Millisecond }, wantErr: []string{"--report-interval 100ms", "between 1s and 1h"}},
		{name: "report interval above 1h", mod: func(o *replicator.Options) { o.ReportInterval = 61 * time.Minute }, wantErr: []string{"--report-interval 1h1m0s", "between 1s and 1h"}},
		{name: "incarnation interval below 1s", mod: func(o *replicator.Options) { o.IncarnationInterval = time.Millisecond }, wantErr: []string{"--incarnation-interval 1ms", "between 1s and 1h"}},
		{name: "zero QPS", mod: func(o *replicator.Options) { o.HubQPS = 0 }, wantErr: []string{"--hub-kube-api-qps 0", "greater than 0"}},
		{name: "negative QPS", mod: func(o *replicator.Options) { o.HubQPS = -1.5 }, wantErr: []string{"--hub-kube-api-qps -1.5"}},
		{name: "zero burst", mod: func(o *replicator.Options) { o.HubBurst = 0 }, wantErr: []string{"--hub-kube-api-burst 0", "at least 1"}},
		{
			name: "every flag wrong: all reported together",
			mod: func(o *replicator.Options) {
				*o = replicator.Options{Namespace: "Bad_NS", ConfigName: "Bad_Name", Workers: 100, HubProbeInterval: time.Millisecond,
					StatusInterval: 2 * time.Millisecond, ReportInterval: time.Millisecond, HubQPS: -2, HubBurst: -4}
			},
			wantErr: []string{
				`--namespace "Bad_NS"`, `--config-name "Bad_Name"`, "--workers 100", "--hub-probe-interval 1ms", "--report-interval 1ms",
				"--status-interval 2ms", "--hub-kube-api-qps -2", "--hub-kube-api-burst -4",
			},
		},
		{
			name:    "two violations reported together",
			mod:     func(o *replicator.Options) { o.Workers = 0; o.HubBurst = 0 },
			wantErr: []string{"--workers 0", "--hub-kube-api-burst 0"},
		},
	}
	flags := []string{"--namespace", "--config-name", "--workers", "--hub-probe-interval", "--status-interval", "--hub-kube-api-qps", "--hub-kube-api-burst"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := valid()
			tc.mod(o)
			err := o.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error naming %q", tc.wantErr)
			}
			msg := err.Error()
			for _, s := range tc.wantErr {
				if !strings.Contains(msg, s) {
					t.Errorf("Validate() = %q, does not contain %q", msg, s)
				}
			}
			// Only the flags that are wrong are named, each once.
			for _, flag := range flags {
				named := 0
				for _, s := range tc.wantErr {
					if strings.HasPrefix(s, flag+" ") {
						named++
					}
				}
				if got := strings.Count(msg, flag+" "); got != named {
					t.Errorf("Validate() names %s %d times, want %d: %q", flag, got, named, msg)
				}
			}
		})
	}
}

func TestNewOptionsDefaultsAreValidAndMatchFlags(t *testing.T) {
	o := replicator.NewOptions()
	fs := pflag.NewFlagSet("replicator", pflag.ContinueOnError)
	o.AddFlags(fs)
	want := map[string]string{
		"config-name": replicator.DefaultConfigName, "workers": "16", "hub-probe-interval": "5s", "status-interval": "5s",
		"hub-kube-api-qps": "500", "hub-kube-api-burst": "1000",
	}
	for flag, value := range want {
		f := fs.Lookup(flag)
		if f == nil {
			t.Errorf("flag --%s not registered", flag)
			continue
		}
		if f.DefValue != value {
			t.Errorf("--%s default = %q, want %q", flag, f.DefValue, value)
		}
	}
	if err := fs.Parse([]string{"--workers=3", "--hub-probe-interval=2s", "--config-name=other", "--hub-kube-api-qps=5.5"}); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if o.Workers != 3 || o.HubProbeInterval != 2*time.Second || o.ConfigName != "other" || o.HubQPS != 5.5 {
		t.Errorf("parsed options = %+v", o)
	}
	o.Namespace = "ns"
	if err := o.Validate(); err != nil {
		t.Errorf("Validate() after parsing valid flags = %v", err)
	}
}

func TestComplete(t *testing.T) {
	// Without POD_NAMESPACE the namespace comes from the service-account file when it exists (in a pod), else
	// DefaultNamespace.
	fallback := replicator.DefaultNamespace
	if data, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil && strings.TrimSpace(string(data)) != "" {
		fallback = strings.TrimSpace(string(data))
	}
	cases := []struct {
		name      string
		namespace string
		env       string
		want      string
	}{
		{name: "POD_NAMESPACE fills an empty namespace", env: "from-env", want: "from-env"},
		{name: "POD_NAMESPACE is trimmed", env: "  from-env\n", want: "from-env"},
		{name: "explicit namespace wins over POD_NAMESPACE", namespace: "explicit", env: "from-env", want: "explicit"},
		{name: "explicit namespace kept without POD_NAMESPACE", namespace: "explicit", want: "explicit"},
		{name: "no POD_NAMESPACE: service-account file or default", want: fallback},
		{name: "blank POD_NAMESPACE counts as unset", env: "   ", want: fallback},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", tc.env)
			o := replicator.NewOptions()
			o.Namespace = tc.namespace
			o.Complete()
			if o.Namespace != tc.want {
				t.Errorf("Complete(): Namespace = %q, want %q", o.Namespace, tc.want)
			}
			// Complete touches only the namespace.
			want := replicator.NewOptions()
			want.Namespace = o.Namespace
			if *o != *want {
				t.Errorf("Complete() changed other options: %+v, want %+v", *o, *want)
			}
		})
	}
}
