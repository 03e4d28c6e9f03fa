// Package agent_test is the real-wire suite of the klusterlet-failover agent on one hub (join flow, rotation,
// status, claims and the agent's field cases; docs/design.md §3, §4, docs/field-cases.md): the agent runs in-process
// (util.StartAgent → RunWithClients) against real spoke apiservers and real hubs (kube-apiserver, etcd, a CSR
// signer and OCM's own hub registration controller with auto-approval), and every assertion is made on what the
// hub and the spoke actually hold.
//
// Layout: one top-level TestAgent starts the shared fixtures and runs the scenarios as parallel subtests, so
// that the whole suite starts two hubs and two spokes:
//   - hub "ocm" (kube-controller-manager signer, OCM hub controller) serves every scenario but rotation;
//   - hub "short" (in-process signer, certificates capped at shortCertDuration, OCM hub controller) serves
//     rotation only, since the cap applies to every certificate it issues;
//   - spoke "A" is owned by the join chain (its Nodes and ClusterClaims are asserted exactly);
//   - spoke "B" is shared by the other scenarios, each with its own cluster name and hub kubeconfig Secret name
//     (the agent namespace is fixed), and none of them changes ClusterClaims; only FC-16 changes Nodes.
package agent_test

import (
	"flag"
	"os"
	"testing"
	"time"
)

// Timeouts and periods of the suite, sized for a loaded 2-core machine.
const (
	// joinTimeout bounds agent start → ManagedCluster Joined and Available (CSR approval and signing, hub
	// acceptance, namespace, RBAC and lease creation by the hub controller included).
	joinTimeout = 90 * time.Second
	// hubTimeout bounds a reaction of the hub (controller or signer) or of the agent to a hub change.
	hubTimeout = 45 * time.Second
	// eventTimeout bounds the appearance of a spoke event after its cause.
	eventTimeout = 30 * time.Second
	// exitTimeout bounds RunWithClients returning for invalid options.
	exitTimeout = 20 * time.Second
	// pollInterval is the polling interval of every wait.
	pollInterval = 200 * time.Millisecond

	// healthCheckPeriod is --cluster-healthcheck-period of every agent (StartAgent's default).
	healthCheckPeriod = 10 * time.Second
	// leaseSeconds is the spec.leaseDurationSeconds the tests set on their ManagedClusters to see renewals
	// within seconds (the agent must follow the hub's value).
	leaseSeconds = 5
	// quietWindow is how long "nothing happens" is observed (no CSR, no busy loop).
	quietWindow = 12 * time.Second

	// shortCertDuration caps the certificates of the rotation hub. Both signers backdate NotBefore by 5 minutes,
	// so a certificate's lifetime is shortCertDuration+5m and its rotation (20–25 % of the lifetime left) falls
	// 15–36 s after issue, well before it expires.
	shortCertDuration = 2 * time.Minute
	// rotationTimeout bounds the first rotation after the join.
	rotationTimeout = 90 * time.Second
)

// defaultParallel is the -test.parallel used when the flag is not given: the subtests mostly wait on the hub
// and the spoke, so the GOMAXPROCS default (2 here) would serialise them needlessly.
const defaultParallel = "16"

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			set = true
		}
	})
	if !set {
		_ = flag.Set("test.parallel", defaultParallel)
	}
	os.Exit(m.Run())
}
