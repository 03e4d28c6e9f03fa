#!/usr/bin/env bash
# Builds the real control-plane binaries the test bed runs, from source, through the Go module proxy:
#   kube-apiserver, kube-controller-manager, kubectl  (k8s.io/kubernetes, hack/tools/kube)
#   etcd                                              (go.etcd.io/etcd/server/v3, hack/tools/etcd)
#   registration, work, registration-operator, addon  (open-cluster-management.io/ocm, hack/tools/ocm)
# into a cache outside the clone, keyed by the versions and the tool modules' go.sum, so that a fresh clone
# (CI's) reuses it. A missing or partial entry is rebuilt, never trusted.
#
# Usage: hack/build-test-binaries.sh            build if needed, print the binaries' directory on the last line
#        hack/build-test-binaries.sh --check    exit 0 if the cache entry is complete, 1 otherwise; no build
# Environment: KF_TEST_BINARIES_CACHE overrides the cache root
#              (default ${XDG_CACHE_HOME:-$HOME/.cache}/klusterlet-failover/test-binaries).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${ROOT}/hack/tools"
KUBE_VERSION="v1.34.3"
ETCD_VERSION="v3.6.6"
OCM_VERSION="v1.2.0"
BINARIES=(kube-apiserver kube-controller-manager kubectl etcd registration work registration-operator addon)

die() { echo "build-test-binaries: $*" >&2; exit 1; }

command -v go >/dev/null 2>&1 || die "no Go toolchain on PATH: install Go (1.24 or newer) to build the test-bed binaries"

# The key covers what decides the binaries' content: versions and the tool modules' go.mod/go.sum. Bump
# BUILD_REVISION when the build flags below change.
BUILD_REVISION=3
sum_hash="$(cat "${TOOLS}/kube/go.mod" "${TOOLS}/kube/go.sum" "${TOOLS}/etcd/go.mod" "${TOOLS}/etcd/go.sum" "${TOOLS}/ocm/go.mod" "${TOOLS}/ocm/go.sum" | sha256sum | cut -c1-12)"
KEY="kube-${KUBE_VERSION}_etcd-${ETCD_VERSION}_ocm-${OCM_VERSION}_r${BUILD_REVISION}_${sum_hash}"
CACHE_ROOT="${KF_TEST_BINARIES_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/klusterlet-failover/test-binaries}"
DIR="${CACHE_ROOT}/${KEY}"
STAMP="${DIR}/.complete"

# complete returns 0 when every binary is present and matches the checksums recorded when it was built.
complete() {
  [[ -f "${STAMP}" ]] || return 1
  (cd "${DIR}" && sha256sum --quiet --check .complete >/dev/null 2>&1) || return 1
  for b in "${BINARIES[@]}"; do [[ -x "${DIR}/${b}" ]] || return 1; done
}

if [[ "${1:-}" == "--check" ]]; then
  complete && { echo "${DIR}"; exit 0; }
  exit 1
fi

if complete; then
  echo "test binaries: reusing ${DIR}" >&2
  echo "${DIR}"
  exit 0
fi

echo "test binaries: building into ${DIR} (a cold build takes 5-10 minutes on 2 idle cores, much longer under load)" >&2
mkdir -p "${CACHE_ROOT}"
STAGE="$(mktemp -d "${CACHE_ROOT}/.stage-XXXXXX")"
trap 'rm -rf "${STAGE}"' EXIT

export GOFLAGS=-mod=mod GONOSUMDB="${GONOSUMDB:+${GONOSUMDB},}sigs.k8s.io/about-api" CGO_ENABLED=0
kube_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X ${pkg}.gitVersion=${KUBE_VERSION} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=34 -X ${pkg}.gitTreeState=clean"
done

start=$(date +%s)
(cd "${TOOLS}/etcd" && go build -trimpath -ldflags "-s -w" -o "${STAGE}/etcd" go.etcd.io/etcd/server/v3) \
  || die "building etcd ${ETCD_VERSION} failed (see the go output above)"
(cd "${TOOLS}/kube" && go build -trimpath -ldflags "${kube_ldflags}" -o "${STAGE}/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl) \
  || die "building kube-apiserver/kube-controller-manager/kubectl ${KUBE_VERSION} failed (see the go output above)"
(cd "${TOOLS}/ocm" && go build -trimpath -ldflags "-s -w" -o "${STAGE}/" open-cluster-management.io/ocm/cmd/registration \
    open-cluster-management.io/ocm/cmd/work open-cluster-management.io/ocm/cmd/registration-operator \
    open-cluster-management.io/ocm/cmd/addon) \
  || die "building OCM registration/work/registration-operator/addon ${OCM_VERSION} failed (see the go output above)"

for b in "${BINARIES[@]}"; do [[ -x "${STAGE}/${b}" ]] || die "build produced no ${b}"; done
(cd "${STAGE}" && sha256sum "${BINARIES[@]}" > .complete)
rm -rf "${DIR}"
mv "${STAGE}" "${DIR}"
trap - EXIT
echo "test binaries: built in $(( $(date +%s) - start )) s" >&2
echo "${DIR}"
