#!/usr/bin/env bash
# Regenerates the code derived from the API types in pkg/apis:
#   pkg/apis/<group>/<version>/zz_generated.deepcopy.go   controller-gen object
#   manifests/crd/*.yaml                                   controller-gen crd (OpenAPI schema + CEL rules)
#   pkg/client/clientset/versioned                         client-gen
#   pkg/client/listers                                     lister-gen
#   pkg/client/informers/externalversions                  informer-gen
# The generators are built from the tool module hack/tools/codegen (controller-tools, k8s.io/code-generator)
# into a cache outside the clone, keyed by that module's go.mod/go.sum and the Go version, so that a fresh
# clone reuses it; a missing or partial cache entry is rebuilt, never trusted.
#
# Usage: hack/update-codegen.sh                       regenerate in place
#        hack/update-codegen.sh --output-root DIR     write the generated files under DIR instead (same
#                                                     relative paths; used by hack/verify-codegen.sh)
#        hack/update-codegen.sh --print-bin-dir       build the generators if needed, print their directory
# Environment: KF_CODEGEN_CACHE overrides the cache root
#              (default ${XDG_CACHE_HOME:-$HOME/.cache}/klusterlet-failover/codegen-bin).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${ROOT}/hack/tools/codegen"
MODULE="github.com/klusterlet-failover/klusterlet-failover"
BOILERPLATE="${ROOT}/hack/boilerplate.go.txt"
BINARIES=(controller-gen client-gen lister-gen informer-gen)
TOOL_PKGS=(
  sigs.k8s.io/controller-tools/cmd/controller-gen
  k8s.io/code-generator/cmd/client-gen
  k8s.io/code-generator/cmd/lister-gen
  k8s.io/code-generator/cmd/informer-gen
)
export GOWORK=off

die() { echo "update-codegen: $*" >&2; exit 1; }

OUT="${ROOT}"
PRINT_BIN_DIR=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --output-root) [[ $# -ge 2 ]] || die "--output-root needs a directory"; OUT="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2 ;;
    --print-bin-dir) PRINT_BIN_DIR=true; shift ;;
    *) die "unknown argument $1 (see the usage at the top of $0)" ;;
  esac
done

command -v go >/dev/null 2>&1 || die "no Go toolchain on PATH"
start=$(date +%s)

# --- generators --------------------------------------------------------------------------------------------
key="$(cat "${TOOLS}/go.mod" "${TOOLS}/go.sum" <(go env GOVERSION) | sha256sum | cut -c1-16)"
CACHE_ROOT="${KF_CODEGEN_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/klusterlet-failover/codegen-bin}"
BIN="${CACHE_ROOT}/${key}"

# complete returns 0 when every generator is present and matches the checksums recorded when it was built.
complete() {
  [[ -f "${BIN}/.complete" ]] || return 1
  (cd "${BIN}" && sha256sum --quiet --check .complete >/dev/null 2>&1) || return 1
  for b in "${BINARIES[@]}"; do [[ -x "${BIN}/${b}" ]] || return 1; done
}

if ! complete; then
  echo "update-codegen: building generators into ${BIN}" >&2
  mkdir -p "${CACHE_ROOT}"
  STAGE="$(mktemp -d "${CACHE_ROOT}/.stage-XXXXXX")"
  trap 'rm -rf "${STAGE}"' EXIT
  (cd "${TOOLS}" && GOFLAGS="${GOFLAGS:-} -mod=mod" CGO_ENABLED=0 go build -trimpath -o "${STAGE}/" "${TOOL_PKGS[@]}") \
    || die "building the generators from hack/tools/codegen failed (see the go output above)"
  for b in "${BINARIES[@]}"; do [[ -x "${STAGE}/${b}" ]] || die "build produced no ${b}"; done
  (cd "${STAGE}" && sha256sum "${BINARIES[@]}" > .complete)
  rm -rf "${BIN}"
  mv "${STAGE}" "${BIN}"
  trap - EXIT
  echo "update-codegen: generators built in $(( $(date +%s) - start )) s" >&2
fi
if [[ "${PRINT_BIN_DIR}" == true ]]; then
  echo "${BIN}"
  exit 0
fi

# --- generation --------------------------------------------------------------------------------------------
cd "${ROOT}"
# API packages: every directory under pkg/apis whose doc.go carries +groupName (e.g. pkg/apis/failover/v1alpha1).
mapfile -t API_DIRS < <(grep -rl --include doc.go '^// +groupName=' pkg/apis | xargs -n1 dirname | sort)
[[ ${#API_DIRS[@]} -gt 0 ]] || die "no API package (doc.go with +groupName) under pkg/apis"
API_PKGS=()
for d in "${API_DIRS[@]}"; do API_PKGS+=("${MODULE}/${d}"); done

if [[ "${OUT}" == "${ROOT}" ]]; then
  # In place: drop what the generators own so that removed types or versions leave nothing stale behind.
  # (zz_generated.deepcopy.go stays: the API packages must keep compiling while controller-gen loads them,
  # and it overwrites the file.)
  rm -rf pkg/client/clientset pkg/client/listers pkg/client/informers
  rm -f manifests/crd/*.yaml
fi
mkdir -p "${OUT}/manifests/crd" "${OUT}/pkg/client"

for d in "${API_DIRS[@]}"; do
  mkdir -p "${OUT}/${d}"
  "${BIN}/controller-gen" "object:headerFile=${BOILERPLATE}" "paths=./${d}" "output:object:dir=${OUT}/${d}"
done
"${BIN}/controller-gen" crd:crdVersions=v1 paths=./pkg/apis/... "output:crd:artifacts:config=${OUT}/manifests/crd"

# client-gen takes group/version paths relative to --input-base.
CLIENT_INPUTS=()
for d in "${API_DIRS[@]}"; do CLIENT_INPUTS+=(--input "${d#pkg/apis/}"); done
"${BIN}/client-gen" --go-header-file "${BOILERPLATE}" \
  --output-dir "${OUT}/pkg/client/clientset" --output-pkg "${MODULE}/pkg/client/clientset" \
  --clientset-name versioned --input-base "${MODULE}/pkg/apis" "${CLIENT_INPUTS[@]}"
"${BIN}/lister-gen" --go-header-file "${BOILERPLATE}" \
  --output-dir "${OUT}/pkg/client/listers" --output-pkg "${MODULE}/pkg/client/listers" \
  "${API_PKGS[@]}"
"${BIN}/informer-gen" --go-header-file "${BOILERPLATE}" \
  --output-dir "${OUT}/pkg/client/informers" --output-pkg "${MODULE}/pkg/client/informers" \
  --versioned-clientset-package "${MODULE}/pkg/client/clientset/versioned" \
  --listers-package "${MODULE}/pkg/client/listers" \
  "${API_PKGS[@]}"

# The replicator's kustomization (manifests/replicator) carries its own copy of the ReplicationConfig CRD:
# kustomize refuses files outside its directory. Keep it identical to the generated one.
if [[ "${OUT}" == "${ROOT}" ]]; then
  cp manifests/crd/failover.open-cluster-management.io_replicationconfigs.yaml manifests/replicator/
fi

echo "update-codegen: generated into ${OUT} in $(( $(date +%s) - start )) s" >&2
