// Package hollow runs many klusterlet-failover agents in one process against real hubs and one real spoke
// apiserver: hollow agents, after Kubernetes' kubemark hollow nodes. Each hollow agent is the agent's own code
// (FailoverAgentOptions from the command's flags, then RunWithClients), with its own cluster name, namespace on
// the spoke, spoke identity (the kube-system UID it reports), metrics registry, event recorder and credentials:
// a client certificate of its own on the spoke (a ServiceAccount's identity, bound by manifests/rbac.yaml) and a
// bootstrap certificate of its own per hub. client-go shares one transport (one connection pool) between clients
// of equal TLS settings in a process, so distinct certificates give every agent its own connections, as separate
// processes have; within an agent, clients share them as in the binary.
//
// What differs from agents in pods: one Go runtime (one garbage collector, one scheduler), one spoke apiserver
// for all (its Nodes, ClusterClaims and health are every agent's), no leader election, no /metrics or /healthz
// endpoint per agent, and no kubelet restart of a failed agent (an agent whose RunWithClients returns stays down
// and Run reports it). The hubs see what they would see from N clusters: N identities, N connections per hub,
// N CSRs, leases and status updates.
//
// Layout of Options.Dir (written by Prepare): one directory per agent, named after its cluster, holding
// SpokeKubeconfigFile, BootstrapKubeconfigFile and KubeSystemUIDFile; the agent's --hub-kubeconfig-dir is made
// there (HubKubeconfigDirName).
package hollow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
)

// Files of an agent's directory.
const (
	// SpokeKubeconfigFile is the agent's kubeconfig of the spoke (its own client certificate).
	SpokeKubeconfigFile = "spoke.kubeconfig"
	// BootstrapKubeconfigFile is the agent's bootstrap kubeconfig of the primary hub (--bootstrap-kubeconfig).
	BootstrapKubeconfigFile = "bootstrap.kubeconfig"
	// KubeSystemUIDFile holds the spoke identity the agent reports (klusterlet.SpokeClients.KubeSystemUID).
	KubeSystemUIDFile = "kube-system-uid"
	// HubKubeconfigDirName is the agent's --hub-kubeconfig-dir, under its directory.
	HubKubeconfigDirName = "hub-kubeconfig"
)

// Options configures Run.
type Options struct {
	// Dir holds one directory per agent (see the package comment). Every directory is an agent.
	Dir string
	// AgentArgs are flags of `klusterlet-failover agent failover` given to every agent, e.g.
	// --spoke-external-server-urls. Run adds each agent's --cluster-name (its directory's name),
	// --bootstrap-kubeconfig and --hub-kubeconfig-dir; its namespace is its cluster name.
	AgentArgs []string
	// StartInterval is the time between the starts of two agents; 0 starts all at once.
	StartInterval time.Duration
	// Shard and Shards split Dir's agents between processes: this process runs the agents whose index in name
	// order, modulo Shards, is Shard. Shards 0 or 1 runs them all. Several processes give a fleet several Go
	// runtimes, as separate agents have: a runtime shared by hundreds of agents that all stop their session's
	// controllers at one moment (a hub lost with its clusters) lets those stops delay each other (see
	// docs/testbed.md, "Hollow agents").
	Shard, Shards int
}

// AddFlags registers the flags of the hollow-agents command that set o (--dir, --start-interval, --shard,
// --shards) on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Dir, "dir", o.Dir, "Directory with one directory per agent (hollow.Prepare's layout). Required.")
	fs.DurationVar(&o.StartInterval, "start-interval", o.StartInterval, "Time between the starts of two agents.")
	fs.IntVar(&o.Shard, "shard", o.Shard, "Which of --shards processes this is, from 0.")
	fs.IntVar(&o.Shards, "shards", 1, "How many processes share DIR's agents; this one runs every --shards-th from --shard.")
}

// ShardOf returns the names of shard (from 0) of shards: those whose index in sorted order, modulo shards, is
// shard; all of them when shards is 0 or 1. names is not changed.
func ShardOf(names []string, shard, shards int) []string {
	sorted := slices.Sorted(slices.Values(names))
	if shards <= 1 {
		return sorted
	}
	var out []string
	for i, n := range sorted {
		if i%shards == shard {
			out = append(out, n)
		}
	}
	return out
}

// check returns an error naming the field when the shard settings are out of range.
func (o Options) check() error {
	if o.Shards < 0 || o.Shard < 0 || (o.Shards > 1 && o.Shard >= o.Shards) || (o.Shards <= 1 && o.Shard != 0) {
		return fmt.Errorf("hollow agents: shard %d of %d: the shard must be in [0, shards)", o.Shard, o.Shards)
	}
	return nil
}

// Run builds every agent of o.Dir, then starts them StartInterval apart and blocks until ctx ends and every agent
// has returned. It returns an error naming the agent and the file or flag at fault when an agent cannot be built
// (before any agent starts), and the errors of agents whose RunWithClients failed (joined) once all have
// returned.
func Run(ctx context.Context, o Options) error {
	if err := o.check(); err != nil {
		return err
	}
	entries, err := os.ReadDir(o.Dir)
	if err != nil {
		return fmt.Errorf("hollow agents: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	var agents []*agent
	for _, name := range ShardOf(dirs, o.Shard, o.Shards) {
		a, err := newAgent(filepath.Join(o.Dir, name), name, o.AgentArgs)
		if err != nil {
			return err
		}
		agents = append(agents, a)
	}
	if len(agents) == 0 {
		return fmt.Errorf("hollow agents: no agent directory in %s for shard %d of %d", o.Dir, o.Shard, o.Shards)
	}
	klog.FromContext(ctx).Info("Starting hollow agents", "count", len(agents), "startInterval", o.StartInterval)

	errs := make([]error, len(agents))
	var wg sync.WaitGroup
	for i, a := range agents {
		if i > 0 && o.StartInterval > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(o.StartInterval):
			}
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.run(ctx); err != nil {
				errs[i] = fmt.Errorf("hollow agent %s: %w", a.name, err)
				klog.FromContext(ctx).Error(err, "Hollow agent stopped", "cluster", a.name)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// agent is one hollow agent, built and not yet running.
type agent struct {
	name     string
	options  *klusterlet.FailoverAgentOptions
	clients  *klusterlet.SpokeClients
	recorder events.Recorder
}

// newAgent builds the agent of dir: its options from args and its own flags (through the command's AddFlags, so
// the same defaults and parsing), its spoke clients from its kubeconfig and its reported kube-system UID.
func newAgent(dir, name string, args []string) (*agent, error) {
	o := klusterlet.NewFailoverAgentOptions()
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	o.AddFlags(fs)
	all := append(slices.Clone(args),
		"--cluster-name="+name,
		"--bootstrap-kubeconfig="+filepath.Join(dir, BootstrapKubeconfigFile),
		"--hub-kubeconfig-dir="+filepath.Join(dir, HubKubeconfigDirName))
	if err := fs.Parse(all); err != nil {
		return nil, fmt.Errorf("hollow agent %s: flags: %w", name, err)
	}
	o.ComponentNamespace = name
	o.Metrics = failover.NewMetrics(metrics.NewKubeRegistry().MustRegister)
	uid, err := os.ReadFile(filepath.Join(dir, KubeSystemUIDFile))
	if err != nil {
		return nil, fmt.Errorf("hollow agent %s: %w", name, err)
	}
	if strings.TrimSpace(string(uid)) == "" {
		return nil, fmt.Errorf("hollow agent %s: %s is empty: every hollow agent needs a spoke identity of its own", name, filepath.Join(dir, KubeSystemUIDFile))
	}
	config, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, SpokeKubeconfigFile))
	if err != nil {
		return nil, fmt.Errorf("hollow agent %s: %w", name, err)
	}
	clients, err := o.NewSpokeClients(config)
	if err != nil {
		return nil, fmt.Errorf("hollow agent %s: %w", name, err)
	}
	clients.KubeSystemUID = strings.TrimSpace(string(uid))
	// Events go through a client of their own, as in the binary (controllercmd's recorder has its own client, so
	// its own client-side rate limit), with the correlator options of library-go's controllercmd.
	eventsClient, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("hollow agent %s: %w", name, err)
	}
	recorder := events.NewKubeRecorderWithOptions(eventsClient.CoreV1().Events(name), events.RecommendedClusterSingletonCorrelatorOptions(),
		"failover-agent", &corev1.ObjectReference{Kind: "Namespace", Namespace: name, Name: name, APIVersion: "v1"}, clock.RealClock{})
	return &agent{name: name, options: o, clients: clients, recorder: recorder}, nil
}

// run runs the agent until ctx ends (RunWithClients).
func (a *agent) run(ctx context.Context) error {
	return a.options.RunWithClients(ctx, a.clients, a.recorder, clock.RealClock{})
}
