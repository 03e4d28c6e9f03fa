package managedcluster

import "testing"

func TestConflictTracker(t *testing.T) {
	tracker := NewConflictTracker()
	if tracker.Verified() {
		t.Fatal("a new tracker must be unverified")
	}
	if conflict, _ := tracker.Conflict(); conflict {
		t.Fatal("a new tracker must record no conflict")
	}

	steps := []struct {
		name               string
		apply              func() bool
		expectedTransition bool
		expectedNotified   bool
		expectedConflict   bool
		expectedMessage    string
	}{
		{name: "first verification without conflict", apply: tracker.Clear, expectedNotified: true},
		{name: "clear again is a no-op", apply: tracker.Clear},
		{name: "conflict recorded", apply: func() bool { return tracker.Set("a") }, expectedTransition: true, expectedNotified: true, expectedConflict: true, expectedMessage: "a"},
		{name: "same conflict again is a no-op", apply: func() bool { return tracker.Set("a") }, expectedConflict: true, expectedMessage: "a"},
		{name: "new message notifies without a transition", apply: func() bool { return tracker.Set("b") }, expectedNotified: true, expectedConflict: true, expectedMessage: "b"},
		{name: "conflict resolved", apply: tracker.Clear, expectedTransition: true, expectedNotified: true},
	}
	for _, step := range steps {
		changed := tracker.Changed()
		if transition := step.apply(); transition != step.expectedTransition {
			t.Errorf("%s: transition = %v, want %v", step.name, transition, step.expectedTransition)
		}
		notified := false
		select {
		case <-changed:
			notified = true
		default:
		}
		if notified != step.expectedNotified {
			t.Errorf("%s: notified = %v, want %v", step.name, notified, step.expectedNotified)
		}
		conflict, message := tracker.Conflict()
		if conflict != step.expectedConflict || message != step.expectedMessage {
			t.Errorf("%s: Conflict() = %v, %q; want %v, %q", step.name, conflict, message, step.expectedConflict, step.expectedMessage)
		}
		if !tracker.Verified() {
			t.Errorf("%s: tracker must be verified", step.name)
		}
	}
}

func TestConflictTrackerSetVerifies(t *testing.T) {
	tracker := NewConflictTracker()
	if !tracker.Set("conflict") || !tracker.Verified() {
		t.Error("a conflict found at the first check must verify the tracker and report a transition")
	}
}

func TestConflictTrackerReset(t *testing.T) {
	tracker := NewConflictTracker()
	tracker.Set("conflict on hub-a")
	changed := tracker.Changed()
	tracker.Reset()
	if conflict, _ := tracker.Conflict(); conflict || tracker.Verified() {
		t.Error("Reset must return to unverified without conflict")
	}
	select {
	case <-changed:
	default:
		t.Error("Reset must notify listeners")
	}
}
