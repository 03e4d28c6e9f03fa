package v1alpha1

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func hubs(names ...string) []AlternateHub {
	out := make([]AlternateHub, 0, len(names))
	for _, n := range names {
		out = append(out, AlternateHub{Name: n, BootstrapKubeconfigSecretRef: n + "-bootstrap"})
	}
	return out
}

// fieldErr is the part of a field.Error a case asserts on.
type fieldErr struct {
	Type  field.ErrorType
	Field string
}

func TestValidateFailoverConfig(t *testing.T) {
	cases := []struct {
		name string
		spec FailoverConfigSpec
		want []fieldErr
	}{
		{name: "empty spec is valid"},
		{
			name: "full valid spec",
			spec: FailoverConfigSpec{
				AlternateHubs:           hubs("hub-b", "hub-c"),
				HubConnectionTimeout:    duration(10 * time.Second),
				HubRejectionGracePeriod: duration(10 * time.Second),
				FailedHubSkipPeriod:     duration(time.Hour),
				ProbeInterval:           duration(5 * time.Second),
				SwitchTo:                "hub-c",
				Failback:                &FailbackSpec{Policy: FailbackPolicyPrimary, HealthyFor: duration(10 * time.Second)},
			},
		},
		{name: "switchTo primary", spec: FailoverConfigSpec{SwitchTo: HubNamePrimary}},
		{name: "failback with empty policy", spec: FailoverConfigSpec{Failback: &FailbackSpec{}}},
		{
			name: "secret ref may be a dotted subdomain",
			spec: FailoverConfigSpec{AlternateHubs: []AlternateHub{{Name: "b", BootstrapKubeconfigSecretRef: "hub.b-bootstrap"}}},
		},
		{
			name: "invalid names",
			spec: FailoverConfigSpec{AlternateHubs: []AlternateHub{
				{Name: "Hub-B", BootstrapKubeconfigSecretRef: "s"},
				{Name: "hub.c", BootstrapKubeconfigSecretRef: "s"},
				{Name: strings.Repeat("a", 64), BootstrapKubeconfigSecretRef: "s"},
				{Name: "-x", BootstrapKubeconfigSecretRef: "s"},
			}},
			want: []fieldErr{
				{field.ErrorTypeInvalid, "spec.alternateHubs[0].name"},
				{field.ErrorTypeInvalid, "spec.alternateHubs[1].name"},
				{field.ErrorTypeInvalid, "spec.alternateHubs[2].name"},
				{field.ErrorTypeInvalid, "spec.alternateHubs[3].name"},
			},
		},
		{
			name: "reserved name primary",
			spec: FailoverConfigSpec{AlternateHubs: hubs("primary")},
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.alternateHubs[0].name"}},
		},
		{
			name: "duplicate names",
			spec: FailoverConfigSpec{AlternateHubs: hubs("hub-b", "hub-c", "hub-b")},
			want: []fieldErr{{field.ErrorTypeDuplicate, "spec.alternateHubs[2].name"}},
		},
		{
			name: "missing fields",
			spec: FailoverConfigSpec{AlternateHubs: []AlternateHub{{}}},
			want: []fieldErr{
				{field.ErrorTypeRequired, "spec.alternateHubs[0].name"},
				{field.ErrorTypeRequired, "spec.alternateHubs[0].bootstrapKubeconfigSecretRef"},
			},
		},
		{
			name: "invalid secret ref",
			spec: FailoverConfigSpec{AlternateHubs: []AlternateHub{{Name: "b", BootstrapKubeconfigSecretRef: "Hub_B"}}},
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.alternateHubs[0].bootstrapKubeconfigSecretRef"}},
		},
		{
			name: "too many alternate hubs",
			spec: FailoverConfigSpec{AlternateHubs: hubs("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q")},
			want: []fieldErr{{field.ErrorTypeTooMany, "spec.alternateHubs"}},
		},
		{
			name: "durations below their minimums",
			spec: FailoverConfigSpec{
				HubConnectionTimeout:    duration(9 * time.Second),
				HubRejectionGracePeriod: duration(0),
				FailedHubSkipPeriod:     duration(-time.Minute),
				ProbeInterval:           duration(4999 * time.Millisecond),
				Failback:                &FailbackSpec{HealthyFor: duration(time.Second)},
			},
			want: []fieldErr{
				{field.ErrorTypeInvalid, "spec.hubConnectionTimeout"},
				{field.ErrorTypeInvalid, "spec.hubRejectionGracePeriod"},
				{field.ErrorTypeInvalid, "spec.failedHubSkipPeriod"},
				{field.ErrorTypeInvalid, "spec.probeInterval"},
				{field.ErrorTypeInvalid, "spec.failback.healthyFor"},
			},
		},
		{
			name: "switchTo names an unknown hub",
			spec: FailoverConfigSpec{AlternateHubs: hubs("hub-b"), SwitchTo: "hub-c"},
			want: []fieldErr{{field.ErrorTypeNotSupported, "spec.switchTo"}},
		},
		{
			name: "forceSwitch names an unknown hub",
			spec: FailoverConfigSpec{AlternateHubs: hubs("hub-b"), SwitchTo: "hub-b", ForceSwitch: "hub-c"},
			want: []fieldErr{{field.ErrorTypeNotSupported, "spec.forceSwitch"}},
		},
		{name: "forceSwitch names a configured hub", spec: FailoverConfigSpec{AlternateHubs: hubs("hub-b"), ForceSwitch: "hub-b"}},
		{
			name: "unknown failback policy",
			spec: FailoverConfigSpec{Failback: &FailbackSpec{Policy: "Always"}},
			want: []fieldErr{{field.ErrorTypeNotSupported, "spec.failback.policy"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateFailoverConfig(&FailoverConfig{Spec: tc.spec})
			var got []fieldErr
			for _, e := range errs {
				got = append(got, fieldErr{e.Type, e.Field})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nall: %v", diff, errs.ToAggregate())
			}
		})
	}
}

func TestValidateFailoverConfigMessages(t *testing.T) {
	spec := FailoverConfigSpec{
		AlternateHubs:        hubs("primary", "hub-b"),
		HubConnectionTimeout: duration(time.Second),
		SwitchTo:             "hub-x",
	}
	got := ValidateFailoverConfig(&FailoverConfig{Spec: spec}).ToAggregate().Error()
	for _, want := range []string{
		`spec.alternateHubs[0].name: Invalid value: "primary": "primary" is reserved`,
		`spec.hubConnectionTimeout: Invalid value: "1s": must be at least 10s`,
		`spec.switchTo: Unsupported value: "hub-x": supported values: "primary", "hub-b"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("message %q does not contain %q", got, want)
		}
	}
}

// TestValidateFailoverConfigFileHubs: switchTo may name a hub the agent has from a bootstrap kubeconfig file (the
// klusterlet operator's --bootstrap-kubeconfigs), which the FailoverConfig does not list; the message of a name
// the agent does not know lists those hubs too.
func TestValidateFailoverConfigFileHubs(t *testing.T) {
	fc := &FailoverConfig{Spec: FailoverConfigSpec{SwitchTo: "bootstrap-hub-b"}}
	if errs := ValidateFailoverConfig(fc, "bootstrap-hub-b", "bootstrap-hub-c"); len(errs) != 0 {
		t.Errorf("switchTo a file hub: %v", errs.ToAggregate())
	}
	fc.Spec.SwitchTo = "bootstrap-hub-x"
	errs := ValidateFailoverConfig(fc, "bootstrap-hub-b", "bootstrap-hub-c")
	want := `spec.switchTo: Unsupported value: "bootstrap-hub-x": supported values: "primary", "bootstrap-hub-b", "bootstrap-hub-c"`
	if len(errs) != 1 || !strings.Contains(errs.ToAggregate().Error(), want) {
		t.Errorf("switchTo an unknown hub: %v, want one error %q", errs.ToAggregate(), want)
	}
}

func TestValidateFailoverConfigNil(t *testing.T) {
	errs := ValidateFailoverConfig(nil)
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeRequired {
		t.Errorf("ValidateFailoverConfig(nil) = %v, want one Required error", errs)
	}
}
