//go:build bench

package benchmark

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/klusterlet-failover/klusterlet-failover/manifests/crd"
	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// The replication scenario: one hub (A) holding the clusters and their ManifestWorks, ManagedClusterAddOns and
// Placements, one or more standby hubs (B, C, …), and the replicator process copying A's state to the standbys.
// The ReplicationConfig and the hubs' kubeconfig Secrets live on B. After the initial sync, the change phases and
// an idle window, hub A is lost (its kube-apiserver stops and every cluster's lease moves to B); then the
// replicator stops and a plain client measures the write floor of the standbys. It runs once per size
// (BENCH_REPL_SIZES), each size on hubs of its own, stopped before the next size starts.
const (
	// replHubA and replHubB are the names, in the ReplicationConfig, of the source hub and of the first standby
	// (which hosts the ReplicationConfig and takes the clusters over when A is lost); further standbys are
	// hub-c, hub-d, … (replHubName). The names are the copies' replicated-from label and the replicator's metric
	// labels.
	replHubA = "hub-a"
	replHubB = "hub-b"
	// replNamespace holds the ReplicationConfig and the kubeconfig Secrets on hub B.
	replNamespace = "open-cluster-management-replicator"
	// replUser is the replicator's identity on every hub (group system:masters): the audit policy logs its
	// requests only. The write floor's client uses it too, after the replicator has stopped.
	replUser = "klusterlet-failover-replicator"
	// replHolder is the holderIdentity of the leases the benchmark renews in the agents' stead.
	replHolder = "benchmark-registration-agent"
	// replLeaseSeconds is each ManagedCluster's spec.leaseDurationSeconds and each lease's leaseDurationSeconds;
	// the benchmark renews every lease once per this period.
	replLeaseSeconds = 60
	// replPopulateWorkers is how many clusters are created on hub A at once.
	replPopulateWorkers = 8
	// replChangeWorkers is how many changes may be in flight to hub A at once during a change phase.
	replChangeWorkers = 16
	// replDrainTimeout is how long after a change phase the benchmark waits for its last copies on the standbys.
	replDrainTimeout = 60 * time.Second
	// replIdleWindow is the quiet time after the change phases (leases still renewed) for the idle figures.
	replIdleWindow = 30 * time.Second
	// replSampleInterval is how often the replicator's RSS is sampled.
	replSampleInterval = time.Second
	// replProfileSeconds is the length of each CPU profile taken from the replicator.
	replProfileSeconds = 20
	// replPayloadBytes is the size of the filler value in each ManifestWork's ConfigMap.
	replPayloadBytes = 256
	// replInitValue marks the ManifestWorks created before the replicator starts.
	replInitValue = "init"
	// replKindEvery: every replKindEvery-th cluster (cluster-0000, cluster-0010, …) has a ManagedClusterAddOn
	// (replAddonName) and a Placement (replPlacementName) in its namespace.
	replKindEvery     = 10
	replAddonName     = "bench-addon"
	replPlacementName = "bench-placement"
	// replFlipWorkers is how many lease writes to hub B are in flight at once when the leases move there.
	replFlipWorkers = 16
	// replFlipPoll is how often the benchmark checks whether the hub loss is handled (the times themselves come
	// from the watch events).
	replFlipPoll = 100 * time.Millisecond
	// replPlacementGrace is how much longer than the cluster objects the hub loss waits for the Placements
	// (hub-wide objects) to be copied from hub B.
	replPlacementGrace = 60 * time.Second
	// replFloorPrefix names the write floor's clusters (floor-0000, …), beside the replicated cluster-NNNN.
	replFloorPrefix = "floor-"
	// replLagLabel marks the ManifestWorks the change phases create (value "true"), so that hub A can be asked
	// for those still there.
	replLagLabel = "benchmark.klusterlet-failover.io/lag"
	// acmRestoreSync is ACM's default restoreSyncInterval: how often a passive hub looks for a newer backup.
	acmRestoreSync = 30 * time.Minute
	// replDefaultSizes is BENCH_REPL_SIZES' default: issue 29's fleet size, then the size of the previous report.
	replDefaultSizes = "3500x10x2,1000x10x1"
)

// replAuditPolicy logs the replicator's requests (its user only) at Metadata level: enough to count them by
// verb, resource and phase, without the cost of logging the benchmark's own traffic.
const replAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: ["` + replUser + `"]
- level: None
`

var (
	replWorkGVR      = mustMirrorKind(failoverv1alpha1.KindManifestWork).GVR
	replMCGVR        = mustMirrorKind(failoverv1alpha1.KindManagedCluster).GVR
	replAddonGVR     = mustMirrorKind(failoverv1alpha1.KindManagedClusterAddOn).GVR
	replPlacementGVR = mustMirrorKind(failoverv1alpha1.KindPlacement).GVR
	// replWatchedKinds are the kinds the benchmark's watch on each standby follows.
	replWatchedKinds = []failoverv1alpha1.ReplicatedKind{failoverv1alpha1.KindManagedCluster, failoverv1alpha1.KindManifestWork,
		failoverv1alpha1.KindManagedClusterAddOn, failoverv1alpha1.KindPlacement}
)

func mustMirrorKind(name failoverv1alpha1.ReplicatedKind) mirror.Kind {
	k, ok := mirror.KindByName(name)
	if !ok {
		panic(fmt.Sprintf("no mirror.Kind %s", name))
	}
	return k
}

// replSize is one size of the scenario, an entry of BENCH_REPL_SIZES: clusters × ManifestWorks per cluster ×
// standby hubs.
type replSize struct {
	clusters, works, standbys int
}

// name is the size as BENCH_REPL_SIZES writes it, e.g. 3500x10x2.
func (z replSize) name() string { return fmt.Sprintf("%dx%dx%d", z.clusters, z.works, z.standbys) }

// title is the size in words.
func (z replSize) title() string {
	standbys := "1 standby hub"
	if z.standbys != 1 {
		standbys = fmt.Sprintf("%d standby hubs", z.standbys)
	}
	return fmt.Sprintf("%s clusters × %d ManifestWorks, %s", thousands(z.clusters), z.works, standbys)
}

// perTenth is how many clusters have a ManagedClusterAddOn and a Placement (one in every replKindEvery).
func (z replSize) perTenth() int { return (z.clusters + replKindEvery - 1) / replKindEvery }

// replSettings are the settings of one size's run.
type replSettings struct {
	replSize
	rate                             int
	window, syncTimeout, flipTimeout time.Duration
}

// readReplSizes returns BENCH_REPL_SIZES (comma-separated CLUSTERSxWORKSxSTANDBYS; STANDBYS may be left out for
// BENCH_REPL_STANDBYS, default 2) and its sizes. Unset, it is one size from BENCH_REPL_CLUSTERS, BENCH_REPL_WORKS
// and BENCH_REPL_STANDBYS (defaults 3500, 10, 2) when any of them is set, else replDefaultSizes.
func readReplSizes(t *testing.T) (string, []replSize) {
	spec := os.Getenv("BENCH_REPL_SIZES")
	if spec == "" {
		spec = replDefaultSizes
		if os.Getenv("BENCH_REPL_CLUSTERS") != "" || os.Getenv("BENCH_REPL_WORKS") != "" || os.Getenv("BENCH_REPL_STANDBYS") != "" {
			spec = fmt.Sprintf("%dx%dx%d", envInt(t, "BENCH_REPL_CLUSTERS", 3500), envInt(t, "BENCH_REPL_WORKS", 10),
				envInt(t, "BENCH_REPL_STANDBYS", 2))
		}
	}
	var sizes []replSize
	seen := map[string]bool{}
	for _, part := range strings.Split(spec, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		fields := strings.Split(part, "x")
		if len(fields) == 2 {
			fields = append(fields, strconv.Itoa(envInt(t, "BENCH_REPL_STANDBYS", 2)))
		}
		var n [3]int
		for i := range n {
			if len(fields) != 3 {
				break
			}
			v, err := strconv.Atoi(strings.TrimSpace(fields[i]))
			if err != nil || v < 1 {
				t.Fatalf("BENCH_REPL_SIZES: %q: want CLUSTERSxWORKSxSTANDBYS, each at least 1 (e.g. 3500x10x2)", part)
			}
			n[i] = v
		}
		if len(fields) != 3 {
			t.Fatalf("BENCH_REPL_SIZES: %q: want CLUSTERSxWORKSxSTANDBYS (e.g. 3500x10x2)", part)
		}
		z := replSize{clusters: n[0], works: n[1], standbys: n[2]}
		if z.clusters > 9999 || z.standbys > 25 {
			t.Fatalf("BENCH_REPL_SIZES: %q: at most 9999 clusters (cluster-NNNN) and 25 standbys (hub-b … hub-z)", part)
		}
		if seen[z.name()] {
			t.Fatalf("BENCH_REPL_SIZES: %q is listed twice", part)
		}
		seen[z.name()] = true
		sizes = append(sizes, z)
	}
	if len(sizes) == 0 {
		t.Fatal("BENCH_REPL_SIZES lists no size")
	}
	return spec, sizes
}

// readReplSettings returns the settings common to every size.
func readReplSettings(t *testing.T) replSettings {
	s := replSettings{
		rate:        envInt(t, "BENCH_REPL_RATE", 100),
		window:      envDuration(t, "BENCH_REPL_WINDOW", 60*time.Second),
		syncTimeout: envDuration(t, "BENCH_REPL_SYNC_TIMEOUT", 20*time.Minute),
		flipTimeout: envDuration(t, "BENCH_REPL_FLIP_TIMEOUT", 15*time.Minute),
	}
	if s.rate < 1 {
		t.Fatal("BENCH_REPL_RATE must be at least 1")
	}
	return s
}

// thousands formats n with a comma every three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// replHubName is the ReplicationConfig name of hub i: hub-a (the source), hub-b, hub-c, …
func replHubName(i int) string { return "hub-" + string(rune('a'+i)) }

// Figure ids of the replication report.
const (
	figSync         = "initial_sync"
	figFloor        = "write_floor"
	figSyncFloor    = "initial_sync_vs_floor"
	figRSSPeak      = "rss_peak"
	figRSSSteady    = "rss_steady"
	figCPUSync      = "cpu_initial_sync"
	figCPUChanges   = "cpu_changes"
	figCPUIdle      = "cpu_idle"
	figChangeRate   = "change_rate"
	figFlipTakeover = "flip_takeover"
	figFlipFlow     = "flip_state_from_b"
	figFlipRSS      = "flip_rss_peak"
	figFlipCPU      = "flip_cpu"
)

// The change phases, in the order they run.
var replPhases = []string{"create", "update", "delete"}

// Targets of issue 29.
const (
	replLagLimit        = 1.0
	replRSSLimitMiB     = 400.0
	replIdleCPULimit    = 0.2
	replSyncFloorLimit  = 1.3
	replPerChangeLimit  = 1.01
	replPerChangeTarget = "1.0 (≤ 1.01: the phase's periodic lists count too)"
)

func lagID(phase, q string) string         { return "lag_" + phase + "_" + q }
func hubLagID(phase, q, hub string) string { return lagID(phase, q) + "_" + hub }
func ownLagID(phase, q string) string      { return "replicator_lag_" + phase + "_" + q }
func sendLagID(phase string) string        { return "lag_" + phase + "_p99_from_send" }
func syncReqsID(hub string) string         { return "requests_initial_sync_" + hub }
func changeReqsID(hub string) string       { return "requests_per_change_" + hub }
func percentileTitle(q string) string      { return map[string]string{"p50": "median", "p99": "p99"}[q] }
func workName(i int) string                { return fmt.Sprintf("work-%02d", i) }
func lagWorkName(k int) string             { return fmt.Sprintf("lag-%05d", k) }
func clusterName(i int) string             { return fmt.Sprintf("cluster-%04d", i) }
func floorClusterName(i int) string        { return fmt.Sprintf("%s%04d", replFloorPrefix, i) }
func objKey(namespace, name string) string { return namespace + "/" + name }
func hasAddonAndPlacement(i int) bool      { return i%replKindEvery == 0 }
func phaseTitle(phase string) string {
	return map[string]string{"create": "creates", "update": "updates", "delete": "deletes"}[phase]
}

// runReplicationScenario runs every size of the replication scenario, one after the other, each as a subtest
// with hubs of its own, and writes the report.
func (b *bench) runReplicationScenario(t *testing.T) {
	spec, sizes := readReplSizes(t)
	common := readReplSettings(t)
	defaults := replicator.NewOptions()
	settings := map[string]string{
		"BENCH_REPL_SIZES": spec, "BENCH_REPL_RATE": strconv.Itoa(common.rate), "BENCH_REPL_WINDOW": common.window.String(),
		"BENCH_REPL_SYNC_TIMEOUT": common.syncTimeout.String(), "BENCH_REPL_FLIP_TIMEOUT": common.flipTimeout.String(),
		"replicator flags": fmt.Sprintf("defaults (--workers %d, --hub-kube-api-qps %g, --hub-kube-api-burst %d, --hub-probe-interval %s)",
			defaults.Workers, defaults.HubQPS, defaults.HubBurst, defaults.HubProbeInterval),
	}
	binDir, _ := framework.BinariesDir()
	versions := map[string]string{
		"klusterlet-failover (replicator)": commandOutput(b.oursBinary, "version"),
		"kube-apiserver, etcd":             filepath.Base(binDir) + " (hack/build-test-binaries.sh cache entry)",
	}
	file := newReplReportFile(b.outDir, b.command, settings, versions)
	previous := os.Getenv("BENCH_REPL_PREVIOUS")
	if previous == "" {
		if root, err := framework.RepoRoot(); err == nil {
			previous = filepath.Join(root, "docs", replPreviousJSON)
		}
	}
	file.loadPrevious(previous, "1000x10x1")
	file.note("Measured on a shared 2-core machine (another engineer's integration tests may run at the same time): the hubs' " +
		"kube-apiservers and etcds, the replicator and the benchmark's own clients share those cores, so times and CPU seconds carry noise.")
	file.note("Logs of this run (replicator, hubs, profiles, audit logs; one directory replication-<size> per size): %s", b.logDir)
	reps := make([]*replReport, len(sizes))
	for i, z := range sizes {
		reps[i] = file.addSize(z.name(), z.title())
		declareReplFigures(reps[i], z)
	}
	if err := file.write(); err != nil {
		t.Errorf("writing the replication report: %v", err)
	}
	t.Run(scenarioReplication, func(t *testing.T) {
		for i, z := range sizes {
			s := common
			s.replSize = z
			rep := reps[i]
			rep.mu.Lock()
			rep.started = time.Now()
			rep.mu.Unlock()
			if b.ctx.Err() != nil {
				rep.fail("not run: the benchmark was interrupted")
				continue
			}
			// The subtest's cleanups stop this size's hubs and replicator before the next size starts.
			ok := t.Run(z.name(), func(t *testing.T) { b.runReplication(t, s, rep) })
			rep.mu.Lock()
			rep.ended = time.Now()
			rep.mu.Unlock()
			if !ok {
				rep.fail("the run of this size failed after %s (see the `make bench` output and %s)",
					rep.ended.Sub(rep.started).Round(time.Second), filepath.Join(b.logDir, "replication-"+z.name()))
			}
			if err := file.write(); err != nil {
				t.Errorf("writing the replication report: %v", err)
			}
		}
	})
}

// declareReplFigures declares every figure of one size. Titles do not depend on the size: the results table
// puts the sizes side by side by figure id.
func declareReplFigures(rep *replReport, z replSize) {
	standbys := make([]string, z.standbys)
	for i := range standbys {
		standbys[i] = replHubName(i + 1)
	}
	rep.declare(figSync, "initial sync: replicator start → every ManifestWork, ManagedClusterAddOn and Placement on every standby as a copy", "s", "", 0)
	rep.declare(figFloor, "write floor: a plain client writes the same objects to the same standbys (per standby 8 writers, 500 QPS, burst 1000)", "s", "", 0)
	rep.declare(figSyncFloor, "initial sync ÷ write floor", "×", fmt.Sprintf("≤ %g×", replSyncFloorLimit), replSyncFloorLimit)
	for _, phase := range replPhases {
		for _, q := range []string{"p50", "p99"} {
			target, limit := "", 0.0
			if q == "p99" {
				target, limit = fmt.Sprintf("≤ %g s", replLagLimit), replLagLimit
			}
			rep.declare(lagID(phase, q), fmt.Sprintf("replication lag of %s, %s (end to end: write on A returned → change seen by a watch on every standby)",
				phaseTitle(phase), percentileTitle(q)), "s", target, limit)
		}
	}
	if len(standbys) > 1 {
		for _, phase := range replPhases {
			for _, hub := range standbys {
				rep.declare(hubLagID(phase, "p99", hub), fmt.Sprintf("replication lag of %s, p99, on %s alone", phaseTitle(phase), hub), "s", "", 0)
			}
		}
	}
	for _, phase := range replPhases {
		rep.declare(sendLagID(phase), fmt.Sprintf("replication lag of %s, p99, from the moment the write to A was sent", phaseTitle(phase)), "s", "", 0)
	}
	for _, phase := range replPhases {
		for _, q := range []string{"p50", "p99"} {
			rep.declare(ownLagID(phase, q), fmt.Sprintf("replicator's own lag histogram (replication_lag_seconds, every standby), %s, %s",
				phaseTitle(phase), percentileTitle(q)), "s", "", 0)
		}
	}
	rep.declare(figChangeRate, "changes made on hub A per second (create phase)", "changes/s", "", 0)
	rep.declare(figRSSPeak, "replicator peak RSS (VmHWM), start → end of the idle window", "MiB", fmt.Sprintf("≤ %g MiB", replRSSLimitMiB), replRSSLimitMiB)
	rep.declare(figRSSSteady, "replicator steady RSS (median VmRSS during the changes and the idle window)", "MiB", "", 0)
	rep.declare(figCPUSync, "replicator CPU time, start → initial sync done", "CPU s", "", 0)
	rep.declare(figCPUChanges, "replicator CPU time per 1000 changes (change phases)", "CPU s", "", 0)
	rep.declare(figCPUIdle, "replicator CPU time per minute, idle (leases renewed, nothing changes)", "CPU s/min",
		fmt.Sprintf("≤ %g CPU s/min", replIdleCPULimit), replIdleCPULimit)
	for _, hub := range standbys {
		rep.declare(syncReqsID(hub), fmt.Sprintf("replicator requests to %s during the initial sync, per ManifestWork", hub), "requests", "", 0)
	}
	for _, hub := range standbys {
		rep.declare(changeReqsID(hub), fmt.Sprintf("replicator requests to %s per change during the change phases", hub), "requests",
			replPerChangeTarget, replPerChangeLimit)
	}
	rep.declare(figFlipTakeover, "hub loss: hub A's kube-apiserver stopped → every ManagedCluster on hub B taken over (no longer marked as elsewhere)", "s", "", 0)
	if len(standbys) > 1 {
		rep.declare(figFlipFlow, "hub loss: hub A's kube-apiserver stopped → every cluster's ManifestWorks, ManagedClusterAddOns and ManagedCluster on the other standbys copied from hub B", "s", "", 0)
	}
	rep.declare(figFlipRSS, "replicator peak RSS during the hub loss", "MiB", fmt.Sprintf("≤ %g MiB", replRSSLimitMiB), replRSSLimitMiB)
	rep.declare(figFlipCPU, "replicator CPU time during the hub loss (stop → handled)", "CPU s", "", 0)
}

// replProcSample is one reading of the replicator process.
type replProcSample struct {
	at     time.Time
	rssKiB int64
}

// replRun is the state of one size's run.
type replRun struct {
	b   *bench
	t   *testing.T
	s   replSettings
	rep *replReport
	// hubs are hub A then the standbys, names their ReplicationConfig names (replHubName).
	hubs    []*framework.Hub
	names   []string
	dynA    dynamic.Interface
	proc    *agentProc
	metrics *replMetricsClient
	// watchers watch the standbys, watchers[i] hubs[i+1].
	watchers []*replWatcher
	// logDir holds this size's logs, profiles and audit logs.
	logDir string

	samplesMu sync.Mutex
	samples   []replProcSample
	// marks are the phase boundaries, by name, for the audit counts and the CPU figures.
	marksMu sync.Mutex
	marks   map[string]time.Time
	// cpu maps a mark to the CPU seconds of the replicator, then of each hub's kube-apiserver (NaN once a
	// process is gone); pids are those processes.
	cpu  map[string][]float64
	pids []int

	profilesMu sync.Mutex
	profiles   []replProfile
	// baselineKiB is the RSS of a replicator process with no ReplicationConfig to run; endMetrics the last
	// scrape of the replicator's /metrics; idlePeakKiB its VmHWM at the end of the idle window.
	baselineKiB int64
	endMetrics  promSamples
	idlePeakKiB int64
	// floorTemplates are, per standby, one copy of each kind the initial sync wrote there (and the cluster's
	// namespace), taken at the end of the idle window: the write floor writes objects like them.
	floorTemplates []map[string]*unstructured.Unstructured
}

// standbyNames returns the standbys' ReplicationConfig names.
func (r *replRun) standbyNames() []string { return r.names[1:] }

// mark records the time and the processes' CPU seconds at a phase boundary.
func (r *replRun) mark(name string) {
	now := time.Now()
	cpu := make([]float64, len(r.pids))
	for i, pid := range r.pids {
		cpu[i] = math.NaN()
		if pid > 0 {
			if v, err := cpuSeconds(pid); err == nil {
				cpu[i] = v
			}
		}
	}
	r.marksMu.Lock()
	defer r.marksMu.Unlock()
	r.marks[name] = now
	r.cpu[name] = cpu
}

// at returns the time and CPU seconds of mark name.
func (r *replRun) at(name string) (time.Time, []float64, bool) {
	r.marksMu.Lock()
	defer r.marksMu.Unlock()
	t, ok := r.marks[name]
	return t, r.cpu[name], ok
}

// cpuDelta returns the CPU seconds each process used between two marks and the seconds between them.
func (r *replRun) cpuDelta(from, to string) ([]float64, float64, bool) {
	t0, c0, ok0 := r.at(from)
	t1, c1, ok1 := r.at(to)
	if !ok0 || !ok1 || !t1.After(t0) {
		return nil, 0, false
	}
	d := make([]float64, len(c1))
	for i := range d {
		d[i] = c1[i] - c0[i]
	}
	return d, t1.Sub(t0).Seconds(), true
}

// apiserversText names each hub's kube-apiserver CPU seconds in cpu (as cpuDelta returns them), skipping those
// not measured (a stopped hub).
func (r *replRun) apiserversText(cpu []float64, format string) string {
	var parts []string
	for i, name := range r.names {
		if i+1 < len(cpu) && !math.IsNaN(cpu[i+1]) {
			parts = append(parts, fmt.Sprintf("%s kube-apiserver "+format, name, cpu[i+1]))
		}
	}
	return strings.Join(parts, ", ")
}

// runReplication runs one size: hubs, population, replicator, initial sync, change phases, idle window, hub
// loss, write floor, report.
func (b *bench) runReplication(t *testing.T, s replSettings, rep *replReport) {
	r := &replRun{b: b, t: t, s: s, rep: rep, marks: map[string]time.Time{}, cpu: map[string][]float64{}}
	ctx := b.ctx
	r.logDir = filepath.Join(b.logDir, "replication-"+s.name())
	if err := os.MkdirAll(r.logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= s.standbys; i++ {
		r.hubs = append(r.hubs, framework.StartHub(t, framework.HubOptions{Name: "repl-" + string(rune('a'+i)), Signer: framework.SignerNone,
			AuditPolicy: []byte(replAuditPolicy)}))
		r.names = append(r.names, replHubName(i))
	}
	r.pids = make([]int, len(r.hubs)+1)
	for i, h := range r.hubs {
		pid, err := apiserverPID(h.DirectURL())
		if err != nil {
			t.Fatal(err)
		}
		r.pids[i+1] = pid
	}
	var err error
	if r.dynA, err = dynamic.NewForConfig(unthrottled(r.hubs[0].AdminConfig)); err != nil {
		t.Fatal(err)
	}
	for _, h := range r.hubs {
		installPlacementCRD(t, h)
	}
	kubeconfigB := r.setUpReplicatorConfig()
	rep.method("%s", replMethodSetup(s))

	// Hub A's clusters and their objects, before the replicator starts.
	populated := time.Now()
	workBytes := r.populate(ctx)
	t.Logf("replication %s: created %d clusters with %d ManifestWorks each on hub A in %s", s.name(), s.clusters, s.works, time.Since(populated).Round(time.Second))
	rep.method("Hub A was populated before the replicator started, in %s with %d concurrent clusters: per cluster a Namespace, a "+
		"ManagedCluster (spec.hubAcceptsClient true, leaseDurationSeconds %d), the Lease %s (holderIdentity %s, renewTime now, "+
		"leaseDurationSeconds %d) and %d ManifestWorks, each holding one ConfigMap (a marker value and %d filler bytes; %d bytes of JSON "+
		"per ManifestWork spec); in every %dth cluster's namespace (%d of them) also a ManagedClusterAddOn %s and a Placement %s. "+
		"From then on the benchmark renews every lease on hub A once per %d s in the agents' stead (spread evenly over the period), "+
		"so that each lease's renewTime is soon more than %s after its creation: agent-renewed, as the replicator decides a "+
		"cluster's source hub.", time.Since(populated).Round(time.Second), replPopulateWorkers, replLeaseSeconds,
		direction.LeaseName, replHolder, replLeaseSeconds, s.works, replPayloadBytes, workBytes, replKindEvery, s.perTenth(),
		replAddonName, replPlacementName, replLeaseSeconds, direction.CreationSlack)
	leaseCtx, stopLeases := context.WithCancel(ctx)
	leaseErrs := r.renewLeases(leaseCtx, r.hubs[0])
	defer stopLeases()

	// The watches on the standbys that observe the copies.
	for i, h := range r.hubs[1:] {
		r.watchers = append(r.watchers, startReplWatcher(ctx, t, h, r.names[i+1], s.replSize))
	}
	rep.method("Measurements. Initial sync: from the start of the replicator process to the moment the benchmark's informers on "+
		"the standbys (%s) have seen the last of the %d ManifestWorks, %d ManagedClusterAddOns and %d Placements as a copy on "+
		"every one of them. Then three phases of %s each make changes on hub A at %d/s (%d "+
		"concurrent writers, each change due at its slot): creates of new ManifestWorks (round robin over the clusters), merge-patch "+
		"updates of the spec of those ManifestWorks (a new marker value each), and deletes of them; after each phase the benchmark "+
		"waits up to %s for the copies. The lag of a change runs from the moment its write to hub A returned to the moment the "+
		"informer of a standby first showed the copy with the new marker (creates, updates) or its delete event (deletes); the "+
		"headline lag of a change is that of the last standby to show it (with one standby, that standby's), and with more than "+
		"one standby each standby's p99 is listed too; the p99 from the moment the write was sent, which adds hub A's write "+
		"latency, is listed as well. Percentiles are nearest-rank over every change whose write succeeded; a change never seen "+
		"counts as slower than all others. The replicator's own histogram (klusterlet_failover_replicator_replication_lag_seconds, "+
		"kind ManifestWork, the standbys' hub labels added up) is read from its /metrics (--listen, authenticated with hub B's "+
		"admin client certificate: the server delegates to hub B) before and after each phase. RSS comes from /proc/<pid>/status "+
		"(VmHWM for the peak; VmRSS every %s for the steady figure), CPU time from /proc/<pid>/stat (utime+stime) of the "+
		"replicator and of each hub's kube-apiserver at the phase boundaries; after the phases comes an idle window of %s "+
		"(leases still renewed). Three CPU profiles of %d s (/debug/pprof/profile: from the start of the initial sync, during "+
		"the update phase, and from the start of the idle window, whose CPU figure includes the profiler's small cost) and heap profiles after the initial sync and after the hub loss are taken from the replicator and "+
		"kept with the logs; profiling costs the replicator a few per cent of CPU while it runs.",
		strings.Join(r.standbyNames(), ", "), s.clusters*s.works, s.perTenth(), s.perTenth(), s.window, s.rate, replChangeWorkers,
		replDrainTimeout, replSampleInterval, replIdleWindow, replProfileSeconds)

	// The replicator.
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	r.metrics = newReplMetricsClient(r.hubs[1].AdminConfig, port)
	kubeconfigFile := filepath.Join(b.workDir, "replicator-"+s.name()+"-hub-b.kubeconfig")
	if err := os.WriteFile(kubeconfigFile, kubeconfigB, 0o600); err != nil {
		t.Fatal(err)
	}
	r.measureBaseline(ctx, kubeconfigFile)
	r.proc = &agentProc{
		cfg:    agentConfig{cluster: "replicator", kind: "replicator"},
		binary: b.oursBinary,
		args: []string{"replicator", "--kubeconfig=" + kubeconfigFile, "--namespace=" + replNamespace,
			"--config-name=" + replicator.DefaultConfigName, "--disable-leader-election", "--listen=127.0.0.1:" + strconv.Itoa(port)},
		logPath:  filepath.Join(r.logDir, "replicator.log"),
		loopDone: make(chan struct{}),
	}
	if err := r.proc.spawn(); err != nil {
		t.Fatal(err)
	}
	r.pids[0] = r.proc.pid()
	r.mark("start")
	go r.proc.loop()
	defer r.proc.stop()
	sampleCtx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	go r.sample(sampleCtx)
	r.metrics.waitServing(ctx, 10*time.Second)
	profileDone := r.profile(ctx, "cpu-initial-sync")

	// Initial sync.
	if !r.waitInitialSync(ctx) {
		<-profileDone
		r.mark("end")
		r.finishReplicator(leaseErrs, stopLeases, nil)
		r.proc.stop()
		r.finishReport()
		t.FailNow()
	}
	r.mark("synced")
	<-profileDone
	r.heapProfile(ctx, "heap-after-initial-sync")
	before, err := r.metrics.scrape(ctx)
	if err != nil {
		rep.note("The replicator's /metrics could not be read (%v): its own lag histogram is not reported.", err)
		t.Logf("replication: reading the replicator's /metrics: %v", err)
	}
	if err := rep.write(); err != nil {
		t.Errorf("writing the replication report: %v", err)
	}

	// The change phases.
	r.mark("changes")
	var created []string
	for _, phase := range replPhases {
		profileDone := make(chan struct{})
		close(profileDone)
		if phase == "update" {
			profileDone = r.profile(ctx, "cpu-updates")
		}
		created = r.runPhase(ctx, phase, created)
		<-profileDone
		after, err := r.metrics.scrape(ctx)
		if err == nil && before != nil {
			r.reportOwnLag(phase, before, after)
		}
		before = after
		if err := rep.write(); err != nil {
			t.Errorf("writing the replication report: %v", err)
		}
		if ctx.Err() != nil {
			t.Fatal("interrupted")
		}
	}
	r.waitReleased(ctx)
	r.mark("changes-end")
	idleProfile := r.profile(ctx, "cpu-idle")
	if err := b.sleep(replIdleWindow); err != nil {
		t.Fatal("interrupted")
	}
	r.mark("idle-end")
	<-idleProfile
	if m, err := readMemory(r.pids[0]); err == nil {
		r.idlePeakKiB = m.PeakKiB
	}
	r.takeFloorTemplates(ctx)

	// Hub A is lost; then the replicator stops and the write floor is measured on the standbys.
	flipLeaseErrs := r.runFlip(ctx, stopLeases)
	r.mark("end")
	r.finishReplicator(leaseErrs, stopLeases, flipLeaseErrs)
	r.proc.stop()
	r.runFloor(ctx)
	r.finishReport()
}

// finishReplicator stops the lease renewals and records what needs the replicator process alive: its memory,
// CPU and counters. flipLeaseErrs, when not nil, stops the renewals on hub B and reports them.
func (r *replRun) finishReplicator(leaseErrs func() (int, int, error), stopLeases context.CancelFunc, flipLeaseErrs func() (int, int, error)) {
	rep := r.rep
	stopLeases()
	renewed, failed, lastErr := leaseErrs()
	text := fmt.Sprintf("Leases renewed by the benchmark on hub A until it was lost (or the run ended): %d (%d failed%s).", renewed, failed, errSuffix(lastErr))
	if flipLeaseErrs != nil {
		renewed, failed, lastErr := flipLeaseErrs()
		text += fmt.Sprintf(" On hub B after the hub loss: %d (%d failed%s).", renewed, failed, errSuffix(lastErr))
	}
	rep.method("%s", text)
	if err := r.proc.dead(); err != nil {
		rep.fail("the replicator exited during the run: %v", err)
	}
	r.reportMemoryCPU()
	r.reportClusterCopies()
	if samples, err := r.metrics.scrape(r.b.ctx); err == nil {
		r.reportReplicatorCounters(samples)
		r.endMetrics = samples
	}
}

// finishReport counts the requests from the audit logs, compares with ACM's backup, writes the analysis and
// the report.
func (r *replRun) finishReport() {
	r.reportRequests()
	r.reportAnchor()
	r.analyse()
	if err := r.rep.write(); err != nil {
		r.t.Errorf("writing the replication report: %v", err)
	}
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return "; last error: " + err.Error()
}

// unthrottled returns a copy of cfg without client-side rate limiting (the benchmark's workers bound it).
func unthrottled(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = -1, 0
	return c
}

// installPlacementCRD installs OCM's Placement CRD (cluster.open-cluster-management.io/v1beta1) in case the
// framework's hubs do not serve it (they do since the hub CRDs list it; installing it again changes nothing): the
// replicator watches every replicated kind, Placement among them.
func installPlacementCRD(t *testing.T, h *framework.Hub) {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "vendor/open-cluster-management.io/api/cluster/v1beta1/0000_02_clusters.open-cluster-management.io_placements.crd.yaml")
	if _, err := envtest.InstallCRDs(h.AdminConfig, envtest.CRDInstallOptions{Paths: []string{file}, MaxTime: framework.DefaultStartTimeout}); err != nil {
		t.Fatalf("hub %s: installing the Placement CRD: %v", h.Name, err)
	}
}

// setUpReplicatorConfig installs the ReplicationConfig CRD on hub B, the replicator's namespace, one kubeconfig
// Secret per hub (the replicator's identity) and the ReplicationConfig listing every hub, hub A first; it returns
// the replicator's kubeconfig for hub B (its --kubeconfig).
func (r *replRun) setUpReplicatorConfig() []byte {
	t, ctx, hubB := r.t, r.b.ctx, r.hubs[1]
	def, err := crd.ReplicationConfigCRD()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(hubB.AdminConfig, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{def}, MaxTime: framework.DefaultStartTimeout}); err != nil {
		t.Fatalf("installing the ReplicationConfig CRD on hub B: %v", err)
	}
	if _, err := hubB.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: replNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	// The delete phase deletes 100 ManifestWorks a second, most of what a small size holds, as a user would on
	// purpose: the delete brake (spec.deleteBrake) would hold them, as it should for a mass delete nobody meant.
	// The benchmark measures the replication of deletes, so it lets every delete through.
	spec := failoverv1alpha1.ReplicationConfigSpec{DeleteBrake: &failoverv1alpha1.DeleteBrake{Percent: ptr.To[int32](100), Minimum: ptr.To[int32](failoverv1alpha1.MaxDeleteBrakeMinimum)}}
	var kubeconfigB []byte
	for i, h := range r.hubs {
		name := r.names[i]
		kubeconfig := h.UserKubeconfig(replUser, now.Add(-time.Hour), now.Add(24*time.Hour), "system:masters")
		if name == replHubB {
			kubeconfigB = kubeconfig
		}
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-kubeconfig", Namespace: replNamespace},
			Data:       map[string][]byte{failoverv1alpha1.KubeconfigSecretKey: kubeconfig},
		}
		if _, err := hubB.Kube.CoreV1().Secrets(replNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		spec.Hubs = append(spec.Hubs, failoverv1alpha1.ReplicationHub{Name: name, KubeconfigSecret: failoverv1alpha1.KubeconfigSecretReference{Name: secret.Name}})
	}
	client, err := versioned.NewForConfig(hubB.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	rc := &failoverv1alpha1.ReplicationConfig{ObjectMeta: metav1.ObjectMeta{Name: replicator.DefaultConfigName, Namespace: replNamespace}, Spec: spec}
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, func() (bool, error) {
		_, err := client.FailoverV1alpha1().ReplicationConfigs(replNamespace).Create(ctx, rc, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), err
	}, "ReplicationConfig created on hub B")
	return kubeconfigB
}

// replWork returns ManifestWork name in namespace cluster holding one ConfigMap whose "value" is value.
func replWork(cluster, name, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "work.open-cluster-management.io/v1",
		"kind":       "ManifestWork",
		"metadata":   map[string]any{"name": name, "namespace": cluster},
		"spec":       replWorkSpec(name, value),
	}}
}

// replWorkSpec is the spec of replWork.
func replWorkSpec(name, value string) map[string]any {
	return map[string]any{"workload": map[string]any{"manifests": []any{map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"data":     map[string]any{"value": value, "payload": strings.Repeat("x", replPayloadBytes)},
	}}}}
}

// replAddon returns the ManagedClusterAddOn of cluster: an add-on installed in OCM's usual add-on namespace.
func replAddon(cluster string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "addon.open-cluster-management.io/v1alpha1",
		"kind":       "ManagedClusterAddOn",
		"metadata":   map[string]any{"name": replAddonName, "namespace": cluster},
		"spec":       replAddonSpec(),
	}}
}

// replAddonSpec is the spec of replAddon.
func replAddonSpec() map[string]any {
	return map[string]any{"installNamespace": "open-cluster-management-agent-addon"}
}

// replPlacement returns the Placement in cluster's namespace: one cluster, selected by its name label.
func replPlacement(cluster string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta1",
		"kind":       "Placement",
		"metadata":   map[string]any{"name": replPlacementName, "namespace": cluster},
		"spec":       replPlacementSpec(cluster),
	}}
}

// replPlacementSpec is the spec of replPlacement.
func replPlacementSpec(cluster string) map[string]any {
	return map[string]any{
		"numberOfClusters": int64(1),
		"predicates": []any{map[string]any{"requiredClusterSelector": map[string]any{
			"labelSelector": map[string]any{"matchLabels": map[string]any{"name": cluster}},
		}}},
	}
}

// workValue returns the marker value of a ManifestWork made by replWork.
func workValue(obj *unstructured.Unstructured) string {
	manifests, _, _ := unstructured.NestedSlice(obj.Object, "spec", "workload", "manifests")
	if len(manifests) == 0 {
		return ""
	}
	m, _ := manifests[0].(map[string]any)
	data, _ := m["data"].(map[string]any)
	v, _ := data["value"].(string)
	return v
}

// forEachCluster calls f for every cluster index with workers at once, and returns the first error.
func (r *replRun) forEachCluster(ctx context.Context, workers int, f func(i int) error) error {
	jobs := make(chan int)
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := f(i); err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	for i := 0; i < r.s.clusters && ctx.Err() == nil && firstErr.Load() == nil; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	return ctx.Err()
}

// populate creates the clusters, their namespaces, leases, ManifestWorks, ManagedClusterAddOns and Placements on
// hub A; it returns the size of one ManifestWork's spec as JSON.
func (r *replRun) populate(ctx context.Context) int {
	t := r.t
	kube, err := kubernetes.NewForConfig(unthrottled(r.hubs[0].AdminConfig))
	if err != nil {
		t.Fatal(err)
	}
	clusters, err := clusterclientset.NewForConfig(unthrottled(r.hubs[0].AdminConfig))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.forEachCluster(ctx, replPopulateWorkers, func(i int) error { return r.populateCluster(ctx, kube, clusters, i) }); err != nil {
		if ctx.Err() != nil {
			t.Fatal("interrupted")
		}
		t.Fatalf("populating hub A: %v", err)
	}
	data, _ := json.Marshal(replWorkSpec(workName(0), replInitValue))
	return len(data)
}

// populateCluster creates cluster i's objects on hub A.
func (r *replRun) populateCluster(ctx context.Context, kube kubernetes.Interface, clusters clusterclientset.Interface, i int) error {
	name := clusterName(i)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true, LeaseDurationSeconds: replLeaseSeconds},
	}
	if _, err := clusters.ClusterV1().ManagedClusters().Create(ctx, mc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ManagedCluster %s: %w", name, err)
	}
	if err := createLease(ctx, kube, name); err != nil {
		return err
	}
	for j := range r.s.works {
		_, err := r.dynA.Resource(replWorkGVR).Namespace(name).Create(ctx, replWork(name, workName(j), replInitValue), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating ManifestWork %s/%s: %w", name, workName(j), err)
		}
	}
	if hasAddonAndPlacement(i) {
		for _, obj := range []struct {
			gvr schema.GroupVersionResource
			obj *unstructured.Unstructured
		}{{replAddonGVR, replAddon(name)}, {replPlacementGVR, replPlacement(name)}} {
			_, err := r.dynA.Resource(obj.gvr).Namespace(name).Create(ctx, obj.obj, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating %s %s/%s: %w", obj.obj.GetKind(), name, obj.obj.GetName(), err)
			}
		}
	}
	return nil
}

// createLease creates cluster's managed-cluster-lease with renewTime now, as OCM's hub controller does for an
// accepted cluster.
func createLease(ctx context.Context, kube kubernetes.Interface, cluster string) error {
	holder, duration := replHolder, int32(replLeaseSeconds)
	now := metav1.NowMicro()
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: direction.LeaseName, Namespace: cluster},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration, RenewTime: &now},
	}
	if _, err := kube.CoordinationV1().Leases(cluster).Create(ctx, lease, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating lease %s/%s: %w", cluster, direction.LeaseName, err)
	}
	return nil
}

// renewLease sets the renewTime of cluster's lease to now.
func renewLease(ctx context.Context, kube kubernetes.Interface, cluster string) error {
	patch := fmt.Sprintf(`{"spec":{"renewTime":%q}}`, metav1.NowMicro().Format(metav1.RFC3339Micro))
	_, err := kube.CoordinationV1().Leases(cluster).Patch(ctx, direction.LeaseName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// renewLeases renews every cluster's lease on hub once per replLeaseSeconds, spread evenly, until ctx ends. The
// returned function reports how many renewals succeeded and failed, once ctx has ended.
func (r *replRun) renewLeases(ctx context.Context, hub *framework.Hub) func() (int, int, error) {
	kube, err := kubernetes.NewForConfig(unthrottled(hub.AdminConfig))
	if err != nil {
		r.t.Fatal(err)
	}
	var ok, failed atomic.Int64
	var lastErr atomic.Value
	var wg sync.WaitGroup
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(time.Duration(replLeaseSeconds) * time.Second / time.Duration(r.s.clusters))
		defer ticker.Stop()
		sem := make(chan struct{}, 4)
		for i := 0; ; i = (i + 1) % r.s.clusters {
			select {
			case <-ctx.Done():
				wg.Wait()
				return
			case <-ticker.C:
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				wg.Wait()
				return
			}
			wg.Add(1)
			go func(name string) {
				defer wg.Done()
				defer func() { <-sem }()
				err := renewLease(ctx, kube, name)
				switch {
				case err == nil:
					ok.Add(1)
				case ctx.Err() == nil:
					failed.Add(1)
					lastErr.Store(err)
				}
			}(clusterName(i))
		}
	}()
	return func() (int, int, error) {
		<-done
		err, _ := lastErr.Load().(error)
		return int(ok.Load()), int(failed.Load()), err
	}
}

// Attributes the watcher counts objects by: the replicated-from label of every kind ("" when not a copy), and
// the cluster-hub annotation of ManagedClusters ("" when absent).
const (
	attrFrom = "from"
	attrHub  = "hub"
)

// replWatcher watches one standby's ManagedClusters, ManifestWorks, ManagedClusterAddOns and Placements. It
// records when each copy of a ManifestWork from hub A (and each change of one) was first seen, and counts the
// objects of each kind by attribute value (attrFrom, attrHub), with the last time each count reached the number
// of objects of that kind hub A holds.
type replWatcher struct {
	hub string
	mu  sync.Mutex
	// seen maps "namespace/name|value" of a copy from hub A to when a watch event first showed it with that
	// marker value.
	seen map[string]time.Time
	// deleted maps "namespace/name" of a copy from hub A to when its delete was seen.
	deleted map[string]time.Time
	// initial counts the copies of the works created before the replicator started; initialDone is when the
	// last of them was seen; progress records when each quarter was reached.
	initial, wantInitial int
	initialDone          time.Time
	firstCopy            time.Time
	progress             map[int]time.Time
	// want is, per kind, how many objects hub A holds (outside the change phases).
	want map[failoverv1alpha1.ReplicatedKind]int
	// values maps kind|attr|namespace/name to the object's attribute value; counts kind|attr|value to the
	// number of objects with that value; reached kind|attr|value to the last time that number rose to want.
	values  map[string]string
	counts  map[string]int
	reached map[string]time.Time
	// synced is when every initial ManifestWork, ManagedClusterAddOn and Placement was there as a copy from hub
	// A; done is closed then.
	synced time.Time
	done   chan struct{}
}

// startReplWatcher starts the informers on standby hub (ReplicationConfig name name) and waits for their sync.
func startReplWatcher(ctx context.Context, t *testing.T, hub *framework.Hub, name string, z replSize) *replWatcher {
	w := &replWatcher{hub: name, seen: map[string]time.Time{}, deleted: map[string]time.Time{}, wantInitial: z.clusters * z.works,
		progress: map[int]time.Time{}, values: map[string]string{}, counts: map[string]int{}, reached: map[string]time.Time{},
		done: make(chan struct{}),
		want: map[failoverv1alpha1.ReplicatedKind]int{
			failoverv1alpha1.KindManagedCluster: z.clusters, failoverv1alpha1.KindManifestWork: z.clusters * z.works,
			failoverv1alpha1.KindManagedClusterAddOn: z.perTenth(), failoverv1alpha1.KindPlacement: z.perTenth(),
		}}
	client, err := dynamic.NewForConfig(unthrottled(hub.AdminConfig))
	if err != nil {
		t.Fatal(err)
	}
	strip := func(obj any) (any, error) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			u.SetManagedFields(nil)
		}
		return obj, nil
	}
	var synced []cache.InformerSynced
	for _, kind := range replWatchedKinds {
		informer := dynamicinformer.NewFilteredDynamicInformer(client, mustMirrorKind(kind).GVR, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
		_ = informer.SetTransform(strip)
		_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { w.onEvent(kind, obj, false) },
			UpdateFunc: func(_, obj any) { w.onEvent(kind, obj, false) },
			DeleteFunc: func(obj any) { w.onEvent(kind, obj, true) },
		})
		go informer.Run(ctx.Done())
		synced = append(synced, informer.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		t.Fatalf("the watch on %s did not sync", name)
	}
	return w
}

// onEvent records one watch event of kind.
func (w *replWatcher) onEvent(kind failoverv1alpha1.ReplicatedKind, obj any, gone bool) {
	now := time.Now()
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	key := objKey(u.GetNamespace(), u.GetName())
	from := u.GetLabels()[mirror.LabelReplicatedFrom]
	w.mu.Lock()
	defer w.mu.Unlock()
	w.count(kind, attrFrom, key, from, gone, now)
	if kind == failoverv1alpha1.KindManagedCluster {
		w.count(kind, attrHub, key, u.GetAnnotations()[mirror.AnnotationClusterHub], gone, now)
	}
	if kind == failoverv1alpha1.KindManifestWork && from == replHubA {
		if gone {
			if _, ok := w.deleted[key]; !ok {
				w.deleted[key] = now
			}
		} else {
			w.onWorkCopy(key, workValue(u), now)
		}
	}
	w.checkSynced(now)
}

// count moves the object key of kind from its previous value of attr to value (or out, when gone); w.mu held.
func (w *replWatcher) count(kind failoverv1alpha1.ReplicatedKind, attr, key, value string, gone bool, now time.Time) {
	id := string(kind) + "|" + attr + "|" + key
	prefix := string(kind) + "|" + attr + "|"
	old, had := w.values[id]
	if had && !gone && old == value {
		return
	}
	if had {
		w.counts[prefix+old]--
	}
	if gone {
		delete(w.values, id)
		return
	}
	w.values[id] = value
	w.counts[prefix+value]++
	if w.counts[prefix+value] == w.want[kind] {
		w.reached[prefix+value] = now
	}
}

// onWorkCopy records a copy from hub A of ManifestWork key with marker value; w.mu held.
func (w *replWatcher) onWorkCopy(key, value string, now time.Time) {
	if _, ok := w.seen[key+"|"+value]; ok {
		return
	}
	w.seen[key+"|"+value] = now
	if value != replInitValue {
		return
	}
	if w.firstCopy.IsZero() {
		w.firstCopy = now
	}
	w.initial++
	for q := 1; q <= 4; q++ {
		if _, ok := w.progress[q]; !ok && w.initial*4 >= w.wantInitial*q {
			w.progress[q] = now
		}
	}
	if w.initial == w.wantInitial {
		w.initialDone = now
	}
}

// checkSynced closes done once every initial ManifestWork, ManagedClusterAddOn and Placement is a copy from
// hub A; w.mu held.
func (w *replWatcher) checkSynced(now time.Time) {
	if !w.synced.IsZero() || w.initial < w.wantInitial {
		return
	}
	for _, kind := range []failoverv1alpha1.ReplicatedKind{failoverv1alpha1.KindManagedClusterAddOn, failoverv1alpha1.KindPlacement} {
		if w.counts[string(kind)+"|"+attrFrom+"|"+replHubA] < w.want[kind] {
			return
		}
	}
	w.synced = now
	close(w.done)
}

// countOf returns how many objects of kind have value for attr.
func (w *replWatcher) countOf(kind failoverv1alpha1.ReplicatedKind, attr, value string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts[string(kind)+"|"+attr+"|"+value]
}

// fullSince reports whether every object of kind (as many as hub A holds) has value for attr now, and since
// when: the last time the count rose to that number, or since when that was before since (already is true
// then).
func (w *replWatcher) fullSince(kind failoverv1alpha1.ReplicatedKind, attr, value string, since time.Time) (at time.Time, ok, already bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := string(kind) + "|" + attr + "|" + value
	if w.counts[k] < w.want[kind] {
		return time.Time{}, false, false
	}
	at = w.reached[k]
	if at.Before(since) {
		return since, true, true
	}
	return at, true, false
}

// seenAt returns when the copy of key with marker value (or, for value "", its delete) was seen.
func (w *replWatcher) seenAt(key, value string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var t time.Time
	var ok bool
	if value == "" {
		t, ok = w.deleted[key]
	} else {
		t, ok = w.seen[key+"|"+value]
	}
	return t, ok
}

// progressText describes how far the standby is with the initial state; w.mu held.
func (w *replWatcher) progressText() string {
	return fmt.Sprintf("%s: %d of %d ManifestWorks, %d of %d ManagedClusterAddOns, %d of %d Placements, %d of %d ManagedClusters",
		w.hub, w.initial, w.wantInitial,
		w.counts[string(failoverv1alpha1.KindManagedClusterAddOn)+"|"+attrFrom+"|"+replHubA], w.want[failoverv1alpha1.KindManagedClusterAddOn],
		w.counts[string(failoverv1alpha1.KindPlacement)+"|"+attrFrom+"|"+replHubA], w.want[failoverv1alpha1.KindPlacement],
		w.counts[string(failoverv1alpha1.KindManagedCluster)+"|"+attrFrom+"|"+replHubA], w.want[failoverv1alpha1.KindManagedCluster])
}

// waitInitialSync waits until every initial ManifestWork, ManagedClusterAddOn and Placement is on every
// standby as a copy, and records the figures.
func (r *replRun) waitInitialSync(ctx context.Context) bool {
	t, rep := r.t, r.rep
	start, _, _ := r.at("start")
	timeout := time.NewTimer(r.s.syncTimeout)
	defer timeout.Stop()
	ticker := time.NewTicker(10 * time.Second)
	defer ticker.Stop()
	progress := func() string {
		var parts []string
		for _, w := range r.watchers {
			w.mu.Lock()
			parts = append(parts, w.progressText())
			w.mu.Unlock()
		}
		return strings.Join(parts, "; ")
	}
	for _, w := range r.watchers {
	wait:
		for {
			select {
			case <-w.done:
				break wait
			case <-ctx.Done():
				t.Fatal("interrupted")
			case <-ticker.C:
				if err := r.proc.dead(); err != nil {
					rep.fail("the replicator exited before the initial sync was done: %v", err)
					return false
				}
				t.Logf("replication %s: after %s: %s", r.s.name(), time.Since(start).Round(time.Second), progress())
			case <-timeout.C:
				reason := fmt.Sprintf("the initial state was not on every standby within BENCH_REPL_SYNC_TIMEOUT=%s: %s (replicator log %s)",
					r.s.syncTimeout, progress(), r.proc.logPath)
				rep.missing(figSync, true, "%s", reason)
				rep.fail("%s", reason)
				return false
			}
		}
	}
	var last time.Time
	var details []string
	for _, w := range r.watchers {
		w.mu.Lock()
		quarters := []string{}
		for q := 1; q <= 4; q++ {
			quarters = append(quarters, fmt.Sprintf("%d %%: %.1f s", q*25, w.progress[q].Sub(start).Seconds()))
		}
		kinds := []string{}
		for _, kind := range []failoverv1alpha1.ReplicatedKind{failoverv1alpha1.KindManagedClusterAddOn, failoverv1alpha1.KindPlacement} {
			k := string(kind) + "|" + attrFrom + "|" + replHubA
			kinds = append(kinds, fmt.Sprintf("all %d %ss after %.1f s", w.want[kind], kind, w.reached[k].Sub(start).Seconds()))
		}
		details = append(details, fmt.Sprintf("%s: done after %.1f s, first ManifestWork copy after %.1f s, ManifestWorks by share of the %d: %s; %s",
			w.hub, w.synced.Sub(start).Seconds(), w.firstCopy.Sub(start).Seconds(), w.wantInitial, strings.Join(quarters, ", "), strings.Join(kinds, ", ")))
		if w.synced.After(last) {
			last = w.synced
		}
		w.mu.Unlock()
	}
	took := last.Sub(start).Seconds()
	rep.set(figSync, took, "%s", strings.Join(details, ". "))
	t.Logf("replication %s: initial sync to %d standbys took %.1f s", r.s.name(), len(r.watchers), took)
	return true
}

// replChange is one change made on hub A and when its effect was seen on each standby.
type replChange struct {
	key, value string // value "" for a delete
	sent, done time.Time
	err        error
	// seen and observed are per standby (watchers' order).
	seen     []time.Time
	observed []bool
}

// lag returns the change's lag on standby i (from the write's return), or on the last standby to show it for
// i < 0, and whether it was observed there.
func (c *replChange) lag(i int) (float64, bool) {
	if i >= 0 {
		return c.seen[i].Sub(c.done).Seconds(), c.observed[i]
	}
	var last time.Time
	for j := range c.seen {
		if !c.observed[j] {
			return 0, false
		}
		if c.seen[j].After(last) {
			last = c.seen[j]
		}
	}
	return last.Sub(c.done).Seconds(), true
}

// lastSeen returns when the last standby showed the change.
func (c *replChange) lastSeen() time.Time {
	var last time.Time
	for _, s := range c.seen {
		if s.After(last) {
			last = s
		}
	}
	return last
}

// runPhase makes rate × window changes of one kind on hub A at the configured rate and measures when each is
// seen on each standby. It returns the keys of the ManifestWorks created (the create phase) or the keys it was
// given.
func (r *replRun) runPhase(ctx context.Context, phase string, keys []string) []string {
	t, s, rep := r.t, r.s, r.rep
	n := int(float64(s.rate) * s.window.Seconds())
	changes := make([]*replChange, n)
	for k := range changes {
		c := &replChange{seen: make([]time.Time, len(r.watchers)), observed: make([]bool, len(r.watchers))}
		switch phase {
		case "create":
			c.key, c.value = objKey(clusterName(k%s.clusters), lagWorkName(k)), fmt.Sprintf("c-%05d", k)
		case "update":
			c.key, c.value = keys[k%len(keys)], fmt.Sprintf("u-%05d", k)
		case "delete":
			c.key = keys[k%len(keys)]
		}
		changes[k] = c
	}
	if phase == "delete" && len(keys) < n {
		// Each created work is deleted once; the phase has as many changes as there are works to delete.
		changes = changes[:len(keys)]
	}
	jobs := make(chan *replChange, len(changes))
	var wg sync.WaitGroup
	for range replChangeWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				r.apply(ctx, phase, c)
			}
		}()
	}
	start := time.Now()
	interval := time.Second / time.Duration(s.rate)
	for k, c := range changes {
		if d := time.Until(start.Add(time.Duration(k) * interval)); d > 0 {
			time.Sleep(d)
		}
		if ctx.Err() != nil {
			break
		}
		jobs <- c
	}
	close(jobs)
	wg.Wait()
	made := 0
	var last time.Time
	for _, c := range changes {
		if c.err == nil && !c.done.IsZero() {
			made++
			if c.done.After(last) {
				last = c.done
			}
		}
	}
	if made > 0 {
		rate := float64(made) / last.Sub(start).Seconds()
		if phase == "create" {
			rep.set(figChangeRate, rate, "")
		}
		rep.method("Phase %s: %d changes made on hub A in %.1f s (%.1f/s), %d failed.", phase, made, last.Sub(start).Seconds(), rate, len(changes)-made)
	}

	// Drain: wait for the last changes to show on every standby.
	deadline := time.Now().Add(replDrainTimeout)
	for {
		pending := 0
		for _, c := range changes {
			if c.err != nil {
				continue
			}
			for i, w := range r.watchers {
				if c.observed[i] {
					continue
				}
				if at, ok := w.seenAt(c.key, c.value); ok {
					c.seen[i], c.observed[i] = at, true
					continue
				}
				pending++
			}
		}
		if pending == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.reportLag(phase, changes)
	out := keys
	if phase == "create" {
		out = nil
		for _, c := range changes {
			if c.err == nil {
				out = append(out, c.key)
			}
		}
	}
	t.Logf("replication %s: phase %s done", s.name(), phase)
	return out
}

// waitReleased waits, up to replDrainTimeout, until hub A holds none of the ManifestWorks the change phases
// created: the replicator holds a deleted original with its finalizer until the copies are gone, then releases
// it, and those releases must not fall into the idle window.
func (r *replRun) waitReleased(ctx context.Context) {
	start := time.Now()
	deadline := start.Add(replDrainTimeout)
	left := -1
	var lastErr error
	for ctx.Err() == nil && time.Now().Before(deadline) {
		list, err := r.dynA.Resource(replWorkGVR).List(ctx, metav1.ListOptions{LabelSelector: replLagLabel + "=true", ResourceVersion: "0"})
		if err == nil {
			if left = len(list.Items); left == 0 {
				break
			}
		} else {
			lastErr = err
		}
		time.Sleep(500 * time.Millisecond)
	}
	switch {
	case left == 0:
		r.rep.method("The change phases end once hub A holds none of the ManifestWorks they created (each deleted original is held by "+
			"the replicator's finalizer until its copies are gone): %.1f s after the delete phase's copies were gone.", time.Since(start).Seconds())
	default:
		r.rep.method("The change phases end after waiting %s for hub A to hold none of the ManifestWorks they created (each deleted "+
			"original is held by the replicator's finalizer until its copies are gone): %d were still there (last error: %v); their "+
			"releases fall into the idle window.", replDrainTimeout, left, lastErr)
	}
}

// apply makes change c on hub A.
func (r *replRun) apply(ctx context.Context, phase string, c *replChange) {
	namespace, name, _ := strings.Cut(c.key, "/")
	client := r.dynA.Resource(replWorkGVR).Namespace(namespace)
	c.sent = time.Now()
	switch phase {
	case "create":
		work := replWork(namespace, name, c.value)
		work.SetLabels(map[string]string{replLagLabel: "true"})
		_, c.err = client.Create(ctx, work, metav1.CreateOptions{})
	case "update":
		patch, _ := json.Marshal(map[string]any{"spec": replWorkSpec(name, c.value)})
		_, c.err = client.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	case "delete":
		c.err = client.Delete(ctx, name, metav1.DeleteOptions{})
	}
	c.done = time.Now()
}

// nearestRank returns percentile p of sorted (the observed values) when unobserved more values count as slower
// than all of them, and false when the percentile falls among those.
func nearestRank(sorted []float64, unobserved int, p float64) (float64, bool) {
	total := len(sorted) + unobserved
	rank := int(math.Ceil(p*float64(total))) - 1
	if rank < 0 {
		rank = 0
	}
	if total == 0 || rank >= len(sorted) {
		return 0, false
	}
	return sorted[rank], true
}

// reportLag records the lag percentiles of one phase: until the last standby shows a change, and, with more
// than one standby, each standby's p99. A change never seen on B counts as slower than every seen one; when it
// falls into a percentile, that percentile is not measured and its target is missed.
func (r *replRun) reportLag(phase string, changes []*replChange) {
	rep := r.rep
	var lags, fromReq, write []float64
	failed, unobserved, negative := 0, 0, 0
	for _, c := range changes {
		if c.err != nil {
			failed++
			continue
		}
		lag, ok := c.lag(-1)
		if !ok {
			unobserved++
			continue
		}
		lags = append(lags, lag)
		fromReq = append(fromReq, c.lastSeen().Sub(c.sent).Seconds())
		write = append(write, c.done.Sub(c.sent).Seconds())
		if lag < 0 {
			negative++
		}
	}
	if len(lags)+unobserved == 0 {
		for _, q := range []string{"p50", "p99"} {
			rep.missing(lagID(phase, q), false, "no change of this kind was made on hub A (%d failed)", failed)
		}
		return
	}
	sort.Float64s(lags)
	sort.Float64s(fromReq)
	sort.Float64s(write)
	detail := fmt.Sprintf("%d changes seen on every standby, %d not seen on some standby within %s of the end of the phase, %d writes to A failed; max %.3f s; "+
		"A's write latency median %.3f s, p99 %.3f s", len(lags), unobserved, replDrainTimeout, failed, maxOf(lags),
		percentile(write, 0.5), percentile(write, 0.99))
	if negative > 0 {
		detail += fmt.Sprintf("; %d copies were seen on every standby before the write's response reached the benchmark (negative lag)", negative)
	}
	for _, q := range []struct {
		id string
		p  float64
	}{{"p50", 0.5}, {"p99", 0.99}} {
		v, ok := nearestRank(lags, unobserved, q.p)
		if !ok {
			rep.missing(lagID(phase, q.id), true, "more than %.0f %% of the %d changes were not seen on every standby within %s",
				(1-q.p)*100, len(lags)+unobserved, replDrainTimeout)
			if q.id == "p99" {
				rep.missing(sendLagID(phase), true, "as above")
			}
			continue
		}
		d := ""
		if q.id == "p99" {
			d = detail
		}
		rep.set(lagID(phase, q.id), v, "%s", d)
		if q.id == "p99" {
			// fromReq has one value per observed change, sorted independently: the same rank.
			w, _ := nearestRank(fromReq, unobserved, q.p)
			rep.set(sendLagID(phase), w, "")
		}
	}
	if len(r.watchers) < 2 {
		return
	}
	for i, w := range r.watchers {
		var hubLags []float64
		missed := 0
		for _, c := range changes {
			if c.err != nil {
				continue
			}
			if lag, ok := c.lag(i); ok {
				hubLags = append(hubLags, lag)
			} else {
				missed++
			}
		}
		sort.Float64s(hubLags)
		id := hubLagID(phase, "p99", w.hub)
		if v, ok := nearestRank(hubLags, missed, 0.99); ok {
			rep.set(id, v, "median %.3f s, max %.3f s, %d changes not seen there", percentile(hubLags, 0.5), maxOf(hubLags), missed)
		} else {
			rep.missing(id, false, "more than 1 %% of the changes were not seen on %s within %s", w.hub, replDrainTimeout)
		}
	}
}

func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(p*float64(len(sorted)))) - 1
	if rank < 0 {
		rank = 0
	}
	return sorted[rank]
}

func maxOf(sorted []float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return sorted[len(sorted)-1]
}

// sample reads the replicator's RSS every replSampleInterval until ctx ends.
func (r *replRun) sample(ctx context.Context) {
	ticker := time.NewTicker(replSampleInterval)
	defer ticker.Stop()
	for {
		if m, err := readMemory(r.pids[0]); err == nil {
			r.samplesMu.Lock()
			r.samples = append(r.samples, replProcSample{at: time.Now(), rssKiB: m.RSSKiB})
			r.samplesMu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// maxSampledKiB returns the largest VmRSS sample between two times (0 when none).
func (r *replRun) maxSampledKiB(from, to time.Time) (int64, int) {
	r.samplesMu.Lock()
	defer r.samplesMu.Unlock()
	var peak int64
	n := 0
	for _, s := range r.samples {
		if !s.at.Before(from) && !s.at.After(to) {
			n++
			peak = max(peak, s.rssKiB)
		}
	}
	return peak, n
}

// reportMemoryCPU records the RSS and CPU figures from the samples and the phase marks.
func (r *replRun) reportMemoryCPU() {
	rep := r.rep
	switch m, err := readMemory(r.pids[0]); {
	case r.idlePeakKiB > 0:
		rep.set(figRSSPeak, mib(r.idlePeakKiB), "read at the end of the idle window, before the hub loss")
	case err != nil:
		rep.missing(figRSSPeak, false, "reading the replicator's memory: %v", err)
	default:
		rep.set(figRSSPeak, mib(m.PeakKiB), "read at the end of the run (it did not reach the idle window)")
	}
	changes, _, ok1 := r.at("changes")
	idleEnd, _, ok2 := r.at("idle-end")
	if ok1 && ok2 {
		r.samplesMu.Lock()
		var rss []float64
		for _, s := range r.samples {
			if !s.at.Before(changes) && !s.at.After(idleEnd) {
				rss = append(rss, mib(s.rssKiB))
			}
		}
		r.samplesMu.Unlock()
		if st := summarize(rss); st != nil {
			rep.set(figRSSSteady, st.Median, "%d samples, %.1f–%.1f MiB", st.N, st.Min, st.Max)
		}
	}
	if all, secs, ok := r.cpuDelta("start", "synced"); ok {
		rep.set(figCPUSync, all[0], "in %.1f s (%.2f cores on average); meanwhile %s", secs, all[0]/secs, r.apiserversText(all, "%.1f CPU s"))
	}
	if all, secs, ok := r.cpuDelta("changes", "changes-end"); ok {
		if made := r.changesMade(); made > 0 {
			rep.set(figCPUChanges, all[0]*1000/float64(made), "%.1f CPU s for %d changes in %.0f s (%.2f cores); meanwhile %s",
				all[0], made, secs, all[0]/secs, r.apiserversText(all, "%.1f CPU s"))
		}
	}
	if all, secs, ok := r.cpuDelta("changes-end", "idle-end"); ok {
		rep.set(figCPUIdle, all[0]*60/secs, "over %.0f s; meanwhile %s", secs, r.apiserversText(all, "%.2f CPU s"))
	}
}

// changesMade counts the changes of every phase, from the method lines (set by runPhase).
func (r *replRun) changesMade() int {
	r.rep.mu.Lock()
	defer r.rep.mu.Unlock()
	total := 0
	for _, m := range r.rep.Method {
		var phase string
		var n int
		if _, err := fmt.Sscanf(m, "Phase %s %d changes", &phase, &n); err == nil {
			total += n
		}
	}
	return total
}

// runFlip loses hub A: every cluster's lease is created on hub B (as OCM's hub controller does there for an
// accepted cluster: renewTime at creation, which does not count as an agent's renewal), CreationSlack later hub
// A's lease renewals stop and its kube-apiserver is stopped, and every lease on hub B is renewed at once, then
// once per lease period, as agents that moved to B would. It measures the time until the replicator treats hub B
// as every cluster's source (figFlipTakeover) and, with more than one standby, until every cluster's state on the
// other standbys is copied from B (figFlipFlow), and the replicator's peak RSS and CPU meanwhile. It returns the
// report of hub B's lease renewals (it stops them), or nil when they never started.
func (r *replRun) runFlip(ctx context.Context, stopLeasesA context.CancelFunc) func() (int, int, error) {
	t, rep, s := r.t, r.rep, r.s
	hubB, watcherB := r.hubs[1], r.watchers[0]
	notMeasured := func(format string, args ...any) {
		for _, id := range []string{figFlipTakeover, figFlipFlow, figFlipRSS, figFlipCPU} {
			if rep.declared(id) {
				rep.missing(id, true, format, args...)
			}
		}
	}
	kubeB, err := kubernetes.NewForConfig(unthrottled(hubB.AdminConfig))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := r.forEachCluster(ctx, replFlipWorkers, func(i int) error { return createLease(ctx, kubeB, clusterName(i)) }); err != nil {
		notMeasured("the leases could not be created on hub B: %v", err)
		return nil
	}
	created := time.Since(began)
	if err := r.b.sleep(direction.CreationSlack + time.Second); err != nil {
		t.Fatal("interrupted")
	}
	stopLeasesA()
	before, _ := readMemory(r.pids[0])
	r.mark("flip")
	stopAt, _, _ := r.at("flip")
	r.hubs[0].StopAPIServer()
	stopped := time.Since(stopAt)
	renewedAt := time.Now()
	if err := r.forEachCluster(ctx, replFlipWorkers, func(i int) error { return renewLease(ctx, kubeB, clusterName(i)) }); err != nil {
		rep.note("Renewing the leases on hub B at the hub loss: %v", err)
	}
	renewed := time.Since(renewedAt)
	leaseCtx, stopLeasesB := context.WithCancel(ctx)
	leaseErrs := r.renewLeases(leaseCtx, hubB)
	t.Logf("replication %s: hub A stopped in %s, %d leases renewed on hub B in %s", s.name(), stopped.Round(time.Millisecond), s.clusters, renewed.Round(time.Millisecond))

	// The goals: on hub B, every ManagedCluster without the cluster-hub annotation (the replicator removes it
	// from the ManagedCluster of the cluster's source hub); on every other standby, every object of the clusters
	// copied from hub B, and the Placements (hub-wide) too.
	type goal struct {
		w          *replWatcher
		kind       failoverv1alpha1.ReplicatedKind
		attr, want string
		optional   bool
		at         time.Time
		already    bool
	}
	goals := []*goal{{w: watcherB, kind: failoverv1alpha1.KindManagedCluster, attr: attrHub, want: ""}}
	for _, w := range r.watchers[1:] {
		for _, kind := range []failoverv1alpha1.ReplicatedKind{failoverv1alpha1.KindManifestWork, failoverv1alpha1.KindManagedClusterAddOn, failoverv1alpha1.KindManagedCluster} {
			goals = append(goals, &goal{w: w, kind: kind, attr: attrFrom, want: replHubB})
		}
		goals = append(goals, &goal{w: w, kind: failoverv1alpha1.KindPlacement, attr: attrFrom, want: replHubB, optional: true})
	}
	deadline := stopAt.Add(s.flipTimeout)
	var required time.Time // when the last required goal was met
	for {
		pending, pendingRequired := 0, 0
		for _, g := range goals {
			if !g.at.IsZero() {
				continue
			}
			if at, ok, already := g.w.fullSince(g.kind, g.attr, g.want, stopAt); ok {
				g.at, g.already = at, already
				continue
			}
			pending++
			if !g.optional {
				pendingRequired++
			}
		}
		now := time.Now()
		if pendingRequired == 0 && required.IsZero() {
			required = now
		}
		if pending == 0 || (pendingRequired == 0 && now.Sub(required) > replPlacementGrace) || now.After(deadline) || ctx.Err() != nil || r.proc.dead() != nil {
			break
		}
		time.Sleep(replFlipPoll)
	}
	if ctx.Err() != nil {
		stopLeasesB()
		t.Fatal("interrupted")
	}
	r.mark("flip-end")
	end, _, _ := r.at("flip-end")
	r.heapProfile(ctx, "heap-after-hub-loss")
	describe := func(g *goal) string {
		what := fmt.Sprintf("%s on %s with %s=%s", g.kind, g.w.hub, mirror.LabelReplicatedFrom, g.want)
		if g.attr == attrHub {
			what = fmt.Sprintf("ManagedClusters on %s without %s", g.w.hub, mirror.AnnotationClusterHub)
		}
		switch {
		case g.at.IsZero():
			return fmt.Sprintf("%s: %d of %d after %.0f s (not all)", what, g.w.countOf(g.kind, g.attr, g.want), g.w.want[g.kind], end.Sub(stopAt).Seconds())
		case g.already:
			return fmt.Sprintf("%s: all %d already before the stop", what, g.w.want[g.kind])
		default:
			return fmt.Sprintf("%s: all %d after %.1f s", what, g.w.want[g.kind], g.at.Sub(stopAt).Seconds())
		}
	}
	var texts []string
	for _, g := range goals {
		texts = append(texts, describe(g))
	}
	detail := strings.Join(texts, "; ")
	timedOut := fmt.Sprintf("not handled within BENCH_REPL_FLIP_TIMEOUT=%s (or the replicator exited): %s", s.flipTimeout, detail)
	switch g := goals[0]; {
	case g.already:
		rep.missing(figFlipTakeover, false, "hub B's ManagedClusters had no %s annotation before the hub loss already: the observable does not apply to this replicator", mirror.AnnotationClusterHub)
	case g.at.IsZero():
		rep.missing(figFlipTakeover, true, "%s", timedOut)
	default:
		rep.set(figFlipTakeover, g.at.Sub(stopAt).Seconds(), "%s", describe(g))
	}
	if rep.declared(figFlipFlow) {
		var last time.Time
		complete := true
		for _, g := range goals[1:] {
			if g.optional {
				continue
			}
			if g.at.IsZero() {
				complete = false
			}
			if g.at.After(last) {
				last = g.at
			}
		}
		if complete {
			rep.set(figFlipFlow, last.Sub(stopAt).Seconds(), "%s", detail)
		} else {
			rep.missing(figFlipFlow, true, "%s", timedOut)
		}
	}
	after, err := readMemory(r.pids[0])
	sampled, n := r.maxSampledKiB(stopAt, end)
	switch {
	case err != nil:
		rep.missing(figFlipRSS, false, "reading the replicator's memory after the hub loss: %v", err)
	case after.PeakKiB > before.PeakKiB:
		rep.set(figFlipRSS, mib(after.PeakKiB), "VmHWM rose during the hub loss from %.1f MiB to %.1f MiB (largest of %d VmRSS samples meanwhile %.1f MiB); VmRSS after it %.1f MiB",
			mib(before.PeakKiB), mib(after.PeakKiB), n, mib(sampled), mib(after.RSSKiB))
	case sampled > 0:
		rep.set(figFlipRSS, mib(sampled), "largest of %d VmRSS samples (every %s) during the hub loss; VmHWM stayed at %.1f MiB, reached before it; VmRSS after it %.1f MiB",
			n, replSampleInterval, mib(after.PeakKiB), mib(after.RSSKiB))
	default:
		rep.missing(figFlipRSS, false, "no RSS sample during the hub loss")
	}
	if all, secs, ok := r.cpuDelta("flip", "flip-end"); ok && !math.IsNaN(all[0]) {
		rep.set(figFlipCPU, all[0], "over %.1f s (%.2f cores on average); meanwhile %s", secs, all[0]/secs, r.apiserversText(all, "%.1f CPU s"))
	}
	rep.method("Hub loss, after the idle window: the benchmark created every cluster's lease %s on hub B (%s, %d at once: as OCM's hub "+
		"controller does for an accepted cluster, renewTime at creation, which is no agent's renewal), waited %s (CreationSlack "+
		"and a second), stopped renewing the leases on hub A, and stopped hub A's kube-apiserver (framework Hub.StopAPIServer, %s; "+
		"etcd keeps running). From then on it renewed every lease on hub B: all at once (%d at a time, %s for the %d), then once "+
		"per %d s, as agents that moved to hub B would. Times run from the moment the stop was asked to the watch event that "+
		"completed each of these: on hub B every ManagedCluster without the %s annotation (the replicator keeps it on copies, "+
		"naming the hub the cluster is on, and removes it from the ManagedCluster of the cluster's source hub: the takeover); "+
		"with more than one standby, on every other standby every ManifestWork, ManagedClusterAddOn and ManagedCluster labelled "+
		"%s=%s (the copies rewritten from hub B), and the Placements (hub-wide: their source is the first reachable hub in the "+
		"ReplicationConfig's order, hub B once hub A is gone; waited for up to %s after the rest). The hub loss ends when all "+
		"of them are met, or after BENCH_REPL_FLIP_TIMEOUT=%s. The peak RSS is VmHWM when it rose during the hub loss, else "+
		"the largest VmRSS sample (every %s) meanwhile; CPU from /proc/<pid>/stat at both ends; a heap profile is taken at its end.",
		direction.LeaseName, created.Round(time.Millisecond), replFlipWorkers, direction.CreationSlack+time.Second, stopped.Round(time.Millisecond),
		replFlipWorkers, renewed.Round(time.Millisecond), s.clusters, replLeaseSeconds, mirror.AnnotationClusterHub,
		mirror.LabelReplicatedFrom, replHubB, replPlacementGrace, s.flipTimeout, replSampleInterval)
	t.Logf("replication %s: hub loss: %s", s.name(), detail)
	if err := rep.write(); err != nil {
		t.Errorf("writing the replication report: %v", err)
	}
	return func() (int, int, error) {
		stopLeasesB()
		return leaseErrs()
	}
}

// Floor template keys: the namespace of a cluster, then the kinds.
const floorNamespace = "Namespace"

// takeFloorTemplates reads, on every standby, cluster-0000's namespace and one copy of each kind the initial
// sync wrote there (ManagedCluster, ManifestWork work-00, ManagedClusterAddOn, Placement), as the write floor's
// models: the floor writes objects with the same labels, annotations and spec, so of the same size.
func (r *replRun) takeFloorTemplates(ctx context.Context) {
	cluster := clusterName(0)
	for i, h := range r.hubs[1:] {
		client, err := dynamic.NewForConfig(unthrottled(h.AdminConfig))
		if err != nil {
			r.t.Fatal(err)
		}
		templates := map[string]*unstructured.Unstructured{}
		for _, obj := range []struct {
			key             string
			gvr             schema.GroupVersionResource
			namespace, name string
		}{
			{floorNamespace, mirror.NamespaceGVR, "", cluster},
			{string(failoverv1alpha1.KindManagedCluster), replMCGVR, "", cluster},
			{string(failoverv1alpha1.KindManifestWork), replWorkGVR, cluster, workName(0)},
			{string(failoverv1alpha1.KindManagedClusterAddOn), replAddonGVR, cluster, replAddonName},
			{string(failoverv1alpha1.KindPlacement), replPlacementGVR, cluster, replPlacementName},
		} {
			u, err := client.Resource(obj.gvr).Namespace(obj.namespace).Get(ctx, obj.name, metav1.GetOptions{})
			if err != nil {
				r.rep.note("The write floor's model %s %s on %s could not be read (%v): the floor is not measured.", obj.key, obj.name, r.names[i+1], err)
				r.floorTemplates = nil
				return
			}
			templates[obj.key] = u
		}
		r.floorTemplates = append(r.floorTemplates, templates)
	}
}

// floorObject returns an object like tpl (labels, annotations, every top-level field but metadata and
// status; spec replaced when spec is not nil) named name in namespace.
func floorObject(tpl *unstructured.Unstructured, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range tpl.Object {
		if k != "metadata" && k != "status" {
			out.Object[k] = k8sruntime.DeepCopyJSONValue(v)
		}
	}
	out.SetName(name)
	if namespace != "" {
		out.SetNamespace(namespace)
	}
	labels := map[string]string{}
	for k, v := range tpl.GetLabels() {
		if k != corev1.LabelMetadataName {
			labels[k] = v
		}
	}
	out.SetLabels(labels)
	out.SetAnnotations(tpl.GetAnnotations())
	if spec != nil {
		out.Object["spec"] = spec
	}
	return out
}

// floorWrite is one write of the write floor.
type floorWrite struct {
	gvr schema.GroupVersionResource
	obj *unstructured.Unstructured
}

// floorWrites returns the write floor's writes for cluster i on the standby of templates, in the order they
// must happen (the namespace first).
func (r *replRun) floorWrites(templates map[string]*unstructured.Unstructured, i int) []floorWrite {
	name := floorClusterName(i)
	out := []floorWrite{
		{mirror.NamespaceGVR, floorObject(templates[floorNamespace], "", name, nil)},
		{replMCGVR, floorObject(templates[string(failoverv1alpha1.KindManagedCluster)], "", name, nil)},
	}
	for j := range r.s.works {
		out = append(out, floorWrite{replWorkGVR, floorObject(templates[string(failoverv1alpha1.KindManifestWork)], name, workName(j), replWorkSpec(workName(j), replInitValue))})
	}
	if hasAddonAndPlacement(i) {
		out = append(out,
			floorWrite{replAddonGVR, floorObject(templates[string(failoverv1alpha1.KindManagedClusterAddOn)], name, replAddonName, replAddonSpec())},
			floorWrite{replPlacementGVR, floorObject(templates[string(failoverv1alpha1.KindPlacement)], name, replPlacementName, replPlacementSpec(name))})
	}
	return out
}

// runFloor measures the write floor, after the replicator has stopped: on every standby at once, a client with
// the replicator's identity and client-side limits (--hub-kube-api-qps, --hub-kube-api-burst defaults; one rate
// limiter per standby, as the replicator has) and replicator.NewOptions().Workers writers creates the objects the initial sync
// created there, under fresh names (floor-NNNN), each like the copy the replicator wrote.
func (r *replRun) runFloor(ctx context.Context) {
	t, rep, s := r.t, r.rep, r.s
	if r.floorTemplates == nil {
		rep.missing(figFloor, false, "the run did not reach it, or the models of the floor's objects could not be read")
		return
	}
	defaults := replicator.NewOptions()
	type hubFloor struct {
		name           string
		client         dynamic.Interface
		started, ended time.Time
		writes, failed atomic.Int64
		lastErr        atomic.Value
	}
	floors := make([]*hubFloor, len(r.floorTemplates))
	for i := range floors {
		cfg := r.hubs[i+1].UserConfig(replUser, "system:masters")
		cfg.QPS, cfg.Burst = defaults.HubQPS, defaults.HubBurst
		client, err := dynamic.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		floors[i] = &hubFloor{name: r.names[i+1], client: client}
	}
	perHub := s.clusters*(2+s.works) + 2*s.perTenth()
	r.mark("floor")
	var wg sync.WaitGroup
	for i, f := range floors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.started = time.Now()
			_ = r.forEachCluster(ctx, replicator.NewOptions().Workers, func(c int) error {
				for _, w := range r.floorWrites(r.floorTemplates[i], c) {
					_, err := f.client.Resource(w.gvr).Namespace(w.obj.GetNamespace()).Create(ctx, w.obj, metav1.CreateOptions{})
					if err != nil {
						f.failed.Add(1)
						f.lastErr.Store(fmt.Errorf("%s %s: %w", w.obj.GetKind(), objKey(w.obj.GetNamespace(), w.obj.GetName()), err))
						continue
					}
					f.writes.Add(1)
				}
				return nil
			})
			f.ended = time.Now()
		}()
	}
	wg.Wait()
	r.mark("floor-end")
	if ctx.Err() != nil {
		t.Fatal("interrupted")
	}
	var slowest float64
	var parts []string
	failed := int64(0)
	for _, f := range floors {
		secs := f.ended.Sub(f.started).Seconds()
		slowest = math.Max(slowest, secs)
		failed += f.failed.Load()
		err, _ := f.lastErr.Load().(error)
		parts = append(parts, fmt.Sprintf("%s: %d creates in %.1f s (%.0f/s), %d failed%s", f.name, f.writes.Load(), secs,
			float64(f.writes.Load())/secs, f.failed.Load(), errSuffix(err)))
	}
	if failed > 0 && failed >= int64(perHub*len(floors))/2 {
		rep.missing(figFloor, false, "most of the floor's writes failed: %s", strings.Join(parts, "; "))
		return
	}
	rep.set(figFloor, slowest, "%d objects per standby; %s", perHub, strings.Join(parts, "; "))
	if sync, ok := rep.value(figSync); ok && slowest > 0 {
		rep.set(figSyncFloor, sync/slowest, "initial sync %.1f s, write floor %.1f s", sync, slowest)
	} else {
		rep.missing(figSyncFloor, false, "the initial sync was not measured")
	}
	rep.method("Write floor, after the hub loss, with the replicator stopped and hub A down: on every standby at once, a client "+
		"authenticated as %s (the replicator's identity: the same fence policy match conditions and the same audit logging) with "+
		"the replicator's default client-side limits, %g requests/s and a burst of %d, through one rate limiter per standby "+
		"(the replicator's is per hub too), and %d writers per standby (the replicator's --workers default, though its workers "+
		"are shared by all hubs), creates %d objects: per cluster floor-NNNN (%d) its Namespace, ManagedCluster and %d "+
		"ManifestWorks, and in every %dth cluster's namespace a ManagedClusterAddOn and a Placement. Each object carries the "+
		"labels, annotations and spec of the copy the replicator wrote there for cluster-0000 (read at the end of the idle "+
		"window; the ManifestWorks' specs are those of cluster-0000's, the namespace carries the fence marks), so the floor "+
		"writes the same objects in one create each. The floor's time runs from the start of the writes to the last write's "+
		"return on the slowest standby; the ratio is the initial sync's time divided by it.",
		replUser, defaults.HubQPS, defaults.HubBurst, replicator.NewOptions().Workers, perHub, s.clusters, s.works, replKindEvery)
	t.Logf("replication %s: write floor %.1f s: %s", s.name(), slowest, strings.Join(parts, "; "))
	if err := rep.write(); err != nil {
		t.Errorf("writing the replication report: %v", err)
	}
}

// replRequestPhases are the phases of the request tables: name, from mark, to mark.
var replRequestPhases = []struct{ name, from, to string }{
	{"initial sync", "start", "synced"},
	{"changes (create, update, delete phases)", "changes", "changes-end"},
	{"idle", "changes-end", "idle-end"},
	{"hub loss (hub A stopped → handled)", "flip", "flip-end"},
	{"whole run (replicator start → stop)", "start", "end"},
	{"write floor (the floor's client)", "floor", "floor-end"},
}

// reportRequests counts the replicator's requests to each hub by phase from the audit logs (and the write
// floor's, same identity, in its own phase) and copies the logs next to the others. A standby's request figures
// are not measured when its audit log does not hold the phase (setRequestFigure).
func (r *replRun) reportRequests() {
	rep := r.rep
	var rows []replRequestRow
	var breakdown []replBreakdownRow
	for i, hub := range r.hubs {
		name := r.names[i]
		events, err := readAuditEvents(hub.AuditLogPath(), replUser)
		if err != nil {
			rep.note("Hub %s's audit log could not be read: %v", name, err)
			if i > 0 {
				rep.missing(syncReqsID(name), false, "%s's audit log could not be read: %v", name, err)
				rep.missing(changeReqsID(name), false, "%s's audit log could not be read: %v", name, err)
			}
			continue
		}
		if err := copyFile(hub.AuditLogPath(), filepath.Join(r.logDir, "audit-"+name+".log")); err != nil {
			rep.note("Hub %s's audit log could not be copied to the logs: %v", name, err)
		}
		for _, p := range replRequestPhases {
			from, _, ok0 := r.at(p.from)
			to, _, ok1 := r.at(p.to)
			if !ok0 || !ok1 || (i == 0 && p.from == "floor") {
				continue
			}
			row, counts := phaseRequests(events, name, p.name, from, to)
			if i > 0 {
				switch p.to {
				case "synced":
					setRequestFigure(rep, syncReqsID(name), &row, r.s.clusters*r.s.works, "ManifestWorks")
				case "changes-end":
					setRequestFigure(rep, changeReqsID(name), &row, r.changesMade(), "changes")
				}
			}
			rows = append(rows, row)
			if p.from == "start" || p.from == "floor" {
				breakdown = append(breakdown, breakdownRows(name, p.name, counts)...)
			}
		}
	}
	rep.setRequests(rows, breakdown)
}

// phaseRequests counts the audit events received in [from, to) as hub's row of phase, and by request name
// (requestName).
func phaseRequests(events []*auditEvent, hub, phase string, from, to time.Time) (replRequestRow, map[string]int) {
	row := replRequestRow{Hub: hub, Phase: phase, Seconds: to.Sub(from).Seconds()}
	counts := map[string]int{}
	for _, ev := range events {
		if ev.RequestReceivedTimestamp.Before(from) || !ev.RequestReceivedTimestamp.Before(to) {
			continue
		}
		row.Requests++
		switch {
		case ev.Verb == "watch":
			row.Watches++
		case isWrite(ev.Verb):
			row.Writes++
		default:
			row.Reads++
		}
		if ev.ResponseStatus != nil && ev.ResponseStatus.Code >= 400 {
			row.Errors++
		}
		counts[requestName(ev)]++
	}
	if row.Seconds > 0 {
		row.PerSec = float64(row.Requests) / row.Seconds
	}
	return row, counts
}

// auditGap says why row, a standby's audit counts in a phase that had to write to that standby (the initial
// sync writes every copy there, each change of the change phases is written there), measured nothing: no audit
// event at all in the phase's window, or no write among them. Either means the audit log does not hold the
// phase (e.g. it was rotated and only the newest file was read): its counts are not figures. "" when they are.
func auditGap(row replRequestRow) string {
	switch {
	case row.Requests == 0:
		return fmt.Sprintf("no audit event in the phase's window (%s, %.0f s) in %s's audit log, though the phase had to write to %s: "+
			"the log does not hold the phase (rotated or cut short), so its 0 requests measured nothing", row.Phase, row.Seconds, row.Hub, row.Hub)
	case row.Writes == 0:
		return fmt.Sprintf("no write among the %d audit events in the phase's window (%s, %.0f s) in %s's audit log, though the phase "+
			"had to write to %s: the log does not hold the whole phase (rotated or cut short)", row.Requests, row.Phase, row.Seconds, row.Hub, row.Hub)
	}
	return ""
}

// setRequestFigure sets figure id to row's requests per unit (units of what, e.g. 35000 ManifestWorks). When
// there are no units, or the audit log does not hold the phase (auditGap), the figure is not measured instead,
// with the reason (a target of it is then neither met nor missed), and row is marked not measured too.
func setRequestFigure(rep *replReport, id string, row *replRequestRow, units int, what string) {
	if units <= 0 {
		rep.missing(id, false, "no %s in the phase (%s)", what, row.Phase)
		return
	}
	if gap := auditGap(*row); gap != "" {
		row.Missing = gap
		rep.missing(id, false, "%s", gap)
		return
	}
	rep.set(id, float64(row.Requests)/float64(units), "%d requests (%d writes, %d errors) for %d %s in %.0f s: %.0f/s",
		row.Requests, row.Writes, row.Errors, units, what, row.Seconds, row.PerSec)
}

// breakdownRows returns counts as rows, the largest first.
func breakdownRows(hub, phase string, counts map[string]int) []replBreakdownRow {
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if counts[names[i]] != counts[names[j]] {
			return counts[names[i]] > counts[names[j]]
		}
		return names[i] < names[j]
	})
	out := make([]replBreakdownRow, 0, len(names))
	for _, n := range names {
		out = append(out, replBreakdownRow{Hub: hub, Phase: phase, Request: n, Count: counts[n]})
	}
	return out
}

// copyFile copies file src to dst (0600).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// readAuditEvents returns the last stage of every request of user in an audit log, in log order. It reads the
// log line by line: at fleet size a hub's log holds hundreds of thousands of events.
func readAuditEvents(file, user string) ([]*auditEvent, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	byID := map[string]*auditEvent{}
	var ids []string
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 64<<20)
	for scanner.Scan() {
		line := scanner.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		ev := &auditEvent{}
		if err := json.Unmarshal(line, ev); err != nil {
			return nil, fmt.Errorf("parsing %s: %w", file, err)
		}
		if ev.User.Username != user {
			continue
		}
		if prev, ok := byID[ev.AuditID]; !ok {
			ids = append(ids, ev.AuditID)
			byID[ev.AuditID] = ev
		} else if prev.Stage == "ResponseStarted" {
			byID[ev.AuditID] = ev
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	out := make([]*auditEvent, 0, len(ids))
	for _, id := range ids {
		out = append(out, byID[id])
	}
	return out, nil
}

// reportAnchor compares the measured lag with the changes ACM's backup can lose for a few schedules.
func (r *replRun) reportAnchor() {
	worst := 0.0
	for _, phase := range replPhases {
		if v, ok := r.rep.value(lagID(phase, "p99")); ok && v > worst {
			worst = v
		}
	}
	schedules := []struct {
		cron, name string
		interval   time.Duration
	}{
		{"*/15 * * * *", "every 15 min", 15 * time.Minute},
		{"0 * * * *", "hourly", time.Hour},
		{"0 */6 * * *", "every 6 h (the schedule of ACM's BackupSchedule sample)", 6 * time.Hour},
		{"0 0 * * *", "daily", 24 * time.Hour},
	}
	var rows []replAnchorRow
	for _, s := range schedules {
		lost := s.interval + acmRestoreSync
		row := replAnchorRow{Schedule: fmt.Sprintf("`%s` (%s)", s.cron, s.name), Interval: shortDuration(s.interval),
			WorstCaseS: lost.Seconds(), Description: fmt.Sprintf("up to %s (%s + %s restore sync)", shortDuration(lost), shortDuration(s.interval), shortDuration(acmRestoreSync))}
		if worst > 0 {
			row.VersusOurs = lost.Seconds() / worst
		}
		rows = append(rows, row)
	}
	r.rep.setAnchor(rows)
}

func shortDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	case d > time.Hour:
		return fmt.Sprintf("%.1f h", d.Hours())
	default:
		return fmt.Sprintf("%d min", d/time.Minute)
	}
}

// replMethodSetup describes the test bed of one size.
func replMethodSetup(s replSettings) string {
	names := make([]string, s.standbys+1)
	for i := range names {
		names[i] = replHubName(i)
	}
	return fmt.Sprintf("%d hubs from test/framework, each a real kube-apiserver and etcd with OCM's hub CRDs (ManagedClusterAddOn and "+
		"Placement among them), started without OCM's hub controller and without a CSR signer (nothing registers; the CPU goes to "+
		"the replicator): hub A (%s) holds %d ManagedClusters with %d ManifestWorks each and a ManagedClusterAddOn and a Placement "+
		"in every %dth cluster's namespace; the standbys are %s; hub B (%s) hosts the ReplicationConfig (all kinds, hubs %s in "+
		"that order) and one kubeconfig Secret per hub. The replicator is the binary of `make build` (`klusterlet-failover "+
		"replicator --kubeconfig=<hub B> --namespace=%s --disable-leader-election`, default flags otherwise), a process of its "+
		"own; its identity on every hub is the user %s in group system:masters, whose requests, and only those, each hub's audit "+
		"log records (Metadata level). Copies are observed by the benchmark's own informers on each standby (ManagedClusters, "+
		"ManifestWorks, ManagedClusterAddOns and Placements, all namespaces): a copy counts when it carries %s=%s and, for "+
		"ManifestWorks created or updated by a change, the ConfigMap marker value the change wrote.", s.standbys+1, replHubA,
		s.clusters, s.works, replKindEvery, strings.Join(names[1:], ", "), replHubB, strings.Join(names, ", "), replNamespace,
		replUser, mirror.LabelReplicatedFrom, replHubA)
}

// replMetricsClient reads the replicator's /metrics and profiles, authenticating with hub B's admin client
// certificate (the replicator's server delegates authentication and authorization to hub B).
type replMetricsClient struct {
	base   string
	client *http.Client
}

func newReplMetricsClient(cfg *rest.Config, port int) *replMetricsClient {
	tlsConfig := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the replicator's self-signed serving certificate on loopback
	if cert, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData); err == nil {
		tlsConfig.Certificates = []tls.Certificate{cert}
	}
	return &replMetricsClient{
		base:   fmt.Sprintf("https://127.0.0.1:%d", port),
		client: &http.Client{Timeout: 2 * time.Duration(replProfileSeconds) * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}},
	}
}

// waitServing waits up to timeout for the replicator's server to answer /metrics.
func (m *replMetricsClient) waitServing(ctx context.Context, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if _, err := m.get(ctx, "/metrics"); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// get returns the body of the replicator's server's path.
func (m *replMetricsClient) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d: %s", path, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	return data, nil
}

// promSamples maps a sample's name and sorted labels ("name{a="x",b="y"}") to its value.
type promSamples map[string]float64

// scrape reads the replicator's /metrics.
func (m *replMetricsClient) scrape(ctx context.Context) (promSamples, error) {
	var data []byte
	var err error
	for range 20 { // the server may still be starting
		if data, err = m.get(ctx, "/metrics"); err == nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		return nil, err
	}
	return parsePromText(string(data)), nil
}

// parsePromText parses the Prometheus text format's sample lines (the labels as written: the server sorts them).
func parsePromText(text string) promSamples {
	out := promSamples{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out
}

// histogram returns the cumulative buckets (le → count) of histogram name with labels (without le), as written.
func (p promSamples) histogram(name, labels string) map[float64]float64 {
	out := map[float64]float64{}
	prefix := name + "_bucket{" + labels + ",le=\""
	for k, v := range p {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		le := strings.TrimSuffix(strings.TrimPrefix(k, prefix), "\"}")
		bound, err := strconv.ParseFloat(le, 64)
		if le == "+Inf" {
			bound, err = math.Inf(1), nil
		}
		if err == nil {
			out[bound] = v
		}
	}
	return out
}

// histogramQuantile estimates quantile q of the observations between two scrapes (cumulative buckets), with
// linear interpolation inside the bucket, as Prometheus' histogram_quantile.
func histogramQuantile(q float64, before, after map[float64]float64) (float64, float64, bool) {
	bounds := make([]float64, 0, len(after))
	for b := range after {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	counts := make([]float64, len(bounds))
	for i, b := range bounds {
		counts[i] = after[b] - before[b]
	}
	if len(bounds) == 0 || counts[len(counts)-1] <= 0 {
		return 0, 0, false
	}
	total := counts[len(counts)-1]
	rank := q * total
	for i, c := range counts {
		if c >= rank {
			lower, prev := 0.0, 0.0
			if i > 0 {
				lower, prev = bounds[i-1], counts[i-1]
			}
			if math.IsInf(bounds[i], 1) {
				return lower, total, true
			}
			if c == prev {
				return bounds[i], total, true
			}
			return lower + (bounds[i]-lower)*(rank-prev)/(c-prev), total, true
		}
	}
	return bounds[len(bounds)-1], total, true
}

const replLagMetric = "klusterlet_failover_replicator_replication_lag_seconds"

// reportOwnLag records the replicator's own lag percentiles for ManifestWorks copied to the standbys during a
// phase: the histograms of every standby added up.
func (r *replRun) reportOwnLag(phase string, before, after promSamples) {
	b, a := map[float64]float64{}, map[float64]float64{}
	for _, hub := range r.standbyNames() {
		labels := fmt.Sprintf(`hub=%q,kind=%q`, hub, string(failoverv1alpha1.KindManifestWork))
		for bound, v := range before.histogram(replLagMetric, labels) {
			b[bound] += v
		}
		for bound, v := range after.histogram(replLagMetric, labels) {
			a[bound] += v
		}
	}
	for _, q := range []struct {
		id string
		p  float64
	}{{"p50", 0.5}, {"p99", 0.99}} {
		v, n, ok := histogramQuantile(q.p, b, a)
		if !ok {
			r.rep.missing(ownLagID(phase, q.id), false, "no observation in the replicator's histogram during the phase")
			continue
		}
		r.rep.set(ownLagID(phase, q.id), v, "%.0f observations over %d standbys; from the replicator's watch event on A to its completed write on the standby, interpolated in the histogram's buckets",
			n, len(r.watchers))
	}
}

// reportReplicatorCounters notes the replicator's write, conflict and error counters at the end of its run.
func (r *replRun) reportReplicatorCounters(p promSamples) {
	var parts []string
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, prefix := range []string{"klusterlet_failover_replicator_objects_mirrored_total", "klusterlet_failover_replicator_conflicts_total",
			"klusterlet_failover_replicator_write_errors_total", "klusterlet_failover_replicator_hub_reachable", "klusterlet_failover_replicator_source_changes_total"} {
			if strings.HasPrefix(k, prefix+"{") {
				parts = append(parts, fmt.Sprintf("%s %s", strings.TrimPrefix(k, "klusterlet_failover_replicator_"), num(p[k])))
			}
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "none of objects_mirrored_total, conflicts_total, write_errors_total, hub_reachable, source_changes_total was exported")
	}
	r.rep.note("The replicator's counters at the end of its run (after the hub loss): %s.", strings.Join(parts, "; "))
}

// profile takes a CPU profile of replProfileSeconds from the replicator in the background, writes it and its
// `go tool pprof -top` into the log directory, and closes the returned channel when done.
func (r *replRun) profile(ctx context.Context, name string) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		data, err := r.metrics.get(ctx, fmt.Sprintf("/debug/pprof/profile?seconds=%d", replProfileSeconds))
		if err != nil {
			r.rep.note("CPU profile %s not taken: %v", name, err)
			return
		}
		r.saveProfile(name, data)
	}()
	return done
}

// heapProfile takes a heap profile from the replicator and saves it.
func (r *replRun) heapProfile(ctx context.Context, name string) {
	data, err := r.metrics.get(ctx, "/debug/pprof/heap")
	if err != nil {
		r.rep.note("Heap profile %s not taken: %v", name, err)
		return
	}
	r.saveProfile(name, data)
}

// saveProfile writes the profile and its top functions to the log directory, and keeps the top lines for the
// analysis.
func (r *replRun) saveProfile(name string, data []byte) {
	file := filepath.Join(r.logDir, "replicator-"+name+".pprof")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		r.rep.note("Profile %s not written: %v", name, err)
		return
	}
	args := []string{"tool", "pprof", "-top", "-nodecount=12"}
	if strings.HasPrefix(name, "heap") {
		args = append(args, "-sample_index=inuse_space")
	}
	out, err := exec.Command("go", append(args, file)...).CombinedOutput()
	if err != nil {
		r.rep.note("Profile %s written to %s; `go tool pprof -top` failed: %v", name, file, err)
		return
	}
	_ = os.WriteFile(strings.TrimSuffix(file, ".pprof")+".top.txt", out, 0o600)
	r.profilesMu.Lock()
	total := ""
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "Showing nodes accounting for") {
			if _, t, ok := strings.Cut(line, " of "); ok {
				total = strings.TrimSpace(t)
			}
		}
	}
	r.profiles = append(r.profiles, replProfile{name: name, file: file, total: total, top: topLines(string(out), 6)})
	r.profilesMu.Unlock()
}

// topLines returns the first n function lines of `go tool pprof -top` output.
func topLines(out string, n int) []string {
	var lines []string
	inTable := false
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "flat%") {
			inTable = true
			continue
		}
		if inTable && strings.TrimSpace(line) != "" {
			lines = append(lines, strings.Join(strings.Fields(line), " "))
			if len(lines) == n {
				break
			}
		}
	}
	return lines
}

// replProfile is a profile taken from the replicator.
type replProfile struct {
	name, file, total string
	top               []string
}

// requestRow returns the request row of hub whose phase starts with phasePrefix, unless it is not measured
// (auditGap).
func (r *replRun) requestRow(hub, phasePrefix string) (replRequestRow, bool) {
	r.rep.mu.Lock()
	defer r.rep.mu.Unlock()
	for _, row := range r.rep.Requests {
		if row.Hub == hub && strings.HasPrefix(row.Phase, phasePrefix) && row.Missing == "" {
			return row, true
		}
	}
	return replRequestRow{}, false
}

// writesIn returns the write requests of hub in phase by name (verb and resource), from the breakdown.
func (r *replRun) writesIn(hub, phase string) map[string]int {
	r.rep.mu.Lock()
	defer r.rep.mu.Unlock()
	out := map[string]int{}
	for _, row := range r.rep.Breakdown {
		if row.Hub == hub && row.Phase == phase {
			if verb, _, _ := strings.Cut(row.Request, " "); isWrite(verb) {
				out[row.Request] = row.Count
			}
		}
	}
	return out
}

// analyse explains the figures, from what this run measured: what bounds the initial sync against the write
// floor, where the lag goes, what the memory holds, what the hub loss cost, and what the profiles show.
func (r *replRun) analyse() {
	rep := r.rep
	defaults := replicator.NewOptions()
	cores := func(from, to string) ([]float64, bool) {
		d, secs, ok := r.cpuDelta(from, to)
		if !ok {
			return nil, false
		}
		for i := range d {
			d[i] /= secs
		}
		return d, true
	}
	total := r.s.clusters * r.s.works
	objects := r.s.clusters*(2+r.s.works) + 2*r.s.perTenth() // namespaces, ManagedClusters, works, add-ons, placements

	if sync, ok := rep.value(figSync); ok {
		text := fmt.Sprintf("Initial sync: %.1f s for %d ManifestWorks, %d ManagedClusterAddOns, %d Placements and %d ManagedClusters "+
			"(with their namespaces: %d objects) on each of %d standbys.", sync, total, r.s.perTenth(), r.s.perTenth(), r.s.clusters,
			objects, len(r.watchers))
		if floor, ok := rep.value(figFloor); ok {
			verdict := "meets"
			if sync > replSyncFloorLimit*floor {
				verdict = "misses"
			}
			text += fmt.Sprintf(" The write floor, the same %d objects written by a plain client with the replicator's limits, took "+
				"%.1f s: the ratio %.2f %s the %g× target.", objects, floor, sync/floor, verdict, replSyncFloorLimit)
		}
		for _, hub := range r.standbyNames() {
			b, ok := r.requestRow(hub, "initial sync")
			if !ok {
				continue
			}
			limit := math.Max(0, float64(b.Writes-defaults.HubBurst)) / float64(defaults.HubQPS)
			text += fmt.Sprintf(" To %s the replicator sent %d requests, %d of them writes (%.2f per object of the floor; %d errors), "+
				"%.0f requests/s; its client-side limit of %g requests/s per hub (burst %d) alone needs %.0f s for those writes.",
				hub, b.Requests, b.Writes, float64(b.Writes)/float64(objects), b.Errors, b.PerSec, defaults.HubQPS, defaults.HubBurst, limit)
			if f, ok := r.requestRow(hub, "write floor"); ok && f.Requests > 0 {
				text += fmt.Sprintf(" The floor's client sent it %d requests (%d writes, %d errors) at %.0f/s.", f.Requests, f.Writes, f.Errors, f.PerSec)
			}
			writes := r.writesIn(hub, "initial sync")
			if len(writes) > 0 {
				names := make([]string, 0, len(writes))
				for n := range writes {
					names = append(names, n)
				}
				sort.Slice(names, func(i, j int) bool { return writes[names[i]] > writes[names[j]] })
				parts := make([]string, len(names))
				for i, n := range names {
					parts[i] = fmt.Sprintf("%s %d", n, writes[n])
				}
				text += fmt.Sprintf(" The replicator's writes there during the sync: %s.", strings.Join(parts, ", "))
			}
		}
		if c, ok := cores("start", "synced"); ok {
			text += fmt.Sprintf(" CPU on average during the sync, of the machine's %d cores: replicator %.2f, %s (etcd, the benchmark and "+
				"anything else running share the rest).", runtime.NumCPU(), c[0], r.apiserversText(c, "%.2f"))
		}
		if c, ok := cores("floor", "floor-end"); ok {
			text += fmt.Sprintf(" During the floor: %s.", r.apiserversText(c, "%.2f"))
		}
		if a, ok := r.requestRow(replHubA, "initial sync"); ok && a.Writes > 0 {
			text += fmt.Sprintf(" The replicator also wrote %d times to hub A during the sync (marks on the originals); the floor writes nothing there.", a.Writes)
		}
		rep.analysis("%s", text)
	}

	for _, phase := range replPhases {
		e2e, ok1 := rep.value(lagID(phase, "p99"))
		own, ok2 := rep.value(ownLagID(phase, "p99"))
		if !ok1 {
			continue
		}
		verdict := "meets"
		if e2e > replLagLimit {
			verdict = "misses"
		}
		text := fmt.Sprintf("Lag of %s: p99 %.3f s end to end (until the change is on every standby) %s the %g s target.", phaseTitle(phase), e2e, verdict, replLagLimit)
		if ok2 {
			text += fmt.Sprintf(" The replicator's own histogram puts its p99 (its watch event from A → its write to a standby done) at about %.3f s "+
				"(interpolated inside the histogram's buckets, whose bounds are 5, 10, 25, 50, 100, 250, 500 ms, 1 s, …).", own)
			if own <= e2e {
				text += " The rest of the end-to-end lag is the watch delivery from A to the replicator and from the standbys to the benchmark's informers."
			} else {
				text += " That estimate is above the end-to-end figure: the buckets are coarser than the difference."
			}
		}
		rep.analysis("%s", text)
	}
	if c, ok := cores("changes", "changes-end"); ok {
		rep.analysis("During the change phases the replicator used %.2f cores on average; %s.", c[0], r.apiserversText(c, "%.2f"))
	}
	for _, hub := range r.standbyNames() {
		if v, ok := rep.value(changeReqsID(hub)); ok && v > replPerChangeLimit {
			rep.analysis("Requests per change to %s: %.3f, above the target of 1.0; see the breakdown of the whole run for the extra requests.", hub, v)
		}
	}

	if peak, ok := rep.value(figRSSPeak); ok {
		// Hub A: works, ManagedClusters, leases, add-ons, placements; each standby the same but the leases.
		cached := (total + 2*r.s.clusters + 2*r.s.perTenth()) + len(r.watchers)*(total+r.s.clusters+2*r.s.perTenth())
		verdict := "within"
		if peak > replRSSLimitMiB {
			verdict = "over"
		}
		text := fmt.Sprintf("Memory: peak RSS %.0f MiB up to the end of the idle window is %s the %g MiB target.", peak, verdict, replRSSLimitMiB)
		if v, ok := rep.value(figFlipRSS); ok {
			text += fmt.Sprintf(" During the hub loss it reached %.0f MiB.", v)
		}
		if steady, ok := rep.value(figRSSSteady); ok {
			text += fmt.Sprintf(" Hub A and the %d standbys hold %d replicated objects and leases between them (hub A's %d ManifestWorks, %d ManagedClusters, "+
				"%d leases, %d ManagedClusterAddOns and %d Placements, and each standby's copies); the steady RSS, the process's fixed part included, "+
				"is %.2f KiB per such object", len(r.watchers), cached, total, r.s.clusters, r.s.clusters, r.s.perTenth(), r.s.perTenth(), steady*1024/float64(cached))
			if r.baselineKiB > 0 {
				text += fmt.Sprintf(", %.2f KiB above the baseline RSS of a replicator with nothing to replicate", (steady-mib(r.baselineKiB))*1024/float64(cached))
			}
			text += "."
		}
		text += r.memoryBreakdown()
		rep.analysis("%s", text)
	}
	if v, ok := rep.value(figCPUIdle); ok {
		verdict := "meets"
		if v > replIdleCPULimit {
			verdict = "misses"
		}
		rep.analysis("Idle CPU: %.2f CPU s per minute %s the %g target (leases renewed once a minute each on hub A, nothing else changes).", v, verdict, replIdleCPULimit)
	}
	if _, secs, ok := r.cpuDelta("flip", "flip-end"); ok {
		text := fmt.Sprintf("Hub loss: handled in %.1f s.", secs)
		for _, hub := range r.standbyNames() {
			if row, ok := r.requestRow(hub, "hub loss"); ok {
				text += fmt.Sprintf(" To %s: %d requests, %d writes, %d errors (%.0f/s).", hub, row.Requests, row.Writes, row.Errors, row.PerSec)
			}
		}
		if c, ok := cores("flip", "flip-end"); ok {
			text += fmt.Sprintf(" The replicator used %.2f cores on average meanwhile; %s.", c[0], r.apiserversText(c, "%.2f"))
		}
		rep.analysis("%s", text)
	}
	if b, ok := r.requestRow(replHubB, "whole run"); ok {
		statusWrites := 0
		rep.mu.Lock()
		for _, br := range rep.Breakdown {
			if br.Hub == replHubB && strings.HasPrefix(br.Phase, "whole run") && strings.HasPrefix(br.Request, "update replicationconfigs/status") {
				statusWrites += br.Count
			}
		}
		rep.mu.Unlock()
		expected := b.Seconds / defaults.StatusInterval.Seconds()
		if float64(statusWrites) > 2*expected {
			rep.analysis("Status writes: the replicator updated its ReplicationConfig's status %d times in %.0f s (one every %.2f s), "+
				"while --status-interval is %s (at most about %.0f writes).", statusWrites, b.Seconds, b.Seconds/float64(statusWrites),
				defaults.StatusInterval, expected)
		}
	}

	r.profilesMu.Lock()
	profiles := append([]replProfile(nil), r.profiles...)
	r.profilesMu.Unlock()
	for _, p := range profiles {
		what := "CPU profile"
		if strings.HasPrefix(p.name, "heap") {
			what = "heap profile (in-use bytes)"
		}
		rep.analysis("%s %s (%s; %s; columns flat, flat%%, sum%%, cum, cum%%), top functions: %s", what, p.name, p.file, p.total,
			strings.Join(p.top, " · "))
	}
}

// measureBaseline runs the replicator binary for a ReplicationConfig that does not exist (so it replicates
// nothing and caches no hub object) and records its RSS once it serves: the process's fixed part.
func (r *replRun) measureBaseline(ctx context.Context, kubeconfigFile string) {
	port, err := freePort()
	if err != nil {
		r.rep.note("Baseline RSS not measured: %v", err)
		return
	}
	p := &agentProc{
		cfg:    agentConfig{cluster: "replicator-baseline", kind: "replicator"},
		binary: r.b.oursBinary,
		args: []string{"replicator", "--kubeconfig=" + kubeconfigFile, "--namespace=" + replNamespace,
			"--config-name=absent", "--disable-leader-election", "--listen=127.0.0.1:" + strconv.Itoa(port)},
		logPath:  filepath.Join(r.logDir, "replicator-baseline.log"),
		loopDone: make(chan struct{}),
	}
	if err := p.spawn(); err != nil {
		r.rep.note("Baseline RSS not measured: %v", err)
		return
	}
	go p.loop()
	defer p.stop()
	newReplMetricsClient(r.hubs[1].AdminConfig, port).waitServing(ctx, 15*time.Second)
	if err := r.b.sleep(5 * time.Second); err != nil {
		return
	}
	m, err := readMemory(p.pid())
	if err != nil {
		r.rep.note("Baseline RSS not measured: %v", err)
		return
	}
	r.baselineKiB = m.RSSKiB
	r.rep.method("Baseline: the same binary and flags with --config-name naming no ReplicationConfig (it serves and watches its "+
		"namespace's Secrets and ReplicationConfigs, and replicates nothing) had an RSS of %.1f MiB (peak %.1f MiB) 5 s after it "+
		"began serving.", mib(m.RSSKiB), mib(m.PeakKiB))
}

// reportClusterCopies adds to the initial sync's detail when all ManagedClusters were on each standby.
func (r *replRun) reportClusterCopies() {
	start, _, ok := r.at("start")
	if !ok || !r.rep.declared(figSync) {
		return
	}
	if _, measured := r.rep.value(figSync); !measured {
		return
	}
	var parts []string
	for _, w := range r.watchers {
		w.mu.Lock()
		k := string(failoverv1alpha1.KindManagedCluster) + "|" + attrFrom + "|" + replHubA
		if at, ok := w.reached[k]; ok {
			parts = append(parts, fmt.Sprintf("all %d ManagedClusters on %s after %.1f s", w.want[failoverv1alpha1.KindManagedCluster], w.hub, at.Sub(start).Seconds()))
		} else {
			parts = append(parts, fmt.Sprintf("%d of the %d ManagedClusters were ever seen on %s as copies at once", w.counts[k], w.want[failoverv1alpha1.KindManagedCluster], w.hub))
		}
		w.mu.Unlock()
	}
	r.rep.addDetail(figSync, strings.Join(parts, ", "))
}

// memoryBreakdown explains the replicator's RSS from the Go runtime's own figures on /metrics.
func (r *replRun) memoryBreakdown() string {
	p := r.endMetrics
	if p == nil {
		return ""
	}
	get := func(name string) (float64, bool) {
		v, ok := p[name]
		return v / (1 << 20), ok
	}
	rss, ok1 := get("process_resident_memory_bytes")
	inuse, ok2 := get("go_memstats_heap_inuse_bytes")
	alloc, ok3 := get("go_memstats_heap_alloc_bytes")
	idle, ok4 := get("go_memstats_heap_idle_bytes")
	released, ok5 := get("go_memstats_heap_released_bytes")
	nextGC, ok6 := get("go_memstats_next_gc_bytes")
	stacks, _ := get("go_memstats_stack_inuse_bytes")
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return ""
	}
	text := fmt.Sprintf(" The Go runtime's figures at the end of the replicator's run, after the hub loss (its /metrics): RSS %.0f MiB; heap in use %.0f MiB, of which "+
		"%.0f MiB allocated objects (live ones and garbage not yet collected; the next GC starts at %.0f MiB: the replicator's "+
		"GC target, replicator.ReplicatorGCPercent unless GOGC is set, lets the heap grow 50 %% beyond the live size); heap idle %.0f MiB, %.0f MiB of it not yet returned to the OS; stacks %.0f MiB.",
		rss, inuse, alloc, nextGC, idle, idle-released, stacks)
	if r.baselineKiB > 0 {
		text += fmt.Sprintf(" A replicator with nothing to replicate has an RSS of %.0f MiB (binary, libraries, runtime): "+
			"the hub objects and the garbage of copying them account for the other %.0f MiB of the steady RSS.", mib(r.baselineKiB),
			func() float64 { v, _ := r.rep.value(figRSSSteady); return v - mib(r.baselineKiB) }())
	}
	return text
}
