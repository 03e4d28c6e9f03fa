package failover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	failoverfake "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned/fake"
	failoverinformers "github.com/klusterlet-failover/klusterlet-failover/pkg/client/informers/externalversions"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

// The orchestrator's shell (step, apply, the session lifecycle and the status) on fake spoke clients, fake
// sessions and hubs served by httptest: every hub answers the standby probe (/version and SelfSubjectAccessReviews,
// all allowed) and the heartbeat, until it is closed.

// shellHub is one hub of the shell tests: a fakeHub served over TLS.
type shellHub struct {
	*fakeHub
	server *httptest.Server
}

func newShellHub(t *testing.T) *shellHub {
	h := &fakeHub{}
	return &shellHub{fakeHub: h, server: startHub(t, h)}
}

// sessionRequestFails sends a request to the active hub through the connectivity tracker, as the session's own
// clients do (a lease renewal); the hub being down, it records the failed request the hub monitor takes as
// evidence (rule 4 of Evaluate: silence alone is none).
func (s *shell) sessionRequestFails() {
	s.t.Helper()
	h := s.hubs[s.r.run.hub]
	client := &http.Client{Transport: s.r.tracker.WrapTransport(h.server.Client().Transport), Timeout: time.Second}
	if resp, err := client.Get(h.server.URL + "/version"); err == nil {
		_ = resp.Body.Close()
		s.t.Fatalf("hub %s answered a request meant to fail", s.r.run.hub)
	}
}

// setDown makes the hub drop every connection (true) or answer again (false).
func (h *shellHub) setDown(down bool) {
	h.down.Store(down)
	h.server.CloseClientConnections()
}

// kubeconfig is a bootstrap kubeconfig for the hub with its token.
func (h *shellHub) kubeconfig(t *testing.T) []byte {
	return kubeconfig(t, kubeconfigOptions{server: h.server.URL, ca: caOf(h.server), token: testToken})
}

// fakeSession stands for a hub session: it runs until its context ends and reports what the test tells it to
// through the orchestrator's observer.
type fakeSession struct {
	params hubsession.Params
	mu     sync.Mutex
	ended  bool
	// abandoned is set when the orchestrator said the bootstrap ends because it leaves the hub.
	abandoned bool
}

func (s *fakeSession) Run(ctx context.Context) error {
	<-ctx.Done()
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
	return nil
}

// ForceBootstrap does nothing: no shell test reaches a forced bootstrap (TestDecide covers when it is asked for).
func (s *fakeSession) ForceBootstrap(string) {}

func (s *fakeSession) AbandonBootstrap() {
	s.mu.Lock()
	s.abandoned = true
	s.mu.Unlock()
}

func (s *fakeSession) hasEnded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

func (s *fakeSession) wasAbandoned() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.abandoned
}

// bootstrapping reports the session bootstrapping: the heartbeat then uses the hub's bootstrap kubeconfig.
func (s *fakeSession) bootstrapping() {
	s.params.Observer.PhaseChanged(hubsession.PhaseBootstrapping, "waiting for the CSR")
}

// registered reports the session Registered on its hub, which accepts the cluster and has it Available.
func (s *fakeSession) registered() {
	s.params.Observer.PhaseChanged(hubsession.PhaseRegistered, "registered on hub "+s.params.Hub.Name)
	s.params.Observer.ManagedClusterChanged(&clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster1"},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
		Status: clusterv1.ManagedClusterStatus{Conditions: []metav1.Condition{
			{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue},
			{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue},
		}},
	})
}

// registeredWith reports the session Registered as registered does, its ManagedCluster carrying annotations
// (the replicator's report).
func (s *fakeSession) registeredWith(annotations map[string]string) {
	s.params.Observer.PhaseChanged(hubsession.PhaseRegistered, "registered on hub "+s.params.Hub.Name)
	s.params.Observer.ManagedClusterChanged(&clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster1", Annotations: annotations},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
		Status: clusterv1.ManagedClusterStatus{Conditions: []metav1.Condition{
			{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue},
			{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue},
		}},
	})
}

// fakeKeeper stands for the standby credentials keeper: Keep reports Ready at once and runs until its context
// ends; Swap records its hubs.
type fakeKeeper struct {
	mu        sync.Mutex
	running   map[string]bool
	ctxs      map[string]context.Context
	report    map[string]func(hubsession.StandbyStatus)
	swaps     []string
	forgotten []string
	// sweeps are the configured hubs of each ForgetOthers call, comma-separated; sweepErr is what it returns.
	sweeps   []string
	sweepErr error
	// stopped records, per hub handed over to, whether its keeper's context had ended at the hand-over.
	stopped map[string]bool
}

func (k *fakeKeeper) Keep(ctx context.Context, hub hubsession.Hub, report func(hubsession.StandbyStatus)) error {
	k.mu.Lock()
	k.running[hub.Name] = true
	k.ctxs[hub.Name] = ctx
	k.report[hub.Name] = report
	k.mu.Unlock()
	report(hubsession.StandbyStatus{State: failoverv1alpha1.StandbyCredentialsReady, Secret: "hub-kubeconfig-secret-" + hub.Name, Message: "valid"})
	<-ctx.Done()
	k.mu.Lock()
	k.running[hub.Name] = false
	k.mu.Unlock()
	return nil
}

func (k *fakeKeeper) Swap(_ context.Context, h hubsession.Handover) (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	name := ""
	if h.From != nil {
		name = h.From.Name
		if h.DiscardFrom {
			name += "(discarded)"
		}
	}
	k.swaps = append(k.swaps, name+"->"+h.To.Name)
	if ctx, ok := k.ctxs[h.To.Name]; ok {
		k.stopped[h.To.Name] = ctx.Err() != nil
	}
	return false, nil
}

func (k *fakeKeeper) stoppedBeforeSwap(hub string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.stopped[hub]
}

// ForgetOthers records keep as the configured hubs of a sweep and forgets nothing.
func (k *fakeKeeper) ForgetOthers(_ context.Context, keep []string) ([]string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sweeps = append(k.sweeps, strings.Join(keep, ","))
	return nil, k.sweepErr
}

func (k *fakeKeeper) Forget(_ context.Context, hub string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.forgotten = append(k.forgotten, hub)
	return nil
}

func (k *fakeKeeper) isRunning(hub string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.running[hub]
}

func (k *fakeKeeper) swapped() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.swaps...)
}

// shell is an orchestrator with its fakes.
type shell struct {
	t        *testing.T
	ctx      context.Context
	r        *Orchestrator
	clock    *clocktesting.FakeClock
	recorder events.InMemoryRecorder
	kube     *kubefake.Clientset
	fo       *failoverfake.Clientset
	hubs     map[string]*shellHub
	primary  string // the primary's bootstrap kubeconfig file
	keeper   *fakeKeeper
	// metrics is the registry of the orchestrator's metrics.
	metrics metrics.KubeRegistry

	mu       sync.Mutex
	sessions []*fakeSession
	// buildErr, when set for a hub, is what building its session returns.
	buildErr map[string]error
}

// newShell builds an orchestrator whose primary (file) and hub-b (FailoverConfig alternate, Secret) are fake
// hubs that answer; spec is the FailoverConfig's spec (its alternates are set here).
func newShell(t *testing.T, spec failoverv1alpha1.FailoverConfigSpec) *shell {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := &shell{t: t, ctx: ctx, hubs: map[string]*shellHub{"primary": newShellHub(t), "hub-b": newShellHub(t)}, buildErr: map[string]error{},
		keeper: &fakeKeeper{running: map[string]bool{}, ctxs: map[string]context.Context{}, report: map[string]func(hubsession.StandbyStatus){},
			stopped: map[string]bool{}}}
	s.primary = filepath.Join(t.TempDir(), "bootstrap.kubeconfig")
	if err := os.WriteFile(s.primary, s.hubs["primary"].kubeconfig(t), 0o600); err != nil {
		t.Fatal(err)
	}
	s.kube = kubefake.NewSimpleClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hub-b-bootstrap", Namespace: fileHubsNamespace},
		Data:       map[string][]byte{failoverv1alpha1.KubeconfigSecretKey: s.hubs["hub-b"].kubeconfig(t)},
	})
	spec.AlternateHubs = []failoverv1alpha1.AlternateHub{{Name: "hub-b", BootstrapKubeconfigSecretRef: "hub-b-bootstrap"}}
	fc := &failoverv1alpha1.FailoverConfig{ObjectMeta: metav1.ObjectMeta{Name: "failover", Namespace: fileHubsNamespace, Generation: 1}, Spec: spec}
	s.fo = failoverfake.NewSimpleClientset(fc)
	kubeInformers := informers.NewSharedInformerFactoryWithOptions(s.kube, 0, informers.WithNamespace(fileHubsNamespace))
	foInformers := failoverinformers.NewSharedInformerFactoryWithOptions(s.fo, 0, failoverinformers.WithNamespace(fileHubsNamespace))
	secrets := kubeInformers.Core().V1().Secrets()
	fcInformer := foInformers.Failover().V1alpha1().FailoverConfigs()
	synced := []cache.InformerSynced{secrets.Informer().HasSynced, fcInformer.Informer().HasSynced}
	kubeInformers.Start(ctx.Done())
	foInformers.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		t.Fatal("informers did not sync")
	}
	s.clock = clocktesting.NewFakeClock(time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC))
	s.recorder = events.NewInMemoryRecorder("test", s.clock)
	s.metrics = testutil.NewFakeKubeRegistry("1.35.0")
	r, err := NewOrchestrator(OrchestratorOptions{
		Agent: hubsession.Config{ClusterName: "cluster1", AgentName: "agent1", Namespace: fileHubsNamespace, SecretName: "hub-kubeconfig-secret",
			SecretInformer: secrets, Clock: s.clock, Recorder: s.recorder},
		NewSession:         s.newSession,
		FailoverConfigName: "failover", PrimaryBootstrapKubeconfigFile: s.primary,
		FailoverConfigInformer: fcInformer, FailoverConfigClient: s.fo.FailoverV1alpha1(),
		ProbeTimeout: time.Second, SessionStopTimeout: time.Second,
		Metrics: NewMetrics(s.metrics.MustRegister),
		Standby: s.keeper,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.readFiles()
	t.Cleanup(r.stopSession)
	s.r = r
	return s
}

func (s *shell) newSession(p hubsession.Params) (Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.buildErr[p.Hub.Name]; err != nil {
		return nil, err
	}
	fs := &fakeSession{params: p}
	s.sessions = append(s.sessions, fs)
	return fs, nil
}

// session returns the i-th session built (0 is the first).
func (s *shell) session(i int) *fakeSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.sessions) {
		s.t.Fatalf("session %d was not built (%d were)", i, len(s.sessions))
	}
	return s.sessions[i]
}

// stepUntil runs rounds until cond holds (probes and heartbeats answer in their own goroutines, so a few rounds
// may be needed), failing the test after 10 s of real time.
func (s *shell) stepUntil(what string, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.r.step(s.ctx)
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: not reached; state %s, active %q, memory %+v", what, s.r.state, s.r.run.hub, s.r.mem)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// status is the FailoverConfig status as last written.
func (s *shell) status() failoverv1alpha1.FailoverConfigStatus {
	fc, err := s.fo.FailoverV1alpha1().FailoverConfigs(fileHubsNamespace).Get(s.ctx, "failover", metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	return fc.Status
}

func (s *shell) events(reason string) int {
	n := 0
	for _, e := range s.recorder.Events() {
		if e.Reason == reason {
			n++
		}
	}
	return n
}

// probed is true once every standby hub's probe says Ready.
func (s *shell) probedReady(names ...string) func() bool {
	return func() bool {
		for _, n := range names {
			if h := s.r.hubs[n]; h == nil || !h.probed || h.probe.Result != failoverv1alpha1.HubProbeReady {
				return false
			}
		}
		return true
	}
}

// join starts the agent on the primary and makes it Active there with hub-b probed Ready.
func (s *shell) join() *fakeSession {
	s.t.Helper()
	s.r.step(s.ctx)
	if s.r.run.hub != "primary" || s.r.state != StateJoining {
		s.t.Fatalf("first round: active %q state %s, want a session on primary, Joining", s.r.run.hub, s.r.state)
	}
	first := s.session(0)
	if first.params.Hub.Name != "primary" || first.params.Observer == nil || first.params.WrapTransport == nil {
		s.t.Fatalf("session built with %+v, want hub primary with the orchestrator's observer and transport wrapper", first.params)
	}
	first.registered()
	s.stepUntil("Active on primary with hub-b Ready", func() bool { return s.r.state == StateActive && s.probedReady("hub-b")() })
	return first
}

func condition(st failoverv1alpha1.FailoverConfigStatus, t string) *metav1.Condition {
	return meta.FindStatusCondition(st.Conditions, t)
}

// TestShellInvalidFailoverConfigIsDegradedWhileHealthy: a FailoverConfig that the CRD schema let through but
// that fails validation keeps Degraded True while the active hub is healthy (it used to be cleared by the
// first healthy round).
func TestShellInvalidFailoverConfigIsDegradedWhileHealthy(t *testing.T) {
	s := newShell(t, failoverv1alpha1.FailoverConfigSpec{HubRejectionGracePeriod: &metav1.Duration{Duration: time.Second}})
	s.join()
	s.stepUntil("status written", func() bool { return condition(s.status(), failoverv1alpha1.ConditionAvailable) != nil })
	st := s.status()
	if c := condition(st, failoverv1alpha1.ConditionAvailable); c.Status != metav1.ConditionTrue {
		t.Fatalf("Available %+v, want True on a healthy hub", c)
	}
	c := condition(st, failoverv1alpha1.ConditionDegraded)
	if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "spec.hubRejectionGracePeriod") {
		t.Errorf("Degraded %+v, want True naming spec.hubRejectionGracePeriod", c)
	}
}

// TestShellHeartbeatThenHubLoss: a quiet hub that answers the heartbeat stays active past the connection
// timeout; once it stops answering, the agent leaves it for hub-b.
func TestShellHeartbeatThenHubLoss(t *testing.T) {
	s := newShell(t, failoverv1alpha1.FailoverConfigSpec{})
	s.r.step(s.ctx)
	first := s.session(0)
	first.bootstrapping()
	s.stepUntil("hub-b probed Ready", s.probedReady("hub-b"))
	interval := failoverv1alpha1.DefaultHubConnectionTimeout / 3
	for i := 0; i < 4; i++ {
		s.clock.Step(interval)
		s.stepUntil(fmt.Sprintf("heartbeat %d answered", i+1), func() bool { return s.r.tracker.Snapshot().LastSuccess.Equal(s.clock.Now()) })
	}
	if s.r.run.hub != "primary" || s.events(ReasonFailoverStarted) != 0 {
		t.Fatalf("after %s of heartbeats: active %q, %d FailoverStarted events; want primary kept", 4*interval, s.r.run.hub, s.events(ReasonFailoverStarted))
	}

	s.hubs["primary"].setDown(true)
	s.clock.Step(interval)
	s.stepUntil("heartbeat failed", func() bool { return s.r.tracker.Snapshot().LastErrorTime.Equal(s.clock.Now()) })
	s.clock.Step(failoverv1alpha1.DefaultHubConnectionTimeout)
	s.stepUntil("switch to hub-b", func() bool { return s.r.run.hub == "hub-b" })
	if !first.hasEnded() || !first.wasAbandoned() {
		t.Errorf("the primary's session: ended %t, bootstrap abandoned %t; want both", first.hasEnded(), first.wasAbandoned())
	}
}

// TestShellFailover: the active hub is lost, the agent switches to hub-b (the old session stopped, its
// bootstrap abandoned), the move completes when the cluster is Available there, and the status records it.
// Then hub-b is removed from the FailoverConfig: its session stops and the agent starts on the primary again.
func TestShellFailover(t *testing.T) {
	s := newShell(t, failoverv1alpha1.FailoverConfigSpec{})
	first := s.join()

	s.hubs["primary"].setDown(true)
	s.clock.Step(failoverv1alpha1.DefaultHubConnectionTimeout + time.Second)
	s.sessionRequestFails()
	s.stepUntil("switch to hub-b", func() bool { return s.r.run.hub == "hub-b" })
	if s.r.state != StateJoining || s.r.mem.Switch == nil || s.r.mem.Switch.From != "primary" || s.r.mem.Switch.To != "hub-b" {
		t.Fatalf("state %s, switch %+v; want Joining with the move primary -> hub-b", s.r.state, s.r.mem.Switch)
	}
	if !first.hasEnded() || !first.wasAbandoned() {
		t.Errorf("the primary's session: ended %t, bootstrap abandoned %t; want both", first.hasEnded(), first.wasAbandoned())
	}
	second := s.session(1)
	if second.params.Hub.Name != "hub-b" {
		t.Fatalf("second session on %q, want hub-b", second.params.Hub.Name)
	}
	if s.r.hubs["primary"].failedAt.IsZero() {
		t.Error("the lost primary is not marked failed")
	}

	second.registered()
	s.stepUntil("move completed", func() bool { return s.r.mem.Switch == nil && s.r.state == StateActive })
	st := s.status()
	if st.ActiveHub != "hub-b" || st.FailoverCount != 1 || st.LastFailover == nil || st.LastFailover.EndTime == nil ||
		st.LastFailover.Reason != failoverv1alpha1.FailoverReasonHubConnectionLost {
		t.Errorf("status active %q, count %d, last %+v; want hub-b, 1, a finished HubConnectionLost move", st.ActiveHub, st.FailoverCount, st.LastFailover)
	}
	if n := s.events(ReasonFailoverSucceeded); n != 1 {
		t.Errorf("%d %s events, want 1", n, ReasonFailoverSucceeded)
	}

	fc, err := s.fo.FailoverV1alpha1().FailoverConfigs(fileHubsNamespace).Get(s.ctx, "failover", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fc.Spec.AlternateHubs = nil
	if _, err := s.fo.FailoverV1alpha1().FailoverConfigs(fileHubsNamespace).Update(s.ctx, fc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No round runs until the informer has the change: the fake clientset's status update would write the
	// whole object back.
	deadline := time.Now().Add(10 * time.Second)
	for fc := s.r.failoverConfig(); fc == nil || len(fc.Spec.AlternateHubs) > 0; fc = s.r.failoverConfig() {
		if time.Now().After(deadline) {
			t.Fatal("the informer did not see the FailoverConfig change")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.stepUntil("back on the primary", func() bool { return s.r.run.hub == "primary" })
	if !second.hasEnded() || len(s.r.order) != 1 {
		t.Errorf("hub-b's session ended %t, hubs %v; want it stopped and only the primary configured", second.hasEnded(), s.r.order)
	}
	s.keeper.mu.Lock()
	forgotten := strings.Join(s.keeper.forgotten, ",")
	s.keeper.mu.Unlock()
	if forgotten != "hub-b" {
		t.Errorf("standby credentials forgotten for %q, want hub-b (removed from the FailoverConfig)", forgotten)
	}
}

// TestShellFailoverCountedOnceWhenWriteAnswerIsLost: a status write that takes effect but answers with an error
// (a timeout) does not leave the move unrecorded, so the next write does not count it again.
func TestShellFailoverCountedOnceWhenWriteAnswerIsLost(t *testing.T) {
	s := newShell(t, failoverv1alpha1.FailoverConfigSpec{})
	s.join()
	var lost atomic.Int32
	s.fo.PrependReactor("update", "failoverconfigs", func(action clienttesting.Action) (bool, runtime.Object, error) {
		u, ok := action.(clienttesting.UpdateAction)
		if !ok || u.GetSubresource() != "status" {
			return false, nil, nil
		}
		fc := u.GetObject().(*failoverv1alpha1.FailoverConfig)
		cur, err := s.fo.Tracker().Get(u.GetResource(), u.GetNamespace(), fc.Name)
		if err != nil {
			return true, nil, err
		}
		// The fake clientset does not check resourceVersions: a write from a copy older than the applied one
		// is refused here as the apiserver would refuse it.
		if cur.(*failoverv1alpha1.FailoverConfig).Status.FailoverCount > fc.Status.FailoverCount {
			return true, nil, apierrors.NewConflict(u.GetResource().GroupResource(), fc.Name, errors.New("stale copy"))
		}
		if fc.Status.FailoverCount == 0 || lost.Load() > 0 {
			return false, nil, nil
		}
		// The write is applied, then its answer is lost.
		lost.Add(1)
		if err := s.fo.Tracker().Update(u.GetResource(), fc, u.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, nil, apierrors.NewTimeoutError("the answer was lost", 1)
	})
	s.hubs["primary"].setDown(true)
	s.clock.Step(failoverv1alpha1.DefaultHubConnectionTimeout + time.Second)
	s.sessionRequestFails()
	s.stepUntil("switch to hub-b", func() bool { return s.r.run.hub == "hub-b" })
	s.session(1).registered()
	s.stepUntil("the move counted by a write whose answer is lost", func() bool { return lost.Load() > 0 })
	// The next rounds read the applied count from the informer, as they would from a real apiserver.
	deadline := time.Now().Add(10 * time.Second)
	for fc := s.r.failoverConfig(); fc == nil || fc.Status.FailoverCount != 1; fc = s.r.failoverConfig() {
		if time.Now().After(deadline) {
			t.Fatal("the informer did not see the applied count")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.stepUntil("move completed", func() bool { return s.r.mem.Switch == nil && s.r.state == StateActive })
	// Later writes (a condition or a message changing) must keep the count at 1.
	s.clock.Step(StatusRefreshInterval + time.Second)
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
		s.r.step(s.ctx)
		time.Sleep(10 * time.Millisecond)
	}
	if st := s.status(); st.FailoverCount != 1 {
		t.Errorf("failoverCount %d after a write whose answer was lost, want 1", st.FailoverCount)
	}
	if s.r.unrecordedFailovers != 0 {
		t.Errorf("%d moves still unrecorded, want 0", s.r.unrecordedFailovers)
	}
}

// TestShellUnappliedWriteKeepsMoveUnrecorded: a status write that answers with an error and did not take effect
// leaves the move unrecorded even when the server holds the same count from an earlier move (a stale copy was the
// base of the write): the move is not lost.
func TestShellUnappliedWriteKeepsMoveUnrecorded(t *testing.T) {
	s := newShell(t, failoverv1alpha1.FailoverConfigSpec{})
	s.join()
	start := metav1.NewTime(s.clock.Now())
	end := metav1.NewTime(s.clock.Now().Add(time.Second))
	// The server holds move 1; the decision goroutine's copy is older (count 0); move 2 is unrecorded.
	fc, err := s.fo.FailoverV1alpha1().FailoverConfigs(fileHubsNamespace).Get(s.ctx, "failover", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := fc.DeepCopy()
	fc.Status.FailoverCount = 1
	fc.Status.LastFailover = &failoverv1alpha1.FailoverRecord{From: "primary", To: "hub-b", Reason: failoverv1alpha1.FailoverReasonHubConnectionLost,
		StartTime: start, EndTime: &start}
	if _, err := s.fo.FailoverV1alpha1().FailoverConfigs(fileHubsNamespace).UpdateStatus(s.ctx, fc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stale.Status.FailoverCount = 0
	s.r.unrecordedFailovers = 1
	s.r.lastFailover = &failoverv1alpha1.FailoverRecord{From: "hub-b", To: "primary", Reason: failoverv1alpha1.FailoverReasonHubConnectionLost,
		StartTime: end, EndTime: &end}
	s.fo.PrependReactor("update", "failoverconfigs", func(action clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewTimeoutError("not applied", 1)
	})
	spec := failoverv1alpha1.WithDefaults(stale.Spec)
	s.r.writeStatus(s.ctx, stale, spec, s.r.facts.snapshot(), s.clock.Now())
	if s.r.unrecordedFailovers != 1 {
		t.Errorf("%d moves unrecorded after a write that did not take effect, want 1", s.r.unrecordedFailovers)
	}
}

// TestShellSweepStandbys: the sweep of standby Secrets is skipped when the FailoverConfig API was unusable at
// start (its hubs are unknown, not removed), and a failing sweep is one Warning, not a retry every round.
func TestShellSweepStandbys(t *testing.T) {
	s := newShell(t, failoverv1alpha1.FailoverConfigSpec{})
	sweeps := func() string {
		s.keeper.mu.Lock()
		defer s.keeper.mu.Unlock()
		return strings.Join(s.keeper.sweeps, " ")
	}
	informer := s.r.o.FailoverConfigInformer
	s.r.o.FailoverConfigInformer = nil
	s.r.sweepStandbys(s.ctx)
	if got := sweeps(); got != "" || !s.r.standbysSwept {
		t.Errorf("without the FailoverConfig API: sweeps %q, swept %t; want none, and no later attempt", got, s.r.standbysSwept)
	}

	s.r.o.FailoverConfigInformer, s.r.standbysSwept = informer, false
	s.keeper.mu.Lock()
	s.keeper.sweepErr = errors.New("secrets is forbidden")
	s.keeper.mu.Unlock()
	s.join()
	s.r.step(s.ctx)
	if got := sweeps(); got != "primary,hub-b" {
		t.Errorf("sweeps %q after a failed one and more rounds, want one with primary,hub-b", got)
	}
	if n := s.events(ReasonStandbyCredentialsSwapFailed); n != 1 {
		t.Errorf("%d %s events after a failed sweep, want 1", n, ReasonStandbyCredentialsSwapFailed)
	}
}

// TestShellRestartsOnBootstrapChange: a new bootstrap kubeconfig for the active hub (FC-02) restarts its
// session on the same hub; Active goes back to Joining.
func TestShellRestartsOnBootstrapChange(t *testing.T) {
	s := newShell(t, failoverv1alpha1.FailoverConfigSpec{})
	first := s.join()
	kubeconfig := append(s.hubs["primary"].kubeconfig(t), []byte("# rotated\n")...)
	if err := os.WriteFile(s.primary, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	if !s.r.readFiles() {
		t.Fatal("the file change was not seen")
	}
	s.r.step(s.ctx)
	if !first.hasEnded() {
		t.Error("the old session still runs")
	}
	second := s.session(1)
	if second.params.Hub.Name != "primary" || s.r.run.hub != "primary" || s.r.state != StateJoining || s.r.mem.Switch != nil {
		t.Errorf("after the change: session on %q, active %q, state %s, switch %+v; want a new session on primary, Joining, no move",
			second.params.Hub.Name, s.r.run.hub, s.r.state, s.r.mem.Switch)
	}
	second.registered()
	s.stepUntil("Active again", func() bool { return s.r.state == StateActive })
}

// TestShellTargetSessionCannotBeBuilt: when no session can be built on the target of a move, the move fails
// (HubSessionFailed, FailoverFailed, the target skipped) and the agent starts on the first startable hub again,
// the primary.
func TestShellTargetSessionCannotBeBuilt(t *testing.T) {
	s := newShell(t, failoverv1alpha1.FailoverConfigSpec{})
	s.join()
	s.mu.Lock()
	s.buildErr["hub-b"] = errors.New("hub session hub-b: spoke client and informers are required")
	s.mu.Unlock()

	s.hubs["primary"].setDown(true)
	s.clock.Step(failoverv1alpha1.DefaultHubConnectionTimeout + time.Second)
	s.sessionRequestFails()
	s.stepUntil("the failed move is decided on", func() bool { return s.events(ReasonFailoverFailed) > 0 })
	if n := s.events(ReasonHubSessionFailed); n != 1 {
		t.Errorf("%d %s events, want 1", n, ReasonHubSessionFailed)
	}
	if s.r.run.hub != "primary" || s.r.mem.Switch != nil {
		t.Errorf("active %q, switch %+v; want back on primary with no move", s.r.run.hub, s.r.mem.Switch)
	}
	if s.r.hubs["hub-b"].failedAt.IsZero() || s.r.hubs["hub-b"].sessionErr == "" {
		t.Errorf("hub-b: failedAt %v, sessionErr %q; want it failed with the reason", s.r.hubs["hub-b"].failedAt, s.r.hubs["hub-b"].sessionErr)
	}
	st := s.status()
	for _, h := range st.Hubs {
		if h.Name == "hub-b" && h.SkippedUntil == nil {
			t.Errorf("hub-b status %+v, want skipped", h)
		}
	}
}

// TestShellNoViableHubWarnsOnce: with both hubs lost the agent stays on the primary, reports NoViableHub once
// and keeps its session.
func TestShellNoViableHubWarnsOnce(t *testing.T) {
	s := newShell(t, failoverv1alpha1.FailoverConfigSpec{})
	first := s.join()
	s.hubs["primary"].setDown(true)
	s.hubs["hub-b"].setDown(true)
	s.clock.Step(failoverv1alpha1.DefaultProbeInterval + time.Second)
	s.stepUntil("hub-b probed unreachable", func() bool {
		h := s.r.hubs["hub-b"]
		return h.probed && h.probe.Result != failoverv1alpha1.HubProbeReady
	})
	s.clock.Step(failoverv1alpha1.DefaultHubConnectionTimeout)
	s.sessionRequestFails()
	s.stepUntil("NoViableHub", func() bool { return s.r.state == StateNoViableHub })
	for i := 0; i < 3; i++ {
		s.r.step(s.ctx)
	}
	if n := s.events(ReasonNoViableHub); n != 1 {
		t.Errorf("%d %s warnings, want 1", n, ReasonNoViableHub)
	}
	if first.hasEnded() || s.r.run.hub != "primary" {
		t.Errorf("session on the lost hub ended %t, active %q; want it kept on primary", first.hasEnded(), s.r.run.hub)
	}
	c := condition(s.status(), failoverv1alpha1.ConditionDegraded)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonNoViableHub {
		t.Errorf("Degraded %+v, want True with reason %s", c, ReasonNoViableHub)
	}
}

// TestShellStandbyCredentials: a keeper runs for the standby hub once its probe is Ready and its reports reach
// the status and the events; every session start hands the credentials over (from the hub left), and the hub
// that becomes active has its keeper stopped and no standbyCredentials in the status.
func TestShellStandbyCredentials(t *testing.T) {
	s := newShell(t, failoverv1alpha1.FailoverConfigSpec{})
	s.join()
	s.stepUntil("hub-b's keeper runs", func() bool { return s.keeper.isRunning("hub-b") })
	if s.keeper.isRunning("primary") {
		t.Error("a keeper runs for the active hub")
	}
	s.keeper.mu.Lock()
	sweeps := strings.Join(s.keeper.sweeps, " ")
	s.keeper.mu.Unlock()
	if sweeps != "primary,hub-b" {
		t.Errorf("standby Secret sweeps with configured hubs %q, want one with primary,hub-b", sweeps)
	}
	standbyOf := func(name string) *failoverv1alpha1.StandbyCredentialsStatus {
		for _, h := range s.status().Hubs {
			if h.Name == name {
				return h.StandbyCredentials
			}
		}
		return nil
	}
	s.stepUntil("hub-b Ready in the status", func() bool {
		st := standbyOf("hub-b")
		return st != nil && st.State == failoverv1alpha1.StandbyCredentialsReady && st.Secret == "hub-kubeconfig-secret-hub-b"
	})
	if n := s.events(ReasonStandbyCredentialsReady); n != 1 {
		t.Errorf("%d %s events, want 1", n, ReasonStandbyCredentialsReady)
	}
	s.keeper.mu.Lock()
	report := s.keeper.report["hub-b"]
	s.keeper.mu.Unlock()
	report(hubsession.StandbyStatus{State: failoverv1alpha1.StandbyCredentialsRefused, Secret: "hub-kubeconfig-secret-hub-b", Message: "CSR denied"})
	s.stepUntil("hub-b Refused in the status", func() bool {
		st := standbyOf("hub-b")
		return st != nil && st.State == failoverv1alpha1.StandbyCredentialsRefused && st.Message == "CSR denied"
	})
	if n := s.events(ReasonStandbyCredentialsRefused); n != 1 {
		t.Errorf("%d %s warnings, want 1", n, ReasonStandbyCredentialsRefused)
	}
	if err := testutil.GatherAndCompare(s.metrics, strings.NewReader(`
# HELP klusterlet_failover_standby_credentials [ALPHA] 1 for the state of the hot standby credentials kept for each standby hub (Ready, Pending, Refused), 0 for the other states.
# TYPE klusterlet_failover_standby_credentials gauge
klusterlet_failover_standby_credentials{hub="hub-b",state="Pending"} 0
klusterlet_failover_standby_credentials{hub="hub-b",state="Ready"} 0
klusterlet_failover_standby_credentials{hub="hub-b",state="Refused"} 1
`), MetricStandbyCredentials); err != nil {
		t.Errorf("metrics after hub-b's keeper reported Refused: %v", err)
	}

	s.hubs["primary"].setDown(true)
	s.clock.Step(failoverv1alpha1.DefaultHubConnectionTimeout + time.Second)
	s.sessionRequestFails()
	s.stepUntil("switch to hub-b", func() bool { return s.r.run.hub == "hub-b" })
	if got, want := strings.Join(s.keeper.swapped(), ","), "->primary,primary->hub-b"; got != want {
		t.Errorf("hand-overs %q, want %q", got, want)
	}
	s.stepUntil("hub-b's keeper stopped", func() bool { return !s.keeper.isRunning("hub-b") })
	if st := standbyOf("hub-b"); st != nil {
		t.Errorf("the active hub-b has standbyCredentials %+v in the status", st)
	}
	if got := s.keeper.stoppedBeforeSwap("hub-b"); !got {
		t.Error("hub-b's keeper still ran when its credentials were handed over")
	}
	// A report of the stopped keeper is dropped: no event, no status.
	report(hubsession.StandbyStatus{State: failoverv1alpha1.StandbyCredentialsReady, Secret: "hub-kubeconfig-secret-hub-b"})
	s.r.step(s.ctx)
	if n := s.events(ReasonStandbyCredentialsReady); n != 1 {
		t.Errorf("%d %s events after a stopped keeper reported Ready, want still 1", n, ReasonStandbyCredentialsReady)
	}
	if st := standbyOf("hub-b"); st != nil {
		t.Errorf("a stopped keeper's report reached the status: %+v", st)
	}
	if err := testutil.GatherAndCompare(s.metrics, strings.NewReader(""), MetricStandbyCredentials); err != nil {
		t.Errorf("metrics once hub-b is active and its keeper stopped: %v, want no standby credentials series", err)
	}
	if s.keeper.isRunning("primary") {
		t.Error("a keeper runs for the lost primary, whose probe is not Ready")
	}
	// The credentials of a hub left because it rejected them, or had none usable, are not kept.
	for _, reason := range []failoverv1alpha1.FailoverReason{failoverv1alpha1.FailoverReasonHubRejected, failoverv1alpha1.FailoverReasonCredentialsInvalid} {
		s.r.handOverCredentials(s.ctx, "primary", "hub-b", reason)
		if got := s.keeper.swapped(); got[len(got)-1] != "hub-b(discarded)->primary" {
			t.Errorf("hand-over after %s: %q, want hub-b's credentials discarded", reason, got[len(got)-1])
		}
	}
}

// TestShellHeartbeatOpensItsOwnConnection: the heartbeat does not ride on the connection the session's clients
// keep (client-go shares one transport per TLS configuration). A client like the session's keeps a connection
// to the primary, which then stalls, as a connection to a dead peer does; the heartbeat still gets its answer,
// on a connection of its own.
func TestShellHeartbeatOpensItsOwnConnection(t *testing.T) {
	s := newShell(t, failoverv1alpha1.FailoverConfigSpec{})
	s.r.step(s.ctx)
	s.session(0).bootstrapping()
	s.stepUntil("hub-b probed Ready", s.probedReady("hub-b"))

	// The session's client: the bootstrap kubeconfig's configuration, client-go's shared transport.
	primary := s.hubs["primary"]
	sessionClient, err := rest.HTTPClientFor(rest.CopyConfig(s.r.hubs["primary"].bootstrap.RestConfig))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := sessionClient.Get(primary.server.URL + "/version")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	primary.stallUpTo.Store(primary.connSeq.Load())

	s.clock.Step(failoverv1alpha1.DefaultHubConnectionTimeout / 3)
	s.stepUntil("heartbeat answered beside a stalled connection", func() bool { return s.r.tracker.Snapshot().LastSuccess.Equal(s.clock.Now()) })
	if got := primary.connSeq.Load(); got <= primary.stallUpTo.Load() {
		t.Errorf("the hub accepted %d connections, no new one for the heartbeat", got)
	}
}

// TestShellHeartbeatKeepsItsConnection: heartbeats of one session share one connection (a quiet hub costs a GET
// per heartbeat, no TLS handshake); when that connection stalls, as one to a dead peer does, while the hub answers
// on new ones, the heartbeat asks on a new connection too (after half its deadline), gets its answer, records no
// failure for the stalled attempt, and keeps the new connection.
func TestShellHeartbeatKeepsItsConnection(t *testing.T) {
	timeout := 10 * time.Second // a stalled attempt waits half its deadline (2/3 of this) in real time
	s := newShell(t, failoverv1alpha1.FailoverConfigSpec{HubConnectionTimeout: &metav1.Duration{Duration: timeout}})
	s.r.step(s.ctx)
	s.session(0).bootstrapping()
	s.stepUntil("hub-b probed Ready", s.probedReady("hub-b"))
	primary := s.hubs["primary"]
	interval := timeout / 3
	beat := func(what string) {
		t.Helper()
		s.clock.Step(interval)
		s.stepUntil(what, func() bool { return s.r.tracker.Snapshot().LastSuccess.Equal(s.clock.Now()) })
	}
	beat("heartbeat 1 answered")
	afterFirst := primary.connSeq.Load()
	for i := 2; i <= 4; i++ {
		beat(fmt.Sprintf("heartbeat %d answered", i))
	}
	if got := primary.connSeq.Load(); got != afterFirst {
		t.Errorf("the hub accepted %d connections after the first heartbeat, %d after three more; want none new", afterFirst, got)
	}

	primary.stallUpTo.Store(primary.connSeq.Load())
	errorsBefore := s.r.tracker.Snapshot().LastErrorTime
	beat("heartbeat answered on a new connection after the kept one stalled")
	if got := s.r.tracker.Snapshot().LastErrorTime; !got.Equal(errorsBefore) {
		t.Errorf("the stalled attempt on the kept connection was recorded as a failure at %s: no evidence against a hub that answers on a new one", got)
	}
	stalled := primary.stallUpTo.Load()
	if got := primary.connSeq.Load(); got != stalled+1 {
		t.Errorf("connections %d, want %d (one new for the heartbeat's second attempt)", got, stalled+1)
	}
	beat("the next heartbeat answered")
	if got := primary.connSeq.Load(); got != stalled+1 {
		t.Errorf("connections %d after one more heartbeat, want %d: the new connection kept", got, stalled+1)
	}
	if s.r.run.hub != "primary" || s.events(ReasonFailoverStarted) != 0 {
		t.Errorf("active %q, %d FailoverStarted events; want primary kept", s.r.run.hub, s.events(ReasonFailoverStarted))
	}
}

func TestHeartbeatDeadline(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sinceLast time.Duration
		timeout   time.Duration
		want      time.Duration
	}{
		{"10 s timeout, sent a third of it after the last answer: until the verdict could come", 10 * time.Second / 3, 10 * time.Second, 10*time.Second - 10*time.Second/3},
		{"10 s timeout, sent after a stall past the timeout: a third of it", 15 * time.Second, 10 * time.Second, 10 * time.Second / 3},
		{"90 s timeout: at most 10 s", 30 * time.Second, 90 * time.Second, maxHeartbeatDeadline},
		{"20 s timeout, sent 15 s after the last answer: a third of it", 15 * time.Second, 20 * time.Second, 20 * time.Second / 3},
	} {
		if got := heartbeatDeadline(t0, tc.timeout, t0.Add(tc.sinceLast)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestShellWorkHold: a failover to a hub the replicator reports behind leaves the hub kubeconfig Secret — which
// OCM's work agent reads — on the hub left: no hand-over, the session on hub-b keeps its credentials in hub-b's
// standby Secret, and the status says so. Once hub-b's ManagedCluster names the primary in step, the credentials
// are handed over from the primary to hub-b and the session restarts on the hub kubeconfig Secret, at the same
// epoch.
func TestShellWorkHold(t *testing.T) {
	s := newShell(t, failoverv1alpha1.FailoverConfigSpec{})
	s.join()
	// The replicator's report on the primary's ManagedCluster: hub-b is behind.
	s.session(0).registeredWith(map[string]string{failoverv1alpha1.AnnotationHubsBehind: "hub-b", failoverv1alpha1.AnnotationHubsReported: reportAt("00:00")})
	s.r.step(s.ctx)

	s.hubs["primary"].setDown(true)
	s.clock.Step(failoverv1alpha1.DefaultHubConnectionTimeout + time.Second)
	s.sessionRequestFails()
	s.stepUntil("switch to hub-b", func() bool { return s.r.run.hub == "hub-b" })
	held := s.session(1)
	if got, want := held.params.SecretName, "hub-kubeconfig-secret-hub-b"; got != want {
		t.Errorf("the session on hub-b keeps its credentials in %q, want hub-b's standby Secret %q", got, want)
	}
	if got, want := strings.Join(s.keeper.swapped(), ","), "->primary,primary->primary"; got != want {
		t.Errorf("hand-overs %q, want %q: the primary's credentials kept in its standby Secret, none handed to hub-b while held", got, want)
	}
	if h := s.r.mem.Hold; h == nil || h.Hub != "primary" {
		t.Fatalf("hold %+v, want the work agent held on primary", h)
	}
	// hub-b's ManagedCluster still names the primary in step, in a report left from an earlier stay there: no
	// release on it.
	held.registeredWith(map[string]string{failoverv1alpha1.AnnotationHubsInStep: "primary", failoverv1alpha1.AnnotationHubsReported: reportAt("00:00")})
	s.stepUntil("move completed", func() bool { return s.r.mem.Switch == nil && s.r.state == StateActive })
	for i := 0; i < 3; i++ {
		s.r.step(s.ctx)
	}
	if s.r.mem.Hold == nil {
		t.Fatal("the hold was released on a report written before the cluster moved to hub-b")
	}
	if st := s.status(); st.WorkAgentHeldOn != "primary" {
		t.Errorf("status.workAgentHeldOn %q, want primary", st.WorkAgentHeldOn)
	}
	// A process started now would take the hold from the status, and start on hub-b (WorkHold rule 4).
	s.r.epochRead = false
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := s.r.view(s.r.failoverConfig(), failoverv1alpha1.FailoverConfigSpec{}, factsSnapshot{}, "", s.clock.Now())
		if v.RecordedHold != nil && v.RecordedHold.Hub == "primary" && v.LastActive == "hub-b" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a new process's view: recorded hold %+v, last active %q; want held on primary, last on hub-b", v.RecordedHold, v.LastActive)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.r.epochRead = true
	if c := condition(s.status(), failoverv1alpha1.ConditionWorkAgentHeld); c == nil || c.Status != metav1.ConditionTrue ||
		!strings.Contains(c.Message, "held on hub primary") {
		t.Errorf("WorkAgentHeld condition %+v, want True naming the primary", c)
	}
	if n := s.events(ReasonWorkAgentHeld); n != 1 {
		t.Errorf("%d %s warnings, want 1", n, ReasonWorkAgentHeld)
	}
	epoch := s.r.epoch

	held.registeredWith(map[string]string{failoverv1alpha1.AnnotationHubsInStep: "primary", failoverv1alpha1.AnnotationHubsReported: reportAt("00:01")})
	s.stepUntil("hold released", func() bool { return s.r.mem.Hold == nil && len(s.sessions) == 3 })
	if !held.hasEnded() {
		t.Error("the held session on hub-b still runs after the release")
	}
	released := s.session(2)
	if released.params.Hub.Name != "hub-b" || released.params.SecretName != "" {
		t.Errorf("session after the release on %q with Secret %q, want hub-b on the hub kubeconfig Secret", released.params.Hub.Name, released.params.SecretName)
	}
	if got, want := strings.Join(s.keeper.swapped(), ","), "->primary,primary->primary,primary->hub-b"; got != want {
		t.Errorf("hand-overs %q, want %q", got, want)
	}
	if released.params.Epoch.Number != epoch {
		t.Errorf("epoch after the release %d, want %d: the cluster did not move", released.params.Epoch.Number, epoch)
	}
	released.registered()
	s.stepUntil("Active again", func() bool { return s.r.state == StateActive })
	if st := s.status(); condition(st, failoverv1alpha1.ConditionWorkAgentHeld) == nil ||
		condition(st, failoverv1alpha1.ConditionWorkAgentHeld).Status != metav1.ConditionFalse || st.WorkAgentHeldOn != "" {
		t.Errorf("after the release: WorkAgentHeld %+v, workAgentHeldOn %q; want False and none", condition(st, failoverv1alpha1.ConditionWorkAgentHeld), st.WorkAgentHeldOn)
	}
	if n := s.events(ReasonWorkAgentReleased); n != 1 {
		t.Errorf("%d %s events, want 1", n, ReasonWorkAgentReleased)
	}
}
