//go:build tools

// Package tools pins OCM's registration command the test bed builds.
package tools

import _ "open-cluster-management.io/ocm/cmd/registration"
