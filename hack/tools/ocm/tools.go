//go:build tools

// Package tools pins the OCM commands the test bed builds: registration (hub controller and OCM's own agent),
// work (the work agent), registration-operator (the klusterlet operator) and addon (the hub add-on manager).
package tools

import (
	_ "open-cluster-management.io/ocm/cmd/addon"
	_ "open-cluster-management.io/ocm/cmd/registration"
	_ "open-cluster-management.io/ocm/cmd/registration-operator"
	_ "open-cluster-management.io/ocm/cmd/work"
)
