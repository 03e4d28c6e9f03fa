// Package cmd builds the cobra command tree of klusterlet-failover. It only wires: flags and run functions
// live in pkg/klusterlet (OCM's `registration agent` command line in pkg/klusterlet/registrationagent) and
// pkg/replicator.
package cmd

import (
	"context"
	goflag "flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/openshift/library-go/pkg/controller/controllercmd"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/cmd/leaselock"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/registrationagent"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/servingcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/version"
)

// NewRootCommand returns the `klusterlet-failover` command with its `agent failover`, `registration agent`,
// `replicator` and `version` subcommands.
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
	registration := &cobra.Command{
		Use:   RegistrationCommandName,
		Short: "OCM's registration agent command line (as the klusterlet operator renders it), running the failover agent",
	}
	registration.AddCommand(NewRegistrationAgentCommand())
	root.AddCommand(agent, registration, NewReplicatorCommand(), newVersionCommand())
	return root
}

// RegistrationCommandName is the name under which the klusterlet operator starts the registration agent: its
// Deployment's container args begin with "/registration agent". main dispatches a binary called registration,
// and a first argument "/registration" (the image's entrypoint followed by the operator's args), to it.
const RegistrationCommandName = "registration"

// Args returns the arguments for NewRootCommand from a process's os.Args: the binary's name is dropped, and the
// invocation the klusterlet operator renders — the binary called "registration", or "/registration" as the
// first argument after our own binary — becomes the `registration` subcommand.
func Args(osArgs []string) []string {
	if len(osArgs) == 0 {
		return nil
	}
	args := osArgs[1:]
	if filepath.Base(osArgs[0]) == RegistrationCommandName {
		return append([]string{RegistrationCommandName}, args...)
	}
	if len(args) > 0 && args[0] == "/"+RegistrationCommandName {
		return append([]string{RegistrationCommandName}, args[1:]...)
	}
	return args
}

// Leader election defaults: OCM's agents use library-go's (lease 137 s, renew deadline 107 s, retry 26 s).
// Setting them explicitly also skips library-go's OpenShift topology probe.
const (
	defaultLeaseDuration = 137 * time.Second
	defaultRenewDeadline = 107 * time.Second
	defaultRetryPeriod   = 26 * time.Second
)

// NewFailoverAgentCommand returns `agent failover`, built with library-go's controllercmd so that it serves
// /healthz, /readyz, /livez and /metrics. Leader election is on by default, as in OCM's agent: the lock is the
// Lease failover-agent-lock in the agent namespace, released when the agent stops.
func NewFailoverAgentCommand() *cobra.Command {
	o := klusterlet.NewFailoverAgentOptions()
	cmd := newAgentCommand("failover-agent", o, o.AddFlags, func(*cobra.Command, []string) error { return nil }, nil)
	cmd.Use = "failover"
	cmd.Short = "Register this cluster with an OCM hub and fail over to an alternate hub when it is lost"
	return cmd
}

// NewRegistrationAgentCommand returns `registration agent`: OCM's registration agent command line (every flag
// the klusterlet operator v1.2.0 renders, with OCM's meaning) running the failover agent. Its component name
// is OCM's, registration-agent, so its leader election lock (Lease registration-agent-lock in the agent
// namespace) is the one OCM's agent takes: during a switch between the two images only one of them runs. A flag
// it does not know is ignored with a log line and an OperatorFlagIgnored Warning event, or refused when it may
// change how the agent registers (registrationagent.ClassifyUnknownFlags).
func NewRegistrationAgentCommand() *cobra.Command {
	o := registrationagent.NewOptions()
	cmd := newAgentCommand("registration-agent", o.FailoverAgentOptions, o.AddFlags, func(c *cobra.Command, unknown []string) error {
		ignored, err := registrationagent.ClassifyUnknownFlags(unknown)
		if err != nil {
			return err
		}
		o.Ignored = append(ignored, o.UnknownFeatureGates...)
		registrationagent.LogIgnored(o.Ignored)
		if err := o.ValidateOCMFlags(); err != nil {
			return err
		}
		if ignored := o.CompleteOCMFlags(); ignored != "" {
			klog.Infof("Ignoring %s, as OCM's agent does", ignored)
		}
		if ignored := o.IgnoredFeatureGates(c.Flags()); len(ignored) > 0 {
			klog.Infof("Feature gates accepted without effect (klusterlet-failover implements MultipleHubs and AddonManagement only): %s", strings.Join(ignored, ","))
		}
		return nil
	}, func(recorder events.Recorder) { registrationagent.WarnIgnored(recorder, o.Ignored) })
	// A newer klusterlet operator may render flags this agent does not know: they reach prepare as arguments,
	// where the unknown-flag policy (registrationagent.ClassifyUnknownFlags) ignores or refuses each one.
	cmd.FParseErrWhitelist.UnknownFlagsHandling = pflag.PassUnknownFlagToArgs
	cmd.Use = "agent"
	cmd.Short = "Start the registration agent (OCM's flags) with hub failover"
	return cmd
}

// newAgentCommand builds a controllercmd command named componentName that runs o. addFlags registers the
// options' flags; prepare checks and completes what ValidateFlags does not know, and runs first, with the
// command's positional arguments (where the parser puts unknown flags when the command lets them through).
// announce, when set, runs in the run function with the agent's event recorder before Complete. All of it runs
// before any I/O and before leader election (CompleteNamespace, then ValidateFlags), so a bad flag fails at once
// with one message. The agent namespace (--namespace, else the service-account namespace, else
// open-cluster-management-agent) is the namespace of events and of the lock. The run function is runAgent.
func newAgentCommand(componentName string, o *klusterlet.FailoverAgentOptions, addFlags func(*pflag.FlagSet),
	prepare func(*cobra.Command, []string) error, announce func(events.Recorder)) *cobra.Command {
	cmdConfig := controllercmd.NewControllerCommandConfig(componentName, version.Get(), runAgent(o, announce), clock.RealClock{})
	cmdConfig.DisableLeaderElection = false
	cmdConfig.LeaseDuration.Duration = defaultLeaseDuration
	cmdConfig.RenewDeadline.Duration = defaultRenewDeadline
	cmdConfig.RetryPeriod.Duration = defaultRetryPeriod
	cmd := cmdConfig.NewCommandWithContext(context.Background())
	flags := cmd.Flags()
	addFlags(flags)
	addLeaderElectionFlags(cmd, cmdConfig, "Disable leader election; then only one agent may run per cluster.")
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if ns := c.Flags().Lookup("namespace"); ns != nil && ns.Changed {
			o.ComponentNamespace = ns.Value.String()
		} else {
			o.CompleteNamespace()
			if err := c.Flags().Set("namespace", o.ComponentNamespace); err != nil {
				return err
			}
		}
		if err := prepare(c, args); err != nil {
			return err
		}
		if err := o.ValidateFlags(); err != nil {
			return err
		}
		if !cmdConfig.DisableLeaderElection {
			if err := validateLeaderElection(cmdConfig.LeaseDuration.Duration, cmdConfig.RenewDeadline.Duration, cmdConfig.RetryPeriod.Duration); err != nil {
				return err
			}
		}
		return servingcert.UseGenerated(c.Flags())
	}
	if run := cmd.Run; run != nil {
		cmd.Run = func(c *cobra.Command, args []string) {
			if !cmdConfig.DisableLeaderElection {
				freeOwnStaleLease(c, componentName+"-lock", o.ComponentNamespace)
			}
			run(c, args)
		}
	}
	return cmd
}

// runAgent returns the run function of the agent commands (the seed's flow, as OCM's agent): announce (when
// set) with the command's event recorder, o.Complete with a client of the cluster the agent runs in
// (controllerContext.KubeConfig) and that recorder, o.Validate, then o.RunFailoverAgent. An error of Complete
// (an unreadable hub kubeconfig Secret) or Validate ends the command with that message.
func runAgent(o *klusterlet.FailoverAgentOptions, announce func(events.Recorder)) controllercmd.StartFunc {
	return func(ctx context.Context, controllerContext *controllercmd.ControllerContext) error {
		if announce != nil {
			announce(controllerContext.EventRecorder)
		}
		kubeClient, err := kubernetes.NewForConfig(controllerContext.KubeConfig)
		if err != nil {
			return fmt.Errorf("client of the cluster the agent runs in: %w", err)
		}
		if err := o.Complete(kubeClient.CoreV1(), ctx, controllerContext.EventRecorder); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.RunFailoverAgent(ctx, controllerContext)
	}
}

// freeOwnStaleLease frees the leader election Lease (namespace/lock, library-go's <component>-lock) when an
// earlier container of this pod holds it (leaselock): after a crash the restarted container then leads at once
// instead of waiting out the lease duration. It runs only in a pod whose hostname is its name (POD_NAME, set by
// the operator's and this repository's Deployments, equals the hostname); failures are logged and the election
// proceeds as usual.
func freeOwnStaleLease(c *cobra.Command, lock, namespace string) {
	host, err := os.Hostname()
	if err != nil || os.Getenv("POD_NAME") != host {
		return
	}
	kubeconfig := ""
	if f := c.Flags().Lookup("kubeconfig"); f != nil {
		kubeconfig = f.Value.String()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		klog.Warningf("Not checking leader election Lease %s/%s for an earlier container of pod %s: %v", namespace, lock, host, err)
		return
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		klog.Warningf("Not checking leader election Lease %s/%s for an earlier container of pod %s: %v", namespace, lock, host, err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	freed, err := leaselock.ReleaseIfHeldByEarlierContainer(ctx, client.CoordinationV1(), namespace, lock, host)
	switch {
	case err != nil:
		klog.Warningf("Leader election Lease: %v; waiting for it as usual", err)
	case freed != "":
		klog.Infof("Freed leader election Lease %s/%s held by %s, an earlier container of this pod", namespace, lock, freed)
	}
}

// addLeaderElectionFlags registers --disable-leader-election (help text disableHelp) and the three
// --leader-election-* durations of cmdConfig on cmd.
func addLeaderElectionFlags(cmd *cobra.Command, cmdConfig *controllercmd.ControllerCommandConfig, disableHelp string) {
	flags := cmd.Flags()
	flags.BoolVar(&cmdConfig.DisableLeaderElection, "disable-leader-election", cmdConfig.DisableLeaderElection, disableHelp)
	flags.DurationVar(&cmdConfig.LeaseDuration.Duration, "leader-election-lease-duration", cmdConfig.LeaseDuration.Duration,
		"How long a standby waits after the last renewal of the leader before it takes over.")
	flags.DurationVar(&cmdConfig.RenewDeadline.Duration, "leader-election-renew-deadline", cmdConfig.RenewDeadline.Duration,
		"How long the leader keeps trying to renew before it stops leading; at most the lease duration.")
	flags.DurationVar(&cmdConfig.RetryPeriod.Duration, "leader-election-retry-period", cmdConfig.RetryPeriod.Duration,
		"How often candidates try to acquire or renew the lock.")
}

// validateLeaderElection checks client-go's rules for the leader election durations: lease > renew deadline >
// retry period > 0 (client-go also wants the renew deadline above 1.2 × the retry period).
func validateLeaderElection(lease, renew, retry time.Duration) error {
	switch {
	case retry <= 0:
		return fmt.Errorf("--leader-election-retry-period %s: must be greater than 0", retry)
	case float64(renew) <= 1.2*float64(retry):
		return fmt.Errorf("--leader-election-renew-deadline %s: must be greater than 1.2 × --leader-election-retry-period (%s)", renew, retry)
	case lease <= renew:
		return fmt.Errorf("--leader-election-lease-duration %s: must be greater than --leader-election-renew-deadline (%s)", lease, renew)
	}
	return nil
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
