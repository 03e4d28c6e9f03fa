// Package managedcluster holds the agent's controllers for its own ManagedCluster
// (cluster.open-cluster-management.io/v1, cluster-scoped, name = cluster name) on the
// active hub:
//
//   - NewManagedClusterCreatingController creates the ManagedCluster when it is absent
//     (also after it was deleted on the hub) with spec.managedClusterClientConfigs set to
//     one entry per spoke external server URL, and keeps those client configs current.
//   - NewManagedClusterStatusController keeps status up to date through a chain of small
//     reconcilers (identity conflict gate, clock-sync gate, Joined, Available, version and
//     resources, ClusterClaims) and writes at most one merge patch on the status
//     subresource per sync, only when something changed.
//   - ConflictTracker shares the "another spoke owns this cluster name" verdict (field case
//     FC-06) between the status controller, the lease controller and the failover wiring.
//
// All hub ManagedCluster informers given to these controllers must be scoped with the
// field selector metadata.name=<cluster> (see informers.NewHubManagedClusterFactory):
// the hub only lets an agent list and watch its own ManagedCluster.
package managedcluster
