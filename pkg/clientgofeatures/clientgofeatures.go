// Package clientgofeatures sets client-go's feature gates for the process (PreferListForInformers).
package clientgofeatures

import (
	"os"

	clientfeatures "k8s.io/client-go/features"
)

// watchListClientEnv is the environment variable through which client-go lets users set its WatchListClient
// feature gate.
const watchListClientEnv = "KUBE_FEATURE_" + string(clientfeatures.WatchListClient)

// PreferListForInformers makes client-go's informers start with a LIST, as they did before client-go v0.35,
// unless KUBE_FEATURE_WatchListClient is set. client-go v0.35 turned WatchListClient on by default: an informer's
// first sync is then a streaming watch, and against a v1.34 apiserver every one of the agent's informers on a
// custom resource (FailoverConfig, ClusterClaim) took about a second to sync — two such waits in a row, while the
// whole join takes about one second without them (measured with make bench's join scenario). Call it first in
// main, before any client is built.
func PreferListForInformers() {
	clientfeatures.ReplaceFeatureGates(listPreferringGates{clientfeatures.FeatureGates()})
}

// listPreferringGates are client-go's gates with WatchListClient off unless the environment sets it.
type listPreferringGates struct {
	clientfeatures.Gates
}

// Enabled reports whether key is enabled.
func (g listPreferringGates) Enabled(key clientfeatures.Feature) bool {
	if key == clientfeatures.WatchListClient {
		if _, set := os.LookupEnv(watchListClientEnv); !set {
			return false
		}
	}
	return g.Gates.Enabled(key)
}
