package hubsession

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterv1client "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

func testConfig() Config {
	kube := kubefake.NewSimpleClientset()
	return Config{
		ClusterName: "cluster1", AgentName: "agent1", Namespace: "agent-ns", SecretName: "hub-kubeconfig-secret",
		SecretInformer:     informers.NewSharedInformerFactory(kube, 0).Core().V1().Secrets(),
		AgentKubeClient:    kube,
		SpokeKubeClient:    kube,
		SpokeClusterClient: clusterfake.NewSimpleClientset(),
		Controllers:        testControllers(),
		Recorder:           events.NewInMemoryRecorder("test", clock.RealClock{}),
	}
}

// testControllers builds no controller: the tests of this package do not start a phase.
func testControllers() Controllers {
	return Controllers{
		EnsureManagedCluster: func(context.Context, clusterv1client.ManagedClustersGetter) (bool, error) { return false, nil },
		Creating:             func(clusterv1client.ManagedClustersGetter) factory.Controller { return nil },
		Registered:           func(RegisteredInputs) []factory.Controller { return nil },
	}
}

func testHub() Hub {
	return Hub{Name: "primary", Bootstrap: &clientcert.BootstrapKubeconfig{Source: "test", RestConfig: &rest.Config{Host: "https://hub.example.com:6443"}}}
}

// TestNewChecks: New names the first missing field; a valid Config gets its defaults and a session with a
// nil Observer reports to NopObserver.
func TestNewChecks(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(*Config, *Params)
		wantErr string
	}{
		{name: "complete", edit: func(*Config, *Params) {}},
		{name: "no hub name", edit: func(_ *Config, p *Params) { p.Hub.Name = "" }, wantErr: "hub name and bootstrap kubeconfig are required"},
		{name: "no bootstrap kubeconfig", edit: func(_ *Config, p *Params) { p.Hub.Bootstrap = nil }, wantErr: "hub name and bootstrap kubeconfig are required"},
		{name: "no namespace", edit: func(c *Config, _ *Params) { c.Namespace = "" }, wantErr: "namespace and secret name are required"},
		{name: "no secret informer", edit: func(c *Config, _ *Params) { c.SecretInformer = nil }, wantErr: "spoke client and informers are required"},
		{name: "no recorder", edit: func(c *Config, _ *Params) { c.Recorder = nil }, wantErr: "recorder is required"},
		{name: "no controllers", edit: func(c *Config, _ *Params) { c.Controllers.Registered = nil }, wantErr: "controllers' builders are required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, p := testConfig(), Params{Hub: testHub()}
			tc.edit(&c, &p)
			s, err := New(c, p)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("New error = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.config.Clock == nil || s.config.BootstrapBackoff == nil || s.conflicts == nil {
				t.Errorf("defaults not filled in: clock %v, bootstrap back-off %v, conflict tracker %v", s.config.Clock, s.config.BootstrapBackoff, s.conflicts)
			}
			if _, ok := s.obs.(NopObserver); !ok {
				t.Errorf("observer = %T, want NopObserver", s.obs)
			}
		})
	}
}

// phaseRecorder is an Observer that keeps the phase reports.
type phaseRecorder struct {
	NopObserver
	phases []string
}

func (r *phaseRecorder) PhaseChanged(p Phase, msg string) {
	r.phases = append(r.phases, string(p)+": "+msg)
}

// TestSetPhaseReportsChanges: the observer hears a phase when it or its message changes, never a repeat; the
// session's Phase returns the last one.
func TestSetPhaseReportsChanges(t *testing.T) {
	obs := &phaseRecorder{}
	c := testConfig()
	c.Clock = clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	s, err := New(c, Params{Hub: testHub(), Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		phase       Phase
		msg         string
		wantChanged bool
	}{
		{PhaseBootstrapping, "requesting", true},
		{PhaseBootstrapping, "requesting", false},
		{PhaseBootstrapping, "waiting for approval", true},
		{PhaseRegistered, "registered", true},
		{PhaseRegistered, "registered", false},
	}
	for i, st := range steps {
		if got := s.setPhase(st.phase, st.msg); got != st.wantChanged {
			t.Errorf("step %d: setPhase(%s, %q) = %t, want %t", i, st.phase, st.msg, got, st.wantChanged)
		}
	}
	want := []string{"Bootstrapping: requesting", "Bootstrapping: waiting for approval", "Registered: registered"}
	if strings.Join(obs.phases, "\n") != strings.Join(want, "\n") {
		t.Errorf("observer heard %q, want %q", obs.phases, want)
	}
	if p, msg := s.Phase(); p != PhaseRegistered || msg != "registered" {
		t.Errorf("Phase() = %s, %q, want Registered, \"registered\"", p, msg)
	}
}

// TestNewWithSecretName: a session given Params.SecretName keeps its credentials in that Secret, and adopts no
// standby credentials into the hub kubeconfig Secret (its own Secret is the standby one); without it, the
// session uses Config.SecretName and the keeper given.
func TestNewWithSecretName(t *testing.T) {
	c := testConfig()
	keeper, err := NewStandbyCredentials(c)
	if err != nil {
		t.Fatal(err)
	}
	held, err := New(c, Params{Hub: testHub(), Standby: keeper, SecretName: StandbySecretName(c.SecretName, "primary")})
	if err != nil {
		t.Fatal(err)
	}
	if held.config.SecretName != "hub-kubeconfig-secret-primary" || held.standby != nil {
		t.Errorf("held session: Secret %q, standby keeper %v; want hub-kubeconfig-secret-primary and none", held.config.SecretName, held.standby)
	}
	// The Secret its client certificate controller writes carries the standby label, as the keeper's do.
	kube := kubefake.NewSimpleClientset()
	spoke := &spokeInformers{secrets: c.SecretInformer}
	if got := held.clientCertOptions(kube, informers.NewSharedInformerFactory(kube, 0), spoke).SecretLabels[StandbyHubLabel]; got != "primary" {
		t.Errorf("held session's Secret label %s=%q, want primary", StandbyHubLabel, got)
	}
	plain, err := New(c, Params{Hub: testHub(), Standby: keeper})
	if err != nil {
		t.Fatal(err)
	}
	if plain.config.SecretName != "hub-kubeconfig-secret" || plain.standby != keeper {
		t.Errorf("session: Secret %q, standby keeper %v; want hub-kubeconfig-secret and the keeper given", plain.config.SecretName, plain.standby)
	}
	if labels := plain.clientCertOptions(kube, informers.NewSharedInformerFactory(kube, 0), spoke).SecretLabels; len(labels) != 0 {
		t.Errorf("session's Secret labels %v, want none on the hub kubeconfig Secret", labels)
	}
}
