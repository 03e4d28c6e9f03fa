# klusterlet-failover — see README.md. Every target runs on a fresh clone; test binaries are built from
# source into a cache outside the clone (hack/build-test-binaries.sh) and reused afterwards.
SHELL := /usr/bin/env bash -o pipefail
GO ?= go
BIN_DIR ?= _output/bin
# make image: the tag recorded in the image tarball (a "localhost/" name keeps its name in containerd) and the tarball.
IMAGE_REF ?= localhost/klusterlet-failover:dev
IMAGE_TAR ?= _output/klusterlet-failover-image.tar
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
# The build date the binary reports (klusterlet-failover version) is the commit's, in UTC: one commit always builds
# the same binary, and make image the same image digest.
BUILD_DATE ?= $(shell TZ=UTC git show -s --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD 2>/dev/null || echo 1970-01-01T00:00:00Z)
LDFLAGS := -X github.com/klusterlet-failover/klusterlet-failover/pkg/version.gitVersion=$(VERSION) \
           -X github.com/klusterlet-failover/klusterlet-failover/pkg/version.gitCommit=$(COMMIT) \
           -X github.com/klusterlet-failover/klusterlet-failover/pkg/version.buildDate=$(BUILD_DATE)
INTEGRATION_TIMEOUT ?= 40m
# One set of Go settings for every compile of this module: make build, make demo (hack/demo.sh), make test and the
# agent binary the suites build (test/framework/agentbinary.go inherits them). Go's build cache keys each package
# on them, so a package compiled by one target is reused by the others. -trimpath also makes the cache
# independent of where the clone lives (a fresh clone reuses it); CGO_ENABLED=0 matches the agent's static build.
export CGO_ENABLED := 0
export GOFLAGS := $(strip $(filter-out -trimpath,$(shell $(GO) env GOFLAGS)) -trimpath)
# Extra flags for make build (hack/demo.sh passes -v to count the packages it compiles).
GO_BUILD_FLAGS ?=

.PHONY: all build test test-unit test-integration test-binaries verify update demo bench bench-profile bench-replication chaos image clean

all: build

build: ## Build the agent binary into _output/bin.
	$(GO) build $(GO_BUILD_FLAGS) -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/klusterlet-failover ./cmd/klusterlet-failover

test: test-unit test-integration ## Unit tests, then the integration suites on real control planes.

test-unit: ## Unit tests (fake clients, fake clocks), the alert rules' (promtool, from Debian's prometheus package), and the benchmark reports' own (no control plane).
	promtool="$$(hack/install-promtool.sh)" || exit 1; \
	PROMTOOL="$$promtool" $(GO) test -count=1 ./cmd/... ./pkg/... ./internal/... ./manifests/... ./hack/mkimage/... ./hack/doccheck/... ./test/framework/... ./test/images/...
	$(GO) test -count=1 -tags bench -skip '^TestBenchmark$$' ./test/benchmark/

test-binaries: ## Build kube-apiserver, kube-controller-manager, kubectl, kubelet, kube-proxy, kube-scheduler, etcd, OCM's registration, work, registration-operator, addon and placement, and ocm-webhooks, from source (cached).
	hack/build-test-binaries.sh

# Integration packages run in two lanes (hack/test-integration.sh): one at a time within a lane (-p 1: each
# starts several apiservers and the machine has 2 cores), the node suite's lane beside the control-plane suites.
test-integration: ## Integration suites on real apiservers, etcd, kube-controller-manager and OCM's hub controller, and the node suite's kubelet (installs containerd, runc, CNI plugins and iptables from Debian when missing; root).
	hack/install-node-deps.sh
	assets="$$(hack/build-test-binaries.sh | tail -n1)" || exit 1; \
	KUBEBUILDER_ASSETS="$$assets" GO="$(GO)" INTEGRATION_TIMEOUT="$(INTEGRATION_TIMEOUT)" hack/test-integration.sh

chaos: ## Seeded partition schedules on the test bed (CHAOS_SEEDS, comma-separated, default 1..30; CHAOS_STEPS, default 16); report in _output/chaos-report.txt. Not part of make test, which runs a fixed subset.
	assets="$$(hack/build-test-binaries.sh | tail -n1)" || exit 1; \
	CHAOS_SEEDS="$${CHAOS_SEEDS:-$$(seq -s, 1 30)}" CHAOS_STEPS="$${CHAOS_STEPS:-16}" CHAOS_REPORT="$${CHAOS_REPORT:-$(CURDIR)/_output/chaos-report.txt}" KUBEBUILDER_ASSETS="$$assets" \
		$(GO) test -count=1 -timeout 240m -run '^TestPartitionSchedules$$' -v ./test/integration/replicator/

verify: ## gofmt, go vet, vendor in sync, generated code up to date, README and docs name only links, targets and flags that exist.
	hack/verify.sh

update: ## Regenerate deepcopy, CRD and the FailoverConfig clientset.
	hack/update-codegen.sh

demo: ## Two hubs, a spoke, the agent, OCM's work agent and the replicator; hub A dies, the workloads stay; prints a timeline.
	hack/demo.sh

bench: ## Side-by-side benchmarks with OCM's agent; writes docs/benchmarks.md.
	hack/bench.sh

bench-profile: ## Join and memory scenarios once each, from a cold page cache, with heap profiles, RSS by mapping and RSS timelines (test/benchmark/profile_test.go).
	BENCH_PROFILE=1 BENCH_SCENARIOS=$${BENCH_SCENARIOS:-join,memory} BENCH_REPS=$${BENCH_REPS:-1} BENCH_OUT_DIR=$${BENCH_OUT_DIR:-$(CURDIR)/_output/bench-profile} hack/bench.sh

bench-replication: ## The hub-side replicator's benchmark alone, at 3500x10x2 then 1000x10x1 (BENCH_REPL_SIZES=CLUSTERSxWORKSxSTANDBYS,… overrides; about 40 min); writes docs/benchmarks-replication.md.
	hack/bench.sh replication

image: build ## Container image as an OCI/docker-archive tarball (no container engine needed); import with ctr images import.
	$(GO) run ./hack/mkimage -binary $(BIN_DIR)/klusterlet-failover -tag $(IMAGE_REF) -o $(IMAGE_TAR)

clean:
	rm -rf _output
