// Package lease renews the hub Lease <cluster>/managed-cluster-lease
// (coordination.k8s.io/v1) that the hub creates for an accepted ManagedCluster. The hub
// marks the cluster Unknown when the lease is not renewed for 5 x
// spec.leaseDurationSeconds; the agent renews it every spec.leaseDurationSeconds (0 means
// 60 s) plus a random extra of up to 25 % (DefaultJitterFactor, as OCM's agent), updating
// spec.renewTime only, and never creates it.
//
// NewLeaseController returns a factory controller that starts and stops a renewal loop
// (the leaseUpdater, driven by an injected clock) from the ManagedCluster it watches and
// from a ConflictChecker: renewal runs only while the cluster exists, is accepted
// (HubAcceptedManagedCluster=True), this spoke's identity was verified against the hub and
// no identity conflict is recorded.
package lease
