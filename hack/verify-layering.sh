#!/usr/bin/env bash
# Fails when a package under pkg/replicator (hub-side code) depends, directly or through other packages, on a
# package under pkg/klusterlet (the spoke agent): the replicator takes shared values from OCM's API
# (open-cluster-management.io/api) or from pkg/apis, never from the agent.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

module="$(go list -m)"
fail=0
for pkg in $(go list ./pkg/replicator/...); do
  bad="$(go list -deps "${pkg}" | grep -E "^${module}/pkg/klusterlet(/|$)" || true)"
  if [[ -n "${bad}" ]]; then
    echo "verify-layering: ${pkg} depends on the spoke agent's packages (take the value from OCM's API or pkg/apis):"
    echo "${bad}" | sed 's/^/  /'
    fail=1
  fi
done
exit "${fail}"
