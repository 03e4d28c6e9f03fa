// Package klusterlet is the failover agent's composition root. It holds the agent's options
// (FailoverAgentOptions: NewFailoverAgentOptions, AddFlags, CompleteNamespace and ValidateFlags before any I/O,
// Complete — namespace, stored or generated cluster and agent names — and Validate) and its wiring:
// RunFailoverAgent builds the spoke clients and calls RunWithClients, whose steps build the agent namespace's
// informers, restore the bootstrap CSR back-off, build the failover orchestrator and run it until the command
// stops. The command's run function calls Complete, Validate and RunFailoverAgent, in that order. The
// ManagedCluster, lease and add-on controllers every hub session runs are built here too (controllers.go), with
// the agent's settings: a session (package hubsession) is handed the builders (hubsession.Controllers) and
// decides only when they run, on its clients and informers.
//
// Everything else lives in the packages it wires: registrationagent (OCM's `registration agent` command line),
// failover (the orchestrator), hubsession (one hub's session), clientcert, managedcluster, lease,
// addon/registration and addon/health (the controllers), informers and startwait (informer factories and the
// waits before controllers start).
package klusterlet
