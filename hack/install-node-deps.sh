#!/usr/bin/env bash
# Installs what the node suite (test/integration/node) needs from Debian's packages, when it is missing:
#   containerd (with ctr), runc, containernetworking-plugins (the CNI bridge, host-local, portmap and loopback
#   plugins in /usr/lib/cni), iptables and iproute2 (ip).
# Nothing else on the machine is configured: the test bed runs its own containerd with its own socket, root and
# CNI configuration, and never uses /etc/containerd or /etc/cni. Needs root (apt-get); prints what it installs.
# Usage: hack/install-node-deps.sh [--check]   --check: exit 1 and name what is missing, install nothing.
set -euo pipefail

packages=()
have() { command -v "$1" >/dev/null 2>&1 || [[ -x "/usr/sbin/$1" || -x "/sbin/$1" ]]; }
have containerd || packages+=(containerd)
have ctr || packages+=(containerd)
have runc || packages+=(runc)
have iptables || packages+=(iptables)
have ip || packages+=(iproute2)
for p in bridge host-local portmap loopback; do
  [[ -x "/usr/lib/cni/${p}" ]] || { packages+=(containernetworking-plugins); break; }
done
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u | sed '/^$/d')
if (( ${#packages[@]} == 0 )); then
  exit 0
fi
if [[ "${1:-}" == "--check" ]]; then
  echo "node suite: missing Debian packages: ${packages[*]} (hack/install-node-deps.sh installs them, as root)" >&2
  exit 1
fi
if [[ "$(id -u)" != 0 ]]; then
  echo "node suite: the Debian packages ${packages[*]} are missing and installing them needs root" >&2
  exit 1
fi
echo "node suite: installing Debian packages ${packages[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends "${packages[@]}" >/tmp/install-node-deps.log 2>&1; then
  apt-get update >>/tmp/install-node-deps.log 2>&1 || true
  apt-get install -y --no-install-recommends "${packages[@]}" >>/tmp/install-node-deps.log 2>&1 || {
    tail -n 20 /tmp/install-node-deps.log >&2
    echo "node suite: installing ${packages[*]} failed (log /tmp/install-node-deps.log)" >&2
    exit 1
  }
fi
echo "node suite: installed ${packages[*]}" >&2
