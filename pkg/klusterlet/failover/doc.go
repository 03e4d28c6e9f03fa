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
//   - ProbeRESTConfig: the standby probe of a hub's bootstrap kubeconfig (parses, server answers, SelfSubjectAccessReviews
//     allow joining), with ProbeResultForError turning a failed request (classified by huberror.Classify)
//     into a probe result and a short user-facing message.
//   - Event and verdict reasons, and the Prometheus metrics of the failover feature (Metrics).
//   - Decide: one round of the Orchestrator's decisions as a pure function of its State (Selecting, Joining,
//     Active, NoViableHub; transitions in State's doc comment) and a View of every fact it needs; it feeds
//     Evaluate, SelectNext and ShouldFailBack and returns the next state and memory, the actions and when to
//     look again. It is the only writer of the state. BuildStatus is the FailoverConfig status as a pure
//     function of a StatusView.
//   - Orchestrator: the thin shell around Decide, a library-go factory controller with one worker and one
//     queue key. It runs one hub session at a time, built by the SessionBuilder the agent's wiring gives it
//     (hubsession.New), carries out Decide's actions and switches hubs in-process. Its
//     parts, by file: the hub registry (hubs.go), the standby prober (standby.go), the heartbeat of a quiet
//     active hub (heartbeat.go), the session facts (session_facts.go), the session lifecycle
//     (session_lifecycle.go) and the status (status.go).
//
// The decision functions start no goroutines and read no clock: time comes from explicit "now" arguments or an
// injected k8s.io/utils/clock. The Orchestrator does start goroutines: its controller's worker (the one
// goroutine that makes every decision), the hub session, one per standby probe, the heartbeat GET of a quiet
// active hub, and the poll of the bootstrap kubeconfig files. Its decisions read time from its injected clock
// only; its requeues (AddAfter) use the work queue's real clock.
package failover
