package failover

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// Metric names of the failover feature, served on library-go controllercmd's /metrics endpoint (which serves
// k8s.io/component-base/metrics/legacyregistry).
const (
	// MetricActiveHub is a gauge vector labelled "hub": 1 for the active hub, 0 for the others seen before.
	MetricActiveHub = "klusterlet_failover_active_hub"
	// MetricFailoversTotal is a counter vector labelled "from", "to", "reason" (the API's FailoverReason, as in
	// status.lastFailover.reason): completed switches between hubs.
	MetricFailoversTotal = "klusterlet_failover_failovers_total"
	// MetricStandbyProbeResult is a gauge vector labelled "hub", "result" (a HubProbeResult): 1 for the latest
	// result of the hub's standby probe, 0 for the other results.
	MetricStandbyProbeResult = "klusterlet_failover_standby_probe_result"
	// MetricStandbyCredentials is a gauge vector labelled "hub", "state" (a StandbyCredentialsState: Ready,
	// Pending, Refused): 1 for the state of the hot standby credentials the agent keeps for that standby hub, 0
	// for the other states. A hub without standby credentials (the active hub, standby credentials off) has no
	// series.
	MetricStandbyCredentials = "klusterlet_failover_standby_credentials"
	// MetricLastFailoverTimestampSeconds is a gauge: Unix time in seconds of the last completed switch.
	MetricLastFailoverTimestampSeconds = "klusterlet_failover_last_failover_timestamp_seconds"
	// MetricClientCertificateExpirationTimestampSeconds is a gauge: Unix time in seconds at which the client
	// certificate of the active hub's kubeconfig expires (its NotAfter); 0 when unknown.
	MetricClientCertificateExpirationTimestampSeconds = "klusterlet_failover_client_certificate_expiration_timestamp_seconds"
	// MetricAddOnCertificateExpirationTimestampSeconds is a gauge per add-on registration Secret (labels addon,
	// secret "<namespace>/<name>") that holds a certificate of the active hub: Unix time in seconds at which it
	// expires. Registrations that are not registered on the active hub have no series.
	MetricAddOnCertificateExpirationTimestampSeconds = "klusterlet_failover_addon_certificate_expiration_timestamp_seconds"
)

// Metrics holds the Prometheus metrics of the failover feature. Use LegacyRegistryMetrics in the agent and
// NewMetrics with a test registry in tests. Methods are safe for concurrent use.
type Metrics struct {
	activeHub         *metrics.GaugeVec
	failovers         *metrics.CounterVec
	probeResult       *metrics.GaugeVec
	standbyCreds      *metrics.GaugeVec
	lastFailover      *metrics.Gauge
	certificateExpiry *metrics.Gauge
	addOnExpiry       *metrics.GaugeVec

	lock sync.Mutex
	// activeHubSeries are the hub label values that have an active-hub series, so that SetActiveHub can set
	// the previous active hub to 0.
	activeHubSeries map[string]struct{}
	addOnSeries     map[[2]string]struct{}
}

var (
	legacyRegistryOnce    sync.Once
	legacyRegistryMetrics *Metrics
)

// LegacyRegistryMetrics returns the process-wide Metrics, registered in legacyregistry on the first call only
// (sync.Once), so that wiring code may call it more than once without a duplicate-registration panic.
func LegacyRegistryMetrics() *Metrics {
	legacyRegistryOnce.Do(func() {
		legacyRegistryMetrics = NewMetrics(legacyregistry.MustRegister)
	})
	return legacyRegistryMetrics
}

// NewMetrics creates the failover metrics and registers them with register (e.g. legacyregistry.MustRegister,
// or the MustRegister of a k8s.io/component-base/metrics/testutil.NewFakeKubeRegistry in tests). register
// panics on a duplicate registration, so call it once per registry.
func NewMetrics(register func(...metrics.Registerable)) *Metrics {
	m := &Metrics{
		activeHub: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Name:           MetricActiveHub,
			Help:           "1 for the hub the klusterlet agent is registered with, 0 for the other hubs it knows.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"hub"}),
		failovers: metrics.NewCounterVec(&metrics.CounterOpts{
			Name:           MetricFailoversTotal,
			Help:           "Number of completed switches between hubs, by source hub, target hub and reason.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"from", "to", "reason"}),
		probeResult: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Name:           MetricStandbyProbeResult,
			Help:           "1 for the latest standby probe result of each hub, 0 for the other results.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"hub", "result"}),
		standbyCreds: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Name:           MetricStandbyCredentials,
			Help:           "1 for the state of the hot standby credentials kept for each standby hub (Ready, Pending, Refused), 0 for the other states.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"hub", "state"}),
		lastFailover: metrics.NewGauge(&metrics.GaugeOpts{
			Name:           MetricLastFailoverTimestampSeconds,
			Help:           "Unix time in seconds of the last completed switch between hubs.",
			StabilityLevel: metrics.ALPHA,
		}),
		certificateExpiry: metrics.NewGauge(&metrics.GaugeOpts{
			Name:           MetricClientCertificateExpirationTimestampSeconds,
			Help:           "Unix time in seconds at which the client certificate for the active hub expires, 0 when unknown.",
			StabilityLevel: metrics.ALPHA,
		}),
		addOnExpiry: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Name:           MetricAddOnCertificateExpirationTimestampSeconds,
			Help:           "Unix time in seconds at which the certificate of an add-on registration Secret, issued by the active hub, expires.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"addon", "secret"}),
		activeHubSeries: map[string]struct{}{},
		addOnSeries:     map[[2]string]struct{}{},
	}
	register(m.activeHub, m.failovers, m.probeResult, m.standbyCreds, m.lastFailover, m.certificateExpiry, m.addOnExpiry)
	return m
}

// SetActiveHub marks hub as the active hub (1) and every hub previously marked as not active (0).
func (m *Metrics) SetActiveHub(hub string) {
	m.lock.Lock()
	defer m.lock.Unlock()
	for h := range m.activeHubSeries {
		if h != hub {
			m.activeHub.WithLabelValues(h).Set(0)
		}
	}
	m.activeHub.WithLabelValues(hub).Set(1)
	m.activeHubSeries[hub] = struct{}{}
}

// RecordFailover counts one completed switch from one hub to another and sets the last-failover timestamp to
// completedAt, for reason.
func (m *Metrics) RecordFailover(from, to string, reason failoverv1alpha1.FailoverReason, completedAt time.Time) {
	m.failovers.WithLabelValues(from, to, string(reason)).Inc()
	m.lastFailover.Set(unixSeconds(completedAt))
}

// SetStandbyProbeResult records hub's latest probe result: 1 for result, 0 for the other StandbyProbeResults.
func (m *Metrics) SetStandbyProbeResult(hub string, result failoverv1alpha1.HubProbeResult) {
	for _, r := range StandbyProbeResults() {
		v := 0.0
		if r == result {
			v = 1
		}
		m.probeResult.WithLabelValues(hub, string(r)).Set(v)
	}
}

// standbyCredentialsStates are the values of the "state" label of MetricStandbyCredentials.
var standbyCredentialsStates = []failoverv1alpha1.StandbyCredentialsState{
	failoverv1alpha1.StandbyCredentialsReady, failoverv1alpha1.StandbyCredentialsPending, failoverv1alpha1.StandbyCredentialsRefused,
}

// SetStandbyCredentials records the state of the standby credentials kept for hub: 1 for state, 0 for the other
// states; an empty state removes hub's series (no standby credentials are kept for it any more).
func (m *Metrics) SetStandbyCredentials(hub string, state failoverv1alpha1.StandbyCredentialsState) {
	for _, s := range standbyCredentialsStates {
		switch {
		case state == "":
			m.standbyCreds.DeleteLabelValues(hub, string(s))
		case s == state:
			m.standbyCreds.WithLabelValues(hub, string(s)).Set(1)
		default:
			m.standbyCreds.WithLabelValues(hub, string(s)).Set(0)
		}
	}
}

// SetClientCertificateExpiry records the NotAfter of the active hub's client certificate; the zero time
// records 0 (unknown).
func (m *Metrics) SetClientCertificateExpiry(notAfter time.Time) {
	m.certificateExpiry.Set(unixSeconds(notAfter))
}

// SetAddOnCertificateExpiry replaces the add-on certificate series with the Registered entries of addOns (the
// active hub's registrations) that have a notAfter; the others lose their series.
func (m *Metrics) SetAddOnCertificateExpiry(addOns []failoverv1alpha1.AddOnRegistrationStatus) {
	m.lock.Lock()
	defer m.lock.Unlock()
	keep := map[[2]string]struct{}{}
	for _, a := range addOns {
		if a.State != failoverv1alpha1.AddOnRegistrationRegistered || a.NotAfter == nil {
			continue
		}
		k := [2]string{a.Name, a.Secret}
		keep[k] = struct{}{}
		m.addOnExpiry.WithLabelValues(k[0], k[1]).Set(unixSeconds(a.NotAfter.Time))
	}
	for k := range m.addOnSeries {
		if _, ok := keep[k]; !ok {
			m.addOnExpiry.DeleteLabelValues(k[0], k[1])
		}
	}
	m.addOnSeries = keep
}

// ForgetHub removes the per-hub series of a hub that is no longer configured.
func (m *Metrics) ForgetHub(hub string) {
	m.lock.Lock()
	defer m.lock.Unlock()
	m.activeHub.DeleteLabelValues(hub)
	delete(m.activeHubSeries, hub)
	for _, r := range StandbyProbeResults() {
		m.probeResult.DeleteLabelValues(hub, string(r))
	}
	m.SetStandbyCredentials(hub, "")
}

func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}
