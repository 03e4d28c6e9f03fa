// Package cmd builds the cobra command tree of klusterlet-failover. It only wires: flags and run functions
// live in pkg/klusterlet.
package cmd

import (
	"context"
	goflag "flag"
	"fmt"

	"github.com/openshift/library-go/pkg/controller/controllercmd"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/version"
)

// NewRootCommand returns the `klusterlet-failover` command with its `agent failover` and `version` subcommands.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "klusterlet-failover",
		Short:         "Registration agent of an OCM managed cluster that fails over between hubs",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	klogFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(klogFlags)
	root.PersistentFlags().AddGoFlagSet(klogFlags)

	agent := &cobra.Command{
		Use:   "agent",
		Short: "Agents that run on the managed cluster",
	}
	agent.AddCommand(NewFailoverAgentCommand())
	root.AddCommand(agent, newVersionCommand())
	return root
}

// NewFailoverAgentCommand returns `agent failover`, built with library-go's controllercmd so that it serves
// /healthz, /readyz, /livez and /metrics. Leader election is off by default: one agent runs per cluster.
func NewFailoverAgentCommand() *cobra.Command {
	o := klusterlet.NewFailoverAgentOptions()
	cmdConfig := controllercmd.NewControllerCommandConfig("failover-agent", version.Get(), o.RunFailoverAgent, clock.RealClock{})
	cmdConfig.DisableLeaderElection = true
	cmd := cmdConfig.NewCommandWithContext(context.Background())
	cmd.Use = "failover"
	cmd.Short = "Register this cluster with an OCM hub and fail over to an alternate hub when it is lost"
	flags := cmd.Flags()
	o.AddFlags(flags)
	flags.BoolVar(&cmdConfig.DisableLeaderElection, "disable-leader-election", cmdConfig.DisableLeaderElection,
		"Disable leader election; only one agent may run per cluster when it is disabled.")
	return cmd
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of klusterlet-failover",
		Run: func(cmd *cobra.Command, _ []string) {
			v := version.Get()
			fmt.Fprintf(cmd.OutOrStdout(), "klusterlet-failover %s (commit %s, built %s, %s %s)\n",
				v.GitVersion, v.GitCommit, v.BuildDate, v.GoVersion, v.Platform)
		},
	}
}
