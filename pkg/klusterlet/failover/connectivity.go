package failover

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/utils/clock"
)

// HubConnectivityTracker records, at the transport level, how the active hub answers the agent's requests. Wrap
// every client of the active hub with WrapTransport (rest.Config.Wrap(tracker.WrapTransport)): the main
// controllers' clients and, while bootstrapping, the bootstrap client, since both talk to the active hub.
// Evaluate reads a ConnectivitySnapshot of it. It is safe for concurrent use.
//
// Classification of one round trip:
//   - transport error (no HTTP response): recorded as LastError; nothing else changes. Errors of requests whose
//     context was canceled by the caller (context.Canceled, e.g. a controller stopping) are ignored, since they
//     say nothing about the hub; deadlines (context.DeadlineExceeded) are hub failures and are recorded.
//   - any HTTP response: LastResponse and LastResponseCode.
//   - success: status < 500 and not 401/403, i.e. 2xx, 3xx, 404, 409 and other 4xx (including 429, which an API
//     server only sends after authenticating the caller): LastSuccess, and the 401/403 run ends.
//   - 401 or 403: starts the 401/403 run (UnauthorizedSince) if none is running, and sets LastUnauthorized.
//   - 5xx: counts as an answer only; the hub is alive but not serving, which is not a success.
//
// Times come from the injected clock, read when the round trip returns.
type HubConnectivityTracker struct {
	clock clock.PassiveClock

	lock sync.Mutex
	// generation increments on Reset; round trips that started in an older generation are not recorded, so an
	// in-flight request to the previous hub cannot count for the new one.
	generation uint64
	snapshot   ConnectivitySnapshot
	// lastErr is the error behind snapshot.LastError, for classification (LastTransportError).
	lastErr error
	// onTransition, if set, is called (without the lock) when the latest outcome changes between failure and
	// answer, or a 401/403 run starts (SetOnTransition).
	onTransition func()
}

// ConnectivitySnapshot is a copy of what a HubConnectivityTracker recorded. Zero times mean "never since
// TrackingSince".
type ConnectivitySnapshot struct {
	// TrackingSince is when tracking of the current hub began (construction or the last Reset). Evaluate
	// measures the connection timeout from it when no request has succeeded yet.
	TrackingSince time.Time
	// LastResponse is when the hub last answered with any HTTP status.
	LastResponse time.Time
	// LastResponseCode is the HTTP status code of that answer, 0 if none.
	LastResponseCode int
	// LastSuccess is when the hub last answered with a success (see HubConnectivityTracker).
	LastSuccess time.Time
	// UnauthorizedSince is the start of the current run of 401/403 answers; zero when no run is ongoing. A
	// success ends the run; transport errors and 5xx answers do not.
	UnauthorizedSince time.Time
	// LastUnauthorized is when the hub last answered 401 or 403. Such an answer proves the hub is there, so
	// Evaluate judges it by the rejection grace period rather than as a lost hub.
	LastUnauthorized time.Time
	// LastError is the message of the last transport error (no HTTP response), e.g. a *url.Error text
	// naming the method, URL and cause. Empty if none.
	LastError string
	// LastErrorTime is when LastError happened.
	LastErrorTime time.Time
}

// NewHubConnectivityTracker returns a tracker whose TrackingSince is clock.Now().
func NewHubConnectivityTracker(clock clock.PassiveClock) *HubConnectivityTracker {
	return &HubConnectivityTracker{
		clock:    clock,
		snapshot: ConnectivitySnapshot{TrackingSince: clock.Now()},
	}
}

// WrapTransport returns rt wrapped so that every round trip is recorded. Its signature matches
// k8s.io/client-go/transport.WrapperFunc, so it can be passed to rest.Config.Wrap. The returned RoundTripper
// implements k8s.io/apimachinery/pkg/util/net.RoundTripperWrapper.
func (t *HubConnectivityTracker) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	return &trackingRoundTripper{tracker: t, delegate: rt}
}

// wrapTransportSwitchable is WrapTransport recording, while answersOnly is set, only the hub's answers (any HTTP
// status), not round trips that got none: for requests another one backs up (the heartbeat on its kept
// connection), whose failure alone is no evidence against the hub.
func (t *HubConnectivityTracker) wrapTransportSwitchable(answersOnly *atomic.Bool) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return &trackingRoundTripper{tracker: t, delegate: rt, answersOnly: answersOnly}
	}
}

// Reset forgets everything recorded and starts tracking anew at now. Call it when the agent starts on a new hub
// (after a switch) so that the new hub is not judged by the old one's history. Round trips that are in flight
// during Reset are not recorded when they complete.
func (t *HubConnectivityTracker) Reset(now time.Time) {
	t.lock.Lock()
	defer t.lock.Unlock()
	t.generation++
	t.snapshot = ConnectivitySnapshot{TrackingSince: now}
	t.lastErr = nil
}

// SetOnTransition registers f, called after a round trip whose outcome changes the picture: the first failure
// after an answer, the first answer after a failure, or the start of a 401/403 run. The hub monitor uses it to
// re-evaluate at once instead of at its next deadline. f must not block.
func (t *HubConnectivityTracker) SetOnTransition(f func()) {
	t.lock.Lock()
	defer t.lock.Unlock()
	t.onTransition = f
}

// LastTransportError returns the error of the last round trip that got no HTTP response since tracking began,
// nil if none; callers classify it (e.g. clientcert.ClassifyConnectionError) to name a TLS or proxy problem.
func (t *HubConnectivityTracker) LastTransportError() error {
	t.lock.Lock()
	defer t.lock.Unlock()
	return t.lastErr
}

// Snapshot returns a copy of the recorded state.
func (t *HubConnectivityTracker) Snapshot() ConnectivitySnapshot {
	t.lock.Lock()
	defer t.lock.Unlock()
	return t.snapshot
}

func (t *HubConnectivityTracker) currentGeneration() uint64 {
	t.lock.Lock()
	defer t.lock.Unlock()
	return t.generation
}

// record applies the outcome of one round trip that started in generation gen.
func (t *HubConnectivityTracker) record(gen uint64, req *http.Request, resp *http.Response, err error) {
	if err != nil && errors.Is(err, context.Canceled) && req.Context().Err() != nil {
		// The caller gave up (e.g. its controller is stopping); the hub is not to blame.
		return
	}
	now := t.clock.Now()

	t.lock.Lock()
	if gen != t.generation {
		t.lock.Unlock()
		return
	}
	s := &t.snapshot
	failedBefore, unauthorizedBefore := lastRequestFailed(*s), !s.UnauthorizedSince.IsZero()
	t.recordLocked(s, resp, err, now)
	notify := t.onTransition
	changed := failedBefore != lastRequestFailed(*s) || (!unauthorizedBefore && !s.UnauthorizedSince.IsZero())
	t.lock.Unlock()
	if changed && notify != nil {
		notify()
	}
}

// recordLocked applies one outcome to s; the caller holds the lock.
func (t *HubConnectivityTracker) recordLocked(s *ConnectivitySnapshot, resp *http.Response, err error, now time.Time) {
	if err != nil || resp == nil {
		if err != nil {
			s.LastError = err.Error()
		} else {
			s.LastError = "no response and no error from the transport"
		}
		s.LastErrorTime = now
		t.lastErr = err
		return
	}
	s.LastResponse = now
	s.LastResponseCode = resp.StatusCode
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		if s.UnauthorizedSince.IsZero() {
			s.UnauthorizedSince = now
		}
		s.LastUnauthorized = now
	case resp.StatusCode >= http.StatusInternalServerError:
		// The hub answered but is not serving; neither a success nor a rejection.
	default:
		s.LastSuccess = now
		s.UnauthorizedSince = time.Time{}
	}
}

// trackingRoundTripper is the RoundTripper returned by WrapTransport.
type trackingRoundTripper struct {
	tracker  *HubConnectivityTracker
	delegate http.RoundTripper
	// answersOnly, when set and true, leaves round trips without an HTTP response unrecorded
	// (wrapTransportSwitchable).
	answersOnly *atomic.Bool
}

var _ utilnet.RoundTripperWrapper = &trackingRoundTripper{}

// RoundTrip delegates the request and records its outcome.
func (rt *trackingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	gen := rt.tracker.currentGeneration()
	resp, err := rt.delegate.RoundTrip(req)
	if rt.answersOnly == nil || !rt.answersOnly.Load() || (err == nil && resp != nil) {
		rt.tracker.record(gen, req, resp, err)
	}
	return resp, err
}

// WrappedRoundTripper returns the wrapped RoundTripper, so client-go can reach the underlying transport.
func (rt *trackingRoundTripper) WrappedRoundTripper() http.RoundTripper {
	return rt.delegate
}
