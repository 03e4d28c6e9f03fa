//go:build bench

package benchmark

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverclientset "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/hollow"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// scenarioHollow is a fleet of hollow agents (test/hollow: N of our agents in one process) on two real hubs: the
// join, the steady-state cost on the active and the standby hub, the process's memory, and the loss of the active
// hub with all its clusters.
const scenarioHollow = "hollow"

// hollowStartInterval spreads the agents' starts (1,000 agents start in 20 s).
const hollowStartInterval = 20 * time.Millisecond

// hollowAgentsPerSpoke is how many hollow agents share one spoke apiserver.
const hollowAgentsPerSpoke = 100

// hollowAgentsPerProcess is how many hollow agents share one process (one Go runtime). When a hub is lost with
// all its clusters, every agent stops its session's controllers at once; each library-go controller's worker
// spins while its queue's ShutDown waits for client-go's workqueue-metrics goroutine to be scheduled, so in one
// runtime with hundreds of agents those stops starve each other (measured: 80% of a 300-agent process's CPU for
// the first 30 s of the herd). Separate agents are separate runtimes; at ten per process the herd's hand-overs no
// longer time out, and a thousand agents still fit in memory.
const hollowAgentsPerProcess = 10

// hollowSteadyWindow is how long both hubs' apiserver CPU is measured with every agent on hub A.
const hollowSteadyWindow = 2 * time.Minute

func hollowJoinID(n int) string      { return fmt.Sprintf("hollow_%d_join_all_available", n) }
func hollowMemoryID(n int) string    { return fmt.Sprintf("hollow_%d_anon_memory_per_agent", n) }
func hollowActiveCPUID(n int) string { return fmt.Sprintf("hollow_%d_hub_a_cpu_per_cluster_hour", n) }
func hollowStandbyID(n int) string {
	return fmt.Sprintf("hollow_%d_hub_b_standby_cpu_per_agent_hour", n)
}
func hollowFailoverID(n int) string { return fmt.Sprintf("hollow_%d_failover_all_available", n) }
func hollowHerdCPUID(n int) string  { return fmt.Sprintf("hollow_%d_hub_b_cpu_per_agent", n) }
func hollowCSRID(n int) string      { return fmt.Sprintf("hollow_%d_csrs", n) }

// hollowPerClusterID is the figure of each cluster's time from the loss to Available on hub B (one sample per
// cluster: the report's CDF chart).
func hollowPerClusterID(n int) string { return fmt.Sprintf("hollow_%d_failover_per_cluster", n) }

// hollowIDs are every figure of one N.
func hollowIDs(n int) []string {
	return []string{hollowJoinID(n), hollowMemoryID(n), hollowActiveCPUID(n), hollowStandbyID(n), hollowFailoverID(n), hollowHerdCPUID(n), hollowCSRID(n)}
}

// declareHollowFigures declares the hollow fleet's figures, one set per N of BENCH_HOLLOW_N (ours only).
func (b *bench) declareHollowFigures() {
	for _, n := range b.hollowNs {
		b.rep.declare(hollowJoinID(n), scenarioHollow, fmt.Sprintf("%d hollow agents: first start → all Joined and Available on hub A", n), "s", "")
		b.rep.declare(hollowMemoryID(n), scenarioHollow, fmt.Sprintf("%d hollow agents: anonymous memory of their process per agent, all on hub A", n), "MiB", "")
		b.rep.declare(hollowActiveCPUID(n), scenarioHollow, fmt.Sprintf("%d hollow agents: hub A's kube-apiserver CPU per cluster-hour, steady state", n), "CPU s/h", "≤ OCM's")
		b.rep.declare(hollowStandbyID(n), scenarioHollow, fmt.Sprintf("%d hollow agents on hub A: hub B's kube-apiserver CPU per agent-hour (the standby's cost)", n), "CPU s/h", "≤ 2× OCM's")
		b.rep.declare(hollowFailoverID(n), scenarioHollow, fmt.Sprintf("%d hollow agents: hub A's apiserver killed → all Available on hub B", n), "s", fmt.Sprintf("≤ timeout + %s", massFailoverTarget))
		b.rep.declare(hollowHerdCPUID(n), scenarioHollow, fmt.Sprintf("%d hollow agents: hub B's kube-apiserver CPU per agent, loss → all Available", n), "CPU s", "")
		b.rep.declare(hollowCSRID(n), scenarioHollow, fmt.Sprintf("%d hollow agents: CSRs created on hub B, loss → all Available", n), "CSRs", "0")
		b.rep.declare(hollowPerClusterID(n), scenarioHollow, fmt.Sprintf("%d hollow agents: each cluster, hub A's loss → Available on hub B (a sample per cluster)", n), "s", "")
	}
}

// runHollow runs one fleet per N of BENCH_HOLLOW_N, each on fresh hubs and fresh spokes.
func (b *bench) runHollow(t *testing.T) {
	b.rep.method(scenarioHollow, "Hollow agents (test/hollow, after kubemark's hollow nodes): N of our agents in processes of %d "+
		"(hollow-agents --shards), each the agent's own code with its own cluster name, namespace, spoke identity and client "+
		"certificates on its spoke and both hubs, so each has its own connections; the agents of a process share its Go runtime, and a "+
		"spoke apiserver per %d agents. Per N: a fresh hub-a and hub-b (kube-apiserver, etcd, kube-controller-manager signing, OCM's "+
		"hub controller with auto-approval) and fresh spokes; a FailoverConfig per agent with alternate hub-b and the "+
		"default timeout and probe interval; hot standby credentials on; hub-b holds every cluster's ManagedCluster, accepted (as the replicator mirrors it). The agents start %s "+
		"apart. Join: the processes' start → every ManagedCluster Joined and Available on hub-a (listed every %s). "+
		"Once every agent reports hub-b's standby credentials Ready, each FailoverConfig gets hubConnectionTimeout %s; "+
		"%s later both hubs' kube-apiserver CPU is "+
		"measured over %s (idle rates, measured over %s before the start, subtracted), and the processes' RssAnon "+
		"is read (summed). Then hub-a's kube-apiserver is killed and hub-b's ManagedClusters are listed until all N are Joined "+
		"and Available there; hub-b's CPU over that time (idle subtracted) per agent and the CSRs created on hub-b. "+
		"Everything shares the machine's 2 cores; n=1 per N.",
		hollowAgentsPerProcess, hollowAgentsPerSpoke, hollowStartInterval, scalePollInterval, b.failoverTimeout, failoverSettle, hollowSteadyWindow, scaleIdleWindow)
	for _, n := range b.hollowNs {
		for _, id := range hollowIDs(n) {
			b.rep.missing(id, ocm, "OCM's agent has no hollow mode; its figures as processes are scenario 8's")
		}
		name := fmt.Sprintf("hollow-%d", n)
		if ok := t.Run(name, func(t *testing.T) { b.hollowOnce(t, n) }); !ok {
			for _, id := range hollowIDs(n) {
				if !b.rep.hasValue(id, ours) {
					b.rep.missing(id, ours, fmt.Sprintf("the %s fleet failed (see the `make bench` output)", name))
				}
			}
		}
		b.writeReport(t)
		if b.ctx.Err() != nil {
			t.Fatal("interrupted")
		}
	}
}

// hollowOnce runs one fleet of n hollow agents.
func (b *bench) hollowOnce(t *testing.T, n int) {
	prefix := fmt.Sprintf("hollow-%d", n)
	hubA := framework.StartHub(t, framework.HubOptions{Name: prefix + "-a", Signer: framework.SignerKCM, HubController: true})
	hubB := framework.StartHub(t, framework.HubOptions{Name: prefix + "-b", Signer: framework.SignerKCM, HubController: true})
	// One spoke apiserver per hollowAgentsPerSpoke agents: a fleet has one per cluster, and what the agents ask of
	// their own cluster (Secrets, statuses, events) all at once in a herd would otherwise queue on one.
	spokes := make([]*framework.Spoke, (n+hollowAgentsPerSpoke-1)/hollowAgentsPerSpoke)
	for k := range spokes {
		spokes[k] = framework.StartSpoke(t)
	}
	pidA, err := apiserverPID(hubA.DirectURL())
	if err != nil {
		t.Fatal(err)
	}
	pidB, err := apiserverPID(hubB.DirectURL())
	if err != nil {
		t.Fatal(err)
	}
	idleA, idleB := b.cpuRates(t, pidA, pidB, scaleIdleWindow)
	dir := filepath.Join(b.workDir, prefix)
	// The fleet joins with the default timeout: a thousand agents joining one hub at once on two cores would
	// otherwise leave it for the standby during the join (its apiserver busy past a 10 s timeout), which is not
	// the scenario; the timeout under test is set once every agent is on hub A with its standby credentials.
	names := hollow.PrepareOn(t, b.ctx, spokes, dir, hollow.Fleet{Count: n, Prefix: prefix, Primary: hubA, Alternates: []*framework.Hub{hubB}})
	// Hub B holds every cluster's ManagedCluster, accepted, as the replicator mirrors it to a standby: what the
	// herd measures is the move of clusters that hub B already manages, not OCM's acceptance of new ones (its
	// hub controller creating a namespace and RBAC for each).
	if err := util.ForEach(names, 16, func(name string) error {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true, LeaseDurationSeconds: 60}}
		_, err := hubB.Cluster.ClusterV1().ManagedClusters().Create(b.ctx, mc, metav1.CreateOptions{})
		return err
	}); err != nil {
		t.Fatalf("%s: creating the ManagedClusters on hub-b: %v", prefix, err)
	}
	// The bench's own writes (a patch per agent) are not to be held up by client-side rate limits.
	fos := make([]failoverclientset.Interface, len(spokes))
	onSpoke := make([][]string, len(spokes)) // agent i is on spokes[i % len(spokes)] (hollow.PrepareOn)
	for k, spoke := range spokes {
		foConfig := rest.CopyConfig(spoke.AdminConfig)
		foConfig.QPS, foConfig.Burst = 200, 400
		fos[k] = failoverclientset.NewForConfigOrDie(foConfig)
	}
	for i, name := range names {
		onSpoke[i%len(spokes)] = append(onSpoke[i%len(spokes)], name)
	}
	fail := func(reason string) {
		for _, id := range hollowIDs(n) {
			if !b.rep.hasValue(id, ours) {
				b.rep.missing(id, ours, reason)
			}
		}
		t.Fatal(reason)
	}

	binary := framework.HollowBinary(t) // built before the clock starts
	start := time.Now()
	procs := make([]*framework.AgentProcess, (n+hollowAgentsPerProcess-1)/hollowAgentsPerProcess)
	for i := range procs {
		// Process i starts i intervals after the first and its agents len(procs) intervals apart: the fleet
		// starts one agent every interval.
		procs[i] = framework.StartAgentProcess(t, fmt.Sprintf("%s-%d", prefix, i), binary, []string{"--dir=" + dir,
			fmt.Sprintf("--shard=%d", i), fmt.Sprintf("--shards=%d", len(procs)),
			"--start-interval=" + (hollowStartInterval * time.Duration(len(procs))).String(), "--", "--spoke-external-server-urls=" + spokes[0].URL()})
		defer procs[i].Stop()
		if err := b.sleep(hollowStartInterval); err != nil {
			t.Fatal("interrupted")
		}
	}
	logTails := func(lines int) string {
		var out strings.Builder
		for _, p := range procs {
			if exited, _ := p.Exited(); exited {
				out.WriteString(p.LogTail(lines))
			}
		}
		if out.Len() == 0 {
			out.WriteString(procs[0].LogTail(lines))
		}
		return out.String()
	}
	if _, err := b.waitAllAvailable(hubA, names, b.scaleTimeout); err != nil {
		fail(fmt.Sprintf("%s: joining hub-a: %v\n%s", prefix, err, logTails(10)))
	}
	b.rep.add(hollowJoinID(n), ours, time.Since(start).Seconds())
	t.Logf("%s: all %d Available on hub-a after %.1f s", prefix, n, time.Since(start).Seconds())
	readyStart := time.Now()
	for k := range spokes {
		if err := b.waitStandbyReady(fos[k], onSpoke[k], hubB.Name, b.scaleTimeout); err != nil {
			fail(fmt.Sprintf("%s: spoke %d: %v", prefix, k, err))
		}
	}
	b.rep.note(hollowStandbyID(n), "%s: hub-b's standby credentials Ready for all %d agents %.1f s after all were Available on hub-a",
		prefix, n, time.Since(readyStart).Seconds())
	patch := []byte(fmt.Sprintf(`{"spec":{"hubConnectionTimeout":%q}}`, b.failoverTimeout.String()))
	indexes := make([]int, len(names))
	for i := range indexes {
		indexes[i] = i
	}
	if err := util.ForEach(indexes, 16, func(i int) error {
		_, err := fos[i%len(spokes)].FailoverV1alpha1().FailoverConfigs(names[i]).Patch(b.ctx, "failover", types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}); err != nil {
		fail(fmt.Sprintf("%s: setting hubConnectionTimeout %s: %v", prefix, b.failoverTimeout, err))
	}
	if err := b.sleep(failoverSettle); err != nil {
		t.Fatal("interrupted")
	}
	rateA, rateB := b.cpuRates(t, pidA, pidB, hollowSteadyWindow)
	b.rep.add(hollowActiveCPUID(n), ours, (rateA-idleA)/float64(n)*time.Hour.Seconds())
	b.rep.add(hollowStandbyID(n), ours, (rateB-idleB)/float64(n)*time.Hour.Seconds())
	b.rep.note(hollowActiveCPUID(n), "%s: hub-a kube-apiserver %.3f CPU s/s over %s, idle %.3f subtracted", prefix, rateA, hollowSteadyWindow, idleA)
	b.rep.note(hollowStandbyID(n), "%s: hub-b kube-apiserver %.3f CPU s/s over %s, idle %.3f subtracted", prefix, rateB, hollowSteadyWindow, idleB)
	var anonKiB, peakKiB int64
	for _, p := range procs {
		mem, err := readMemory(p.PID())
		if err != nil {
			t.Fatal(err)
		}
		anonKiB += mem.AnonKiB
		peakKiB += mem.PeakKiB
	}
	b.rep.add(hollowMemoryID(n), ours, float64(anonKiB)/1024/float64(n))
	b.rep.note(hollowMemoryID(n), "%s: the %d processes' RssAnon %.0f MiB, VmHWM %.0f MiB (sums)", prefix, len(procs), float64(anonKiB)/1024, float64(peakKiB)/1024)

	csrsBefore := b.csrNames(t, hubB)
	switchedBefore := 0
	for _, p := range procs {
		log, _ := os.ReadFile(p.LogPath())
		switchedBefore += strings.Count(string(log), `"Switching hub"`)
	}
	cpu0, err := cpuSeconds(pidB)
	if err != nil {
		t.Fatal(err)
	}
	// Where the machine's CPU goes during the herd: hub B's apiserver, the spokes' apiservers, the agents.
	groups := map[string][]int{"hub-b kube-apiserver": {pidB}}
	for _, spoke := range spokes {
		if pid, err := apiserverPID(spoke.URL()); err == nil {
			groups["spokes' kube-apiservers"] = append(groups["spokes' kube-apiservers"], pid)
		}
	}
	for _, p := range procs {
		groups["hollow agents"] = append(groups["hollow agents"], p.PID())
	}
	groups0, err := cpuOfGroups(groups)
	if err != nil {
		t.Fatal(err)
	}
	lost := time.Now()
	hubA.KillAPIServer()
	firstSeen, err := b.waitAllAvailable(hubB, names, b.failoverTimeout+b.scaleTimeout)
	if err != nil {
		fail(fmt.Sprintf("%s: after hub-a's loss: %v", prefix, err))
	}
	elapsed := time.Since(lost)
	cpu1, err := cpuSeconds(pidB)
	if err != nil {
		t.Fatal(err)
	}
	if groups1, err := cpuOfGroups(groups); err == nil {
		var parts []string
		for _, name := range []string{"hub-b kube-apiserver", "spokes' kube-apiservers", "hollow agents"} {
			parts = append(parts, fmt.Sprintf("%s %.0f", name, groups1[name]-groups0[name]))
		}
		machine := groups1["machine"] - groups0["machine"]
		b.rep.note(hollowFailoverID(n), "%s: CPU s from the loss to all Available: %s, of %.0f the machine spent busy (%.0f%% of its %d CPUs over %.0f s)",
			prefix, strings.Join(parts, ", "), machine, 100*machine/(elapsed.Seconds()*float64(runtime.NumCPU())), runtime.NumCPU(), elapsed.Seconds())
	}
	newCSRs := 0
	for name := range b.csrNames(t, hubB) {
		if !csrsBefore[name] {
			newCSRs++
		}
	}
	b.rep.add(hollowFailoverID(n), ours, elapsed.Seconds())
	b.rep.add(hollowHerdCPUID(n), ours, (cpu1-cpu0-idleB*elapsed.Seconds())/float64(n))
	b.rep.add(hollowCSRID(n), ours, float64(newCSRs))
	perCluster := make([]float64, 0, len(firstSeen))
	for _, at := range firstSeen {
		perCluster = append(perCluster, at.Sub(lost).Seconds())
		b.rep.add(hollowPerClusterID(n), ours, at.Sub(lost).Seconds())
	}
	if s := summarize(perCluster); s != nil {
		b.rep.note(hollowFailoverID(n), "%s: per cluster, loss → Available on hub-b %.1f s median (%.1f–%.1f s); %d agents had switched hubs before the loss",
			prefix, s.Median, s.Min, s.Max, switchedBefore)
	}
	for i, p := range procs {
		if exited, err := p.Exited(); exited {
			t.Errorf("%s: hollow agents' process %d exited: %v\n%s", prefix, i, err, p.LogTail(20))
		}
	}
	t.Logf("%s: all %d Available on hub-b %.1f s after hub-a's loss; %d new CSRs", prefix, n, elapsed.Seconds(), newCSRs)
}

// cpuRates measures the CPU rate (CPU s/s) of two processes over one window.
func (b *bench) cpuRates(t *testing.T, pid1, pid2 int, window time.Duration) (float64, float64) {
	t.Helper()
	a0, err1 := cpuSeconds(pid1)
	b0, err2 := cpuSeconds(pid2)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if err := b.sleep(window); err != nil {
		t.Fatal("interrupted")
	}
	a1, err1 := cpuSeconds(pid1)
	b1, err2 := cpuSeconds(pid2)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return (a1 - a0) / window.Seconds(), (b1 - b0) / window.Seconds()
}
