// Package informers builds the agent's informer factories and the transforms of their caches.
//
//   - NewNamespacedFactory: the agent namespace's Secrets (and the like), cached without managedFields.
//   - NewSpokeFactory: the managed cluster's cluster-scoped objects; its Node informer lists page by page and
//     caches compacted Nodes (CompactNode).
//   - NewClaimFactory: the managed cluster's ClusterClaims, cached without managedFields.
//   - NewHubManagedClusterFactory: the agent's own ManagedCluster on a hub, listed and watched with
//     fieldSelector=metadata.name=<cluster>, the only list the hub allows an agent.
//
// StripManagedFields and CompactNode are the cache transforms (client-go cache.TransformFunc); the agent
// namespace's FailoverConfig informer uses StripManagedFields too. Users: the agent's wiring (pkg/klusterlet)
// and each hub session (hubsession).
package informers
