// Command klusterlet-failover is the registration agent of a managed cluster that fails over between
// Open Cluster Management hubs. It runs as `klusterlet-failover agent failover`, and, for the klusterlet
// operator, with OCM's registration command line: as `/registration agent …` (a binary or link named
// registration, or the image's entrypoint followed by the operator's args).
package main

import (
	"fmt"
	"os"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/cmd"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/footprint"
	// Bounds the binary's resident pages from the start of package initialisation (footprint.StartupTrim).
	_ "github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/footprint/startup"
)

func main() {
	cmd.PreferListForInformers()
	// Package initialisation (API schemes, protobuf and OpenAPI registries) read code and tables that nothing
	// reads again: give their pages back before the command's own start-up adds its own.
	footprint.Release()
	if err := cmd.StartDebugServer(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	root := cmd.NewRootCommand()
	root.SetArgs(cmd.Args(os.Args))
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
