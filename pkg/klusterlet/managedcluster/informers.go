package managedcluster

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"

	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
)

// NewHubManagedClusterInformerFactory returns an informer factory on the hub whose list and
// watch calls carry fieldSelector=metadata.name=<clusterName>, the only ManagedCluster list
// the hub's per-cluster RBAC (open-cluster-management:managedcluster:<cluster>) allows.
// Use its Cluster().V1().ManagedClusters() informer for the controllers of this package and
// of package lease. defaultResync is the informer resync period (0 disables it).
func NewHubManagedClusterInformerFactory(hubClusterClient clusterclientset.Interface, clusterName string, defaultResync time.Duration) clusterinformers.SharedInformerFactory {
	return clusterinformers.NewSharedInformerFactoryWithOptions(hubClusterClient, defaultResync,
		clusterinformers.WithTweakListOptions(func(options *metav1.ListOptions) {
			options.FieldSelector = fields.OneTermEqualSelector("metadata.name", clusterName).String()
		}))
}

// syncPollInterval is how often AwaitSynced checks the informers: HasSynced only takes a lock, so a short period
// costs nothing noticeable.
const syncPollInterval = 5 * time.Millisecond

// AwaitSynced waits until every informer in synced has synced, ctx ends, or bound passes, checking every 5 ms,
// and reports whether all had synced. Call it after starting the informers and before starting library-go
// controllers on them: those check their informers at once and then only every 100 ms (client-go's
// WaitForCacheSync), so a controller started a moment before its informers synced waits up to 100 ms more;
// after AwaitSynced their first check passes. The bound keeps an informer that cannot sync (a hub that does
// not authorise the list yet) from holding back what follows for longer than bound; the controllers still
// wait for their own informers then.
func AwaitSynced(ctx context.Context, bound time.Duration, synced ...cache.InformerSynced) bool {
	done := func() bool {
		for _, s := range synced {
			if !s() {
				return false
			}
		}
		return true
	}
	if done() {
		return true
	}
	timer := time.NewTimer(bound)
	defer timer.Stop()
	ticker := time.NewTicker(syncPollInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			return done()
		case <-ticker.C:
			if done() {
				return true
			}
		}
	}
}
