package hubsession

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	certtesting "github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert/testing"
)

func standbyTestHub(t *testing.T, name, server string) (Hub, *certtesting.CA) {
	t.Helper()
	ca, err := certtesting.NewCA(name + "-ca")
	if err != nil {
		t.Fatal(err)
	}
	info := clientcert.HubInfo{Server: server, CAData: ca.CertPEM}
	return Hub{Name: name, Bootstrap: &clientcert.BootstrapKubeconfig{Source: name, Hub: info, RestConfig: &rest.Config{Host: server}}}, ca
}

// startedSecretInformer returns a Secret informer of kube, started and synced; it stops with ctx.
func startedSecretInformer(ctx context.Context, kube *kubefake.Clientset) corev1informers.SecretInformer {
	factory := informers.NewSharedInformerFactory(kube, 0)
	secrets := factory.Core().V1().Secrets()
	secrets.Informer()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return secrets
}

func credentials(t *testing.T, ca *certtesting.CA, h Hub, agent string) map[string][]byte {
	t.Helper()
	now := time.Now()
	data, err := certtesting.NewHubKubeconfigSecretData(ca, h.Bootstrap.Hub, "cluster1", agent, now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestStandbySwap: at a session start, the credentials of the hub left are kept as its standby credentials, and
// valid standby credentials of the new hub are written into the hub kubeconfig Secret, whose other keys, labels
// and annotations are kept; invalid standby credentials, or a hub kubeconfig Secret already valid for the new
// hub, are left alone.
func TestStandbySwap(t *testing.T) {
	hubA, caA := standbyTestHub(t, "primary", "https://hub-a.example.com:6443")
	hubB, caB := standbyTestHub(t, "hub-b", "https://hub-b.example.com:6443")
	credsA, credsB := credentials(t, caA, hubA, "agent1"), credentials(t, caB, hubB, "agent1")
	otherAgentB := credentials(t, caB, hubB, "someone")
	const ns, main = "agent-ns", "hub-kubeconfig-secret"
	withExtra := func(data map[string][]byte) map[string][]byte {
		out := map[string][]byte{"extra": []byte("kept")}
		for k, v := range data {
			out[k] = v
		}
		return out
	}

	cases := []struct {
		name            string
		from            *Hub
		discardFrom     bool
		current         map[string][]byte // the hub kubeconfig Secret; nil: absent
		standbyTo       map[string][]byte // hub-b's standby Secret; nil: absent
		standbyFrom     map[string][]byte // primary's standby Secret before the swap; nil: absent
		wantUsed        bool
		wantMainCert    []byte // tls.crt of the hub kubeconfig Secret after the swap
		wantStandbyFrom []byte // tls.crt of primary's standby Secret after the swap; nil: absent
	}{
		{name: "switch to a hot standby", from: &hubA, current: withExtra(credsA), standbyTo: credsB,
			wantUsed: true, wantMainCert: credsB[clientcert.TLSCertSecretKey], wantStandbyFrom: credsA[clientcert.TLSCertSecretKey]},
		{name: "switch to a cold standby keeps the hub left", from: &hubA, current: credsA,
			wantMainCert: credsA[clientcert.TLSCertSecretKey], wantStandbyFrom: credsA[clientcert.TLSCertSecretKey]},
		{name: "standby credentials of another agent are not used", from: &hubA, current: credsA, standbyTo: otherAgentB,
			wantMainCert: credsA[clientcert.TLSCertSecretKey], wantStandbyFrom: credsA[clientcert.TLSCertSecretKey]},
		{name: "hub kubeconfig Secret already valid for the new hub", from: nil, current: credsB, standbyTo: credentials(t, caB, hubB, "agent1"),
			wantMainCert: credsB[clientcert.TLSCertSecretKey]},
		{name: "first start with standby credentials and no hub kubeconfig Secret", from: nil, current: nil, standbyTo: credsB,
			wantUsed: true, wantMainCert: credsB[clientcert.TLSCertSecretKey]},
		{name: "another agent's credentials are left to the session's takeover rules", from: &hubA, current: otherAgentB, standbyTo: credsB,
			wantMainCert: otherAgentB[clientcert.TLSCertSecretKey]},
		{name: "credentials of a hub that rejected them are discarded, not kept", from: &hubA, discardFrom: true, current: credsA,
			standbyFrom: credsA, standbyTo: credsB, wantUsed: true, wantMainCert: credsB[clientcert.TLSCertSecretKey]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			if tc.current != nil {
				s := certtesting.NewSecret(ns, main, tc.current)
				s.Labels = map[string]string{"owner": "operator"}
				s.Annotations = map[string]string{"note": "kept"}
				objs = append(objs, s)
			}
			if tc.standbyTo != nil {
				objs = append(objs, certtesting.NewSecret(ns, StandbySecretName(main, "hub-b"), tc.standbyTo))
			}
			if tc.standbyFrom != nil {
				objs = append(objs, certtesting.NewSecret(ns, StandbySecretName(main, "primary"), tc.standbyFrom))
			}
			kube := kubefake.NewSimpleClientset(objs...)
			delayWatchEvents(kube, "secrets", 300*time.Millisecond)
			c := testConfig()
			c.AgentKubeClient, c.Namespace, c.ClusterName, c.AgentName = kube, ns, "cluster1", "agent1"
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c.SecretInformer = startedSecretInformer(ctx, kube)
			recorder := events.NewInMemoryRecorder("test", clock.RealClock{})
			c.Recorder = recorder
			sc, err := NewStandbyCredentials(c)
			if err != nil {
				t.Fatal(err)
			}
			used, err := sc.Swap(context.Background(), Handover{From: tc.from, DiscardFrom: tc.discardFrom, To: hubB})
			if err != nil {
				t.Fatalf("Swap: %v", err)
			}
			if used != tc.wantUsed {
				t.Errorf("used = %v, want %v", used, tc.wantUsed)
			}
			got, err := kube.CoreV1().Secrets(ns).Get(context.Background(), main, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("hub kubeconfig Secret: %v", err)
			}
			if !bytes.Equal(got.Data[clientcert.TLSCertSecretKey], tc.wantMainCert) {
				t.Errorf("hub kubeconfig Secret holds another certificate than wanted")
			}
			if tc.wantUsed {
				// The session reads the Secret from the informer: Swap returns once it shows the credentials.
				if cached, err := c.SecretInformer.Lister().Secrets(ns).Get(main); err != nil || !bytes.Equal(cached.Data[clientcert.TLSCertSecretKey], tc.wantMainCert) {
					t.Errorf("the Secret informer does not show the standby credentials when Swap returns (err %v)", err)
				}
				if err := clientcert.CheckHubKubeconfig(got.Data, "cluster1", "agent1", hubB.Bootstrap.Hub, time.Now()); err != nil {
					t.Errorf("hub kubeconfig Secret is not valid for hub-b: %v", err)
				}
				if !sc.config.BootstrapBackoff.Wrote(got.Data[clientcert.TLSCertSecretKey]) {
					t.Errorf("the standby certificate written is not recorded as this process's")
				}
				if tc.current != nil && (got.Labels["owner"] != "operator" || got.Annotations["note"] != "kept") {
					t.Errorf("labels %v / annotations %v of the hub kubeconfig Secret not kept", got.Labels, got.Annotations)
				}
				if _, ok := tc.current["extra"]; ok && string(got.Data["extra"]) != "kept" {
					t.Errorf("unrelated key of the hub kubeconfig Secret not kept")
				}
			}
			saved, err := kube.CoreV1().Secrets(ns).Get(context.Background(), StandbySecretName(main, "primary"), metav1.GetOptions{})
			switch {
			case tc.wantStandbyFrom == nil && !apierrors.IsNotFound(err):
				t.Errorf("primary's standby Secret written (err %v), want none", err)
			case tc.wantStandbyFrom != nil && err != nil:
				t.Errorf("primary's standby Secret: %v", err)
			case tc.wantStandbyFrom != nil:
				if !bytes.Equal(saved.Data[clientcert.TLSCertSecretKey], tc.wantStandbyFrom) {
					t.Errorf("primary's standby Secret holds another certificate")
				}
				if saved.Labels[StandbyHubLabel] != "primary" {
					t.Errorf("primary's standby Secret labels = %v, want %s=primary", saved.Labels, StandbyHubLabel)
				}
				if _, ok := saved.Data["extra"]; ok {
					t.Errorf("a key other than the five credentials keys was copied into the standby Secret")
				}
			}
			var reasons []string
			for _, e := range recorder.Events() {
				reasons = append(reasons, e.Reason)
			}
			if used != strings.Contains(strings.Join(reasons, ","), ReasonStandbyCredentialsUsed) {
				t.Errorf("events %v: want %s exactly when the standby credentials were used", reasons, ReasonStandbyCredentialsUsed)
			}
		})
	}
}

// TestStandbySwapWriteFailure: a hub kubeconfig Secret that cannot be written is an error naming it; the
// standby credentials are then not reported as used.
func TestStandbySwapWriteFailure(t *testing.T) {
	hubB, caB := standbyTestHub(t, "hub-b", "https://hub-b.example.com:6443")
	const ns, main = "agent-ns", "hub-kubeconfig-secret"
	kube := kubefake.NewSimpleClientset(certtesting.NewSecret(ns, StandbySecretName(main, "hub-b"), credentials(t, caB, hubB, "agent1")))
	kube.PrependReactor("create", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("secrets"), main, nil)
	})
	c := testConfig()
	c.AgentKubeClient, c.Namespace, c.ClusterName, c.AgentName = kube, ns, "cluster1", "agent1"
	sc, err := NewStandbyCredentials(c)
	if err != nil {
		t.Fatal(err)
	}
	used, err := sc.Swap(context.Background(), Handover{To: hubB})
	if used || err == nil || !strings.Contains(err.Error(), "agent-ns/hub-kubeconfig-secret") {
		t.Fatalf("Swap = %v, %v; want false and an error naming agent-ns/hub-kubeconfig-secret", used, err)
	}
}

// TestStandbySwapRechecksTheSecretItReplaces: credentials land in the hub kubeconfig Secret after Swap read it and
// before Swap writes it. Swap re-checks the Secret its write would replace and does not write over them:
//   - another writer's (another agent of the cluster): left to the session's takeover rules, no error;
//   - this agent's own new credentials for the hub left (a bootstrap's write that outlived its session), to be kept
//     for a switch back: an error, so that the caller decides again from a new read.
func TestStandbySwapRechecksTheSecretItReplaces(t *testing.T) {
	hubA, caA := standbyTestHub(t, "primary", "https://hub-a.example.com:6443")
	hubB, caB := standbyTestHub(t, "hub-b", "https://hub-b.example.com:6443")
	const ns, main = "agent-ns", "hub-kubeconfig-secret"
	staleA := credentials(t, caA, hubA, "agent1")
	staleA[clientcert.TLSCertSecretKey] = []byte("not a certificate: credentials no longer valid")
	cases := []struct {
		name            string
		read, landed    map[string][]byte // the Secret as Swap reads it, and as the other write leaves it
		wantErrContains string            // "": no error
	}{
		{name: "another writer's credentials", read: credentials(t, caA, hubA, "agent1"), landed: credentials(t, caB, hubB, "someone")},
		{name: "this agent's own new credentials for the hub left", read: staleA, landed: credentials(t, caA, hubA, "agent1"),
			wantErrContains: "changed since it was read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kube := kubefake.NewSimpleClientset(certtesting.NewSecret(ns, main, tc.read),
				certtesting.NewSecret(ns, StandbySecretName(main, "hub-b"), credentials(t, caB, hubB, "agent1")))
			gets := 0
			kube.PrependReactor("get", "secrets", func(a clienttesting.Action) (bool, runtime.Object, error) {
				if a.(clienttesting.GetAction).GetName() != main {
					return false, nil, nil
				}
				if gets++; gets == 2 {
					// Between Swap's read and its write: the other write lands.
					s, err := kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("secrets"), ns, main)
					if err != nil {
						return true, nil, err
					}
					updated := s.(*corev1.Secret).DeepCopy()
					updated.Data = tc.landed
					if err := kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("secrets"), updated, ns); err != nil {
						return true, nil, err
					}
				}
				return false, nil, nil
			})
			c := testConfig()
			c.AgentKubeClient, c.Namespace, c.ClusterName, c.AgentName = kube, ns, "cluster1", "agent1"
			sc, err := NewStandbyCredentials(c)
			if err != nil {
				t.Fatal(err)
			}
			used, err := sc.Swap(context.Background(), Handover{To: hubB})
			switch {
			case used:
				t.Fatalf("Swap wrote the standby credentials (err %v); want the landed credentials left alone", err)
			case tc.wantErrContains == "" && err != nil:
				t.Fatalf("Swap: %v, want no error", err)
			case tc.wantErrContains != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrContains)):
				t.Fatalf("Swap: %v, want an error containing %q", err, tc.wantErrContains)
			}
			if gets < 2 {
				t.Fatalf("the hub kubeconfig Secret was read %d times, want it read again before the write", gets)
			}
			got, err := kube.CoreV1().Secrets(ns).Get(context.Background(), main, metav1.GetOptions{})
			if err != nil || !bytes.Equal(got.Data[clientcert.TLSCertSecretKey], tc.landed[clientcert.TLSCertSecretKey]) {
				t.Fatalf("hub kubeconfig Secret (err %v) no longer holds the credentials that landed", err)
			}
		})
	}
}

// TestStandbySwapKeepsCredentialsWhenSavingFails: when the credentials of the hub left cannot be kept in its
// standby Secret, the hub kubeconfig Secret is not overwritten either: they are not lost.
func TestStandbySwapKeepsCredentialsWhenSavingFails(t *testing.T) {
	hubA, caA := standbyTestHub(t, "primary", "https://hub-a.example.com:6443")
	hubB, caB := standbyTestHub(t, "hub-b", "https://hub-b.example.com:6443")
	const ns, main = "agent-ns", "hub-kubeconfig-secret"
	credsA := credentials(t, caA, hubA, "agent1")
	kube := kubefake.NewSimpleClientset(certtesting.NewSecret(ns, main, credsA),
		certtesting.NewSecret(ns, StandbySecretName(main, "hub-b"), credentials(t, caB, hubB, "agent1")))
	kube.PrependReactor("create", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("secrets"), StandbySecretName(main, "primary"), nil)
	})
	c := testConfig()
	c.AgentKubeClient, c.Namespace, c.ClusterName, c.AgentName = kube, ns, "cluster1", "agent1"
	sc, err := NewStandbyCredentials(c)
	if err != nil {
		t.Fatal(err)
	}
	used, err := sc.Swap(context.Background(), Handover{From: &hubA, To: hubB})
	if used || err == nil || !strings.Contains(err.Error(), "keeping the credentials of hub primary") {
		t.Fatalf("Swap = %v, %v; want false and an error about keeping primary's credentials", used, err)
	}
	got, err := kube.CoreV1().Secrets(ns).Get(context.Background(), main, metav1.GetOptions{})
	if err != nil || !bytes.Equal(got.Data[clientcert.TLSCertSecretKey], credsA[clientcert.TLSCertSecretKey]) {
		t.Fatalf("hub kubeconfig Secret (err %v) no longer holds primary's credentials", err)
	}
}

// TestStandbyForget: Forget deletes a hub's standby Secret and accepts one already gone.
func TestStandbyForget(t *testing.T) {
	const ns, main = "agent-ns", "hub-kubeconfig-secret"
	kube := kubefake.NewSimpleClientset(certtesting.NewSecret(ns, StandbySecretName(main, "hub-b"), map[string][]byte{"tls.key": []byte("k")}))
	c := testConfig()
	c.AgentKubeClient, c.Namespace = kube, ns
	sc, err := NewStandbyCredentials(c)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := sc.Forget(context.Background(), "hub-b"); err != nil {
			t.Fatalf("Forget #%d: %v", i+1, err)
		}
	}
	if _, err := kube.CoreV1().Secrets(ns).Get(context.Background(), StandbySecretName(main, "hub-b"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("standby Secret still there (err %v)", err)
	}
}

// TestStandbyForgetOthers: the agent's standby Secrets of hubs not configured are deleted; a configured hub's,
// another agent's (another hub kubeconfig Secret name) and an unlabelled Secret are kept.
func TestStandbyForgetOthers(t *testing.T) {
	const ns, main = "agent-ns", "hub-kubeconfig-secret"
	labelled := func(name, hub string) *corev1.Secret {
		s := certtesting.NewSecret(ns, name, map[string][]byte{"tls.key": []byte("k")})
		if hub != "" {
			s.Labels = map[string]string{StandbyHubLabel: hub}
		}
		return s
	}
	kube := kubefake.NewSimpleClientset(
		labelled(StandbySecretName(main, "hub-b"), "hub-b"),
		labelled(StandbySecretName(main, "gone"), "gone"),
		labelled(StandbySecretName(main, "hub-c"), "hub-c"),
		labelled(StandbySecretName("other-agent-secret", "gone"), "gone"),
		labelled(StandbySecretName(main, "unlabelled"), ""),
	)
	c := testConfig()
	c.AgentKubeClient, c.Namespace, c.SecretName = kube, ns, main
	sc, err := NewStandbyCredentials(c)
	if err != nil {
		t.Fatal(err)
	}
	forgotten, err := sc.ForgetOthers(context.Background(), []string{"primary", "hub-b"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(forgotten, ","); got != "gone,hub-c" {
		t.Errorf("forgotten %q, want gone,hub-c", got)
	}
	list, err := kube.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, s := range list.Items {
		left = append(left, s.Name)
	}
	sort.Strings(left)
	want := []string{StandbySecretName(main, "hub-b"), StandbySecretName(main, "unlabelled"), StandbySecretName("other-agent-secret", "gone")}
	sort.Strings(want)
	if strings.Join(left, " ") != strings.Join(want, " ") {
		t.Errorf("Secrets left %v, want %v", left, want)
	}
	kube.PrependReactor("list", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("apiserver unavailable")
	})
	if _, err := sc.ForgetOthers(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "listing standby secrets in agent-ns") {
		t.Errorf("ForgetOthers with a failing list: error %v, want one naming the namespace", err)
	}
}

// TestNewStandbyCredentialsSecretNameLength: a hub kubeconfig Secret name that leaves no room for
// "<name>-<hub>" is refused with the limit.
func TestNewStandbyCredentialsSecretNameLength(t *testing.T) {
	c := testConfig()
	c.SecretName = strings.Repeat("s", MaxHubKubeconfigSecretName+1)
	if _, err := NewStandbyCredentials(c); err == nil || !strings.Contains(err.Error(), "at most 189 characters") {
		t.Fatalf("NewStandbyCredentials error = %v, want the 189-character limit", err)
	}
	c.SecretName = strings.Repeat("s", MaxHubKubeconfigSecretName)
	if _, err := NewStandbyCredentials(c); err != nil {
		t.Fatalf("NewStandbyCredentials with a %d-character name: %v", MaxHubKubeconfigSecretName, err)
	}
}

// delayWatchEvents makes every watch of resource on kube deliver its events delay late, as an informer lags
// behind the apiserver on a loaded machine.
func delayWatchEvents(kube *kubefake.Clientset, resource string, delay time.Duration) {
	kube.PrependWatchReactor(resource, func(action clienttesting.Action) (bool, watch.Interface, error) {
		w, err := kube.Tracker().Watch(action.GetResource(), action.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		ch := make(chan watch.Event)
		proxy := watch.NewProxyWatcher(ch)
		go func() {
			defer close(ch)
			defer w.Stop()
			for {
				select {
				case e, ok := <-w.ResultChan():
					if !ok {
						return
					}
					time.Sleep(delay)
					select {
					case ch <- e:
					case <-proxy.StopChan():
						return
					}
				case <-proxy.StopChan():
					return
				}
			}
		}()
		return true, proxy, nil
	})
}

// The standby credentials are judged from the Secret as the cluster holds it when the informer has not seen the
// controller's write yet: judged from the informer alone they would stay Pending (no later status change comes).
func TestValidStandbySecretReadsThroughALaggingInformer(t *testing.T) {
	hubB, caB := standbyTestHub(t, "hub-b", "https://hub-b.example.com:6443")
	const ns = "agent-ns"
	name := StandbySecretName("hub-kubeconfig-secret", "hub-b")
	kube := kubefake.NewSimpleClientset(certtesting.NewSecret(ns, name, credentials(t, caB, hubB, "agent1")))
	c := testConfig()
	c.AgentKubeClient, c.Namespace, c.ClusterName, c.AgentName = kube, ns, "cluster1", "agent1"
	sc, err := NewStandbyCredentials(c)
	if err != nil {
		t.Fatal(err)
	}
	// An informer that has not seen the Secret: its lister is empty.
	lagging := informers.NewSharedInformerFactory(kubefake.NewSimpleClientset(), 0).Core().V1().Secrets().Lister()
	if _, ok := sc.validStandbySecret(context.Background(), lagging, name, hubB, time.Now()); !ok {
		t.Error("valid standby credentials judged invalid while the informer lags")
	}
	if _, ok := sc.validStandbySecret(context.Background(), lagging, "absent", hubB, time.Now()); ok {
		t.Error("an absent Secret judged valid")
	}
}

// TestSessionAdoptsStandbyCredentials: a session about to bootstrap (its hub kubeconfig Secret holds the hub
// left's credentials) writes its hub's valid standby credentials into the Secret itself, trying again after
// failed requests (the hand-over before it started timed out), and returns once its informer shows them; with
// no valid standby credentials it writes nothing and returns at once.
func TestSessionAdoptsStandbyCredentials(t *testing.T) {
	hubA, caA := standbyTestHub(t, "primary", "https://hub-a.example.com:6443")
	hubB, caB := standbyTestHub(t, "hub-b", "https://hub-b.example.com:6443")
	credsA, credsB := credentials(t, caA, hubA, "agent1"), credentials(t, caB, hubB, "agent1")
	const ns, main = "agent-ns", "hub-kubeconfig-secret"
	cases := []struct {
		name      string
		standbyB  map[string][]byte // hub-b's standby Secret; nil: absent
		failGets  int               // the first failGets GETs of a Secret fail
		wantGets  int               // failed GETs seen: one per failed attempt, at most adoptAttempts
		wantCert  []byte            // tls.crt of the hub kubeconfig Secret afterwards
		wantEvent bool              // ReasonStandbyCredentialsUsed
	}{
		{name: "adopted after two failed reads", standbyB: credsB, failGets: 2, wantGets: 2, wantCert: credsB[clientcert.TLSCertSecretKey], wantEvent: true},
		{name: "no standby credentials: nothing written", wantCert: credsA[clientcert.TLSCertSecretKey]},
		{name: "requests that keep failing: left to the bootstrap", standbyB: credsB, failGets: 100, wantGets: adoptAttempts, wantCert: credsA[clientcert.TLSCertSecretKey]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := []runtime.Object{certtesting.NewSecret(ns, main, credsA)}
			if tc.standbyB != nil {
				objs = append(objs, certtesting.NewSecret(ns, StandbySecretName(main, "hub-b"), tc.standbyB))
			}
			kube := kubefake.NewSimpleClientset(objs...)
			failed := 0
			kube.PrependReactor("get", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
				if failed < tc.failGets {
					failed++
					return true, nil, apierrors.NewTimeoutError("the spoke apiserver is busy", 1)
				}
				return false, nil, nil
			})
			c := testConfig()
			c.AgentKubeClient, c.Namespace, c.ClusterName, c.AgentName, c.SecretName = kube, ns, "cluster1", "agent1", main
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c.SecretInformer = startedSecretInformer(ctx, kube)
			recorder := events.NewInMemoryRecorder("test", clock.RealClock{})
			c.Recorder = recorder
			// The retries wait on the session's clock: stepped whenever something waits on it.
			fakeClock := testingclock.NewFakeClock(time.Now())
			c.Clock = fakeClock
			go func() {
				for ctx.Err() == nil {
					if fakeClock.HasWaiters() {
						fakeClock.Step(adoptRetryDelay * 8)
					}
					time.Sleep(time.Millisecond)
				}
			}()
			sc, err := NewStandbyCredentials(c)
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(c, Params{Hub: hubB, Standby: sc})
			if err != nil {
				t.Fatal(err)
			}
			changed := make(chan struct{}, 1)
			s.adoptStandby(ctx, changed)
			if failed != tc.wantGets {
				t.Errorf("%d failed reads, want %d (attempts are retried, at most %d)", failed, tc.wantGets, adoptAttempts)
			}

			got, err := kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("secrets"), ns, main)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.(*corev1.Secret).Data[clientcert.TLSCertSecretKey], tc.wantCert) {
				t.Errorf("the hub kubeconfig Secret holds another certificate than wanted")
			}
			if tc.wantEvent {
				if cached, err := c.SecretInformer.Lister().Secrets(ns).Get(main); err != nil || !bytes.Equal(cached.Data[clientcert.TLSCertSecretKey], tc.wantCert) {
					t.Errorf("the Secret informer does not show the adopted credentials when adoptStandby returns (err %v)", err)
				}
			}
			used := false
			for _, e := range recorder.Events() {
				used = used || e.Reason == ReasonStandbyCredentialsUsed
			}
			if used != tc.wantEvent {
				t.Errorf("%s event: %v, want %v", ReasonStandbyCredentialsUsed, used, tc.wantEvent)
			}
			if phase, msg := s.Phase(); phase != PhaseBootstrapping || !strings.Contains(msg, StandbySecretName(main, "hub-b")) {
				t.Errorf("phase %s %q, want %s naming the standby Secret", phase, msg, PhaseBootstrapping)
			}
		})
	}
}

// TestSessionAdoptionWaitsForItsInformer: when the hub kubeconfig Secret already holds this hub's credentials in the
// cluster but the session's informer still shows the hub left's, adoptStandby returns only once the informer shows
// them — a change event that brings nothing new (the informer's initial Add) does not end the wait.
func TestSessionAdoptionWaitsForItsInformer(t *testing.T) {
	hubA, caA := standbyTestHub(t, "primary", "https://hub-a.example.com:6443")
	hubB, caB := standbyTestHub(t, "hub-b", "https://hub-b.example.com:6443")
	credsA, credsB := credentials(t, caA, hubA, "agent1"), credentials(t, caB, hubB, "agent1")
	const ns, main = "agent-ns", "hub-kubeconfig-secret"
	cluster := kubefake.NewSimpleClientset(certtesting.NewSecret(ns, main, credsB))  // as the cluster holds it
	informed := kubefake.NewSimpleClientset(certtesting.NewSecret(ns, main, credsA)) // what the informer shows so far
	c := testConfig()
	c.AgentKubeClient, c.Namespace, c.ClusterName, c.AgentName, c.SecretName = cluster, ns, "cluster1", "agent1", main
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.SecretInformer = startedSecretInformer(ctx, informed)
	c.Clock = testingclock.NewFakeClock(time.Now()) // never stepped: the wait ends by the informer only
	sc, err := NewStandbyCredentials(c)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(c, Params{Hub: hubB, Standby: sc})
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 1)
	changed <- struct{}{} // the informer's initial Add, not consumed yet
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.adoptStandby(ctx, changed)
	}()
	select {
	case <-done:
		t.Fatal("adoptStandby returned while the informer still shows the hub left's credentials")
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := informed.CoreV1().Secrets(ns).Update(ctx, certtesting.NewSecret(ns, main, credsB), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		if cached, err := c.SecretInformer.Lister().Secrets(ns).Get(main); err == nil && bytes.Equal(cached.Data[clientcert.TLSCertSecretKey], credsB[clientcert.TLSCertSecretKey]) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	changed <- struct{}{}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("adoptStandby did not return once the informer showed this hub's credentials")
	}
}
