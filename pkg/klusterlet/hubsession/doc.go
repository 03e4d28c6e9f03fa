// Package hubsession registers the managed cluster with one hub and keeps it registered: it runs the join
// flow of design §3 (bootstrap through a CSR when the hub kubeconfig Secret is not valid for this hub) and then
// the main controllers (certificate rotation, ManagedCluster creating, status, lease) built from the hub
// kubeconfig, until its context is cancelled. The failover orchestrator runs one session at a time and
// cancels it to move to another hub; everything a session starts stops with its context.
package hubsession
