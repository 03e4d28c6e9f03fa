// Package health reports the health of the cluster's add-ons whose health check mode is Lease (OCM's default:
// every mode but Customized) on the active hub, as OCM's registration agent does: the add-on agent renews a
// coordination.k8s.io/v1 Lease named after the add-on in its install namespace (on the cluster hosting the agent
// for hosted add-ons), and the agent sets the ManagedClusterAddOn's Available condition from it —
// True/ManagedClusterAddOnLeaseUpdated while the lease was renewed within 5 × 60 s, False/
// ManagedClusterAddOnLeaseUpdateStopped after that, Unknown/ManagedClusterAddOnLeaseNotFound without a lease.
// Leases are read with GETs every 30 s (no informer, so no watch over every Lease of the cluster), and the
// condition is written only when it changes.
package health
