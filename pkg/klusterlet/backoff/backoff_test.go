package backoff

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func TestBackoffDelay(t *testing.T) {
	cases := []struct {
		name  string
		curve Backoff
		want  []time.Duration // Delay(1), Delay(2), …
	}{
		{
			name:  "doubles up to the cap",
			curve: Backoff{Base: 10 * time.Second, Max: time.Minute},
			want:  []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute, time.Minute},
		},
		{
			name:  "a cap that is not a power-of-two multiple is reached exactly",
			curve: Backoff{Base: 3 * time.Second, Max: 10 * time.Second},
			want:  []time.Duration{3 * time.Second, 6 * time.Second, 10 * time.Second, 10 * time.Second},
		},
		{
			name:  "the default curve",
			curve: Default,
			want: []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second,
				5 * time.Minute, 5 * time.Minute},
		},
		{
			name:  "the bootstrap curve",
			curve: Backoff{Base: 30 * time.Second, Max: 20 * time.Minute},
			want: []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
				16 * time.Minute, 20 * time.Minute},
		},
		{
			name:  "a cap equal to the base",
			curve: Backoff{Base: time.Minute, Max: time.Minute},
			want:  []time.Duration{time.Minute, time.Minute},
		},
		{
			name:  "an unnormalised cap below the base caps",
			curve: Backoff{Base: time.Minute, Max: time.Second},
			want:  []time.Duration{time.Second, time.Second},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []time.Duration
			for n := 1; n <= len(tc.want); n++ {
				got = append(got, tc.curve.Delay(n))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Delay(1..%d) (-want +got):\n%s", len(tc.want), diff)
			}
		})
	}
}

func TestBackoffDelayEdges(t *testing.T) {
	b := Backoff{Base: 10 * time.Second, Max: time.Minute}
	for _, n := range []int{0, -3} {
		if got := b.Delay(n); got != 10*time.Second {
			t.Errorf("Delay(%d) = %v, want the base 10s", n, got)
		}
	}
	if got := b.Delay(math.MaxInt); got != time.Minute {
		t.Errorf("Delay(MaxInt) = %v, want the cap 1m", got)
	}
	huge := Backoff{Base: time.Hour, Max: time.Duration(math.MaxInt64)}
	if got := huge.Delay(100); got != huge.Max {
		t.Errorf("Delay(100) with a cap of MaxInt64 = %v, want the cap (no overflow)", got)
	}
}

func TestBackoffWithDefaults(t *testing.T) {
	defaults := Backoff{Base: 30 * time.Second, Max: 20 * time.Minute}
	cases := []struct {
		name string
		in   Backoff
		want Backoff
	}{
		{name: "zero takes both defaults", in: Backoff{}, want: defaults},
		{name: "negative fields take the defaults", in: Backoff{Base: -time.Second, Max: -time.Second}, want: defaults},
		{name: "set fields are kept", in: Backoff{Base: time.Second, Max: time.Minute}, want: Backoff{Base: time.Second, Max: time.Minute}},
		{name: "a zero base only", in: Backoff{Max: time.Hour}, want: Backoff{Base: 30 * time.Second, Max: time.Hour}},
		{name: "a zero cap only", in: Backoff{Base: time.Second}, want: Backoff{Base: time.Second, Max: 20 * time.Minute}},
		{name: "a cap below the base is raised to the base", in: Backoff{Base: time.Minute, Max: time.Second}, want: Backoff{Base: time.Minute, Max: time.Minute}},
		{name: "a default cap below a set base is raised to the base", in: Backoff{Base: time.Hour}, want: Backoff{Base: time.Hour, Max: time.Hour}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.WithDefaults(defaults); got != tc.want {
				t.Errorf("%+v.WithDefaults(%+v) = %+v, want %+v", tc.in, defaults, got, tc.want)
			}
		})
	}
}

func TestTimerNext(t *testing.T) {
	cases := []struct {
		name  string
		curve Backoff
		calls int
		want  []time.Duration
	}{
		{
			name:  "doubles up to the cap",
			curve: Backoff{Base: 10 * time.Second, Max: time.Minute}, calls: 6,
			want: []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute, time.Minute},
		},
		{
			name:  "a cap that is not a power-of-two multiple is reached exactly",
			curve: Backoff{Base: 3 * time.Second, Max: 10 * time.Second}, calls: 4,
			want: []time.Duration{3 * time.Second, 6 * time.Second, 10 * time.Second, 10 * time.Second},
		},
		{
			name:  "a zero curve is the default and never busy-loops",
			curve: Backoff{}, calls: 7,
			want: []time.Duration{DefaultBase, 2 * DefaultBase, 4 * DefaultBase, 8 * DefaultBase, 16 * DefaultBase, DefaultMax, DefaultMax},
		},
		{
			name:  "a cap below the base is raised to the base",
			curve: Backoff{Base: time.Minute, Max: time.Second}, calls: 3,
			want: []time.Duration{time.Minute, time.Minute, time.Minute},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			timer := NewTimer(tc.curve, clocktesting.NewFakePassiveClock(t0))
			var got []time.Duration
			for range tc.calls {
				got = append(got, timer.Next())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("delays (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTimerRemainingAndReset(t *testing.T) {
	fakeClock := clocktesting.NewFakePassiveClock(t0)
	timer := NewTimer(Backoff{Base: 10 * time.Second, Max: time.Minute}, fakeClock)

	if d := timer.Remaining(); d != 0 {
		t.Fatalf("Remaining() before any failure = %v, want 0", d)
	}
	timer.Next() // 10s
	fakeClock.SetTime(t0.Add(4 * time.Second))
	if d := timer.Remaining(); d != 6*time.Second {
		t.Errorf("Remaining() 4s after a 10s delay = %v, want 6s", d)
	}
	fakeClock.SetTime(t0.Add(10 * time.Second))
	if d := timer.Remaining(); d != 0 {
		t.Errorf("Remaining() when the delay is over = %v, want 0", d)
	}
	if d := timer.Next(); d != 20*time.Second {
		t.Errorf("second Next() = %v, want 20s", d)
	}
	if d := timer.Remaining(); d != 20*time.Second {
		t.Errorf("Remaining() right after the second Next() = %v, want 20s (counted from that failure)", d)
	}
	timer.Reset()
	if d := timer.Remaining(); d != 0 {
		t.Errorf("Remaining() after Reset = %v, want 0", d)
	}
	if d := timer.Next(); d != 10*time.Second {
		t.Errorf("Next() after Reset = %v, want the base 10s", d)
	}
}
