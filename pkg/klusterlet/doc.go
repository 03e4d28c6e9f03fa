// Package klusterlet is the failover agent's composition root. It holds the agent's options
// (FailoverAgentOptions: NewFailoverAgentOptions, AddFlags, Complete, ValidateFlags, Validate: flag work, no
// cluster I/O) and its wiring: RunFailoverAgent builds the spoke clients and calls RunWithClients, whose steps
// resolve the identity (resolveIdentity), build the agent namespace's informers, restore the bootstrap CSR
// back-off, build the failover orchestrator and run it until the command stops.
//
// Everything else lives in the packages it wires: registrationagent (OCM's `registration agent` command line),
// failover (the orchestrator), hubsession (one hub's session), clientcert, managedcluster, lease and addon (the
// controllers), informers and startwait (informer factories and the waits before controllers start).
package klusterlet
