package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WithDefaults returns a copy of spec in which every omitted optional field holds its default:
// hubConnectionTimeout 5m, hubRejectionGracePeriod 5m, failedHubSkipPeriod 5m, probeInterval 30s,
// failback.policy None and failback.healthyFor 10m (the Default* constants). These are the values the API
// server fills in from the CRD schema, so callers get the same effective durations for objects that did not
// pass through the API server (fake clients, tests). Fields that are set are kept as they are, even if they
// are invalid: call ValidateFailoverConfig first. spec is not modified; the result shares no memory with it.
func WithDefaults(spec FailoverConfigSpec) FailoverConfigSpec {
	out := *spec.DeepCopy()
	out.HubConnectionTimeout = durationOrDefault(out.HubConnectionTimeout, DefaultHubConnectionTimeout)
	out.HubRejectionGracePeriod = durationOrDefault(out.HubRejectionGracePeriod, DefaultHubRejectionGracePeriod)
	out.FailedHubSkipPeriod = durationOrDefault(out.FailedHubSkipPeriod, DefaultFailedHubSkipPeriod)
	out.ProbeInterval = durationOrDefault(out.ProbeInterval, DefaultProbeInterval)
	if out.Failback == nil {
		out.Failback = &FailbackSpec{}
	}
	if out.Failback.Policy == "" {
		out.Failback.Policy = FailbackPolicyNone
	}
	out.Failback.HealthyFor = durationOrDefault(out.Failback.HealthyFor, DefaultFailbackHealthyFor)
	return out
}

// SetDefaults replaces fc.Spec by WithDefaults(fc.Spec). fc must not be nil; it must not be an object shared
// with an informer cache (DeepCopy first).
func SetDefaults(fc *FailoverConfig) {
	fc.Spec = WithDefaults(fc.Spec)
}

// HubNames returns the names of all hubs of spec in order of preference: HubNamePrimary, then the names of
// spec.AlternateHubs in list order.
func (spec *FailoverConfigSpec) HubNames() []string {
	names := make([]string, 0, len(spec.AlternateHubs)+1)
	names = append(names, HubNamePrimary)
	for _, hub := range spec.AlternateHubs {
		names = append(names, hub.Name)
	}
	return names
}

// durationOrDefault returns d when it is set, else a new Duration holding def.
func durationOrDefault(d *metav1.Duration, def time.Duration) *metav1.Duration {
	if d != nil {
		return d
	}
	return &metav1.Duration{Duration: def}
}
