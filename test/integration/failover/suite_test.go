// Package failover_test is the real-wire suite of hub failover (moving the cluster to an alternate hub when the
// active one is lost, rejects it or is switched away from; docs/design.md §6): the agent runs in-process against
// real kube-apiservers (a spoke and two or more hubs with OCM's hub controller) from test/framework, and
// the tests take hubs away by stopping their apiserver or cutting them off behind a TCP proxy.
//
// Run: KUBEBUILDER_ASSETS=$(hack/build-test-binaries.sh) go test ./test/integration/failover/ -count=1 -v
package failover_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// Identity and names the tests use.
const (
	clusterName = "cluster1"
	agentName   = "agent1"
	// hubB is the name of the first alternate hub in the FailoverConfig.
	hubB = "hub-b"
	// hubBSecret holds hub B's bootstrap kubeconfig in the agent namespace.
	hubBSecret = "hub-b-bootstrap"
	// primary is the reserved name of the --bootstrap-kubeconfig hub.
	primary = failoverv1alpha1.HubNamePrimary
)

// Timings. The FailoverConfig minimums are 10s (timeouts, grace, skip) and 5s (probe interval); the waits add
// generous slack for a loaded 2-core machine running three or four control planes.
const (
	// connectionTimeout is spec.hubConnectionTimeout of the hub-loss test, the figure the closing note reports.
	connectionTimeout = 30 * time.Second
	// shortConnectionTimeout is spec.hubConnectionTimeout where the loss itself is not what is measured.
	shortConnectionTimeout = 15 * time.Second
	// rejectionGracePeriod is spec.hubRejectionGracePeriod.
	rejectionGracePeriod = 30 * time.Second
	// probeInterval is spec.probeInterval.
	probeInterval = 5 * time.Second
	// skipPeriod is spec.failedHubSkipPeriod.
	skipPeriod = 15 * time.Second
	// healthyFor is spec.failback.healthyFor.
	healthyFor = 10 * time.Second

	// failoverSlack is what a failover may take beyond the connection timeout (bootstrap on the new hub: CSR,
	// approval, Secret, main controllers, status) on a loaded machine.
	failoverSlack = 60 * time.Second
	// joinTimeout bounds the first join of an agent (agent start → Available on the hub).
	joinTimeout = 60 * time.Second
	// statusTimeout bounds how long a change takes to show in the FailoverConfig status or events.
	statusTimeout = 30 * time.Second
)

// bed is a spoke, hub A (the primary, behind a proxy), hub B (an alternate) and the agent.
type bed struct {
	spoke *framework.Spoke
	hubA  *framework.Hub
	hubB  *framework.Hub
	agent *util.Agent
}

// bedOptions tunes newBed.
type bedOptions struct {
	// spec is the FailoverConfig spec; hub B is prepended to its alternates unless noHubB.
	spec failoverv1alpha1.FailoverConfigSpec
	// noFailoverConfig starts the agent without a FailoverConfig (primary only).
	noFailoverConfig bool
	// hubA and hubB override the hub options (names are set).
	hubA, hubB framework.HubOptions
	// noHubB starts no hub B.
	noHubB bool
	// noHubBController runs hub B without OCM's hub controller: nobody approves CSRs or accepts clusters there.
	noHubBController bool
	// beforeAgent runs after the hubs and the spoke started, before the agent (claims, extra Secrets).
	beforeAgent func(b *bed)
	// mutate changes the agent options.
	mutate func(o *klusterlet.FailoverAgentOptions)
	// primaryBootstrap replaces hub A's bootstrap kubeconfig for the agent (e.g. through a CountingProxy).
	primaryBootstrap func(b *bed) []byte
	// hubBBootstrap replaces hub B's bootstrap kubeconfig in its Secret.
	hubBBootstrap func(b *bed) []byte
}

// newBed starts the hubs and the spoke, writes hub B's bootstrap Secret and the FailoverConfig, starts the agent
// and waits until the cluster is Available on hub A.
func newBed(t *testing.T, o bedOptions) *bed {
	t.Helper()
	b := &bed{}
	ha := o.hubA
	ha.Name = "hub-a"
	if ha.Signer == "" {
		ha.Signer = framework.SignerInProcess
	}
	ha.Proxy = true
	ha.HubController = true
	b.hubA = framework.StartHub(t, ha)
	if !o.noHubB {
		hb := o.hubB
		hb.Name = hubB
		if hb.Signer == "" {
			hb.Signer = framework.SignerInProcess
		}
		hb.Proxy = true
		hb.HubController = !o.noHubBController
		b.hubB = framework.StartHub(t, hb)
	}
	b.spoke = framework.StartSpoke(t)
	util.EnsureAgentNamespace(t, b.spoke)
	if o.beforeAgent != nil {
		o.beforeAgent(b)
	}
	if !o.noFailoverConfig {
		spec := o.spec
		if b.hubB != nil {
			kubeconfig := b.hubB.BootstrapKubeconfig()
			if o.hubBBootstrap != nil {
				kubeconfig = o.hubBBootstrap(b)
			}
			util.ApplyBootstrapSecret(t, b.spoke, hubBSecret, kubeconfig)
			spec.AlternateHubs = append([]failoverv1alpha1.AlternateHub{{Name: hubB, BootstrapKubeconfigSecretRef: hubBSecret}}, spec.AlternateHubs...)
		}
		util.ApplyFailoverConfig(t, b.spoke, spec)
	}
	bootstrap := b.hubA.BootstrapKubeconfig()
	if o.primaryBootstrap != nil {
		bootstrap = o.primaryBootstrap(b)
	}
	b.agent = util.StartAgent(t, b.spoke, util.AgentConfig{
		Bootstrap: bootstrap,
		Mutate: func(opts *klusterlet.FailoverAgentOptions) {
			opts.ClusterName, opts.AgentName = clusterName, agentName
			if o.mutate != nil {
				o.mutate(opts)
			}
		},
	})
	start := time.Now()
	util.WaitForClusterAvailable(t, b.hubA, clusterName, joinTimeout)
	t.Logf("cluster %s Available on hub A %s after agent start", clusterName, time.Since(start).Round(time.Millisecond))
	if !o.noFailoverConfig {
		util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "active hub primary and Available", util.ActiveAndAvailable(primary))
	}
	return b
}

// spec returns a FailoverConfig spec with the suite's short timings and connection timeout timeout.
func spec(timeout time.Duration) failoverv1alpha1.FailoverConfigSpec {
	return failoverv1alpha1.FailoverConfigSpec{
		HubConnectionTimeout:    &metav1.Duration{Duration: timeout},
		HubRejectionGracePeriod: &metav1.Duration{Duration: rejectionGracePeriod},
		ProbeInterval:           &metav1.Duration{Duration: probeInterval},
		FailedHubSkipPeriod:     &metav1.Duration{Duration: skipPeriod},
		Failback:                &failoverv1alpha1.FailbackSpec{Policy: failoverv1alpha1.FailbackPolicyNone, HealthyFor: &metav1.Duration{Duration: healthyFor}},
	}
}

// expectSecretFor checks that the hub kubeconfig Secret holds credentials for hub (server) with the suite's
// identity, and returns it.
func (b *bed) expectSecretFor(t *testing.T, hub *framework.Hub) map[string][]byte {
	t.Helper()
	secret := util.HubKubeconfigSecret(t, b.spoke)
	if secret == nil {
		t.Fatalf("hub kubeconfig secret is missing")
	}
	if got := util.KubeconfigServer(secret.Data[failoverv1alpha1.KubeconfigSecretKey]); got != hub.URL() {
		t.Errorf("hub kubeconfig secret: server %q, want hub %s's %q", got, hub.Name, hub.URL())
	}
	if got := string(secret.Data[clientcert.ClusterNameSecretKey]); got != clusterName {
		t.Errorf("hub kubeconfig secret: cluster-name %q, want %q", got, clusterName)
	}
	if got := string(secret.Data[clientcert.AgentNameSecretKey]); got != agentName {
		t.Errorf("hub kubeconfig secret: agent-name %q, want %q", got, agentName)
	}
	return secret.Data
}

// expectEvents checks that at least one event of each reason exists in the agent namespace.
func (b *bed) expectEvents(t *testing.T, reasons ...string) {
	t.Helper()
	got := util.EventReasons(t, b.spoke)
	for _, r := range reasons {
		if got[r] == 0 {
			t.Errorf("no event %s in namespace %s; events: %v", r, util.AgentNamespace, got)
		}
	}
}

// waitEvent waits for an event of reason in the agent namespace.
func (b *bed) waitEvent(t *testing.T, reason string) {
	t.Helper()
	util.WaitForEventCount(t, b.spoke, reason, 1, statusTimeout)
}

// expectNotExited fails when the agent's run returned.
func (b *bed) expectNotExited(t *testing.T) {
	t.Helper()
	if done, err := b.agent.Exited(); done {
		t.Fatalf("the agent exited (error %v); it must keep running", err)
	}
}

// lastFailoverIs is a WaitForFailoverConfig condition on status.lastFailover (finished) and failoverCount.
func lastFailoverIs(from, to string, reason failoverv1alpha1.FailoverReason, count int32) func(*failoverv1alpha1.FailoverConfig) (bool, string) {
	return func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		lf := fc.Status.LastFailover
		switch {
		case lf == nil:
			return false, "no lastFailover"
		case lf.From != from || lf.To != to || lf.Reason != reason:
			return false, fmt.Sprintf("lastFailover %s->%s (%s), want %s->%s (%s)", lf.From, lf.To, lf.Reason, from, to, reason)
		case lf.EndTime == nil:
			return false, "lastFailover has no endTime"
		case fc.Status.FailoverCount != count:
			return false, fmt.Sprintf("failoverCount %d, want %d", fc.Status.FailoverCount, count)
		}
		return true, ""
	}
}

// probeIs is a WaitForFailoverConfig condition: status.hubs[name].probeResult is result and, when substr is
// set, its message contains substr.
func probeIs(name string, result failoverv1alpha1.HubProbeResult, substr string) func(*failoverv1alpha1.FailoverConfig) (bool, string) {
	return func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		h := util.HubProbe(fc, name)
		if h == nil {
			return false, fmt.Sprintf("no status.hubs entry %s", name)
		}
		if h.ProbeResult != result || !strings.Contains(h.Message, substr) {
			return false, fmt.Sprintf("hub %s probe %s (%q), want %s containing %q", name, h.ProbeResult, h.Message, result, substr)
		}
		return true, ""
	}
}

// standbyCredentialsAre is a WaitForFailoverConfig condition: status.hubs[name].standbyCredentials.state is state.
func standbyCredentialsAre(name string, state failoverv1alpha1.StandbyCredentialsState) func(*failoverv1alpha1.FailoverConfig) (bool, string) {
	return func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		h := util.HubProbe(fc, name)
		if h == nil || h.StandbyCredentials == nil {
			return false, "no standbyCredentials for hub " + name
		}
		return h.StandbyCredentials.State == state, fmt.Sprintf("standbyCredentials of hub %s: %+v", name, *h.StandbyCredentials)
	}
}

// hubInfo is the hub's server and CA as its bootstrap kubeconfig gives them (what credentials for it must name).
func hubInfo(t *testing.T, hub *framework.Hub) clientcert.HubInfo {
	t.Helper()
	info, err := clientcert.HubInfoFromKubeconfig(hub.BootstrapKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	return info
}
