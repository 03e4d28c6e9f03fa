package failover

import (
	"testing"
	"time"

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

// TestShellEpochs: the sessions get the agent's epochs — 1 on the first join, 2 from primary after the failover —
// and status.epoch follows; a higher epoch a session reports (DecideEpoch rule 4) becomes the agent's, credited to
// that session's hub even when it arrives after the session was replaced; a new process reads the epoch and the
// active hub from the status: a session on that hub keeps it, one elsewhere goes above it, from that hub.
func TestShellEpochs(t *testing.T) {
	s := newShell(t, failoverv1alpha1.FailoverConfigSpec{})
	first := s.join()
	if got := first.params.Epoch; got != (failoverv1alpha1.AgentEpoch{Number: 1}) {
		t.Fatalf("first session's epoch %v, want 1 from no hub", got)
	}
	s.hubs["primary"].setDown(true)
	s.clock.Step(failoverv1alpha1.DefaultHubConnectionTimeout + time.Second)
	s.sessionRequestFails()
	s.stepUntil("switch to hub-b", func() bool { return s.r.run.hub == "hub-b" })
	second := s.session(1)
	if got := second.params.Epoch; got != (failoverv1alpha1.AgentEpoch{Number: 2, From: "primary"}) {
		t.Fatalf("hub-b session's epoch %v, want 2 from primary", got)
	}
	second.registered()
	s.stepUntil("status.epoch 2", func() bool { return s.status().Epoch == 2 })

	// hub-b's ManagedCluster carried 6 (the FailoverConfig was re-created once): the session recorded 7.
	second.params.Observer.EpochRecorded(failoverv1alpha1.AgentEpoch{Number: 7, From: "primary"})
	s.stepUntil("status.epoch 7", func() bool { return s.status().Epoch == 7 })
	if s.r.epochHub != "hub-b" {
		t.Errorf("epoch 7 credited to %q, want hub-b", s.r.epochHub)
	}
	// A late report of the first session (primary's ManagedCluster raised to 9) counts, for primary.
	first.params.Observer.EpochRecorded(failoverv1alpha1.AgentEpoch{Number: 9})
	s.stepUntil("status.epoch 9", func() bool { return s.status().Epoch == 9 })
	if s.r.epochHub != "primary" {
		t.Errorf("epoch 9 credited to %q, want primary", s.r.epochHub)
	}

	// A new process reads epoch 9 and the active hub, hub-b, from the status.
	deadline := time.Now().Add(10 * time.Second)
	for fc := s.r.failoverConfig(); fc == nil || fc.Status.Epoch != 9; fc = s.r.failoverConfig() {
		if time.Now().After(deadline) {
			t.Fatal("the informer did not see status.epoch 9")
		}
		time.Sleep(10 * time.Millisecond)
	}
	r2 := &Orchestrator{o: s.r.o, hubs: s.r.hubs}
	if got := r2.nextEpoch("hub-b", ""); got != (failoverv1alpha1.AgentEpoch{Number: 9}) {
		t.Errorf("restart onto hub-b: epoch %v, want 9 kept", got)
	}
	r3 := &Orchestrator{o: s.r.o, hubs: s.r.hubs}
	if got := r3.nextEpoch("primary", ""); got != (failoverv1alpha1.AgentEpoch{Number: 10, From: "hub-b"}) {
		t.Errorf("restart onto primary: epoch %v, want 10 from hub-b", got)
	}
}
