// Command klusterlet-failover is the registration agent of a managed cluster that fails over between
// Open Cluster Management hubs. It runs as `klusterlet-failover agent failover`, and, for the klusterlet
// operator, with OCM's registration command line: as `/registration agent …` (a binary or link named
// registration, or the image's entrypoint followed by the operator's args).
package main

import (
	"fmt"
	"os"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/clientgofeatures"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/cmd"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/profiling"
)

func main() {
	clientgofeatures.PreferListForInformers()
	if err := profiling.StartServer(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	root := cmd.NewRootCommand()
	root.SetArgs(cmd.Args(os.Args))
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
