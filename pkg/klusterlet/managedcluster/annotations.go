package managedcluster

import (
	"sort"
	"strings"

	operatorv1 "open-cluster-management.io/api/operator/v1"
)

// ClusterAnnotationsKeyPrefix is the prefix every annotation key of --cluster-annotations must carry: the agent
// sets those annotations on the ManagedCluster it creates. It is OCM's constant (open-cluster-management.io/api
// operator/v1), whose prefix the klusterlet operator expects of the Klusterlet's
// spec.registrationConfiguration.clusterAnnotations.
const ClusterAnnotationsKeyPrefix = operatorv1.ClusterAnnotationsKeyPrefix

// FilterClusterAnnotations splits annotations into the ones the agent may set on its ManagedCluster (keys that
// start with ClusterAnnotationsKeyPrefix) and the sorted keys of the others, which OCM's agent ignores with a
// warning too. kept is nil when nothing is kept.
func FilterClusterAnnotations(annotations map[string]string) (kept map[string]string, ignored []string) {
	for k, v := range annotations {
		if !strings.HasPrefix(k, ClusterAnnotationsKeyPrefix) {
			ignored = append(ignored, k)
			continue
		}
		if kept == nil {
			kept = map[string]string{}
		}
		kept[k] = v
	}
	sort.Strings(ignored)
	return kept, ignored
}
