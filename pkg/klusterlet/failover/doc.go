// Package failover holds the pure, testable core of hub failover (design §6):
//
//   - HubConnectivityTracker: a transport wrapper (rest.Config.Wrap) that records when the active hub last
//     answered, last answered successfully, since when it has answered 401/403, and the last transport error.
//   - Evaluate: the hub monitor's decision (hub lost, hub rejected, no credentials, planned switch) as a pure
//     function of a MonitorInput, with the exact delay after which the verdict could change, so a controller
//     requeues precisely instead of polling. RejectionTracker keeps "since when" for boolean signals.
//   - SelectNext, Backoff, ShouldFailBack: which hub to move to, how long to wait when none is viable, and when
//     to return to the primary.
//   - Probe: the standby probe of a hub's bootstrap kubeconfig (parses, server answers, SelfSubjectAccessReviews
//     allow joining), with ClassifyHubError turning transport errors into short user-facing messages.
//   - Event and verdict reasons, and the Prometheus metrics of the failover feature (Metrics).
//
// Nothing here starts goroutines, sleeps or reads the wall clock directly: time comes from an injected
// k8s.io/utils/clock or from explicit "now" arguments. The orchestration that stops and starts controllers
// lives elsewhere and calls these pieces.
package failover
