// Command hollow-agents runs many klusterlet-failover agents in one process (package hollow):
//
//	hollow-agents --dir DIR [--start-interval 10ms] [--shard I --shards N] [klog flags] -- [flags of `klusterlet-failover agent failover`]
//
// DIR holds one directory per agent, as hollow.Prepare writes it; with --shards N, this process runs every Nth
// agent from the Ith (hollow.Options.Shard). The flags after `--` go to every agent. It
// runs until SIGTERM or SIGINT, and exits non-zero when an agent could not be built or stopped with an error.
package main

import (
	"context"
	goflag "flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/clientgofeatures"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/profiling"
	"github.com/klusterlet-failover/klusterlet-failover/test/hollow"
)

func main() {
	clientgofeatures.PreferListForInformers()
	if err := profiling.StartServer(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var o hollow.Options
	fs := pflag.NewFlagSet("hollow-agents", pflag.ExitOnError)
	o.AddFlags(fs)
	klogFlags := goflag.NewFlagSet("klog", goflag.ExitOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlagSet(klogFlags)
	if err := fs.Parse(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if o.Dir == "" {
		fmt.Fprintln(os.Stderr, "hollow-agents: --dir is required")
		os.Exit(2)
	}
	o.AgentArgs = fs.Args()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := hollow.Run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
