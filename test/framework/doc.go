// Package framework starts real control planes for the integration tests of
// klusterlet-failover: one or more OCM hubs and one spoke, each a real
// kube-apiserver backed by a real etcd, started through
// sigs.k8s.io/controller-runtime/pkg/envtest from binaries built from source by
// hack/build-test-binaries.sh (design.md §7).
//
// A hub (StartHub) is
//   - kube-apiserver + etcd with its own client CA (not envtest's), so that the
//     admin users, the bootstrap user and every certificate signed for an
//     approved CSR chain to the same CA, whose cert/key files are the ones
//     kube-controller-manager signs with;
//   - --authorization-mode=Node,RBAC;
//   - the OCM CRDs the hub registration controller watches (ManagedCluster,
//     ManagedClusterSet and its bindings, ClusterClaim, ManifestWork,
//     ManagedClusterAddOn served as v1alpha1), read from the vendored
//     open-cluster-management.io/api;
//   - cluster-manager's ClusterRole open-cluster-management:bootstrap bound to
//     the group system:bootstrappers:managedcluster, and a bootstrap user in
//     that group (Hub.BootstrapKubeconfig);
//   - CSR signing, by kube-controller-manager (SignerKCM), by an in-process
//     signer (SignerInProcess) or not at all (SignerNone);
//   - optionally OCM's real hub registration controller (HubOptions.HubController);
//   - optionally a TCP proxy in front of the apiserver (HubOptions.Proxy) that a
//     test can cut and heal.
//
// A spoke (StartSpoke) is kube-apiserver + etcd with the ClusterClaim CRD.
//
// Every function that starts something takes a testing.TB, fails the test with
// t.Fatal naming the component when it cannot start (it never skips), and
// registers t.Cleanup to stop what it started, also when the test fails. When a
// test fails, the last lines of each process log are printed; set
// KF_TEST_LOG_DIR to keep the full logs in that directory after the test.
//
// Binaries come from BinariesDir, asked for the ones each function starts:
// KUBEBUILDER_ASSETS when it holds them, else the cache entry reported by
// `hack/build-test-binaries.sh --check <names>`.
package framework
