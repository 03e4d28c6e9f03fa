#!/usr/bin/env bash
# Fails when the generated code is stale: regenerates (hack/update-codegen.sh --output-root) into a temporary
# directory and compares it with the tree:
#   pkg/apis/**/zz_generated.deepcopy.go, manifests/crd/*.yaml, pkg/client/{clientset,listers,informers}
# Prints the differences and the command that fixes them. Environment: as hack/update-codegen.sh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/verify-codegen-XXXXXX")"
trap 'rm -rf "${TMP}"' EXIT

"${ROOT}/hack/update-codegen.sh" --output-root "${TMP}"

cd "${ROOT}"
stale=0
report() { echo "verify-codegen: $*" >&2; stale=1; }

# Deepcopy: one file per API package.
mapfile -t API_DIRS < <(grep -rl --include doc.go '^// +groupName=' pkg/apis | xargs -n1 dirname | sort)
for d in "${API_DIRS[@]}"; do
  f="${d}/zz_generated.deepcopy.go"
  if [[ ! -f "${f}" ]]; then
    report "${f} is missing"
  elif ! diff -u "${f}" "${TMP}/${f}"; then
    report "${f} is stale"
  fi
done

# CRDs: the set of files and their content (crd.go and its test are hand-written and not compared).
if ! diff -u <(cd manifests/crd && ls -1 -- *.yaml 2>/dev/null) <(cd "${TMP}/manifests/crd" && ls -1 -- *.yaml); then
  report "manifests/crd holds a different set of CRD files than the types generate"
fi
for f in "${TMP}"/manifests/crd/*.yaml; do
  rel="manifests/crd/$(basename "${f}")"
  if [[ -f "${rel}" ]] && ! diff -u "${rel}" "${f}"; then
    report "${rel} is stale"
  fi
done

# Clients: the whole trees, including files that should no longer exist.
for d in pkg/client/clientset pkg/client/listers pkg/client/informers; do
  if ! diff -ru "${d}" "${TMP}/${d}"; then
    report "${d} is stale"
  fi
done

if [[ "${stale}" -ne 0 ]]; then
  echo "verify-codegen: generated code is out of date with pkg/apis; run hack/update-codegen.sh and commit the result" >&2
  exit 1
fi
echo "verify-codegen: generated code is up to date" >&2
