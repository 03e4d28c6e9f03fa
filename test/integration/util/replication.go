package util

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/klusterlet-failover/klusterlet-failover/manifests/crd"
	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	failoverclientset "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// NamedHub is a hub of a test with the name a ReplicationConfig gives it.
type NamedHub struct {
	Name string
	Hub  *framework.Hub
	// Kubeconfig, when set, is the replicator's kubeconfig for the hub instead of ReplicatorKubeconfig's (e.g.
	// one through a proxy the test cuts).
	Kubeconfig []byte
}

// InstallReplication prepares host to run `klusterlet-failover replicator --namespace namespace --config-name
// configName`: it installs the ReplicationConfig CRD, creates the namespace, one Secret <name>-kubeconfig per hub
// holding the replicator's kubeconfig for that hub (key "kubeconfig": the hub's least privilege from
// manifests/replicator/hub, ReplicatorKubeconfig, unless NamedHub.Kubeconfig is set), and ReplicationConfig
// configName whose spec is spec with hubs appended in order. It fails the test on error.
func InstallReplication(t testing.TB, host *framework.Hub, namespace, configName string, spec failoverv1alpha1.ReplicationConfigSpec, hubs ...NamedHub) {
	t.Helper()
	ctx := context.Background()
	def, err := crd.ReplicationConfigCRD()
	if err != nil {
		t.Fatalf("load the ReplicationConfig CRD: %v", err)
	}
	ext := apiextensionsclient.NewForConfigOrDie(host.AdminConfig)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, def, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("hub %s: create the ReplicationConfig CRD: %v", host.Name, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := host.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("hub %s: create namespace %s: %v", host.Name, namespace, err)
	}
	for _, h := range hubs {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: h.Name + "-kubeconfig", Namespace: namespace},
			Data:       map[string][]byte{"kubeconfig": h.Kubeconfig},
		}
		if h.Kubeconfig == nil {
			secret.Data["kubeconfig"] = ReplicatorKubeconfig(t, h.Hub, "")
		}
		if _, err := host.Kube.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatalf("hub %s: create Secret %s/%s: %v", host.Name, namespace, secret.Name, err)
		}
		spec.Hubs = append(spec.Hubs, failoverv1alpha1.ReplicationHub{
			Name: h.Name, KubeconfigSecret: failoverv1alpha1.KubeconfigSecretReference{Name: secret.Name},
		})
	}
	rc := &failoverv1alpha1.ReplicationConfig{ObjectMeta: metav1.ObjectMeta{Name: configName, Namespace: namespace}, Spec: spec}
	client := failoverclientset.NewForConfigOrDie(host.AdminConfig).FailoverV1alpha1().ReplicationConfigs(namespace)
	// The CRD may not be served yet.
	framework.Eventually(t, 30*time.Second, PollInterval, func() (bool, error) {
		_, err := client.Create(ctx, rc, metav1.CreateOptions{})
		return err == nil, err
	}, "ReplicationConfig %s/%s created on hub %s", namespace, configName, host.Name)
}
