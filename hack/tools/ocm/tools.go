//go:build tools

// Package tools pins the OCM commands the test bed builds: registration (hub controller and OCM's own agent),
// work (the work agent) and registration-operator (the klusterlet operator).
package tools

import (
	_ "open-cluster-management.io/ocm/cmd/registration"
	_ "open-cluster-management.io/ocm/cmd/registration-operator"
	_ "open-cluster-management.io/ocm/cmd/work"
)
