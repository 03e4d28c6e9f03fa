package clientcert_test

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

// TestBootstrapBackoff walks the rules of BootstrapBackoff: a step acts on hub-a at the clock's time, then the
// state of hub-a must be (failures, wait before the next CSR).
func TestBootstrapBackoff(t *testing.T) {
	type step struct {
		advance time.Duration
		do      string // created, contested, inuse, abandoned, none
		// want: failures and the wait from now until NotBefore (0 when a CSR may be sent now).
		failures int
		wait     time.Duration
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{name: "first join is not delayed; credentials in use for 20 m reset", steps: []step{
			{do: "none", failures: 0, wait: 0},
			{do: "created", failures: 1, wait: 30 * time.Second},
			{advance: 5 * time.Second, do: "inuse", failures: 1, wait: 25 * time.Second},
			{advance: 20 * time.Minute, do: "inuse", failures: 0, wait: 0},
			{do: "created", failures: 1, wait: 30 * time.Second},
		}},
		{name: "a bootstrap whose credentials were not in use for 20 m counts one failure", steps: []step{
			{do: "created", failures: 1, wait: 30 * time.Second},
			{advance: 30 * time.Second, do: "inuse", failures: 1, wait: 0},
			{advance: 10 * time.Minute, do: "created", failures: 2, wait: time.Minute},
			{advance: time.Minute, do: "created", failures: 3, wait: 2 * time.Minute},
			{advance: 2 * time.Minute, do: "inuse", failures: 3, wait: 0},
			{advance: 20 * time.Minute, do: "inuse", failures: 0, wait: 0},
		}},
		{name: "takeovers grow the wait up to the cap", steps: []step{
			{do: "created", failures: 1, wait: 30 * time.Second},
			{do: "contested", failures: 1, wait: 30 * time.Second},
			// The bootstrap after a takeover is pending again: the next one waits one step more.
			{advance: 30 * time.Second, do: "created", failures: 2, wait: time.Minute},
			{do: "inuse", failures: 2, wait: time.Minute},
			{do: "contested", failures: 2, wait: time.Minute},
			{do: "contested", failures: 3, wait: 2 * time.Minute},
			{do: "contested", failures: 4, wait: 4 * time.Minute},
			{do: "contested", failures: 5, wait: 8 * time.Minute},
			{do: "contested", failures: 6, wait: 16 * time.Minute},
			{do: "contested", failures: 7, wait: 20 * time.Minute},
			{do: "contested", failures: 8, wait: 20 * time.Minute},
			{advance: 5 * time.Minute, do: "none", failures: 8, wait: 15 * time.Minute},
		}},
		{name: "credentials in use do not reset within the quiet period after a takeover", steps: []step{
			{do: "contested", failures: 1, wait: 30 * time.Second},
			{advance: 59 * time.Minute, do: "inuse", failures: 1, wait: 0},
			{do: "contested", failures: 2, wait: time.Minute},
			{advance: time.Hour, do: "inuse", failures: 0, wait: 0},
			{do: "created", failures: 1, wait: 30 * time.Second},
		}},
		{name: "a bootstrap abandoned by a switch does not count", steps: []step{
			{do: "created", failures: 1, wait: 30 * time.Second},
			{advance: 30 * time.Second, do: "abandoned", failures: 0, wait: 0},
			{do: "created", failures: 1, wait: 30 * time.Second},
			{advance: 10 * time.Second, do: "created", failures: 2, wait: time.Minute},
			{do: "abandoned", failures: 1, wait: 30 * time.Second},
		}},
		{name: "a hub left alone for the quiet period is fresh", steps: []step{
			{do: "created", failures: 1, wait: 30 * time.Second},
			{do: "created", failures: 2, wait: time.Minute},
			{do: "created", failures: 3, wait: 2 * time.Minute},
			{do: "contested", failures: 3, wait: 2 * time.Minute},
			{advance: 59 * time.Minute, do: "none", failures: 3, wait: 0},
			{advance: time.Minute, do: "none", failures: 0, wait: 0},
			{do: "created", failures: 1, wait: 30 * time.Second},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(testNow)
			b := clientcert.NewBootstrapBackoff(clientcert.BootstrapBackoffOptions{Clock: clk})
			for i, s := range tc.steps {
				clk.SetTime(clk.Now().Add(s.advance))
				switch s.do {
				case "created":
					b.CSRCreated("hub-a")
				case "contested":
					b.Contested("hub-a")
				case "inuse":
					b.InUse("hub-a")
				case "abandoned":
					b.Abandoned("hub-a")
				}
				st := b.State("hub-a")
				wait := time.Duration(0)
				if !st.NotBefore.IsZero() {
					wait = st.NotBefore.Sub(clk.Now())
				}
				if st.Failures != s.failures || wait != s.wait {
					t.Fatalf("step %d (%s after %s): failures %d, wait %s; want %d, %s", i, s.do, s.advance, st.Failures, wait, s.failures, s.wait)
				}
			}
			if st := b.State("hub-b"); st.Failures != 0 || !st.NotBefore.IsZero() {
				t.Errorf("hub-b shares hub-a's back-off: %+v", st)
			}
		})
	}
}

// TestBootstrapBackoffWritten: RecordWritten remembers certificates by content (the last 16), Wrote recognises
// them and nothing else.
func TestBootstrapBackoffWritten(t *testing.T) {
	ca := mustCA(t, "client-ca")
	b := clientcert.NewBootstrapBackoff(clientcert.BootstrapBackoffOptions{})
	var certs [][]byte
	for i := range 17 {
		cert, _, err := ca.IssueClientCert(testCluster, fmt.Sprintf("agent-%d", i), testNow.Add(-time.Hour), testNow.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		certs = append(certs, cert)
		b.RecordWritten(cert)
	}
	if b.Wrote(certs[0]) {
		t.Error("the oldest of 17 certificates is still remembered; want the last 16 only")
	}
	for i := 1; i < 17; i++ {
		if !b.Wrote(certs[i]) {
			t.Errorf("certificate %d not recognised", i)
		}
	}
	other, _, err := ca.IssueClientCert(testCluster, "another-agent", testNow.Add(-time.Hour), testNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if b.Wrote(other) || b.Wrote(nil) || b.Wrote([]byte("not PEM")) {
		t.Error("Wrote recognises a certificate that was never recorded")
	}
}

// TestBootstrapBackoffBoundsCSRsPerHour: another writer undoes every bootstrap 10 s after its credentials were
// first used, for three hours, by taking the Secret over or by deleting it. The first hour sees at most 8
// bootstrap CSRs (1 + the growing waits), every later hour at most 3 (the 20 m cap); a process restarted every
// 10 minutes, restoring its records, does no better.
func TestBootstrapBackoffBoundsCSRsPerHour(t *testing.T) {
	for _, tc := range []struct {
		restartEvery time.Duration
		takeover     bool
	}{{0, true}, {10 * time.Minute, true}, {0, false}, {10 * time.Minute, false}} {
		restartEvery := tc.restartEvery
		t.Run(fmt.Sprintf("restart every %s, takeover %t", restartEvery, tc.takeover), func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(testNow)
			newBackoff := func() *clientcert.BootstrapBackoff {
				return clientcert.NewBootstrapBackoff(clientcert.BootstrapBackoffOptions{Clock: clk})
			}
			b := newBackoff()
			perHour := make([]int, 3)
			lastRestart := testNow
			for now := testNow; now.Before(testNow.Add(3 * time.Hour)); now = now.Add(time.Second) {
				clk.SetTime(now)
				if restartEvery > 0 && now.Sub(lastRestart) >= restartEvery {
					store := &memoryStore{records: b.Snapshot()}
					b, lastRestart = newBackoff(), now
					if err := b.Restore(context.Background(), store); err != nil {
						t.Fatal(err)
					}
				}
				if st := b.State("hub-a"); !st.NotBefore.IsZero() {
					continue
				}
				// A bootstrap: CSR, credentials in use 5 s later, undone 10 s after that.
				b.CSRCreated("hub-a")
				perHour[now.Sub(testNow)/time.Hour]++
				clk.SetTime(now.Add(5 * time.Second))
				b.InUse("hub-a")
				now = now.Add(15 * time.Second)
				clk.SetTime(now)
				if tc.takeover {
					b.Contested("hub-a")
				} // else the Secret is deleted: nothing is reported, the next bootstrap counts it

			}
			t.Logf("bootstrap CSRs per hour: %v", perHour)
			if perHour[0] > 8 || perHour[1] > 3 || perHour[2] > 3 {
				t.Errorf("bootstrap CSRs per hour %v; want at most 8 in the first hour, 3 in each later one", perHour)
			}
		})
	}
}

// memoryStore is a BootstrapBackoffStore in memory.
type memoryStore struct {
	mu      sync.Mutex
	records map[string]clientcert.BootstrapRecord
	saves   int
}

func (m *memoryStore) Load(context.Context) (map[string]clientcert.BootstrapRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.records), nil
}

func (m *memoryStore) Save(_ context.Context, records map[string]clientcert.BootstrapRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.records == nil {
		m.records = map[string]clientcert.BootstrapRecord{}
	}
	maps.Copy(m.records, records)
	m.saves++
	return nil
}

func (m *memoryStore) get(key string) (clientcert.BootstrapRecord, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.records[key]
	return r, ok
}

// TestBootstrapBackoffPersistAndRestore: Persist saves what changed; a new process restoring from the store has
// the same back-off, and a record it already has is not overwritten by the store.
func TestBootstrapBackoffPersistAndRestore(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(testNow)
	b := clientcert.NewBootstrapBackoff(clientcert.BootstrapBackoffOptions{Clock: clk})
	store := &memoryStore{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Persist(ctx, store, time.Millisecond)
	b.CSRCreated("hub-a")
	b.Contested("hub-a")
	b.Contested("hub-a")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if r, ok := store.get("hub-a"); ok && r.Failures == 2 && r.ContestedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Persist did not save hub-a's record with 2 failures: %+v", store.records)
		}
		time.Sleep(time.Millisecond)
	}

	restarted := clientcert.NewBootstrapBackoff(clientcert.BootstrapBackoffOptions{Clock: clk})
	restarted.CSRCreated("hub-b") // state of its own before Restore
	if err := restarted.Restore(ctx, &memoryStore{records: map[string]clientcert.BootstrapRecord{
		"hub-a": b.Snapshot()["hub-a"], "hub-b": {Failures: 9, Last: metav1.NewTime(testNow)}}}); err != nil {
		t.Fatal(err)
	}
	if got, want := restarted.State("hub-a"), b.State("hub-a"); got.Failures != want.Failures || !got.NotBefore.Equal(want.NotBefore) ||
		!got.ContestedAt.Equal(want.ContestedAt) {
		t.Errorf("restored state %+v, want %+v", got, want)
	}
	if got := restarted.State("hub-b"); got.Failures != 1 { // its own pending CSR, not the stored 9
		t.Errorf("Restore overwrote a record the process already had: %+v", got)
	}
}
