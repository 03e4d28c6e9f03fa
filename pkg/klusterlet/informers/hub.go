package informers

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
)

// NewHubManagedClusterFactory returns an informer factory on the hub whose list and
// watch calls carry fieldSelector=metadata.name=<clusterName>, the only ManagedCluster list
// the hub's per-cluster RBAC (open-cluster-management:managedcluster:<cluster>) allows.
// Use its Cluster().V1().ManagedClusters() informer for the controllers of packages
// managedcluster and lease. defaultResync is the informer resync period (0 disables it).
func NewHubManagedClusterFactory(hubClusterClient clusterclientset.Interface, clusterName string, defaultResync time.Duration) clusterinformers.SharedInformerFactory {
	return clusterinformers.NewSharedInformerFactoryWithOptions(hubClusterClient, defaultResync,
		clusterinformers.WithTweakListOptions(func(options *metav1.ListOptions) {
			options.FieldSelector = fields.OneTermEqualSelector("metadata.name", clusterName).String()
		}))
}
