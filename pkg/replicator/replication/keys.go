package replication

import (
	"k8s.io/apimachinery/pkg/util/sets"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// isCluster reports whether name is a managed cluster on any ready hub.
func (c *Controller) isCluster(name string) bool {
	if _, known := c.directions.source(name); known {
		return true
	}
	for _, h := range c.opts.Hubs {
		if _, ok := h.Cluster(name); ok {
			return true
		}
	}
	return false
}

// knownClusters returns the names of the ManagedClusters on every ready hub and of the clusters with a source.
func (c *Controller) knownClusters() []string {
	names := sets.New[string]()
	names.Insert(c.directions.clusters()...)
	for _, h := range c.opts.Hubs {
		for _, mc := range h.List(failoverv1alpha1.KindManagedCluster, "") {
			names.Insert(mc.Name)
		}
	}
	return sets.List(names)
}

// allKeys returns the keys of every mirrored object on every hub.
func (c *Controller) allKeys() []Key {
	keys := sets.New[Key]()
	for _, h := range c.opts.Hubs {
		for name := range c.kinds {
			for _, obj := range h.List(name, "") {
				keys.Insert(Key{Kind: name, Namespace: obj.Namespace, Name: obj.Name})
			}
		}
	}
	return keys.UnsortedList()
}

// clusterKeys returns the keys of cluster's ManagedCluster, of every mirrored object in its namespace and of
// every object of a ClusterByName kind named after it, on every hub.
func (c *Controller) clusterKeys(cluster string) []Key {
	keys := sets.New[Key]()
	for name, k := range c.kinds {
		if name == failoverv1alpha1.KindManagedCluster || k.Scope == mirror.ClusterByName {
			keys.Insert(Key{Kind: name, Name: cluster})
		}
	}
	for _, h := range c.opts.Hubs {
		for name, k := range c.kinds {
			if !k.Namespaced {
				continue
			}
			for _, obj := range h.List(name, cluster) {
				keys.Insert(Key{Kind: name, Namespace: obj.Namespace, Name: obj.Name})
			}
		}
	}
	return keys.UnsortedList()
}
