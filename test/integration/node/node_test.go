// Package node_test runs the product as users run it: OCM's klusterlet operator, installed from OCM v1.2.0's own
// deploy/klusterlet/config, as a pod on a real kubelet (containerd, runc, the CNI bridge plugin, kube-proxy and
// kube-scheduler), with our image as the Klusterlet's registration image and OCM's work image as its work image.
package node_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	joinTimeout = 2 * time.Minute
	workTimeout = 2 * time.Minute
)

// TestDefaultModeAsPods: the klusterlet operator pod renders the agents with our image; our registration pod runs
// as uid 65532 under the operator's ServiceAccount, becomes Ready, and the cluster is Joined and Available on a
// real OCM hub; OCM's work agent pod, mounting the hub kubeconfig Secret our pod wrote, applies a ManifestWork.
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

	applyConfigMapWork(t, ctx, hub, cluster, "work-on-node")
	framework.Eventually(t, workTimeout, util.PollInterval, func() (bool, error) {
		_, err := spoke.Kube.CoreV1().ConfigMaps("default").Get(ctx, "work-on-node", metav1.GetOptions{})
		return err == nil, err
	}, "ConfigMap default/work-on-node applied by the work agent pod")
	t.Logf("measured: Klusterlet CR applied -> ManifestWork applied by the work agent pod in %.1f s", time.Since(applied).Seconds())

	if t.Failed() || os.Getenv("KF_TEST_VERBOSE") != "" {
		t.Logf("registration log:\n%s", spoke.PodLogs(ctx, reg.Namespace, framework.Selector(deps.Registration), "", false))
	}
}

// applyConfigMapWork creates on hub a ManifestWork for cluster holding ConfigMap default/<name>.
func applyConfigMapWork(t *testing.T, ctx context.Context, hub *framework.Hub, cluster, name string) {
	t.Helper()
	raw, err := json.Marshal(&corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Data:       map[string]string{"from": hub.Name},
	})
	if err != nil {
		t.Fatal(err)
	}
	mw := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{
			Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}},
		}},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(mw)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(workv1.GroupVersion.String())
	u.SetKind("ManifestWork")
	c := dynamic.NewForConfigOrDie(hub.AdminConfig).Resource(schema.GroupVersionResource{Group: workv1.GroupName, Version: "v1", Resource: "manifestworks"}).Namespace(cluster)
	framework.Eventually(t, workTimeout, util.PollInterval, func() (bool, error) {
		_, err := c.Create(ctx, u, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), err
	}, "ManifestWork %s/%s created on hub %s", cluster, name, hub.Name)
}
