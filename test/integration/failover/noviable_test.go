package failover_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	// noViableTimeout is spec.hubConnectionTimeout of the no-viable-hub test: the minimum, so that both hubs are
	// given up quickly.
	noViableTimeout = 10 * time.Second
	// quietWindow is how long the agent's connection attempts are counted while no hub is viable.
	quietWindow = 30 * time.Second
	// maxConnectionsPerSecond bounds the agent's connection attempts to the two dead hubs, summed. The
	// counting proxies accept and then close (EOF), like a load balancer in front of a dead apiserver, and
	// client-go retries a GET that ends in EOF up to 10 times, 1s apart: each failing GET chain (a reflector
	// list, a standby probe, a controller's read) costs about one connection a second. A retry loop without
	// back-off opens hundreds a second.
	maxConnectionsPerSecond = 5
)

// TestNoViableHub cuts both hubs off: the agent reports Degraded (reason NoViableHub) in the FailoverConfig status
// and an event, does not exit, and opens a bounded number of connections to the dead hubs (counted by TCP proxies
// in front of them); when hub A returns, the cluster is Available on it again and Degraded clears.
func TestNoViableHub(t *testing.T) {
	t.Parallel()
	var proxyA, proxyB *util.CountingProxy
	s := spec(noViableTimeout)
	b := newBed(t, bedOptions{
		spec: s,
		beforeAgent: func(b *bed) {
			proxyA = util.StartCountingProxy(t, b.hubA.URL())
			proxyB = util.StartCountingProxy(t, b.hubB.URL())
		},
		primaryBootstrap: func(b *bed) []byte { return util.WithServer(t, b.hubA.BootstrapKubeconfig(), proxyA.URL()) },
		hubBBootstrap:    func(b *bed) []byte { return util.WithServer(t, b.hubB.BootstrapKubeconfig(), proxyB.URL()) },
	})
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "hub-b probe Ready", probeIs(hubB, failoverv1alpha1.HubProbeReady, ""))

	b.hubA.Proxy.Cut()
	b.hubB.Proxy.Cut()
	cut := time.Now()
	degraded := func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		c := metaCondition(fc, failoverv1alpha1.ConditionDegraded)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != failover.ReasonNoViableHub {
			return false, fmt.Sprintf("Degraded %+v, want True with reason %s", c, failover.ReasonNoViableHub)
		}
		return true, ""
	}
	fc := util.WaitForFailoverConfig(t, b.spoke, 2*noViableTimeout+skipPeriod+failoverSlack, "Degraded NoViableHub", degraded)
	t.Logf("Degraded NoViableHub %s after both hubs were cut off: %s", time.Since(cut).Round(100*time.Millisecond),
		metaCondition(fc, failoverv1alpha1.ConditionDegraded).Message)
	b.waitEvent(t, failover.ReasonNoViableHub)
	if util.ConditionIs(fc, failoverv1alpha1.ConditionAvailable, metav1.ConditionTrue) {
		t.Errorf("Available is True while no hub is reachable: %s", util.DescribeFailoverStatus(fc))
	}

	// No busy loop: count the connections to both dead hubs, and the FailoverConfig writes, over a window.
	writes := countWrites(t, b)
	before := proxyA.Connections() + proxyB.Connections()
	start := time.Now()
	framework.Consistently(t, quietWindow, time.Second, func() (bool, error) {
		if done, err := b.agent.Exited(); done {
			return false, fmt.Errorf("the agent exited: %v", err)
		}
		fc, err := util.GetFailoverConfig(b.spoke)
		if err != nil {
			return false, err
		}
		ok, why := degraded(fc)
		if !ok {
			return false, fmt.Errorf("%s", why)
		}
		return true, nil
	}, "agent running and Degraded while no hub is viable")
	n := proxyA.Connections() + proxyB.Connections() - before
	window := time.Since(start)
	t.Logf("%d connections to the two dead hubs in %s (%.2f/s); agent events: %v", n, window.Round(time.Second),
		float64(n)/window.Seconds(), util.EventReasons(t, b.spoke))
	if limit := int64(maxConnectionsPerSecond * window.Seconds()); n > limit {
		t.Errorf("%d connections to dead hubs in %s, more than %d: the agent retries without back-off", n, window, limit)
	}
	if n == 0 {
		t.Errorf("no connection to the dead hubs in %s: the agent stopped trying", window)
	}
	w := writes.count()
	t.Logf("%d FailoverConfig writes in %s:\n%s", w, window.Round(time.Second), writes.describe())
	// Messages and probe times alone are written at most every StatusRefreshInterval (a new transport error of
	// a dead hub at every request would otherwise be a write every second or two), plus a few transitions.
	if limit := int64(window/failover.StatusRefreshInterval) + 6; w > limit {
		t.Errorf("%d FailoverConfig writes in %s, more than %d: the status is rewritten in a loop", w, window.Round(time.Second), limit)
	}

	// Recovery when hub A returns.
	healed := time.Now()
	b.hubA.Proxy.Heal()
	util.WaitForFailoverConfig(t, b.spoke, probeInterval+skipPeriod+failoverSlack, "active primary and Available", util.ActiveAndAvailable(primary))
	util.WaitForClusterAvailable(t, b.hubA, clusterName, statusTimeout)
	fc = util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "Degraded False", func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		return util.ConditionIs(fc, failoverv1alpha1.ConditionDegraded, metav1.ConditionFalse), "Degraded is not False"
	})
	t.Logf("recovered on hub A %s after it was healed: %s", time.Since(healed).Round(100*time.Millisecond), util.DescribeFailoverStatus(fc))
	b.expectNotExited(t)
}

// metaCondition returns condition typ of fc, or nil.
func metaCondition(fc *failoverv1alpha1.FailoverConfig, typ string) *metav1.Condition {
	for i := range fc.Status.Conditions {
		if fc.Status.Conditions[i].Type == typ {
			return &fc.Status.Conditions[i]
		}
	}
	return nil
}

// statusWrites counts the modifications of the FailoverConfig seen by a watch and keeps what each one changed in
// the status, so that a test that finds too many can say which fields moved.
type statusWrites struct {
	mu    sync.Mutex
	diffs []string
}

// count returns the number of modifications seen so far.
func (w *statusWrites) count() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return int64(len(w.diffs))
}

// describe returns each modification's status diff (cmp.Diff, old to new), numbered, one per paragraph.
func (w *statusWrites) describe() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for i, d := range w.diffs {
		fmt.Fprintf(&b, "write %d:\n%s\n", i+1, d)
	}
	return b.String()
}

// countWrites watches the FailoverConfig and records every modification from now on.
func countWrites(t *testing.T, b *bed) *statusWrites {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	fc, err := util.GetFailoverConfig(b.spoke)
	if err != nil {
		t.Fatal(err)
	}
	w, err := util.FailoverClient(t, b.spoke).FailoverV1alpha1().FailoverConfigs(util.AgentNamespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + util.FailoverConfigName, ResourceVersion: fc.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	writes := &statusWrites{}
	prev := fc.Status.DeepCopy()
	go func() {
		for e := range w.ResultChan() {
			cur, ok := e.Object.(*failoverv1alpha1.FailoverConfig)
			if e.Type != watch.Modified || !ok {
				continue
			}
			d := cmp.Diff(prev, &cur.Status)
			prev = cur.Status.DeepCopy()
			writes.mu.Lock()
			writes.diffs = append(writes.diffs, d)
			writes.mu.Unlock()
		}
	}()
	t.Cleanup(w.Stop)
	return writes
}
