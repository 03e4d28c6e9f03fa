//go:build bench

package benchmark

import (
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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/klusterlet-failover/klusterlet-failover/manifests/crd"
	replv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/direction"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// The replication scenario: one hub (A) holding the clusters and their ManifestWorks, one standby hub (B), and the
// replicator process copying A's state to B. The ReplicationConfig and the hubs' kubeconfig Secrets live on B.
const (
	// replHubA and replHubB are the hubs' names in the ReplicationConfig (and so in the copies' replicated-from
	// label and the replicator's metrics).
	replHubA = "hub-a"
	replHubB = "hub-b"
	// replNamespace holds the ReplicationConfig and the kubeconfig Secrets on hub B.
	replNamespace = "open-cluster-management-replicator"
	// replUser is the replicator's identity on both hubs (group system:masters): the audit policy logs its
	// requests only.
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
	// replDrainTimeout is how long after a change phase the benchmark waits for its last copies on hub B.
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
	// acmRestoreSync is ACM's default restoreSyncInterval: how often a passive hub looks for a newer backup.
	acmRestoreSync = 30 * time.Minute
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
	replWorkGVR = mustMirrorKind(replv1alpha1.KindManifestWork).GVR
	replMCGVR   = mustMirrorKind(replv1alpha1.KindManagedCluster).GVR
)

func mustMirrorKind(name replv1alpha1.ReplicatedKind) mirror.Kind {
	k, ok := mirror.KindByName(name)
	if !ok {
		panic(fmt.Sprintf("no mirror.Kind %s", name))
	}
	return k
}

// replSettings are the scenario's BENCH_REPL_* settings.
type replSettings struct {
	clusters, works, rate int
	window, syncTimeout   time.Duration
}

func readReplSettings(t *testing.T) replSettings {
	s := replSettings{
		clusters:    envInt(t, "BENCH_REPL_CLUSTERS", 1000),
		works:       envInt(t, "BENCH_REPL_WORKS", 10),
		rate:        envInt(t, "BENCH_REPL_RATE", 100),
		window:      envDuration(t, "BENCH_REPL_WINDOW", 60*time.Second),
		syncTimeout: envDuration(t, "BENCH_REPL_SYNC_TIMEOUT", 10*time.Minute),
	}
	if s.clusters < 1 || s.works < 1 || s.rate < 1 {
		t.Fatal("BENCH_REPL_CLUSTERS, BENCH_REPL_WORKS and BENCH_REPL_RATE must be at least 1")
	}
	return s
}

// Figure ids of the replication report.
const (
	figSync        = "initial_sync"
	figRSSPeak     = "rss_peak"
	figRSSSteady   = "rss_steady"
	figCPUSync     = "cpu_initial_sync"
	figCPUChanges  = "cpu_changes"
	figCPUIdle     = "cpu_idle"
	figChangeRate  = "change_rate"
	figSyncReqsB   = "requests_b_initial_sync"
	figChangeReqsB = "requests_b_per_change"
)

// The change phases, in the order they run.
var replPhases = []string{"create", "update", "delete"}

func lagID(phase, q string) string    { return "lag_" + phase + "_" + q }
func ownLagID(phase, q string) string { return "replicator_lag_" + phase + "_" + q }
func sendLagID(phase string) string   { return "lag_" + phase + "_p99_from_send" }
func replLagLimit() float64           { return 1 }
func percentileTitle(q string) string { return map[string]string{"p50": "median", "p99": "p99"}[q] }
func phaseTitle(phase string) string {
	return map[string]string{"create": "creates", "update": "updates", "delete": "deletes"}[phase]
}
func workName(i int) string                { return fmt.Sprintf("work-%02d", i) }
func lagWorkName(k int) string             { return fmt.Sprintf("lag-%05d", k) }
func clusterName(i int) string             { return fmt.Sprintf("cluster-%04d", i) }
func objKey(namespace, name string) string { return namespace + "/" + name }

// runReplicationScenario runs the replication scenario as a subtest and writes its report.
func (b *bench) runReplicationScenario(t *testing.T) {
	s := readReplSettings(t)
	defaults := replicator.NewOptions()
	settings := map[string]string{
		"BENCH_REPL_CLUSTERS": strconv.Itoa(s.clusters), "BENCH_REPL_WORKS": strconv.Itoa(s.works),
		"BENCH_REPL_RATE": strconv.Itoa(s.rate), "BENCH_REPL_WINDOW": s.window.String(),
		"BENCH_REPL_SYNC_TIMEOUT": s.syncTimeout.String(),
		"replicator flags":        fmt.Sprintf("defaults (--workers %d, --hub-kube-api-qps %g, --hub-kube-api-burst %d, --hub-probe-interval %s)", defaults.Workers, defaults.HubQPS, defaults.HubBurst, defaults.HubProbeInterval),
	}
	binDir, _ := framework.BinariesDir()
	versions := map[string]string{
		"klusterlet-failover (replicator)": commandOutput(b.oursBinary, "version"),
		"kube-apiserver, etcd":             filepath.Base(binDir) + " (hack/build-test-binaries.sh cache entry)",
	}
	rep := newReplReport(b.outDir, b.command, settings, versions)
	declareReplFigures(rep, s)
	rep.note("Measured on a shared 2-core machine (another engineer's integration tests may run at the same time): both hubs' " +
		"kube-apiservers and etcds, the replicator and the benchmark's own clients share those cores, so times and CPU seconds carry noise.")
	rep.note("Logs of this run (replicator, hubs, profiles, audit logs): %s", b.logDir)
	if err := rep.write(); err != nil {
		t.Errorf("writing the replication report: %v", err)
	}
	started := time.Now()
	if ok := t.Run(scenarioReplication, func(t *testing.T) { b.runReplication(t, s, rep) }); !ok {
		rep.fail("the replication scenario failed after %s (see the `make bench` output and %s)", time.Since(started).Round(time.Second), b.logDir)
	}
	if err := rep.write(); err != nil {
		t.Errorf("writing the replication report: %v", err)
	}
}

func declareReplFigures(rep *replReport, s replSettings) {
	total := s.clusters * s.works
	rep.declare(figSync, fmt.Sprintf("initial sync: replicator start → all %d ManifestWorks on hub B as copies", total), "s", "≤ 60 s", 60)
	for _, phase := range replPhases {
		for _, q := range []string{"p50", "p99"} {
			target, limit := "", 0.0
			if q == "p99" {
				target, limit = "≤ 1 s", replLagLimit()
			}
			rep.declare(lagID(phase, q), fmt.Sprintf("replication lag of %s, %s (end to end: write on A returned → copy's change seen by a watch on B)",
				phaseTitle(phase), percentileTitle(q)), "s", target, limit)
		}
	}
	for _, phase := range replPhases {
		rep.declare(sendLagID(phase), fmt.Sprintf("replication lag of %s, p99, from the moment the write to A was sent", phaseTitle(phase)), "s", "", 0)
	}
	for _, phase := range replPhases {
		for _, q := range []string{"p50", "p99"} {
			rep.declare(ownLagID(phase, q), fmt.Sprintf("replicator's own lag histogram (replication_lag_seconds), %s, %s", phaseTitle(phase), percentileTitle(q)),
				"s", "", 0)
		}
	}
	rep.declare(figChangeRate, fmt.Sprintf("changes made on hub A per second (asked: %d)", s.rate), "changes/s", "", 0)
	rep.declare(figRSSPeak, "replicator peak RSS (VmHWM)", "MiB", "≤ 200 MiB", 200)
	rep.declare(figRSSSteady, "replicator steady RSS (median VmRSS during the changes and the idle window)", "MiB", "≤ 200 MiB", 200)
	rep.declare(figCPUSync, "replicator CPU time, start → initial sync done", "CPU s", "", 0)
	rep.declare(figCPUChanges, "replicator CPU time per 1000 changes (change phases)", "CPU s", "", 0)
	rep.declare(figCPUIdle, "replicator CPU time per minute, idle (leases renewed, nothing changes)", "CPU s/min", "", 0)
	rep.declare(figSyncReqsB, "replicator requests to hub B during the initial sync, per ManifestWork", "requests", "", 0)
	rep.declare(figChangeReqsB, "replicator requests to hub B per change during the change phases", "requests", "", 0)
}

// replProcSample is one reading of the replicator process.
type replProcSample struct {
	at     time.Time
	rssKiB int64
}

// replRun is the state of one run of the scenario.
type replRun struct {
	b       *bench
	t       *testing.T
	s       replSettings
	rep     *replReport
	hubA    *framework.Hub
	hubB    *framework.Hub
	dynA    dynamic.Interface
	proc    *agentProc
	metrics *replMetricsClient
	watcher *replWatcher

	samplesMu sync.Mutex
	samples   []replProcSample
	// marks are the phase boundaries, by name, for the audit counts and the CPU figures.
	marksMu sync.Mutex
	marks   map[string]time.Time
	cpu     map[string][3]float64 // mark → CPU s of the replicator, apiserver A, apiserver B
	pids    [3]int

	profilesMu sync.Mutex
	profiles   []replProfile
	// baselineKiB is the RSS of a replicator process with no ReplicationConfig to run; endMetrics the last
	// scrape of the replicator's /metrics.
	baselineKiB int64
	endMetrics  promSamples
}

func (r *replRun) mark(name string) {
	now := time.Now()
	var cpu [3]float64
	for i, pid := range r.pids {
		if pid > 0 {
			cpu[i], _ = cpuSeconds(pid)
		}
	}
	r.marksMu.Lock()
	defer r.marksMu.Unlock()
	r.marks[name] = now
	r.cpu[name] = cpu
}

func (r *replRun) at(name string) (time.Time, [3]float64, bool) {
	r.marksMu.Lock()
	defer r.marksMu.Unlock()
	t, ok := r.marks[name]
	return t, r.cpu[name], ok
}

func (b *bench) runReplication(t *testing.T, s replSettings, rep *replReport) {
	r := &replRun{b: b, t: t, s: s, rep: rep, marks: map[string]time.Time{}, cpu: map[string][3]float64{}}
	ctx := b.ctx
	r.hubA = framework.StartHub(t, framework.HubOptions{Name: "repl-a", Signer: framework.SignerNone, AuditPolicy: []byte(replAuditPolicy)})
	r.hubB = framework.StartHub(t, framework.HubOptions{Name: "repl-b", Signer: framework.SignerNone, AuditPolicy: []byte(replAuditPolicy)})
	var err error
	if r.pids[1], err = apiserverPID(r.hubA.DirectURL()); err != nil {
		t.Fatal(err)
	}
	if r.pids[2], err = apiserverPID(r.hubB.DirectURL()); err != nil {
		t.Fatal(err)
	}
	if r.dynA, err = dynamic.NewForConfig(unthrottled(r.hubA.AdminConfig)); err != nil {
		t.Fatal(err)
	}
	for _, h := range []*framework.Hub{r.hubA, r.hubB} {
		installPlacementCRD(t, h)
	}
	kubeconfigB := r.setUpReplicatorConfig()
	rep.method("%s", replMethodSetup(s))

	// Hub A's clusters and works, before the replicator starts.
	populated := time.Now()
	workBytes := r.populate(ctx)
	t.Logf("replication: created %d clusters with %d ManifestWorks each on hub A in %s", s.clusters, s.works, time.Since(populated).Round(time.Second))
	rep.method("Hub A was populated before the replicator started, in %s with %d concurrent clusters: per cluster a Namespace, a "+
		"ManagedCluster (spec.hubAcceptsClient true, leaseDurationSeconds %d), the Lease %s (holderIdentity %s, renewTime now, "+
		"leaseDurationSeconds %d) and %d ManifestWorks, each holding one ConfigMap (a marker value and %d filler bytes; %d bytes of JSON "+
		"per ManifestWork spec). From then on the benchmark renews every lease once per %d s in the agents' stead (spread evenly over "+
		"the period), so that each lease's renewTime is soon more than %s after its creation: agent-renewed, as the replicator "+
		"decides a cluster's source hub.", time.Since(populated).Round(time.Second), replPopulateWorkers, replLeaseSeconds,
		direction.LeaseName, replHolder, replLeaseSeconds, s.works, replPayloadBytes, workBytes, replLeaseSeconds, direction.CreationSlack)
	leaseCtx, stopLeases := context.WithCancel(ctx)
	leaseErrs := r.renewLeases(leaseCtx)
	defer stopLeases()

	// The watch on hub B that observes the copies.
	r.watcher = startReplWatcher(ctx, t, r.hubB, s.clusters*s.works, s.clusters)
	rep.method("Measurements. Initial sync: from the start of the replicator process to the moment the benchmark's informer on hub B "+
		"has seen the last of the %d ManifestWorks as a copy. Then three phases of %s each make changes on hub A at %d/s (%d "+
		"concurrent writers, each change due at its slot): creates of new ManifestWorks (round robin over the clusters), merge-patch "+
		"updates of the spec of those ManifestWorks (a new marker value each), and deletes of them; after each phase the benchmark "+
		"waits up to %s for the copies. The lag of a change runs from the moment its write to hub A returned to the moment the "+
		"informer on B first showed the copy with the new marker (creates, updates) or its delete event (deletes); the p99 from the "+
		"moment the write was sent, which adds hub A's write latency, is listed too. Percentiles are nearest-rank over every change "+
		"whose write succeeded; a change never seen counts as slower than all others. The replicator's own histogram "+
		"(klusterlet_failover_replicator_replication_lag_seconds, kind ManifestWork, hub %s) is read from its /metrics "+
		"(--listen, authenticated with hub B's admin client certificate: the server delegates to hub B) before and after each "+
		"phase. RSS comes from /proc/<pid>/status (VmHWM for the peak; VmRSS every %s for the steady figure), CPU time from "+
		"/proc/<pid>/stat (utime+stime) of the replicator and of each hub's kube-apiserver at the phase boundaries; after the "+
		"phases comes an idle window of %s (leases still renewed). Two CPU profiles of %d s (/debug/pprof/profile: from the "+
		"start of the initial sync, and during the update phase) and a heap profile after the initial sync are taken from the "+
		"replicator and kept with the logs; profiling costs the replicator a few per cent of CPU while it runs.",
		s.clusters*s.works, s.window, s.rate, replChangeWorkers, replDrainTimeout, replHubB, replSampleInterval, replIdleWindow, replProfileSeconds)

	// The replicator.
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	r.metrics = newReplMetricsClient(r.hubB.AdminConfig, port)
	kubeconfigFile := filepath.Join(b.workDir, "replicator-hub-b.kubeconfig")
	if err := os.WriteFile(kubeconfigFile, kubeconfigB, 0o600); err != nil {
		t.Fatal(err)
	}
	r.measureBaseline(ctx, kubeconfigFile)
	r.proc = &agentProc{
		cfg:    agentConfig{cluster: "replicator", kind: "replicator"},
		binary: b.oursBinary,
		args: []string{"replicator", "--kubeconfig=" + kubeconfigFile, "--namespace=" + replNamespace,
			"--config-name=" + replicator.DefaultConfigName, "--disable-leader-election", "--listen=127.0.0.1:" + strconv.Itoa(port)},
		logPath:  filepath.Join(b.logDir, "replicator.log"),
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
		r.finish(leaseErrs, stopLeases)
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
	r.mark("changes-end")
	if err := b.sleep(replIdleWindow); err != nil {
		t.Fatal("interrupted")
	}
	r.mark("idle-end")
	r.finish(leaseErrs, stopLeases)
}

// finish stops the lease renewals, reads the last samples and writes every figure measured so far.
func (r *replRun) finish(leaseErrs func() (int, int, error), stopLeases context.CancelFunc) {
	t, rep := r.t, r.rep
	r.mark("end")
	stopLeases()
	renewed, failed, lastErr := leaseErrs()
	rep.method("Leases renewed by the benchmark during the run: %d (%d failed%s).", renewed, failed, errSuffix(lastErr))
	if err := r.proc.dead(); err != nil {
		rep.fail("the replicator exited during the run: %v", err)
	}
	r.reportMemoryCPU()
	r.reportClusterCopies()
	if samples, err := r.metrics.scrape(r.b.ctx); err == nil {
		r.reportReplicatorCounters(samples)
		r.endMetrics = samples
	}
	r.reportRequests()
	r.reportAnchor()
	r.analyse()
	if err := rep.write(); err != nil {
		t.Errorf("writing the replication report: %v", err)
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

// installPlacementCRD installs OCM's Placement CRD (cluster.open-cluster-management.io/v1beta1), which the
// framework's hubs do not serve: the replicator watches every replicated kind, Placement among them.
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
// Secret per hub (the replicator's identity) and the ReplicationConfig; it returns the replicator's kubeconfig for
// hub B (its --kubeconfig).
func (r *replRun) setUpReplicatorConfig() []byte {
	t, ctx := r.t, r.b.ctx
	def, err := crd.ReplicationConfigCRD()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(r.hubB.AdminConfig, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{def}, MaxTime: framework.DefaultStartTimeout}); err != nil {
		t.Fatalf("installing the ReplicationConfig CRD on hub B: %v", err)
	}
	if _, err := r.hubB.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: replNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	kubeconfigs := map[string][]byte{
		replHubA: r.hubA.UserKubeconfig(replUser, now.Add(-time.Hour), now.Add(24*time.Hour), "system:masters"),
		replHubB: r.hubB.UserKubeconfig(replUser, now.Add(-time.Hour), now.Add(24*time.Hour), "system:masters"),
	}
	spec := replv1alpha1.ReplicationConfigSpec{}
	for _, name := range []string{replHubA, replHubB} {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-kubeconfig", Namespace: replNamespace},
			Data:       map[string][]byte{replv1alpha1.ReplicationKubeconfigSecretKey: kubeconfigs[name]},
		}
		if _, err := r.hubB.Kube.CoreV1().Secrets(replNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		spec.Hubs = append(spec.Hubs, replv1alpha1.ReplicationHub{Name: name, KubeconfigSecret: replv1alpha1.KubeconfigSecretReference{Name: secret.Name}})
	}
	client, err := versioned.NewForConfig(r.hubB.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	rc := &replv1alpha1.ReplicationConfig{ObjectMeta: metav1.ObjectMeta{Name: replicator.DefaultConfigName, Namespace: replNamespace}, Spec: spec}
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, func() (bool, error) {
		_, err := client.FailoverV1alpha1().ReplicationConfigs(replNamespace).Create(ctx, rc, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), err
	}, "ReplicationConfig created on hub B")
	return kubeconfigs[replHubB]
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

func replWorkSpec(name, value string) map[string]any {
	return map[string]any{"workload": map[string]any{"manifests": []any{map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"data":     map[string]any{"value": value, "payload": strings.Repeat("x", replPayloadBytes)},
	}}}}
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

// populate creates the clusters, their namespaces, leases and ManifestWorks on hub A; it returns the size of one
// ManifestWork's spec as JSON.
func (r *replRun) populate(ctx context.Context) int {
	t := r.t
	kube, err := kubernetes.NewForConfig(unthrottled(r.hubA.AdminConfig))
	if err != nil {
		t.Fatal(err)
	}
	clusters, err := clusterclient.NewForConfig(unthrottled(r.hubA.AdminConfig))
	if err != nil {
		t.Fatal(err)
	}
	jobs := make(chan int)
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range replPopulateWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := r.populateCluster(ctx, kube, clusters, clusterName(i)); err != nil {
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
		t.Fatalf("populating hub A: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("interrupted")
	}
	data, _ := json.Marshal(replWorkSpec(workName(0), replInitValue))
	return len(data)
}

func (r *replRun) populateCluster(ctx context.Context, kube kubernetes.Interface, clusters clusterclient.Interface, name string) error {
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
	holder, duration := replHolder, int32(replLeaseSeconds)
	now := metav1.NowMicro()
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: direction.LeaseName, Namespace: name},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration, RenewTime: &now},
	}
	if _, err := kube.CoordinationV1().Leases(name).Create(ctx, lease, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating lease %s/%s: %w", name, direction.LeaseName, err)
	}
	for j := range r.s.works {
		_, err := r.dynA.Resource(replWorkGVR).Namespace(name).Create(ctx, replWork(name, workName(j), replInitValue), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating ManifestWork %s/%s: %w", name, workName(j), err)
		}
	}
	return nil
}

// renewLeases renews every cluster's lease on hub A once per replLeaseSeconds, spread evenly, until ctx ends. The
// returned function reports how many renewals succeeded and failed, once ctx has ended.
func (r *replRun) renewLeases(ctx context.Context) func() (int, int, error) {
	kube, err := kubernetes.NewForConfig(unthrottled(r.hubA.AdminConfig))
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
				patch := fmt.Sprintf(`{"spec":{"renewTime":%q}}`, metav1.NowMicro().Format(metav1.RFC3339Micro))
				_, err := kube.CoordinationV1().Leases(name).Patch(ctx, direction.LeaseName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
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

// replWatcher watches hub B's ManifestWorks and ManagedClusters and records when each copy (and each change of
// one) was first seen.
type replWatcher struct {
	mu sync.Mutex
	// seen maps "namespace/name|value" of a copy to when a watch event first showed it with that marker value.
	seen map[string]time.Time
	// deleted maps "namespace/name" of a copy to when its delete was seen.
	deleted map[string]time.Time
	// initial counts the copies of the works created before the replicator started; initialDone is when the
	// last of them was seen; progress records when each quarter was reached.
	initial, wantInitial int
	initialDone          time.Time
	firstCopy            time.Time
	progress             map[int]time.Time
	clusters, wantMCs    int
	clustersDone         time.Time
	foreign              int
	done                 chan struct{}
}

func startReplWatcher(ctx context.Context, t *testing.T, hub *framework.Hub, wantInitial, wantMCs int) *replWatcher {
	w := &replWatcher{seen: map[string]time.Time{}, deleted: map[string]time.Time{}, wantInitial: wantInitial,
		wantMCs: wantMCs, progress: map[int]time.Time{}, done: make(chan struct{})}
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
	works := dynamicinformer.NewFilteredDynamicInformer(client, replWorkGVR, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	_ = works.SetTransform(strip)
	_, _ = works.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.onWork(obj) },
		UpdateFunc: func(_, obj any) { w.onWork(obj) },
		DeleteFunc: func(obj any) { w.onWorkDelete(obj) },
	})
	mcs := dynamicinformer.NewFilteredDynamicInformer(client, replMCGVR, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	_ = mcs.SetTransform(strip)
	_, _ = mcs.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { w.onCluster(obj) },
	})
	go works.Run(ctx.Done())
	go mcs.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), works.HasSynced, mcs.HasSynced) {
		t.Fatal("the watch on hub B did not sync")
	}
	return w
}

func (w *replWatcher) onWork(obj any) {
	now := time.Now()
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if u.GetLabels()[mirror.LabelReplicatedFrom] != replHubA {
		w.mu.Lock()
		w.foreign++
		w.mu.Unlock()
		return
	}
	value := workValue(u)
	key := objKey(u.GetNamespace(), u.GetName()) + "|" + value
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.seen[key]; ok {
		return
	}
	w.seen[key] = now
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
		close(w.done)
	}
}

func (w *replWatcher) onWorkDelete(obj any) {
	now := time.Now()
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetLabels()[mirror.LabelReplicatedFrom] != replHubA {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	key := objKey(u.GetNamespace(), u.GetName())
	if _, ok := w.deleted[key]; !ok {
		w.deleted[key] = now
	}
}

func (w *replWatcher) onCluster(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetLabels()[mirror.LabelReplicatedFrom] != replHubA {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.clusters++
	if w.clusters == w.wantMCs {
		w.clustersDone = time.Now()
	}
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

// waitInitialSync waits until every initial ManifestWork is on hub B as a copy, and records the figures.
func (r *replRun) waitInitialSync(ctx context.Context) bool {
	t, rep, w := r.t, r.rep, r.watcher
	start, _, _ := r.at("start")
	timeout := time.NewTimer(r.s.syncTimeout)
	defer timeout.Stop()
	ticker := time.NewTicker(10 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-w.done:
		case <-ctx.Done():
			t.Fatal("interrupted")
		case <-ticker.C:
			if err := r.proc.dead(); err != nil {
				rep.fail("the replicator exited before the initial sync was done: %v", err)
				return false
			}
			w.mu.Lock()
			n := w.initial
			w.mu.Unlock()
			t.Logf("replication: %d of %d ManifestWorks on hub B after %s", n, w.wantInitial, time.Since(start).Round(time.Second))
			continue
		case <-timeout.C:
			w.mu.Lock()
			n, clusters := w.initial, w.clusters
			w.mu.Unlock()
			reason := fmt.Sprintf("not all %d ManifestWorks were on hub B within BENCH_REPL_SYNC_TIMEOUT=%s: %d were, and %d of %d ManagedClusters (replicator log %s)",
				w.wantInitial, r.s.syncTimeout, n, clusters, w.wantMCs, r.proc.logPath)
			rep.missing(figSync, true, "%s", reason)
			rep.fail("%s", reason)
			return false
		}
		break
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	took := w.initialDone.Sub(start).Seconds()
	quarters := []string{}
	for q := 1; q <= 4; q++ {
		quarters = append(quarters, fmt.Sprintf("%d %%: %.1f s", q*25, w.progress[q].Sub(start).Seconds()))
	}
	rep.set(figSync, took, "first copy on B after %.1f s; copies on B by share of the %d: %s",
		w.firstCopy.Sub(start).Seconds(), w.wantInitial, strings.Join(quarters, ", "))
	t.Logf("replication: initial sync of %d ManifestWorks took %.1f s", w.wantInitial, took)
	return true
}

// replChange is one change made on hub A and when its effect was seen on hub B.
type replChange struct {
	key, value   string // value "" for a delete
	sent, done   time.Time
	err          error
	seen         time.Time
	observed     bool
	lag, fromReq float64
}

// runPhase makes rate × window changes of one kind on hub A at the configured rate and measures when each is
// seen on hub B. It returns the keys of the ManifestWorks created (the create phase) or the keys it was given.
func (r *replRun) runPhase(ctx context.Context, phase string, keys []string) []string {
	t, s, rep := r.t, r.s, r.rep
	n := int(float64(s.rate) * s.window.Seconds())
	changes := make([]*replChange, n)
	for k := range changes {
		c := &replChange{}
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

	// Drain: wait for the last changes to show on hub B.
	deadline := time.Now().Add(replDrainTimeout)
	for {
		pending := 0
		for _, c := range changes {
			if c.err != nil || c.observed {
				continue
			}
			if at, ok := r.watcher.seenAt(c.key, c.value); ok {
				c.seen, c.observed = at, true
				c.lag, c.fromReq = at.Sub(c.done).Seconds(), at.Sub(c.sent).Seconds()
				continue
			}
			pending++
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
	t.Logf("replication: phase %s done", phase)
	return out
}

// apply makes change c on hub A.
func (r *replRun) apply(ctx context.Context, phase string, c *replChange) {
	namespace, name, _ := strings.Cut(c.key, "/")
	client := r.dynA.Resource(replWorkGVR).Namespace(namespace)
	c.sent = time.Now()
	switch phase {
	case "create":
		_, c.err = client.Create(ctx, replWork(namespace, name, c.value), metav1.CreateOptions{})
	case "update":
		patch, _ := json.Marshal(map[string]any{"spec": replWorkSpec(name, c.value)})
		_, c.err = client.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	case "delete":
		c.err = client.Delete(ctx, name, metav1.DeleteOptions{})
	}
	c.done = time.Now()
}

// reportLag records the lag percentiles of one phase. A change never seen on B counts as slower than every seen
// one; when it falls into a percentile, that percentile is not measured and its target is missed.
func (r *replRun) reportLag(phase string, changes []*replChange) {
	rep := r.rep
	var lags, fromReq, write []float64
	failed, unobserved, negative := 0, 0, 0
	for _, c := range changes {
		switch {
		case c.err != nil:
			failed++
		case !c.observed:
			unobserved++
		default:
			lags = append(lags, c.lag)
			fromReq = append(fromReq, c.fromReq)
			write = append(write, c.done.Sub(c.sent).Seconds())
			if c.lag < 0 {
				negative++
			}
		}
	}
	total := len(lags) + unobserved
	if total == 0 {
		for _, q := range []string{"p50", "p99"} {
			rep.missing(lagID(phase, q), false, "no change of this kind was made on hub A (%d failed)", failed)
		}
		return
	}
	sort.Float64s(lags)
	sort.Float64s(fromReq)
	sort.Float64s(write)
	detail := fmt.Sprintf("%d changes seen on B, %d not seen within %s of the end of the phase, %d writes to A failed; max %.3f s; "+
		"A's write latency median %.3f s, p99 %.3f s", len(lags), unobserved, replDrainTimeout, failed, maxOf(lags),
		percentile(write, 0.5), percentile(write, 0.99))
	if negative > 0 {
		detail += fmt.Sprintf("; %d copies were seen on B before the write's response reached the benchmark (negative lag)", negative)
	}
	for _, q := range []struct {
		id string
		p  float64
	}{{"p50", 0.5}, {"p99", 0.99}} {
		rank := int(math.Ceil(q.p*float64(total))) - 1
		if rank >= len(lags) {
			rep.missing(lagID(phase, q.id), true, "more than %.0f %% of the %d changes were not seen on hub B within %s", (1-q.p)*100, total, replDrainTimeout)
			if q.id == "p99" {
				rep.missing(sendLagID(phase), true, "as above")
			}
			continue
		}
		d := ""
		if q.id == "p99" {
			d = detail
		}
		rep.set(lagID(phase, q.id), lags[rank], "%s", d)
		if q.id == "p99" {
			rep.set(sendLagID(phase), fromReq[rank], "")
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

// reportMemoryCPU records the RSS and CPU figures from the samples and the phase marks.
func (r *replRun) reportMemoryCPU() {
	rep := r.rep
	m, err := readMemory(r.pids[0])
	if err != nil {
		rep.missing(figRSSPeak, false, "reading the replicator's memory: %v", err)
	} else {
		rep.set(figRSSPeak, mib(m.PeakKiB), "VmRSS at the end of the run %.1f MiB", mib(m.RSSKiB))
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
	cpuDelta := func(from, to string) (float64, [3]float64, float64, bool) {
		t0, c0, ok0 := r.at(from)
		t1, c1, ok1 := r.at(to)
		if !ok0 || !ok1 {
			return 0, [3]float64{}, 0, false
		}
		var d [3]float64
		for i := range d {
			d[i] = c1[i] - c0[i]
		}
		return d[0], d, t1.Sub(t0).Seconds(), true
	}
	if cpu, all, secs, ok := cpuDelta("start", "synced"); ok {
		rep.set(figCPUSync, cpu, "in %.1f s (%.2f cores on average); hub A kube-apiserver %.1f CPU s, hub B kube-apiserver %.1f CPU s meanwhile",
			secs, cpu/secs, all[1], all[2])
	}
	if cpu, all, secs, ok := cpuDelta("changes", "changes-end"); ok {
		made := r.changesMade()
		if made > 0 {
			rep.set(figCPUChanges, cpu*1000/float64(made), "%.1f CPU s for %d changes in %.0f s (%.2f cores); hub A kube-apiserver %.1f CPU s, hub B %.1f CPU s meanwhile",
				cpu, made, secs, cpu/secs, all[1], all[2])
		}
	}
	if cpu, all, secs, ok := cpuDelta("changes-end", "idle-end"); ok {
		rep.set(figCPUIdle, cpu*60/secs, "over %.0f s; hub A kube-apiserver %.2f CPU s, hub B %.2f CPU s meanwhile", secs, all[1], all[2])
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

// reportRequests counts the replicator's requests to each hub by phase from the audit logs and copies the logs
// next to the others.
func (r *replRun) reportRequests() {
	rep := r.rep
	start, _, _ := r.at("start")
	phases := []struct{ name, from, to string }{
		{"initial sync", "start", "synced"},
		{"changes (create, update, delete phases)", "changes", "changes-end"},
		{"idle", "changes-end", "idle-end"},
		{"whole run", "start", "end"},
	}
	var rows []replRequestRow
	var breakdown []replBreakdownRow
	for _, h := range []struct {
		name string
		hub  *framework.Hub
	}{{replHubA, r.hubA}, {replHubB, r.hubB}} {
		events, err := readAuditEvents(h.hub.AuditLogPath(), replUser)
		if err != nil {
			rep.note("Hub %s's audit log could not be read: %v", h.name, err)
			continue
		}
		if data, err := os.ReadFile(h.hub.AuditLogPath()); err == nil {
			_ = os.WriteFile(filepath.Join(r.b.logDir, "audit-"+h.name+".log"), data, 0o600)
		}
		for _, p := range phases {
			from, _, ok0 := r.at(p.from)
			to, _, ok1 := r.at(p.to)
			if !ok0 || !ok1 {
				continue
			}
			row := replRequestRow{Hub: h.name, Phase: p.name, Seconds: to.Sub(from).Seconds()}
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
			}
			if row.Seconds > 0 {
				row.PerSec = float64(row.Requests) / row.Seconds
			}
			rows = append(rows, row)
			if h.name == replHubB && p.to == "synced" {
				rep.set(figSyncReqsB, float64(row.Requests)/float64(r.s.clusters*r.s.works),
					"%d requests (%d writes) in %.0f s: %.0f/s", row.Requests, row.Writes, row.Seconds, row.PerSec)
			}
			if h.name == replHubB && p.to == "changes-end" {
				if made := r.changesMade(); made > 0 {
					rep.set(figChangeReqsB, float64(row.Requests)/float64(made), "%d requests (%d writes) for %d changes", row.Requests, row.Writes, made)
				}
			}
		}
		counts := map[string]int{}
		for _, ev := range events {
			if !ev.RequestReceivedTimestamp.Before(start) {
				counts[requestName(ev)]++
			}
		}
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
		for _, n := range names {
			breakdown = append(breakdown, replBreakdownRow{Hub: h.name, Request: n, Count: counts[n]})
		}
	}
	rep.setRequests(rows, breakdown)
}

// readAuditEvents returns the last stage of every request of user in an audit log, in log order.
func readAuditEvents(file, user string) ([]*auditEvent, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	byID := map[string]*auditEvent{}
	var ids []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		ev := &auditEvent{}
		if err := json.Unmarshal([]byte(line), ev); err != nil {
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

// replMethodSetup describes the test bed.
func replMethodSetup(s replSettings) string {
	return fmt.Sprintf("Two hubs from test/framework, each a real kube-apiserver and etcd with OCM's hub CRDs (plus Placement), "+
		"started without OCM's hub controller and without a CSR signer (nothing registers; the CPU goes to the replicator): "+
		"hub A (%s) holds %d ManagedClusters with %d ManifestWorks each, hub B (%s) is the standby and hosts the "+
		"ReplicationConfig (all kinds, hubs %s then %s) and the two kubeconfig Secrets. The replicator is the binary of "+
		"`make build` (`klusterlet-failover replicator --kubeconfig=<hub B> --namespace=%s --disable-leader-election`, default "+
		"flags otherwise), a process of its own; its identity on both hubs is the user %s in group system:masters, whose "+
		"requests, and only those, each hub's audit log records (Metadata level). Copies are observed by the benchmark's own "+
		"informer on hub B (ManifestWorks and ManagedClusters, all namespaces): a copy counts when it carries %s=%s and, for "+
		"creates and updates, the ConfigMap marker value the change wrote.", replHubA, s.clusters, s.works, replHubB,
		replHubA, replHubB, replNamespace, replUser, mirror.LabelReplicatedFrom, replHubA)
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

// reportOwnLag records the replicator's own lag percentiles for ManifestWorks copied to hub B during a phase.
func (r *replRun) reportOwnLag(phase string, before, after promSamples) {
	labels := fmt.Sprintf(`hub=%q,kind=%q`, replHubB, string(replv1alpha1.KindManifestWork))
	b, a := before.histogram(replLagMetric, labels), after.histogram(replLagMetric, labels)
	for _, q := range []struct {
		id string
		p  float64
	}{{"p50", 0.5}, {"p99", 0.99}} {
		v, n, ok := histogramQuantile(q.p, b, a)
		if !ok {
			r.rep.missing(ownLagID(phase, q.id), false, "no observation in the replicator's histogram during the phase")
			continue
		}
		r.rep.set(ownLagID(phase, q.id), v, "%.0f observations; from the replicator's watch event on A to its completed write on B, interpolated in the histogram's buckets", n)
	}
}

// reportReplicatorCounters notes the replicator's write, conflict and error counters at the end of the run.
func (r *replRun) reportReplicatorCounters(p promSamples) {
	var parts []string
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, prefix := range []string{"klusterlet_failover_replicator_objects_mirrored_total", "klusterlet_failover_replicator_conflicts_total",
			"klusterlet_failover_replicator_write_errors_total", "klusterlet_failover_replicator_hub_reachable"} {
			if strings.HasPrefix(k, prefix+"{") {
				parts = append(parts, fmt.Sprintf("%s %s", strings.TrimPrefix(k, "klusterlet_failover_replicator_"), num(p[k])))
			}
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "none of objects_mirrored_total, conflicts_total, write_errors_total, hub_reachable was exported")
	}
	r.rep.note("The replicator's counters at the end of the run: %s.", strings.Join(parts, "; "))
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
	file := filepath.Join(r.b.logDir, "replicator-"+name+".pprof")
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

// analyse explains the figures, from what this run measured: what bounds the initial sync, where the lag goes,
// what the memory holds, and what the profiles show.
func (r *replRun) analyse() {
	rep := r.rep
	defaults := replicator.NewOptions()
	row := func(hub, phasePrefix string) (replRequestRow, bool) {
		rep.mu.Lock()
		defer rep.mu.Unlock()
		for _, row := range rep.Requests {
			if row.Hub == hub && strings.HasPrefix(row.Phase, phasePrefix) {
				return row, true
			}
		}
		return replRequestRow{}, false
	}
	cores := func(from, to string) ([3]float64, bool) {
		t0, c0, ok0 := r.at(from)
		t1, c1, ok1 := r.at(to)
		var out [3]float64
		if !ok0 || !ok1 || !t1.After(t0) {
			return out, false
		}
		for i := range out {
			out[i] = (c1[i] - c0[i]) / t1.Sub(t0).Seconds()
		}
		return out, true
	}
	total := r.s.clusters * r.s.works

	if sync, ok := rep.value(figSync); ok {
		verdict := "meets"
		if sync > 60 {
			verdict = "misses"
		}
		text := fmt.Sprintf("Initial sync: %.1f s for %d ManifestWorks %s the 60 s target.", sync, total, verdict)
		if b, ok := row(replHubB, "initial sync"); ok {
			floor := math.Max(0, float64(b.Writes-defaults.HubBurst)) / float64(defaults.HubQPS)
			text += fmt.Sprintf(" Meanwhile the replicator sent hub B %d requests, %d of them writes (%.2f writes per ManifestWork: the "+
				"ManifestWorks, the %d ManagedClusters, and the cluster namespaces, each after a create that failed for the missing "+
				"namespace), %.0f requests/s. Its client-side limit of %g requests/s per hub (burst %d) alone needs %.0f s for those "+
				"writes.", b.Requests, b.Writes, float64(b.Writes)/float64(total), r.s.clusters, b.PerSec, defaults.HubQPS, defaults.HubBurst, floor)
			if b.PerSec >= 0.9*float64(defaults.HubQPS) {
				text += " The requests went out at that limit: the rate limiter, not CPU, set the pace."
			} else {
				text += " The requests went out below that limit, so something else set the pace."
			}
		}
		if c, ok := cores("start", "synced"); ok {
			text += fmt.Sprintf(" CPU on average during the sync, of the machine's %d cores: replicator %.2f, hub A kube-apiserver %.2f, "+
				"hub B kube-apiserver %.2f (etcd, the benchmark and anything else running share the rest).", runtime.NumCPU(), c[0], c[1], c[2])
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
		if e2e > replLagLimit() {
			verdict = "misses"
		}
		text := fmt.Sprintf("Lag of %s: p99 %.3f s end to end %s the 1 s target.", phaseTitle(phase), e2e, verdict)
		if ok2 {
			text += fmt.Sprintf(" The replicator's own histogram puts its p99 (its watch event from A → its write to B done) at about %.3f s "+
				"(interpolated inside the histogram's buckets, whose bounds are 5, 10, 25, 50, 100, 250, 500 ms, 1 s, …).", own)
			if own <= e2e {
				text += " The rest of the end-to-end lag is the watch delivery from A to the replicator and from B to the benchmark's informer."
			} else {
				text += " That estimate is above the end-to-end figure: the buckets are coarser than the difference."
			}
		}
		rep.analysis("%s", text)
	}
	if c, ok := cores("changes", "changes-end"); ok {
		rep.analysis("During the change phases the replicator used %.2f cores on average, hub A's kube-apiserver %.2f and hub B's %.2f.", c[0], c[1], c[2])
	}

	if peak, ok := rep.value(figRSSPeak); ok {
		cached := 2*total + 4*r.s.clusters // both hubs' ManifestWorks, ManagedClusters and leases
		verdict := "within"
		if peak > 200 {
			verdict = "over"
		}
		text := fmt.Sprintf("Memory: peak RSS %.0f MiB is %s the 200 MiB target.", peak, verdict)
		if steady, ok := rep.value(figRSSSteady); ok {
			text += fmt.Sprintf(" The replicator caches every replicated object of both hubs (its informers drop managedFields and "+
				"status): at least %d objects here (each hub's %d ManifestWorks, %d ManagedClusters and %d leases); the steady RSS, "+
				"the process's fixed part included, is %.1f KiB per cached object", cached, total, r.s.clusters, r.s.clusters,
				steady*1024/float64(cached))
			if r.baselineKiB > 0 {
				text += fmt.Sprintf(", %.1f KiB above the baseline RSS of a replicator with nothing to replicate", (steady-mib(r.baselineKiB))*1024/float64(cached))
			}
			text += "."
		}
		text += r.memoryBreakdown()
		rep.analysis("%s", text)
	}
	if b, ok := row(replHubB, "whole run"); ok {
		statusWrites := 0
		rep.mu.Lock()
		for _, br := range rep.Breakdown {
			if br.Hub == replHubB && strings.HasPrefix(br.Request, "update replicationconfigs/status") {
				statusWrites += br.Count
			}
		}
		rep.mu.Unlock()
		expected := b.Seconds / defaults.StatusInterval.Seconds()
		if float64(statusWrites) > 2*expected {
			rep.analysis("Status writes: the replicator updated its ReplicationConfig's status %d times in %.0f s (one every %.2f s), "+
				"while --status-interval is %s (at most about %.0f writes). Every status write is an update event of the "+
				"ReplicationConfig informer, which wakes the replicator's loop at once; it recomputes the status and, while counts "+
				"change (during a sync or a burst of changes), writes it again: the interval does not bound the write rate.",
				statusWrites, b.Seconds, b.Seconds/float64(statusWrites), defaults.StatusInterval, expected)
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
		logPath:  filepath.Join(r.b.logDir, "replicator-baseline.log"),
		loopDone: make(chan struct{}),
	}
	if err := p.spawn(); err != nil {
		r.rep.note("Baseline RSS not measured: %v", err)
		return
	}
	go p.loop()
	defer p.stop()
	newReplMetricsClient(r.hubB.AdminConfig, port).waitServing(ctx, 15*time.Second)
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

// reportClusterCopies adds to the initial sync's detail when all ManagedClusters were on hub B.
func (r *replRun) reportClusterCopies() {
	start, _, ok := r.at("start")
	if !ok {
		return
	}
	w := r.watcher
	w.mu.Lock()
	text := fmt.Sprintf("; %d of the %d ManagedClusters were ever seen on B as copies", w.clusters, w.wantMCs)
	if !w.clustersDone.IsZero() {
		text = fmt.Sprintf("; all %d ManagedClusters on B after %.1f s", w.wantMCs, w.clustersDone.Sub(start).Seconds())
	}
	w.mu.Unlock()
	r.rep.mu.Lock()
	if f := r.rep.byID[figSync]; f.Value != nil {
		f.Detail += text
	}
	r.rep.mu.Unlock()
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
	text := fmt.Sprintf(" The Go runtime's figures at the end of the run (its /metrics): RSS %.0f MiB; heap in use %.0f MiB, of which "+
		"%.0f MiB allocated objects (live ones and garbage not yet collected; the next GC starts at %.0f MiB, GOGC lets the heap "+
		"grow to twice the live size); heap idle %.0f MiB, %.0f MiB of it not yet returned to the OS; stacks %.0f MiB.",
		rss, inuse, alloc, nextGC, idle, idle-released, stacks)
	if r.baselineKiB > 0 {
		text += fmt.Sprintf(" A replicator with nothing to replicate has an RSS of %.0f MiB (binary, libraries, runtime): "+
			"the hub objects and the garbage of copying them account for the other %.0f MiB of the steady RSS.", mib(r.baselineKiB),
			func() float64 { v, _ := r.rep.value(figRSSSteady); return v - mib(r.baselineKiB) }())
	}
	return text
}
