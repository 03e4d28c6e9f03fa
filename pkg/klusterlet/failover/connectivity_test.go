package failover

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }

// statusServer answers /code/<n> with HTTP status n.
func statusServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/code/"))
		if err != nil {
			code = http.StatusOK
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// closedServerURL returns the URL of a server that no longer listens (connection refused).
func closedServerURL(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	return u
}

type trackerStep struct {
	at int // seconds after t0
	// code is the status the server answers; 0 with refused=true means a transport error.
	code     int
	refused  bool
	canceled bool // the caller cancels the request before it is sent
	expired  bool // the request's deadline has passed before it is sent
}

func TestHubConnectivityTracker(t *testing.T) {
	srv := statusServer(t)
	deadURL := closedServerURL(t)

	cases := []struct {
		name  string
		steps []trackerStep
		want  ConnectivitySnapshot
		// wantErrorContains is checked against LastError, which is then cleared before the diff.
		wantErrorContains string
	}{
		{
			name: "nothing recorded",
			want: ConnectivitySnapshot{TrackingSince: t0},
		},
		{
			name:  "2xx is an answer and a success",
			steps: []trackerStep{{at: 1, code: 200}},
			want:  ConnectivitySnapshot{TrackingSince: t0, LastResponse: at(1), LastResponseCode: 200, LastSuccess: at(1)},
		},
		{
			name:  "404, 409 and 429 are successes: the hub answered and authenticated",
			steps: []trackerStep{{at: 1, code: 404}, {at: 2, code: 409}, {at: 3, code: 429}},
			want:  ConnectivitySnapshot{TrackingSince: t0, LastResponse: at(3), LastResponseCode: 429, LastSuccess: at(3)},
		},
		{
			name:  "304 is a success",
			steps: []trackerStep{{at: 1, code: 304}},
			want:  ConnectivitySnapshot{TrackingSince: t0, LastResponse: at(1), LastResponseCode: 304, LastSuccess: at(1)},
		},
		{
			name:  "5xx is an answer but not a success",
			steps: []trackerStep{{at: 1, code: 200}, {at: 2, code: 503}, {at: 3, code: 500}},
			want:  ConnectivitySnapshot{TrackingSince: t0, LastResponse: at(3), LastResponseCode: 500, LastSuccess: at(1)},
		},
		{
			name:  "401 starts a run that 403 continues",
			steps: []trackerStep{{at: 1, code: 200}, {at: 2, code: 401}, {at: 3, code: 403}},
			want: ConnectivitySnapshot{TrackingSince: t0, LastResponse: at(3), LastResponseCode: 403, LastSuccess: at(1),
				UnauthorizedSince: at(2), LastUnauthorized: at(3)},
		},
		{
			name:  "a success ends the 401/403 run",
			steps: []trackerStep{{at: 1, code: 403}, {at: 2, code: 200}, {at: 3, code: 401}},
			want: ConnectivitySnapshot{TrackingSince: t0, LastResponse: at(3), LastResponseCode: 401, LastSuccess: at(2),
				UnauthorizedSince: at(3), LastUnauthorized: at(3)},
		},
		{
			name:  "5xx does not end the 401/403 run",
			steps: []trackerStep{{at: 1, code: 401}, {at: 2, code: 503}},
			want: ConnectivitySnapshot{TrackingSince: t0, LastResponse: at(2), LastResponseCode: 503,
				UnauthorizedSince: at(1), LastUnauthorized: at(1)},
		},
		{
			name:  "a transport error is not an answer and does not end the 401/403 run",
			steps: []trackerStep{{at: 1, code: 401}, {at: 2, refused: true}},
			want: ConnectivitySnapshot{TrackingSince: t0, LastResponse: at(1), LastResponseCode: 401,
				UnauthorizedSince: at(1), LastUnauthorized: at(1), LastErrorTime: at(2)},
			wantErrorContains: "connection refused",
		},
		{
			name:  "a transport error after a success keeps the success",
			steps: []trackerStep{{at: 1, code: 200}, {at: 5, refused: true}},
			want: ConnectivitySnapshot{TrackingSince: t0, LastResponse: at(1), LastResponseCode: 200, LastSuccess: at(1),
				LastErrorTime: at(5)},
			wantErrorContains: "connection refused",
		},
		{
			name:  "a request canceled by the caller is ignored",
			steps: []trackerStep{{at: 1, code: 200}, {at: 2, canceled: true}},
			want:  ConnectivitySnapshot{TrackingSince: t0, LastResponse: at(1), LastResponseCode: 200, LastSuccess: at(1)},
		},
		{
			name:              "a request past its deadline is a failure",
			steps:             []trackerStep{{at: 2, expired: true}},
			want:              ConnectivitySnapshot{TrackingSince: t0, LastErrorTime: at(2)},
			wantErrorContains: "deadline exceeded",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fakeClock := clocktesting.NewFakePassiveClock(t0)
			tracker := NewHubConnectivityTracker(fakeClock)
			client := &http.Client{Transport: tracker.WrapTransport(&http.Transport{})}
			for _, step := range tc.steps {
				fakeClock.SetTime(at(step.at))
				url := srv.URL + "/code/" + strconv.Itoa(step.code)
				var withContext func(context.Context) context.Context
				switch {
				case step.refused:
					url = deadURL
				case step.canceled:
					withContext = func(ctx context.Context) context.Context {
						ctx, cancel := context.WithCancel(ctx)
						cancel()
						return ctx
					}
				case step.expired:
					withContext = func(ctx context.Context) context.Context {
						ctx, cancel := context.WithDeadline(ctx, time.Unix(0, 0))
						t.Cleanup(cancel)
						return ctx
					}
				}
				getWithContext(t, client, url, withContext)
			}
			got := tracker.Snapshot()
			if tc.wantErrorContains != "" && !strings.Contains(got.LastError, tc.wantErrorContains) {
				t.Errorf("LastError = %q, want it to contain %q", got.LastError, tc.wantErrorContains)
			}
			if tc.wantErrorContains == "" && got.LastError != "" {
				t.Errorf("unexpected LastError %q", got.LastError)
			}
			got.LastError = ""
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("snapshot (-want +got):\n%s", diff)
			}
		})
	}
}

// get sends a GET and drains the answer; errors are what the tracker records, so they are not reported here.
func get(t *testing.T, client *http.Client, url string) {
	t.Helper()
	getWithContext(t, client, url, nil)
}

// getWithContext is get with the request context derived from context.Background by withContext.
func getWithContext(t *testing.T, client *http.Client, url string, withContext func(context.Context) context.Context) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if withContext != nil {
		req = req.WithContext(withContext(req.Context()))
	}
	resp, err := client.Do(req)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
}

func TestHubConnectivityTrackerReset(t *testing.T) {
	srv := statusServer(t)
	fakeClock := clocktesting.NewFakePassiveClock(t0)
	tracker := NewHubConnectivityTracker(fakeClock)
	client := &http.Client{Transport: tracker.WrapTransport(&http.Transport{})}

	fakeClock.SetTime(at(1))
	get(t, client, srv.URL+"/code/200")
	fakeClock.SetTime(at(2))
	get(t, client, srv.URL+"/code/401")
	get(t, client, closedServerURL(t))
	if s := tracker.Snapshot(); s.LastSuccess.IsZero() || s.UnauthorizedSince.IsZero() || s.LastError == "" {
		t.Fatalf("precondition: expected recorded state, got %+v", s)
	}

	tracker.Reset(at(10))
	if diff := cmp.Diff(ConnectivitySnapshot{TrackingSince: at(10)}, tracker.Snapshot()); diff != "" {
		t.Errorf("after Reset (-want +got):\n%s", diff)
	}

	fakeClock.SetTime(at(11))
	get(t, client, srv.URL+"/code/200")
	want := ConnectivitySnapshot{TrackingSince: at(10), LastResponse: at(11), LastResponseCode: 200, LastSuccess: at(11)}
	if diff := cmp.Diff(want, tracker.Snapshot()); diff != "" {
		t.Errorf("after Reset and a success (-want +got):\n%s", diff)
	}
}

// A request to the old hub that completes after Reset must not count for the new hub.
func TestHubConnectivityTrackerIgnoresRequestsInFlightAcrossReset(t *testing.T) {
	arrived := make(chan struct{})
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()

	fakeClock := clocktesting.NewFakePassiveClock(t0)
	tracker := NewHubConnectivityTracker(fakeClock)
	client := &http.Client{Transport: tracker.WrapTransport(&http.Transport{})}

	done := make(chan struct{})
	go func() {
		defer close(done)
		get(t, client, srv.URL)
	}()
	<-arrived
	tracker.Reset(at(5))
	fakeClock.SetTime(at(6))
	close(release)
	<-done

	if diff := cmp.Diff(ConnectivitySnapshot{TrackingSince: at(5)}, tracker.Snapshot()); diff != "" {
		t.Errorf("in-flight request was recorded after Reset (-want +got):\n%s", diff)
	}
}

// The wrapper works as rest.Config.Wrap for client-go clients and exposes the wrapped transport.
func TestHubConnectivityTrackerAsRestConfigWrap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"major":"1","minor":"34","gitVersion":"v1.34.3"}`)
	}))
	defer srv.Close()

	fakeClock := clocktesting.NewFakePassiveClock(at(3))
	tracker := NewHubConnectivityTracker(fakeClock)
	config := &rest.Config{Host: srv.URL}
	config.Wrap(tracker.WrapTransport)
	client, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	fakeClock.SetTime(at(4))
	if _, err := client.ServerVersion(); err != nil {
		t.Fatalf("ServerVersion: %v", err)
	}
	want := ConnectivitySnapshot{TrackingSince: at(3), LastResponse: at(4), LastResponseCode: 200, LastSuccess: at(4)}
	if diff := cmp.Diff(want, tracker.Snapshot()); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}

	inner := &http.Transport{}
	wrapped, ok := tracker.WrapTransport(inner).(utilnet.RoundTripperWrapper)
	if !ok || wrapped.WrappedRoundTripper() != inner {
		t.Errorf("WrapTransport result does not expose the wrapped transport")
	}
}

// TestHubConnectivityTrackerTransitions checks SetOnTransition (called when the latest outcome flips between
// failure and answer, or a 401/403 run starts; not for repeats) and LastTransportError.
func TestHubConnectivityTrackerTransitions(t *testing.T) {
	srv := statusServer(t)
	deadURL := closedServerURL(t)
	fakeClock := clocktesting.NewFakePassiveClock(t0)
	tracker := NewHubConnectivityTracker(fakeClock)
	calls := 0
	tracker.SetOnTransition(func() { calls++ })
	client := &http.Client{Transport: tracker.WrapTransport(&http.Transport{})}

	steps := []struct {
		name      string
		url       string
		wantCalls int
		wantErr   bool
	}{
		{name: "first success", url: srv.URL + "/code/200", wantCalls: 0},
		{name: "success again", url: srv.URL + "/code/200", wantCalls: 0},
		{name: "first failure", url: deadURL, wantCalls: 1, wantErr: true},
		{name: "failure again", url: deadURL, wantCalls: 1, wantErr: true},
		{name: "answer after failure", url: srv.URL + "/code/404", wantCalls: 2, wantErr: true},
		{name: "401 run starts", url: srv.URL + "/code/401", wantCalls: 3, wantErr: true},
		{name: "401 run goes on", url: srv.URL + "/code/403", wantCalls: 3, wantErr: true},
	}
	for i, step := range steps {
		fakeClock.SetTime(at(i + 1))
		get(t, client, step.url)
		if calls != step.wantCalls {
			t.Errorf("%s: %d transition calls, want %d", step.name, calls, step.wantCalls)
		}
		if got := tracker.LastTransportError(); (got != nil) != step.wantErr {
			t.Errorf("%s: LastTransportError() = %v, want an error: %t", step.name, got, step.wantErr)
		}
	}
	tracker.Reset(at(20))
	if err := tracker.LastTransportError(); err != nil {
		t.Errorf("LastTransportError() after Reset = %v, want nil", err)
	}
}
