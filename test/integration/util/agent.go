// Package util runs the klusterlet-failover agent in-process against the real control planes of
// test/framework and holds the waits and assertions the integration suites share.
package util

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/klusterlet-failover/klusterlet-failover/manifests/crd"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// AgentNamespace is the agent namespace the suites use on the spoke.
const AgentNamespace = "open-cluster-management-agent"

// Agent is an agent running in-process (RunWithClients) against a real spoke apiserver.
type Agent struct {
	// Options are the agent's options after the run started (ClusterName and AgentName resolved once Ready).
	Options *klusterlet.FailoverAgentOptions
	// BootstrapFile is the path of the primary bootstrap kubeconfig file; rewrite it to change the bootstrap.
	BootstrapFile string
	// Metrics are this agent's failover metrics (a private registry).
	Metrics *failover.Metrics
	// Registry is the private registry Metrics are registered in.
	Registry metrics.KubeRegistry

	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	err    error
}

// AgentConfig configures StartAgent.
type AgentConfig struct {
	// Bootstrap is the primary hub's bootstrap kubeconfig, written to a file.
	Bootstrap []byte
	// Mutate, if set, changes the options before the run (names, periods, URLs).
	Mutate func(o *klusterlet.FailoverAgentOptions)
	// HubKubeconfigDir is the mirror directory; default a fresh temp dir.
	HubKubeconfigDir string
	// Clock is the agent's clock; default the real clock.
	Clock clock.Clock
	// SpokeConfig, if set, is the agent's spoke client config instead of spoke.AdminConfig (e.g. through a proxy).
	SpokeConfig *rest.Config
	// SpokeKubeconfigFile, if set, runs the agent in hosted mode: --spoke-kubeconfig is this file (the managed
	// cluster) and the spoke passed to StartAgent is the cluster hosting the agent (its namespace, Secrets,
	// FailoverConfig and events), as for the binary.
	SpokeKubeconfigFile string
}

// EnsureAgentNamespace creates the agent namespace and installs the FailoverConfig CRD on the spoke.
func EnsureAgentNamespace(t testing.TB, spoke *framework.Spoke) {
	t.Helper()
	ctx := context.Background()
	_, err := spoke.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: AgentNamespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s on the spoke: %v", AgentNamespace, err)
	}
	InstallFailoverConfigCRD(t, spoke)
}

// InstallFailoverConfigCRD installs the FailoverConfig CRD from manifests/crd and waits until it is served.
func InstallFailoverConfigCRD(t testing.TB, spoke *framework.Spoke) {
	t.Helper()
	ctx := context.Background()
	def, err := crd.FailoverConfigCRD()
	if err != nil {
		t.Fatalf("load FailoverConfig CRD: %v", err)
	}
	client := apiextensionsclient.NewForConfigOrDie(spoke.AdminConfig)
	if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, def, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create FailoverConfig CRD: %v", err)
	}
	framework.Eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, error) {
		got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, def.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	}, "FailoverConfig CRD established")
}

// StartAgent writes the bootstrap kubeconfig to a file and runs the agent in a goroutine until the test ends
// (or Stop). Options default to: namespace AgentNamespace, a temp mirror dir, a 10s health-check period.
func StartAgent(t testing.TB, spoke *framework.Spoke, cfg AgentConfig) *Agent {
	t.Helper()
	EnsureAgentNamespace(t, spoke)
	dir := t.TempDir()
	bootstrapFile := filepath.Join(dir, "bootstrap.kubeconfig")
	if err := os.WriteFile(bootstrapFile, cfg.Bootstrap, 0o600); err != nil {
		t.Fatalf("write bootstrap kubeconfig: %v", err)
	}
	o := klusterlet.NewFailoverAgentOptions()
	o.ComponentNamespace = AgentNamespace
	o.BootstrapKubeconfig = bootstrapFile
	o.HubKubeconfigDir = cfg.HubKubeconfigDir
	if o.HubKubeconfigDir == "" {
		o.HubKubeconfigDir = filepath.Join(dir, "hub-kubeconfig")
	}
	o.ClusterHealthCheckPeriod = 10 * time.Second
	o.SpokeKubeconfig = cfg.SpokeKubeconfigFile
	registry := testutil.NewFakeKubeRegistry("1.34.0")
	o.Metrics = failover.NewMetrics(registry.MustRegister)
	if cfg.Mutate != nil {
		cfg.Mutate(o)
	}
	spokeConfig := spoke.AdminConfig
	if cfg.SpokeConfig != nil {
		spokeConfig = cfg.SpokeConfig
	}
	// The same client construction as the binary (RunFailoverAgent), with spokeConfig as the command's config.
	clients, err := o.NewSpokeClients(spokeConfig)
	if err != nil {
		t.Fatalf("spoke clients: %v", err)
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	// The correlator options of library-go's controllercmd (what the agent binary runs with): the defaults of
	// NewKubeRecorder drop a source's events after a burst of 25, which a failover test exceeds.
	recorder := events.NewKubeRecorderWithOptions(spoke.Kube.CoreV1().Events(AgentNamespace), events.RecommendedClusterSingletonCorrelatorOptions(),
		"failover-agent", &corev1.ObjectReference{Kind: "Namespace", Namespace: AgentNamespace, Name: AgentNamespace, APIVersion: "v1"}, clk)

	ctx, cancel := context.WithCancel(context.Background())
	ctx = klog.NewContext(ctx, klog.Background().WithValues("test", t.Name()))
	a := &Agent{Options: o, BootstrapFile: bootstrapFile, Metrics: o.Metrics, Registry: registry, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		err := o.RunWithClients(ctx, clients, recorder, clk)
		a.mu.Lock()
		a.err = err
		a.mu.Unlock()
	}()
	t.Cleanup(a.Stop)
	return a
}

// Stop cancels the agent and waits (up to 60s) for it to return.
func (a *Agent) Stop() {
	a.cancel()
	select {
	case <-a.done:
	case <-time.After(60 * time.Second):
		panic("agent did not stop within 60s of its context being cancelled")
	}
}

// Exited reports whether RunWithClients returned, and its error.
func (a *Agent) Exited() (bool, error) {
	select {
	case <-a.done:
		a.mu.Lock()
		defer a.mu.Unlock()
		return true, a.err
	default:
		return false, nil
	}
}

// EventReasons returns the reasons of the events in the agent namespace, sorted, with counts.
func EventReasons(t testing.TB, spoke *framework.Spoke) map[string]int {
	t.Helper()
	list, err := spoke.Kube.CoreV1().Events(AgentNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list events: %v", err)
	}
	out := map[string]int{}
	for _, e := range list.Items {
		out[e.Reason] += int(max(e.Count, 1))
	}
	return out
}

// EventMessages returns the messages of the events with reason in the agent namespace.
func EventMessages(t testing.TB, spoke *framework.Spoke, reason string) []string {
	t.Helper()
	list, err := spoke.Kube.CoreV1().Events(AgentNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list events: %v", err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Reason == reason {
			out = append(out, e.Message)
		}
	}
	sort.Strings(out)
	return out
}

// WaitForEvent waits until an event with reason whose message contains substr exists in the agent namespace.
func WaitForEvent(t testing.TB, spoke *framework.Spoke, reason, substr string, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, 200*time.Millisecond, func() (bool, error) {
		for _, m := range EventMessages(t, spoke, reason) {
			if strings.Contains(m, substr) {
				return true, nil
			}
		}
		return false, nil
	}, "event %s containing %q", reason, substr)
}

// Describe formats the agent's identity for messages.
func (a *Agent) Describe() string {
	return fmt.Sprintf("agent %s/%s", a.Options.ClusterName, a.Options.AgentName)
}
