package failover

import (
	"testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

func TestNextEpoch(t *testing.T) {
	cases := []struct {
		name               string
		last               int64
		lastHub, hub, from string
		want               failoverv1alpha1.AgentEpoch
	}{
		{name: "first join", hub: "primary", want: failoverv1alpha1.AgentEpoch{Number: 1}},
		{name: "switch", last: 1, lastHub: "primary", hub: "hub-b", from: "primary", want: failoverv1alpha1.AgentEpoch{Number: 2, From: "primary"}},
		{name: "failback", last: 2, lastHub: "hub-b", hub: "primary", from: "hub-b", want: failoverv1alpha1.AgentEpoch{Number: 3, From: "hub-b"}},
		{name: "restart onto the same hub keeps the epoch", last: 3, lastHub: "primary", hub: "primary", want: failoverv1alpha1.AgentEpoch{Number: 3}},
		{name: "restart onto another hub moves from the last one", last: 3, lastHub: "primary", hub: "hub-b", want: failoverv1alpha1.AgentEpoch{Number: 4, From: "primary"}},
		{name: "no record (no FailoverConfig)", hub: "hub-b", want: failoverv1alpha1.AgentEpoch{Number: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := NextEpoch(tc.last, tc.lastHub, tc.hub, tc.from); got != tc.want {
				t.Errorf("NextEpoch(%d, %q, %q, %q) = %v, want %v", tc.last, tc.lastHub, tc.hub, tc.from, got, tc.want)
			}
		})
	}
}

func TestBuildStatusEpochNeverGoesDown(t *testing.T) {
	current := &failoverv1alpha1.FailoverConfigStatus{Epoch: 4}
	if got := BuildStatus(current, StatusView{Epoch: 6}).Epoch; got != 6 {
		t.Errorf("epoch = %d, want 6", got)
	}
	if got := BuildStatus(current, StatusView{Epoch: 2}).Epoch; got != 4 {
		t.Errorf("epoch = %d, want 4 (kept)", got)
	}
}
