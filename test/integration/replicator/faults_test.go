package replicator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-base/metrics/legacyregistry"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// TestReplicationFaults runs three hubs without agents: cluster "fleet1" is registered on hub A (an accepted
// ManagedCluster made there, so A is its source), and the test plays the agent by renewing the cluster's
// lease where it wants the cluster to be. It checks, in order: a standby that is down while the source
// changes is caught up when it returns, deletes included; a foreign object with a mirrored name is left alone
// and reported; a copy edited on its hub is overwritten and reported; a replicator killed in the middle of a
// sync and restarted leaves no duplicate and loses no delete; a lease renewed on hub B while hub A is down makes
// B the source, a delete made on B then reaches hub A's original when A returns, and B's changes flow to A and C.
//
// The hubs run OCM's hub controller only, not the complete cluster-manager: the test checks ManifestWork and
// ManagedCluster flows, whose copies the complete hubs' webhooks accept from the replicator under its
// ClusterRole (TestReplicatedClusterSurvivesFailover), and three complete hubs would add six processes each on
// a two-core machine for no further check.
func TestReplicationFaults(t *testing.T) {
	const fleetCluster = "fleet1"
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", HubController: true, Signer: framework.SignerInProcess})
	hubBHub := framework.StartHub(t, framework.HubOptions{Name: hubB, HubController: true, Signer: framework.SignerInProcess})
	hubC := framework.StartHub(t, framework.HubOptions{Name: "hub-c", HubController: true, Signer: framework.SignerInProcess})
	applyUnstructured(t, hubA, failoverv1alpha1.KindManagedCluster, map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
		"metadata": map[string]any{"name": fleetCluster, "labels": map[string]any{"env": "prod"}},
		"spec":     map[string]any{"hubAcceptsClient": true, "leaseDurationSeconds": int64(10)},
	})
	for i := 0; i < 3; i++ {
		createWork(t, hubA, configMapWork(t, fleetCluster, fmt.Sprintf("work-%d", i), map[string]string{"cm": fmt.Sprint(i)}))
	}

	// The ReplicationConfig lives on hub B, so that hub C can be taken away. The replicator runs under its own
	// ServiceAccount and ClusterRole on each hub (manifests/replicator/hub); the test's out-of-band writes on
	// a standby (a foreign object, an edited copy) are made by the hub's admin under the fence's emergency
	// override, as a user would make them.
	r := setUpReplicator(t, hubBHub, failoverv1alpha1.ReplicationConfigSpec{},
		namedHub{name: "hub-a", hub: hubA}, namedHub{name: hubB, hub: hubBHub}, namedHub{name: "hub-c", hub: hubC})
	r.start()
	standbys := []*framework.Hub{hubBHub, hubC}
	for _, h := range standbys {
		for i := 0; i < 3; i++ {
			waitObj(t, h, failoverv1alpha1.KindManifestWork, fleetCluster, fmt.Sprintf("work-%d", i), replicationTimeout, "a copy from hub-a", copiedFrom("hub-a"))
		}
		waitObj(t, h, failoverv1alpha1.KindManagedCluster, "", fleetCluster, replicationTimeout, "a copy saying the cluster is on hub-a",
			func(o *unstructured.Unstructured) bool {
				return copiedFrom("hub-a")(o) && o.GetAnnotations()[mirror.AnnotationClusterHub] == "hub-a"
			})
	}
	r.waitStatus(replicationTimeout, "three hubs reachable and synced", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		return s.ReachableHubs == 3 && hubStatus(s, hubB).Synced && hubStatus(s, "hub-c").Synced && hubStatus(s, "hub-a").SourceClusters == 1
	})

	// 1. Standby C is down while A changes: a create, an update and a delete. B follows at once, and the delete
	// finishes on A without waiting for C; C is caught up, the delete included, when it returns.
	hubC.StopAPIServer()
	r.waitStatus(replicationTimeout, "hub-c unreachable, Degraded", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		return !hubStatus(s, "hub-c").Reachable && s.ReachableHubs == 2 && conditionTrue(s, failoverv1alpha1.ReplicationConditionDegraded)
	})
	// The source's ManagedCluster tells the agent that hub C is behind.
	waitObj(t, hubA, failoverv1alpha1.KindManagedCluster, "", fleetCluster, replicationTimeout, "hub-c reported behind on the source",
		func(o *unstructured.Unstructured) bool {
			return o != nil && o.GetAnnotations()[mirror.AnnotationHubsInStep] == hubB && o.GetAnnotations()[mirror.AnnotationHubsBehind] == "hub-c"
		})
	createWork(t, hubA, configMapWork(t, fleetCluster, "work-3", map[string]string{"cm": "3"}))
	updateWork(t, hubA, fleetCluster, "work-0", map[string]string{"cm": "0-updated"})
	deleteObj(t, hubA, failoverv1alpha1.KindManifestWork, fleetCluster, "work-1")
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, fleetCluster, "work-3", replicationTimeout, "created while C is down", copiedFrom("hub-a"))
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, fleetCluster, "work-0", replicationTimeout, "updated while C is down", sameValues(t, map[string]string{"cm": "0-updated"}))
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, fleetCluster, "work-1", replicationTimeout, "deleted while C is down", absent)
	// The delete does not wait for C: it is logged on A and B, and A's original goes at once.
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, fleetCluster, "work-1", replicationTimeout, "its delete finished on hub-a while C is down", absent)
	// Until it reaches C, the delete is recorded on the source's ManagedCluster (it outlives a restart of the
	// replicator, and the logs of deletes made keep only the last ones).
	tombstoned := func(o *unstructured.Unstructured) bool {
		return o != nil && strings.Contains(o.GetAnnotations()[mirror.AnnotationDeletesSeen], "ManifestWork/work-1=")
	}
	waitObj(t, hubA, failoverv1alpha1.KindManagedCluster, "", fleetCluster, replicationTimeout, "the delete of work-1 recorded on hub-a's ManagedCluster", tombstoned)
	hubC.StartAPIServer()
	waitObj(t, hubC, failoverv1alpha1.KindManifestWork, fleetCluster, "work-3", replicationTimeout, "caught up: created", copiedFrom("hub-a"))
	waitObj(t, hubC, failoverv1alpha1.KindManifestWork, fleetCluster, "work-0", replicationTimeout, "caught up: updated", sameValues(t, map[string]string{"cm": "0-updated"}))
	waitObj(t, hubC, failoverv1alpha1.KindManifestWork, fleetCluster, "work-1", replicationTimeout, "caught up: deleted", absent)
	waitObj(t, hubA, failoverv1alpha1.KindManagedCluster, "", fleetCluster, replicationTimeout, "the record of the delete gone once it reached C",
		func(o *unstructured.Unstructured) bool { return o != nil && !tombstoned(o) })
	r.waitStatus(replicationTimeout, "hub-c back and synced", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		return s.ReachableHubs == 3 && hubStatus(s, "hub-c").Synced
	})
	waitObj(t, hubA, failoverv1alpha1.KindManagedCluster, "", fleetCluster, replicationTimeout, "hub-c reported in step again on the source",
		func(o *unstructured.Unstructured) bool {
			return o != nil && o.GetAnnotations()[mirror.AnnotationHubsInStep] == hubB+",hub-c" && o.GetAnnotations()[mirror.AnnotationHubsBehind] == ""
		})
	for _, h := range standbys {
		if mc, err := getObj(h, mustKind(failoverv1alpha1.KindManagedCluster), "", fleetCluster); err != nil || mc == nil ||
			mc.GetAnnotations()[mirror.AnnotationHubsInStep] != "" || mc.GetAnnotations()[mirror.AnnotationHubsBehind] != "" {
			t.Errorf("hub %s's copy of the ManagedCluster: %s (err %v), want no step annotations (the source's only)", h.Name, describe(mc), err)
		}
	}

	// 2. A foreign object with a mirrored name on B is left alone and reported; C gets the copy.
	refence := unfence(t, hubBHub, fleetCluster)
	createWork(t, hubBHub, configMapWork(t, fleetCluster, "shared-name", map[string]string{"cm": "made-on-b"}))
	refence()
	createWork(t, hubA, configMapWork(t, fleetCluster, "shared-name", map[string]string{"cm": "made-on-a"}))
	waitObj(t, hubC, failoverv1alpha1.KindManifestWork, fleetCluster, "shared-name", replicationTimeout, "A's object copied", sameValues(t, map[string]string{"cm": "made-on-a"}))
	r.waitStatus(replicationTimeout, "a conflict on hub-b", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		return hubStatus(s, hubB).Conflicts >= 1
	})
	if obj, err := getObj(hubBHub, mustKind(failoverv1alpha1.KindManifestWork), fleetCluster, "shared-name"); err != nil || obj == nil || mirror.IsCopy(obj) ||
		workConfigMapValues(t, obj)["cm"] != "made-on-b" {
		t.Errorf("hub B's own ManifestWork shared-name was touched: %s (err %v)", describe(obj), err)
	}
	expectEvent(t, r, "ReplicationConflict", "ManifestWork/fleet1/shared-name on hub hub-b was not made by the replicator")

	// 3. A copy edited on C is overwritten from the source and reported.
	refence = unfence(t, hubC, fleetCluster)
	updateWork(t, hubC, fleetCluster, "work-2", map[string]string{"cm": "edited-on-c"})
	refence()
	waitObj(t, hubC, failoverv1alpha1.KindManifestWork, fleetCluster, "work-2", replicationTimeout, "restored from hub-a", sameValues(t, map[string]string{"cm": "2"}))
	expectEvent(t, r, "ReplicationConflict", "ManifestWork/fleet1/work-2 on hub hub-c was changed there")

	// 4. The replicator binary, SIGKILLed in the middle of a sync and started again, leaves no duplicate and
	// loses no delete made while it was down.
	r.stop()
	const batch = 30
	for i := 0; i < batch; i++ {
		createWork(t, hubA, configMapWork(t, fleetCluster, fmt.Sprintf("batch-%d", i), map[string]string{"cm": fmt.Sprint(i)}))
	}
	proc := startReplicatorBinary(t, hubBHub, "replicator-1")
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, fleetCluster, "batch-0", 2*replicationTimeout, "the binary started copying", copiedFrom("hub-a"))
	proc.Kill()
	for i := 0; i < 10; i++ {
		deleteObj(t, hubA, failoverv1alpha1.KindManifestWork, fleetCluster, fmt.Sprintf("batch-%d", i))
	}
	proc = startReplicatorBinary(t, hubBHub, "replicator-2")
	for _, h := range standbys {
		framework.Eventually(t, 2*replicationTimeout, util.PollInterval, func() (bool, error) {
			return batchCopies(h, fleetCluster, batch) == fmt.Sprint(batch-10, " copies, first batch-10"), nil
		}, "hub %s holds batch-10..batch-%d as copies and none of batch-0..9 (now %s)", h.Name, batch-1, batchCopies(h, fleetCluster, batch))
	}
	if done, err := proc.Exited(); done {
		t.Fatalf("the replicator binary exited (%v):\n%s", err, proc.LogTail(40))
	}
	_ = proc.Stop()

	// 5. The cluster moves to hub B while hub A is down (the test renews B's lease, as an agent there would): B
	// becomes the source; when A returns, B's deletes reach A's originals, B takes the others over, and B's
	// changes flow to A and C.
	foundOnA := metricSum(t, "klusterlet_failover_replicator_source_changes_total", map[string]string{"hub": "hub-a"})
	r.start()
	// The restarted replicator first finds the cluster on hub-a (no lease renewed anywhere yet; the copies
	// record hub-a).
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		return metricSum(t, "klusterlet_failover_replicator_source_changes_total", map[string]string{"hub": "hub-a"}) > foundOnA, nil
	}, "the restarted replicator found the cluster on hub-a")
	// An original made on hub A is marked before its first copy.
	createWork(t, hubA, configMapWork(t, fleetCluster, "made-on-a", map[string]string{"cm": "a"}))
	for _, h := range standbys {
		waitObj(t, h, failoverv1alpha1.KindManifestWork, fleetCluster, "made-on-a", replicationTimeout, "a copy from hub-a", copiedFrom("hub-a"))
	}
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, fleetCluster, "made-on-a", replicationTimeout, "the original marked has-copies",
		func(o *unstructured.Unstructured) bool {
			return o != nil && mirror.HasCopyOn(o, hubB) && mirror.HasCopyOn(o, "hub-c")
		})
	// Hub A goes down, and the cluster moves to hub B meanwhile.
	hubA.StopAPIServer()
	r.waitStatus(replicationTimeout, "hub-a unreachable", func(s failoverv1alpha1.ReplicationConfigStatus) bool { return !hubStatus(s, "hub-a").Reachable })
	stopRenewing := keepRenewing(t, hubBHub, fleetCluster, 3*time.Second)
	defer stopRenewing()
	waitObj(t, hubC, failoverv1alpha1.KindManagedCluster, "", fleetCluster, replicationTimeout, "annotated: the cluster is on hub-b",
		func(o *unstructured.Unstructured) bool {
			return o != nil && o.GetAnnotations()[mirror.AnnotationClusterHub] == hubB
		})
	// A user of hub B deletes the work there (B's copy) while hub A is down: the delete reaches C at once and
	// A's original when A returns (issue: deletes came back on failback). B, the source now, is not fenced.
	waitNamespaceMark(t, hubBHub, fleetCluster, "")
	deleteObj(t, hubBHub, failoverv1alpha1.KindManifestWork, fleetCluster, "made-on-a")
	waitObj(t, hubC, failoverv1alpha1.KindManifestWork, fleetCluster, "made-on-a", replicationTimeout, "deleted on hub-b", absent)
	hubA.StartAPIServer()
	waitObj(t, hubA, failoverv1alpha1.KindManagedCluster, "", fleetCluster, replicationTimeout, "annotated: the cluster is on hub-b",
		func(o *unstructured.Unstructured) bool {
			return o != nil && o.GetAnnotations()[mirror.AnnotationClusterHub] == hubB
		})
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, fleetCluster, "made-on-a", replicationTimeout,
		"the original deleted: it was deleted on hub-b while hub-a was down", absent)
	updateWork(t, hubBHub, fleetCluster, "work-0", map[string]string{"cm": "from-b"})
	for _, h := range []*framework.Hub{hubA, hubC} {
		waitObj(t, h, failoverv1alpha1.KindManifestWork, fleetCluster, "work-0", replicationTimeout, "B's change", func(o *unstructured.Unstructured) bool {
			return copiedFrom(hubB)(o) && sameValues(t, map[string]string{"cm": "from-b"})(o)
		})
	}
	waitObj(t, hubBHub, failoverv1alpha1.KindManagedCluster, "", fleetCluster, replicationTimeout, "the source carries no cluster-hub annotation",
		func(o *unstructured.Unstructured) bool {
			_, annotated := o.GetAnnotations()[mirror.AnnotationClusterHub]
			return o != nil && !annotated
		})
	if len(r.events("ClusterSourceChanged")) == 0 {
		t.Errorf("no ClusterSourceChanged event")
	}

	// 6. The fence: with the cluster on hub B, users of hubs A and C cannot change its state there.
	checkFence(t, fleetCluster, "work-0", hubBHub, hubB, hubA, hubC)

	// The metrics of the in-process replicator (the legacy registry library-go serves on /metrics).
	for _, m := range []struct {
		name   string
		labels map[string]string
	}{
		{"klusterlet_failover_replicator_objects_mirrored_total", map[string]string{"kind": "ManifestWork", "hub": "hub-c", "operation": "Delete"}},
		{"klusterlet_failover_replicator_objects_mirrored_total", map[string]string{"kind": "ManifestWork", "hub": "hub-a", "operation": "Update"}},
		{"klusterlet_failover_replicator_conflicts_total", map[string]string{"hub": hubB, "reason": "ForeignObject"}},
		{"klusterlet_failover_replicator_conflicts_total", map[string]string{"hub": "hub-c", "reason": "CopyModified"}},
		{"klusterlet_failover_replicator_replication_lag_seconds", map[string]string{"kind": "ManifestWork"}},
		{"klusterlet_failover_replicator_source_changes_total", map[string]string{"hub": hubB}},
		{"klusterlet_failover_replicator_hub_reachable", map[string]string{"hub": "hub-c"}},
	} {
		if v := metricSum(t, m.name, m.labels); v <= 0 {
			t.Errorf("metric %s%v = %v, want > 0", m.name, m.labels, v)
		}
	}

	// 7. Hub C removed from spec.hubs: the report on the source (B) no longer names it, in step or behind; the
	// agent ranks a hub the report does not name below one it names in step (failover.SelectNext).
	waitObj(t, hubBHub, failoverv1alpha1.KindManagedCluster, "", fleetCluster, replicationTimeout, "hub-a and hub-c reported in step on the source",
		func(o *unstructured.Unstructured) bool {
			return o != nil && o.GetAnnotations()[mirror.AnnotationHubsInStep] == "hub-a,hub-c"
		})
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		configs := replClient(r.host).FailoverV1alpha1().ReplicationConfigs(replicatorNamespace)
		rc, err := configs.Get(context.Background(), configName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		rc.Spec.Hubs = slices.DeleteFunc(rc.Spec.Hubs, func(h failoverv1alpha1.ReplicationHub) bool { return h.Name == "hub-c" })
		_, err = configs.Update(context.Background(), rc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("removing hub-c from the ReplicationConfig: %v", err)
	}
	waitObj(t, hubBHub, failoverv1alpha1.KindManagedCluster, "", fleetCluster, replicationTimeout, "hub-c gone from the report on the source",
		func(o *unstructured.Unstructured) bool {
			return o != nil && o.GetAnnotations()[mirror.AnnotationHubsInStep] == "hub-a" && o.GetAnnotations()[mirror.AnnotationHubsBehind] == ""
		})
}

// metricSum returns the sum, over the series of the legacy registry's metric name whose labels include
// labels, of the counter or gauge value or of the histogram's sample count.
func metricSum(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}

// conditionTrue reports whether condition typ of s is True.
func conditionTrue(s failoverv1alpha1.ReplicationConfigStatus, typ string) bool {
	for _, c := range s.Conditions {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// expectEvent waits until the replicator recorded an event with reason whose message contains substr.
func expectEvent(t *testing.T, r *replicatorRun, reason, substr string) {
	t.Helper()
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		for _, m := range r.events(reason) {
			if strings.Contains(m, substr) {
				return true, nil
			}
		}
		return false, fmt.Errorf("events %s: %q", reason, r.events(reason))
	}, "event %s containing %q", reason, substr)
}

// batchCopies describes which batch-N ManifestWorks of cluster hub h holds as copies: "<count> copies, first batch-<n>".
func batchCopies(h *framework.Hub, cluster string, batch int) string {
	count, first := 0, -1
	for i := 0; i < batch; i++ {
		obj, err := getObj(h, mustKind(failoverv1alpha1.KindManifestWork), cluster, fmt.Sprintf("batch-%d", i))
		if err != nil || obj == nil || !mirror.IsCopy(obj) {
			continue
		}
		count++
		if first < 0 {
			first = i
		}
	}
	return fmt.Sprint(count, " copies, first batch-", first)
}

// startReplicatorBinary runs `klusterlet-failover replicator` against the ReplicationConfig on host, with
// leader election on and short durations.
func startReplicatorBinary(t *testing.T, host *framework.Hub, name string) *framework.AgentProcess {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, host.AdminKubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	return framework.StartAgentProcess(t, name, framework.AgentBinary(t), []string{
		"replicator",
		"--kubeconfig=" + kubeconfig,
		"--namespace=" + replicatorNamespace,
		"--config-name=" + configName,
		"--hub-probe-interval=2s",
		"--status-interval=2s",
		"--listen=127.0.0.1:" + strconv.Itoa(framework.FreeLoopbackPort(t)),
		"--leader-election-lease-duration=15s",
		"--leader-election-renew-deadline=10s",
		"--leader-election-retry-period=2s",
	})
}

// keepRenewing renews cluster's lease on h every period until the returned function is called.
func keepRenewing(t *testing.T, h *framework.Hub, cluster string, period time.Duration) func() {
	t.Helper()
	renewLease(t, h, cluster)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(period)
		defer ticker.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ticker.C:
				renewLeaseOnce(h, cluster)
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(stop); <-done }) }
}

// renewLease makes hub h's managed-cluster-lease of cluster look renewed by an agent now (creating it if the
// hub has not yet).
func renewLease(t *testing.T, h *framework.Hub, cluster string) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, util.PollInterval, func() (bool, error) {
		err := renewLeaseOnce(h, cluster)
		return err == nil, err
	}, "lease of %s renewed on hub %s", cluster, h.Name)
}

// renewLeaseOnce sets the lease's renewTime to now.
func renewLeaseOnce(h *framework.Hub, cluster string) error {
	leases := h.Kube.CoordinationV1().Leases(cluster)
	now := metav1.NowMicro()
	lease, err := leases.Get(context.Background(), direction.LeaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(context.Background(), &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: direction.LeaseName, Namespace: cluster},
			Spec:       coordinationv1.LeaseSpec{RenewTime: &now},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	lease.Spec.RenewTime = &now
	_, err = leases.Update(context.Background(), lease, metav1.UpdateOptions{})
	return err
}
