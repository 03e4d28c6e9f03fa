#!/usr/bin/env bash
# make demo: two real OCM hubs and a spoke on loopback, the agent binary joins hub-a, hub-a's apiserver is stopped,
# the agent fails over to hub-b. Prints a timeline and ends with "failover: primary -> hub-b in N.N s (timeout T s)".
# DEMO_NONINTERACTIVE=1 only skips the pause at the start. DEMO_HUB_CONNECTION_TIMEOUT_SECONDS (default 30).
# Ports are chosen free by the kernel at start. Exits non-zero if any step fails; stops everything it started.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

logs="${DEMO_LOG_DIR:-$(pwd)/_output/demo-logs/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "${logs}"
echo "demo: logs go to ${logs}"
make --no-print-directory build
assets="$(hack/build-test-binaries.sh | tail -n1)"
if [[ -z "${DEMO_NONINTERACTIVE:-}" && -t 0 ]]; then
  read -r -p "demo: press Enter to start two hubs and a spoke (Ctrl-C stops everything) " _
fi
export KUBEBUILDER_ASSETS="${assets}" KF_TEST_LOG_DIR="${logs}" KF_AGENT_BINARY="$(pwd)/_output/bin/klusterlet-failover"
set +e
go test -tags demo -count=1 -v -timeout 20m -run '^TestDemo$' ./test/demo/ 2>&1 | tee "${logs}/demo.out"
status=${PIPESTATUS[0]}
set -e
if ! grep -q '^failover: primary -> hub-b in' "${logs}/demo.out"; then
  echo "demo: FAILED (see ${logs}/demo.out)" >&2
  exit 1
fi
exit "${status}"
