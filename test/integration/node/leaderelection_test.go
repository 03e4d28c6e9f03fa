package node_test

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// registrationLock is the leader election Lease of `registration agent` (OCM's name, which ours keeps).
const registrationLock = "registration-agent-lock"

// TestLeaderElectionAsPods: the operator renders the agents with 3 replicas (--deployment-replicas=3); our three
// registration pods are all Ready, one holds the Lease and runs the agent, the two others wait without running
// it. The leader's pod deleted (the kubelet sends SIGTERM; our agent releases the Lease), another pod takes over
// and runs the cluster (its lease renewed on the hub after the deletion); a minute after they became Ready, the
// replicas never restarted and the one still waiting has not started the agent.
func TestLeaderElectionAsPods(t *testing.T) {
	const cluster = "cluster-replicas"
	network := framework.StartPodNetwork(t)
	hub := framework.StartHub(t, framework.HubOptions{Name: "hub-le", HubController: true, Signer: framework.SignerInProcess, Network: network})
	spoke := framework.StartSpoke(t, framework.SpokeOptions{Network: network})
	node := framework.StartNode(t, spoke, framework.NodeImages(t).All()...)
	operator := framework.DeployKlusterletOperator(t, spoke, node, framework.KlusterletOperatorPodOptions{AgentReplicas: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	k, err := operator.ApplyKlusterlet(ctx, framework.KlusterletOptions{
		ClusterName: cluster, RegistrationImage: framework.AgentImageRef, WorkImage: framework.OCMWorkImageRef,
		BootstrapKubeconfig: hub.BootstrapKubeconfig(),
	})
	if err != nil {
		t.Fatal(err)
	}
	deps, err := operator.WaitForAgentPods(ctx, k.Name, k.Spec.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if r := deps.Registration.Spec.Replicas; r == nil || *r != 3 {
		t.Fatalf("registration Deployment replicas %v, want 3 (--deployment-replicas=3)", r)
	}
	util.WaitForClusterAvailable(t, hub, cluster, joinTimeout)

	pods, err := spoke.Pods(ctx, deps.Registration)
	if err != nil || len(pods) != 3 {
		t.Fatalf("registration pods %d (%v), want 3", len(pods), err)
	}
	ready := time.Now()
	for _, p := range pods {
		if len(p.Status.ContainerStatuses) == 0 || !p.Status.ContainerStatuses[0].Ready {
			t.Errorf("registration pod %s is not Ready: a replica waiting for the Lease must be Ready", p.Name)
		}
	}
	leader := leaderPod(t, ctx, spoke, k.Spec.Namespace, pods)
	t.Logf("registration pods %v, leader %s", podNames(pods), leader)
	for _, p := range pods {
		if started := agentStarted(t, ctx, spoke, p); started != (p.Name == leader) {
			t.Errorf("registration pod %s started the agent: %v, want %v (the Lease's holder is %s)", p.Name, started, p.Name == leader, leader)
		}
	}

	// The leader's pod is deleted the way a roll-out or a drain deletes it.
	deleted := time.Now()
	if err := spoke.Kube.CoreV1().Pods(k.Spec.Namespace).Delete(ctx, leader, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var next string
	framework.Eventually(t, 2*time.Minute, util.PollInterval, func() (bool, error) {
		lease, err := spoke.Kube.CoordinationV1().Leases(k.Spec.Namespace).Get(ctx, registrationLock, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		next = holderPod(lease)
		return next != "" && next != leader, nil
	}, "another registration pod holds Lease %s after the leader's pod %s was deleted", registrationLock, leader)
	t.Logf("measured: leader pod %s deleted -> pod %s holds the Lease in %.1f s", leader, next, time.Since(deleted).Seconds())
	util.WaitForClusterAvailableSince(t, hub, cluster, deleted, joinTimeout)

	// A minute after the replicas became Ready: none restarted, and the one still waiting never ran the agent.
	time.Sleep(time.Until(ready.Add(time.Minute)))
	for _, before := range pods {
		if before.Name == leader {
			continue
		}
		p, err := spoke.Kube.CoreV1().Pods(before.Namespace).Get(ctx, before.Name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("registration pod %s a minute after it was Ready: %v", before.Name, err)
			continue
		}
		if len(p.Status.ContainerStatuses) == 0 || !p.Status.ContainerStatuses[0].Ready || restarts(*p) != 0 {
			t.Errorf("registration pod %s a minute after it was Ready: Ready %v, restarts %d; want Ready, no restart",
				p.Name, len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].Ready, restarts(*p))
		}
		if started := agentStarted(t, ctx, spoke, *p); started != (p.Name == next) {
			t.Errorf("registration pod %s started the agent: %v, want %v (the Lease's holder is %s)", p.Name, started, p.Name == next, next)
		}
	}
}

// agentStartedLog is what the agent logs once it runs (klusterlet.RunWithClients), which a replica waiting for the
// Lease never reaches.
const agentStartedLog = "Starting klusterlet-failover agent"

// agentStarted reports whether the registration container of pod p logged agentStartedLog.
func agentStarted(t *testing.T, ctx context.Context, spoke *framework.Spoke, p corev1.Pod) bool {
	t.Helper()
	data, err := spoke.Kube.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: p.Spec.Containers[0].Name}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("logs of registration pod %s: %v", p.Name, err)
	}
	return strings.Contains(string(data), agentStartedLog)
}

// leaderPod returns the pod of pods that holds the registration Lease; it fails unless exactly one does.
func leaderPod(t *testing.T, ctx context.Context, spoke *framework.Spoke, namespace string, pods []corev1.Pod) string {
	t.Helper()
	var holder string
	framework.Eventually(t, joinTimeout, util.PollInterval, func() (bool, error) {
		lease, err := spoke.Kube.CoordinationV1().Leases(namespace).Get(ctx, registrationLock, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		holder = holderPod(lease)
		return holder != "", nil
	}, "Lease %s held", registrationLock)
	found := 0
	for _, p := range pods {
		if p.Name == holder {
			found++
		}
	}
	if found != 1 {
		t.Fatalf("Lease %s is held by %q, which is none of the registration pods %v", registrationLock, holder, podNames(pods))
	}
	return holder
}

// holderPod returns the pod name in the Lease's holder identity (library-go: <pod name>_<uuid>), "" when free.
func holderPod(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	name, _, _ := strings.Cut(*l.Spec.HolderIdentity, "_")
	return name
}

func podNames(pods []corev1.Pod) []string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name
	}
	return names
}
