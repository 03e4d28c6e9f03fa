#!/usr/bin/env bash
# Prints the path of a promtool binary for the alert rules' tests (manifests/monitoring): the one on PATH, else
# one fetched when it is not cached: promtool from Debian's prometheus package, downloaded with apt-get download and unpacked into a
# cache outside the clone. Nothing is installed system-wide and no Prometheus server is started.
# Environment: KF_PROMTOOL_CACHE overrides the cache (default ${XDG_CACHE_HOME:-$HOME/.cache}/klusterlet-failover/promtool).
# Usage: PROMTOOL="$(hack/install-promtool.sh)"
set -euo pipefail

if command -v promtool >/dev/null 2>&1; then
  command -v promtool
  exit 0
fi
CACHE="${KF_PROMTOOL_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/klusterlet-failover/promtool}"
BIN="${CACHE}/promtool"
if [[ -x "${BIN}" ]] && "${BIN}" --version >/dev/null 2>&1; then
  echo "${BIN}"
  exit 0
fi
mkdir -p "${CACHE}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
cd "${work}"
if ! apt-get download prometheus >"${work}/apt.log" 2>&1; then
  # The package lists may be missing or stale (a fresh machine): read them, then try once more.
  apt-get update >>"${work}/apt.log" 2>&1 || true
  apt-get download prometheus >>"${work}/apt.log" 2>&1 || {
    tail -n 20 "${work}/apt.log" >&2
    echo "install-promtool: apt-get download prometheus failed" >&2
    exit 1
  }
fi
deb="$(ls "${work}"/prometheus_*.deb)"
dpkg-deb -x "${deb}" "${work}/root"
install -m 0755 "${work}/root/usr/bin/promtool" "${BIN}.tmp"
mv "${BIN}.tmp" "${BIN}"
echo "install-promtool: promtool from $(basename "${deb}") in ${CACHE}" >&2
echo "${BIN}"
