package failover

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics"
	clocktesting "k8s.io/utils/clock/testing"
	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	failoverfake "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned/fake"
	failoverinformers "github.com/klusterlet-failover/klusterlet-failover/pkg/client/informers/externalversions"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

// TestNoViableHubWakesForProbes: while no hub is viable, a round of the orchestrator is due again at the next
// standby probe round (probeInterval), not only when the no-viable back-off (10 s at first, up to 5 min) ends;
// otherwise a standby that comes back would be noticed a back-off late.
func TestNoViableHubWakesForProbes(t *testing.T) {
	const (
		namespace = "open-cluster-management-agent"
		altSecret = "hub-b-bootstrap"
	)
	probeInterval := 3 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Neither the primary (file) nor the alternate (Secret) has a usable bootstrap kubeconfig.
	primaryFile := filepath.Join(t.TempDir(), "bootstrap.kubeconfig")
	if err := os.WriteFile(primaryFile, []byte("not a kubeconfig"), 0o600); err != nil {
		t.Fatal(err)
	}
	kube := kubefake.NewSimpleClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: altSecret, Namespace: namespace},
		Data:       map[string][]byte{failoverv1alpha1.BootstrapKubeconfigSecretKey: []byte("neither")},
	})
	fo := failoverfake.NewSimpleClientset(&failoverv1alpha1.FailoverConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "failover", Namespace: namespace},
		Spec: failoverv1alpha1.FailoverConfigSpec{
			AlternateHubs: []failoverv1alpha1.AlternateHub{{Name: "hub-b", BootstrapKubeconfigSecretRef: altSecret}},
			ProbeInterval: &metav1.Duration{Duration: probeInterval},
		},
	})
	kubeInformers := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace))
	foInformers := failoverinformers.NewSharedInformerFactoryWithOptions(fo, 0, failoverinformers.WithNamespace(namespace))
	secrets, fcs := kubeInformers.Core().V1().Secrets(), foInformers.Failover().V1alpha1().FailoverConfigs()
	secrets.Informer()
	fcs.Informer()
	kubeInformers.Start(ctx.Done())
	foInformers.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), secrets.Informer().HasSynced, fcs.Informer().HasSynced) {
		t.Fatal("informers did not sync")
	}

	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	recorder := events.NewInMemoryRecorder("test", clk)
	r, err := NewOrchestrator(OrchestratorOptions{
		Namespace:                      namespace,
		FailoverConfigName:             "failover",
		PrimaryBootstrapKubeconfigFile: primaryFile,
		Session: hubsession.Options{
			ClusterName: "cluster1", AgentName: "agent1", Namespace: namespace, SecretName: "hub-kubeconfig-secret",
			ClusterHealthCheckPeriod: time.Minute, AgentKubeClient: kube, SpokeKubeClient: kube,
			SpokeClusterClient: clusterfake.NewSimpleClientset(), SpokeSecretInformer: secrets, Clock: clk, Recorder: recorder,
		},
		SecretInformer:         secrets,
		FailoverConfigInformer: fcs,
		FailoverConfigClient:   fo.FailoverV1alpha1(),
		Metrics:                NewMetrics(func(...metrics.Registerable) {}),
		Clock:                  clk,
		Recorder:               recorder,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.readFiles()

	for round := 0; round < 3; round++ {
		next := r.step(ctx)
		if r.active != "" {
			t.Fatalf("round %d: hub %s became active without a usable bootstrap kubeconfig", round, r.active)
		}
		if next <= 0 || next > probeInterval {
			t.Fatalf("round %d: next round in %s, want within the probe interval %s (the back-off is %s)",
				round, next, probeInterval, DefaultBackoffBase)
		}
		clk.Step(next)
	}
	if r.degraded == "" {
		t.Error("Degraded not set while no hub is viable")
	}
}
