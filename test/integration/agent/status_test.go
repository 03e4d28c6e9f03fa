package agent_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/lease"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

const (
	// skewLeaseSeconds is the lease duration of the clock-skew test: the hub tolerates a skew below five lease
	// durations (50 s), so tolerableSkew passes and badSkew does not.
	skewLeaseSeconds = 10
	tolerableSkew    = 20 * time.Second
	badSkew          = 10 * time.Minute
	// churnDuration is how long FC-16 churns the spoke.
	churnDuration = 30 * time.Second
	// churnInterval spaces the node allocatable changes and pod creations of FC-16.
	churnInterval = 500 * time.Millisecond
)

// testClockSkew (FC-10): an agent whose clock is 20 s ahead is in sync for the hub; once it is 10 minutes ahead,
// the real hub controller sets ManagedClusterConditionClockSynced=False and the agent reports ClockSkewDetected
// with the skew it measured and stops writing status: what a hub admin removes from the status stays removed
// for two health-check periods (an agent that kept writing would restore it at once). When the clock is right
// again the hub sets the condition back, the agent reports ClockSkewResolved and restores the status.
func testClockSkew(t *testing.T, s *suite) {
	const cluster = "fc10-skew"
	hub := s.hub
	clk := &skewedClock{}
	clk.set(tolerableSkew)
	a := startAgent(t, s.spokeB, agentSpec{cluster: cluster, agent: "agent10", secret: "hks-" + cluster, bootstrap: hub.BootstrapKubeconfig(), clock: clk})
	waitAvailable(t, hub, cluster, joinTimeout)
	setLeaseDuration(t, hub, cluster, skewLeaseSeconds)
	renewWait := 3*skewLeaseSeconds*time.Second + hubTimeout
	waitClockSynced(t, hub, cluster, metav1.ConditionTrue, renewWait)

	clk.set(badSkew)
	waitClockSynced(t, hub, cluster, metav1.ConditionFalse, renewWait)
	msg := waitEvent(t, s.spokeB, "ClockSkewDetected", cluster)
	if !strings.Contains(msg, "measured skew") || !strings.Contains(msg, "10m") {
		t.Errorf("ClockSkewDetected %q: want the measured skew (about 10m)", msg)
	}

	rec := recordMC(t, hub, cluster)
	patched, err := hub.Cluster.ClusterV1().ManagedClusters().Patch(context.Background(), cluster, types.MergePatchType,
		[]byte(`{"status":{"version":{"kubernetes":""},"clusterClaims":null}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	from := rec.waitVersion(t, patched.ResourceVersion)
	time.Sleep(2*healthCheckPeriod + 2*time.Second)
	if writes := rec.writesBetween(from.Add(time.Millisecond), time.Now()); len(writes) > 0 {
		t.Errorf("%d status writes while the hub says the clock is out of sync (%s), want none", len(writes), describeWrites(writes, from))
	}
	if mc := getMC(t, hub, cluster); mc.Status.Version.Kubernetes != "" || len(mc.Status.ClusterClaims) > 0 {
		t.Errorf("status restored while the clock is out of sync: version %q, claims %v", mc.Status.Version.Kubernetes, mc.Status.ClusterClaims)
	}
	requireRunning(t, a)

	clk.set(0)
	waitClockSynced(t, hub, cluster, metav1.ConditionTrue, renewWait)
	waitEvent(t, s.spokeB, "ClockSkewResolved", cluster)
	framework.Eventually(t, 2*healthCheckPeriod+hubTimeout, pollInterval, func() (bool, error) {
		mc := getMC(t, hub, cluster)
		return mc.Status.Version.Kubernetes != "" && len(mc.Status.ClusterClaims) > 0, nil
	}, "status of %s restored once the clocks agree", cluster)
}

// waitClockSynced waits until the hub sets ManagedClusterConditionClockSynced of cluster to status.
func waitClockSynced(t *testing.T, hub *framework.Hub, cluster string, status metav1.ConditionStatus, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, pollInterval, func() (bool, error) {
		c := conditionOf(getMC(t, hub, cluster), conditionClockSynced)
		return c != nil && c.Status == status, nil
	}, "hub sets %s=%s on %s", conditionClockSynced, status, cluster)
}

// waitVersion waits until the watch delivered resourceVersion rv and returns when it arrived.
func (r *mcRecorder) waitVersion(t *testing.T, rv string) time.Time {
	t.Helper()
	var at time.Time
	framework.Eventually(t, eventTimeout, 20*time.Millisecond, func() (bool, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, v := range r.versions {
			if v.mc.ResourceVersion == rv {
				at = v.at
				return true, nil
			}
		}
		return false, nil
	}, "watch delivers resourceVersion %s", rv)
	return at
}

// testStatusChurn (FC-16): with a 10 s health-check period, node allocatable changing every 500 ms and pods
// created and deleted as often, the agent writes the ManagedCluster status at most once per period (plus slack
// for the window's edges), yet the last allocatable reaches the hub; lease renewals go on at their own period.
func testStatusChurn(t *testing.T, s *suite) {
	const cluster = "fc16-churn"
	hub, spoke := s.hub, s.spokeB
	ctx := context.Background()
	node := createNode(t, spoke, "churn-node", resources("8", "32Gi", "110"), resources("8", "32Gi", "110"))
	if _, err := spoke.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "churn"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := spoke.Kube.CoreV1().ServiceAccounts("churn").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	a := startAgent(t, spoke, agentSpec{cluster: cluster, agent: "agent16", secret: "hks-" + cluster, bootstrap: hub.BootstrapKubeconfig()})
	waitAvailable(t, hub, cluster, joinTimeout)
	setLeaseDuration(t, hub, cluster, leaseSeconds)
	waitLeaseRenewals(t, hub, cluster, 1, 2*leaseSeconds*time.Second+hubTimeout)
	rec := recordMC(t, hub, cluster)

	// Lease renewals, sampled while the spoke churns.
	renewals := map[time.Time]bool{}
	var renewMu sync.Mutex
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(pollInterval):
			}
			if rt := agentRenewTime(t, hub, cluster); !rt.IsZero() {
				renewMu.Lock()
				renewals[rt] = true
				renewMu.Unlock()
			}
		}
	}()

	start := time.Now()
	var lastPods int64
	var prevPod string
	for i := 0; time.Since(start) < churnDuration; i++ {
		lastPods = 100 + int64(i%50)
		node.Status.Allocatable[corev1.ResourcePods] = *resource.NewQuantity(lastPods, resource.DecimalSI)
		updated, err := spoke.Kube.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update node allocatable: %v", err)
		}
		node = updated
		pod, err := spoke.Kube.CoreV1().Pods("churn").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "churn-"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create pod: %v", err)
		}
		if prevPod != "" {
			if err := spoke.Kube.CoreV1().Pods("churn").Delete(ctx, prevPod, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete pod: %v", err)
			}
		}
		prevPod = pod.Name
		time.Sleep(churnInterval)
	}
	end := time.Now()
	close(stopSampling)
	<-sampled

	writes := rec.writesBetween(start, end)
	allowed := int(end.Sub(start)/healthCheckPeriod) + 2
	t.Logf("FC-16: %d status writes in %s of churn (period %s, allowed %d): %s", len(writes), end.Sub(start).Round(time.Second),
		healthCheckPeriod, allowed, describeWrites(writes, start))
	if len(writes) > allowed {
		t.Errorf("%d status writes in %s with a %s period, want at most %d", len(writes), end.Sub(start).Round(time.Second), healthCheckPeriod, allowed)
	}
	if len(writes) == 0 {
		t.Errorf("no status write in %s although node allocatable changed: the churn never reached the hub", end.Sub(start).Round(time.Second))
	}
	renewMu.Lock()
	n := 0
	for rt := range renewals {
		if !rt.Before(start) {
			n++
		}
	}
	renewMu.Unlock()
	// Renewals come every period plus up to DefaultJitterFactor of it.
	longest := time.Duration((1 + lease.DefaultJitterFactor) * float64(leaseSeconds*time.Second))
	if want := int(churnDuration/longest) - 1; n < want {
		t.Errorf("%d lease renewals during %s of churn, want at least %d (every %ds to %s)", n, churnDuration, want, leaseSeconds, longest)
	}

	// The last value is not lost: it reaches the hub within a period.
	want := *resource.NewQuantity(lastPods, resource.DecimalSI)
	framework.Eventually(t, healthCheckPeriod+hubTimeout, pollInterval, func() (bool, error) {
		got, ok := getMC(t, hub, cluster).Status.Allocatable[clusterv1.ResourceName(corev1.ResourcePods)]
		if !ok || got.Cmp(want) != 0 {
			return false, fmt.Errorf("allocatable pods %s, want %s", got.String(), want.String())
		}
		return true, nil
	}, "last node allocatable on the hub")
	requireRunning(t, a)
}
