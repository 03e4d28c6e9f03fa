package testbed_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// ocmAgentsTimeout bounds what OCM's operator and work agent do after a change, on a loaded 2-core machine.
const ocmAgentsTimeout = 60 * time.Second

// fakeBootstrapKubeconfig returns a syntactically valid kubeconfig naming hub; nothing listens at its server.
func fakeBootstrapKubeconfig(t *testing.T, hub string) []byte {
	t.Helper()
	c := clientcmdapi.NewConfig()
	c.Clusters[hub] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	c.AuthInfos[hub] = &clientcmdapi.AuthInfo{Token: "not-a-token-" + hub}
	c.Contexts[hub] = &clientcmdapi.Context{Cluster: hub, AuthInfo: hub}
	c.CurrentContext = hub
	data, err := clientcmd.Write(*c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestKlusterletOperatorRendersAgents runs OCM's klusterlet operator v1.2.0 on a spoke and checks what it renders
// for a Default-mode Klusterlet and for a MultipleHubs one, that LocalContainer materializes the bootstrap Secrets
// where the rendered arguments (remapped) point, and that the registration ServiceAccount's token works with the
// RBAC the operator created.
func TestKlusterletOperatorRendersAgents(t *testing.T) {
	spoke := framework.StartSpoke(t)
	operator := framework.StartKlusterletOperator(t, spoke)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Default mode: one bootstrap Secret.
	bootstrap := fakeBootstrapKubeconfig(t, "hub-default")
	k, err := operator.ApplyKlusterlet(ctx, framework.KlusterletOptions{ClusterName: testCluster, BootstrapKubeconfig: bootstrap})
	if err != nil {
		t.Fatal(err)
	}
	deps, err := operator.WaitForAgentDeployments(ctx, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := container(t, deps.Registration)
	wantPrefix := []string{"/registration", "agent", "--spoke-cluster-name=" + testCluster, "--bootstrap-kubeconfig=/spoke/bootstrap/kubeconfig"}
	if len(reg.Args) < len(wantPrefix) || !slices.Equal(reg.Args[:len(wantPrefix)], wantPrefix) {
		t.Errorf("Default registration args %q, want them to start with %q", reg.Args, wantPrefix)
	}
	if hasArgPrefix(reg.Args, "--bootstrap-kubeconfigs=") || hasArgPrefix(reg.Args, "--hub-connection-timeout-seconds=") {
		t.Errorf("Default registration args %q carry MultipleHubs flags", reg.Args)
	}
	if reg.Image != framework.DefaultRegistrationImage {
		t.Errorf("registration image %q, want %q", reg.Image, framework.DefaultRegistrationImage)
	}
	t.Logf("Default registration args: %q", reg.Args)
	work := container(t, deps.Work)
	for _, want := range []string{
		"--spoke-cluster-name=" + testCluster, "--workload-source-driver=kube",
		"--workload-source-config=/spoke/hub-kubeconfig/kubeconfig", "--terminate-on-files=/spoke/hub-kubeconfig/kubeconfig",
		"--agent-id=" + string(k.UID),
	} {
		if !slices.Contains(work.Args, want) {
			t.Errorf("work args %q lack %q", work.Args, want)
		}
	}
	if work.Args[0] != "/work" || work.Args[1] != "agent" {
		t.Errorf("work args %q, want /work agent ...", work.Args)
	}
	t.Logf("Default work args: %q (replicas %d)", work.Args, ptrValue(deps.Work.Spec.Replicas))
	if sa := deps.Registration.Spec.Template.Spec.ServiceAccountName; sa != "klusterlet-registration-sa" {
		t.Errorf("registration ServiceAccount %q, want klusterlet-registration-sa", sa)
	}

	root := t.TempDir()
	lc, err := spoke.LocalContainer(ctx, deps.Registration, "", root)
	if err != nil {
		t.Fatal(err)
	}
	bootstrapFile := filepath.Join(root, "spoke", "bootstrap", "kubeconfig")
	if !slices.Contains(lc.Args, "--bootstrap-kubeconfig="+bootstrapFile) || lc.Args[0] != "/registration" {
		t.Errorf("local args %q, want /registration first and --bootstrap-kubeconfig=%s", lc.Args, bootstrapFile)
	}
	assertFile(t, bootstrapFile, bootstrap)
	if entries, err := os.ReadDir(filepath.Join(root, "spoke", "hub-kubeconfig")); err != nil || len(entries) != 0 {
		t.Errorf("emptyDir hub-kubeconfig: entries %v, err %v; want an empty directory", entries, err)
	}
	if want := "POD_NAME=" + framework.RegistrationDeploymentName(k.Name) + "-local"; !slices.Contains(lc.Env, want) {
		t.Errorf("local env %q lacks %q", lc.Env, want)
	}

	// The registration ServiceAccount's token, with the Role the operator bound in the agent namespace.
	saKubeconfig, err := spoke.ServiceAccountKubeconfig(ctx, lc.Namespace, lc.ServiceAccountName, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	saConfig, err := clientcmd.RESTConfigFromKubeConfig(saKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	saKube := kubernetes.NewForConfigOrDie(saConfig)
	framework.Eventually(t, ocmAgentsTimeout, pollInterval, func() (bool, error) {
		s, err := saKube.CoreV1().Secrets(lc.Namespace).Get(ctx, framework.BootstrapHubKubeconfigSecret, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return bytes.Equal(s.Data[framework.KubeconfigSecretKey], bootstrap), nil
	}, "ServiceAccount %s/%s reads Secret %s", lc.Namespace, lc.ServiceAccountName, framework.BootstrapHubKubeconfigSecret)
	// The operator's managed ClusterRole lets the registration agent read ClusterClaims, not write them.
	claim := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: "id.k8s.io"}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: "x"}}
	if _, err := clusterclientset.NewForConfigOrDie(saConfig).ClusterV1alpha1().ClusterClaims().Create(ctx, claim, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("ServiceAccount %s creating a ClusterClaim: got %v, want 403 Forbidden", lc.ServiceAccountName, err)
	}
	if _, err := clusterclientset.NewForConfigOrDie(saConfig).ClusterV1alpha1().ClusterClaims().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("ServiceAccount %s listing ClusterClaims: %v", lc.ServiceAccountName, err)
	}

	if cur, err := operator.GetKlusterlet(ctx, k.Name); err == nil {
		for _, c := range cur.Status.Conditions {
			t.Logf("Klusterlet %s condition %s=%s reason %s: %s", k.Name, c.Type, c.Status, c.Reason, c.Message)
		}
	}

	// MultipleHubs: an ordered list of bootstrap Secrets and a connection timeout.
	hubs := []framework.NamedKubeconfig{
		{Name: "bootstrap-hub-a", Kubeconfig: fakeBootstrapKubeconfig(t, "hub-a")},
		{Name: "bootstrap-hub-b", Kubeconfig: fakeBootstrapKubeconfig(t, "hub-b")},
	}
	multi, err := operator.ApplyKlusterlet(ctx, framework.KlusterletOptions{
		Name: "multihub", ClusterName: "c2", Namespace: "open-cluster-management-multihub",
		BootstrapKubeconfigs: hubs, HubConnectionTimeoutSeconds: 180,
	})
	if err != nil {
		t.Fatal(err)
	}
	mdeps, err := operator.WaitForAgentDeployments(ctx, multi, nil)
	if err != nil {
		t.Fatal(err)
	}
	mreg := container(t, mdeps.Registration)
	t.Logf("MultipleHubs registration args: %q", mreg.Args)
	var bootstraps []string
	for _, a := range mreg.Args {
		if v, ok := strings.CutPrefix(a, "--bootstrap-kubeconfigs="); ok {
			bootstraps = append(bootstraps, v)
		}
	}
	if want := []string{"/spoke/bootstrap-hub-a/kubeconfig", "/spoke/bootstrap-hub-b/kubeconfig"}; !slices.Equal(bootstraps, want) {
		t.Errorf("--bootstrap-kubeconfigs values %q, want %q in this order", bootstraps, want)
	}
	for _, want := range []string{"--hub-connection-timeout-seconds=180", "--feature-gates=MultipleHubs=true", "--spoke-cluster-name=c2"} {
		if !slices.Contains(mreg.Args, want) {
			t.Errorf("MultipleHubs registration args %q lack %q", mreg.Args, want)
		}
	}
	if hasArgPrefix(mreg.Args, "--bootstrap-kubeconfig=") {
		t.Errorf("MultipleHubs registration args %q carry --bootstrap-kubeconfig", mreg.Args)
	}
	mroot := t.TempDir()
	mlc, err := spoke.LocalContainer(ctx, mdeps.Registration, "registration-controller", mroot)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hubs {
		file := filepath.Join(mroot, "spoke", h.Name, "kubeconfig")
		if !slices.Contains(mlc.Args, "--bootstrap-kubeconfigs="+file) {
			t.Errorf("local MultipleHubs args %q lack --bootstrap-kubeconfigs=%s", mlc.Args, file)
		}
		assertFile(t, file, h.Kubeconfig)
	}
	if mlc.ServiceAccountName != "multihub-registration-sa" {
		t.Errorf("MultipleHubs registration ServiceAccount %q, want multihub-registration-sa", mlc.ServiceAccountName)
	}
}

// TestWorkAgentAppliesManifestWorks runs OCM's work agent against a hub with OCM's hub controller: a ManifestWork
// in the accepted cluster's namespace lands its ConfigMap on the spoke; a rewritten hub kubeconfig restarts the
// agent (the kubelet stand-in starts it again), which then applies a second ManifestWork.
func TestWorkAgentAppliesManifestWorks(t *testing.T) {
	hub := framework.StartHub(t, framework.HubOptions{Name: "work", Signer: framework.SignerNone, HubController: true})
	spoke := framework.StartSpoke(t, framework.SpokeOptions{WorkCRD: true})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster}, Spec: clusterv1.ManagedClusterSpec{LeaseDurationSeconds: 60}}
	if _, err := hub.Cluster.ClusterV1().ManagedClusters().Create(ctx, mc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := hub.AcceptCluster(ctx, testCluster, true); err != nil {
		t.Fatal(err)
	}
	workBinding := "open-cluster-management:managedcluster:" + testCluster + ":work"
	framework.Eventually(t, hubControllerTimeout, pollInterval, func() (bool, error) {
		_, err := hub.Kube.RbacV1().RoleBindings(testCluster).Get(ctx, workBinding, metav1.GetOptions{})
		return err == nil, err
	}, "hub controller creates RoleBinding %s/%s for the work agent", testCluster, workBinding)

	dir := filepath.Join(t.TempDir(), "hub-kubeconfig")
	hub.WriteHubKubeconfigDir(dir, testCluster, testAgent)
	agent := framework.StartWorkAgent(t, spoke, framework.WorkAgentOptions{ClusterName: testCluster, HubKubeconfigDir: dir})

	hubWork := dynamic.NewForConfigOrDie(hub.AdminConfig).Resource(manifestWorkGVR).Namespace(testCluster)
	createConfigMapWork(ctx, t, hubWork, "work-1", "from-work-1")
	waitConfigMap(ctx, t, spoke, "from-work-1")
	framework.Eventually(t, ocmAgentsTimeout, pollInterval, func() (bool, error) {
		u, err := hubWork.Get(ctx, "work-1", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		w := &workv1.ManifestWork{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, w); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied), nil
	}, "ManifestWork work-1 condition Applied=True on the hub")
	if n := agent.Restarts(); n != 0 {
		t.Fatalf("work agent restarted %d times before the kubeconfig changed; log %s", n, agent.LogPath())
	}

	// New credentials for the same hub and identity, written as a kubeconfig with the certificate inline: other
	// bytes in the watched file.
	certPEM, keyPEM := hub.IssueClientCert(framework.AgentUser(testCluster, testAgent), framework.AgentGroups(testCluster),
		time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	cfg, err := clientcmd.LoadFromFile(filepath.Join(dir, framework.HubKubeconfigFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range cfg.AuthInfos {
		ai.ClientCertificate, ai.ClientKey, ai.ClientCertificateData, ai.ClientKeyData = "", "", certPEM, keyPEM
	}
	rewritten, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, framework.HubKubeconfigFile), rewritten, 0o600); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, ocmAgentsTimeout, pollInterval, func() (bool, error) {
		return agent.Restarts() >= 1, nil
	}, "work agent restarts after its hub kubeconfig changed (log %s)", agent.LogPath())

	createConfigMapWork(ctx, t, hubWork, "work-2", "from-work-2")
	waitConfigMap(ctx, t, spoke, "from-work-2")
	if _, err := spoke.Kube.CoreV1().ConfigMaps("default").Get(ctx, "from-work-1", metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap of work-1 after the restart: %v", err)
	}
	t.Logf("work agent restarts: %d", agent.Restarts())
}

var manifestWorkGVR = schema.GroupVersionResource{Group: "work.open-cluster-management.io", Version: "v1", Resource: "manifestworks"}

// createConfigMapWork creates ManifestWork name holding ConfigMap default/<configMap> with data work=<name>.
func createConfigMapWork(ctx context.Context, t *testing.T, client dynamic.ResourceInterface, name, configMap string) {
	t.Helper()
	cm := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default"},"data":{"work":%q}}`, configMap, name)
	w := &workv1.ManifestWork{
		TypeMeta:   metav1.TypeMeta{APIVersion: "work.open-cluster-management.io/v1", Kind: "ManifestWork"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: []byte(cm)}},
		}}},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ManifestWork %s on the hub: %v", name, err)
	}
}

// waitConfigMap waits for ConfigMap default/name on the spoke.
func waitConfigMap(ctx context.Context, t *testing.T, spoke *framework.Spoke, name string) {
	t.Helper()
	framework.Eventually(t, ocmAgentsTimeout, pollInterval, func() (bool, error) {
		_, err := spoke.Kube.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
		return err == nil, err
	}, "ConfigMap default/%s applied on the spoke by the work agent", name)
}

func container(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("deployment %s has %d containers, want 1", d.Name, len(d.Spec.Template.Spec.Containers))
	}
	return d.Spec.Template.Spec.Containers[0]
}

func hasArgPrefix(args []string, prefix string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, prefix) })
}

func assertFile(t *testing.T, file string, want []byte) {
	t.Helper()
	info, err := os.Stat(file)
	if err != nil {
		t.Errorf("materialized file: %v", err)
		return
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("%s mode %v, want 0600", file, info.Mode().Perm())
	}
	got, err := os.ReadFile(file)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s holds %q (err %v), want the Secret's data %q", file, got, err, want)
	}
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return -1
	}
	return *p
}
