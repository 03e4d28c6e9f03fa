package cmd

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/openshift/library-go/pkg/controller/controllercmd"
	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/yaml"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/uninstall"
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
	cmd.AddCommand(newReplicatorUninstallCommand())
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

// newReplicatorUninstallCommand returns `replicator uninstall`: run on every hub, as its administrator, once the
// replicator is stopped for good (package uninstall). --config names the ReplicationConfig's YAML when it has
// customKinds (their objects may hold the finalizer too); without it the built-in kinds are cleaned.
func newReplicatorUninstallCommand() *cobra.Command {
	var kubeconfig, configFile string
	var peerKubeconfigs []string
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove the replicator's fence, delete-copies finalizers, cluster-hub marks and in-step report from one hub (stop the replicator first)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			kinds := mirror.Kinds
			if configFile != "" {
				data, err := os.ReadFile(configFile)
				if err != nil {
					return fmt.Errorf("--config: %w", err)
				}
				var rc failoverv1alpha1.ReplicationConfig
				if err := yaml.UnmarshalStrict(data, &rc); err != nil {
					return fmt.Errorf("--config %s: not a ReplicationConfig: %w", configFile, err)
				}
				if kinds, err = mirror.ResolveKinds(&rc.Spec); err != nil {
					return fmt.Errorf("--config %s: %w", configFile, err)
				}
				// Every built-in kind as well: one the ReplicationConfig no longer lists may still hold the finalizer.
				for _, k := range mirror.Kinds {
					if !slices.ContainsFunc(kinds, func(x mirror.Kind) bool { return x.Name == k.Name }) {
						kinds = append(kinds, k)
					}
				}
			}
			config, client, err := hubClient("--kubeconfig", kubeconfig)
			if err != nil {
				return err
			}
			peers := make([]uninstall.Peer, 0, len(peerKubeconfigs))
			for _, file := range peerKubeconfigs {
				if file == "" {
					return fmt.Errorf("--peer-kubeconfig %q: must name a kubeconfig file", file)
				}
				peerConfig, peerClient, err := hubClient("--peer-kubeconfig", file)
				if err != nil {
					return err
				}
				if peerConfig.Host == config.Host {
					return fmt.Errorf("--peer-kubeconfig %q: names the hub of --kubeconfig (%s); give the other hubs", file, config.Host)
				}
				peers = append(peers, uninstall.Peer{Name: peerConfig.Host, Client: peerClient})
			}
			report, err := uninstall.Hub(c.Context(), client, kinds, peers...)
			fmt.Fprintf(c.OutOrStdout(), "hub %s: %s\n", config.Host, report)
			return err
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "Kubeconfig of the hub, for a user who may delete ValidatingAdmissionPolicies and patch every replicated kind and namespaces (empty: $KUBECONFIG, ~/.kube/config, then in-cluster)")
	cmd.Flags().StringVar(&configFile, "config", "", "YAML of the ReplicationConfig, for its spec.customKinds (optional)")
	cmd.Flags().StringArrayVar(&peerKubeconfigs, "peer-kubeconfig", nil, "Kubeconfig of another hub of the ReplicationConfig (repeat for each): "+
		"a delete the replicator still held here deletes the object's copies there first; without them those copies stay")
	return cmd
}

// hubClient builds a dynamic client from the kubeconfig file named by flag (empty: $KUBECONFIG, ~/.kube/config,
// then in-cluster). The error names the flag and the file.
func hubClient(flag, file string) (*rest.Config, dynamic.Interface, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = file
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("%s %q: %w", flag, file, err)
	}
	client, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %q: building a client for %s: %w", flag, file, config.Host, err)
	}
	return config, client, nil
}
