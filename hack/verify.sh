#!/usr/bin/env bash
# Fails when formatting, vet, vendor/ or generated code is out of date.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fail=0
unformatted="$(gofmt -l cmd pkg internal test hack manifests 2>/dev/null || true)"
if [[ -n "${unformatted}" ]]; then
  echo "verify: gofmt needed on:"; echo "${unformatted}"; fail=1
fi
go vet ./cmd/... ./pkg/... ./internal/... ./hack/mkimage/... ./hack/doccheck/... ./test/... ./manifests/... || { echo "verify: go vet failed"; fail=1; }
go vet -tags bench ./test/benchmark/ || { echo "verify: go vet (benchmark) failed"; fail=1; }

tmp="$(mktemp -d)"; trap 'rm -rf "${tmp}"' EXIT
cp go.mod go.sum "${tmp}/"
go mod tidy >/dev/null 2>&1 || { echo "verify: go mod tidy failed"; fail=1; }
if ! diff -q go.mod "${tmp}/go.mod" >/dev/null || ! diff -q go.sum "${tmp}/go.sum" >/dev/null; then
  echo "verify: go.mod/go.sum not tidy (run go mod tidy)"; cp "${tmp}/go.mod" "${tmp}/go.sum" .; fail=1
fi
go mod vendor -o "${tmp}/vendor" >/dev/null 2>&1 || { echo "verify: go mod vendor failed"; fail=1; }
if ! diff -r -q vendor "${tmp}/vendor" >/dev/null; then
  echo "verify: vendor/ out of sync (run go mod vendor)"; fail=1
fi
hack/verify-layering.sh || { echo "verify: a hub-side package imports the spoke agent"; fail=1; }
if [[ -x hack/verify-codegen.sh ]]; then
  hack/verify-codegen.sh || { echo "verify: generated code is stale (run make update)"; fail=1; }
fi
# One name per idea: the API package is imported as failoverv1alpha1 everywhere but in generated code.
api_imports="$(grep -rn --include=*.go '"github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"$' cmd pkg internal test hack \
  | grep -v '^pkg/client/' | grep -v '^[^:]*:[0-9]*:[[:space:]]*failoverv1alpha1 "' || true)"
if [[ -n "${api_imports}" ]]; then
  echo "verify: import pkg/apis/failover/v1alpha1 as failoverv1alpha1:"; echo "${api_imports}"; fail=1
fi
if grep -rn '"\*"' manifests --include=*.yaml | grep -v '^manifests/crd/' >/dev/null; then
  echo "verify: wildcard in manifests RBAC:"; grep -rn '"\*"' manifests --include=*.yaml | grep -v '^manifests/crd/'; fail=1
fi
# What a user reads names only what exists: relative links and their anchors, make targets, flags.
go run ./hack/doccheck || { echo "verify: README.md or docs/ names a link, make target or flag that does not exist (hack/doccheck)"; fail=1; }
exit "${fail}"
