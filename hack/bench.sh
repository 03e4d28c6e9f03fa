#!/usr/bin/env bash
# make bench: klusterlet-failover's agent binary and OCM's registration agent side by side on the real test bed
# (test/benchmark, build tag `bench`): join latency, failover time, hub traffic, memory, simulated scale, and memory
# as a pod on a real node (the pods scenario: needs root, like the node suite), and how long our agent takes to see
# its hub lost per kind of fault and which outages it rides out (the detection scenario: root, iptables). Writes
# docs/benchmarks.md and docs/benchmarks.json (BENCH_OUT_DIR overrides the directory) and keeps every log under
# _output/bench-logs/<timestamp> (BENCH_LOG_DIR overrides it). The BENCH_* variables documented in
# test/benchmark/bench_test.go pass through (e.g. BENCH_SCENARIOS=join BENCH_REPS=1 for a quick run).
# Takes about 28 minutes on two cores with the defaults (10-minute traffic window, N=10,50,200; the failover scenario and
# the small scale batches run during the traffic window), plus the compile of the benchmark on a cold build cache.
# Exits non-zero if a scenario failed; the report still lists what was measured and why the rest is missing.
#
# make bench-profile: the join and memory scenarios once (BENCH_PROFILE=1; report in _output/bench-profile), with each
# agent's RSS by mapping and RSS timeline (VmRSS every 5 ms from exec) and our agent's heap profile next to its log,
# each agent started from a cold page cache of both binaries, as in make bench (test/benchmark/profile_test.go).
#
# make bench-replication (hack/bench.sh replication): only the hub-side replicator's scenario, at two sizes one after
# the other (BENCH_REPL_SIZES, default 3500x10x2,1000x10x1: clusters × ManifestWorks × standby hubs, plus a
# ManagedClusterAddOn and a Placement per 10 clusters), each on hubs of its own: hub A, the standbys, the replicator
# binary between them: initial sync time against the write floor (a plain client writing the same objects to the
# standbys at the replicator's QPS), replication lag of creates, updates and deletes at 100 changes/s on every
# standby, the replicator's RSS and CPU (idle too), requests to each hub, a hub loss (hub A stopped, every lease
# moved to hub B: time until the clusters' state flows from B, peak RSS meanwhile), beside ACM backup's recovery
# point and the previous run (docs/benchmarks-replication-previous.json). Writes docs/benchmarks-replication.md and
# .json (docs/benchmarks.{md,json} stay as they are). Settings BENCH_REPL_SIZES, BENCH_REPL_RATE, BENCH_REPL_WINDOW,
# BENCH_REPL_SYNC_TIMEOUT, BENCH_REPL_FLIP_TIMEOUT (see test/benchmark/bench_test.go), e.g.
# BENCH_REPL_SIZES=40x3x2,20x3x1 BENCH_REPL_WINDOW=10s for a quick run; about 40 minutes with the defaults.
# BENCH_SCENARIOS may also name replication next to the agent scenarios in a plain `make bench`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target="make bench"
if [[ "${1:-}" == "replication" ]]; then
  target="make bench-replication"
fi

logs="${BENCH_LOG_DIR:-$(pwd)/_output/bench-logs/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "${logs}"
echo "bench: logs go to ${logs}"
started=$(date +%s)
make --no-print-directory build
assets="$(hack/build-test-binaries.sh | tail -n1)"
# The pods scenario runs a node (root; containerd, runc, CNI plugins and iptables from Debian); the detection
# scenario cuts links with iptables.
if [[ "${target}" == "make bench" && ( ",${BENCH_SCENARIOS:-pods}," == *,pods,* || ",${BENCH_SCENARIOS:-detection}," == *,detection,* ) ]]; then
  hack/install-node-deps.sh
  # Link cuts a killed run left behind (test/benchmark/detection_test.go names them kf-bench-linkcut-<port>).
  { iptables -w -S INPUT || true; } | { grep -e '--comment kf-bench-linkcut-' || true; } | sed 's/^-A /-D /' | while read -r rule; do
    # shellcheck disable=SC2086 # the rule's words are iptables arguments
    iptables -w ${rule}
  done
fi

# The command line recorded in the report: the target plus the BENCH_* settings given to it.
command="${target}"
for v in $(compgen -e | grep '^BENCH_' | grep -v -e '^BENCH_COMMAND$' -e '^BENCH_LOG_DIR$' -e '^BENCH_OUT_DIR$' | sort); do
  command="${v}=${!v} ${command}"
done

if [[ "${target}" == "make bench-replication" ]]; then
  export BENCH_SCENARIOS=replication
fi
export KUBEBUILDER_ASSETS="${assets}" KF_TEST_LOG_DIR="${logs}" BENCH_LOG_DIR="${logs}/agents" \
  KF_AGENT_BINARY="$(pwd)/_output/bin/klusterlet-failover" BENCH_OUT_DIR="${BENCH_OUT_DIR:-$(pwd)/docs}" \
  BENCH_COMMAND="${BENCH_COMMAND:-${command}}"
set +e
go test -trimpath -tags bench -count=1 -v -parallel 4 -timeout "${BENCH_TIMEOUT:-90m}" -run '^TestBenchmark$' ./test/benchmark/ 2>&1 | tee "${logs}/bench.out"
status=${PIPESTATUS[0]}
set -e
reports="benchmarks.md and benchmarks.json"
case ",${BENCH_SCENARIOS:-}," in
  ,replication,) reports="benchmarks-replication.md and benchmarks-replication.json" ;;
  *,replication,*) reports="${reports}, benchmarks-replication.md and benchmarks-replication.json" ;;
esac
echo "bench: report in ${BENCH_OUT_DIR}/${reports}; took $(( $(date +%s) - started )) s; exit status ${status}"
exit "${status}"
