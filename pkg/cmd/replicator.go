package cmd

import (
	"context"

	"github.com/openshift/library-go/pkg/controller/controllercmd"
	"github.com/spf13/cobra"
	"k8s.io/utils/clock"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/servingcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/version"
)

// ReplicatorComponentName is the replicator's controllercmd component name; its leader election lock is the
// Lease klusterlet-failover-replicator-lock in the replicator's namespace.
const ReplicatorComponentName = "klusterlet-failover-replicator"

// NewReplicatorCommand returns `replicator`: the hub-side replicator, built with library-go's controllercmd
// (serving /healthz and /metrics, leader election on by default with OCM's durations). Flags are process
// settings only; what is replicated comes from the ReplicationConfig named by --config-name.
func NewReplicatorCommand() *cobra.Command {
	o := replicator.NewOptions()
	cmdConfig := controllercmd.NewControllerCommandConfig(ReplicatorComponentName, version.Get(), o.Run, clock.RealClock{})
	cmdConfig.DisableLeaderElection = false
	cmdConfig.LeaseDuration.Duration = defaultLeaseDuration
	cmdConfig.RenewDeadline.Duration = defaultRenewDeadline
	cmdConfig.RetryPeriod.Duration = defaultRetryPeriod
	cmd := cmdConfig.NewCommandWithContext(context.Background())
	cmd.Use = "replicator"
	cmd.Short = "Keep every hub's copy of each managed cluster's management state in step (run anywhere that reaches the hubs)"
	flags := cmd.Flags()
	o.AddFlags(flags)
	addLeaderElectionFlags(cmd, cmdConfig, "Disable leader election; then only one replicator may run for a ReplicationConfig.")
	cmd.PreRunE = func(c *cobra.Command, _ []string) error {
		if ns := c.Flags().Lookup("namespace"); ns != nil && ns.Changed {
			o.Namespace = ns.Value.String()
		} else {
			o.Complete()
			if err := c.Flags().Set("namespace", o.Namespace); err != nil {
				return err
			}
		}
		if err := o.Validate(); err != nil {
			return err
		}
		if !cmdConfig.DisableLeaderElection {
			if err := validateLeaderElection(cmdConfig.LeaseDuration.Duration, cmdConfig.RenewDeadline.Duration, cmdConfig.RetryPeriod.Duration); err != nil {
				return err
			}
		}
		return servingcert.UseGenerated(c.Flags())
	}
	return cmd
}
