package klusterlet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	// contentionWindow is how long the two agents are watched.
	contentionWindow = 150 * time.Second
	// maxContendedCSRs bounds the CSRs one hub may receive for the cluster in contentionWindow. Without the
	// bootstrap back-off each agent sent about three a second.
	maxContendedCSRs = 6
	// maxSecretFlips bounds how often the hub kubeconfig Secret may change hubs in contentionWindow.
	maxSecretFlips = 10
)

// TestTwoAgentsWithoutLeaderElection: two agents for one cluster in one namespace with leader election off and
// bootstrap kubeconfigs of different hubs — a rollout overlap, a partition that left the old pod running, OCM's
// own agent next to ours. They still take turns on the hub kubeconfig Secret, but each takeover is reported and
// grows the bootstrap back-off: over contentionWindow a handful of CSRs per hub and Secret flips instead of
// hundreds, and the ManagedCluster on hub B is created once.
func TestTwoAgentsWithoutLeaderElection(t *testing.T) {
	const cluster = "cluster-no-election"
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", HubController: true})
	hubB := framework.StartHub(t, framework.HubOptions{Name: "hub-b", HubController: true})
	spoke := framework.StartSpoke(t)
	util.EnsureAgentNamespace(t, spoke)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	first := registrationAgentWith(t, spoke, "agent-a-no-election", hubA.BootstrapKubeconfig(), cluster, "--disable-leader-election")
	util.WaitForClusterAvailable(t, hubA, cluster, joinTimeout)
	csrsA := csrCount(t, hubA, cluster)
	secret := util.HubKubeconfigSecret(t, spoke)
	if secret == nil || util.KubeconfigServer(secret.Data["kubeconfig"]) != hubA.URL() {
		t.Fatalf("the first agent is Available on hub A but the hub kubeconfig Secret does not name it")
	}
	secrets := spoke.Kube.CoreV1().Secrets(util.AgentNamespace)
	selector := "metadata.name=" + klusterlet.DefaultHubKubeconfigSecret
	w, err := watchtools.NewRetryWatcherWithContext(ctx, secret.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			return secrets.Watch(ctx, o)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	second := registrationAgentWith(t, spoke, "agent-b-no-election", hubB.BootstrapKubeconfig(), cluster, "--disable-leader-election")
	flips, server := 0, hubA.URL()
	uidsOnB := map[types.UID]bool{}
	deadline := time.After(contentionWindow)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case ev, open := <-w.ResultChan():
			if !open {
				t.Fatal("the watch of the hub kubeconfig Secret ended before the window did")
			}
			if s, ok := ev.Object.(*corev1.Secret); ok {
				if now := util.KubeconfigServer(s.Data["kubeconfig"]); now != "" && now != server {
					flips++
					server = now
				}
			}
			continue
		case <-tick.C:
		case <-deadline:
			done = true
		}
		mc, err := hubB.Cluster.ClusterV1().ManagedClusters().Get(ctx, cluster, metav1.GetOptions{})
		switch {
		case err == nil:
			uidsOnB[mc.UID] = true
		case !apierrors.IsNotFound(err):
			t.Fatalf("hub B: get ManagedCluster %s: %v", cluster, err)
		}
		for _, a := range []*framework.AgentProcess{first, second} {
			if exited, err := a.Exited(); exited {
				t.Fatalf("an agent exited (%v):\n%s", err, a.LogTail(30))
			}
		}
	}

	onA, onB := csrCount(t, hubA, cluster)-csrsA, csrCount(t, hubB, cluster)
	contested := contestedEvents(t, spoke)
	t.Logf("measured: over %s with leader election off: %d CSRs on hub A (after the join), %d on hub B, %d Secret flips between the hubs, "+
		"%d ManagedCluster(s) on hub B, %d HubKubeconfigContested events", contentionWindow, onA, onB, flips, len(uidsOnB), len(contested))
	if onA > maxContendedCSRs || onB > maxContendedCSRs {
		t.Errorf("%d CSRs on hub A and %d on hub B in %s; want at most %d each", onA, onB, contentionWindow, maxContendedCSRs)
	}
	if flips > maxSecretFlips {
		t.Errorf("the hub kubeconfig Secret changed hubs %d times in %s; want at most %d", flips, contentionWindow, maxSecretFlips)
	}
	if flips == 0 || onB == 0 {
		t.Errorf("the second agent never wrote the Secret (%d flips, %d CSRs on hub B): the scenario did not happen", flips, onB)
	}
	if len(uidsOnB) > 1 {
		t.Errorf("%d ManagedClusters created one after another on hub B, want at most one", len(uidsOnB))
	}
	// Each agent names what it found: the other's hub.
	for _, hub := range []*framework.Hub{hubA, hubB} {
		found := false
		for _, msg := range contested {
			found = found || strings.Contains(msg, hub.URL())
		}
		if !found {
			t.Errorf("no HubKubeconfigContested event names hub server %s (events: %q)", hub.URL(), contested)
		}
	}
}

// contestedEvents returns the messages of the HubKubeconfigContested events in the agent namespace.
func contestedEvents(t *testing.T, spoke *framework.Spoke) []string {
	t.Helper()
	list, err := spoke.Kube.CoreV1().Events(util.AgentNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("spoke: list events: %v", err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Reason == hubsession.ReasonHubKubeconfigContested {
			out = append(out, e.Message)
		}
	}
	return out
}
