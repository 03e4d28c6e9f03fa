// Package backoff is the one back-off of the agent: the delay before the next attempt after a run of failed
// ones. Backoff is the curve (a value, safe to copy); Timer applies a Backoff to one run of attempts and
// remembers when the next may start.
//
// Users: the certificate controllers space failed CSRs with Backoff.Delay (clientcert, add-on registration);
// the bootstrap back-off of clientcert spaces bootstrap CSRs to a hub with it; the failover orchestrator spaces
// its attempts while no hub is viable with a Timer.
//
// There is no jitter: delays are exact, so tests and the times reported in events are exact. Neither of
// client-go's back-offs fits: wait.Backoff's Step multiplies in float64 and, with a cap near the int64 limit,
// returns a negative delay instead of the cap (Delay never overflows); flowcontrol.Backoff offers no "time left"
// (Timer.Remaining) and, by default, restarts its curve after twice the cap without a failure.
package backoff

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

const (
	// DefaultBase is the first delay of Default: 10 s.
	DefaultBase = 10 * time.Second
	// DefaultMax is the cap of Default: 5 min.
	DefaultMax = 5 * time.Minute
)

// Default is the curve used where nothing else is configured: 10 s, 20 s, 40 s, … capped at 5 min.
var Default = Backoff{Base: DefaultBase, Max: DefaultMax}

// Backoff is a doubling delay curve, in time.Duration units. Its rules:
//  1. After n consecutive failures (n >= 1) the next attempt waits Base·2^(n-1), capped at Max
//     (Delay(1) = Base, Delay(2) = 2·Base, …).
//  2. The cap is reached exactly, also when Max is not a power-of-two multiple of Base
//     (Base 3s, Max 10s: 3s, 6s, 10s, 10s).
//  3. n < 1 is taken as 1.
//
// Use WithDefaults to fill zero fields; Delay on an unnormalised curve with Max < Base returns Max.
type Backoff struct {
	// Base is the delay after the first failure; > 0 once normalised.
	Base time.Duration
	// Max caps every delay; >= Base once normalised.
	Max time.Duration
}

// WithDefaults returns b with a non-positive Base replaced by defaults.Base (a zero delay would be a busy loop),
// a non-positive Max replaced by defaults.Max, and a Max below the Base raised to the Base.
func (b Backoff) WithDefaults(defaults Backoff) Backoff {
	if b.Base <= 0 {
		b.Base = defaults.Base
	}
	if b.Max <= 0 {
		b.Max = defaults.Max
	}
	b.Max = max(b.Max, b.Base)
	return b
}

// Delay returns the delay after failures consecutive failures (rule 1); it never overflows.
func (b Backoff) Delay(failures int) time.Duration {
	d := b.Base
	for i := 1; i < failures && d < b.Max; i++ {
		if d > b.Max/2 {
			d = b.Max
		} else {
			d *= 2
		}
	}
	return min(d, b.Max)
}

// Timer applies a Backoff to one run of attempts: each failure (Next) counts, and the next attempt is not
// allowed before the failure time plus Delay(failures). It is safe for concurrent use.
//
// Usage in a sync: if d := t.Remaining(); d > 0 { requeue after d; return } — so that syncs triggered by
// informer events cannot bypass the delay — then attempt; on failure requeue after t.Next(); on success
// t.Reset().
type Timer struct {
	curve Backoff
	clock clock.PassiveClock

	lock      sync.Mutex
	failures  int
	notBefore time.Time
}

// NewTimer returns a Timer on curve, normalised with WithDefaults(Default), reading now from clock.
func NewTimer(curve Backoff, clock clock.PassiveClock) *Timer {
	return &Timer{curve: curve.WithDefaults(Default), clock: clock}
}

// Next records a failed attempt now and returns the delay before the next one: Delay(1) after the first
// failure since the last Reset, Delay(2) after the second, and so on.
func (t *Timer) Next() time.Duration {
	t.lock.Lock()
	defer t.lock.Unlock()
	if t.failures < 64 {
		t.failures++
	}
	d := t.curve.Delay(t.failures)
	t.notBefore = t.clock.Now().Add(d)
	return d
}

// Remaining returns how long until the next attempt is allowed; 0 when it is allowed now.
func (t *Timer) Remaining() time.Duration {
	t.lock.Lock()
	defer t.lock.Unlock()
	if d := t.notBefore.Sub(t.clock.Now()); d > 0 {
		return d
	}
	return 0
}

// Reset forgets the failures and allows an attempt at once; call it after a success.
func (t *Timer) Reset() {
	t.lock.Lock()
	defer t.lock.Unlock()
	t.failures = 0
	t.notBefore = time.Time{}
}
