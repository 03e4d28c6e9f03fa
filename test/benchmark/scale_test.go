//go:build bench

package benchmark

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	// scaleConcurrentMaxN is the largest batch that runs next to the traffic scenario; larger ones load the
	// machine for minutes and run after every other scenario.
	scaleConcurrentMaxN = 50
	// scaleIdleWindow is how long the idle CPU use of a fresh hub's apiserver is measured before agents start.
	scaleIdleWindow = 15 * time.Second
	// scalePollInterval is how often the hub's ManagedClusters are listed during the scale scenario.
	scalePollInterval = 250 * time.Millisecond
)

// runScale starts, for each N and each agent kind, a fresh hub and N agents of that kind at once (all on one
// spoke, each with its own cluster name and namespace), and measures the time until all are Available and the
// hub apiserver's CPU time per agent.
func (b *bench) runScale(t *testing.T) { b.runScaleBatches(t, func(int) bool { return true }) }

// runScaleBatches runs the batches whose N satisfies include (order alternation as in runScale).
func (b *bench) runScaleBatches(t *testing.T, include func(n int) bool) {
	spoke := framework.StartSpoke(t)
	util.InstallFailoverConfigCRD(t, spoke)
	b.rep.method(scenarioScale, "Per N and agent kind: a fresh hub as in scenario 1 (so no batch inherits another's clusters), "+
		"its kube-apiserver's idle CPU rate measured over %s, then N agent processes of one kind started at once on one "+
		"spoke (each its own cluster name and namespace, all sharing the hub's bootstrap user, auto-approved). The time "+
		"runs from the first start to the first list of the hub's ManagedClusters (every %s) that shows all N Joined and "+
		"Available. The CPU figure is the kube-apiserver process's utime+stime over that time, minus the idle rate × "+
		"the time, divided by N; it includes the apiserver work the hub controller and kube-controller-manager do for "+
		"the agents. All N agents, the spoke apiserver and the hub share the same 2 cores, so the time is bound by CPU; "+
		"one run per N and kind (n=1). The two kinds alternate which goes first.%s An agent process that exits is "+
		"restarted after %s, as a kubelet would (sooner than one: this favours whichever agent exits); the report "+
		"says how many did. A batch not all Available within %s "+
		"(BENCH_SCALE_TIMEOUT) has no figure; the report says how many of its clusters were. The hubs of batches of up to %d "+
		"agents write an audit log of every request of an agent identity (bootstrap or hub; Metadata level, nothing else), "+
		"counted per agent by verb and resource from the first start to all Available (tables below).", scaleIdleWindow, scalePollInterval,
		b.scaleConcurrencyNote(), restartDelay, b.scaleTimeout, scaleAuditMaxN)
	for i, n := range b.scaleNs {
		if !include(n) {
			continue
		}
		for _, kind := range order(i) {
			name := fmt.Sprintf("scale-%s-%d", kind, n)
			ok := t.Run(name, func(t *testing.T) { b.scaleOnce(t, spoke, kind, n) })
			if !ok {
				b.rep.missing(scaleTimeID(n), kind, fmt.Sprintf("the %s batch failed (see the `make bench` output)", name))
				b.rep.missing(scaleCPUID(n), kind, fmt.Sprintf("the %s batch failed (see the `make bench` output)", name))
			}
			b.writeReport(t)
			if b.ctx.Err() != nil {
				t.Fatal("interrupted")
			}
		}
	}
}

func (b *bench) scaleOnce(t *testing.T, spoke *framework.Spoke, kind agentKind, n int) {
	prefix := fmt.Sprintf("scale-%s-%d", kind, n)
	opts := framework.HubOptions{Name: prefix, Signer: framework.SignerKCM, HubController: true}
	if n <= scaleAuditMaxN {
		opts.AuditPolicy = []byte(agentAuditPolicy)
	}
	hub := framework.StartHub(t, opts)
	pid, err := apiserverPID(hub.DirectURL())
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%03d", prefix, i)
		ns := names[i]
		if kind == ocm {
			ns = ocmComponentNamespace
		}
		if err := createNamespace(b.ctx, spoke, ns); err != nil { // before the clock starts
			t.Fatal(err)
		}
	}
	idleRate := b.cpuRate(t, pid, scaleIdleWindow)

	cpu0, err := cpuSeconds(pid)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	agents := make([]*agentProc, n)
	for i, name := range names {
		agents[i] = b.startAgent(t, agentConfig{kind: kind, cluster: name, namespace: name, spoke: spoke,
			bootstraps: [][]byte{hub.BootstrapKubeconfig()}, restart: true})
	}
	defer stopAll(agents)
	seen, err := b.waitAllAvailable(hub, names, b.scaleTimeout)
	elapsed := time.Since(start)
	firstSeen := map[string]float64{} // cluster name → seconds from the first start to first seen Available
	for name, at := range seen {
		firstSeen[name] = at.Sub(start).Seconds()
	}
	if err != nil {
		if b.ctx.Err() != nil {
			t.Fatal("interrupted")
		}
		// A batch that does not finish is a result, not a failure of the run: say how far it got.
		reason := fmt.Sprintf("not all %d clusters Available within BENCH_SCALE_TIMEOUT=%s: %v", n, b.scaleTimeout, err)
		b.rep.missing(scaleTimeID(n), kind, reason)
		b.rep.missing(scaleCPUID(n), kind, reason)
		b.notePerCluster(prefix, n, firstSeen)
		t.Logf("%s: %s", prefix, reason)
		return
	}
	cpu1, err := cpuSeconds(pid)
	if err != nil {
		t.Fatal(err)
	}
	perAgent := (cpu1 - cpu0 - idleRate*elapsed.Seconds()) / float64(n)
	b.rep.add(scaleTimeID(n), kind, elapsed.Seconds())
	b.rep.add(scaleCPUID(n), kind, perAgent)
	b.rep.note(scaleCPUID(n), "%s: hub kube-apiserver %.2f CPU s in %.1f s, idle rate %.3f CPU s/s subtracted",
		prefix, cpu1-cpu0, elapsed.Seconds(), idleRate)
	b.notePerCluster(prefix, n, firstSeen)
	b.noteRestarts(scaleTimeID(n), prefix, agents)
	t.Logf("%s: all %d Available after %.1f s; hub apiserver %.2f CPU s (%.3f per agent after idle %.3f/s)",
		prefix, n, elapsed.Seconds(), cpu1-cpu0, perAgent, idleRate)
	if path := hub.AuditLogPath(); path != "" {
		counts, err := countAgentRequests(path, start, start.Add(elapsed))
		if err != nil {
			b.rep.note(scaleCPUID(n), "%s: requests not counted: %v", prefix, err)
			return
		}
		perAgentCounts := map[string]float64{}
		total := 0
		for req, c := range counts {
			perAgentCounts[req] = float64(c) / float64(n)
			total += c
		}
		b.rep.setScaleRequests(n, kind, perAgentCounts)
		t.Logf("%s: %d hub requests by the agents while joining (%.1f per agent)", prefix, total, float64(total)/float64(n))
	}
}

// scaleAuditMaxN is the largest batch whose hub writes an audit log of the agents' requests (agentAuditPolicy):
// the larger batches keep the hub as it was in earlier runs, so that their figures stay comparable.
const scaleAuditMaxN = 50

// agentAuditPolicy logs, at Metadata level, every request of an agent's bootstrap or hub identity, and nothing
// else (the scale scenario counts the agents' requests by verb and resource).
const agentAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  userGroups: ["system:open-cluster-management:managed-clusters", "` + framework.BootstrapGroup + `"]
- level: None
`

// countAgentRequests counts the requests in the audit log file of any agent identity (bootstrap or hub) received
// in [from, to], once per audit ID, by requestName.
func countAgentRequests(file string, from, to time.Time) (map[string]int, error) {
	last, _, err := readAuditLog(file)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, ev := range last {
		if ev.RequestReceivedTimestamp.Before(from) || ev.RequestReceivedTimestamp.After(to) {
			continue
		}
		counts[requestName(ev)]++
	}
	return counts, nil
}

// notePerCluster notes the distribution of the per-cluster times from the first start to Available.
// noteRestarts notes under figure id how many of agents exited during the batch and were restarted (by the stand-in
// for the kubelet, after restartDelay), with what the first of them logged last.
func (b *bench) noteRestarts(id, prefix string, agents []*agentProc) {
	exited := 0
	var first *agentProc
	for _, a := range agents {
		if a.restarts() > 0 {
			exited++
			if first == nil {
				first = a
			}
		}
	}
	if exited == 0 {
		b.rep.note(id, "%s: no agent process exited", prefix)
		return
	}
	b.rep.note(id, "%s: %d agent processes exited and were restarted after %s (first: %s%s)", prefix, exited,
		restartDelay, first.cfg.cluster, lastFatal(first.logPath))
}

// lastFatal returns the last fatal line (klog's F prefix) of the agent log at path as ", which logged: …", or its
// last error lines as lastErrors gives them when it has none.
func lastFatal(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if line := lines[i]; strings.HasPrefix(line, "F") && len(line) > 1 && line[1] >= '0' && line[1] <= '9' {
			if len(line) > 300 {
				line = line[:300] + "…"
			}
			return ", which logged: " + line
		}
	}
	return lastErrors(path)
}

func (b *bench) notePerCluster(prefix string, n int, firstSeen map[string]float64) {
	perCluster := make([]float64, 0, len(firstSeen))
	slow := 0
	for _, v := range firstSeen {
		perCluster = append(perCluster, v)
		if v >= 30 {
			slow++
		}
	}
	if s := summarize(perCluster); s != nil {
		b.rep.note(scaleTimeID(n), "%s: per cluster, first start → Available %.1f s median (%.1f–%.1f s) for the %d of %d that got there; %d took 30 s or more",
			prefix, s.Median, s.Min, s.Max, len(perCluster), n, slow)
	}
}

// stopAll stops agents concurrently.
func stopAll(agents []*agentProc) {
	var wg sync.WaitGroup
	for _, a := range agents {
		if a == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.stop()
		}()
	}
	wg.Wait()
}
