package replicator_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	failoverclientset "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/replication"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// The partition test: seeded random schedules of faults and user writes on a test bed of two hubs (A, B), the
// failover agent, OCM's work agent and the replicator, with short timeouts; after each schedule every fault is
// healed and the spoke is checked against what the user did.
//
// CHAOS_SEEDS: the seeds to run, comma-separated; default the fixed subset chaosDefaultSeeds (what `make test`
// runs; `make chaos` passes 1..30). CHAOS_STEPS: steps per schedule (default 10). CHAOS_REPORT: a
// file the report is also written to. `make chaos` runs 30 seeds.
const (
	chaosCluster        = "chaos1"
	chaosNamespace      = "default"
	chaosPrefix         = "chaos-"
	chaosTimeout        = 10 * time.Second
	chaosEvictionGrace  = 20 * time.Second
	chaosConvergeWithin = 2 * time.Minute
	// chaosLongStop is how long a long stop of the replicator lasts.
	chaosLongStop = 2 * time.Minute
	// chaosTwin is the name of two spokes: each hub has a ManagedCluster of that name registered by a spoke of
	// its own (its own id.k8s.io claim), as ACM registers every hub's own cluster as local-cluster, with a
	// ManifestWork of its own; a lease renewed as that spoke's agent would. It stays through every schedule.
	chaosTwin = "chaos-twin"
)

var chaosDefaultSeeds = []uint64{1, 2}

// chaosBed is the test bed every schedule runs on.
type chaosBed struct {
	// seed is the schedule running: work names carry it, so that a work left on a hub by an earlier schedule
	// (deleting, with the work agent's finalizer, on a hub the agent is not on) never meets a later one.
	seed      uint64
	hubs      [2]*framework.Hub
	names     [2]string // the agent's and the ReplicationConfig's hub names
	replProxy [2]*framework.Proxy
	spoke     *framework.Spoke
	r         *replicatorRun
	users     [2]dynamic.Interface // a cluster admin of each hub who is neither the replicator nor an agent
	// losers are clients of each hub that the fence does not stop, for the nemesis that makes a hub lose its
	// copies (a restore or a rebuild is no request the fence sees).
	losers [2]dynamic.Interface
	// backedUpActive: whether each hub's last backup was taken while the agent was on it (backUpOrRestore).
	backedUpActive [2]bool
	// installed are backups of each hub's etcd as its installer left it (CRDs, bootstrap RBAC), before anything
	// joined: runRebuild rebuilds a hub from it.
	installed [2]string
}

// chaosWork is what the user believes of one ManifestWork: the sequence number of its last accepted write and
// whether that write was its delete.
type chaosWork struct {
	seq     int
	deleted bool
	// everDeleted: a delete of it was accepted at some point (it may have been made again since).
	everDeleted bool
	// deletedSaw is the value the work held, on the hub that accepted its delete, when the user deleted it (random
	// schedules only; -1 unknown), and eventsAtDelete the number of DeleteNotWrittenBack events then.
	deletedSaw, eventsAtDelete int
}

// chaosSchedule is one schedule's record.
type chaosSchedule struct {
	seed       uint64
	steps      []string
	accepted   int
	refused    int
	failed     int
	checks     int
	violations []string
	// behind is the number of HubBehind and HubReplicationUnknown warnings the agent gave during the schedule:
	// it moved the cluster to a hub the replicator reported behind, or named in step without confirming it (no
	// hub confirmed in step was viable). The report counts them; the spoke must keep what it has all the same.
	behind int
	// ownRestores is the number of restores of the hub the agent was on (backUpOrRestore): the spoke goes back
	// with the restored hub until the replicator writes the newer state back. Spoke violations of such a schedule
	// are reported apart too.
	ownRestores int
	// notWrittenBack is the number of the user's deletes that the replicator reported not carried out
	// (replication.ReasonDeleteNotWrittenBack, naming the work): made on the hub the cluster moved from before the
	// replicator fenced it, they met a change of the work on the cluster's source, which is kept by the rule in
	// docs/replicator.md. The user's model follows that rule (the work stays, with its last write before the delete).
	notWrittenBack int
}

func chaosSeeds(t *testing.T) []uint64 {
	v := os.Getenv("CHAOS_SEEDS")
	if v == "" {
		return chaosDefaultSeeds
	}
	var out []uint64
	for _, s := range strings.Split(v, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			t.Fatalf("CHAOS_SEEDS=%q: %q is not a seed (a comma-separated list of numbers)", v, s)
		}
		out = append(out, n)
	}
	return out
}

// TestPartitionSchedules runs the seeded schedules (see the constants above) and fails when an invariant is
// violated, naming the seed that replays it.
func TestPartitionSchedules(t *testing.T) {
	steps := 10
	if v := os.Getenv("CHAOS_STEPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CHAOS_STEPS=%q: want a positive number", v)
		}
		steps = n
	}
	b := newChaosBed(t)
	start := time.Now()
	var all []chaosSchedule
	// scripted records a scripted schedule's outcome; every violation of one fails the test.
	scripted := func(name string, s chaosSchedule) {
		all = append(all, s)
		t.Logf("scripted schedule (%s): %d invariant checks, %d violations\n  schedule: %s", name, s.checks, len(s.violations), strings.Join(s.steps, "; "))
		for _, v := range s.violations {
			t.Errorf("scripted schedule (%s): %s", name, v)
		}
	}
	// The write-back schedule first, while the cluster is on hub A (it needs that start).
	scripted("write-back", b.runWriteBack(t))
	scripted("work hold", b.runWorkHold(t))
	for _, seed := range chaosSeeds(t) {
		s := b.run(t, seed, steps)
		all = append(all, s)
		t.Logf("schedule seed %d: %d steps, user writes %d accepted, %d refused by the fence, %d failed; %d deletes reported not written back; %d invariant checks, %d violations; %d HubBehind or HubReplicationUnknown warnings\n  schedule: %s",
			seed, len(s.steps), s.accepted, s.refused, s.failed, s.notWrittenBack, s.checks, len(s.violations), s.behind, strings.Join(s.steps, "; "))
		for _, v := range s.violations {
			if why := excused(s, v); why != "" {
				t.Logf("seed %d (%s): %s", seed, why, v)
				continue
			}
			t.Errorf("seed %d: %s", seed, v)
		}
	}
	// Last: a rebuilt hub loses what every other schedule set up there (the twin, the users' bindings), which
	// runRebuild installs again.
	scripted("a hub rebuilt empty", b.runRebuild(t))
	report := chaosReport(all, time.Since(start))
	t.Log(report)
	if f := os.Getenv("CHAOS_REPORT"); f != "" {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err == nil {
			_ = os.WriteFile(f, []byte(report), 0o644)
		}
	}
}

func chaosReport(all []chaosSchedule, took time.Duration) string {
	var checks, violations, warned, behind, accepted, refused, restores, ownRestores, rebuilt, notWrittenBack int
	var failing, warnedSeeds []string
	for _, s := range all {
		for _, step := range s.steps {
			if strings.HasSuffix(step, "restored from its backup") {
				restores++
			}
			if strings.HasSuffix(step, "rebuilt empty") {
				rebuilt++
			}
		}
		ownRestores += s.ownRestores
		behind += s.behind
		notWrittenBack += s.notWrittenBack
		checks += s.checks
		accepted += s.accepted
		refused += s.refused
		var counted, excusedHere int
		for _, v := range s.violations {
			if excused(s, v) != "" {
				excusedHere++
			} else {
				counted++
			}
		}
		if excusedHere > 0 {
			warned += excusedHere
			warnedSeeds = append(warnedSeeds, strconv.FormatUint(s.seed, 10))
		}
		if counted > 0 {
			violations += counted
			failing = append(failing, strconv.FormatUint(s.seed, 10))
		}
	}
	return fmt.Sprintf("partition schedules: %d run in %s; user writes %d accepted, %d refused by the fence; %d deletes on a hub the cluster left reported not written back (DeleteNotWrittenBack); hubs restored %d times (%d the cluster's), rebuilt empty %d times; %d invariant checks; "+
		"%d violations (seeds [%s]); %d more on the spoke after a restore of the cluster's hub (seeds [%s]); %d moves with a HubBehind or HubReplicationUnknown warning; replay: CHAOS_SEEDS=<seeds> make chaos",
		len(all), took.Round(time.Second), accepted, refused, notWrittenBack, restores, ownRestores, rebuilt, checks, violations, strings.Join(failing, ","), warned, strings.Join(warnedSeeds, ","), behind)
}

// newChaosBed starts the bed: the replicator's host, two hubs behind proxies, a spoke with the agent and OCM's
// work agent. The hubs run OCM's hub controller only: the schedules write ManifestWorks and move the cluster,
// flows the complete hubs' webhooks accept from the replicator (TestReplicatedClusterSurvivesFailover), and
// the seeds' timing on a two-core machine is what the suite measures.
func newChaosBed(t *testing.T) *chaosBed {
	b := &chaosBed{names: [2]string{primary, hubB}}
	host := framework.StartHub(t, framework.HubOptions{Name: "repl-host"})
	b.hubs[0] = framework.StartHub(t, framework.HubOptions{Name: "hub-a", HubController: true, Signer: framework.SignerInProcess, Proxy: true})
	b.hubs[1] = framework.StartHub(t, framework.HubOptions{Name: hubB, HubController: true, Signer: framework.SignerInProcess, Proxy: true})
	for i, h := range b.hubs {
		b.installed[i] = h.BackupEtcd()
	}
	b.spoke = framework.StartSpoke(t, framework.SpokeOptions{WorkCRD: true, GarbageCollector: true})

	util.EnsureAgentNamespace(t, b.spoke)
	util.ApplyBootstrapSecret(t, b.spoke, "hub-b-bootstrap", b.hubs[1].BootstrapKubeconfig())
	util.ApplyFailoverConfig(t, b.spoke, failoverv1alpha1.FailoverConfigSpec{
		AlternateHubs:        []failoverv1alpha1.AlternateHub{{Name: hubB, BootstrapKubeconfigSecretRef: "hub-b-bootstrap"}},
		HubConnectionTimeout: &metav1.Duration{Duration: chaosTimeout},
		ProbeInterval:        &metav1.Duration{Duration: 5 * time.Second},
		FailedHubSkipPeriod:  &metav1.Duration{Duration: 10 * time.Second},
	})
	agent := util.StartAgent(t, b.spoke, util.AgentConfig{
		Bootstrap: b.hubs[0].BootstrapKubeconfig(),
		Mutate:    func(o *klusterlet.FailoverAgentOptions) { o.ClusterName, o.AgentName = chaosCluster, "agent1" },
	})
	util.WaitForClusterAvailable(t, b.hubs[0], chaosCluster, 90*time.Second)
	startWorkAgent(t, b.spoke, agent, chaosCluster, chaosEvictionGrace)

	// Two spokes under one name, one on each hub, before the replicator first sees them.
	for i, h := range b.hubs {
		b.registerTwin(t, i, h)
	}

	// The replicator reaches each hub through a proxy of its own, so that the test can cut it off alone.
	var named []namedHub
	for i, h := range b.hubs {
		b.replProxy[i] = framework.ProxyTo(t, h)
		named = append(named, namedHub{name: b.names[i], hub: h, kubeconfig: util.ReplicatorKubeconfig(t, h, b.replProxy[i].URL())})
		b.users[i] = userClient(t, h, fenceUser)
		b.losers[i] = userClient(t, h, "chaos-loss", fence.GroupManagedClusters)
	}
	b.r = setUpReplicator(t, host, failoverv1alpha1.ReplicationConfigSpec{}, named...)
	// The in-step report is confirmed every 2 s: a replicator stopped or cut off from the cluster's hub leaves the
	// report Unknown within 6 s, as it would within 15 minutes at the default interval, so that the agent's moves
	// in a schedule of a few minutes meet the same rule.
	b.r.opts.ReportInterval = 2 * time.Second
	b.r.start()
	b.r.waitStatus(2*replicationTimeout, "both hubs synced", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		return hubStatus(s, primary).Synced && hubStatus(s, hubB).Synced
	})
	return b
}

// spokeRecord is every value and delete of the chaos ConfigMaps the spoke's watch saw.
type spokeRecord struct {
	mu     sync.Mutex
	events map[string][]int // ConfigMap → sequence numbers seen in order; -1 is a delete
}

func (r *spokeRecord) add(cm *corev1.ConfigMap, deleted bool) {
	if cm == nil || !strings.HasPrefix(cm.Name, chaosPrefix) {
		return
	}
	v := -1
	if !deleted {
		n, err := strconv.Atoi(cm.Data["value"])
		if err != nil {
			return
		}
		v = n
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.events[cm.Name]
	if len(seen) > 0 && seen[len(seen)-1] == v {
		return
	}
	r.events[cm.Name] = append(seen, v)
}

func (r *spokeRecord) snapshot() map[string][]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]int{}
	for k, v := range r.events {
		out[k] = slices.Clone(v)
	}
	return out
}

// moveRecord counts the agent's moves: the changes of the FailoverConfig's status.activeHub its watch saw.
type moveRecord struct {
	mu    sync.Mutex
	last  string
	moves int
}

func (r *moveRecord) add(fc *failoverv1alpha1.FailoverConfig) {
	if fc == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last != "" && fc.Status.ActiveHub != "" && fc.Status.ActiveHub != r.last {
		r.moves++
	}
	if fc.Status.ActiveHub != "" {
		r.last = fc.Status.ActiveHub
	}
}

func (r *moveRecord) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.moves
}

// watchMoves records the agent's moves until ctx ends.
func (b *chaosBed) watchMoves(t *testing.T, ctx context.Context) *moveRecord {
	t.Helper()
	client, err := failoverclientset.NewForConfig(b.spoke.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	rec := &moveRecord{}
	lw := cache.NewListWatchFromClient(client.FailoverV1alpha1().RESTClient(), "failoverconfigs", util.AgentNamespace, fields.Everything())
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw, ObjectType: &failoverv1alpha1.FailoverConfig{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { fc, _ := o.(*failoverv1alpha1.FailoverConfig); rec.add(fc) },
			UpdateFunc: func(_, o any) { fc, _ := o.(*failoverv1alpha1.FailoverConfig); rec.add(fc) },
		},
	})
	go informer.Run(ctx.Done())
	return rec
}

// watchSpoke records the chaos ConfigMaps of the spoke until ctx ends.
func (b *chaosBed) watchSpoke(ctx context.Context) *spokeRecord {
	rec := &spokeRecord{events: map[string][]int{}}
	lw := cache.NewListWatchFromClient(b.spoke.Kube.CoreV1().RESTClient(), "configmaps", chaosNamespace, fields.Everything())
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw, ObjectType: &corev1.ConfigMap{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { cm, _ := o.(*corev1.ConfigMap); rec.add(cm, false) },
			UpdateFunc: func(_, o any) { cm, _ := o.(*corev1.ConfigMap); rec.add(cm, false) },
			DeleteFunc: func(o any) {
				if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
					o = d.Obj
				}
				cm, _ := o.(*corev1.ConfigMap)
				rec.add(cm, true)
			},
		},
	})
	go informer.Run(ctx.Done())
	return rec
}

// run plays schedule seed: steps of one fault toggle or a few user writes, a random pause each, then heals
// everything, waits for the system to settle and checks the invariants. The faults: a hub's apiserver down, the
// spoke's or the replicator's link to a hub cut, the replicator stopped (one stop in three for minutes, the
// users writing meanwhile; it comes back with its clock right or 10 minutes off), and the standby losing its
// copies (loseCopies).
func (b *chaosBed) run(t *testing.T, seed uint64, steps int) chaosSchedule {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x6b66))
	b.seed = seed
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := b.watchSpoke(ctx)
	b.waitSourceFollowed(t, ctx)
	moves := b.watchMoves(t, ctx)
	sourceChangesBefore := b.sourceChanges()
	starts := 0
	s := chaosSchedule{seed: seed}
	behindBefore := warnings(util.EventReasons(t, b.spoke))
	works := map[string]*chaosWork{}
	seq := 0
	var hubDown, spokeCut, replCut [2]bool
	replDown := false
	// backups: each hub's last etcd backup taken in this schedule ("": none), removed after it.
	var backups [2]string
	defer func() {
		for _, dir := range backups {
			if dir != "" {
				_ = os.RemoveAll(dir)
			}
		}
	}()
	next := 0

	// userBatch makes one to three user writes, each on the hub the user believes manages the cluster.
	userBatch := func() {
		for n := 1 + rng.IntN(3); n > 0; n-- {
			i := b.believedHub(rng)
			seq++
			op, name, saw, err := b.userWrite(t, rng, i, works, &next, seq)
			switch {
			case err == nil:
				s.accepted++
				switch op {
				case "create":
					works[name] = &chaosWork{seq: seq}
				case "delete":
					works[name].deleted, works[name].everDeleted, works[name].deletedSaw = true, true, saw
					works[name].eventsAtDelete = len(b.r.events(replication.ReasonDeleteNotWrittenBack))
				default: // an edit, or a re-create: what the user believes of the work's past stays
					works[name].deleted, works[name].seq = false, seq
				}
			case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "is managed from hub"):
				s.refused++
			default:
				s.failed++
			}
			s.steps = append(s.steps, fmt.Sprintf("user %s %s seq %d on %s: %s", op, name, seq, b.names[i], outcome(err)))
		}
	}

	for step := 0; step < steps; step++ {
		if rng.IntN(2) == 0 {
			i := rng.IntN(2)
			switch rng.IntN(6) {
			case 0:
				if hubDown[i] {
					b.hubs[i].StartAPIServer()
				} else if !hubDown[1-i] {
					b.hubs[i].StopAPIServer()
				} else {
					break
				}
				hubDown[i] = !hubDown[i]
				s.steps = append(s.steps, fmt.Sprintf("hub %s apiserver down=%t", b.names[i], hubDown[i]))
			case 1:
				if spokeCut[i] {
					b.hubs[i].Proxy.Heal()
				} else {
					b.hubs[i].Proxy.Cut()
				}
				spokeCut[i] = !spokeCut[i]
				s.steps = append(s.steps, fmt.Sprintf("spoke-hub %s cut=%t", b.names[i], spokeCut[i]))
			case 2:
				if replCut[i] {
					b.replProxy[i].Heal()
				} else {
					b.replProxy[i].Cut()
				}
				replCut[i] = !replCut[i]
				s.steps = append(s.steps, fmt.Sprintf("replicator-hub %s cut=%t", b.names[i], replCut[i]))
			case 3:
				clockOff := ""
				if replDown {
					// It comes back on a machine whose clock is 10 minutes off, either way, or right.
					b.r.clock = nil
					if off := time.Duration(rng.IntN(3)-1) * 10 * time.Minute; off != 0 {
						b.r.clock = offsetClock{offset: off}
						clockOff = fmt.Sprintf(", its clock %s off", off)
					}
					b.r.start()
					starts++
				} else {
					b.r.stop()
					replDown = true
					// One stop in three lasts minutes (a node drained, an image pull failing, a crash loop's
					// back-off): the agent and the users go on without it.
					if rng.IntN(3) != 0 {
						s.steps = append(s.steps, "replicator down=true")
						break
					}
					s.steps = append(s.steps, fmt.Sprintf("replicator down=true for %s, the users writing", chaosLongStop))
					for end := time.Now().Add(chaosLongStop); time.Now().Before(end); {
						time.Sleep(chaosLongStop / 4)
						userBatch()
					}
					break
				}
				replDown = false
				s.steps = append(s.steps, "replicator down=false"+clockOff)
			case 4:
				s.steps = append(s.steps, b.loseCopies(t, hubDown))
			case 5:
				s.steps = append(s.steps, b.backUpOrRestore(t, rng, hubDown, &backups, works, &s.ownRestores))
			}
		} else {
			userBatch()
		}
		time.Sleep(time.Duration(1000+rng.IntN(4000)) * time.Millisecond)
	}

	// The schedule, before the settle: a settle that times out ends the test without the report.
	t.Logf("seed %d schedule: %s", seed, strings.Join(s.steps, "; "))
	// Heal everything and let the system settle.
	for i := range b.hubs {
		if hubDown[i] {
			b.hubs[i].StartAPIServer()
		}
		if spokeCut[i] {
			b.hubs[i].Proxy.Heal()
		}
		if replCut[i] {
			b.replProxy[i].Heal()
		}
	}
	if replDown {
		b.r.start()
		starts++
	}
	util.WaitForFailoverConfig(t, b.spoke, 3*time.Minute, "Available after the schedule", func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		return util.ConditionIs(fc, failoverv1alpha1.ConditionAvailable, "True"), util.DescribeFailoverStatus(fc)
	})
	b.r.waitStatus(2*replicationTimeout, "both hubs synced after the schedule", func(st failoverv1alpha1.ReplicationConfigStatus) bool {
		return hubStatus(st, primary).Synced && hubStatus(st, hubB).Synced
	})
	s.notWrittenBack = b.followNotWrittenBack(works)
	// The work agent evicts what the hub it serves lacks only after its grace period.
	time.Sleep(chaosEvictionGrace + 5*time.Second)
	final := b.settle(ctx, works)
	s.checks, s.violations = checkChaos(works, final, rec.snapshot())
	n, v := b.checkHubs(ctx, works)
	s.checks, s.violations = s.checks+n, append(s.violations, v...)
	n, v = b.checkTwins(t, ctx)
	s.checks, s.violations = s.checks+n, append(s.violations, v...)
	s.checks++
	changes := b.sourceChanges() - sourceChangesBefore
	if changes > moves.count()+starts {
		s.violations = append(s.violations, fmt.Sprintf("(6) the replicator changed cluster %s's source %d times, for %d moves of the agent and %d starts of the replicator", chaosCluster, changes, moves.count(), starts))
	}
	s.behind = warnings(util.EventReasons(t, b.spoke)) - behindBefore
	b.reset(t, ctx)
	return s
}

// sourceChanges returns how many times the replicator reported that chaosCluster's source changed
// (ClusterSourceChanged) since it started.
func (b *chaosBed) sourceChanges() int {
	n := 0
	for _, m := range b.r.events(replication.ReasonClusterSourceChanged) {
		if strings.HasPrefix(m, "managed cluster "+chaosCluster+" ") {
			n++
		}
	}
	return n
}

// waitSourceFollowed waits, before a schedule counts the replicator's source changes against the agent's
// moves, until the replicator follows the agent's active hub (the fence marks the cluster's namespace on the
// other hub as managed from it, and not on the active hub): a move at the end of the last schedule is not counted
// in this one. It logs when that takes longer than chaosConvergeWithin, and goes on.
func (b *chaosBed) waitSourceFollowed(t *testing.T, ctx context.Context) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, util.PollInterval, chaosConvergeWithin, true, func(ctx context.Context) (bool, error) {
		fc, err := util.GetFailoverConfig(b.spoke)
		if err != nil {
			if ctx.Err() == nil {
				last = err.Error()
			}
			return false, nil
		}
		j := slices.Index(b.names[:], fc.Status.ActiveHub)
		if j < 0 || !util.ConditionIs(fc, failoverv1alpha1.ConditionAvailable, "True") {
			last = "agent: " + util.DescribeFailoverStatus(fc)
			return false, nil
		}
		var marks [2]string
		for i, h := range b.hubs {
			ns, err := h.Kube.CoreV1().Namespaces().Get(ctx, chaosCluster, metav1.GetOptions{})
			if err != nil {
				if ctx.Err() == nil { // the poll's own deadline is no news
					last = err.Error()
				}
				return false, nil
			}
			marks[i] = ns.Annotations[mirror.AnnotationClusterHub]
		}
		last = fmt.Sprintf("agent on %s; namespace %s marked as managed from %q on %s, %q on %s", fc.Status.ActiveHub, chaosCluster,
			marks[0], b.names[0], marks[1], b.names[1])
		return marks[j] == "" && marks[1-j] == fc.Status.ActiveHub, nil
	})
	if err != nil {
		t.Logf("before seed %d: the replicator did not follow the agent's hub within %s (%s)", b.seed, chaosConvergeWithin, last)
	}
}

// followNotWrittenBack brings the user's model of works in line with the deletes the replicator reported it did
// not carry out (chaosSchedule.notWrittenBack): a work the user deleted last, where the delete did not see the
// user's last write (the rule's case: a change on the source, a delete on the hub the cluster left, holding an
// older state), and named by such a Warning since that delete, is kept with that write. It returns how many works
// it changed.
func (b *chaosBed) followNotWrittenBack(works map[string]*chaosWork) int {
	reported := b.r.events(replication.ReasonDeleteNotWrittenBack)
	n := 0
	for name, w := range works {
		key := string(failoverv1alpha1.KindManifestWork) + "/" + chaosCluster + "/" + name + ":"
		if w.deleted && w.deletedSaw >= 0 && w.deletedSaw < w.seq &&
			slices.ContainsFunc(reported[min(w.eventsAtDelete, len(reported)):], func(m string) bool { return strings.HasPrefix(m, key) }) {
			w.deleted = false
			n++
		}
	}
	return n
}

// checkHubs checks invariant (5) once the hubs had chaosConvergeWithin to converge: every hub holds, for each
// ManifestWork of the schedule, what the user's last accepted write says — the work with that content, not
// Terminating, or none at all for a deleted one (nothing left Terminating, on the hub the cluster is on or on
// one it left). It returns the number of checks and the violations.
func (b *chaosBed) checkHubs(ctx context.Context, works map[string]*chaosWork) (int, []string) {
	names := slices.Sorted(maps.Keys(works))
	var checks int
	var out []string
	deadline := time.Now().Add(chaosConvergeWithin)
	for {
		checks, out = 0, nil
		for i, h := range b.hubs {
			list, err := dyn(h).Resource(workGVR).Namespace(chaosCluster).List(ctx, metav1.ListOptions{})
			if err != nil {
				out = append(out, fmt.Sprintf("(5) hub %s: list ManifestWorks: %v", b.names[i], err))
				continue
			}
			held := map[string]*unstructured.Unstructured{}
			for j := range list.Items {
				held[list.Items[j].GetName()] = &list.Items[j]
			}
			for _, name := range names {
				w, obj := works[name], held[name]
				checks++
				switch {
				case w.deleted && obj != nil:
					out = append(out, fmt.Sprintf("(5) %s was deleted by the user, and hub %s still holds it (Terminating: %t, finalizers %v)",
						name, b.names[i], obj.GetDeletionTimestamp() != nil, obj.GetFinalizers()))
				case w.deleted:
				case obj == nil:
					out = append(out, fmt.Sprintf("(5) %s: the user's last accepted write is %d, and hub %s does not hold it", name, w.seq, b.names[i]))
				case obj.GetDeletionTimestamp() != nil:
					out = append(out, fmt.Sprintf("(5) %s was never deleted since its last write %d, and it is Terminating on hub %s (finalizers %v)", name, w.seq, b.names[i], obj.GetFinalizers()))
				default:
					if got := workValue(obj, name); got != w.seq {
						out = append(out, fmt.Sprintf("(5) %s: the user's last accepted write is %d, hub %s holds %d", name, w.seq, b.names[i], got))
					}
				}
			}
		}
		if len(out) == 0 || time.Now().After(deadline) {
			return checks, out
		}
		time.Sleep(2 * time.Second)
	}
}

// twinClaim is the id.k8s.io claim of the spoke that registered chaosTwin on hub i; twinWork the name of that
// spoke's ManifestWork there, and twinValue the value it gives its ConfigMap.
func twinClaim(i int) string { return fmt.Sprintf("twin-spoke-%d", i) }
func twinWork(i int) string  { return fmt.Sprintf("twin-work-%d", i) }
func twinValue(i int) string { return fmt.Sprintf("for twin spoke %d only", i) }

// registerTwin registers chaosTwin on hub h (index i) as a spoke of its own would: an accepted ManagedCluster
// reporting twinClaim(i), a lease renewed every 3 s until the test ends (a renewal while the hub is down fails and
// the next one renews), and its own ManifestWork.
func (b *chaosBed) registerTwin(t *testing.T, i int, h *framework.Hub) {
	t.Helper()
	mcKind := mustKind(failoverv1alpha1.KindManagedCluster)
	applyUnstructured(t, h, failoverv1alpha1.KindManagedCluster, map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
		"metadata": map[string]any{"name": chaosTwin},
		"spec":     map[string]any{"hubAcceptsClient": true, "leaseDurationSeconds": int64(10)},
	})
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		mc, err := dyn(h).Resource(mcKind.GVR).Get(context.Background(), chaosTwin, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if claim, _ := mirror.ClusterIdentity(mc); claim == twinClaim(i) {
			return true, nil
		}
		_ = unstructured.SetNestedSlice(mc.Object, []any{map[string]any{"name": mirror.ClusterIDClaim, "value": twinClaim(i)}}, "status", "clusterClaims")
		_, err = dyn(h).Resource(mcKind.GVR).UpdateStatus(context.Background(), mc, metav1.UpdateOptions{})
		return false, err
	}, "hub %s's %s reporting claim %s", h.Name, chaosTwin, twinClaim(i))
	t.Cleanup(keepRenewing(t, h, chaosTwin, 3*time.Second))
	createWork(t, h, configMapWork(t, chaosTwin, twinWork(i), map[string]string{chaosPrefix + "twin": twinValue(i)}))
}

// checkTwins checks invariant (7), the name of two spokes: on every hub, chaosTwin is still the ManagedCluster of
// its own spoke (not a copy, its claim unchanged), its namespace carries no fence mark, and it holds that spoke's
// ManifestWork as it was made, and no other (nothing of the other hub's spoke crossed). It returns the number of
// checks and the violations.
func (b *chaosBed) checkTwins(t *testing.T, ctx context.Context) (int, []string) {
	mcKind := mustKind(failoverv1alpha1.KindManagedCluster)
	var checks int
	var out []string
	for i, h := range b.hubs {
		checks++
		mc, err := dyn(h).Resource(mcKind.GVR).Get(ctx, chaosTwin, metav1.GetOptions{})
		if err != nil {
			out = append(out, fmt.Sprintf("(7) hub %s: %s: %v", b.names[i], chaosTwin, err))
			continue
		}
		if claim, _ := mirror.ClusterIdentity(mc); mirror.IsCopy(mc) || claim != twinClaim(i) {
			out = append(out, fmt.Sprintf("(7) hub %s's %s: a copy %t, claim %q; want its own spoke's, claim %q", b.names[i], chaosTwin, mirror.IsCopy(mc), claim, twinClaim(i)))
		}
		checks++
		if ns, err := h.Kube.CoreV1().Namespaces().Get(ctx, chaosTwin, metav1.GetOptions{}); err != nil || ns.Labels[fence.LabelClusterHub] != "" {
			out = append(out, fmt.Sprintf("(7) hub %s's namespace %s: labels %v (err %v), want no fence mark", b.names[i], chaosTwin, ns.GetLabels(), err))
		}
		checks++
		list, err := dyn(h).Resource(workGVR).Namespace(chaosTwin).List(ctx, metav1.ListOptions{})
		if err != nil {
			out = append(out, fmt.Sprintf("(7) hub %s: list %s's ManifestWorks: %v", b.names[i], chaosTwin, err))
			continue
		}
		var held []string
		for _, w := range list.Items {
			held = append(held, w.GetName())
			if w.GetName() != twinWork(i) || mirror.IsCopy(&w) || w.GetDeletionTimestamp() != nil {
				out = append(out, fmt.Sprintf("(7) hub %s holds %s/%s (a copy %t, Terminating %t): only its own spoke's %s belongs there", b.names[i], chaosTwin, w.GetName(), mirror.IsCopy(&w), w.GetDeletionTimestamp() != nil, twinWork(i)))
				continue
			}
			if got := workConfigMapValues(t, &w)[chaosPrefix+"twin"]; got != twinValue(i) {
				out = append(out, fmt.Sprintf("(7) hub %s's %s/%s gives %q, want %q", b.names[i], chaosTwin, w.GetName(), got, twinValue(i)))
			}
		}
		if !slices.Contains(held, twinWork(i)) {
			out = append(out, fmt.Sprintf("(7) hub %s no longer holds its own spoke's %s/%s (it holds %v)", b.names[i], chaosTwin, twinWork(i), held))
		}
	}
	return checks, out
}

// workValue returns the value a chaos ManifestWork gives its ConfigMap name, -1 when it gives none.
func workValue(obj *unstructured.Unstructured, name string) int {
	manifests, _, _ := unstructured.NestedSlice(obj.Object, "spec", "workload", "manifests")
	for _, m := range manifests {
		cm, ok := m.(map[string]any)
		if !ok {
			continue
		}
		if n, _, _ := unstructured.NestedString(cm, "metadata", "name"); n != name {
			continue
		}
		v, _, _ := unstructured.NestedString(cm, "data", "value")
		if got, err := strconv.Atoi(v); err == nil {
			return got
		}
	}
	return -1
}

// runWriteBack is a scripted schedule (reported as seed 0). Hub A, the cluster's source, is cut off from the
// replicator; its user deletes a ManifestWork there, which OCM's work agent finishes on the spoke (only the
// replicator's finalizer keeps it on A). Then A is cut off from the spoke too; the user edits one
// ManifestWork, creates one and deletes another on A (A is not fenced: nobody saw the cluster move yet). The
// agent moves the cluster to hub B, which holds none of these writes (it applies its copy of the first deleted
// work again meanwhile). Once the replicator reaches A again, all four writes must be written back to B
// (mirror.DecideWriteBack) and be what the spoke holds: without write-back the edit and the create are lost
// and the deleted works stay on the spoke; without the finalizer the first delete leaves no trace on A.
func (b *chaosBed) runWriteBack(t *testing.T) chaosSchedule {
	t.Helper()
	b.seed = 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := b.watchSpoke(ctx)
	s := chaosSchedule{seed: 0}
	works := map[string]*chaosWork{}
	fc, err := util.GetFailoverConfig(b.spoke)
	if err != nil || fc.Status.ActiveHub != primary {
		t.Fatalf("the write-back schedule needs the cluster on %s: FailoverConfig %v, error %v", primary, fc, err)
	}
	userA := b.users[0].Resource(workGVR).Namespace(chaosCluster)
	write := func(op, name string, seq int, do func() error) {
		t.Helper()
		err := do()
		s.steps = append(s.steps, fmt.Sprintf("user %s %s seq %d on %s: %s", op, name, seq, primary, outcome(err)))
		if err != nil {
			t.Fatalf("user %s %s on %s: %v", op, name, primary, err)
		}
		s.accepted++
		if op == "delete" {
			works[name].deleted = true
		} else {
			works[name] = &chaosWork{seq: seq}
		}
	}
	create := func(name string, seq int) {
		write("create", name, seq, func() error {
			_, err := userA.Create(ctx, chaosWorkObject(t, name, seq), metav1.CreateOptions{})
			return err
		})
	}
	edited, created, deleted, finished := chaosPrefix+"wb-edited", chaosPrefix+"wb-created", chaosPrefix+"wb-deleted", chaosPrefix+"wb-finished"
	create(edited, 1)
	create(deleted, 2)
	create(finished, 3)
	if got := b.settle(ctx, works); len(got) != 3 {
		t.Fatalf("write-back schedule: the spoke holds %v, want the three works applied before the cuts", got)
	}
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		for _, name := range []string{edited, deleted, finished} {
			if _, err := dyn(b.hubs[1]).Resource(workGVR).Namespace(chaosCluster).Get(ctx, name, metav1.GetOptions{}); err != nil {
				return false, nil
			}
			w, err := userA.Get(ctx, name, metav1.GetOptions{})
			if err != nil || !slices.Contains(w.GetFinalizers(), mirror.FinalizerDeleteCopies) {
				return false, nil
			}
		}
		return true, nil
	}, "hub B holds copies of the three works, and hub A's originals carry %s", mirror.FinalizerDeleteCopies)

	// The replicator loses hub A first: a delete there is finished on the spoke by OCM's work agent, and only
	// the replicator's finalizer keeps it on A.
	movesBefore := len(b.r.events(replication.ReasonClusterSourceChanged))
	b.replProxy[0].Cut()
	s.steps = append(s.steps, "replicator-hub primary cut=true")
	write("delete", finished, 4, func() error { return userA.Delete(ctx, finished, metav1.DeleteOptions{}) })
	framework.Eventually(t, 2*time.Minute, util.PollInterval, func() (bool, error) {
		if _, err := b.spoke.Kube.CoreV1().ConfigMaps(chaosNamespace).Get(ctx, finished, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, nil
		}
		w, err := userA.Get(ctx, finished, metav1.GetOptions{})
		return err == nil && mirror.HoldsDelete(w) && len(w.GetFinalizers()) == 1, nil
	}, "OCM's work agent finished the delete of %s on the spoke, and hub A's ManifestWork waits for the replicator", finished)

	b.hubs[0].Proxy.Cut()
	s.steps = append(s.steps, "spoke-hub primary cut=true")
	write("edit", edited, 5, func() error {
		cur, err := userA.Get(ctx, edited, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Object["spec"] = chaosWorkObject(t, edited, 5).Object["spec"]
		_, err = userA.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	create(created, 6)
	write("delete", deleted, 7, func() error { return userA.Delete(ctx, deleted, metav1.DeleteOptions{}) })

	util.WaitForFailoverConfig(t, b.spoke, 2*time.Minute, "the cluster moved to hub B", func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		return fc.Status.ActiveHub == hubB && util.ConditionIs(fc, failoverv1alpha1.ConditionAvailable, "True"), util.DescribeFailoverStatus(fc)
	})
	s.steps = append(s.steps, "agent moved to hub-b")
	// The replicator sees the cluster on hub B before it reaches hub A again.
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		for _, m := range b.r.events(replication.ReasonClusterSourceChanged)[movesBefore:] {
			if strings.Contains(m, "is now on hub "+hubB) {
				return true, nil
			}
		}
		return false, nil
	}, "the replicator saw cluster %s move to %s", chaosCluster, hubB)
	b.replProxy[0].Heal()
	b.hubs[0].Proxy.Heal()
	s.steps = append(s.steps, "replicator-hub primary cut=false", "spoke-hub primary cut=false")

	b.r.waitStatus(2*replicationTimeout, "both hubs synced after the write-back schedule", func(st failoverv1alpha1.ReplicationConfigStatus) bool {
		return hubStatus(st, primary).Synced && hubStatus(st, hubB).Synced
	})
	time.Sleep(chaosEvictionGrace + 5*time.Second)
	final := b.settle(ctx, works)
	s.checks, s.violations = checkChaos(works, final, rec.snapshot())
	n, v := b.checkHubs(ctx, works)
	s.checks, s.violations = s.checks+n, append(s.violations, v...)
	if got := len(b.r.events(replication.ReasonWrittenBack)); got < 4 {
		s.violations = append(s.violations, fmt.Sprintf("the replicator reported %d %s events, want one per write made on hub A (4)", got, replication.ReasonWrittenBack))
	}
	s.checks++
	// The write-back is over once hub A is caught up: the record of the move goes.
	s.checks++
	if err := wait.PollUntilContextTimeout(ctx, util.PollInterval, replicationTimeout, true, func(ctx context.Context) (bool, error) {
		mc, err := dyn(b.hubs[1]).Resource(mcGVR).Get(ctx, chaosCluster, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		_, recorded := mc.GetAnnotations()[mirror.AnnotationMovedFrom]
		return !recorded, nil
	}); err != nil {
		s.violations = append(s.violations, fmt.Sprintf("hub B's ManagedCluster still carries %s after hub A was caught up", mirror.AnnotationMovedFrom))
	}
	b.reset(t, ctx)
	return s
}

// backUpOrRestore is the nemesis "a hub restored from a backup of its etcd": the standby (as loseCopies finds
// it) is restored from the backup taken of it earlier in the schedule, if there is one; or, one time in two, the
// hub the agent is on, from a backup taken while the agent was on it too (a backup of its standby days brings
// back the fence's marks of then: open), when the standby holds every write the user made (what the restore takes from the hub is
// then on the standby, and nothing else has it: a write the restore undoes before any hub copied it is lost by the
// restore itself); otherwise a hub that is up, either one, is backed up (a cold backup: its etcd stopped and
// started again). The backup may have been taken while that hub was the cluster's, or held copies or writes the
// user made or deleted since. A restore of the agent's hub is counted in ownRestores: OCM's work agent applies what
// the restored hub holds before the replicator can write the newer state back, so that the spoke goes back for a
// moment (a limit the replicator's docs state). It returns the step's record.
func (b *chaosBed) backUpOrRestore(t *testing.T, rng *rand.Rand, hubDown [2]bool, backups *[2]string, works map[string]*chaosWork, ownRestores *int) string {
	t.Helper()
	if j, skip := b.standby(hubDown); skip == "" {
		if backups[j] != "" {
			b.hubs[j].RestoreEtcd(backups[j])
			_ = os.RemoveAll(backups[j])
			backups[j] = ""
			return fmt.Sprintf("hub %s restored from its backup", b.names[j])
		}
		if i := 1 - j; backups[i] != "" && b.backedUpActive[i] && rng.IntN(2) == 0 {
			if why := b.holdsEverything(j, i, works); why != "" {
				return fmt.Sprintf("hub %s, the cluster's, restored from its backup: skipped (%s)", b.names[i], why)
			}
			b.hubs[i].RestoreEtcd(backups[i])
			_ = os.RemoveAll(backups[i])
			backups[i] = ""
			*ownRestores++
			return fmt.Sprintf("hub %s, the cluster's, restored from its backup", b.names[i])
		}
	}
	i := rng.IntN(2)
	if hubDown[i] {
		return fmt.Sprintf("hub %s backed up: skipped (down)", b.names[i])
	}
	if backups[i] != "" {
		_ = os.RemoveAll(backups[i])
	}
	fc, err := util.GetFailoverConfig(b.spoke)
	b.backedUpActive[i] = err == nil && fc.Status.ActiveHub == b.names[i]
	backups[i] = b.hubs[i].BackupEtcd()
	// One incarnation interval without a user's write: every write after it is copied in a later incarnation
	// than the backup holds, so a restore finds what the hub lost (what is copied within one interval of the
	// last advance before a backup is a limit the replicator's docs state, not what this nemesis is after).
	time.Sleep(b.r.opts.IncarnationInterval + time.Second)
	return fmt.Sprintf("hub %s backed up", b.names[i])
}

// holdsEverything returns "" when hub j holds every chaos ManifestWork as the user's last accepted write left it
// (none of a deleted one) and hub i holds none being deleted, or what it found otherwise.
func (b *chaosBed) holdsEverything(j, i int, works map[string]*chaosWork) string {
	ctx := context.Background()
	list, err := dyn(b.hubs[j]).Resource(workGVR).Namespace(chaosCluster).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Sprintf("list on hub %s: %v", b.names[j], err)
	}
	held := map[string]*unstructured.Unstructured{}
	for k := range list.Items {
		held[list.Items[k].GetName()] = &list.Items[k]
	}
	for name, w := range works {
		obj := held[name]
		switch {
		case w.deleted && obj != nil, !w.deleted && (obj == nil || obj.GetDeletionTimestamp() != nil || workValue(obj, name) != w.seq):
			return fmt.Sprintf("hub %s does not hold %s as the user left it", b.names[j], name)
		}
	}
	own, err := dyn(b.hubs[i]).Resource(workGVR).Namespace(chaosCluster).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Sprintf("list on hub %s: %v", b.names[i], err)
	}
	for k := range own.Items {
		if w := &own.Items[k]; strings.HasPrefix(w.GetName(), chaosPrefix) && w.GetDeletionTimestamp() != nil {
			return fmt.Sprintf("hub %s is deleting %s", b.names[i], w.GetName())
		}
	}
	return ""
}

// standby returns the hub the agent is not on, when it is a standby in the replicator's view too, or why not:
// a hub that is down is left alone, and so is every hub while the agent moves or has no Available hub (the
// FailoverConfig may not name the hub it is joining yet), and a hub the replicator has not marked as a standby of
// the agent's hub (its namespace's cluster-hub annotation). While the replicator still takes that hub for the
// source (it lags behind a move, or cannot see the agent's hub), a write there is a write on the source.
func (b *chaosBed) standby(hubDown [2]bool) (int, string) {
	fc, err := util.GetFailoverConfig(b.spoke)
	if err != nil {
		return -1, fmt.Sprintf("FailoverConfig: %v", err)
	}
	j := slices.Index(b.names[:], fc.Status.ActiveHub)
	if j < 0 || hubDown[1-j] || util.ConditionIs(fc, failoverv1alpha1.ConditionProgressing, metav1.ConditionTrue) ||
		!util.ConditionIs(fc, failoverv1alpha1.ConditionAvailable, metav1.ConditionTrue) {
		return -1, fmt.Sprintf("active hub %q, the other down, or the agent moving", fc.Status.ActiveHub)
	}
	j = 1 - j
	if ns, err := b.hubs[j].Kube.CoreV1().Namespaces().Get(context.Background(), chaosCluster, metav1.GetOptions{}); err != nil || ns.Annotations[mirror.AnnotationClusterHub] != fc.Status.ActiveHub {
		return -1, fmt.Sprintf("hub %s not marked as managed from %s", b.names[j], fc.Status.ActiveHub)
	}
	return j, ""
}

// loseCopies is the nemesis "a standby lost its copies" (its cluster namespace deleted, or the hub rebuilt): every
// copy of a chaos ManifestWork on the standby (see standby) goes, finalizers included. It returns the step's
// record.
func (b *chaosBed) loseCopies(t *testing.T, hubDown [2]bool) string {
	t.Helper()
	j, skip := b.standby(hubDown)
	if skip != "" {
		return "a standby lost its copies: skipped (" + skip + ")"
	}
	ctx := context.Background()
	client := b.losers[j].Resource(workGVR).Namespace(chaosCluster)
	list, err := client.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Sprintf("hub %s lost its copies: skipped (list: %v)", b.names[j], err)
	}
	var lost []string
	for i := range list.Items {
		w := &list.Items[i]
		if !strings.HasPrefix(w.GetName(), chaosPrefix) || !mirror.IsCopy(w) {
			continue
		}
		if len(w.GetFinalizers()) > 0 {
			if _, err := client.Patch(ctx, w.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
				continue
			}
		}
		if err := client.Delete(ctx, w.GetName(), metav1.DeleteOptions{}); err == nil || apierrors.IsNotFound(err) {
			lost = append(lost, w.GetName())
		}
	}
	return fmt.Sprintf("hub %s lost its copies [%s]", b.names[j], strings.Join(lost, ","))
}

// believedHub is the hub the user thinks manages the cluster: the agent's active hub as the FailoverConfig says,
// and one time in four the other one (a user who did not notice a switch).
func (b *chaosBed) believedHub(rng *rand.Rand) int {
	i := 0
	if fc, err := util.GetFailoverConfig(b.spoke); err == nil && fc.Status.ActiveHub == hubB {
		i = 1
	}
	if rng.IntN(4) == 0 {
		i = 1 - i
	}
	return i
}

// userWrite creates, edits or deletes a chaos ManifestWork on hub i as the user, or makes a deleted one again
// under its name (as GitOps tools and `kubectl replace --force` do); a create, re-create or edit carries seq as
// the ConfigMap's value. It returns the operation, the work's name and the API error.
func (b *chaosBed) userWrite(t *testing.T, rng *rand.Rand, i int, works map[string]*chaosWork, next *int, seq int) (op, name string, saw int, err error) {
	var live, gone []string
	for name, w := range works {
		if !w.deleted {
			live = append(live, name)
		} else {
			gone = append(gone, name)
		}
	}
	slices.Sort(live)
	slices.Sort(gone)
	ctx := context.Background()
	client := b.users[i].Resource(workGVR).Namespace(chaosCluster)
	op, saw = "create", -1
	if len(live) > 0 {
		op = []string{"create", "edit", "edit", "delete", "recreate"}[rng.IntN(5)]
	}
	if op == "recreate" && len(gone) == 0 {
		op = "create"
	}
	if op == "recreate" {
		name = gone[rng.IntN(len(gone))]
		_, err = client.Create(ctx, chaosWorkObject(t, name, seq), metav1.CreateOptions{})
		return op, name, saw, err
	}
	if op == "create" {
		*next++
		name = fmt.Sprintf("%ss%d-%d", chaosPrefix, b.seed, *next)
		_, err = client.Create(ctx, chaosWorkObject(t, name, seq), metav1.CreateOptions{})
		return op, name, saw, err
	}
	name = live[rng.IntN(len(live))]
	cur, err := client.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return op, name, saw, err
	}
	if op == "delete" {
		// The user deletes what they read (followNotWrittenBack compares it with their last write).
		uid := cur.GetUID()
		return op, name, workValue(cur, name), client.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	}
	cur.Object["spec"] = chaosWorkObject(t, name, seq).Object["spec"]
	_, err = client.Update(ctx, cur, metav1.UpdateOptions{})
	return op, name, saw, err
}

func chaosWorkObject(t *testing.T, name string, seq int) *unstructured.Unstructured {
	return configMapWork(t, chaosCluster, name, map[string]string{name: strconv.Itoa(seq)})
}

func outcome(err error) string {
	switch {
	case err == nil:
		return "accepted"
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "is managed from hub"):
		return "refused by the fence"
	}
	msg := err.Error()
	if len(msg) > 80 {
		msg = msg[:80] + "…"
	}
	return "failed: " + msg
}

// settle polls the spoke's chaos ConfigMaps until they are what the user's accepted writes say, or
// chaosConvergeWithin passed, and returns the last state (ConfigMap → value).
func (b *chaosBed) settle(ctx context.Context, works map[string]*chaosWork) map[string]int {
	want := map[string]int{}
	for name, w := range works {
		if !w.deleted {
			want[name] = w.seq
		}
	}
	var last map[string]int
	deadline := time.Now().Add(chaosConvergeWithin)
	for {
		last = map[string]int{}
		list, err := b.spoke.Kube.CoreV1().ConfigMaps(chaosNamespace).List(ctx, metav1.ListOptions{})
		if err == nil {
			for _, cm := range list.Items {
				if strings.HasPrefix(cm.Name, chaosPrefix) {
					n, _ := strconv.Atoi(cm.Data["value"])
					last[cm.Name] = n
				}
			}
			if fmt.Sprint(last) == fmt.Sprint(want) {
				return last
			}
		}
		if time.Now().After(deadline) {
			return last
		}
		time.Sleep(time.Second)
	}
}

// checkChaos checks the spoke's invariants of one schedule: (1) no resource of a deleted ManifestWork exists;
// (2) no resource ever went back to an older content (a work made again under its name carries a higher value);
// (3) every accepted write is on the spoke; (4) nothing the user did not delete was deleted. It returns the
// number of checks made and the violations. (5), the hubs, is checkHubs; (6), no flapping of the cluster's
// source (no more source changes than moves of the agent and starts of the replicator), is checked in run.
func checkChaos(works map[string]*chaosWork, final map[string]int, seen map[string][]int) (int, []string) {
	var checks int
	var out []string
	names := make([]string, 0, len(works))
	for name := range works {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		w := works[name]
		got, present := final[name]
		checks++
		if w.deleted && present {
			out = append(out, fmt.Sprintf("(1) %s was deleted by the user, and its ConfigMap is on the spoke (value %d)", name, got))
		}
		checks++
		highest := 0
		for _, v := range seen[name] {
			if v >= 0 && v < highest {
				out = append(out, fmt.Sprintf("(2) %s went back from %d to %d on the spoke (seen %v)", name, highest, v, seen[name]))
				break
			}
			highest = max(highest, v)
		}
		if w.deleted {
			continue
		}
		checks++
		if !present || got != w.seq {
			out = append(out, fmt.Sprintf("(3) %s: the user's last accepted write is %d, the spoke has %s", name, w.seq, valueOrAbsent(got, present)))
		}
		checks++
		if i := slices.Index(seen[name], -1); i >= 0 && !w.everDeleted {
			out = append(out, fmt.Sprintf("(4) %s was never deleted by the user, and its ConfigMap was deleted on the spoke (seen %v)", name, seen[name]))
		}
	}
	return checks, out
}

func valueOrAbsent(v int, present bool) string {
	if !present {
		return "none"
	}
	return strconv.Itoa(v)
}

// reset deletes every chaos ManifestWork on both hubs (as the admin: on the hub the cluster is not on, the fence
// refuses a copy's delete, and the replicator deletes that copy once the source's is gone), also one whose
// create reported an error but was made, and waits until the spoke holds no chaos ConfigMap, so that the next
// schedule starts clean. A work that stays deleting on the hub the agent is not on (the work agent's finalizer)
// is left: names carry the seed.
func (b *chaosBed) reset(t *testing.T, ctx context.Context) {
	t.Helper()
	var left []string
	err := wait.PollUntilContextTimeout(ctx, util.PollInterval, chaosConvergeWithin, true, func(ctx context.Context) (bool, error) {
		left = nil
		for _, h := range b.hubs {
			list, err := dyn(h).Resource(workGVR).Namespace(chaosCluster).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil
			}
			for _, w := range list.Items {
				if !strings.HasPrefix(w.GetName(), chaosPrefix) || w.GetDeletionTimestamp() != nil {
					continue
				}
				left = append(left, h.Name+"/"+w.GetName())
				_ = dyn(h).Resource(workGVR).Namespace(chaosCluster).Delete(ctx, w.GetName(), metav1.DeleteOptions{})
			}
		}
		list, err := b.spoke.Kube.CoreV1().ConfigMaps(chaosNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, cm := range list.Items {
			if strings.HasPrefix(cm.Name, chaosPrefix) {
				left = append(left, "spoke/"+cm.Name)
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		t.Logf("reset after seed %d: not clean within %s (left %s); the next schedule uses other names", b.seed, chaosConvergeWithin, strings.Join(left, ","))
	}
}

// excused returns why v, a violation of schedule s, is reported apart rather than failing the test ("": it is
// not): a spoke's rollback (2) or delete (4) in a schedule that restored the hub the agent was on (OCM's work
// agent applies what the restored hub holds before the replicator writes the newer state back). A move to a hub
// the replicator reported behind, or named in step without confirming it, excuses nothing: the agent holds OCM's
// work agent on the hub it left (failover.WorkHold), and the spoke keeps what it has. What outlasts the settle — a
// deleted work's resource still on the spoke (1), an accepted write missing from the spoke (3) or from a hub, a
// work left Terminating (5) — and a source that flapped (6) fail the test whatever happened.
func excused(s chaosSchedule, v string) string {
	if (strings.HasPrefix(v, "(2)") || strings.HasPrefix(v, "(4)")) && s.ownRestores > 0 {
		return "after a restore of the cluster's hub"
	}
	return ""
}

// warnings counts the events by which the agent said it moved to a hub that may hold older ManifestWorks.
func warnings(reasons map[string]int) int {
	return reasons[failover.ReasonHubBehind] + reasons[failover.ReasonHubReplicationUnknown]
}
