// Command klusterlet-failover is the registration agent of a managed cluster that fails over between
// Open Cluster Management hubs. The klusterlet operator runs it as `klusterlet-failover agent failover`.
package main

import (
	"os"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/cmd"
)

func main() {
	cmd.PreferListForInformers()
	if err := cmd.NewRootCommand().Execute(); err != nil {
		os.Exit(1)
	}
}
