package brake

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

var start = time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)

func TestAllowed(t *testing.T) {
	cases := []struct {
		limits  Limits
		objects int
		want    int
	}{
		{Limits{Percent: 10, Minimum: 20}, 0, 20},
		{Limits{Percent: 10, Minimum: 20}, 200, 20},
		{Limits{Percent: 10, Minimum: 20}, 201, 21}, // rounded up
		{Limits{Percent: 10, Minimum: 20}, 35000, 3500},
		{Limits{Percent: 100, Minimum: 0}, 7, 7},
		{Limits{Percent: 1, Minimum: 0}, 1, 1},
		{Limits{Percent: 1, Minimum: 0}, 0, 0},
	}
	for _, tc := range cases {
		if got := tc.limits.Allowed(tc.objects); got != tc.want {
			t.Errorf("%+v.Allowed(%d) = %d, want %d", tc.limits, tc.objects, got, tc.want)
		}
	}
}

// step is one call in a brake's life: an Admit (key set), a Release (token set) or a wait (advance).
type step struct {
	advance time.Duration
	hub     string
	key     string
	objects int
	want    Verdict
	release string
	// released are the keys a Release returns (nil: the Release must fail).
	released []string
	forget   bool
}

func TestAdmit(t *testing.T) {
	limits := Limits{Percent: 10, Minimum: 2, Window: 10 * time.Minute}
	token := "hub-b@2026-12-05T06:00:00Z"
	cases := []struct {
		name  string
		steps []step
		// engaged is what Engaged returns at the end.
		engaged []State
	}{
		{
			name: "deletes within the limit are admitted",
			steps: []step{
				{hub: "hub-b", key: "a", objects: 10, want: Admitted},
				{hub: "hub-b", key: "b", objects: 10, want: Admitted},
			},
		},
		{
			name: "the delete beyond the limit engages the brake and every later one is held",
			steps: []step{
				{hub: "hub-b", key: "a", objects: 10, want: Admitted},
				{hub: "hub-b", key: "b", objects: 10, want: Admitted},
				{hub: "hub-b", key: "c", objects: 10, want: Engaged},
				{advance: time.Hour, hub: "hub-b", key: "d", objects: 10, want: Held},
				{hub: "hub-b", key: "c", objects: 10, want: Held},
			},
			engaged: []State{{Hub: "hub-b", Since: start, Limit: 2, Held: 2}},
		},
		{
			name: "the limit is a share of the objects when that is more than the minimum",
			steps: []step{
				{hub: "hub-b", key: "a", objects: 30, want: Admitted},
				{hub: "hub-b", key: "b", objects: 30, want: Admitted},
				{hub: "hub-b", key: "c", objects: 30, want: Admitted},
				{hub: "hub-b", key: "d", objects: 30, want: Engaged},
			},
			engaged: []State{{Hub: "hub-b", Since: start, Limit: 3, Held: 1}},
		},
		{
			name: "a retried delete counts once",
			steps: []step{
				{hub: "hub-b", key: "a", objects: 10, want: Admitted},
				{hub: "hub-b", key: "a", objects: 10, want: Admitted},
				{advance: time.Minute, hub: "hub-b", key: "a", objects: 10, want: Admitted},
				{hub: "hub-b", key: "b", objects: 10, want: Admitted},
				{hub: "hub-b", key: "b", objects: 10, want: Admitted},
				{hub: "hub-b", key: "c", objects: 10, want: Engaged},
			},
			engaged: []State{{Hub: "hub-b", Since: start.Add(time.Minute), Limit: 2, Held: 1}},
		},
		{
			name: "each hub has its own count and brake",
			steps: []step{
				{hub: "hub-b", key: "a", objects: 10, want: Admitted},
				{hub: "hub-b", key: "b", objects: 10, want: Admitted},
				{hub: "hub-c", key: "a", objects: 10, want: Admitted},
				{hub: "hub-b", key: "c", objects: 10, want: Engaged},
				{hub: "hub-c", key: "b", objects: 10, want: Admitted},
			},
			engaged: []State{{Hub: "hub-b", Since: start, Limit: 2, Held: 1}},
		},
		{
			name: "deletes older than the window no longer count",
			steps: []step{
				{hub: "hub-b", key: "a", objects: 10, want: Admitted},
				{advance: 5 * time.Minute, hub: "hub-b", key: "b", objects: 10, want: Admitted},
				{advance: 5 * time.Minute, hub: "hub-b", key: "c", objects: 10, want: Admitted},
				{advance: time.Minute, hub: "hub-b", key: "d", objects: 10, want: Engaged},
			},
			engaged: []State{{Hub: "hub-b", Since: start.Add(11 * time.Minute), Limit: 2, Held: 1}},
		},
		{
			name: "a release admits each held delete once, uncounted, and starts the window afresh",
			steps: []step{
				{hub: "hub-b", key: "a", objects: 10, want: Admitted},
				{hub: "hub-b", key: "b", objects: 10, want: Admitted},
				{hub: "hub-b", key: "c", objects: 10, want: Engaged},
				{hub: "hub-b", key: "d", objects: 10, want: Held},
				{hub: "hub-b", key: "e", objects: 10, want: Held},
				{release: token, released: []string{"c", "d", "e"}},
				{hub: "hub-b", key: "c", objects: 10, want: Admitted},
				{hub: "hub-b", key: "d", objects: 10, want: Admitted},
				{hub: "hub-b", key: "e", objects: 10, want: Admitted},
				{hub: "hub-b", key: "f", objects: 10, want: Admitted},
				{hub: "hub-b", key: "g", objects: 10, want: Admitted},
				{advance: time.Second, hub: "hub-b", key: "h", objects: 10, want: Engaged},
			},
			engaged: []State{{Hub: "hub-b", Since: start.Add(time.Second), Limit: 2, Held: 1}},
		},
		{
			name: "a token used once, of another hub, or malformed releases nothing",
			steps: []step{
				{hub: "hub-b", key: "a", objects: 0, want: Admitted},
				{hub: "hub-b", key: "b", objects: 0, want: Admitted},
				{hub: "hub-b", key: "c", objects: 0, want: Engaged},
				{release: "hub-c@2026-12-05T06:00:00Z"},
				{release: "hub-b@2026-12-05T05:59:59Z"},
				{release: "hub-b"},
				{release: ""},
				{hub: "hub-b", key: "d", objects: 0, want: Held},
				{release: token, released: []string{"c", "d"}},
				{release: token},
			},
		},
		{
			name: "a held delete its sync no longer asks for is forgotten, and not admitted by the release",
			steps: []step{
				{hub: "hub-b", key: "a", objects: 10, want: Admitted},
				{hub: "hub-b", key: "b", objects: 10, want: Admitted},
				{hub: "hub-b", key: "c", objects: 10, want: Engaged},
				{hub: "hub-b", key: "d", objects: 10, want: Held},
				{hub: "hub-b", key: "d", forget: true},
				{release: token, released: []string{"c"}},
				{hub: "hub-b", key: "c", forget: true},
				{hub: "hub-b", key: "x", objects: 10, want: Admitted},
				{hub: "hub-b", key: "y", objects: 10, want: Admitted},
				{hub: "hub-b", key: "c", objects: 10, want: Engaged},
			},
			engaged: []State{{Hub: "hub-b", Since: start.Add(time.Second), Limit: 2, Held: 1}}, // a second after the released engagement: a new token
		},
		{
			name: "no objects: the minimum is the limit",
			steps: []step{
				{hub: "hub-b", key: "a", objects: 0, want: Admitted},
				{hub: "hub-b", key: "b", objects: 0, want: Admitted},
				{hub: "hub-b", key: "c", objects: 0, want: Engaged},
			},
			engaged: []State{{Hub: "hub-b", Since: start, Limit: 2, Held: 1}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(start)
			b := New[string](limits, clk, nil)
			for i, s := range tc.steps {
				clk.SetTime(clk.Now().Add(s.advance))
				switch {
				case s.release != "" || (s.key == "" && !s.forget):
					r, ok := b.Release(s.release)
					keys := r.Keys
					if ok != (s.released != nil) {
						t.Fatalf("step %d: Release(%q) ok = %v (hub %q, keys %v), want %v", i, s.release, ok, r.Hub, keys, s.released != nil)
					}
					sort.Strings(keys)
					if diff := cmp.Diff(s.released, keys); ok && diff != "" {
						t.Fatalf("step %d: Release(%q) keys (-want +got):\n%s", i, s.release, diff)
					}
				case s.forget:
					b.Forget(s.hub, s.key)
				default:
					if got := b.Admit(s.hub, s.key, func() int { return s.objects }); got != s.want {
						t.Fatalf("step %d: Admit(%s, %s, %d) = %s, want %s", i, s.hub, s.key, s.objects, got, s.want)
					}
				}
			}
			if diff := cmp.Diff(tc.engaged, b.Engaged()); diff != "" {
				t.Errorf("Engaged (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMinimumZero: with minimum 0 and percent 1 of 150 objects, two deletes are allowed.
func TestMinimumZero(t *testing.T) {
	b := New[string](Limits{Percent: 1, Minimum: 0, Window: time.Minute}, clocktesting.NewFakePassiveClock(start), nil)
	var got []Verdict
	for i := range 3 {
		got = append(got, b.Admit("hub-b", fmt.Sprint(i), func() int { return 150 }))
	}
	if diff := cmp.Diff([]Verdict{Admitted, Admitted, Engaged}, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

// TestEngagedAcrossARestart: a brake restored from the status is engaged, with the release token it had.
func TestEngagedAcrossARestart(t *testing.T) {
	since := start.Add(-time.Hour).Add(300 * time.Millisecond)
	b := New[string](Limits{Percent: 10, Minimum: 20, Window: time.Minute}, clocktesting.NewFakePassiveClock(start),
		map[string]time.Time{"hub-b": since})
	thousand := func() int { return 1000 }
	if got := b.Admit("hub-b", "a", thousand); got != Held {
		t.Fatalf("Admit after a restart with the brake engaged = %s, want %s", got, Held)
	}
	if got := b.Admit("hub-c", "a", thousand); got != Admitted {
		t.Fatalf("Admit on another hub = %s, want %s", got, Admitted)
	}
	engaged := b.Engaged()
	if len(engaged) != 1 || engaged[0].Token() != "hub-b@2026-12-05T05:00:00Z" {
		t.Fatalf("Engaged = %+v, want hub-b's brake with token hub-b@2026-12-05T05:00:00Z", engaged)
	}
	if r, ok := b.Release("hub-b@2026-12-05T05:00:00Z"); !ok || len(r.Keys) != 1 || !r.Restored {
		t.Fatalf("Release = %+v %v, want the held key a of a restored brake", r, ok)
	}
	if engaged := b.Engaged(); len(engaged) != 0 {
		t.Errorf("brakes still engaged after the release: %+v", engaged)
	}
	// The release of a restored brake opens the hub: the deletes it held are asked for again as the hub is
	// compared, and admitted uncounted, until it is caught up.
	var got []Verdict
	for i := range 30 {
		got = append(got, b.Admit("hub-b", fmt.Sprint("k", i), thousand))
	}
	if slices.ContainsFunc(got, func(v Verdict) bool { return v != Admitted }) {
		t.Errorf("after the release of a restored brake, verdicts %v, want every delete admitted until the hub is caught up", got)
	}
	b.CaughtUp("hub-b")
	got = nil
	for i := range 101 {
		got = append(got, b.Admit("hub-b", fmt.Sprint("m", i), thousand))
	}
	if got[99] != Admitted || got[100] != Engaged {
		t.Errorf("once caught up, the 100th delete %s and the 101st %s; want counted again: Admitted, then Engaged (100 allowed of 1000)", got[99], got[100])
	}
}

// TestTokensNeverRepeat: a brake that engages again in the second of its release gets a new token, and the old
// token (which may stay in the annotation) does not release it.
func TestTokensNeverRepeat(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(start)
	b := New[string](Limits{Percent: 1, Minimum: 0, Window: time.Minute}, clk, nil)
	none := func() int { return 0 }
	if got := b.Admit("hub-b", "a", none); got != Engaged {
		t.Fatalf("first delete with minimum 0 and no objects: %s, want %s", got, Engaged)
	}
	first := b.Engaged()[0].Token()
	if _, ok := b.Release(first); !ok {
		t.Fatalf("release of %s failed", first)
	}
	clk.SetTime(start.Add(300 * time.Millisecond))
	if got := b.Admit("hub-b", "b", none); got != Engaged {
		t.Fatalf("next delete: %s, want %s", got, Engaged)
	}
	second := b.Engaged()[0].Token()
	if second == first {
		t.Fatalf("two engagements share the token %s", first)
	}
	if _, ok := b.Release(first); ok {
		t.Errorf("the first token released the second engagement")
	}
}

// TestReleasedDeletesExpire: a released delete its sync never asked for again is not admitted uncounted after the
// window.
func TestReleasedDeletesExpire(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(start)
	b := New[string](Limits{Percent: 1, Minimum: 1, Window: time.Minute}, clk, nil)
	none := func() int { return 0 }
	b.Admit("hub-b", "a", none)
	if got := b.Admit("hub-b", "b", none); got != Engaged {
		t.Fatalf("second delete: %s, want %s", got, Engaged)
	}
	b.Release(b.Engaged()[0].Token())
	clk.SetTime(start.Add(2 * time.Minute))
	b.Admit("hub-b", "c", none)
	if got := b.Admit("hub-b", "b", none); got != Engaged {
		t.Errorf("a released delete asked for after the window: %s, want it counted (%s)", got, Engaged)
	}
}
