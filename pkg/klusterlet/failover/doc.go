// Package failover holds hub failover (docs/design.md §6): its pure, testable decisions and the Orchestrator
// that acts on them:
//
//   - HubConnectivityTracker: a transport wrapper (rest.Config.Wrap) that records when the active hub last
//     answered, last answered successfully, since when it has answered 401/403, and the last transport error.
//   - Evaluate: the hub monitor's decision (hub lost, hub rejected, no credentials, planned switch) as a pure
//     function of a MonitorInput, with the exact delay after which the verdict could change, so a controller
//     requeues precisely instead of polling. RejectionTracker keeps "since when" for boolean signals.
//   - SelectNext, NextSkipExpiry, ShouldFailBack: which hub to move to, when a skipped hub may be tried again,
//     and when to return to the primary (the wait while no hub is viable is a backoff.Timer).
//   - Probe: the standby probe of a hub's bootstrap kubeconfig (parses, server answers, SelfSubjectAccessReviews
//     allow joining), with ProbeResultForError turning a failed request (classified by huberror.Classify)
//     into a probe result and a short user-facing message.
//   - Event and verdict reasons, and the Prometheus metrics of the failover feature (Metrics).
//   - Orchestrator: runs one hub session (package hubsession) at a time, feeds Evaluate, SelectNext and
//     ShouldFailBack, and switches hubs in-process; it also writes the FailoverConfig status.
//
// The decision functions start no goroutines and read no clock: time comes from explicit "now" arguments or an
// injected k8s.io/utils/clock. The Orchestrator does start goroutines: Run, its decision loop (one goroutine
// makes every decision), starts the hub session, one per standby probe, the heartbeat GET of a quiet active
// hub, and the poll of the bootstrap kubeconfig files. Its decisions read time from its injected clock only.
package failover
