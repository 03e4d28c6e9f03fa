#!/usr/bin/env bash
# Builds the real control-plane binaries the test bed runs, from source, through the Go module proxy:
#   kube-apiserver, kube-controller-manager, kubectl  (k8s.io/kubernetes, hack/tools/kube; "kube" below)
#   kubelet, kube-proxy, kube-scheduler               (the same module: the node of the node suite)
#   etcd                                              (go.etcd.io/etcd/server/v3, hack/tools/etcd)
#   registration, work, registration-operator, addon, placement  (open-cluster-management.io/ocm, hack/tools/ocm; "ocm")
#   ocm-webhooks                                      (hack/tools/ocm/ocm-webhooks: OCM's webhook handlers on a given port)
# and downloads the modules of hack/tools/crds (CRD files only: governance's Policy, PlacementBinding and
# PolicySet, ManagedServiceAccount) into Go's module cache.
# into a cache outside the clone, keyed by the versions and the tool modules' go.sum, so that a fresh clone
# (CI's) reuses it. An entry may hold some of the binaries (make demo builds only those it runs); .complete
# records the checksum of each one it holds, and a binary that is missing or does not match is rebuilt, never
# trusted. ocm-webhooks is also rebuilt when its source differs from the one ocm-webhooks.source records (an
# entry holds one build of it: two checkouts with different sources rebuild it in turn).
#
# Usage: hack/build-test-binaries.sh [NAME...]          build the named binaries (default: all) the entry lacks,
#                                                       print the entry's directory on the last line
#        hack/build-test-binaries.sh --check [NAME...]  exit 0 and print the directory if the entry holds the named
#                                                       binaries (default: all), 1 otherwise; no build
# While building, a progress line on stderr (in place on a terminal) counts each module's packages.
# Environment: KF_TEST_BINARIES_CACHE overrides the cache root
#              (default ${XDG_CACHE_HOME:-$HOME/.cache}/klusterlet-failover/test-binaries).
#              KF_BUILD_PARALLEL=1 builds the modules (kube, etcd, ocm) at the same time, 0 one after the other;
#              by default at the same time when at least 8 GiB of memory are available.
#              KF_PROGRESS_DIR: the caller (hack/demo.sh) shows the progress line from the state files there.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${ROOT}/hack/tools"
KUBE_VERSION="v1.34.3"
ETCD_VERSION="v3.6.6"
OCM_VERSION="v1.2.0"
BINARIES=(kube-apiserver kube-controller-manager kubectl kubelet kube-proxy kube-scheduler etcd registration work registration-operator addon placement ocm-webhooks)
# shellcheck source=hack/lib/go-build.sh
source "${ROOT}/hack/lib/go-build.sh"

die() { echo "build-test-binaries: $*" >&2; exit 1; }

# module_of NAME: the tool module (under hack/tools) that builds the binary NAME.
module_of() {
  case "$1" in
    kube-apiserver | kube-controller-manager | kubectl | kubelet | kube-proxy | kube-scheduler) echo kube ;;
    etcd) echo etcd ;;
    registration | work | registration-operator | addon | placement | ocm-webhooks) echo ocm ;;
    *) return 1 ;;
  esac
}

# package_of NAME: the main package of the binary NAME.
package_of() {
  case "$(module_of "$1")" in
    kube) echo "k8s.io/kubernetes/cmd/$1" ;;
    etcd) echo go.etcd.io/etcd/server/v3 ;;
    ocm)
      if [[ "$1" == ocm-webhooks ]]; then
        echo "github.com/klusterlet-failover/klusterlet-failover/hack/tools/ocm/ocm-webhooks"
      else
        echo "open-cluster-management.io/ocm/cmd/$1"
      fi ;;
  esac
}

check=0
if [[ "${1:-}" == "--check" ]]; then
  check=1
  shift
fi
wanted=("$@")
(( ${#wanted[@]} )) || wanted=("${BINARIES[@]}")
for b in "${wanted[@]}"; do
  module_of "${b}" >/dev/null || die "unknown binary ${b} (known: ${BINARIES[*]})"
done

# The key covers what decides the binaries' content: versions and the tool modules' go.mod/go.sum. Bump
# BUILD_REVISION when the build flags below change.
BUILD_REVISION=3
sum_hash="$(cat "${TOOLS}/kube/go.mod" "${TOOLS}/kube/go.sum" "${TOOLS}/etcd/go.mod" "${TOOLS}/etcd/go.sum" "${TOOLS}/ocm/go.mod" "${TOOLS}/ocm/go.sum" | sha256sum | cut -c1-12)"
# ocm-webhooks is built from this repository's source: the entry holds it only for the source it was built
# from (ocm-webhooks.source records that source's checksum), so that editing it rebuilds it alone.
WEBHOOKS_SOURCE_SUM="$(cat "${TOOLS}"/ocm/ocm-webhooks/*.go | sha256sum | cut -c1-64)"
KEY="kube-${KUBE_VERSION}_etcd-${ETCD_VERSION}_ocm-${OCM_VERSION}_r${BUILD_REVISION}_${sum_hash}"
CACHE_ROOT="${KF_TEST_BINARIES_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/klusterlet-failover/test-binaries}"
DIR="${CACHE_ROOT}/${KEY}"
STAMP="${DIR}/.complete"

# holds NAME: 0 when the entry has NAME executable and matching the checksum .complete records for it.
holds() {
  local line
  [[ -x "${DIR}/$1" && -f "${STAMP}" ]] || return 1
  if [[ "$1" == ocm-webhooks ]]; then
    [[ "$(cat "${DIR}/ocm-webhooks.source" 2>/dev/null)" == "${WEBHOOKS_SOURCE_SUM}" ]] || return 1
  fi
  line="$(grep -E "^[0-9a-f]{64}  $1\$" "${STAMP}" | tail -n1)" || return 1
  (cd "${DIR}" && sha256sum --quiet --check <<<"${line}" >/dev/null 2>&1)
}

missing=()
for b in "${wanted[@]}"; do holds "${b}" || missing+=("${b}"); done

if (( check )); then
  (( ${#missing[@]} == 0 )) && { echo "${DIR}"; exit 0; }
  exit 1
fi

# The modules of hack/tools/crds (CRD files only): the test bed reads them from Go's module cache
# (test/framework, with GOPROXY=off), so they are downloaded here, before any test runs; a no-op once cached.
(cd "${TOOLS}/crds" && GOFLAGS=-mod=mod go mod download) || die "downloading the CRD modules of hack/tools/crds failed"

if (( ${#missing[@]} == 0 )); then
  echo "test binaries: reusing ${DIR}" >&2
  echo "${DIR}"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "no Go toolchain on PATH: install Go (1.24 or newer) to build the test-bed binaries"

# The modules to build, in this order (kube is the longest: it starts first), and the binaries of each.
modules=()
declare -A binaries_of=()
for m in kube etcd ocm; do
  for b in "${missing[@]}"; do
    [[ "$(module_of "${b}")" == "${m}" ]] && binaries_of[${m}]+="${binaries_of[${m}]:+ }${b}"
  done
  [[ -n "${binaries_of[${m}]:-}" ]] && modules+=("${m}")
done

parallel="$(build_parallel)"

desc=""
for m in "${modules[@]}"; do desc+="${desc:+; }${m}: ${binaries_of[${m}]}"; done
echo "test binaries: building ${desc} into ${DIR} ($( (( parallel )) && echo "modules at the same time" || echo "one module after the other"))" >&2
mkdir -p "${CACHE_ROOT}"
STAGE="$(mktemp -d "${CACHE_ROOT}/.stage-XXXXXX")"
own_progress=0
if [[ -n "${KF_PROGRESS_DIR:-}" ]]; then
  progress_init "${KF_PROGRESS_DIR}"
else
  progress_init "${STAGE}/.progress"
  own_progress=1
fi
progress_register "${modules[@]}"
pids=()
# On any exit (a failed build, Ctrl-C), stop the builds still running and drop the stage.
trap 'for p in "${pids[@]}"; do kill "${p}" 2>/dev/null || true; done; rm -rf "${STAGE}"' EXIT

export GOFLAGS="-mod=mod -trimpath" GONOSUMDB="${GONOSUMDB:+${GONOSUMDB},}sigs.k8s.io/about-api" CGO_ENABLED=0
kube_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X ${pkg}.gitVersion=${KUBE_VERSION} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=34 -X ${pkg}.gitTreeState=clean"
done

# build_module M: builds M's missing binaries into the stage, as the tracked compile M.
build_module() {
  local m="$1" ldflags="-s -w" out="${STAGE}/" pkgs=() b
  for b in ${binaries_of[${m}]}; do pkgs+=("$(package_of "${b}")"); done
  [[ "${m}" == kube ]] && ldflags="${kube_ldflags}"
  # etcd's main package is go.etcd.io/etcd/server/v3: a directory output would name the binary v3.
  [[ "${m}" == etcd ]] && out="${STAGE}/etcd"
  tracked "${m}" "${TOOLS}/${m}" "${pkgs[*]}" -- go build -v -ldflags "${ldflags}" -o "${out}" "${pkgs[@]}"
}

start=$(date +%s)
failed=()
if (( parallel )); then
  for m in "${modules[@]}"; do
    build_module "${m}" &
    pids+=($!)
  done
else
  (for m in "${modules[@]}"; do build_module "${m}" || exit 1; done) &
  pids+=($!)
fi
if (( own_progress )); then
  progress_watch 2 "test binaries: compiling" "${start}" "${pids[@]}"
fi
for p in "${pids[@]}"; do wait "${p}" || true; done
pids=()
for m in "${modules[@]}"; do
  [[ "$(cat "${PROGRESS_DIR}/${m}.rc" 2>/dev/null)" == 0 ]] || failed+=("${m}")
done
if (( ${#failed[@]} )); then
  for m in "${failed[@]}"; do
    echo "test binaries: building ${binaries_of[${m}]} (${m}) failed; the go output's end:" >&2
    tail -n 30 "${PROGRESS_DIR}/${m}.out" >&2 2>/dev/null || true
  done
  die "building ${failed[*]} failed (kube ${KUBE_VERSION}, etcd ${ETCD_VERSION}, ocm ${OCM_VERSION})"
fi
for b in "${missing[@]}"; do [[ -x "${STAGE}/${b}" ]] || die "build produced no ${b}"; done

# Into the entry under a lock, so that two builds at once do not lose each other's checksums: the binaries by
# rename (atomic; a running one keeps its old file), then .complete rewritten with the checksums of the binaries
# built here and the earlier lines of the others.
mkdir -p "${DIR}"
(
  flock 9
  (cd "${STAGE}" && sha256sum "${missing[@]}") >"${STAGE}/.complete.new"
  if [[ -f "${STAMP}" ]]; then
    grep -vE "  ($(IFS='|'; echo "${missing[*]}"))\$" "${STAMP}" >>"${STAGE}/.complete.new" || true
  fi
  for b in "${missing[@]}"; do mv -f "${STAGE}/${b}" "${DIR}/${b}"; done
  for b in "${missing[@]}"; do
    if [[ "${b}" == ocm-webhooks ]]; then echo "${WEBHOOKS_SOURCE_SUM}" >"${DIR}/ocm-webhooks.source"; fi
  done
  mv -f "${STAGE}/.complete.new" "${STAMP}"
) 9>"${CACHE_ROOT}/.lock"
echo "test binaries: built ${missing[*]} in $(( $(date +%s) - start )) s ($(progress_summary "${modules[@]}"))" >&2
echo "${DIR}"
