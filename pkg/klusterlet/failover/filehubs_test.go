package failover

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics"
	clocktesting "k8s.io/utils/clock/testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	failoverfake "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned/fake"
	failoverinformers "github.com/klusterlet-failover/klusterlet-failover/pkg/client/informers/externalversions"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

const fileHubsNamespace = "open-cluster-management-agent"

// newFileHubsOrchestrator builds an orchestrator on fake clients whose hubs have no usable bootstrap kubeconfig
// (so no session starts): the primary file, the FileHubs files, and, when fc is set, the FailoverConfig with
// its informer; without fc the FailoverConfig API is absent (nil informer and client).
func newFileHubsOrchestrator(t *testing.T, ctx context.Context, fileHubs []string, fc *failoverv1alpha1.FailoverConfig, timeout time.Duration) (*Orchestrator, events.InMemoryRecorder) {
	t.Helper()
	dir := t.TempDir()
	write := func(name string) string {
		path := filepath.Join(dir, name, "kubeconfig")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("not a kubeconfig"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var hubs []FileHub
	for _, name := range fileHubs {
		hubs = append(hubs, FileHub{Name: name, Path: write(name)})
	}
	kube := kubefake.NewSimpleClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hub-b-bootstrap", Namespace: fileHubsNamespace},
		Data:       map[string][]byte{failoverv1alpha1.KubeconfigSecretKey: []byte("neither")},
	})
	kubeInformers := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(fileHubsNamespace))
	secrets := kubeInformers.Core().V1().Secrets()
	synced := []cache.InformerSynced{secrets.Informer().HasSynced}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	recorder := events.NewInMemoryRecorder("test", clk)
	opts := OrchestratorOptions{
		Agent: hubsession.Config{ClusterName: "cluster1", AgentName: "agent1", Namespace: fileHubsNamespace, SecretName: "hub-kubeconfig-secret",
			SecretInformer: secrets, Clock: clk, Recorder: recorder},
		NewSession: func(p hubsession.Params) (Session, error) {
			t.Errorf("a session was built on hub %s, which has no usable bootstrap kubeconfig", p.Hub.Name)
			return nil, errors.New("no session in this test")
		},
		FailoverConfigName:             "failover",
		PrimaryBootstrapKubeconfigFile: write("primary"),
		FileHubs:                       hubs,
		HubConnectionTimeout:           timeout,
		Metrics:                        NewMetrics(func(...metrics.Registerable) {}),
	}
	if fc != nil {
		fo := failoverfake.NewSimpleClientset(fc)
		foInformers := failoverinformers.NewSharedInformerFactoryWithOptions(fo, 0, failoverinformers.WithNamespace(fileHubsNamespace))
		opts.FailoverConfigInformer = foInformers.Failover().V1alpha1().FailoverConfigs()
		opts.FailoverConfigClient = fo.FailoverV1alpha1()
		synced = append(synced, opts.FailoverConfigInformer.Informer().HasSynced)
		foInformers.Start(ctx.Done())
	}
	kubeInformers.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		t.Fatal("informers did not sync")
	}
	r, err := NewOrchestrator(opts)
	if err != nil {
		t.Fatal(err)
	}
	r.readFiles()
	return r, recorder
}

// TestFileHubsOrder: the hubs are the primary, then the file hubs (OCM's --bootstrap-kubeconfigs), then the
// FailoverConfig alternates; an alternate named like a file hub is ignored and reported once.
func TestFileHubsOrder(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fc := &failoverv1alpha1.FailoverConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "failover", Namespace: fileHubsNamespace},
		Spec: failoverv1alpha1.FailoverConfigSpec{AlternateHubs: []failoverv1alpha1.AlternateHub{
			{Name: "hub-c-bootstrap", BootstrapKubeconfigSecretRef: "hub-b-bootstrap"},
			{Name: "hub-b", BootstrapKubeconfigSecretRef: "hub-b-bootstrap"},
		}},
	}
	r, recorder := newFileHubsOrchestrator(t, ctx, []string{"hub-c-bootstrap"}, fc, 0)
	for round := 0; round < 2; round++ {
		r.step(ctx)
	}
	if diff := cmp.Diff([]string{"primary", "hub-c-bootstrap", "hub-b"}, r.order); diff != "" {
		t.Errorf("hub order (-want +got):\n%s", diff)
	}
	if got := r.hubs["hub-c-bootstrap"].source; got != r.o.FileHubs[0].Path {
		t.Errorf("hub-c-bootstrap is read from %q, want the file %q", got, r.o.FileHubs[0].Path)
	}
	shadowed := 0
	for _, e := range recorder.Events() {
		if e.Reason == ReasonAlternateHubShadowed {
			shadowed++
		}
	}
	if shadowed != 1 {
		t.Errorf("%d %s events after two rounds, want 1", shadowed, ReasonAlternateHubShadowed)
	}
}

// TestNoFailoverConfigAPI: without the FailoverConfig API the orchestrator runs on the primary and the file
// hubs, and the connection timeout is HubConnectionTimeout (OCM's --hub-connection-timeout-seconds).
func TestNoFailoverConfigAPI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, _ := newFileHubsOrchestrator(t, ctx, []string{"hub-b"}, nil, 90*time.Second)
	r.step(ctx)
	if diff := cmp.Diff([]string{"primary", "hub-b"}, r.order); diff != "" {
		t.Errorf("hub order (-want +got):\n%s", diff)
	}
	if got := r.specWithoutFailoverConfig().HubConnectionTimeout.Duration; got != 90*time.Second {
		t.Errorf("connection timeout without a FailoverConfig = %s, want 90s", got)
	}
	r.o.HubConnectionTimeout = 0
	if got := r.specWithoutFailoverConfig().HubConnectionTimeout.Duration; got != failoverv1alpha1.DefaultHubConnectionTimeout {
		t.Errorf("connection timeout without a FailoverConfig or flag = %s, want %s", got, failoverv1alpha1.DefaultHubConnectionTimeout)
	}
}

// TestFileHubSwitchTo: spec.switchTo may name a file hub (the klusterlet operator's bootstrap-hub-b), which the
// FailoverConfig does not list; a name that is no hub at all is reported in Degraded, naming the field, the value
// and the hubs.
func TestFileHubSwitchTo(t *testing.T) {
	for _, tc := range []struct {
		switchTo string
		invalid  bool
	}{{"bootstrap-hub-b", false}, {"bootstrap-hub-x", true}} {
		t.Run(tc.switchTo, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fc := &failoverv1alpha1.FailoverConfig{
				ObjectMeta: metav1.ObjectMeta{Name: "failover", Namespace: fileHubsNamespace},
				Spec:       failoverv1alpha1.FailoverConfigSpec{SwitchTo: tc.switchTo},
			}
			r, _ := newFileHubsOrchestrator(t, ctx, []string{"bootstrap-hub-b"}, fc, 0)
			r.step(ctx)
			got, err := r.o.FailoverConfigClient.FailoverConfigs(fileHubsNamespace).Get(ctx, "failover", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var degraded string
			for _, c := range got.Status.Conditions {
				if c.Type == failoverv1alpha1.ConditionDegraded {
					degraded = c.Message
				}
			}
			const want = `spec.switchTo: Unsupported value: "bootstrap-hub-x": supported values: "primary", "bootstrap-hub-b"`
			if reported := strings.Contains(degraded, "spec.switchTo"); reported != tc.invalid || tc.invalid && !strings.Contains(degraded, want) {
				t.Errorf("Degraded message %q; want switchTo reported: %v (%q)", degraded, tc.invalid, want)
			}
		})
	}
}
