#!/usr/bin/env bash
# make demo: a managed cluster that survives the loss of its hub. Two real OCM hubs and a spoke on loopback; the
# klusterlet-failover agent (hub-a primary, hub-b in a FailoverConfig) and OCM's work agent on the spoke; the
# klusterlet-failover replicator keeping hub-b in step; a ManifestWork on hub-a; hub-a's apiserver stopped; the
# agent and the work agent move to hub-b and the spoke's workloads keep their UIDs; hub-a comes back.
#
# The terminal shows the timeline only and ends with
#   failover: primary -> hub-b in N.N s (timeout T s); workloads kept 2/2, same UIDs; replication lag p99 X s (max of N objects)
# Before that, one progress line while it compiles (the agent, the demo, the test-bed binaries the cache lacks);
# each compile's output goes to build/ in the log folder. go test's whole output (demo.out), the timeline
# (timeline.txt) and every process's log go to the log folder too.
# DEMO_NONINTERACTIVE=1 skips the pause between compiling and starting the hubs. KF_BUILD_PARALLEL=0 compiles one
# thing after the other (see hack/lib/go-build.sh). DEMO_HUB_CONNECTION_TIMEOUT_SECONDS (default 30).
# DEMO_SWITCH_BACK=1 adds a planned switch back to hub-a at the end (slower: see test/demo/demo_test.go).
# DEMO_LOG_DIR overrides the log folder. Ports are chosen free by the kernel. Exits non-zero if any step fails;
# stops everything it started.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# shellcheck source=hack/lib/go-build.sh
source hack/lib/go-build.sh

# The test-bed binaries the demo runs: etcd and kube-apiserver for each hub and the spoke, kube-controller-manager
# (CSR signing) and OCM's registration (its hub controller) for each hub, OCM's work agent on the spoke.
DEMO_BINARIES=(kube-apiserver kube-controller-manager etcd registration work)

# The Makefile's Go settings (make demo runs this script with them), for a run of hack/demo.sh by hand: with the
# same flags as make build and make test, every package compiles once into Go's build cache.
export CGO_ENABLED=0
[[ " ${GOFLAGS:-$(go env GOFLAGS)} " == *" -trimpath "* ]] || export GOFLAGS="$(go env GOFLAGS) -trimpath"

started=$(date +%s)
logs="${DEMO_LOG_DIR:-$(pwd)/_output/demo-logs/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "${logs}"
echo "demo: logs go to ${logs}"

# Compiling: the agent (make build), then the demo's test binary (which reuses the agent's packages), and the
# test-bed binaries the cache entry lacks, at the same time when the memory allows (on 2 cores the builds fill
# the cores where one alone leaves one idle: module downloads, large packages, links). One progress line shows
# them all; each compile's output is in ${logs}/build/<name>.out.
progress_init "${logs}/build"
testbed=()
assets="$(hack/build-test-binaries.sh --check "${DEMO_BINARIES[@]}" 2>/dev/null)" || testbed=("${DEMO_BINARIES[@]}")
parallel="$(build_parallel)"
echo "demo: compiling the agent (agent), the demo (demo)${testbed[*]:+ and the test-bed binaries it runs (${testbed[*]})}; what Go's build cache holds is reused; the first run on 2 cores takes about 15 minutes"
progress_register agent demo
pids=()
# Each job in its own session (setsid), so that stopping the demo stops every go build it started.
trap 'for p in "${pids[@]}"; do kill -- "-${p}" 2>/dev/null || true; done' EXIT
export logs
compile_demo='tracked agent . ./cmd/klusterlet-failover -- make --no-print-directory build GO_BUILD_FLAGS=-v &&
  tracked demo . "-test -tags demo ./test/demo/" -- go test -tags demo -c -x -o "${logs}/demo.test" ./test/demo/'
build_testbed='KF_PROGRESS_DIR="${PROGRESS_DIR}" hack/build-test-binaries.sh "$@" >"${PROGRESS_DIR}/test-binaries.stdout" 2>"${PROGRESS_DIR}/test-binaries.log"'
if (( ${#testbed[@]} == 0 )); then
  setsid bash -c "source hack/lib/go-build.sh; ${compile_demo}" </dev/null >/dev/null 2>&1 &
  pids+=($!)
elif (( parallel )); then
  setsid bash -c "source hack/lib/go-build.sh; ${compile_demo}" </dev/null >/dev/null 2>&1 &
  pids+=($!)
  setsid bash -c "${build_testbed}" build-testbed "${testbed[@]}" </dev/null >/dev/null 2>&1 &
  pids+=($!)
else
  setsid bash -c "source hack/lib/go-build.sh; { ${compile_demo}; } && ${build_testbed}" build-testbed "${testbed[@]}" \
    </dev/null >/dev/null 2>&1 &
  pids+=($!)
fi
progress_watch 1 "demo: compiling" "${started}" "${pids[@]}"
for p in "${pids[@]}"; do wait "${p}" || true; done
trap - EXIT
pids=()
for name in agent demo; do
  if [[ "$(cat "${PROGRESS_DIR}/${name}.rc" 2>/dev/null)" != 0 ]]; then
    tail -n 30 "${PROGRESS_DIR}/${name}.out" >&2 2>/dev/null || true
    echo "demo: FAILED: compiling ${name} (see ${PROGRESS_DIR}/${name}.out)" >&2
    exit 1
  fi
done
if (( ${#testbed[@]} )); then
  if ! assets="$(tail -n1 "${PROGRESS_DIR}/test-binaries.stdout" 2>/dev/null)" || [[ -z "${assets}" ]]; then
    tail -n 30 "${PROGRESS_DIR}/test-binaries.log" >&2
    echo "demo: FAILED: building the test-bed binaries (see ${PROGRESS_DIR}/test-binaries.log)" >&2
    exit 1
  fi
fi
names="$(cat "${PROGRESS_DIR}/names")"
# shellcheck disable=SC2086 # names is a list of words.
echo "demo: compiled in $(fmt_secs $(( $(date +%s) - started ))): $(progress_summary ${names})"

if [[ -z "${DEMO_NONINTERACTIVE:-}" && -t 0 ]]; then
  read -r -p "demo: press Enter to start two hubs and a spoke, about 2 minutes (Ctrl-C stops everything) " _
fi
export KUBEBUILDER_ASSETS="${assets}" KF_TEST_LOG_DIR="${logs}" KF_AGENT_BINARY="$(pwd)/_output/bin/klusterlet-failover"
export DEMO_TIMELINE_FILE="${logs}/timeline.txt"
: >"${DEMO_TIMELINE_FILE}"
echo "demo: starting; go test's whole output goes to ${logs}/demo.out"
# The test binary itself (not go test) runs in the background, so that Ctrl-C reaches it: it then fails the
# test and the cleanups stop every process it started.
(cd test/demo && exec "${logs}/demo.test" -test.v -test.count=1 -test.timeout=15m -test.run '^TestDemo$') >>"${logs}/demo.out" 2>&1 &
test_pid=$!
trap 'kill -INT "${test_pid}" 2>/dev/null || true' INT TERM
tail -n +1 -f --pid="${test_pid}" "${DEMO_TIMELINE_FILE}" &
tail_pid=$!
set +e
wait "${test_pid}"
status=$?
set -e
wait "${tail_pid}" 2>/dev/null || true
trap - INT TERM
echo "demo: $(( $(date +%s) - started )) s in all"
if [[ ${status} -ne 0 ]] || ! grep -q '^failover: primary -> hub-b in' "${DEMO_TIMELINE_FILE}"; then
  if ! grep -q 'FAILED' "${DEMO_TIMELINE_FILE}"; then
    # A failure before the timeline started (compilation, a panic): show go test's last lines.
    tail -n 30 "${logs}/demo.out" >&2
  fi
  echo "demo: FAILED (go test's whole output: ${logs}/demo.out)" >&2
  exit 1
fi
