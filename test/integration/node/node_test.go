// Package node_test runs the product as users run it: OCM's klusterlet operator, installed from OCM v1.2.0's own
// deploy/klusterlet/config, as a pod on a real kubelet (containerd, runc, the CNI bridge plugin, kube-proxy and
// kube-scheduler), with our image as the Klusterlet's registration image and OCM's work image as its work image.
package node_test

import (
	"context"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	joinTimeout = 2 * time.Minute
	workTimeout = 2 * time.Minute
)

// TestDefaultModeAsPods: the klusterlet operator pod renders the agents with our image; our registration pod runs
// as uid 65532 under the operator's ServiceAccount, becomes Ready, and the cluster is Joined and Available on a
// real OCM hub; OCM's work agent pod, mounting the hub kubeconfig Secret our pod wrote, applies a ManifestWork; a
// pod reaches the apiservers and nothing else on the host (checkPodReachesOnlyTheAPIServers).
func TestDefaultModeAsPods(t *testing.T) {
	const cluster = "cluster-node"
	network := framework.StartPodNetwork(t)
	hub := framework.StartHub(t, framework.HubOptions{Name: "hub-node", HubController: true, Network: network})
	spoke := framework.StartSpoke(t, framework.SpokeOptions{Network: network})
	images := framework.NodeImages(t)
	node := framework.StartNode(t, spoke, images.All()...)
	operator := framework.DeployKlusterletOperator(t, spoke, node, framework.KlusterletOperatorPodOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	applied := time.Now()
	k, err := operator.ApplyKlusterlet(ctx, framework.KlusterletOptions{
		ClusterName: cluster, RegistrationImage: framework.AgentImageRef, WorkImage: framework.OCMWorkImageRef,
		BootstrapKubeconfig: hub.BootstrapKubeconfig(),
	})
	if err != nil {
		t.Fatal(err)
	}
	util.WaitForClusterAvailable(t, hub, cluster, joinTimeout)
	t.Logf("measured: Klusterlet CR applied -> cluster Available on the hub in %.1f s (operator pod renders, our pod starts, joins)",
		time.Since(applied).Seconds())

	deps, err := operator.WaitForAgentPods(ctx, k.Name, k.Spec.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("measured: Klusterlet CR applied -> registration and work agent pods Ready in %.1f s", time.Since(applied).Seconds())
	pods, err := spoke.Pods(ctx, deps.Registration)
	if err != nil || len(pods) != 1 {
		t.Fatalf("registration pods %d (%v), want 1", len(pods), err)
	}
	reg := pods[0]
	if img := reg.Spec.Containers[0].Image; img != framework.AgentImageRef {
		t.Errorf("registration pod image %q, want ours %q", img, framework.AgentImageRef)
	}
	uid, err := node.ContainerUID(ctx, reg.Namespace, reg.Name, reg.Spec.Containers[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	if uid != 65532 {
		t.Errorf("our container runs as uid %d, want 65532 (the image's user)", uid)
	}

	util.ApplyConfigMapWork(t, ctx, hub, cluster, "work-on-node")
	framework.Eventually(t, workTimeout, util.PollInterval, func() (bool, error) {
		_, err := spoke.Kube.CoreV1().ConfigMaps("default").Get(ctx, "work-on-node", metav1.GetOptions{})
		return err == nil, err
	}, "ConfigMap default/work-on-node applied by the work agent pod")
	t.Logf("measured: Klusterlet CR applied -> ManifestWork applied by the work agent pod in %.1f s", time.Since(applied).Seconds())

	checkPodReachesOnlyTheAPIServers(t, ctx, network, spoke, node, hub)

	if t.Failed() || os.Getenv("KF_TEST_VERBOSE") != "" {
		t.Logf("registration log:\n%s", spoke.PodLogs(ctx, reg.Namespace, framework.Selector(deps.Registration), "", false))
	}
}
