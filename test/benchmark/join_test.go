//go:build bench

package benchmark

import (
	"fmt"
	"testing"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// runJoin measures join latency, the agent's CPU time until Available, and its peak and steady RSS, on a small
// spoke (nothing but the agents' namespaces): one fresh cluster name and namespace per agent and repetition.
func (b *bench) runJoin(t *testing.T, hub *framework.Hub, spoke *framework.Spoke) {
	util.InstallFailoverConfigCRD(t, spoke)
	b.rep.method(scenarioJoin, "One hub (kube-apiserver + etcd, kube-controller-manager signing CSRs, OCM's hub registration "+
		"controller v1.2.0 with ManagedClusterAutoApproval and the bootstrap user as auto-approved CSR user) and one spoke. "+
		"Per repetition each agent starts with only a bootstrap kubeconfig, a fresh cluster name and a fresh namespace; the "+
		"time runs from the process start to the first poll that sees the ManagedCluster Joined=True and Available=True. "+
		"The agent's CPU time (utime+stime) is read at that moment. The agent is then kept %s for the memory reading "+
		"(scenario 4) and stopped. The hub apiserver writes an audit log (scenario 3) during this scenario too, "+
		"for both agents alike. %d repetitions per agent, order swapped every repetition.", b.steadyWait, b.reps)
	for i := 0; i < b.reps; i++ {
		for _, kind := range order(i) {
			b.joinOnce(t, hub, spoke, fmt.Sprintf("join-%s-%d", kind, i), kind, "join_latency", "join_cpu", "rss_peak_small", "rss_steady_small")
			if b.ctx.Err() != nil {
				t.Fatal("interrupted")
			}
		}
	}
}

// joinOnce starts one agent, records its join latency (and CPU time when cpuID is set), waits steadyWait,
// records its peak and steady RSS, and stops it. Failures are recorded as missing samples, not fatal.
func (b *bench) joinOnce(t *testing.T, hub *framework.Hub, spoke *framework.Spoke, name string, kind agentKind,
	latencyID, cpuID, peakID, steadyID string) {
	t.Helper()
	a := b.startAgent(t, agentConfig{kind: kind, cluster: name, namespace: name, spoke: spoke,
		bootstraps: [][]byte{hub.BootstrapKubeconfig()}, coldStart: true, profile: profileOn()})
	defer a.stop()
	at, err := waitAvailable(b.ctx, hub, a, joinTimeout)
	if err != nil {
		b.rep.missing(latencyID, kind, err.Error())
		t.Logf("%s: %v", name, err)
		return
	}
	latency := at.Sub(a.started).Seconds()
	b.rep.add(latencyID, kind, latency)
	line := fmt.Sprintf("%s: %s agent Available after %.2f s", name, kind, latency)
	if cpuID != "" {
		if cpu, err := cpuSeconds(a.pid()); err == nil {
			b.rep.add(cpuID, kind, cpu)
			line += fmt.Sprintf(", %.2f CPU s", cpu)
		} else {
			b.rep.missing(cpuID, kind, err.Error())
		}
	}
	if err := b.sleep(b.steadyWait); err != nil {
		t.Fatal("interrupted")
	}
	if err := a.dead(); err != nil {
		b.rep.missing(peakID, kind, err.Error())
		b.rep.missing(steadyID, kind, err.Error())
		t.Logf("%s: %v", name, err)
		return
	}
	m, err := readMemory(a.pid())
	if err != nil {
		b.rep.missing(peakID, kind, err.Error())
		b.rep.missing(steadyID, kind, err.Error())
		return
	}
	b.rep.add(peakID, kind, mib(m.PeakKiB))
	b.rep.add(steadyID, kind, mib(m.RSSKiB))
	t.Logf("%s; RSS peak %.1f MiB, steady %.1f MiB", line, mib(m.PeakKiB), mib(m.RSSKiB))
	if profileOn() {
		t.Logf("%s: %s", name, b.writeProfiles(b.ctx, a))
	}
}

// runMemory measures join latency and RSS like runJoin, first on the spoke with b.nodes unrelated Nodes added,
// then with b.secrets unrelated Secrets added as well: the difference shows what the Secrets cost.
func (b *bench) runMemory(t *testing.T, hub *framework.Hub, spoke *framework.Spoke) {
	util.InstallFailoverConfigCRD(t, spoke)
	nodes := b.populate(t, spoke, 0, b.nodes)
	for i := 0; i < b.reps; i++ {
		for _, kind := range order(i) {
			b.joinOnce(t, hub, spoke, fmt.Sprintf("nodes-%s-%d", kind, i), kind, "join_latency_nodes", "", "rss_peak_nodes", "rss_steady_nodes")
			if b.ctx.Err() != nil {
				t.Fatal("interrupted")
			}
		}
	}
	secrets := b.populate(t, spoke, b.secrets, 0)
	b.rep.method(scenarioMemory, "RSS is read from /proc/<pid>/status of the agent process: peak = VmHWM, steady = VmRSS, "+
		"both %s after the cluster became Available (Go's heap is not returned to the OS at once, so steady RSS "+
		"is an upper bound of the live set). Every agent of these scenarios starts from a cold page cache of both "+
		"binaries (synced, then fadvise DONTNEED): how a binary got into the page cache decides how much of it each "+
		"page fault maps, and the harness builds ours just before the run. Small spoke: the spoke of scenario 1 (nothing but the agents' namespaces). "+
		"Spoke with Nodes: the same spoke after adding, through the API with %d concurrent writers, %s. Large spoke: "+
		"then adding %s. The difference between the last two shows what unrelated Secrets cost. %d repetitions per "+
		"agent on each spoke, order swapped every repetition.",
		b.steadyWait, populateWorkers, nodes.describe(), secrets.describe(), b.reps)
	for i := 0; i < b.reps; i++ {
		for _, kind := range order(i) {
			b.joinOnce(t, hub, spoke, fmt.Sprintf("mem-%s-%d", kind, i), kind, "join_latency_large", "", "rss_peak_large", "rss_steady_large")
			if b.ctx.Err() != nil {
				t.Fatal("interrupted")
			}
		}
	}
}
