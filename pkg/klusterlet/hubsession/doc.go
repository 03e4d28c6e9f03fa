// Package hubsession registers the managed cluster with one hub and keeps it registered: it runs the join
// flow of design §3 (bootstrap through a CSR when the hub kubeconfig Secret is not valid for this hub) and then
// the main controllers (certificate rotation, ManagedCluster creating, status, lease) built from the hub
// kubeconfig, until its context is cancelled. The failover orchestrator runs one session at a time and
// cancels it to move to another hub; everything a session starts stops with its context.
//
// A session is built from the process-wide Config and its Params (the hub, an Observer that hears what the
// session reports). Files: session.go (Session, its loop), config.go (Config, Params), observer.go (Observer),
// phase.go (Phase and the loop's pure choice of the next one), takeover.go (a hub kubeconfig Secret taken over
// by another writer), bootstrap.go (the bootstrap phase), registered.go (the main controllers and add-ons),
// clients.go (hub clients and the informers of one phase), reasons.go (event reasons).
package hubsession
