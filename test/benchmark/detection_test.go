//go:build bench

package benchmark

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	failoverclientset "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// scenarioDetection is how long our agent takes to see its hub lost, per kind of fault.
const scenarioDetection = "detection"

// detectionFault is one way the detection scenario loses hub-a.
type detectionFault struct {
	// name is the figure suffix; what says what happens, for the method text.
	name, what string
	// proxy puts hub-a behind a TCP proxy (framework.HubOptions.Proxy), which the fault acts on.
	proxy bool
	apply func(t *testing.T, hubA *framework.Hub)
}

// detectionFaults are the faults of the detection scenario, in the order each repetition runs them. The graceful
// stop (SIGTERM) is the failover scenario's.
var detectionFaults = []detectionFault{
	{"kill", "hub-a's kube-apiserver killed with SIGKILL (connections reset, new ones refused)", false,
		func(_ *testing.T, h *framework.Hub) { h.KillAPIServer() }},
	{"sigstop", "hub-a's kube-apiserver frozen with SIGSTOP (the kernel still accepts connections; nothing answers on them or on those open)", false,
		func(_ *testing.T, h *framework.Hub) { h.FreezeAPIServer() }},
	{"blackhole", "hub-a's port black-holed (a TCP proxy in front of it accepts connections and forwards nothing either way, open ones included: a silent partition)", true,
		func(_ *testing.T, h *framework.Hub) { h.Proxy.Blackhole() }},
	{"linkcut", "the spoke's link to hub-a cut (iptables drops every packet to and from the port of a TCP proxy in front of hub-a, both ways: no reset, no refusal, open connections included)", true, dropPackets},
}

// dropPackets cuts the link to hub's proxy (on 127.0.0.1) the way a pulled cable or a dead route does: iptables
// rules in the INPUT chain drop every TCP packet on the loopback interface to and from the proxy's port, so
// nothing is refused or reset. The rules are removed in the test's cleanup, and hack/bench.sh removes any left by
// a run that died.
func dropPackets(t *testing.T, hub *framework.Hub) {
	t.Helper()
	_, port, err := net.SplitHostPort(hub.Proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	comment := "kf-bench-linkcut-" + port
	for _, match := range [][]string{{"-d", "127.0.0.1", "--dport", port}, {"-s", "127.0.0.1", "--sport", port}} {
		rule := append(append([]string{"INPUT", "-i", "lo", "-p", "tcp"}, match...), "-m", "comment", "--comment", comment, "-j", "DROP")
		if out, err := exec.Command("iptables", append([]string{"-w", "-I"}, rule...)...).CombinedOutput(); err != nil {
			t.Fatalf("cutting the link to %s: iptables -I %s: %v: %s", hub.Proxy.Addr(), strings.Join(rule, " "), err, out)
		}
		t.Cleanup(func() {
			if out, err := exec.Command("iptables", append([]string{"-w", "-D"}, rule...)...).CombinedOutput(); err != nil {
				t.Errorf("removing the link cut to %s: iptables -D %s: %v: %s", hub.Proxy.Addr(), strings.Join(rule, " "), err, out)
			}
		})
	}
}

// declareDetectionFigures declares, per fault, the detection delay and the time until Available on hub-b.
func (b *bench) declareDetectionFigures() {
	b.declareOutageFigures()
	for _, f := range detectionFaults {
		b.rep.declare("detection_"+f.name, scenarioDetection, fmt.Sprintf("%s: fault → FailoverStarted, minus the timeout", f.name), "s", "≤ 1 s")
		b.rep.declare("detection_available_"+f.name, scenarioDetection, fmt.Sprintf("%s: fault → Available on hub B", f.name), "s", "")
	}
}

// runDetection measures, for each fault of detectionFaults, the time from the fault to our agent's FailoverStarted
// event (its decision that hub-a is lost) and to Available on hub-b; every repetition of every fault gets a fresh
// hub-a behind a TCP proxy and a fresh cluster name.
func (b *bench) runDetection(t *testing.T) {
	hubB := framework.StartHub(t, framework.HubOptions{Name: "hub-b", Signer: framework.SignerKCM, HubController: true})
	spoke := framework.StartSpoke(t)
	util.InstallFailoverConfigCRD(t, spoke)
	fo := failoverclientset.NewForConfigOrDie(spoke.AdminConfig)
	faults := ""
	for i, f := range detectionFaults {
		faults += fmt.Sprintf(" (%d) %s: %s.", i+1, f.name, f.what)
	}
	b.rep.method(scenarioDetection, "How long our agent takes to see that its hub is lost, by the kind of fault, which decides "+
		"whether requests fail at once or hang (a reused HTTP/2 connection to a dead peer can hang for about 45 s). Hub-b and a spoke "+
		"as in scenario 2; per repetition and fault a fresh hub-a (for the blackhole and linkcut faults behind a TCP proxy that "+
		"the agent's bootstrap kubeconfig, and so its hub kubeconfig, names), a fresh cluster name, our agent with the FailoverConfig of scenario 2 "+
		"(hubConnectionTimeout %s, probeInterval %s, hot standby credentials). The agent joins hub-a, runs %s more, then the "+
		"fault:%s The first figure is the time from the fault to the agent's FailoverStarted event, seen through a watch "+
		"on the spoke, minus the timeout: the timeout counts from the last successful request to hub-a, so a figure at or "+
		"below 0 means no request hung past it, and a figure of −x means the last success was x s before the fault. The "+
		"second is the fault → the first poll (every %s) that sees the cluster Joined and Available on hub-b. OCM's agent "+
		"is not measured here (scenario 2 compares the two on a stopped apiserver). %d repetitions per fault, the faults in "+
		"turn.", b.failoverTimeout, failoverProbeInterval, failoverSettle, faults, pollInterval, b.reps)
	for i := 0; i < b.reps; i++ {
		for _, f := range detectionFaults {
			name := fmt.Sprintf("det-%s-%d", f.name, i)
			var failure string
			if ok := t.Run(name, func(t *testing.T) { failure = b.detectionRep(t, hubB, spoke, fo, f, name) }); !ok && failure == "" {
				failure = fmt.Sprintf("the %s subtest failed (see the `make bench` output)", name)
			}
			if b.ctx.Err() != nil {
				t.Fatal("interrupted")
			}
			if failure != "" {
				b.rep.missing("detection_"+f.name, ours, name+": "+failure)
				b.rep.missing("detection_available_"+f.name, ours, name+": "+failure)
			}
		}
	}
	b.runOutages(t, hubB, spoke, fo)
}

// detectionRep runs one repetition of one fault. It returns why it has no figure, or "" when it recorded one.
func (b *bench) detectionRep(t *testing.T, hubB *framework.Hub, spoke *framework.Spoke, fo failoverclientset.Interface, f detectionFault, name string) string {
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", Signer: framework.SignerKCM, HubController: true, Proxy: f.proxy})
	b.createFailoverConfig(t, spoke, fo, name, hubB)
	a := b.startAgent(t, agentConfig{kind: ours, cluster: name, namespace: name, spoke: spoke, bootstraps: [][]byte{hubA.BootstrapKubeconfig()}})
	defer a.stop()
	if _, err := waitAvailable(b.ctx, hubA, a, joinTimeout); err != nil {
		return "joining hub-a: " + err.Error() + lastErrors(a.logPath)
	}
	if err := b.sleep(failoverSettle); err != nil {
		t.Fatal("interrupted")
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.failoverTimeout+failoverMaxExtra)
	defer cancel()
	// From the list's version: a watch without one would replay existing events as added.
	selector := "reason=" + failover.ReasonFailoverStarted
	existing, err := spoke.Kube.CoreV1().Events(name).List(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		t.Fatalf("listing the agent's events: %v", err)
	}
	if len(existing.Items) > 0 {
		return fmt.Sprintf("the agent moved before the fault: %d FailoverStarted event(s)", len(existing.Items)) + lastErrors(a.logPath)
	}
	events, err := spoke.Kube.CoreV1().Events(name).Watch(ctx, metav1.ListOptions{FieldSelector: selector, ResourceVersion: existing.ResourceVersion})
	if err != nil {
		t.Fatalf("watching the agent's events: %v", err)
	}
	defer events.Stop()
	lost := time.Now()
	f.apply(t, hubA)
	detected, err := firstEvent(ctx, events)
	if err != nil {
		return fmt.Sprintf("no FailoverStarted event within %s of the fault: %v", b.failoverTimeout+failoverMaxExtra, err) + lastErrors(a.logPath)
	}
	at, err := waitAvailable(b.ctx, hubB, a, b.failoverTimeout+failoverMaxExtra)
	if err != nil {
		return fmt.Sprintf("not Available on hub-b within %s of the fault: %v", b.failoverTimeout+failoverMaxExtra, err) + lastErrors(a.logPath)
	}
	b.rep.add("detection_"+f.name, ours, (detected.Sub(lost) - b.failoverTimeout).Seconds())
	b.rep.add("detection_available_"+f.name, ours, at.Sub(lost).Seconds())
	t.Logf("%s: %s → FailoverStarted in %.2f s, Available on hub-b in %.2f s (timeout %s)", name, f.name,
		detected.Sub(lost).Seconds(), at.Sub(lost).Seconds(), b.failoverTimeout)
	return ""
}

// firstEvent returns when the first event arrives on w (an Added event), or an error when w ends or ctx is done.
func firstEvent(ctx context.Context, w watch.Interface) (time.Time, error) {
	for {
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case e, ok := <-w.ResultChan():
			if !ok {
				return time.Time{}, fmt.Errorf("the event watch ended")
			}
			if _, isEvent := e.Object.(*corev1.Event); isEvent && e.Type == watch.Added {
				return time.Now(), nil
			}
		}
	}
}

// hubOutage is a fault a hub is expected to survive; the agent should ride it out, not fail over.
type hubOutage struct {
	// name is the figure suffix; what says what happens, for the method text.
	name, what string
	apply      func(hubA *framework.Hub)
}

// etcdStall is how long the etcd stall outage freezes etcd.
const etcdStall = 40 * time.Second

// hubOutages are the outages of the detection scenario's second part, in the order each repetition runs them.
var hubOutages = []hubOutage{
	{"apiserver_restart", "hub-a's kube-apiserver stopped (SIGTERM, graceful) and started again at once", func(h *framework.Hub) {
		h.StopAPIServer()
		h.StartAPIServer()
	}},
	{"etcd_restart", "hub-a's etcd killed (SIGKILL) and started again at once on the same data", func(h *framework.Hub) { h.RestartEtcd() }},
	{"etcd_stall", fmt.Sprintf("hub-a's etcd frozen (SIGSTOP) for %s, then continued: a stalled disk", etcdStall), func(h *framework.Hub) {
		h.FreezeEtcd()
		time.Sleep(etcdStall)
		h.Thaw()
	}},
}

// outageProbe is how the second part sees a hub unanswering: a GET of namespace default by the hub's admin,
// with outageProbeDeadline, every outageProbeInterval.
const (
	outageProbeInterval = 200 * time.Millisecond
	outageProbeDeadline = time.Second
	// outageQuiet is how long the hub must answer again before an outage counts as over.
	outageQuiet = 20 * time.Second
)

// declareOutageFigures declares, per outage, how long the hub did not answer and how many failovers it caused.
func (b *bench) declareOutageFigures() {
	for _, o := range hubOutages {
		b.rep.declare("outage_"+o.name, scenarioDetection, fmt.Sprintf("%s: hub A unanswering (first failed probe → first answer)", o.name), "s", "")
		b.rep.declare("outage_failovers_"+o.name, scenarioDetection, fmt.Sprintf("%s: failovers of our agent (timeout BENCH_OUTAGE_TIMEOUT)", o.name), "failovers", "0")
	}
}

// runOutages is the detection scenario's second part: our agent with hubConnectionTimeout b.outageTimeout on a
// fresh hub-a per repetition, and the outages of hubOutages in turn; each is timed from outside by a probe and
// checked for failovers (FailoverStarted events).
func (b *bench) runOutages(t *testing.T, hubB *framework.Hub, spoke *framework.Spoke, fo failoverclientset.Interface) {
	outages := ""
	for i, o := range hubOutages {
		outages += fmt.Sprintf(" (%d) %s: %s.", i+1, o.name, o.what)
	}
	b.rep.noteScenario(scenarioDetection, "Outages a hub survives, to choose the default hubConnectionTimeout: per repetition a "+
		"fresh hub-a (no proxy), our agent with the same FailoverConfig but hubConnectionTimeout %s, joined and settled %s; "+
		"then, %s apart, the outages:%s Each is timed from outside: a GET of namespace default by hub-a's admin with a %s "+
		"deadline every %s; the figure runs from the first failed GET to the first answer after the last failure (none "+
		"failed: 0). A failover is a FailoverStarted event of the agent during the outage or the %s after it; after one, "+
		"the repetition ends. %d repetitions.", b.outageTimeout, failoverSettle, outageQuiet, outages, outageProbeDeadline,
		outageProbeInterval, outageQuiet, b.reps)
	for i := 0; i < b.reps; i++ {
		name := fmt.Sprintf("outage-%d", i)
		if ok := t.Run(name, func(t *testing.T) { b.outageRep(t, hubB, spoke, fo, name) }); !ok {
			for _, o := range hubOutages {
				b.rep.missing("outage_"+o.name, ours, name+": the subtest failed (see the `make bench` output)")
				b.rep.missing("outage_failovers_"+o.name, ours, name+": the subtest failed (see the `make bench` output)")
			}
		}
		if b.ctx.Err() != nil {
			t.Fatal("interrupted")
		}
	}
}

// outageRep runs one repetition of every outage on one fresh hub-a.
func (b *bench) outageRep(t *testing.T, hubB *framework.Hub, spoke *framework.Spoke, fo failoverclientset.Interface, name string) {
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", Signer: framework.SignerKCM, HubController: true})
	b.createFailoverConfigWithTimeout(t, spoke, fo, name, hubB, b.outageTimeout)
	a := b.startAgent(t, agentConfig{kind: ours, cluster: name, namespace: name, spoke: spoke, bootstraps: [][]byte{hubA.BootstrapKubeconfig()}})
	defer a.stop()
	if _, err := waitAvailable(b.ctx, hubA, a, joinTimeout); err != nil {
		t.Fatalf("joining hub-a: %v%s", err, lastErrors(a.logPath))
	}
	if err := b.sleep(failoverSettle); err != nil {
		t.Fatal("interrupted")
	}
	for _, o := range hubOutages {
		before := failoverEvents(t, b.ctx, spoke, name)
		p := startOutageProbe(b.ctx, hubA)
		o.apply(hubA)
		window, err := p.waitOver(b.ctx)
		if err != nil {
			t.Fatalf("%s: %v", o.name, err)
		}
		failovers := failoverEvents(t, b.ctx, spoke, name) - before
		b.rep.add("outage_"+o.name, ours, window.Seconds())
		b.rep.add("outage_failovers_"+o.name, ours, float64(failovers))
		t.Logf("%s: %s: hub-a unanswering for %.1f s; %d failover(s) of our agent (timeout %s)", name, o.name, window.Seconds(), failovers, b.outageTimeout)
		if failovers > 0 {
			b.rep.note("outage_failovers_"+o.name, "%s: the agent failed over during %s (timeout %s); the repetition's later outages were not run", name, o.name, b.outageTimeout)
			return
		}
	}
}

// failoverEvents returns the number of FailoverStarted events (counting repeats) in the agent's namespace.
func failoverEvents(t *testing.T, ctx context.Context, spoke *framework.Spoke, namespace string) int {
	t.Helper()
	list, err := spoke.Kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + failover.ReasonFailoverStarted})
	if err != nil {
		t.Fatalf("listing the agent's events: %v", err)
	}
	n := 0
	for _, e := range list.Items {
		n += int(max(e.Count, 1))
	}
	return n
}

// outageProbe GETs namespace default on a hub every outageProbeInterval and records the first failure and the
// first answer after the latest failure.
type outageProbe struct {
	mu                  sync.Mutex
	firstFail, lastFail time.Time
	recovered           time.Time
	stop                context.CancelFunc
	done                chan struct{}
}

// startOutageProbe starts probing hub; waitOver stops it.
func startOutageProbe(ctx context.Context, hub *framework.Hub) *outageProbe {
	ctx, cancel := context.WithCancel(ctx)
	p := &outageProbe{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(outageProbeInterval)
		defer tick.Stop()
		for {
			rctx, rcancel := context.WithTimeout(ctx, outageProbeDeadline)
			_, err := hub.Kube.CoreV1().Namespaces().Get(rctx, "default", metav1.GetOptions{})
			rcancel()
			now := time.Now()
			p.mu.Lock()
			switch {
			case ctx.Err() != nil:
			case err != nil:
				if p.firstFail.IsZero() {
					p.firstFail = now
				}
				p.lastFail, p.recovered = now, time.Time{}
			case !p.lastFail.IsZero() && p.recovered.IsZero():
				p.recovered = now
			}
			p.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// waitOver waits until the hub has answered for outageQuiet since the latest failure (or, with no failure, for
// outageQuiet from now), stops the probe and returns the window from the first failure to the first answer after
// the latest one (0 without failures). It fails after 5 minutes.
func (p *outageProbe) waitOver(ctx context.Context) (time.Duration, error) {
	defer func() { p.stop(); <-p.done }()
	start := time.Now()
	for {
		p.mu.Lock()
		firstFail, recovered := p.firstFail, p.recovered
		p.mu.Unlock()
		switch {
		case firstFail.IsZero() && time.Since(start) >= outageQuiet:
			return 0, nil
		case !recovered.IsZero() && time.Since(recovered) >= outageQuiet:
			return recovered.Sub(firstFail), nil
		case time.Since(start) > 5*time.Minute:
			return 0, fmt.Errorf("the hub did not answer steadily within 5 minutes (first failure %s)", firstFail.Format(time.RFC3339))
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(outageProbeInterval):
		}
	}
}
