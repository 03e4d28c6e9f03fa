//go:build tools

// Package tools pins the OCM commands the test bed builds: registration (hub controller and OCM's own agent),
// work (the work agent and the hub work manager), registration-operator (the klusterlet operator), addon (the hub
// add-on manager) and placement (the hub placement controller). ocm-webhooks, beside this file, is built in this
// module too.
package tools

import (
	_ "open-cluster-management.io/ocm/cmd/addon"
	_ "open-cluster-management.io/ocm/cmd/placement"
	_ "open-cluster-management.io/ocm/cmd/registration"
	_ "open-cluster-management.io/ocm/cmd/registration-operator"
	_ "open-cluster-management.io/ocm/cmd/work"
)
