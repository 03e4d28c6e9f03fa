//go:build bench

package benchmark

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	failoverclientset "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	// failoverSettle is how long an agent runs on hub A after it became Available before hub A is stopped, so
	// that both agents are past their start-up work (OCM's hub timeout controller ignores its first 10 s).
	failoverSettle = 15 * time.Second
	// failoverProbeInterval is the FailoverConfig probe interval of our agent (as in make demo).
	failoverProbeInterval = 5 * time.Second
	// failoverMaxExtra bounds the wait for Available on hub B beyond the connection timeout.
	failoverMaxExtra = 5 * time.Minute
)

// runFailover joins each agent to hub A, stops hub A's apiserver and measures until the cluster is Available
// on hub B; every repetition has a fresh hub A.
func (b *bench) runFailover(t *testing.T) {
	hubB := framework.StartHub(t, framework.HubOptions{Name: "hub-b", Signer: framework.SignerKCM, HubController: true})
	spoke := framework.StartSpoke(t)
	util.InstallFailoverConfigCRD(t, spoke)
	fo := failoverclientset.NewForConfigOrDie(spoke.AdminConfig)
	timeout := b.failoverTimeout
	b.rep.method(scenarioFailover, "Two hubs as in scenario 1 (hub-a, hub-b) and a fresh spoke; every repetition gets a fresh hub-a (a hub-a "+
		"restarted in place made the next join wait ~1 min for its controllers' watch back-off). Per repetition each agent joins hub-a "+
		"with a fresh cluster name and namespace, runs %s more, then hub-a's kube-apiserver is stopped (etcd, "+
		"kube-controller-manager and the hub controller keep running); the time runs from the moment the apiserver "+
		"is told to stop (SIGTERM; it answers new requests with 429 and exits within about 2-5 s) to the first poll that sees the cluster Joined+Available on hub-b, and the figure is that "+
		"time minus the connection timeout (%s for both). Ours: --bootstrap-kubeconfig for hub-a and a FailoverConfig "+
		"with alternate hub-b (bootstrap Secret), hubConnectionTimeout %s, probeInterval %s, hot standby credentials on "+
		"(the default: hub-b issues the agent a certificate while it is a standby). The CSRs figure counts the CSRs "+
		"of the cluster on hub-b created between hub-a's stop and Available on hub-b. OCM's: "+
		"--bootstrap-kubeconfigs hub-a,hub-b --feature-gates=MultipleHubs=true --hub-connection-timeout-seconds=%d; "+
		"OCM's agent switches hubs by exiting, so a loop restarts it %s after each exit (a stand-in for the kubelet, "+
		"which would wait 10 s or more: this favours OCM). OCM's hub timeout controller checks every 60 s whether the "+
		"lease's renewTime is older than the timeout, and its lease is renewed every 60 s, so its detection lands "+
		"somewhere in that grid. Ours counts the timeout from its last successful request to hub-a (probes run every "+
		"probe interval), which can precede the loss by a few seconds, so its figure can be slightly negative. "+
		"The edit figure: before hub-a is stopped, ManifestWork %s<cluster> (one ConfigMap in the spoke's default namespace) is "+
		"created with the same content on hub-a and hub-b (as the replicator keeps a standby in step), and OCM's work "+
		"agent v1.2.0 (a process, restarted %s after each exit, reading the agent's --hub-kubeconfig-dir: "+
		"--workload-source-config and --terminate-on-files on its kubeconfig, which it polls every 10 s) has applied "+
		"hub-a's copy; once hub-a's apiserver has exited, the copy on hub-b is edited (its manifests), and the time runs "+
		"from the stop to the first poll (every %s) that sees the edit in the spoke's ConfigMap.%s %d repetitions per agent, order swapped every repetition.",
		failoverSettle, timeout, timeout, failoverProbeInterval, int(timeout.Seconds()), restartDelay, editWorkPrefix,
		time.Second, pollInterval, b.concurrencyNote(), b.reps)
	for i := 0; i < b.reps; i++ {
		for _, kind := range order(i) {
			name := fmt.Sprintf("fo-%s-%d", kind, i)
			// A repetition that could not be measured (the agent did not join hub-a, or never reached hub-b) is
			// run once more, with a fresh hub-a and cluster name, so that every repetition has a figure unless
			// both attempts fail; the report says why the first one failed, with the agent's last errors.
			var first string
			for attempt := 0; attempt < 2; attempt++ {
				runName := name
				if attempt > 0 {
					runName = name + "-retry"
				}
				var failure string
				if ok := t.Run(runName, func(t *testing.T) { failure = b.failoverRep(t, hubB, spoke, fo, kind, runName) }); !ok && failure == "" {
					failure = fmt.Sprintf("the %s subtest failed (see the `make bench` output)", runName)
				}
				if b.ctx.Err() != nil {
					t.Fatal("interrupted")
				}
				if failure == "" {
					if first != "" {
						b.rep.note("failover_total", "%s (%s): the first attempt was not measured and was repeated as %s: %s",
							name, kind, runName, first)
					}
					break
				}
				if attempt == 0 {
					first = failure
					continue
				}
				reason := fmt.Sprintf("%s: first attempt: %s; repeated as %s: %s", name, first, runName, failure)
				b.rep.missing("failover_total", kind, reason)
				b.rep.missing("failover_beyond_timeout", kind, reason)
			}
		}
	}
}

// failoverRep runs one repetition for one agent: a fresh hub-a (stopped with the subtest), the agent's
// configuration, the failover. It returns why the repetition has no figure, or "" when it was measured.
func (b *bench) failoverRep(t *testing.T, hubB *framework.Hub, spoke *framework.Spoke, fo failoverclientset.Interface, kind agentKind, name string) string {
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", Signer: framework.SignerKCM, HubController: true})
	timeout := b.failoverTimeout
	cfg := agentConfig{kind: kind, cluster: name, namespace: name, spoke: spoke}
	switch kind {
	case ours:
		cfg.bootstraps = [][]byte{hubA.BootstrapKubeconfig()}
		b.createFailoverConfig(t, spoke, fo, name, hubB)
	case ocm:
		cfg.bootstraps = [][]byte{hubA.BootstrapKubeconfig(), hubB.BootstrapKubeconfig()}
		cfg.hubConnectionTimeoutSeconds = int(timeout.Seconds())
		cfg.restart = true
	}
	return b.failoverOnce(t, hubA, hubB, cfg)
}

// createFailoverConfig creates, in our agent's namespace name on the spoke, hub-b's bootstrap Secret and a
// FailoverConfig with alternate hub-b, hubConnectionTimeout b.failoverTimeout and probeInterval
// failoverProbeInterval.
func (b *bench) createFailoverConfig(t *testing.T, spoke *framework.Spoke, fo failoverclientset.Interface, name string, hubB *framework.Hub) {
	t.Helper()
	b.createFailoverConfigWithTimeout(t, spoke, fo, name, hubB, b.failoverTimeout)
}

// createFailoverConfigWithTimeout is createFailoverConfig with hubConnectionTimeout timeout.
func (b *bench) createFailoverConfigWithTimeout(t *testing.T, spoke *framework.Spoke, fo failoverclientset.Interface, name string, hubB *framework.Hub, timeout time.Duration) {
	t.Helper()
	if err := createNamespace(b.ctx, spoke, name); err != nil {
		t.Fatal(err)
	}
	if _, err := spoke.Kube.CoreV1().Secrets(name).Create(b.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hub-b-bootstrap", Namespace: name},
		Data:       map[string][]byte{failoverv1alpha1.KubeconfigSecretKey: hubB.BootstrapKubeconfig()},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the hub-b bootstrap Secret in %s: %v", name, err)
	}
	if _, err := fo.FailoverV1alpha1().FailoverConfigs(name).Create(b.ctx, &failoverv1alpha1.FailoverConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "failover", Namespace: name},
		Spec: failoverv1alpha1.FailoverConfigSpec{
			AlternateHubs:        []failoverv1alpha1.AlternateHub{{Name: "hub-b", BootstrapKubeconfigSecretRef: "hub-b-bootstrap"}},
			HubConnectionTimeout: &metav1.Duration{Duration: timeout},
			ProbeInterval:        &metav1.Duration{Duration: failoverProbeInterval},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the FailoverConfig in %s: %v", name, err)
	}
}

// failoverOnce runs one failover of one agent; hub-a's apiserver stays stopped. It returns why there is no
// figure (with the agent's last error lines), or "" when it recorded one.
func (b *bench) failoverOnce(t *testing.T, hubA, hubB *framework.Hub, cfg agentConfig) string {
	t.Helper()
	kind := cfg.kind
	a := b.startAgent(t, cfg)
	defer a.stop()
	if _, err := waitAvailable(b.ctx, hubA, a, joinTimeout); err != nil {
		reason := "joining hub-a: " + err.Error() + lastErrors(a.logPath)
		t.Logf("%s: %s", cfg.cluster, reason)
		return reason
	}
	probe, err := b.startEditProbe(t, hubA, hubB, a)
	if err != nil {
		// Figure (a) is still measured.
		b.rep.missing("failover_edit_applied", kind, fmt.Sprintf("%s: %v", cfg.cluster, err))
		t.Logf("%s: no edit figure: %v", cfg.cluster, err)
	}
	if err := b.sleep(failoverSettle); err != nil {
		t.Fatal("interrupted")
	}
	exitsBefore, workExitsBefore := a.restarts(), 0
	if probe != nil {
		workExitsBefore = probe.work.Restarts()
	}
	csrsBefore := len(util.CSRNames(t, hubB, cfg.cluster))
	// The hub is lost from the moment its apiserver starts shutting down: from then on it answers new requests
	// with 429 and closes connections.
	lost := time.Now()
	hubA.StopAPIServer()
	type applied struct {
		at  time.Time
		err error
	}
	edit := make(chan applied, 1)
	editCtx, cancelEdit := context.WithCancel(b.ctx)
	defer cancelEdit()
	if probe != nil {
		go func() {
			at, err := probe.editAndWait(editCtx, b.failoverTimeout+failoverMaxExtra)
			edit <- applied{at, err}
		}()
	}
	at, err := waitAvailable(b.ctx, hubB, a, b.failoverTimeout+failoverMaxExtra)
	if err != nil {
		reason := fmt.Sprintf("not Available on hub-b within %s of hub-a's loss: %v", b.failoverTimeout+failoverMaxExtra, err) +
			lastErrors(a.logPath)
		t.Logf("%s: %s", cfg.cluster, reason)
		return reason
	}
	took := at.Sub(lost)
	b.rep.add("failover_csrs", kind, float64(len(util.CSRNames(t, hubB, cfg.cluster))-csrsBefore))
	b.rep.add("failover_total", kind, took.Seconds())
	b.rep.add("failover_beyond_timeout", kind, (took - b.failoverTimeout).Seconds())
	t.Logf("%s: %s agent Available on hub-b %.1f s after hub-a was stopped (timeout %s, %d process restarts)",
		cfg.cluster, kind, took.Seconds(), b.failoverTimeout, a.restarts()-exitsBefore)
	// Figure (b) is recorded when measured; a repetition whose edit did not reach the spoke keeps its figure (a)
	// and says why (b) is missing.
	if probe == nil {
		return ""
	}
	if e := <-edit; e.err != nil {
		b.rep.missing("failover_edit_applied", kind, fmt.Sprintf("%s: %v", cfg.cluster, e.err))
	} else {
		b.rep.add("failover_edit_applied", kind, e.at.Sub(lost).Seconds())
		t.Logf("%s: the edit made on hub-b was applied on the spoke %.1f s after hub-a was stopped", cfg.cluster, e.at.Sub(lost).Seconds())
		b.rep.note("failover_edit_applied", "%s: the edit was applied %.1f s after Available on hub-b; OCM's work agent exited %d time(s) meanwhile",
			cfg.cluster, e.at.Sub(at).Seconds(), probe.work.Restarts()-workExitsBefore)
	}
	if kind == ocm {
		b.rep.note("failover_total", "%s: OCM's agent process exited %d time(s) between hub-a's loss and Available on hub-b",
			cfg.cluster, a.restarts()-exitsBefore)
	}
	return ""
}

// lastErrors returns the last three error lines (klog's E prefix) of the agent log at path, leaving out
// controllercmd's start-up noise, as "; last errors
// in the agent log: …", or "" when there are none.
func lastErrors(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var errs []string
	for _, line := range strings.Split(string(data), "\n") {
		// controllercmd's serving set-up logs errors about the spoke's extension-apiserver-authentication
		// ConfigMap at every start; they say nothing about the hubs.
		if strings.HasPrefix(line, "E") && len(line) > 1 && line[1] >= '0' && line[1] <= '9' &&
			!strings.Contains(line, "extension-apiserver-authentication") {
			if len(line) > 300 {
				line = line[:300] + "…"
			}
			errs = append(errs, line)
		}
	}
	if len(errs) == 0 {
		return "; no error lines in the agent log"
	}
	if len(errs) > 3 {
		errs = errs[len(errs)-3:]
	}
	return "; last errors in the agent log: " + strings.Join(errs, " | ")
}
