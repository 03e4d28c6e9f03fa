// Tool module: pins the modules whose CRD files the test bed installs on a hub besides OCM's own (the vendored
// open-cluster-management.io/api): governance's Policy, PlacementBinding and PolicySet, and ManagedServiceAccount.
// Nothing is built from it; hack/build-test-binaries.sh downloads the modules into Go's module cache, and
// test/framework reads the CRD files there. Not part of the product's module.
module github.com/klusterlet-failover/klusterlet-failover/hack/tools/crds

go 1.25.0

require (
	open-cluster-management.io/governance-policy-propagator v0.19.0
	open-cluster-management.io/managed-serviceaccount v0.10.0
)
