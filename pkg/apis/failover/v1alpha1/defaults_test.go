package v1alpha1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWithDefaults(t *testing.T) {
	allDefaults := FailoverConfigSpec{
		HubConnectionTimeout:    duration(90 * time.Second),
		HubRejectionGracePeriod: duration(5 * time.Minute),
		FailedHubSkipPeriod:     duration(5 * time.Minute),
		ProbeInterval:           duration(30 * time.Second),
		Failback:                &FailbackSpec{Policy: FailbackPolicyNone, HealthyFor: duration(10 * time.Minute)},
	}
	cases := []struct {
		name string
		in   FailoverConfigSpec
		want FailoverConfigSpec
	}{
		{name: "empty spec gets every default", want: allDefaults},
		{
			name: "set fields are kept",
			in: FailoverConfigSpec{
				AlternateHubs:           hubs("hub-b"),
				HubConnectionTimeout:    duration(30 * time.Second),
				HubRejectionGracePeriod: duration(time.Minute),
				FailedHubSkipPeriod:     duration(2 * time.Minute),
				ProbeInterval:           duration(5 * time.Second),
				SwitchTo:                "hub-b",
				Failback:                &FailbackSpec{Policy: FailbackPolicyPrimary, HealthyFor: duration(20 * time.Second)},
			},
			want: FailoverConfigSpec{
				AlternateHubs:           hubs("hub-b"),
				HubConnectionTimeout:    duration(30 * time.Second),
				HubRejectionGracePeriod: duration(time.Minute),
				FailedHubSkipPeriod:     duration(2 * time.Minute),
				ProbeInterval:           duration(5 * time.Second),
				SwitchTo:                "hub-b",
				Failback:                &FailbackSpec{Policy: FailbackPolicyPrimary, HealthyFor: duration(20 * time.Second)},
			},
		},
		{
			name: "partial failback is completed",
			in:   FailoverConfigSpec{HubConnectionTimeout: duration(time.Minute), Failback: &FailbackSpec{Policy: FailbackPolicyPrimary}},
			want: FailoverConfigSpec{
				HubConnectionTimeout:    duration(time.Minute),
				HubRejectionGracePeriod: duration(5 * time.Minute),
				FailedHubSkipPeriod:     duration(5 * time.Minute),
				ProbeInterval:           duration(30 * time.Second),
				Failback:                &FailbackSpec{Policy: FailbackPolicyPrimary, HealthyFor: duration(10 * time.Minute)},
			},
		},
		{
			name: "invalid set values are not replaced",
			in:   FailoverConfigSpec{ProbeInterval: duration(time.Second)},
			want: FailoverConfigSpec{
				HubConnectionTimeout:    duration(90 * time.Second),
				HubRejectionGracePeriod: duration(5 * time.Minute),
				FailedHubSkipPeriod:     duration(5 * time.Minute),
				ProbeInterval:           duration(time.Second),
				Failback:                &FailbackSpec{Policy: FailbackPolicyNone, HealthyFor: duration(10 * time.Minute)},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.in.DeepCopy()
			got := WithDefaults(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("WithDefaults (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, &tc.in); diff != "" {
				t.Errorf("WithDefaults modified its input (-before +after):\n%s", diff)
			}
			// The result must not alias the input: changing it leaves the input alone.
			got.Failback.Policy = "changed"
			for i := range got.AlternateHubs {
				got.AlternateHubs[i].Name = "changed"
			}
			if got.HubConnectionTimeout != nil {
				got.HubConnectionTimeout.Duration = -1
			}
			if diff := cmp.Diff(before, &tc.in); diff != "" {
				t.Errorf("WithDefaults result aliases its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestSetDefaults(t *testing.T) {
	fc := &FailoverConfig{Spec: FailoverConfigSpec{SwitchTo: HubNamePrimary}}
	SetDefaults(fc)
	if fc.Spec.HubConnectionTimeout == nil || fc.Spec.HubConnectionTimeout.Duration != DefaultHubConnectionTimeout {
		t.Errorf("hubConnectionTimeout = %v, want %v", fc.Spec.HubConnectionTimeout, DefaultHubConnectionTimeout)
	}
	if fc.Spec.SwitchTo != HubNamePrimary {
		t.Errorf("switchTo = %q, want it kept", fc.Spec.SwitchTo)
	}
}

func TestHubNames(t *testing.T) {
	spec := FailoverConfigSpec{AlternateHubs: hubs("hub-c", "hub-b")}
	if diff := cmp.Diff([]string{"primary", "hub-c", "hub-b"}, spec.HubNames()); diff != "" {
		t.Errorf("HubNames (-want +got):\n%s", diff)
	}
}
