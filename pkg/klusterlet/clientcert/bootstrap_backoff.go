package clientcert

import (
	"crypto/sha256"
	"encoding/pem"
	"strings"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/utils/clock"
)

// Defaults of BootstrapBackoff.
const (
	// DefaultBootstrapBackoffBase is the wait before the first bootstrap CSR that follows one that did not stick.
	DefaultBootstrapBackoffBase = 30 * time.Second
	// DefaultBootstrapBackoffMax caps the wait between bootstrap CSRs to one hub: at most three an hour once the
	// back-off has grown.
	DefaultBootstrapBackoffMax = 20 * time.Minute
	// DefaultContestQuietPeriod is how long after the hub kubeconfig Secret was last taken over by another writer
	// credentials in use no longer keep the back-off grown. It is longer than the cap, so that two writers
	// taking turns never reset each other's back-off.
	DefaultContestQuietPeriod = time.Hour
	// DefaultRestartAllowance is how many bootstrap CSRs for the cluster from the last hour a hub may already hold
	// before a new process counts the surplus as failures (a process restarted in a loop).
	DefaultRestartAllowance = 3
	// restartWindow is how far back Seed looks for bootstrap CSRs on the hub.
	restartWindow = time.Hour
	// maxWrittenCertificates bounds the certificates BootstrapBackoff remembers as written by this process.
	maxWrittenCertificates = 16
)

// BootstrapBackoff spaces the bootstrap CSRs one agent process sends to each hub, across hub sessions and
// bootstrap controllers, and remembers which client certificates the process wrote into the hub kubeconfig
// Secret. Every method is safe for concurrent use.
//
// Rules, per hub:
//  1. The first bootstrap CSR is not delayed (first join, a failover to a hub, a re-bootstrap after credentials
//     were in use).
//  2. A bootstrap CSR created while the previous one's credentials were never in use counts one failure: that
//     bootstrap failed (denied, deleted, no valid certificate) or was undone before it was used.
//  3. The Secret taken over by credentials this process did not write (Contested) counts one failure.
//  4. With n failures the next bootstrap CSR waits Curve.Delay(n) after the last CSR or takeover: 30 s, 1 m,
//     2 m, … up to 20 m with the defaults.
//  5. Credentials in use (InUse: a lease renewal with them) reset the failures, unless the Secret was contested
//     less than QuietPeriod ago: two writers that keep replacing each other's credentials both stay backed off.
//  6. A new process seeds the failures from the hub (Seed): the bootstrap CSRs for the cluster created in the
//     last hour beyond RestartAllowance, so that restarts do not reset the back-off either.
//
// Rotation CSRs (sent with the hub identity while the stored certificate is valid) are not subject to it.
type BootstrapBackoff struct {
	curve            Backoff
	quietPeriod      time.Duration
	restartAllowance int
	clock            clock.PassiveClock

	mu      sync.Mutex
	hubs    map[string]*bootstrapRecord
	written [][sha256.Size]byte
}

// BootstrapBackoffOptions configures a BootstrapBackoff; zero fields take the defaults above.
type BootstrapBackoffOptions struct {
	// Curve is the wait after n failures; zero fields: Base 30s, Max 20m.
	Curve Backoff
	// QuietPeriod is rule 5's period; 0 means 1h.
	QuietPeriod time.Duration
	// RestartAllowance is rule 6's allowance; 0 means 3, negative means none.
	RestartAllowance int
	// Clock supplies now; default the real clock.
	Clock clock.PassiveClock
}

// bootstrapRecord is the back-off state of one hub.
type bootstrapRecord struct {
	failures    int
	last        time.Time // the last bootstrap CSR or takeover
	unproven    bool      // a bootstrap CSR was created and no credentials were in use since
	contestedAt time.Time
	seeded      bool
}

// BootstrapBackoffState is a snapshot of one hub's back-off, for status and events.
type BootstrapBackoffState struct {
	// Failures is the count of rules 2, 3 and 6 since the last reset.
	Failures int
	// NotBefore is when the next bootstrap CSR may be created; zero when it may be created now.
	NotBefore time.Time
	// ContestedAt is when the Secret was last taken over by another writer; zero if never.
	ContestedAt time.Time
}

// NewBootstrapBackoff returns a BootstrapBackoff with o's settings.
func NewBootstrapBackoff(o BootstrapBackoffOptions) *BootstrapBackoff {
	if o.Curve.Base <= 0 {
		o.Curve.Base = DefaultBootstrapBackoffBase
	}
	if o.Curve.Max <= 0 {
		o.Curve.Max = DefaultBootstrapBackoffMax
	}
	o.Curve.Max = max(o.Curve.Max, o.Curve.Base)
	if o.QuietPeriod <= 0 {
		o.QuietPeriod = DefaultContestQuietPeriod
	}
	if o.RestartAllowance == 0 {
		o.RestartAllowance = DefaultRestartAllowance
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &BootstrapBackoff{curve: o.Curve, quietPeriod: o.QuietPeriod, restartAllowance: max(o.RestartAllowance, 0),
		clock: o.Clock, hubs: map[string]*bootstrapRecord{}}
}

// State returns hub's back-off (rule 4's NotBefore, zero when a CSR may be created now).
func (b *BootstrapBackoff) State(hub string) BootstrapBackoffState {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.record(hub)
	s := BootstrapBackoffState{Failures: r.failures, ContestedAt: r.contestedAt}
	if r.failures > 0 {
		if next := r.last.Add(b.curve.Delay(r.failures)); b.clock.Now().Before(next) {
			s.NotBefore = next
		}
	}
	return s
}

// CSRCreated records a bootstrap CSR created on hub now (rule 2).
func (b *BootstrapBackoff) CSRCreated(hub string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.record(hub)
	if r.unproven {
		r.failures++
	}
	r.unproven, r.last = true, b.clock.Now()
}

// Contested records that the hub kubeconfig Secret, holding credentials of this process for hub, was replaced
// by credentials it did not write (rule 3), and returns the new state.
func (b *BootstrapBackoff) Contested(hub string) BootstrapBackoffState {
	b.mu.Lock()
	now := b.clock.Now()
	r := b.record(hub)
	r.failures++
	r.unproven, r.last, r.contestedAt = false, now, now
	b.mu.Unlock()
	return b.State(hub)
}

// InUse records that credentials for hub were used successfully now (rule 5).
func (b *BootstrapBackoff) InUse(hub string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.record(hub)
	r.unproven = false
	if r.contestedAt.IsZero() || b.clock.Now().Sub(r.contestedAt) >= b.quietPeriod {
		r.failures = 0
	}
}

// Seed applies rule 6 once per hub and process: csrs are the hub's CSRs for the cluster; those created in the
// last hour by another identity than the cluster's agents (bootstrap CSRs; rotation CSRs are sent by
// system:open-cluster-management:<cluster>:<agent>) beyond the allowance become failures, counted from the
// newest. It reports whether it changed the state.
func (b *BootstrapBackoff) Seed(hub, clusterName string, csrs []*certificatesv1.CertificateSigningRequest) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.record(hub)
	if r.seeded {
		return false
	}
	r.seeded = true
	now := b.clock.Now()
	agentPrefix := SubjectPrefix + clusterName + ":"
	var n int
	var newest time.Time
	for _, csr := range csrs {
		created := csr.CreationTimestamp.Time
		if now.Sub(created) > restartWindow || strings.HasPrefix(csr.Spec.Username, agentPrefix) {
			continue
		}
		n++
		if created.After(newest) {
			newest = created
		}
	}
	if surplus := n - b.restartAllowance; surplus > r.failures {
		r.failures = surplus
		r.last = maxTime(r.last, newest)
		return true
	}
	return false
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

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// CredentialsOwner describes whose credentials a hub kubeconfig Secret holds, for messages: the cluster and agent
// names (IdentityFromSecretData) and the kubeconfig's server. Fields that cannot be read are "".
type CredentialsOwner struct {
	ClusterName, AgentName, Server string
}

// OwnerOf reads CredentialsOwner from the data of a hub kubeconfig Secret.
func OwnerOf(data map[string][]byte) CredentialsOwner {
	var o CredentialsOwner
	o.ClusterName, o.AgentName = IdentityFromSecretData(data)
	if cfg, err := RestConfigFromSecretData(data); err == nil {
		o.Server = cfg.Host
	}
	return o
}
