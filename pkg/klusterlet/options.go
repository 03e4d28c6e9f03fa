package klusterlet

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

const (
	// DefaultComponentNamespace is used when the agent does not run in a pod (no service-account namespace file).
	DefaultComponentNamespace = "open-cluster-management-agent"
	// DefaultHubKubeconfigSecret is the Secret other klusterlet components read the hub credentials from.
	DefaultHubKubeconfigSecret = "hub-kubeconfig-secret"
	// DefaultHubKubeconfigDir is where the hub kubeconfig Secret is mirrored as files.
	DefaultHubKubeconfigDir = "/spoke/hub-kubeconfig"
	// DefaultFailoverConfigName is the name of the FailoverConfig the agent reads in its namespace.
	DefaultFailoverConfigName = "failover"

	// DefaultBootstrapKubeconfigSecret is the klusterlet operator's Secret holding the bootstrap kubeconfig.
	DefaultBootstrapKubeconfigSecret = "bootstrap-hub-kubeconfig"
	// DefaultKubeAPIQPS and DefaultKubeAPIBurst are the client-side rate limits (requests per second, burst in
	// requests) of the spoke and hub clients: OCM's agent defaults (--kube-api-qps, --hub-kube-api-qps). The
	// client-go defaults (5, 10) throttled the agent's start for a second at a time.
	DefaultKubeAPIQPS   = 50
	DefaultKubeAPIBurst = 100

	serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
)

// FailoverAgentOptions holds the agent's configuration: flags (see AddFlags), checked by ValidateFlags before
// any I/O, and the values Complete fills in (agent namespace, cluster and agent names), checked by Validate.
// Create it with NewFailoverAgentOptions; then AddFlags, Complete, Validate and RunFailoverAgent.
type FailoverAgentOptions struct {
	// ComponentNamespace is where the agent's Secrets, events and FailoverConfig live: --namespace, else
	// Complete reads it from the service-account namespace file, else DefaultComponentNamespace.
	ComponentNamespace string
	// ClusterName is the ManagedCluster name on every hub; empty means stored, else generated (design §2).
	ClusterName string
	// AgentName names this agent instance in its client certificate's CN; empty means stored, else generated.
	AgentName string
	// BootstrapKubeconfig is the path of the primary hub's bootstrap kubeconfig file. Required.
	BootstrapKubeconfig string
	// HubKubeconfigSecret is the Secret in ComponentNamespace that receives the issued hub credentials.
	HubKubeconfigSecret string
	// HubKubeconfigDir is the directory the hub kubeconfig Secret is mirrored to, one file (mode 0600) per key.
	HubKubeconfigDir string
	// SpokeExternalServerURLs are absolute https URLs of the spoke API server, published to the hub in
	// ManagedCluster spec.managedClusterClientConfigs.
	SpokeExternalServerURLs []string
	// ClusterHealthCheckPeriod is the status and health-check resync period; must be > 0.
	ClusterHealthCheckPeriod time.Duration
	// MaxCustomClusterClaims caps the non-reserved ClusterClaims exposed in ManagedCluster status; must be >= 0.
	MaxCustomClusterClaims int
	// SpokeKubeconfig is the kubeconfig file of the managed cluster in hosted mode; empty means the command's
	// own client config (in-cluster or --kubeconfig). When set, only the managed cluster's objects (Nodes,
	// ClusterClaims, health, version, kube-system) are read through it, and the file is re-read when it changes;
	// the agent namespace (Secrets, FailoverConfig, events) stays on the command's own cluster.
	SpokeKubeconfig string
	// FailoverConfigName is the FailoverConfig in ComponentNamespace that lists alternate hubs; it may be absent.
	FailoverConfigName string
	// BootstrapKubeconfigSecret names a Secret in ComponentNamespace whose "kubeconfig" key, when the Secret
	// exists, is used as the primary's bootstrap kubeconfig instead of the file: it is watched, so a replaced
	// bootstrap kubeconfig takes effect at once. Empty disables it.
	BootstrapKubeconfigSecret string
	// Metrics receives the failover metrics; nil means the process-wide legacyregistry metrics served on
	// /metrics. Not a flag.
	Metrics *failover.Metrics
	// ClientCertExpirationSeconds, when > 0, is asked of the hub as spec.expirationSeconds of every CSR
	// (Kubernetes honours values >= 600). 0 leaves the lifetime to the hub's signer.
	ClientCertExpirationSeconds int32
	// KubeAPIQPS and KubeAPIBurst rate-limit the clients of the spoke and of the cluster hosting the agent
	// (requests per second and burst, > 0). Same flags and defaults as OCM's agent.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// HubKubeAPIQPS and HubKubeAPIBurst rate-limit the hub clients (requests per second and burst, > 0).
	HubKubeAPIQPS   float32
	HubKubeAPIBurst int
	// BootstrapKubeconfigs is OCM's MultipleHubs hub list (--bootstrap-kubeconfigs, repeatable): bootstrap
	// kubeconfig files in order of preference. When set, the first is the primary (it replaces
	// --bootstrap-kubeconfig, which must then be empty, and --bootstrap-kubeconfig-secret does not apply) and
	// every other one an alternate hub named after the file's directory, dots replaced by dashes — the
	// klusterlet operator mounts Secret <name> at /spoke/<name>/kubeconfig — so that name must become a DNS-1123
	// label other than "primary" and other than the other hubs' names.
	// FailoverConfig alternates come after these hubs.
	BootstrapKubeconfigs []string
	// HubConnectionTimeoutSeconds is how long the active hub may go without a successful request before the
	// agent fails over, while no FailoverConfig exists (--hub-connection-timeout-seconds); a FailoverConfig's
	// spec.hubConnectionTimeout always wins. 0 means the FailoverConfig default (90 seconds); else at least 10.
	HubConnectionTimeoutSeconds int32
	// ClusterAnnotations are set on the ManagedCluster when the agent creates it (--cluster-annotations
	// key=value,...). As in OCM, only keys with the prefix "agent.open-cluster-management.io" are used; the
	// others are ignored with a warning in the log.
	ClusterAnnotations map[string]string
	// ReservedClusterClaimSuffixes make every ClusterClaim whose name ends with one of them a reserved claim:
	// always exposed, not counted against MaxCustomClusterClaims (--reserved-cluster-claim-suffixes).
	ReservedClusterClaimSuffixes []string
	// DisableAddOnManagement turns off add-on registration and add-on lease health (--disable-addon-management;
	// in `registration agent`, OCM's feature gate AddonManagement=false). Default: on, as in OCM.
	DisableAddOnManagement bool
	// DisableStandbyCredentials turns off hot standby credentials (--disable-standby-credentials): no CSR is
	// sent to a standby hub before a switch to it, which then bootstraps there. Default: on.
	DisableStandbyCredentials bool

	// completed is set by Complete once the cluster and agent names are filled in.
	completed bool
}

// NewFailoverAgentOptions returns options with the documented defaults. It does no I/O.
func NewFailoverAgentOptions() *FailoverAgentOptions {
	return &FailoverAgentOptions{
		HubKubeconfigSecret:       DefaultHubKubeconfigSecret,
		HubKubeconfigDir:          DefaultHubKubeconfigDir,
		ClusterHealthCheckPeriod:  time.Minute,
		MaxCustomClusterClaims:    20,
		FailoverConfigName:        DefaultFailoverConfigName,
		BootstrapKubeconfigSecret: DefaultBootstrapKubeconfigSecret,
		KubeAPIQPS:                DefaultKubeAPIQPS,
		KubeAPIBurst:              DefaultKubeAPIBurst,
		HubKubeAPIQPS:             DefaultKubeAPIQPS,
		HubKubeAPIBurst:           DefaultKubeAPIBurst,
	}
}

// AddFlags registers the agent's flags on fs.
func (o *FailoverAgentOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClusterName, "cluster-name", o.ClusterName,
		"Name of this managed cluster on the hub (a DNS-1123 label). If empty, the name stored in the hub kubeconfig Secret is used, else one is generated.")
	fs.StringVar(&o.AgentName, "agent-name", o.AgentName,
		"Name of this agent in its client certificate (a DNS-1123 label). If empty, the stored name is used, else one is generated.")
	fs.StringVar(&o.BootstrapKubeconfig, "bootstrap-kubeconfig", o.BootstrapKubeconfig,
		"Path of the bootstrap kubeconfig file of the primary hub. Required.")
	fs.StringVar(&o.HubKubeconfigSecret, "hub-kubeconfig-secret", o.HubKubeconfigSecret,
		"Name of the Secret, in the agent namespace, that receives the hub kubeconfig and client certificate.")
	fs.StringVar(&o.HubKubeconfigDir, "hub-kubeconfig-dir", o.HubKubeconfigDir,
		"Directory the hub kubeconfig Secret is mirrored to, one file per key.")
	fs.StringArrayVar(&o.SpokeExternalServerURLs, "spoke-external-server-urls", o.SpokeExternalServerURLs,
		"Absolute https URL of the spoke cluster's API server, published to the hub. Repeatable.")
	fs.DurationVar(&o.ClusterHealthCheckPeriod, "cluster-healthcheck-period", o.ClusterHealthCheckPeriod,
		"Period of the spoke health check and ManagedCluster status resync. Must be greater than 0.")
	fs.IntVar(&o.MaxCustomClusterClaims, "max-custom-cluster-claims", o.MaxCustomClusterClaims,
		"Maximum number of custom (non-reserved) ClusterClaims exposed in the ManagedCluster status.")
	fs.StringVar(&o.SpokeKubeconfig, "spoke-kubeconfig", o.SpokeKubeconfig,
		"Kubeconfig file of the managed cluster, for hosted mode: Nodes, ClusterClaims and health are read through it and a changed file is picked up without a restart; the agent namespace stays on the in-cluster/--kubeconfig cluster. If empty, the in-cluster config or --kubeconfig is used for everything.")
	fs.StringVar(&o.FailoverConfigName, "failover-config-name", o.FailoverConfigName,
		"Name of the FailoverConfig, in the agent namespace, that lists the alternate hubs.")
	fs.StringVar(&o.BootstrapKubeconfigSecret, "bootstrap-kubeconfig-secret", o.BootstrapKubeconfigSecret,
		"Secret in the agent namespace whose \"kubeconfig\" key, when present, replaces --bootstrap-kubeconfig; it is watched so a new bootstrap kubeconfig takes effect without a restart. Empty disables it.")
	fs.Int32Var(&o.ClientCertExpirationSeconds, "client-cert-expiration-seconds", o.ClientCertExpirationSeconds,
		"Requested lifetime of the hub client certificate in seconds (at least 600); 0 leaves it to the hub.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "QPS to use while talking with the apiserver of the spoke (and of the cluster hosting the agent).")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst to use while talking with the apiserver of the spoke (and of the cluster hosting the agent).")
	fs.Float32Var(&o.HubKubeAPIQPS, "hub-kube-api-qps", o.HubKubeAPIQPS, "QPS to use while talking with the hub apiserver.")
	fs.IntVar(&o.HubKubeAPIBurst, "hub-kube-api-burst", o.HubKubeAPIBurst, "Burst to use while talking with the hub apiserver.")
	fs.StringArrayVar(&o.BootstrapKubeconfigs, "bootstrap-kubeconfigs", o.BootstrapKubeconfigs,
		"Bootstrap kubeconfig file of a hub, repeatable, in order of preference (OCM's MultipleHubs): the first is the primary and replaces --bootstrap-kubeconfig, each other one is an alternate hub named after the file's directory (/spoke/<name>/kubeconfig).")
	fs.Int32Var(&o.HubConnectionTimeoutSeconds, "hub-connection-timeout-seconds", o.HubConnectionTimeoutSeconds,
		"Seconds the active hub may go without a successful request before the agent fails over, while no FailoverConfig exists (its spec.hubConnectionTimeout wins). 0 means 90; else at least 10.")
	fs.StringToStringVar(&o.ClusterAnnotations, "cluster-annotations", o.ClusterAnnotations,
		"Annotations (key=value,...) set on the ManagedCluster when the agent creates it; only keys with the prefix \"agent.open-cluster-management.io\" are used, as in OCM.")
	fs.StringSliceVar(&o.ReservedClusterClaimSuffixes, "reserved-cluster-claim-suffixes", o.ReservedClusterClaimSuffixes,
		"ClusterClaims whose names end with one of these suffixes are reserved: always exposed, not counted against --max-custom-cluster-claims.")
	fs.BoolVar(&o.DisableAddOnManagement, "disable-addon-management", o.DisableAddOnManagement,
		"Do not register the cluster's add-ons with the hub (their hub kubeconfig Secrets) nor report their lease-based health.")
	fs.BoolVar(&o.DisableStandbyCredentials, "disable-standby-credentials", o.DisableStandbyCredentials,
		"Do not keep a client certificate on the standby hubs (Secrets <hub-kubeconfig-secret>-<hub>); a switch then sends a CSR to the new hub and waits for its approval.")
}

// CompleteNamespace fills in ComponentNamespace when it is empty, without a call to the cluster: from the
// service-account namespace file, else DefaultComponentNamespace. The command runs it before any I/O (with
// ValidateFlags); Complete runs it first.
func (o *FailoverAgentOptions) CompleteNamespace() {
	if o.ComponentNamespace != "" {
		return
	}
	o.ComponentNamespace = DefaultComponentNamespace
	if data, err := os.ReadFile(serviceAccountNamespaceFile); err == nil {
		if ns := strings.TrimSpace(string(data)); ns != "" {
			o.ComponentNamespace = ns
		}
	}
}

// ValidateFlags checks the rules that need no I/O. Empty cluster and agent names are allowed here
// (they are resolved from the stored identity or generated); Validate checks the resolved values.
// The error lists every violation, each naming the flag, the value and the rule.
func (o *FailoverAgentOptions) ValidateFlags() error {
	var errs []error
	switch {
	case len(o.BootstrapKubeconfigs) > 0 && o.BootstrapKubeconfig != "":
		errs = append(errs, fmt.Errorf("--bootstrap-kubeconfig %q: must be empty when --bootstrap-kubeconfigs lists the hubs (its first entry is the primary)", o.BootstrapKubeconfig))
	case len(o.BootstrapKubeconfigs) > 0:
		if _, _, err := o.HubFiles(); err != nil {
			errs = append(errs, err)
		}
	case o.BootstrapKubeconfig == "":
		errs = append(errs, errors.New(`--bootstrap-kubeconfig "": must name the bootstrap kubeconfig file of the primary hub`))
	}
	if t := o.HubConnectionTimeoutSeconds; t != 0 && time.Duration(t)*time.Second < failoverv1alpha1.MinHubConnectionTimeout {
		errs = append(errs, fmt.Errorf("--hub-connection-timeout-seconds %d: must be 0 (the default, %d) or at least %d", t, int(failoverv1alpha1.DefaultHubConnectionTimeout.Seconds()), int(failoverv1alpha1.MinHubConnectionTimeout.Seconds())))
	}
	if o.ClusterName != "" {
		errs = append(errs, dnsLabelError("--cluster-name", o.ClusterName)...)
	}
	if o.AgentName != "" {
		errs = append(errs, dnsLabelError("--agent-name", o.AgentName)...)
	}
	if o.HubKubeconfigSecret == "" {
		errs = append(errs, errors.New(`--hub-kubeconfig-secret "": must name a Secret`))
	} else if msgs := validation.IsDNS1123Subdomain(o.HubKubeconfigSecret); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--hub-kubeconfig-secret %q: must be a DNS-1123 subdomain: %s", o.HubKubeconfigSecret, strings.Join(msgs, "; ")))
	} else if limit := hubsession.MaxHubKubeconfigSecretName; !o.DisableStandbyCredentials && len(o.HubKubeconfigSecret) > limit {
		errs = append(errs, fmt.Errorf("--hub-kubeconfig-secret %q: at most %d characters with standby credentials on, so that <name>-<hub> fits in a Secret name; or set --disable-standby-credentials",
			o.HubKubeconfigSecret, limit))
	}
	if o.HubKubeconfigDir == "" {
		errs = append(errs, errors.New(`--hub-kubeconfig-dir "": must name a directory`))
	}
	for _, u := range o.SpokeExternalServerURLs {
		if err := validateExternalServerURL(u); err != nil {
			errs = append(errs, err)
		}
	}
	if o.ClusterHealthCheckPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--cluster-healthcheck-period %q: must be greater than 0", o.ClusterHealthCheckPeriod))
	}
	if o.MaxCustomClusterClaims < 0 {
		errs = append(errs, fmt.Errorf("--max-custom-cluster-claims %d: must be 0 or greater", o.MaxCustomClusterClaims))
	}
	if o.FailoverConfigName != "" {
		if msgs := validation.IsDNS1123Subdomain(o.FailoverConfigName); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--failover-config-name %q: must be a DNS-1123 subdomain: %s", o.FailoverConfigName, strings.Join(msgs, "; ")))
		}
	}
	if o.ClientCertExpirationSeconds != 0 && o.ClientCertExpirationSeconds < 600 {
		errs = append(errs, fmt.Errorf("--client-cert-expiration-seconds %d: must be 0 (hub default) or at least 600", o.ClientCertExpirationSeconds))
	}
	for _, r := range []struct {
		flag  string
		qps   float32
		burst int
	}{{"kube-api", o.KubeAPIQPS, o.KubeAPIBurst}, {"hub-kube-api", o.HubKubeAPIQPS, o.HubKubeAPIBurst}} {
		if r.qps <= 0 {
			errs = append(errs, fmt.Errorf("--%s-qps %v: must be greater than 0", r.flag, r.qps))
		}
		if r.burst <= 0 {
			errs = append(errs, fmt.Errorf("--%s-burst %d: must be greater than 0", r.flag, r.burst))
		}
	}
	return errors.Join(errs...)
}

// Validate checks every flag rule (ValidateFlags) and that the cluster and agent names are non-empty DNS-1123
// labels and the namespace is set. Call it after Complete. The error lists every violation, each naming the
// flag, the value and the rule.
func (o *FailoverAgentOptions) Validate() error {
	var errs []error
	if err := o.ValidateFlags(); err != nil {
		errs = append(errs, err)
	}
	if o.ClusterName == "" {
		errs = append(errs, errors.New(`--cluster-name "": the cluster name must not be empty`))
	}
	if o.AgentName == "" {
		errs = append(errs, errors.New(`--agent-name "": the agent name must not be empty`))
	}
	if o.ComponentNamespace == "" {
		errs = append(errs, errors.New(`component namespace "": must not be empty`))
	}
	return errors.Join(errs...)
}

// HubFiles returns the primary's bootstrap kubeconfig file and the alternate hubs given as files: with
// --bootstrap-kubeconfigs its first entry and the others (each named after its directory), else
// --bootstrap-kubeconfig and none. The error names the flag, the value and the rule when an entry is empty, a
// directory name is not a DNS-1123 label or is "primary", or two entries share a name.
func (o *FailoverAgentOptions) HubFiles() (string, []failover.FileHub, error) {
	if len(o.BootstrapKubeconfigs) == 0 {
		return o.BootstrapKubeconfig, nil, nil
	}
	const flag = "--bootstrap-kubeconfigs"
	var errs []error
	seen := map[string]bool{failoverv1alpha1.HubNamePrimary: true}
	var hubs []failover.FileHub
	for i, path := range o.BootstrapKubeconfigs {
		if path == "" {
			errs = append(errs, fmt.Errorf(`%s "": entry %d must name a bootstrap kubeconfig file`, flag, i+1))
			continue
		}
		if i == 0 {
			continue
		}
		// Secret names are DNS-1123 subdomains, hub names labels: dots become dashes.
		name := strings.ReplaceAll(filepath.Base(filepath.Dir(filepath.Clean(path))), ".", "-")
		switch {
		case len(validation.IsDNS1123Label(name)) > 0:
			errs = append(errs, fmt.Errorf("%s %q: the hub is named after the file's directory, and %q is not a DNS-1123 label: %s",
				flag, path, name, strings.Join(validation.IsDNS1123Label(name), "; ")))
		case seen[name]:
			errs = append(errs, fmt.Errorf("%s %q: the hub is named after the file's directory, and %q is already the name of another hub (the first entry is %q)",
				flag, path, name, failoverv1alpha1.HubNamePrimary))
		default:
			seen[name] = true
			hubs = append(hubs, failover.FileHub{Name: name, Path: path})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return "", nil, err
	}
	return o.BootstrapKubeconfigs[0], hubs, nil
}

func dnsLabelError(flag, value string) []error {
	if msgs := validation.IsDNS1123Label(value); len(msgs) > 0 {
		return []error{fmt.Errorf("%s %q: must be a DNS-1123 label: %s", flag, value, strings.Join(msgs, "; "))}
	}
	return nil
}

// validateExternalServerURL accepts absolute https URLs with a host (IPv6 literals in brackets and a trailing
// slash included) and nothing else.
func validateExternalServerURL(raw string) error {
	const flag = "--spoke-external-server-urls"
	const rule = "must be an absolute https:// URL with a host, e.g. https://10.0.0.1:6443"
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%s %q: %s: %v", flag, raw, rule, err)
	}
	if u.Scheme != "https" || u.Host == "" || u.Hostname() == "" || u.Opaque != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%s %q: %s", flag, raw, rule)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return fmt.Errorf("%s %q: %s: port %q is not a number", flag, raw, rule, p)
		}
		if msgs := validation.IsValidPortNum(n); len(msgs) > 0 {
			return fmt.Errorf("%s %q: %s: port %s: %s", flag, raw, rule, p, strings.Join(msgs, "; "))
		}
	}
	return nil
}
