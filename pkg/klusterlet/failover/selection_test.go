package failover

import (
	"testing"
	"time"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

func TestSelectNext(t *testing.T) {
	now := t0.Add(time.Hour)
	failedRecently := func(name string, probe failoverv1alpha1.HubProbeResult) HubCandidate {
		return HubCandidate{Name: name, FailedAt: now.Add(-time.Minute), SkipPeriod: 5 * time.Minute, Probe: probe}
	}
	cases := []struct {
		name   string
		hubs   []HubCandidate
		active string
		want   string
		wantOK bool
	}{
		{
			name:   "first ready alternate in list order",
			hubs:   []HubCandidate{{Name: "primary", Probe: failoverv1alpha1.HubProbeReady}, {Name: "hub-b", Probe: failoverv1alpha1.HubProbeReady}, {Name: "hub-c", Probe: failoverv1alpha1.HubProbeReady}},
			active: "primary",
			want:   "hub-b", wantOK: true,
		},
		{
			name:   "the primary comes first when an alternate is active",
			hubs:   []HubCandidate{{Name: "primary", Probe: failoverv1alpha1.HubProbeReady}, {Name: "hub-b", Probe: failoverv1alpha1.HubProbeReady}, {Name: "hub-c", Probe: failoverv1alpha1.HubProbeReady}},
			active: "hub-c",
			want:   "primary", wantOK: true,
		},
		{
			name:   "a hub whose probe failed is not viable",
			hubs:   []HubCandidate{{Name: "primary"}, {Name: "hub-b", Probe: failoverv1alpha1.HubProbeUnreachable}, {Name: "hub-c", Probe: failoverv1alpha1.HubProbeReady}},
			active: "primary",
			want:   "hub-c", wantOK: true,
		},
		{
			name:   "a probed-ready hub beats an earlier never-probed hub",
			hubs:   []HubCandidate{{Name: "primary"}, {Name: "hub-b"}, {Name: "hub-c", Probe: failoverv1alpha1.HubProbeReady}},
			active: "primary",
			want:   "hub-c", wantOK: true,
		},
		{
			name:   "a never-probed hub is used when no hub is proven ready",
			hubs:   []HubCandidate{{Name: "primary"}, {Name: "hub-b", Probe: failoverv1alpha1.HubProbeForbidden}, {Name: "hub-c"}, {Name: "hub-d"}},
			active: "primary",
			want:   "hub-c", wantOK: true,
		},
		{
			name: "a ready hub in step beats an earlier ready hub reported behind",
			hubs: []HubCandidate{{Name: "primary"}, {Name: "hub-b", Probe: failoverv1alpha1.HubProbeReady, Replication: failoverv1alpha1.HubBehind},
				{Name: "hub-c", Probe: failoverv1alpha1.HubProbeReady}},
			active: "primary",
			want:   "hub-c", wantOK: true,
		},
		{
			name:   "a never-probed hub not reported beats a ready hub reported behind",
			hubs:   []HubCandidate{{Name: "primary"}, {Name: "hub-b", Probe: failoverv1alpha1.HubProbeReady, Replication: failoverv1alpha1.HubBehind}, {Name: "hub-c"}},
			active: "primary",
			want:   "hub-c", wantOK: true,
		},
		{
			name: "a ready hub reported behind beats a never-probed hub reported behind",
			hubs: []HubCandidate{{Name: "primary"}, {Name: "hub-b", Replication: failoverv1alpha1.HubBehind},
				{Name: "hub-c", Probe: failoverv1alpha1.HubProbeReady, Replication: failoverv1alpha1.HubBehind}},
			active: "primary",
			want:   "hub-c", wantOK: true,
		},
		{
			name: "a ready hub reported in step beats an earlier ready hub the report does not name",
			hubs: []HubCandidate{{Name: "primary"}, {Name: "hub-b", Probe: failoverv1alpha1.HubProbeReady},
				{Name: "hub-c", Probe: failoverv1alpha1.HubProbeReady, Replication: failoverv1alpha1.HubInStep}},
			active: "primary",
			want:   "hub-c", wantOK: true,
		},
		{
			name: "a never-probed hub reported in step beats a ready hub the report does not name",
			hubs: []HubCandidate{{Name: "primary"}, {Name: "hub-b", Probe: failoverv1alpha1.HubProbeReady},
				{Name: "hub-c", Replication: failoverv1alpha1.HubInStep}},
			active: "primary",
			want:   "hub-c", wantOK: true,
		},
		{
			name: "a hub the report does not name beats a hub reported behind",
			hubs: []HubCandidate{{Name: "primary"}, {Name: "hub-b", Probe: failoverv1alpha1.HubProbeReady, Replication: failoverv1alpha1.HubBehind},
				{Name: "hub-c"}, {Name: "hub-d", Probe: failoverv1alpha1.HubProbeReady, Replication: failoverv1alpha1.HubBehind}},
			active: "primary",
			want:   "hub-c", wantOK: true,
		},
		{
			name:   "a hub reported behind is chosen when it is the only viable one",
			hubs:   []HubCandidate{{Name: "primary"}, {Name: "hub-b", Probe: failoverv1alpha1.HubProbeUnreachable}, {Name: "hub-c", Probe: failoverv1alpha1.HubProbeReady, Replication: failoverv1alpha1.HubBehind}},
			active: "primary",
			want:   "hub-c", wantOK: true,
		},
		{
			name:   "a hub reported behind whose probe failed is not viable",
			hubs:   []HubCandidate{{Name: "primary"}, {Name: "hub-b", Probe: failoverv1alpha1.HubProbeUnreachable, Replication: failoverv1alpha1.HubBehind}},
			active: "primary",
			want:   "", wantOK: false,
		},
		{
			name:   "a hub that failed recently is skipped",
			hubs:   []HubCandidate{{Name: "primary"}, failedRecently("hub-b", failoverv1alpha1.HubProbeReady), {Name: "hub-c", Probe: failoverv1alpha1.HubProbeReady}},
			active: "primary",
			want:   "hub-c", wantOK: true,
		},
		{
			name: "a failed hub is viable again once its skip period is over",
			hubs: []HubCandidate{{Name: "primary"},
				{Name: "hub-b", FailedAt: now.Add(-5 * time.Minute), SkipPeriod: 5 * time.Minute, Probe: failoverv1alpha1.HubProbeReady}},
			active: "primary",
			want:   "hub-b", wantOK: true,
		},
		{
			name:   "no viable hub",
			hubs:   []HubCandidate{{Name: "primary"}, failedRecently("hub-b", failoverv1alpha1.HubProbeReady), {Name: "hub-c", Probe: failoverv1alpha1.HubProbeUnauthorized}},
			active: "primary",
			wantOK: false,
		},
		{
			name:   "the active hub is not chosen while others exist, even if none is viable",
			hubs:   []HubCandidate{{Name: "primary", Probe: failoverv1alpha1.HubProbeReady}, {Name: "hub-b", Probe: failoverv1alpha1.HubProbeInvalidKubeconfig}},
			active: "primary",
			wantOK: false,
		},
		{
			name:   "the only hub is chosen even though it is active (re-bootstrap)",
			hubs:   []HubCandidate{{Name: "primary"}},
			active: "primary",
			want:   "primary", wantOK: true,
		},
		{
			name:   "the only hub is skipped after a recent failure",
			hubs:   []HubCandidate{failedRecently("primary", "")},
			active: "primary",
			wantOK: false,
		},
		{
			name:   "no active hub yet: the first viable hub",
			hubs:   []HubCandidate{{Name: "primary", Probe: failoverv1alpha1.HubProbeReady}, {Name: "hub-b", Probe: failoverv1alpha1.HubProbeReady}},
			active: "",
			want:   "primary", wantOK: true,
		},
		{
			name:   "no hubs",
			active: "primary",
			wantOK: false,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := SelectNext(tc.hubs, tc.active, now)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("SelectNext() = (%q, %v), want (%q, %v)", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestNextSkipExpiry(t *testing.T) {
	now := t0.Add(time.Hour)
	cases := []struct {
		name   string
		hubs   []HubCandidate
		want   time.Time
		wantOK bool
	}{
		{name: "nothing skipped", hubs: []HubCandidate{{Name: "primary"}, {Name: "hub-b", FailedAt: now.Add(-time.Hour), SkipPeriod: time.Minute}}},
		{
			name: "earliest expiry among skipped hubs",
			hubs: []HubCandidate{
				{Name: "primary", FailedAt: now.Add(-time.Minute), SkipPeriod: 10 * time.Minute},
				{Name: "hub-b", FailedAt: now.Add(-2 * time.Minute), SkipPeriod: 5 * time.Minute},
				{Name: "hub-c"},
			},
			want: now.Add(3 * time.Minute), wantOK: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := NextSkipExpiry(tc.hubs, now)
			if !got.Equal(tc.want) || ok != tc.wantOK {
				t.Errorf("NextSkipExpiry() = (%v, %v), want (%v, %v)", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestShouldFailBack(t *testing.T) {
	now := t0.Add(time.Hour)
	cases := []struct {
		name         string
		policy       failoverv1alpha1.FailbackPolicy
		healthySince time.Time
		healthyFor   time.Duration
		want         bool
		wantRecheck  time.Duration
	}{
		{name: "policy none", policy: failoverv1alpha1.FailbackPolicyNone, healthySince: now.Add(-time.Hour), healthyFor: time.Minute},
		{name: "unknown policy", policy: "Sometimes", healthySince: now.Add(-time.Hour), healthyFor: time.Minute},
		{name: "primary not healthy", policy: failoverv1alpha1.FailbackPolicyPrimary, healthyFor: time.Minute},
		{
			name: "healthy, not long enough", policy: failoverv1alpha1.FailbackPolicyPrimary,
			healthySince: now.Add(-4 * time.Minute), healthyFor: 5 * time.Minute, wantRecheck: time.Minute,
		},
		{name: "healthy exactly long enough", policy: failoverv1alpha1.FailbackPolicyPrimary, healthySince: now.Add(-5 * time.Minute), healthyFor: 5 * time.Minute, want: true},
		{name: "no required duration", policy: failoverv1alpha1.FailbackPolicyPrimary, healthySince: now, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, recheck := ShouldFailBack(tc.policy, tc.healthySince, tc.healthyFor, now)
			if got != tc.want || recheck != tc.wantRecheck {
				t.Errorf("ShouldFailBack() = (%v, %v), want (%v, %v)", got, recheck, tc.want, tc.wantRecheck)
			}
		})
	}
}
