package registrationagent

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/component-base/featuregate"
	ocmfeature "open-cluster-management.io/api/feature"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
)

const (
	// DefaultHubConnectionTimeoutSeconds is OCM's default of --hub-connection-timeout-seconds (10 minutes),
	// which `registration agent` keeps.
	DefaultHubConnectionTimeoutSeconds = 600

	// registrationAuthCSR is the one --registration-auth this agent implements: client certificates through
	// CSRs. OCM's other values are "awsirsa" and "grpc" (open-cluster-management.io/api operator/v1).
	registrationAuthCSR = "csr"
	// addonAuthCSR is OCM's default --addon-kubeclient-registration-auth.
	addonAuthCSR = "csr"
)

// Options are the options of `registration agent`, the command line of OCM's registration agent
// (open-cluster-management.io/ocm v1.2.0, `registration agent`) as the klusterlet operator renders it: every
// flag its klusterlet-registration-deployment.yaml template can emit, with OCM's meaning, on top of the
// failover agent's own flags. Create it with NewOptions; call ValidateOCMFlags, then run the embedded
// FailoverAgentOptions.
type Options struct {
	*klusterlet.FailoverAgentOptions

	// HubKubeconfigFile is OCM's --hub-kubeconfig; this agent always uses <--hub-kubeconfig-dir>/kubeconfig, so
	// only that value (or empty) is accepted.
	HubKubeconfigFile string
	// FeatureGates are OCM's registration agent feature gates (--feature-gates, OCM's names and parsing; a name
	// it does not know goes to UnknownFeatureGates). MultipleHubs and AddonManagement are honoured; the others
	// are accepted and logged once.
	FeatureGates featuregate.MutableFeatureGate
	// RegistrationAuth is --registration-auth: "" or "csr"; "awsirsa" and "grpc" are refused at start.
	RegistrationAuth string
	// HubClusterARN, ManagedClusterARN and ManagedClusterRoleSuffix are the awsirsa flags, accepted so that the
	// --registration-auth error is the one reported.
	HubClusterARN, ManagedClusterARN, ManagedClusterRoleSuffix string
	// GRPCBootstrapConfig and GRPCConfig are the grpc flags, accepted for the same reason.
	GRPCBootstrapConfig, GRPCConfig string
	// AddonKubeClientRegistrationAuth is --addon-kubeclient-registration-auth: "" or "csr" (OCM's default) are
	// accepted; "token" is refused at start.
	AddonKubeClientRegistrationAuth string
	// AddonTokenExpirationSeconds is --addon-token-expiration-seconds; it only applies to "token".
	AddonTokenExpirationSeconds int64
	// UnknownFeatureGates are the --feature-gates names FeatureGates does not know, with their values, in
	// command-line order; they are ignored (see ClassifyUnknownFlags for the policy).
	UnknownFeatureGates []IgnoredFlag
	// Ignored are the flags and feature gates the command runs without (ClassifyUnknownFlags, then
	// UnknownFeatureGates), set by the command before any I/O and announced by WarnIgnored once the agent's
	// event recorder exists.
	Ignored []IgnoredFlag
}

// NewOptions returns the options of `registration agent` with OCM's defaults where they differ from
// the failover agent's (--hub-connection-timeout-seconds 600). It does no I/O.
func NewOptions() *Options {
	o := &Options{
		FailoverAgentOptions:            klusterlet.NewFailoverAgentOptions(),
		FeatureGates:                    featuregate.NewFeatureGate(),
		AddonKubeClientRegistrationAuth: addonAuthCSR,
	}
	o.HubConnectionTimeoutSeconds = DefaultHubConnectionTimeoutSeconds
	// The gates are OCM's own list; Add fails only on a duplicate, which a fresh gate cannot have.
	if err := o.FeatureGates.Add(ocmfeature.DefaultSpokeRegistrationFeatureGates); err != nil {
		panic(fmt.Sprintf("OCM's registration feature gates: %v", err))
	}
	return o
}

// AddFlags registers the failover agent's flags and OCM's on fs: --spoke-cluster-name and --agent-id (OCM's
// names for --cluster-name and --agent-name), --hub-kubeconfig, --feature-gates, --registration-auth and the
// awsirsa/grpc/add-on flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.FailoverAgentOptions.AddFlags(fs)
	fs.StringVar(&o.ClusterName, "spoke-cluster-name", o.ClusterName, "Name of the spoke cluster (OCM's name of --cluster-name).")
	fs.StringVar(&o.AgentName, "agent-id", o.AgentName, "ID of the agent (OCM's name of --agent-name).")
	fs.StringVar(&o.HubKubeconfigFile, "hub-kubeconfig", o.HubKubeconfigFile,
		"Kubeconfig file of the hub; this agent always writes and reads <--hub-kubeconfig-dir>/kubeconfig, so only that value is accepted.")
	fs.Var(&featureGatesFlag{gates: o.FeatureGates, unknown: &o.UnknownFeatureGates}, "feature-gates",
		"OCM's registration feature gates, Name=true|false pairs separated by commas; a name this agent does not know is ignored with a warning. Known: "+
			strings.Join(knownFeatureGates(o.FeatureGates), ", ")+".")
	fs.StringVar(&o.RegistrationAuth, "registration-auth", o.RegistrationAuth,
		`How the agent authenticates with the hub: "" or "csr" (client certificates); "awsirsa" and "grpc" are not supported.`)
	fs.StringVar(&o.HubClusterARN, "hub-cluster-arn", o.HubClusterARN, "awsirsa only; not supported.")
	fs.StringVar(&o.ManagedClusterARN, "managed-cluster-arn", o.ManagedClusterARN, "awsirsa only; not supported.")
	fs.StringVar(&o.ManagedClusterRoleSuffix, "managed-cluster-role-suffix", o.ManagedClusterRoleSuffix, "awsirsa only; not supported.")
	fs.StringVar(&o.GRPCBootstrapConfig, "grpc-bootstrap-config", o.GRPCBootstrapConfig, "grpc only; not supported.")
	fs.StringVar(&o.GRPCConfig, "grpc-config", o.GRPCConfig, "grpc only; not supported.")
	fs.StringVar(&o.AddonKubeClientRegistrationAuth, "addon-kubeclient-registration-auth", o.AddonKubeClientRegistrationAuth,
		`Authentication of add-ons with registration type KubeClient: "csr" (OCM's default); "token" is not supported.`)
	fs.Int64Var(&o.AddonTokenExpirationSeconds, "addon-token-expiration-seconds", o.AddonTokenExpirationSeconds,
		`Token lifetime for "token" add-on registration; without it, no effect.`)
}

// ValidateOCMFlags checks OCM's flags (the failover agent's are checked by ValidateFlags): --registration-auth
// "" or "csr", --addon-kubeclient-registration-auth "" or "csr", --hub-kubeconfig empty or
// <--hub-kubeconfig-dir>/kubeconfig, and, with the MultipleHubs gate on, at least two --bootstrap-kubeconfigs
// (OCM's rule). The error lists every violation, each naming the flag, the value and what is supported.
func (o *Options) ValidateOCMFlags() error {
	var errs []error
	switch o.RegistrationAuth {
	case "", registrationAuthCSR:
	default:
		errs = append(errs, fmt.Errorf(`--registration-auth %q: not supported by klusterlet-failover, which registers with client certificates through CSRs only ("" or %q)`,
			o.RegistrationAuth, registrationAuthCSR))
	}
	switch o.AddonKubeClientRegistrationAuth {
	case "", addonAuthCSR:
	default:
		errs = append(errs, fmt.Errorf(`--addon-kubeclient-registration-auth %q: not supported by klusterlet-failover ("" or %q)`,
			o.AddonKubeClientRegistrationAuth, addonAuthCSR))
	}
	// The Secret mirror writes each key of the hub kubeconfig Secret as a file of that name.
	if want := filepath.Join(o.HubKubeconfigDir, failoverv1alpha1.KubeconfigSecretKey); o.HubKubeconfigFile != "" && filepath.Clean(o.HubKubeconfigFile) != want {
		errs = append(errs, fmt.Errorf("--hub-kubeconfig %q: must be empty or %q: the agent writes the hub kubeconfig into --hub-kubeconfig-dir",
			o.HubKubeconfigFile, want))
	}
	if o.FeatureGates.Enabled(ocmfeature.MultipleHubs) && len(o.BootstrapKubeconfigs) < 2 {
		errs = append(errs, fmt.Errorf("--bootstrap-kubeconfigs (%d given): the MultipleHubs feature gate needs at least 2, as in OCM", len(o.BootstrapKubeconfigs)))
	}
	return errors.Join(errs...)
}

// CompleteOCMFlags turns the AddonManagement gate off into DisableAddOnManagement and applies OCM's rule for the
// two bootstrap flags: with the MultipleHubs gate on,
// --bootstrap-kubeconfigs is the hub list and --bootstrap-kubeconfig is ignored; with it off,
// --bootstrap-kubeconfigs is ignored. It returns what it ignored, for a log line ("" when nothing). Call it after
// parsing and before ValidateFlags.
func (o *Options) CompleteOCMFlags() string {
	if !o.FeatureGates.Enabled(ocmfeature.AddonManagement) {
		o.DisableAddOnManagement = true
	}
	if o.FeatureGates.Enabled(ocmfeature.MultipleHubs) {
		if o.BootstrapKubeconfig != "" {
			ignored := fmt.Sprintf("--bootstrap-kubeconfig=%s (the MultipleHubs gate is on: --bootstrap-kubeconfigs is the hub list)", o.BootstrapKubeconfig)
			o.BootstrapKubeconfig = ""
			return ignored
		}
		return ""
	}
	if len(o.BootstrapKubeconfigs) > 0 {
		ignored := fmt.Sprintf("--bootstrap-kubeconfigs=%s (the MultipleHubs gate is off)", strings.Join(o.BootstrapKubeconfigs, ","))
		o.BootstrapKubeconfigs = nil
		return ignored
	}
	return ""
}

// IgnoredFeatureGates returns, sorted, the known feature gates given on the command line that this agent accepts
// but does not act on ("Name=true"); MultipleHubs and AddonManagement are acted on and never listed, unknown
// gates are in UnknownFeatureGates. fs is the parsed flag set.
func (o *Options) IgnoredFeatureGates(fs *pflag.FlagSet) []string {
	f := fs.Lookup("feature-gates")
	if f == nil || !f.Changed {
		return nil
	}
	known := o.FeatureGates.GetAll()
	var out []string
	for _, kv := range strings.Split(f.Value.String(), ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(kv), "=")
		if _, isKnown := known[featuregate.Feature(name)]; !isKnown || name == string(ocmfeature.MultipleHubs) || name == string(ocmfeature.AddonManagement) {
			continue
		}
		out = append(out, strings.TrimSpace(kv))
	}
	sort.Strings(out)
	return out
}
