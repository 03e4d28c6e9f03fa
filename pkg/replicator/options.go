// Package replicator wires `klusterlet-failover replicator`: it reads the ReplicationConfig named by
// --config-name in --namespace, connects to its hubs with the kubeconfigs of their Secrets, and runs the
// replication controller (package replication) over them, restarting it whenever the ReplicationConfig's spec
// or one of those Secrets changes. The decisions live in the subpackages: mirror (what a copy holds and what
// to write), direction (which hub is a cluster's source), hubconn (one hub's caches and reachability) and
// status.
package replicator

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DefaultNamespace is the replicator's namespace when neither --namespace, POD_NAMESPACE nor the
// service-account namespace file gives one.
const DefaultNamespace = "open-cluster-management-replicator"

// DefaultConfigName is the default of --config-name.
const DefaultConfigName = "replication"

const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Options are the replicator's process settings; what is replicated lives in the ReplicationConfig.
type Options struct {
	// Namespace holds the ReplicationConfig, the hubs' kubeconfig Secrets and the leader election lock.
	Namespace string
	// ConfigName is the name of the ReplicationConfig.
	ConfigName string
	// Workers is the number of objects synced in parallel.
	Workers int
	// HubProbeInterval is how often each hub is probed for reachability.
	HubProbeInterval time.Duration
	// StatusInterval is how often the ReplicationConfig's status is recomputed (written only when it changed).
	StatusInterval time.Duration
	// ReportInterval is the longest the replicator lets pass between two writes of a cluster's in-step report
	// (AnnotationHubsReported): an agent takes a report unconfirmed for ReportStaleConfirmations intervals as
	// unknown. One merge patch per replicated cluster per interval on its source hub.
	ReportInterval time.Duration
	// IncarnationInterval is how often each hub's incarnation marker (replication.IncarnationMarker) is read,
	// and the shortest time between two advances of its counter, each one write of the marker made before the
	// replicator copies from the hub. An object copied less than this after the last advance before the backup
	// a hub is restored to may not be made again there from its copies.
	IncarnationInterval time.Duration
	// HubQPS and HubBurst limit the requests to each hub.
	HubQPS   float32
	HubBurst int
	// DisableFencing leaves out the fence (package fence): no ValidatingAdmissionPolicy is installed and no
	// cluster namespace is marked; what an earlier run installed stays until it is deleted by hand.
	DisableFencing bool
}

// NewOptions returns the defaults: 16 workers (each key's copies to every standby at once), probe every 5 s, status every 5 s, 500 QPS and a burst of 1000
// per hub (the initial sync of 10,000 ManifestWorks is about 13,000 writes to a standby).
func NewOptions() *Options {
	return &Options{
		ConfigName:          DefaultConfigName,
		Workers:             16,
		HubProbeInterval:    5 * time.Second,
		StatusInterval:      5 * time.Second,
		ReportInterval:      5 * time.Minute,
		IncarnationInterval: 30 * time.Second,
		HubQPS:              500,
		HubBurst:            1000,
	}
}

// AddFlags registers the options' flags on fs. --namespace is registered by controllercmd.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigName, "config-name", o.ConfigName, "Name of the ReplicationConfig, in the replicator's namespace, to run.")
	fs.IntVar(&o.Workers, "workers", o.Workers, "Number of objects replicated in parallel.")
	fs.DurationVar(&o.HubProbeInterval, "hub-probe-interval", o.HubProbeInterval, "How often each hub is probed; a hub that stops answering is left out until it answers again.")
	fs.DurationVar(&o.StatusInterval, "status-interval", o.StatusInterval, "How often the ReplicationConfig's status is recomputed; it is written only when it changed.")
	fs.DurationVar(&o.ReportInterval, "report-interval", o.ReportInterval, "Longest time between two writes of a cluster's in-step report; "+
		"agents take a report not rewritten for three intervals as unknown (the replicator stopped).")
	fs.DurationVar(&o.IncarnationInterval, "incarnation-interval", o.IncarnationInterval, "How often each hub's incarnation marker is read, and the shortest "+
		"time between two advances of its counter (one write of the marker, before the replicator copies from the hub); an object copied less than this "+
		"after the last advance before a backup a hub is restored to is not made again there from its copies.")
	fs.Float32Var(&o.HubQPS, "hub-kube-api-qps", o.HubQPS, "Requests per second to each hub.")
	fs.IntVar(&o.HubBurst, "hub-kube-api-burst", o.HubBurst, "Burst of requests to each hub.")
	fs.BoolVar(&o.DisableFencing, "disable-fencing", o.DisableFencing, "Do not install the ValidatingAdmissionPolicy "+
		"klusterlet-failover-fence on the hubs, which refuses changes to a cluster's ManifestWorks, ManagedClusterAddOns, "+
		"backup Secrets and ConfigMaps and ManagedCluster spec on the hubs that are not the cluster's source.")
}

// Complete fills Namespace, when empty, from POD_NAMESPACE, then the service-account namespace file, then
// DefaultNamespace.
func (o *Options) Complete() {
	if o.Namespace != "" {
		return
	}
	if ns := strings.TrimSpace(os.Getenv("POD_NAMESPACE")); ns != "" {
		o.Namespace = ns
		return
	}
	o.Namespace = DefaultNamespace
	if data, err := os.ReadFile(serviceAccountNamespaceFile); err == nil {
		if ns := strings.TrimSpace(string(data)); ns != "" {
			o.Namespace = ns
		}
	}
}

// Validate checks the options; the error names every flag whose value breaks a rule.
func (o *Options) Validate() error {
	var errs []error
	if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--namespace %q: %s", o.Namespace, strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsDNS1123Subdomain(o.ConfigName); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--config-name %q: %s", o.ConfigName, strings.Join(msgs, "; ")))
	}
	if o.Workers < 1 || o.Workers > 64 {
		errs = append(errs, fmt.Errorf("--workers %d: must be between 1 and 64", o.Workers))
	}
	if o.HubProbeInterval < time.Second {
		errs = append(errs, fmt.Errorf("--hub-probe-interval %s: must be at least 1s", o.HubProbeInterval))
	}
	if o.StatusInterval < time.Second {
		errs = append(errs, fmt.Errorf("--status-interval %s: must be at least 1s", o.StatusInterval))
	}
	if o.ReportInterval < time.Second || o.ReportInterval > time.Hour {
		errs = append(errs, fmt.Errorf("--report-interval %s: must be between 1s and 1h", o.ReportInterval))
	}
	if o.IncarnationInterval < time.Second || o.IncarnationInterval > time.Hour {
		errs = append(errs, fmt.Errorf("--incarnation-interval %s: must be between 1s and 1h", o.IncarnationInterval))
	}
	if o.HubQPS <= 0 {
		errs = append(errs, fmt.Errorf("--hub-kube-api-qps %g: must be greater than 0", o.HubQPS))
	}
	if o.HubBurst < 1 {
		errs = append(errs, fmt.Errorf("--hub-kube-api-burst %d: must be at least 1", o.HubBurst))
	}
	return errors.Join(errs...)
}
