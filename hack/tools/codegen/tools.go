//go:build tools

// Package codegen pins the code generators hack/update-codegen.sh builds:
// controller-gen (deepcopy, CRD with OpenAPI and CEL validation) and
// k8s.io/code-generator's client-gen, lister-gen and informer-gen (pkg/client).
// Not part of the product's module.
package codegen

import (
	_ "k8s.io/code-generator/cmd/client-gen"
	_ "k8s.io/code-generator/cmd/informer-gen"
	_ "k8s.io/code-generator/cmd/lister-gen"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
