package clientcert

import (
	"context"
	"crypto/sha256"
	"encoding/pem"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/backoff"
)

// Defaults of BootstrapBackoff.
const (
	// DefaultBootstrapBackoffBase is the wait before the first bootstrap CSR that follows one that did not stick.
	DefaultBootstrapBackoffBase = 30 * time.Second
	// DefaultBootstrapBackoffMax caps the wait between bootstrap CSRs to one hub: at most three an hour once the
	// back-off has grown.
	DefaultBootstrapBackoffMax = 20 * time.Minute
	// DefaultContestQuietPeriod is how long a takeover of the hub kubeconfig Secret by another writer keeps the
	// back-off from being reset, and how long a hub's record lasts without a CSR or takeover. It is longer than
	// the cap, so that two writers taking turns never reset each other's back-off.
	DefaultContestQuietPeriod = time.Hour
	// maxWrittenCertificates bounds the certificates BootstrapBackoff remembers as written by this process.
	maxWrittenCertificates = 16
)

// BootstrapBackoff spaces the bootstrap CSRs one agent process sends to each hub, across hub sessions and
// bootstrap controllers, and remembers which client certificates the process wrote into the hub kubeconfig
// Secret. Every method is safe for concurrent use.
//
// Rules, per hub:
//  1. The first bootstrap CSR is not delayed (first join, a failover to a hub, a re-bootstrap after credentials
//     had been in use for ProvingPeriod).
//  2. A bootstrap CSR is pending until its credentials have been in use for ProvingPeriod (InUse: lease
//     renewals with them); a bootstrap CSR created while the previous one is pending counts one failure: that
//     bootstrap failed (denied, deleted, no valid certificate) or was undone (the Secret deleted, replaced) too
//     soon. A bootstrap cut short because the agent switched to another hub (Abandoned) does not count.
//  3. The Secret taken over by credentials this process did not write (Contested) counts one failure.
//  4. With n failures, plus one while a bootstrap is pending, the next bootstrap CSR waits Curve.Delay(n) after
//     the last CSR or takeover: 30 s, 1 m, 2 m, … up to 20 m with the defaults.
//  5. Credentials in use for ProvingPeriod reset the failures, unless the Secret was contested less than
//     QuietPeriod ago: two writers that keep replacing each other's credentials both stay backed off.
//  6. A record with no CSR and no takeover for QuietPeriod is forgotten: a hub left alone for an hour (a standby)
//     is fresh again when the cluster fails over to it.
//  7. Restarts do not reset it: the records are saved to a BootstrapBackoffStore (Persist) and restored at start
//     (Restore). Without a stored record for a hub, the first bootstrap CSR to it is not delayed (rule 1): the
//     CSRs the hub already holds for the cluster are not evidence against this process (a re-install, an earlier
//     agent or an operator's retries leave them), and two writers of one Secret share the namespace's store, so
//     a fight between them always has a record.
//
// Rotation CSRs (sent with the hub identity while the stored certificate is valid) are not subject to it.
type BootstrapBackoff struct {
	curve         backoff.Backoff
	quietPeriod   time.Duration
	provingPeriod time.Duration
	clock         clock.PassiveClock

	mu      sync.Mutex
	hubs    map[string]*bootstrapRecord
	written [][sha256.Size]byte
	// dirty holds the hubs changed since the last Persist save; changed wakes Persist.
	dirty   map[string]bool
	changed chan struct{}
}

// BootstrapBackoffOptions configures a BootstrapBackoff; zero fields take the defaults above.
type BootstrapBackoffOptions struct {
	// Curve is the wait after n failures; zero fields: Base 30s, Max 20m.
	Curve backoff.Backoff
	// QuietPeriod is rule 5's and 6's period; 0 means 1h.
	QuietPeriod time.Duration
	// ProvingPeriod is how long credentials must be in use to reset the back-off (rules 2 and 5); 0 means Curve.Max.
	ProvingPeriod time.Duration
	// Clock supplies now; default the real clock.
	Clock clock.PassiveClock
}

// bootstrapRecord is the back-off state of one hub.
type bootstrapRecord struct {
	failures    int
	last        time.Time // the last bootstrap CSR or takeover
	pending     bool      // the last bootstrap CSR's credentials have not been in use for the proving period
	inUseSince  time.Time // the first InUse since the last CSR or takeover
	contestedAt time.Time
}

// BootstrapRecord is the persisted form of one hub's back-off (see BootstrapBackoffStore); times in RFC 3339.
type BootstrapRecord struct {
	// Failures is the count of rules 2 and 3 since the last reset.
	Failures int `json:"failures"`
	// Last is the time of the last bootstrap CSR or takeover.
	Last metav1.Time `json:"last"`
	// Pending is true from a bootstrap CSR until its credentials have been in use for the proving period.
	Pending bool `json:"pending,omitempty"`
	// InUseSince is the first use of the credentials since the last CSR or takeover; omitted if none.
	InUseSince *metav1.Time `json:"inUseSince,omitempty"`
	// ContestedAt is the last takeover of the Secret; omitted if none.
	ContestedAt *metav1.Time `json:"contestedAt,omitempty"`
}

// BootstrapBackoffStore persists the records of a BootstrapBackoff, keyed like its hubs, so that a restarted
// process keeps its back-off (Seed alone would let a process restarted in a loop send about ten CSRs an hour).
type BootstrapBackoffStore interface {
	// Load returns every stored record.
	Load(ctx context.Context) (map[string]BootstrapRecord, error)
	// Save stores records, replacing the stored ones of the same keys and keeping the others (other clusters or
	// processes may share the store).
	Save(ctx context.Context, records map[string]BootstrapRecord) error
}

// BootstrapBackoffState is a snapshot of one hub's back-off, for status and events.
type BootstrapBackoffState struct {
	// Failures is the count of rules 2 and 3 since the last reset, plus one while a bootstrap is pending.
	Failures int
	// NotBefore is when the next bootstrap CSR may be created; zero when it may be created now.
	NotBefore time.Time
	// ContestedAt is when the Secret was last taken over by another writer; zero if never.
	ContestedAt time.Time
}

// NewBootstrapBackoff returns a BootstrapBackoff with o's settings.
func NewBootstrapBackoff(o BootstrapBackoffOptions) *BootstrapBackoff {
	o.Curve = o.Curve.WithDefaults(backoff.Backoff{Base: DefaultBootstrapBackoffBase, Max: DefaultBootstrapBackoffMax})
	if o.QuietPeriod <= 0 {
		o.QuietPeriod = DefaultContestQuietPeriod
	}
	if o.ProvingPeriod <= 0 {
		o.ProvingPeriod = o.Curve.Max
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &BootstrapBackoff{curve: o.Curve, quietPeriod: o.QuietPeriod, provingPeriod: o.ProvingPeriod, clock: o.Clock,
		hubs: map[string]*bootstrapRecord{}, dirty: map[string]bool{}, changed: make(chan struct{}, 1)}
}

// Restore loads the records of store into b, for the hubs b has no state of yet (call it at start, before
// the first CSR). It returns the store's error; b is unchanged then.
func (b *BootstrapBackoff) Restore(ctx context.Context, store BootstrapBackoffStore) error {
	records, err := store.Load(ctx)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for hub, rec := range records {
		if _, ok := b.hubs[hub]; ok {
			continue
		}
		r := &bootstrapRecord{failures: max(rec.Failures, 0), last: rec.Last.Time, pending: rec.Pending}
		if rec.ContestedAt != nil {
			r.contestedAt = rec.ContestedAt.Time
		}
		if rec.InUseSince != nil {
			r.inUseSince = rec.InUseSince.Time
		}
		b.hubs[hub] = r
	}
	return nil
}

// Snapshot returns every hub's record in its persisted form.
func (b *BootstrapBackoff) Snapshot() map[string]BootstrapRecord {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]BootstrapRecord, len(b.hubs))
	for hub, r := range b.hubs {
		out[hub] = r.persisted()
	}
	return out
}

// Persist saves the changed records to store until ctx ends, at most one Save in flight (each bounded by 10 s),
// coalescing changes; a failed Save is retried after retry (0 means 5s) with what changed meanwhile. When ctx
// ends, what changed last is saved once more (bounded by 5 s), so that a restart right after a CSR or a
// takeover keeps it.
func (b *BootstrapBackoff) Persist(ctx context.Context, store BootstrapBackoffStore, retry time.Duration) {
	if retry <= 0 {
		retry = 5 * time.Second
	}
	logger := klog.FromContext(ctx).WithValues("component", "BootstrapBackoff")
	save := func(ctx context.Context, timeout time.Duration) error {
		b.mu.Lock()
		records := make(map[string]BootstrapRecord, len(b.dirty))
		for hub := range b.dirty {
			records[hub] = b.hubs[hub].persisted()
		}
		b.dirty = map[string]bool{}
		b.mu.Unlock()
		saveCtx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		err := store.Save(saveCtx, records)
		if err != nil {
			b.mu.Lock()
			for hub := range records {
				b.dirty[hub] = true
			}
			b.mu.Unlock()
		}
		return err
	}
	for {
		select {
		case <-ctx.Done():
			if err := save(context.WithoutCancel(ctx), 5*time.Second); err != nil {
				logger.Info("Saving the bootstrap CSR back-off at shutdown failed", "err", err)
			}
			return
		case <-b.changed:
		}
		if err := save(ctx, 10*time.Second); err != nil {
			if ctx.Err() != nil {
				continue // saved once more on the way out
			}
			logger.Info("Saving the bootstrap CSR back-off failed; retrying", "err", err, "retryIn", retry)
			select {
			case <-ctx.Done():
			case <-time.After(retry):
				notify(b.changed)
			}
		}
	}
}

func (r *bootstrapRecord) persisted() BootstrapRecord {
	rec := BootstrapRecord{Failures: r.failures, Last: metav1.NewTime(r.last), Pending: r.pending}
	if !r.contestedAt.IsZero() {
		t := metav1.NewTime(r.contestedAt)
		rec.ContestedAt = &t
	}
	if !r.inUseSince.IsZero() {
		t := metav1.NewTime(r.inUseSince)
		rec.InUseSince = &t
	}
	return rec
}

// markDirty records that hub's state changed; b.mu must be held.
func (b *BootstrapBackoff) markDirty(hub string) {
	b.dirty[hub] = true
	notify(b.changed)
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// State returns hub's back-off (rule 4's NotBefore, zero when a CSR may be created now).
func (b *BootstrapBackoff) State(hub string) BootstrapBackoffState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stateLocked(hub)
}

func (b *BootstrapBackoff) stateLocked(hub string) BootstrapBackoffState {
	now := b.clock.Now()
	r, ok := b.hubs[hub]
	if !ok {
		return BootstrapBackoffState{}
	}
	b.forgetIfQuiet(hub, r, now)
	s := BootstrapBackoffState{Failures: r.failures, ContestedAt: r.contestedAt}
	if r.pending {
		s.Failures++
	}
	if s.Failures > 0 {
		if next := r.last.Add(b.curve.Delay(s.Failures)); now.Before(next) {
			s.NotBefore = next
		}
	}
	return s
}

// CSRCreated records a bootstrap CSR created on hub now (rule 2).
func (b *BootstrapBackoff) CSRCreated(hub string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	r := b.record(hub)
	b.forgetIfQuiet(hub, r, now)
	if r.pending {
		r.failures++
	}
	r.pending, r.last, r.inUseSince = true, now, time.Time{}
	b.markDirty(hub)
}

// Contested records that the hub kubeconfig Secret, holding credentials of this process for hub, was replaced
// by credentials it did not write (rule 3), and returns the new state.
func (b *BootstrapBackoff) Contested(hub string) BootstrapBackoffState {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	r := b.record(hub)
	b.forgetIfQuiet(hub, r, now)
	// The takeover is the failure of the pending bootstrap, if any: counted once.
	r.failures++
	r.pending, r.last, r.contestedAt, r.inUseSince = false, now, now, time.Time{}
	b.markDirty(hub)
	return b.stateLocked(hub)
}

// InUse records that credentials for hub were used successfully now (rules 2 and 5).
func (b *BootstrapBackoff) InUse(hub string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	r := b.record(hub)
	before := *r
	if r.inUseSince.IsZero() {
		r.inUseSince = now
	}
	if now.Sub(r.inUseSince) >= b.provingPeriod && (r.contestedAt.IsZero() || now.Sub(r.contestedAt) >= b.quietPeriod) {
		r.failures, r.pending = 0, false
	}
	if *r != before {
		b.markDirty(hub)
	}
}

// Abandoned records that the agent left hub while a bootstrap there was pending (a switch to another hub, which
// the failover logic spaces by its own timeouts and skip periods): that bootstrap does not count as failed
// (rule 2's exception), so a switch back sends its CSR at once. Failures already counted stay.
func (b *BootstrapBackoff) Abandoned(hub string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, ok := b.hubs[hub]
	if !ok || !r.pending {
		return
	}
	r.pending = false
	b.markDirty(hub)
}

// forgetIfQuiet applies rule 6 to r at now; b.mu must be held.
func (b *BootstrapBackoff) forgetIfQuiet(hub string, r *bootstrapRecord, now time.Time) {
	if (r.failures == 0 && !r.pending) || now.Sub(r.last) < b.quietPeriod || (!r.contestedAt.IsZero() && now.Sub(r.contestedAt) < b.quietPeriod) {
		return
	}
	r.failures, r.pending = 0, false
	b.markDirty(hub)
}

// RecordWritten remembers certPEM as a client certificate this process wrote into (or started its main
// controllers with from) the hub kubeconfig Secret.
func (b *BootstrapBackoff) RecordWritten(certPEM []byte) {
	sum, ok := certFingerprint(certPEM)
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, w := range b.written {
		if w == sum {
			return
		}
	}
	b.written = append(b.written, sum)
	if len(b.written) > maxWrittenCertificates {
		b.written = b.written[len(b.written)-maxWrittenCertificates:]
	}
}

// Wrote reports whether certPEM is one RecordWritten remembered.
func (b *BootstrapBackoff) Wrote(certPEM []byte) bool {
	sum, ok := certFingerprint(certPEM)
	if !ok {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, w := range b.written {
		if w == sum {
			return true
		}
	}
	return false
}

func (b *BootstrapBackoff) record(hub string) *bootstrapRecord {
	r, ok := b.hubs[hub]
	if !ok {
		r = &bootstrapRecord{}
		b.hubs[hub] = r
	}
	return r
}

// certFingerprint is the SHA-256 of the first PEM block's bytes of certPEM.
func certFingerprint(certPEM []byte) ([sha256.Size]byte, bool) {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256(block.Bytes), true
}

// CredentialsOwner describes whose credentials a hub kubeconfig Secret holds, for messages: the cluster and agent
// names (from the certificate's CN, which is what the hub sees; else the Secret's name keys) and the kubeconfig's
// server. Fields that cannot be read are "".
type CredentialsOwner struct {
	ClusterName, AgentName, Server string
}

// OwnerOf reads CredentialsOwner from the data of a hub kubeconfig Secret.
func OwnerOf(data map[string][]byte) CredentialsOwner {
	var o CredentialsOwner
	if leaf, err := parseLeafCertificate(data[TLSCertSecretKey]); err == nil {
		o.ClusterName, o.AgentName, _ = ParseCommonName(leaf.Subject.CommonName)
	}
	if o.ClusterName == "" || o.AgentName == "" {
		o.ClusterName, o.AgentName = IdentityFromSecretData(data)
	}
	if cfg, err := RestConfigFromSecretData(data); err == nil {
		o.Server = cfg.Host
	}
	return o
}
