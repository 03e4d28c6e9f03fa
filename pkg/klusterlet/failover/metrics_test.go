package failover

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

func TestMetrics(t *testing.T) {
	cases := []struct {
		name    string
		record  func(m *Metrics)
		metrics []string
		want    string
	}{
		{
			name: "the active hub is 1 and the hub it left is 0",
			record: func(m *Metrics) {
				m.SetActiveHub("primary")
				m.SetActiveHub("hub-b")
			},
			metrics: []string{MetricActiveHub},
			want: `
# HELP klusterlet_failover_active_hub [ALPHA] 1 for the hub the klusterlet agent is registered with, 0 for the other hubs it knows.
# TYPE klusterlet_failover_active_hub gauge
klusterlet_failover_active_hub{hub="hub-b"} 1
klusterlet_failover_active_hub{hub="primary"} 0
`,
		},
		{
			name: "a removed hub loses its series",
			record: func(m *Metrics) {
				m.SetActiveHub("hub-c")
				m.SetActiveHub("primary")
				m.SetStandbyProbeResult("hub-c", failoverv1alpha1.HubProbeReady)
				m.ForgetHub("hub-c")
				m.SetActiveHub("primary")
			},
			metrics: []string{MetricActiveHub, MetricStandbyProbeResult},
			want: `
# HELP klusterlet_failover_active_hub [ALPHA] 1 for the hub the klusterlet agent is registered with, 0 for the other hubs it knows.
# TYPE klusterlet_failover_active_hub gauge
klusterlet_failover_active_hub{hub="primary"} 1
`,
		},
		{
			name: "failovers are counted by from, to and reason, and the last one is timestamped",
			record: func(m *Metrics) {
				m.RecordFailover("primary", "hub-b", failoverv1alpha1.FailoverReasonHubConnectionLost, t0)
				m.RecordFailover("hub-b", "primary", failoverv1alpha1.FailoverReasonFailback, t0.Add(time.Hour))
				m.RecordFailover("primary", "hub-b", failoverv1alpha1.FailoverReasonHubConnectionLost, t0.Add(2*time.Hour+500*time.Millisecond))
			},
			metrics: []string{MetricFailoversTotal, MetricLastFailoverTimestampSeconds},
			want: `
# HELP klusterlet_failover_failovers_total [ALPHA] Number of completed switches between hubs, by source hub, target hub and reason.
# TYPE klusterlet_failover_failovers_total counter
klusterlet_failover_failovers_total{from="hub-b",reason="Failback",to="primary"} 1
klusterlet_failover_failovers_total{from="primary",reason="HubConnectionLost",to="hub-b"} 2
# HELP klusterlet_failover_last_failover_timestamp_seconds [ALPHA] Unix time in seconds of the last completed switch between hubs.
# TYPE klusterlet_failover_last_failover_timestamp_seconds gauge
klusterlet_failover_last_failover_timestamp_seconds 1.7673302455e+09
`,
		},
		{
			name: "the probe result is a state set: 1 for the latest result, 0 for the others",
			record: func(m *Metrics) {
				m.SetStandbyProbeResult("hub-b", failoverv1alpha1.HubProbeReady)
				m.SetStandbyProbeResult("hub-b", failoverv1alpha1.HubProbeForbidden)
			},
			metrics: []string{MetricStandbyProbeResult},
			want: `
# HELP klusterlet_failover_standby_probe_result [ALPHA] 1 for the latest standby probe result of each hub, 0 for the other results.
# TYPE klusterlet_failover_standby_probe_result gauge
klusterlet_failover_standby_probe_result{hub="hub-b",result="Forbidden"} 1
klusterlet_failover_standby_probe_result{hub="hub-b",result="IdentityConflict"} 0
klusterlet_failover_standby_probe_result{hub="hub-b",result="InvalidKubeconfig"} 0
klusterlet_failover_standby_probe_result{hub="hub-b",result="Ready"} 0
klusterlet_failover_standby_probe_result{hub="hub-b",result="ServerUntrusted"} 0
klusterlet_failover_standby_probe_result{hub="hub-b",result="Unauthorized"} 0
klusterlet_failover_standby_probe_result{hub="hub-b",result="Unreachable"} 0
`,
		},
		{
			name: "standby credentials are a state set per standby hub; a stopped keeper (empty state) or a removed hub leaves none",
			record: func(m *Metrics) {
				m.SetStandbyCredentials("hub-b", failoverv1alpha1.StandbyCredentialsPending)
				m.SetStandbyCredentials("hub-b", failoverv1alpha1.StandbyCredentialsRefused)
				m.SetStandbyCredentials("hub-c", failoverv1alpha1.StandbyCredentialsReady)
				m.SetStandbyCredentials("hub-c", "")
				m.SetStandbyCredentials("hub-d", failoverv1alpha1.StandbyCredentialsReady)
				m.ForgetHub("hub-d")
			},
			metrics: []string{MetricStandbyCredentials},
			want: `
# HELP klusterlet_failover_standby_credentials [ALPHA] 1 for the state of the hot standby credentials kept for each standby hub (Ready, Pending, Refused), 0 for the other states.
# TYPE klusterlet_failover_standby_credentials gauge
klusterlet_failover_standby_credentials{hub="hub-b",state="Pending"} 0
klusterlet_failover_standby_credentials{hub="hub-b",state="Ready"} 0
klusterlet_failover_standby_credentials{hub="hub-b",state="Refused"} 1
`,
		},
		{
			name:    "client certificate expiry in Unix seconds",
			record:  func(m *Metrics) { m.SetClientCertificateExpiry(t0.Add(24 * time.Hour)) },
			metrics: []string{MetricClientCertificateExpirationTimestampSeconds},
			want: `
# HELP klusterlet_failover_client_certificate_expiration_timestamp_seconds [ALPHA] Unix time in seconds at which the client certificate for the active hub expires, 0 when unknown.
# TYPE klusterlet_failover_client_certificate_expiration_timestamp_seconds gauge
klusterlet_failover_client_certificate_expiration_timestamp_seconds 1.767409445e+09
`,
		},
		{
			name: "add-on certificates of the active hub: registered ones only, and the last report replaces the series",
			record: func(m *Metrics) {
				at := metav1.NewTime(t0.Add(24 * time.Hour))
				m.SetAddOnCertificateExpiry([]failoverv1alpha1.AddOnRegistrationStatus{
					{Name: "hello", Secret: "ns/hello-hub-kubeconfig", State: failoverv1alpha1.AddOnRegistrationRegistered, NotAfter: &at},
					{Name: "gone", Secret: "ns/gone-hub-kubeconfig", State: failoverv1alpha1.AddOnRegistrationRegistered, NotAfter: &at},
				})
				m.SetAddOnCertificateExpiry([]failoverv1alpha1.AddOnRegistrationStatus{
					{Name: "hello", Secret: "ns/hello-hub-kubeconfig", State: failoverv1alpha1.AddOnRegistrationRegistered, NotAfter: &at},
					{Name: "pending", Secret: "ns/pending-hub-kubeconfig", State: failoverv1alpha1.AddOnRegistrationPending},
					{Name: "other", Secret: "ns/other-hub-kubeconfig", State: failoverv1alpha1.AddOnRegistrationNotOnHub, NotAfter: &at},
				})
			},
			metrics: []string{MetricAddOnCertificateExpirationTimestampSeconds},
			want: `
# HELP klusterlet_failover_addon_certificate_expiration_timestamp_seconds [ALPHA] Unix time in seconds at which the certificate of an add-on registration Secret, issued by the active hub, expires.
# TYPE klusterlet_failover_addon_certificate_expiration_timestamp_seconds gauge
klusterlet_failover_addon_certificate_expiration_timestamp_seconds{addon="hello",secret="ns/hello-hub-kubeconfig"} 1.767409445e+09
`,
		},
		{
			name: "an unknown expiry is 0",
			record: func(m *Metrics) {
				m.SetClientCertificateExpiry(t0)
				m.SetClientCertificateExpiry(time.Time{})
			},
			metrics: []string{MetricClientCertificateExpirationTimestampSeconds},
			want: `
# HELP klusterlet_failover_client_certificate_expiration_timestamp_seconds [ALPHA] Unix time in seconds at which the client certificate for the active hub expires, 0 when unknown.
# TYPE klusterlet_failover_client_certificate_expiration_timestamp_seconds gauge
klusterlet_failover_client_certificate_expiration_timestamp_seconds 0
`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			registry := testutil.NewFakeKubeRegistry("1.35.0")
			m := NewMetrics(registry.MustRegister)
			tc.record(m)
			if err := testutil.GatherAndCompare(registry, strings.NewReader(tc.want), tc.metrics...); err != nil {
				t.Error(err)
			}
		})
	}
}

// The agent's metrics are registered once in legacyregistry, which controllercmd's /metrics serves.
func TestLegacyRegistryMetricsRegistersOnce(t *testing.T) {
	m := LegacyRegistryMetrics()
	if again := LegacyRegistryMetrics(); again != m {
		t.Fatalf("LegacyRegistryMetrics returned a different instance on the second call")
	}
	m.SetActiveHub("primary")
	want := `
# HELP klusterlet_failover_active_hub [ALPHA] 1 for the hub the klusterlet agent is registered with, 0 for the other hubs it knows.
# TYPE klusterlet_failover_active_hub gauge
klusterlet_failover_active_hub{hub="primary"} 1
`
	if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(want), MetricActiveHub); err != nil {
		t.Error(err)
	}
}
