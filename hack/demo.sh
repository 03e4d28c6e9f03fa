#!/usr/bin/env bash
# make demo: a managed cluster that survives the loss of its hub. Two real OCM hubs and a spoke on loopback; the
# klusterlet-failover agent (hub-a primary, hub-b in a FailoverConfig) and OCM's work agent on the spoke; the
# klusterlet-failover replicator keeping hub-b in step; a ManifestWork on hub-a; hub-a's apiserver stopped; the
# agent and the work agent move to hub-b and the spoke's workloads keep their UIDs; hub-a comes back.
#
# The terminal shows the timeline only and ends with
#   failover: primary -> hub-b in N.N s (timeout T s); workloads kept 2/2, same UIDs; replication lag p99 X s (max of N objects)
# go test's whole output (demo.out), the timeline (timeline.txt) and every process's log go to the log folder.
# DEMO_NONINTERACTIVE=1 skips the pause at the start. DEMO_HUB_CONNECTION_TIMEOUT_SECONDS (default 30).
# DEMO_SWITCH_BACK=1 adds a planned switch back to hub-a at the end (slower: see test/demo/demo_test.go).
# DEMO_LOG_DIR overrides the log folder. Ports are chosen free by the kernel. Exits non-zero if any step fails;
# stops everything it started.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

started=$(date +%s)
logs="${DEMO_LOG_DIR:-$(pwd)/_output/demo-logs/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "${logs}"
echo "demo: logs go to ${logs}"
make --no-print-directory build >"${logs}/build.log" 2>&1 || { cat "${logs}/build.log" >&2; echo "demo: FAILED: make build" >&2; exit 1; }

# The test-bed binaries: reused from the cache, or built once (minutes) with a progress line.
if ! assets="$(hack/build-test-binaries.sh --check 2>/dev/null)"; then
  echo "demo: building the test-bed binaries (kube-apiserver, kube-controller-manager, kubectl, etcd, OCM's registration, work, registration-operator) from source, first run only; output in ${logs}/build-test-binaries.log"
  # In its own process group, so that stopping the demo stops every go build it started.
  setsid hack/build-test-binaries.sh >"${logs}/build-test-binaries.out" 2>"${logs}/build-test-binaries.log" &
  build_pid=$!
  trap 'kill -- "-${build_pid}" 2>/dev/null || true' EXIT
  cache_root="${KF_TEST_BINARIES_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/klusterlet-failover/test-binaries}"
  b0=$(date +%s)
  while kill -0 "${build_pid}" 2>/dev/null; do
    elapsed=$(( $(date +%s) - b0 ))
    stage="$(ls -td "${cache_root}"/.stage-* 2>/dev/null | head -n1 || true)"
    built=""
    [[ -n "${stage}" ]] && built="$(ls "${stage}" 2>/dev/null | tr '\n' ' ')"
    line="$(printf 'demo: building test-bed binaries: %dm%02ds, %d/7 built %s' $((elapsed / 60)) $((elapsed % 60)) "$(wc -w <<<"${built}")" "${built}")"
    if [[ -t 1 ]]; then printf '\r%-150s' "${line}"; elif (( elapsed % 30 == 0 )); then echo "${line}"; fi
    sleep 1
  done
  [[ -t 1 ]] && printf '\n'
  trap - EXIT
  if ! wait "${build_pid}"; then
    tail -n 30 "${logs}/build-test-binaries.log" >&2
    echo "demo: FAILED: building the test-bed binaries (see ${logs}/build-test-binaries.log)" >&2
    exit 1
  fi
  assets="$(tail -n1 "${logs}/build-test-binaries.out")"
  echo "demo: test-bed binaries built in $(( $(date +%s) - b0 )) s into ${assets}"
fi

if [[ -z "${DEMO_NONINTERACTIVE:-}" && -t 0 ]]; then
  read -r -p "demo: press Enter to start two hubs and a spoke (Ctrl-C stops everything) " _
fi
export KUBEBUILDER_ASSETS="${assets}" KF_TEST_LOG_DIR="${logs}" KF_AGENT_BINARY="$(pwd)/_output/bin/klusterlet-failover"
export DEMO_TIMELINE_FILE="${logs}/timeline.txt"
: >"${DEMO_TIMELINE_FILE}"
echo "demo: compiling the demo; go test's whole output goes to ${logs}/demo.out"
go test -tags demo -c -o "${logs}/demo.test" ./test/demo/ >"${logs}/demo.out" 2>&1 \
  || { cat "${logs}/demo.out" >&2; echo "demo: FAILED: compiling test/demo" >&2; exit 1; }
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
