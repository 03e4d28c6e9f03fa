package failover

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/backoff"
)

// TestNoViableHubWakesForProbes: while no hub is viable, a round of the orchestrator is due again at the next
// standby probe round (probeInterval), not only when the no-viable back-off (10 s at first, up to 5 min) ends;
// otherwise a standby that comes back would be noticed a back-off late.
func TestNoViableHubWakesForProbes(t *testing.T) {
	probeInterval := 3 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Neither the primary (file) nor the alternate (Secret) has a usable bootstrap kubeconfig.
	fc := &failoverv1alpha1.FailoverConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "failover", Namespace: fileHubsNamespace},
		Spec: failoverv1alpha1.FailoverConfigSpec{
			AlternateHubs: []failoverv1alpha1.AlternateHub{{Name: "hub-b", BootstrapKubeconfigSecretRef: "hub-b-bootstrap"}},
			ProbeInterval: &metav1.Duration{Duration: probeInterval},
		},
	}
	r, _ := newFileHubsOrchestrator(t, ctx, nil, fc, 0)
	clk := r.o.Agent.Clock.(*clocktesting.FakeClock)

	for round := 0; round < 3; round++ {
		next := r.step(ctx)
		if r.run.hub != "" {
			t.Fatalf("round %d: hub %s became active without a usable bootstrap kubeconfig", round, r.run.hub)
		}
		if next <= 0 || next > probeInterval {
			t.Fatalf("round %d: next round in %s, want within the probe interval %s (the back-off is %s)",
				round, next, probeInterval, backoff.DefaultBase)
		}
		clk.Step(next)
	}
	if r.degraded == "" {
		t.Error("Degraded not set while no hub is viable")
	}
}
