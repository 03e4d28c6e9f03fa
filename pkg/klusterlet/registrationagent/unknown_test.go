package registrationagent

import (
	"slices"
	"strings"
	"testing"

	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/spf13/pflag"
	"k8s.io/utils/clock"
	ocmfeature "open-cluster-management.io/api/feature"
)

// TestClassifyUnknownFlags: unknown flags are ignored unless their name says they choose how or with which
// credentials the agent registers; values are taken from "=value" or the next word.
func TestClassifyUnknownFlags(t *testing.T) {
	cases := []struct {
		name        string
		args        []string
		wantIgnored []string
		wantErr     []string
	}{
		{name: "none"},
		{name: "flag with =value", args: []string{"--hosting-cluster-claim-enabled=true"}, wantIgnored: []string{"--hosting-cluster-claim-enabled=true"}},
		{name: "bool flag then another flag", args: []string{"--enable-x", "--other=1"}, wantIgnored: []string{"--enable-x", "--other=1"}},
		{name: "value as the next word", args: []string{"--status-sync-interval", "30s"}, wantIgnored: []string{"--status-sync-interval=30s"}},
		{name: "stray argument", args: []string{"extra"}, wantIgnored: []string{`argument "extra"`}},
		{name: "registration driver refused", args: []string{"--registration-driver=awsirsa"},
			wantErr: []string{`--registration-driver "awsirsa": not supported by klusterlet-failover, and not ignored`, `contains "driver"`}},
		{name: "every unsafe flag named, safe ones still listed", args: []string{"--hub-auth", "token", "--grpc-server=x:1", "--new-thing=1", "--extra-bootstrap-kubeconfig=/k"},
			wantIgnored: []string{"--new-thing=1"},
			wantErr:     []string{`--hub-auth "token"`, `--grpc-server "x:1"`, `--extra-bootstrap-kubeconfig "/k"`}},
		{name: "a word inside another word is not unsafe", args: []string{"--author-name=x", "--warning-threshold=2"},
			wantIgnored: []string{"--author-name=x", "--warning-threshold=2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ignored, err := ClassifyUnknownFlags(tc.args)
			var got []string
			for _, f := range ignored {
				got = append(got, f.String())
			}
			if !slices.Equal(got, tc.wantIgnored) {
				t.Errorf("ignored %q, want %q", got, tc.wantIgnored)
			}
			if len(tc.wantErr) == 0 && err != nil {
				t.Errorf("error %v, want none", err)
			}
			for _, want := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want it to contain %q", err, want)
				}
			}
		})
	}
}

// TestUnknownFeatureGates: a feature gate this agent does not know is recorded and ignored, the known ones in
// the same flag still take effect, and a bad value is still an error.
func TestUnknownFeatureGates(t *testing.T) {
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--feature-gates=AddonManagement=false,HostingClusterClaim=true"}); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if o.FeatureGates.Enabled(ocmfeature.AddonManagement) {
		t.Errorf("AddonManagement=false was not applied")
	}
	if len(o.UnknownFeatureGates) != 1 || o.UnknownFeatureGates[0].String() != "--feature-gates=HostingClusterClaim=true" {
		t.Errorf("unknown gates %v, want HostingClusterClaim=true", o.UnknownFeatureGates)
	}
	if got := o.IgnoredFeatureGates(fs); len(got) != 0 {
		t.Errorf("IgnoredFeatureGates %v: an unknown gate is not a known gate without effect", got)
	}
	fs = pflag.NewFlagSet("test", pflag.ContinueOnError)
	NewOptions().AddFlags(fs)
	if err := fs.Parse([]string{"--feature-gates=AddonManagement=maybe"}); err == nil || !strings.Contains(err.Error(), "AddonManagement=maybe") {
		t.Errorf("Parse of a bad value: %v, want an error naming it", err)
	}
}

// TestWarnIgnored: one Warning event per ignored flag, naming it.
func TestWarnIgnored(t *testing.T) {
	recorder := events.NewInMemoryRecorder("test", clock.RealClock{})
	WarnIgnored(recorder, []IgnoredFlag{{Name: "--new-thing", Value: "1"}, {Name: "--feature-gates=X", Value: "true"}})
	evs := recorder.Events()
	if len(evs) != 2 || evs[0].Reason != ReasonOperatorFlagIgnored || evs[0].Type != "Warning" || !strings.Contains(evs[0].Message, `"--new-thing=1"`) {
		t.Errorf("events %v", evs)
	}
}
