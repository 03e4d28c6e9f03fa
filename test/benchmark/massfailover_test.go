//go:build bench

package benchmark

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	failoverclientset "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// scenarioMassFailover is a hub lost with all its clusters: N agents on hub A, hub A's apiserver killed, until
// all are Available on hub B.
const scenarioMassFailover = "massfailover"

// massFailoverTarget is the bound on "all Available on hub B" beyond the connection timeout at N = 200.
const massFailoverTarget = 10 * time.Second

func massTimeID(n int) string { return fmt.Sprintf("mass_failover_%d_all_available", n) }
func massCPUID(n int) string  { return fmt.Sprintf("mass_failover_%d_hub_b_cpu_per_agent", n) }
func massCSRID(n int) string  { return fmt.Sprintf("mass_failover_%d_csrs", n) }

// massPerClusterID is the figure of each cluster's time from the loss to Available on hub B (one sample per
// cluster: the report's CDF chart).
func massPerClusterID(n int) string { return fmt.Sprintf("mass_failover_%d_per_cluster", n) }
func massStandbyCPUID(n int) string {
	return fmt.Sprintf("mass_failover_%d_hub_b_standby_cpu_per_agent_hour", n)
}

// massStandbyWindow is how long hub B's apiserver CPU is measured while the agents are on hub A.
const massStandbyWindow = 30 * time.Second

// declareMassFailoverFigures declares the mass failover figures, one set per N of BENCH_MASS_N.
func (b *bench) declareMassFailoverFigures() {
	for _, n := range b.massNs {
		b.rep.declare(massTimeID(n), scenarioMassFailover, fmt.Sprintf("%d agents: hub A's apiserver killed → all Available on hub B", n), "s",
			fmt.Sprintf("≤ timeout + %s", massFailoverTarget))
		b.rep.declare(massCPUID(n), scenarioMassFailover, fmt.Sprintf("%d agents: hub B's kube-apiserver CPU per agent, loss → all Available", n), "CPU s", "≤ OCM's")
		b.rep.declare(massCSRID(n), scenarioMassFailover, fmt.Sprintf("%d agents: CSRs created on hub B, loss → all Available", n), "CSRs", "0")
		b.rep.declare(massPerClusterID(n), scenarioMassFailover, fmt.Sprintf("%d agents: each cluster, hub A's loss → Available on hub B (a sample per cluster)", n), "s", "")
		b.rep.declare(massStandbyCPUID(n), scenarioMassFailover, fmt.Sprintf("%d agents on hub A: hub B's kube-apiserver CPU per agent-hour (the standby's cost)", n), "CPU s/h", "")
	}
}

// runMassFailover runs, for each N of BENCH_MASS_N and each agent kind (alternating which goes first), one batch
// on a fresh pair of hubs.
func (b *bench) runMassFailover(t *testing.T) {
	spoke := framework.StartSpoke(t)
	util.InstallFailoverConfigCRD(t, spoke)
	fo := failoverclientset.NewForConfigOrDie(spoke.AdminConfig)
	b.rep.method(scenarioMassFailover, "A hub lost with all its clusters. Per N and agent kind: a fresh hub-a and hub-b as in "+
		"scenario 1 and N agent processes of one kind on one spoke (each its own cluster name and namespace), all "+
		"joined to hub-a. Ours: a FailoverConfig per agent with alternate hub-b, hubConnectionTimeout %s, probeInterval %s, "+
		"hot standby credentials on; the batch waits until every agent reports hub-b's standby credentials Ready. "+
		"OCM's: --bootstrap-kubeconfigs hub-a,hub-b, MultipleHubs, --hub-connection-timeout-seconds=%d, restarted %s "+
		"after each exit. Hub-b's kube-apiserver idle CPU rate is measured over %s before any agent starts. After %s "+
		"more, hub-b's kube-apiserver CPU is measured over %s while the agents are on hub-a (the standby figure, per "+
		"agent-hour, idle rate subtracted: our agents' standby probes every probe interval and their CSR watches; OCM's "+
		"agents do not touch hub-b). Then hub-a's "+
		"kube-apiserver is killed (SIGKILL; etcd and the controllers keep running) and hub-b's ManagedClusters are "+
		"listed every %s until all N are Joined and Available there. The CPU figure is hub-b's kube-apiserver "+
		"utime+stime over that time minus the idle rate × the time, divided by N; it includes what hub-b's hub "+
		"controller and kube-controller-manager ask of it for the agents (CSR approval and signing). The CSR figure "+
		"counts the CSRs on hub-b that did not exist at the kill. All N agents, both hubs and the spoke share the "+
		"machine's 2 cores; one batch per N and kind (n=1). A batch not all Available within %s has no figure.",
		b.failoverTimeout, failoverProbeInterval, int(b.failoverTimeout.Seconds()), restartDelay, scaleIdleWindow, failoverSettle,
		massStandbyWindow, scalePollInterval, b.failoverTimeout+b.scaleTimeout)
	for i, n := range b.massNs {
		for _, kind := range order(i) {
			name := fmt.Sprintf("mass-%s-%d", kind, n)
			if ok := t.Run(name, func(t *testing.T) { b.massFailoverOnce(t, spoke, fo, kind, n) }); !ok {
				reason := fmt.Sprintf("the %s batch failed (see the `make bench` output)", name)
				for _, id := range []string{massTimeID(n), massCPUID(n), massCSRID(n), massStandbyCPUID(n)} {
					b.rep.missing(id, kind, reason)
				}
			}
			b.writeReport(t)
			if b.ctx.Err() != nil {
				t.Fatal("interrupted")
			}
		}
	}
}

// massFailoverOnce runs one batch of n agents of kind.
func (b *bench) massFailoverOnce(t *testing.T, spoke *framework.Spoke, fo failoverclientset.Interface, kind agentKind, n int) {
	prefix := fmt.Sprintf("mass-%s-%d", kind, n)
	hubA := framework.StartHub(t, framework.HubOptions{Name: prefix + "-a", Signer: framework.SignerKCM, HubController: true})
	hubB := framework.StartHub(t, framework.HubOptions{Name: prefix + "-b", Signer: framework.SignerKCM, HubController: true})
	pid, err := apiserverPID(hubB.DirectURL())
	if err != nil {
		t.Fatal(err)
	}
	idleRate := b.cpuRate(t, pid, scaleIdleWindow)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%03d", prefix, i)
		if kind == ours {
			b.createFailoverConfig(t, spoke, fo, names[i], hubB)
		} else if err := createNamespace(b.ctx, spoke, ocmComponentNamespace); err != nil {
			t.Fatal(err)
		}
	}
	agents := make([]*agentProc, n)
	for i, name := range names {
		cfg := agentConfig{kind: kind, cluster: name, namespace: name, spoke: spoke, restart: true,
			bootstraps: [][]byte{hubA.BootstrapKubeconfig()}}
		if kind == ocm {
			cfg.bootstraps = append(cfg.bootstraps, hubB.BootstrapKubeconfig())
			cfg.hubConnectionTimeoutSeconds = int(b.failoverTimeout.Seconds())
		}
		agents[i] = b.startAgent(t, cfg)
	}
	defer stopAll(agents)
	start := time.Now()
	// A batch that gets no figure says why in the report, not only in the test output.
	fail := func(reason string) {
		for _, id := range []string{massTimeID(n), massCPUID(n), massCSRID(n), massStandbyCPUID(n)} {
			b.rep.missing(id, kind, reason)
		}
		t.Fatal(reason)
	}
	if _, err := b.waitAllAvailable(hubA, names, b.scaleTimeout); err != nil {
		fail(fmt.Sprintf("%s: joining hub-a: %v", prefix, err))
	}
	t.Logf("%s: all %d Available on hub-a after %.1f s", prefix, n, time.Since(start).Seconds())
	if kind == ours {
		readyStart := time.Now()
		if err := b.waitStandbyReady(fo, names, "hub-b", b.scaleTimeout); err != nil {
			fail(fmt.Sprintf("%s: %v (%d of the agents switched to hub-b while hub-a was up)", prefix, err, switchedEarly(agents)))
		}
		b.rep.note(massTimeID(n), "%s: hub-b's standby credentials Ready for all %d agents %.1f s after all were Available on hub-a",
			prefix, n, time.Since(readyStart).Seconds())
	}
	if err := b.sleep(failoverSettle); err != nil {
		t.Fatal("interrupted")
	}
	standbyRate := b.cpuRate(t, pid, massStandbyWindow)
	b.rep.add(massStandbyCPUID(n), kind, (standbyRate-idleRate)/float64(n)*time.Hour.Seconds())
	b.rep.note(massStandbyCPUID(n), "%s: hub-b kube-apiserver %.2f CPU s in %s with the agents on hub-a, idle rate %.3f CPU s/s subtracted",
		prefix, standbyRate*massStandbyWindow.Seconds(), massStandbyWindow, idleRate)
	csrsBefore := b.csrNames(t, hubB)
	exitsBefore := 0
	for _, a := range agents {
		exitsBefore += a.restarts()
	}
	cpu0, err := cpuSeconds(pid)
	if err != nil {
		t.Fatal(err)
	}
	lost := time.Now()
	hubA.KillAPIServer()
	firstSeen, err := b.waitAllAvailable(hubB, names, b.failoverTimeout+b.scaleTimeout)
	if err != nil {
		reason := fmt.Sprintf("%s: after hub-a's loss: %v", prefix, err)
		for _, id := range []string{massTimeID(n), massCPUID(n), massCSRID(n)} {
			b.rep.missing(id, kind, reason)
		}
		t.Log(reason)
		return
	}
	elapsed := time.Since(lost)
	cpu1, err := cpuSeconds(pid)
	if err != nil {
		t.Fatal(err)
	}
	newCSRs := 0
	for name := range b.csrNames(t, hubB) {
		if !csrsBefore[name] {
			newCSRs++
		}
	}
	exits := -exitsBefore
	for _, a := range agents {
		exits += a.restarts()
	}
	perAgent := (cpu1 - cpu0 - idleRate*elapsed.Seconds()) / float64(n)
	b.rep.add(massTimeID(n), kind, elapsed.Seconds())
	b.rep.add(massCPUID(n), kind, perAgent)
	b.rep.add(massCSRID(n), kind, float64(newCSRs))
	perCluster := make([]float64, 0, len(firstSeen))
	for _, at := range firstSeen {
		perCluster = append(perCluster, at.Sub(lost).Seconds())
		b.rep.add(massPerClusterID(n), kind, at.Sub(lost).Seconds())
	}
	if s := summarize(perCluster); s != nil {
		b.rep.note(massTimeID(n), "%s: per cluster, loss → Available on hub-b %.1f s median (%.1f–%.1f s); %d agent process exits meanwhile",
			prefix, s.Median, s.Min, s.Max, exits)
	}
	b.rep.note(massCPUID(n), "%s: hub-b kube-apiserver %.2f CPU s in %.1f s, idle rate %.3f CPU s/s subtracted",
		prefix, cpu1-cpu0, elapsed.Seconds(), idleRate)
	t.Logf("%s: all %d Available on hub-b %.1f s after hub-a's loss; hub-b apiserver %.2f CPU s (%.3f per agent), %d new CSRs, %d agent exits",
		prefix, n, elapsed.Seconds(), cpu1-cpu0, perAgent, newCSRs, exits)
}

// waitAllAvailable lists hub's ManagedClusters every scalePollInterval until every cluster of names is Joined and
// Available, and returns when each was first seen so. After timeout, or when the run is interrupted, it returns
// those seen so far and an error saying how many were.
func (b *bench) waitAllAvailable(hub *framework.Hub, names []string, timeout time.Duration) (map[string]time.Time, error) {
	want := map[string]bool{}
	for _, name := range names {
		want[name] = true
	}
	firstSeen := map[string]time.Time{}
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		list, err := hub.Cluster.ClusterV1().ManagedClusters().List(b.ctx, metav1.ListOptions{})
		if err != nil {
			lastErr = err
		} else {
			for _, mc := range list.Items {
				if want[mc.Name] && meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined) &&
					meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
					if _, seen := firstSeen[mc.Name]; !seen {
						firstSeen[mc.Name] = time.Now()
					}
				}
			}
			if len(firstSeen) == len(names) {
				return firstSeen, nil
			}
		}
		if time.Now().After(deadline) {
			return firstSeen, fmt.Errorf("%d of %d clusters Joined+Available on %s within %s (last list error: %v)",
				len(firstSeen), len(names), hub.Name, timeout, lastErr)
		}
		if err := b.sleep(scalePollInterval); err != nil {
			return firstSeen, err
		}
	}
}

// waitStandbyReady lists our agents' FailoverConfigs (named "failover" in each namespace of names) every 2 s,
// from the spoke apiserver's cache (one request however many agents), until each reports standby credentials
// Ready for hub, and fails after timeout, saying how many did.
func (b *bench) waitStandbyReady(fo failoverclientset.Interface, names []string, hub string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	want := map[string]bool{}
	for _, ns := range names {
		want[ns] = true
	}
	ready := map[string]bool{}
	for {
		list, err := fo.FailoverV1alpha1().FailoverConfigs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err == nil {
			for _, fc := range list.Items {
				if !want[fc.Namespace] || fc.Name != "failover" {
					continue
				}
				for _, h := range fc.Status.Hubs {
					if h.Name == hub && h.StandbyCredentials != nil && h.StandbyCredentials.State == failoverv1alpha1.StandbyCredentialsReady {
						ready[fc.Namespace] = true
					}
				}
			}
		}
		if len(ready) == len(names) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d agents report %s's standby credentials Ready within %s", len(ready), len(names), hub, timeout)
		case <-time.After(2 * time.Second):
		}
	}
}

// csrNames returns the names of hub's CertificateSigningRequests now.
func (b *bench) csrNames(t *testing.T, hub *framework.Hub) map[string]bool {
	t.Helper()
	csrs, err := hub.Kube.CertificatesV1().CertificateSigningRequests().List(b.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	names := make(map[string]bool, len(csrs.Items))
	for _, c := range csrs.Items {
		names[c.Name] = true
	}
	return names
}

// switchedEarly counts the agents whose log says they switched hubs ("Switching hub"): before hub A is lost, an
// agent starved of CPU for longer than its connection timeout.
func switchedEarly(agents []*agentProc) int {
	n := 0
	for _, a := range agents {
		if data, err := os.ReadFile(a.logPath); err == nil && strings.Contains(string(data), `"Switching hub"`) {
			n++
		}
	}
	return n
}
