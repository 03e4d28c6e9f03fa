package managedcluster

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	corev1listers "k8s.io/client-go/listers/core/v1"

	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

// resourceReconciler sets status.capacity and status.allocatable (summed over all spoke
// Nodes, every resource name found; unschedulable Nodes add to capacity only, as in OCM's
// agent) and status.version.kubernetes (spoke discovery ServerVersion().GitVersion).
//
// To coalesce node churn (FC-16) the resources are refreshed on the periodic sync, on the
// first sync, and on an event-triggered sync only when their last successful refresh is at
// least one period old. The version is read with them, or while it is still unknown, and
// only when this sync's health check passed. Capacity entries for resource
// names no Node reports are kept, since other components may set them (OCM does the same).
type resourceReconciler struct {
	discovery  discovery.DiscoveryInterface
	nodeLister corev1listers.NodeLister
	period     time.Duration

	lastRun time.Time
}

func (r *resourceReconciler) reconcile(_ context.Context, sc *statusSyncContext, cluster *clusterv1.ManagedCluster) (reconcileState, error) {
	due := sc.periodic || r.lastRun.IsZero() || sc.now.Sub(r.lastRun) >= r.period
	if due {
		capacity, allocatable, err := r.sumNodeResources()
		if err != nil {
			return reconcileContinue, fmt.Errorf("unable to sum the node resources of ManagedCluster %q: %w", cluster.Name, err)
		}
		for name, quantity := range cluster.Status.Capacity {
			if _, found := capacity[name]; !found {
				capacity[name] = quantity
			}
		}
		cluster.Status.Capacity = capacity
		cluster.Status.Allocatable = allocatable
		now := sc.now
		sc.onSuccess = append(sc.onSuccess, func() { r.lastRun = now })
	}

	// The version is refreshed with the resources, or as soon as possible while unknown.
	if sc.spokeHealthy && (due || cluster.Status.Version.Kubernetes == "") {
		version, err := r.discovery.ServerVersion()
		if err != nil {
			// Keep the version we published; the next periodic sync retries.
			sc.logger.Info("Unable to read the spoke server version", "err", err)
		} else {
			cluster.Status.Version.Kubernetes = version.GitVersion
		}
	}
	return reconcileContinue, nil
}

func (r *resourceReconciler) sumNodeResources() (capacity, allocatable clusterv1.ResourceList, err error) {
	nodes, err := r.nodeLister.List(labels.Everything())
	if err != nil {
		return nil, nil, err
	}
	capacity = clusterv1.ResourceList{}
	allocatable = clusterv1.ResourceList{}
	for _, node := range nodes {
		for name, quantity := range node.Status.Capacity {
			addQuantity(capacity, clusterv1.ResourceName(name), quantity)
		}
		if node.Spec.Unschedulable {
			continue
		}
		for name, quantity := range node.Status.Allocatable {
			addQuantity(allocatable, clusterv1.ResourceName(name), quantity)
		}
	}
	return capacity, allocatable, nil
}

func addQuantity(list clusterv1.ResourceList, name clusterv1.ResourceName, quantity resource.Quantity) {
	sum, found := list[name]
	if !found {
		list[name] = quantity.DeepCopy()
		return
	}
	sum.Add(quantity)
	list[name] = sum
}
