package failover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// The hub registry: the configured hubs, in order, with their bootstrap kubeconfigs as last read (the primary's
// file or Secret, the FileHubs' files, the FailoverConfig alternates' Secrets) and what is known about each.
// Everything here but fileReads is touched by the decision goroutine only.

// hubEntry is one configured hub as the orchestrator knows it.
type hubEntry struct {
	name   string
	source string
	raw    []byte
	// readErr is the error reading the source gave (missing Secret or key), "" if none; with source and raw it
	// tells whether the source changed since the last round.
	readErr   string
	bootstrap *clientcert.BootstrapKubeconfig
	// loadErr is readErr or the parse error of raw.
	loadErr error
	// sessionErr is why the last session on this hub could not be built, "" if it could; kept until the
	// bootstrap kubeconfig changes.
	sessionErr string

	failedAt      time.Time
	probe         ProbeResult
	probed        bool
	probeTime     time.Time
	probeChange   time.Time
	probeSuccess  time.Time
	healthySince  RejectionTracker
	probeInFlight bool
	// fullProbeTime is when the last full standby probe (ProbeRESTConfig) started.
	fullProbeTime time.Time
}

// FileHub is an alternate hub whose bootstrap kubeconfig is a file.
type FileHub struct {
	// Name is the hub's name in events, metrics and the FailoverConfig status (a DNS-1123 label, not "primary").
	Name string
	// Path is the bootstrap kubeconfig file; file references in it resolve against its directory.
	Path string
}

// fileHubNames returns the names of the FileHubs, in order.
func (r *Orchestrator) fileHubNames() []string {
	names := make([]string, 0, len(r.o.FileHubs))
	for _, fh := range r.o.FileHubs {
		names = append(names, fh.Name)
	}
	return names
}

// fileRead is one read of a bootstrap kubeconfig file: its content, or the read error's message.
type fileRead struct {
	raw    []byte
	errMsg string
}

// hubSource is where a hub's bootstrap kubeconfig was read from, and what was read.
type hubSource struct {
	name, desc string
	raw        []byte
	readErr    error
	// fromFile is set for the --bootstrap-kubeconfig file, whose file references resolve against its directory.
	fromFile bool
}

// fileReads holds the last read of every bootstrap kubeconfig file (the primary's and FileHubs'), by path. The
// file poll (a goroutine of its own) writes it, the decision goroutine reads it; mu guards m.
type fileReads struct {
	mu sync.Mutex
	m  map[string]fileRead
}

// reconcileHubs loads the configured hubs (primary file or Secret, alternates' Secrets) into the registry. An
// active hub whose bootstrap kubeconfig changed, or that was removed, is decided on by Decide (the View's
// ActiveBootstrapChanged, and Hubs without the active hub); an unusable replacement of the active hub's
// bootstrap kubeconfig keeps the previous one.
func (r *Orchestrator) reconcileHubs(spec failoverv1alpha1.FailoverConfigSpec) {
	sources := []hubSource{r.primarySource()}
	named := map[string]bool{failoverv1alpha1.HubNamePrimary: true}
	shadowed := map[string]bool{}
	for _, fh := range r.o.FileHubs {
		named[fh.Name] = true
		sources = append(sources, r.fileSource(fh.Name, fh.Path))
	}
	for _, alt := range spec.AlternateHubs {
		if named[alt.Name] {
			if alt.Name != failoverv1alpha1.HubNamePrimary && !r.duplicateHubs[alt.Name] {
				r.o.Agent.Recorder.Warningf(ReasonAlternateHubShadowed, "FailoverConfig %s/%s lists hub %s, which --bootstrap-kubeconfigs already names; the bootstrap kubeconfig file is used and this entry is ignored",
					r.o.Agent.Namespace, r.o.FailoverConfigName, alt.Name)
			}
			shadowed[alt.Name] = true
			continue
		}
		desc := fmt.Sprintf("secret %s/%s key %s", r.o.Agent.Namespace, alt.BootstrapKubeconfigSecretRef, failoverv1alpha1.KubeconfigSecretKey)
		s := hubSource{name: alt.Name, desc: desc}
		secret, err := r.o.Agent.SecretInformer.Lister().Secrets(r.o.Agent.Namespace).Get(alt.BootstrapKubeconfigSecretRef)
		switch {
		case err != nil:
			s.readErr = fmt.Errorf("%s: %w", desc, err)
		case len(secret.Data[failoverv1alpha1.KubeconfigSecretKey]) == 0:
			s.readErr = fmt.Errorf("%s: key is missing or empty", desc)
		default:
			s.raw = secret.Data[failoverv1alpha1.KubeconfigSecretKey]
		}
		sources = append(sources, s)
	}

	r.duplicateHubs = shadowed
	seen := map[string]bool{}
	r.order = r.order[:0]
	for _, s := range sources {
		seen[s.name] = true
		r.order = append(r.order, s.name)
		h, existed := r.hubs[s.name]
		if !existed {
			h = &hubEntry{name: s.name}
			r.hubs[s.name] = h
		}
		if existed && bytes.Equal(h.raw, s.raw) && h.source == s.desc && h.readErr == text.Error(s.readErr) {
			continue
		}
		h.source, h.raw, h.readErr = s.desc, s.raw, text.Error(s.readErr)
		previous := h.bootstrap
		h.bootstrap, h.loadErr = nil, s.readErr
		if s.readErr == nil {
			if s.fromFile {
				h.bootstrap, h.loadErr = clientcert.ParseBootstrapKubeconfigFileData(s.raw, s.desc)
			} else {
				h.bootstrap, h.loadErr = clientcert.ParseBootstrapKubeconfig(s.raw, s.desc)
			}
		}
		h.probed = false
		h.failedAt = time.Time{}
		h.sessionErr = ""
		if existed {
			msg := fmt.Sprintf("bootstrap kubeconfig of hub %s (%s) changed", s.name, s.desc)
			if h.loadErr != nil {
				msg += ": " + h.loadErr.Error()
			}
			r.o.Agent.Recorder.Eventf(ReasonBootstrapKubeconfigChanged, "%s", msg)
			if s.name == r.run.hub && h.loadErr != nil && previous != nil {
				// An unusable replacement must not tear down a working registration (scenario 3 never needs
				// the bootstrap): the session keeps the last good bootstrap kubeconfig, Degraded names the error.
				h.bootstrap = previous
				r.o.Agent.Recorder.Warningf(ReasonBootstrapKubeconfigInvalid, "bootstrap kubeconfig of the active hub %s is unusable (%v); the agent stays registered and keeps the previous one until it is fixed", s.name, h.loadErr)
			}
		}
	}
	for name := range r.hubs {
		if !seen[name] {
			delete(r.hubs, name)
			r.o.Metrics.ForgetHub(name)
			r.forgetStandby(r.ctx, name)
			r.o.Agent.Recorder.Eventf(ReasonBootstrapKubeconfigChanged, "hub %s was removed from FailoverConfig %s/%s", name, r.o.Agent.Namespace, r.o.FailoverConfigName)
		}
	}
}

// primarySource reads the primary's bootstrap kubeconfig: the watched Secret when it exists, else the file.
func (r *Orchestrator) primarySource() (s hubSource) {
	s.name = failoverv1alpha1.HubNamePrimary
	if r.o.PrimaryBootstrapSecretName != "" {
		secret, err := r.o.Agent.SecretInformer.Lister().Secrets(r.o.Agent.Namespace).Get(r.o.PrimaryBootstrapSecretName)
		if err == nil && len(secret.Data[failoverv1alpha1.KubeconfigSecretKey]) > 0 {
			s.desc = fmt.Sprintf("secret %s/%s key %s", r.o.Agent.Namespace, r.o.PrimaryBootstrapSecretName, failoverv1alpha1.KubeconfigSecretKey)
			s.raw = secret.Data[failoverv1alpha1.KubeconfigSecretKey]
			return s
		}
	}
	return r.fileSource(s.name, r.o.PrimaryBootstrapKubeconfigFile)
}

// fileSource is hub name's bootstrap kubeconfig as last read from the file at path.
func (r *Orchestrator) fileSource(name, path string) hubSource {
	s := hubSource{name: name, desc: path, fromFile: true}
	r.files.mu.Lock()
	read := r.files.m[path]
	r.files.mu.Unlock()
	s.raw = read.raw
	if read.errMsg != "" {
		s.readErr = errors.New(read.errMsg)
	}
	return s
}

// specWithoutFailoverConfig is the spec in force while no FailoverConfig exists: the API defaults, with
// HubConnectionTimeout when it is set.
func (r *Orchestrator) specWithoutFailoverConfig() failoverv1alpha1.FailoverConfigSpec {
	spec := failoverv1alpha1.FailoverConfigSpec{}
	if r.o.HubConnectionTimeout > 0 {
		spec.HubConnectionTimeout = &metav1.Duration{Duration: r.o.HubConnectionTimeout}
	}
	return failoverv1alpha1.WithDefaults(spec)
}

// pollFiles re-reads the bootstrap kubeconfig files every FilePollInterval until ctx ends and enqueues a round
// on a change (a mounted Secret is updated in place by the kubelet; FC-01). It runs as the controller's
// post-start hook, in a goroutine of its own; it always returns nil.
func (r *Orchestrator) pollFiles(ctx context.Context, _ factory.SyncContext) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.o.Agent.Clock.After(r.o.FilePollInterval):
		}
		if r.readFiles() {
			r.kick()
		}
	}
}

// readFiles reads the bootstrap kubeconfig files (the primary's and FileHubs') and reports whether the content
// or read error of any of them changed.
func (r *Orchestrator) readFiles() bool {
	paths := []string{r.o.PrimaryBootstrapKubeconfigFile}
	for _, fh := range r.o.FileHubs {
		paths = append(paths, fh.Path)
	}
	changed := false
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		read := fileRead{raw: raw}
		if err != nil {
			read = fileRead{errMsg: fmt.Sprintf("bootstrap kubeconfig %s: %v", path, err)}
		}
		r.files.mu.Lock()
		last, seen := r.files.m[path]
		if !seen || !bytes.Equal(read.raw, last.raw) || read.errMsg != last.errMsg {
			changed = true
			r.files.m[path] = read
		}
		r.files.mu.Unlock()
	}
	return changed
}

// hubViews is the registry as Decide sees it. HoldsCredentials is only worked out while no session runs or the
// active hub was removed (Decide then selects a hub): it reads and checks the stored hub kubeconfig Secret.
func (r *Orchestrator) hubViews(now time.Time) []HubView {
	var stored map[string][]byte
	if _, ok := r.hubs[r.run.hub]; r.run.session == nil || !ok {
		if secret, err := r.o.Agent.SecretInformer.Lister().Secrets(r.o.Agent.Namespace).Get(r.o.Agent.SecretName); err == nil {
			stored = secret.Data
		}
	}
	out := make([]HubView, 0, len(r.order))
	for _, name := range r.order {
		h := r.hubs[name]
		v := HubView{Name: name, Usable: h.bootstrap != nil, SessionError: h.sessionErr, Probed: h.probed, Probe: h.probe.Result,
			FailedAt: h.failedAt, HealthySince: h.healthySince.Since()}
		if stored != nil && h.bootstrap != nil {
			v.HoldsCredentials = clientcert.CheckHubKubeconfig(stored, r.o.Agent.ClusterName, r.o.Agent.AgentName, h.bootstrap.Hub, now) == nil
		}
		out = append(out, v)
	}
	return out
}

func (r *Orchestrator) failoverConfig() *failoverv1alpha1.FailoverConfig {
	if r.o.FailoverConfigName == "" || r.o.FailoverConfigInformer == nil {
		return nil
	}
	fc, err := r.o.FailoverConfigInformer.Lister().FailoverConfigs(r.o.Agent.Namespace).Get(r.o.FailoverConfigName)
	if err != nil {
		return nil
	}
	return fc
}
