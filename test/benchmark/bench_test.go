//go:build bench

// Package benchmark is `make bench`: klusterlet-failover's agent binary and OCM's own registration agent
// (`registration agent`, open-cluster-management.io/ocm v1.2.0, built by hack/build-test-binaries.sh) run as
// processes side by side on the real test bed of test/framework, alternating, several repetitions each, and the
// figures of the side-by-side benchmark (join latency, failover time, hub traffic, memory, simulated scale;
// docs/design.md §8) are written to
// docs/benchmarks.md and docs/benchmarks.json. It is a Go test only so that it can use test/framework; the build
// tag `bench` keeps it out of `make test`.
//
// Settings come from the environment (hack/bench.sh sets the first ones):
//
//	KF_AGENT_BINARY          our agent binary (required)
//	BENCH_OUT_DIR            where benchmarks.{md,json} go (default <repo>/docs)
//	BENCH_LOG_DIR            agent logs (default a temp dir); KF_TEST_LOG_DIR keeps the hubs' logs
//	BENCH_COMMAND            the command line printed in the report (default "make bench")
//	BENCH_SCENARIOS          comma-separated subset of join,memory,traffic,failover,scale,pods,detection,massfailover,replication
//	                         (default all but replication; pods needs root and the node suite's packages, detection
//	                         root and iptables); replication alone (`make bench-replication`) leaves benchmarks.{md,json} untouched
//	BENCH_REPS               repetitions per agent for join, memory and failover, per fault for detection (default 3)
//	BENCH_STEADY_WAIT        wait after Available before reading the steady RSS (default 10s)
//	BENCH_SCALE_TIMEOUT      bound of one scale batch; a batch not all Available by then is reported as such (default 7m)
//	BENCH_SECRETS, BENCH_SECRET_NAMESPACES, BENCH_NODES   the large spoke (default 20000, 100, 5000)
//	BENCH_POPULATE_BUDGET    time allowed to create those objects; fewer are used when it runs out (default 8m)
//	BENCH_TRAFFIC_SETTLE, BENCH_TRAFFIC_WINDOW   hub traffic settle time and counting window (default 60s, 10m)
//	BENCH_FAILOVER_TIMEOUT   hub connection timeout of both agents, failover and detection (default 30s, at least 10s)
//	BENCH_OUTAGE_TIMEOUT     our agent's hub connection timeout in the detection scenario's outages (default 60s)
//	BENCH_SCALE_N            comma-separated agent counts for the scale scenario (default 10,50,200)
//	BENCH_MASS_N             comma-separated agent counts for the mass failover scenario (default 50,200)
//	BENCH_HOLLOW_N           comma-separated agent counts for the hollow fleet scenario (default 1000)
//	BENCH_PROFILE            when set, heap profiles and RSS by mapping of the join and memory scenarios (profile_test.go)
//	BENCH_OURS_ENV           comma-separated NAME=VALUE pairs added to our agent's environment only (e.g. GOGC=50)
//	BENCH_RERENDER           when set, only render benchmarks.md again from benchmarks.json (no measurement)
//	BENCH_MERGE_FROM         with BENCH_RERENDER, comma-separated directories of other reports whose newer figures
//	                         are merged in (each figure from the newest run that measured it)
//	BENCH_REPL_SIZES         the replication scenario's sizes, run one after the other on hubs of their own:
//	                         comma-separated CLUSTERSxWORKSxSTANDBYS (default 3500x10x2,1000x10x1: issue 29's fleet, then
//	                         the previous report's size); each cluster has WORKS ManifestWorks, every tenth one also a
//	                         ManagedClusterAddOn and a Placement, and STANDBYS standby hubs (hub-b, hub-c, …) follow hub A
//	BENCH_REPL_CLUSTERS, BENCH_REPL_WORKS, BENCH_REPL_STANDBYS   when BENCH_REPL_SIZES is unset and any of them is
//	                         set, one size from them (defaults 3500, 10, 2); BENCH_REPL_STANDBYS is also the standbys
//	                         of a BENCH_REPL_SIZES entry written CLUSTERSxWORKS
//	BENCH_REPL_RATE, BENCH_REPL_WINDOW   changes per second on hub A and length of each change phase (default 100, 60s)
//	BENCH_REPL_SYNC_TIMEOUT, BENCH_REPL_FLIP_TIMEOUT   bounds of the initial sync and of the hub loss (default 20m,
//	                         15m); the scenario fails when the initial sync does not end in time
//	BENCH_REPL_PREVIOUS      the report shown as the previous run (default docs/benchmarks-replication-previous.json)
//	                         The replication scenario writes docs/benchmarks-replication.{md,json} (replication_test.go)
package benchmark

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// bench holds the settings and the report of one run.
type bench struct {
	rep        *report
	oursBinary string
	ocmBinary  string
	logDir     string
	workDir    string
	// outDir receives the reports; command is the command line they record.
	outDir  string
	command string
	ctx     context.Context
	// ran records the scenarios that started; ranMu guards it (traffic and failover run at the same time).
	ran   map[string]bool
	ranMu sync.Mutex

	scenarios       map[string]bool
	reps            int
	steadyWait      time.Duration
	secrets         int
	secretNS        int
	nodes           int
	populateBudget  time.Duration
	trafficSettle   time.Duration
	trafficWindow   time.Duration
	failoverTimeout time.Duration
	// outageTimeout is our agent's hubConnectionTimeout in the detection scenario's outages (BENCH_OUTAGE_TIMEOUT).
	outageTimeout time.Duration
	scaleNs       []int
	// massNs are the agent counts of the mass failover scenario (BENCH_MASS_N).
	massNs []int
	// hollowNs are the agent counts of the hollow fleet scenario (BENCH_HOLLOW_N).
	hollowNs     []int
	scaleTimeout time.Duration
	// duringTraffic is set while the failover and scale scenarios run during the traffic window (their method
	// texts say so).
	duringTraffic bool
}

// defaultScenarios is BENCH_SCENARIOS' default: every scenario but replication.
const defaultScenarios = "join,memory,traffic,failover,scale,pods,detection,massfailover,hollow"

const (
	// joinTimeout bounds one agent's join.
	joinTimeout = 3 * time.Minute
)

// auditPolicy logs every write of every user with its request and response (the response's resourceVersion
// shows whether a write changed anything), and, at Metadata level, every other request of agents: their hub
// identities are in group system:open-cluster-management:managed-clusters, their bootstrap identities in
// framework.BootstrapGroup.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: RequestResponse
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: Metadata
  userGroups: ["system:open-cluster-management:managed-clusters", "` + framework.BootstrapGroup + `"]
- level: None
`

func TestBenchmark(t *testing.T) {
	if os.Getenv("BENCH_RERENDER") != "" {
		rerender(t)
		return
	}
	b := newBench(t)
	// Ctrl-C cancels the context; the waits return and the cleanups stop every process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b.ctx = ctx
	if b.agentScenariosEnabled() {
		b.runAgentScenarios(t)
	}
	if b.scenarios[scenarioReplication] {
		b.runReplicationScenario(t)
	}
}

// agentScenariosEnabled reports whether any scenario comparing the two agents (and so docs/benchmarks.md) is on.
func (b *bench) agentScenariosEnabled() bool {
	for _, sc := range []string{scenarioJoin, scenarioMemory, scenarioTraffic, scenarioFailover, scenarioScale, scenarioPods, scenarioDetection, scenarioMassFailover, scenarioHollow} {
		if b.scenarios[sc] {
			return true
		}
	}
	return false
}

// runAgentScenarios runs the scenarios that compare the two agents and writes docs/benchmarks.{md,json}.
func (b *bench) runAgentScenarios(t *testing.T) {
	b.declareFigures()
	b.writeReport(t)

	t.Run("single-hub", func(t *testing.T) {
		if !b.scenarios[scenarioJoin] && !b.scenarios[scenarioMemory] && !b.scenarios[scenarioTraffic] {
			return
		}
		hub := framework.StartHub(t, framework.HubOptions{Name: "hub", Signer: framework.SignerKCM, HubController: true,
			AuditPolicy: []byte(auditPolicy)})
		spoke := framework.StartSpoke(t)
		b.run(t, scenarioJoin, func(t *testing.T) { b.runJoin(t, hub, spoke) })
		b.run(t, scenarioMemory, func(t *testing.T) { b.runMemory(t, hub, spoke) })
		// The traffic window is ten minutes of mostly idle agents: the failover and scale scenarios, on their
		// own hubs and spokes, run one after the other during it, so that the whole run fits in about 30 minutes.
		b.duringTraffic = b.scenarios[scenarioTraffic]
		b.runLanes(t, "concurrent",
			[]namedScenario{{scenarioTraffic, func(t *testing.T) { b.runTraffic(t, hub, spoke) }}},
			[]namedScenario{{scenarioFailover, b.runFailover},
				{scenarioScale, func(t *testing.T) { b.runScaleBatches(t, smallBatch) }}})
	})
	b.markNotRun(scenarioJoin, scenarioMemory, scenarioTraffic)
	switch {
	case b.hasRun(scenarioScale) && !b.scenarios[scenarioScale]: // skipped, and said so
	case b.hasRun(scenarioScale):
		// The large batches, alone on the machine (the single-hub test bed has stopped).
		b.run(t, scenarioScale, func(t *testing.T) { b.runScaleBatches(t, func(n int) bool { return !smallBatch(n) }) })
	default:
		// The single-hub test bed did not start (or was not needed): the others still run, on their own.
		b.duringTraffic = false
		if !b.hasRun(scenarioFailover) {
			b.run(t, scenarioFailover, b.runFailover)
		}
		b.run(t, scenarioScale, b.runScale)
	}
	// Alone on the machine: a hub lost with all its clusters, how long hub loss takes to detect, by fault, and the
	// node's pods and their memory.
	b.run(t, scenarioMassFailover, b.runMassFailover)
	b.run(t, scenarioHollow, b.runHollow)
	b.run(t, scenarioDetection, b.runDetection)
	b.run(t, scenarioPods, b.runPods)
	b.writeReport(t)
}

// smallBatch reports whether a scale batch of n agents runs next to the traffic scenario.
func smallBatch(n int) bool { return n <= scaleConcurrentMaxN }

// concurrencyNote is the sentence the failover and scale method texts add when they run during the traffic window.
func (b *bench) concurrencyNote() string {
	if !b.duringTraffic {
		return ""
	}
	return " It runs in a lane next to the traffic scenario (two mostly idle agents, a churning spoke on the same " +
		"machine), before the small scale batches."
}

// scaleConcurrencyNote is the sentence the scale method text adds when its small batches run next to the traffic
// scenario.
func (b *bench) scaleConcurrencyNote() string {
	if !b.duringTraffic {
		return ""
	}
	return fmt.Sprintf(" Batches of up to %d agents run in a lane next to the traffic scenario, after the failover "+
		"scenario (two mostly idle agents and a churning spoke meanwhile, then the idle single-hub test bed); larger "+
		"batches run after every other scenario has ended, alone on the machine.", scaleConcurrentMaxN)
}

// namedScenario is a scenario and its function.
type namedScenario struct {
	name string
	f    func(t *testing.T)
}

// runLanes runs each lane as a parallel subtest of group, the scenarios of a lane one after the other through
// run, and returns when every lane has ended.
func (b *bench) runLanes(t *testing.T, group string, lanes ...[]namedScenario) {
	t.Run(group, func(t *testing.T) {
		for _, lane := range lanes {
			names := make([]string, len(lane))
			for i, sc := range lane {
				names[i] = sc.name
			}
			t.Run(strings.Join(names, "+"), func(t *testing.T) {
				t.Parallel()
				for _, sc := range lane {
					b.run(t, sc.name, sc.f)
				}
			})
		}
	})
}

func (b *bench) setRan(sc string) {
	b.ranMu.Lock()
	defer b.ranMu.Unlock()
	b.ran[sc] = true
}

func (b *bench) hasRun(sc string) bool {
	b.ranMu.Lock()
	defer b.ranMu.Unlock()
	return b.ran[sc]
}

// scenarioFailed records why the figures of scenario sc are missing or incomplete.
func (b *bench) scenarioFailed(sc string, started time.Time) {
	reason := fmt.Sprintf("the %s scenario failed after %s (see the `make bench` output and logs)",
		sc, time.Since(started).Round(time.Second))
	b.rep.missingScenario(sc, reason)
	b.rep.noteScenario(sc, "incomplete: %s; the samples shown are those taken before", reason)
}

// rerender writes benchmarks.md again from the samples in benchmarks.json (BENCH_OUT_DIR), measuring nothing:
// for changes to the rendering only.
func rerender(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	r, err := loadReport(envString("BENCH_OUT_DIR", filepath.Join(root, "docs")))
	if err != nil {
		t.Fatal(err)
	}
	if dirs := envString("BENCH_MERGE_FROM", ""); dirs != "" {
		if r.earlier, err = loadReports(strings.Split(dirs, ",")); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.write(); err != nil {
		t.Fatal(err)
	}
}

// run runs scenario sc as a subtest when it is enabled, records why its figures are missing when it is not or
// when it fails, and rewrites the report.
func (b *bench) run(t *testing.T, sc string, f func(t *testing.T)) {
	if !b.scenarios[sc] {
		b.rep.missingScenario(sc, skippedReason)
		b.setRan(sc)
		b.writeReport(t)
		return
	}
	started := time.Now()
	if ok := t.Run(sc, f); !ok {
		b.scenarioFailed(sc, started)
	}
	b.setRan(sc)
	b.writeReport(t)
}

// markNotRun records, for scenarios that never started (e.g. the single-hub test bed failed to start), why
// their figures are missing.
func (b *bench) markNotRun(scs ...string) {
	for _, sc := range scs {
		if b.scenarios[sc] && !b.hasRun(sc) {
			b.rep.missingScenario(sc, "not run: the single-hub test bed (hub + spoke) did not start; see the `make bench` output")
		}
	}
}

func (b *bench) writeReport(t *testing.T) {
	if err := b.rep.write(); err != nil {
		t.Errorf("writing the report: %v", err)
	}
}

func newBench(t *testing.T) *bench {
	b := &bench{ran: map[string]bool{}}
	b.oursBinary = os.Getenv("KF_AGENT_BINARY")
	if b.oursBinary == "" {
		t.Fatal("KF_AGENT_BINARY must name the klusterlet-failover binary (make bench sets it)")
	}
	binDir, err := framework.BinariesDir()
	if err != nil {
		t.Fatal(err)
	}
	b.ocmBinary = filepath.Join(binDir, framework.BinaryRegistration)
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	outDir := envString("BENCH_OUT_DIR", filepath.Join(root, "docs"))
	b.outDir = outDir
	b.command = envString("BENCH_COMMAND", "make bench")
	b.workDir = t.TempDir()
	b.logDir = envString("BENCH_LOG_DIR", filepath.Join(b.workDir, "logs"))
	if err := os.MkdirAll(b.logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	b.scenarios = map[string]bool{}
	for _, sc := range strings.Split(envString("BENCH_SCENARIOS", defaultScenarios), ",") {
		switch sc = strings.TrimSpace(sc); sc {
		case scenarioJoin, scenarioMemory, scenarioTraffic, scenarioFailover, scenarioScale, scenarioPods, scenarioDetection, scenarioMassFailover, scenarioHollow, scenarioReplication:
			b.scenarios[sc] = true
		case "":
		default:
			t.Fatalf("BENCH_SCENARIOS: unknown scenario %q", sc)
		}
	}
	b.reps = envInt(t, "BENCH_REPS", 3)
	b.steadyWait = envDuration(t, "BENCH_STEADY_WAIT", 10*time.Second)
	b.scaleTimeout = envDuration(t, "BENCH_SCALE_TIMEOUT", 7*time.Minute)
	b.secrets = envInt(t, "BENCH_SECRETS", 20000)
	b.secretNS = envInt(t, "BENCH_SECRET_NAMESPACES", 100)
	b.nodes = envInt(t, "BENCH_NODES", 5000)
	b.populateBudget = envDuration(t, "BENCH_POPULATE_BUDGET", 8*time.Minute)
	b.trafficSettle = envDuration(t, "BENCH_TRAFFIC_SETTLE", 60*time.Second)
	b.trafficWindow = envDuration(t, "BENCH_TRAFFIC_WINDOW", 10*time.Minute)
	b.failoverTimeout = envDuration(t, "BENCH_FAILOVER_TIMEOUT", 30*time.Second)
	b.outageTimeout = envDuration(t, "BENCH_OUTAGE_TIMEOUT", 60*time.Second)
	if b.failoverTimeout < 10*time.Second || b.failoverTimeout%time.Second != 0 {
		t.Fatalf("BENCH_FAILOVER_TIMEOUT %s: must be whole seconds, at least 10s (the FailoverConfig minimum)", b.failoverTimeout)
	}
	if b.outageTimeout < 10*time.Second || b.outageTimeout%time.Second != 0 {
		t.Fatalf("BENCH_OUTAGE_TIMEOUT %s: must be whole seconds, at least 10s (the FailoverConfig minimum)", b.outageTimeout)
	}
	for _, s := range strings.Split(envString("BENCH_SCALE_N", "10,50,200"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			t.Fatalf("BENCH_SCALE_N: %q is not a positive integer", s)
		}
		b.scaleNs = append(b.scaleNs, n)
	}
	for _, s := range strings.Split(envString("BENCH_MASS_N", "50,200"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			t.Fatalf("BENCH_MASS_N: %q is not a positive integer", s)
		}
		b.massNs = append(b.massNs, n)
	}
	for _, s := range strings.Split(envString("BENCH_HOLLOW_N", "1000"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			t.Fatalf("BENCH_HOLLOW_N: %q is not a positive integer", s)
		}
		b.hollowNs = append(b.hollowNs, n)
	}
	if b.secretNS < 1 {
		t.Fatal("BENCH_SECRET_NAMESPACES must be at least 1")
	}

	settings := map[string]string{
		"BENCH_REPS": strconv.Itoa(b.reps), "BENCH_STEADY_WAIT": b.steadyWait.String(),
		"BENCH_SECRETS": strconv.Itoa(b.secrets), "BENCH_SECRET_NAMESPACES": strconv.Itoa(b.secretNS),
		"BENCH_NODES": strconv.Itoa(b.nodes), "BENCH_TRAFFIC_WINDOW": b.trafficWindow.String(),
		"BENCH_TRAFFIC_SETTLE": b.trafficSettle.String(), "BENCH_FAILOVER_TIMEOUT": b.failoverTimeout.String(), "BENCH_OUTAGE_TIMEOUT": b.outageTimeout.String(),
		"BENCH_SCALE_TIMEOUT": b.scaleTimeout.String(),
		"BENCH_SCALE_N":       envString("BENCH_SCALE_N", "10,50,200"), "BENCH_MASS_N": envString("BENCH_MASS_N", "50,200"), "BENCH_HOLLOW_N": envString("BENCH_HOLLOW_N", "1000"), "BENCH_SCENARIOS": envString("BENCH_SCENARIOS", defaultScenarios),
	}
	if env := os.Getenv("BENCH_OURS_ENV"); env != "" {
		settings["BENCH_OURS_ENV"] = env // our agent ran with a changed environment: the report must say so
	}
	if profileOn() {
		settings["BENCH_PROFILE"] = os.Getenv("BENCH_PROFILE")
	}
	versions := map[string]string{
		"ours (klusterlet-failover version)":                            commandOutput(b.oursBinary, "version"),
		"OCM registration agent + hub controller, kube-apiserver, etcd": filepath.Base(binDir) + " (hack/build-test-binaries.sh cache entry)",
	}
	b.rep = newReport(outDir, envString("BENCH_COMMAND", "make bench"), settings, versions)
	// The report there before this run: the figures of the scenarios this run does not measure are kept from it.
	earlier, err := loadEarlier(outDir)
	if err != nil {
		t.Fatal(err)
	}
	if earlier != nil {
		b.rep.earlier = []*report{earlier}
	}
	b.rep.globalNote("Measured on a 2-core machine that other work may share (its load average at the start and the end is " +
		"above): absolute times and CPU seconds carry noise; both agents ran in the same run, alternating (the order " +
		"swaps every repetition), so the ratios matter more than the absolute numbers.")
	b.rep.globalNote("Both agents are processes started from their binaries against real kube-apiservers, etcd, "+
		"kube-controller-manager (CSR signing) and OCM's hub registration controller with auto-approval (test/framework). "+
		"Times are taken by polling the hub every %s, which is their resolution. Our agent gets its own namespace per "+
		"run (--namespace); OCM's v1.2.0 agent takes its component namespace only from the service-account file of a pod, "+
		"so every OCM agent uses %s with its own --hub-kubeconfig-secret. Both use their default periods "+
		"(status resync 1m, lease every 60-75 s) and --spoke-external-server-urls of the spoke.", pollInterval, ocmComponentNamespace)
	return b
}

// declareFigures declares every figure of the report, so those not measured are listed with a reason.
func (b *bench) declareFigures() {
	r := b.rep
	r.declare("join_latency", scenarioJoin, "join latency: agent start → Joined+Available (small spoke)", "s", "≤ 0.4× OCM's (idle machine)")
	r.declare("join_cpu", scenarioJoin, "agent CPU time from start to Available (small spoke)", "CPU s", "")
	r.declare("join_latency_nodes", scenarioMemory, "join latency on the spoke with Nodes (see memory)", "s", "")
	r.declare("join_latency_large", scenarioMemory, "join latency on the large spoke (Nodes + Secrets, see memory)", "s", "")
	r.declare("failover_beyond_timeout", scenarioFailover, "failover: hub A stopped → Available on hub B, minus the timeout", "s", "≤ 1 s (largest sample) and below OCM's")
	r.declare("failover_total", scenarioFailover, "failover: hub A stopped → Available on hub B", "s", "")
	r.declare("failover_edit_applied", scenarioFailover, "failover: hub A stopped, a ManifestWork edited on hub B at once → the edit applied on the spoke by OCM's work agent", "s", "≤ timeout + 3 s (largest sample)")
	r.declare("failover_csrs", scenarioFailover, "CSRs sent to hub B from hub A's loss to Available on hub B", "CSRs", "0")
	r.declare("traffic_requests", scenarioTraffic, "hub requests per cluster-hour (steady state)", "req/h", "≤ OCM's")
	r.declare("traffic_writes", scenarioTraffic, "hub writes per cluster-hour (steady state)", "writes/h", "≤ OCM's, no no-op writes")
	r.declare("traffic_noop_writes", scenarioTraffic, "hub writes that change nothing", "writes/h", "0")
	r.declare("traffic_agent_cpu", scenarioTraffic, "agent CPU time per hour in steady state", "CPU s/h", "")
	r.declareMeasuredBy("rss_peak_small", scenarioMemory, scenarioJoin, "peak RSS (VmHWM), small spoke", "MiB", "≤ 0.6× OCM's")
	r.declareMeasuredBy("rss_steady_small", scenarioMemory, scenarioJoin, "steady RSS (VmRSS) after join, small spoke", "MiB", "≤ 0.6× OCM's")
	r.declare("rss_peak_nodes", scenarioMemory, "peak RSS (VmHWM), spoke with Nodes", "MiB", "≤ 0.6× OCM's")
	r.declare("rss_steady_nodes", scenarioMemory, "steady RSS (VmRSS) after join, spoke with Nodes", "MiB", "≤ 0.6× OCM's")
	b.declarePodFigures()
	b.declareDetectionFigures()
	b.declareMassFailoverFigures()
	b.declareHollowFigures()
	r.declare("rss_peak_large", scenarioMemory, "peak RSS (VmHWM), large spoke", "MiB", "≤ 0.6× OCM's, flat in Secrets")
	r.declare("rss_steady_large", scenarioMemory, "steady RSS (VmRSS) after join, large spoke", "MiB", "≤ 0.6× OCM's, flat in Secrets")
	for _, n := range b.scaleNs {
		r.declare(scaleTimeID(n), scenarioScale, fmt.Sprintf("%d agents joining one hub: start → all Available", n), "s", "")
		r.declare(scaleCPUID(n), scenarioScale, fmt.Sprintf("%d agents: hub kube-apiserver CPU per agent while joining", n), "CPU s", "")
	}
}

func scaleTimeID(n int) string { return fmt.Sprintf("scale_%d_all_available", n) }
func scaleCPUID(n int) string  { return fmt.Sprintf("scale_%d_apiserver_cpu_per_agent", n) }

// order returns the agents in the order of repetition i: ours first on even repetitions, OCM's first on odd.
func order(i int) []agentKind {
	if i%2 == 0 {
		return []agentKind{ours, ocm}
	}
	return []agentKind{ocm, ours}
}

// mib converts KiB to MiB.
func mib(kib int64) float64 { return float64(kib) / 1024 }

// sleep waits d or until the run is interrupted.
func (b *bench) sleep(d time.Duration) error {
	select {
	case <-b.ctx.Done():
		return b.ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a non-negative integer", name, v)
	}
	return n
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration such as 30s", name, v)
	}
	return d
}

// commandOutput runs binary with args and returns its trimmed output, or a note when it fails.
func commandOutput(binary string, args ...string) string {
	out, err := exec.Command(binary, args...).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("unknown (%s %s: %v)", filepath.Base(binary), strings.Join(args, " "), err)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}
