package hollow

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	failoverclientset "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// serviceAccount is the ServiceAccount of manifests/rbac.yaml whose identity each hollow agent has on the spoke.
const serviceAccount = "klusterlet-failover"

// Fleet configures Prepare.
type Fleet struct {
	// Count is the number of agents (at least 1).
	Count int
	// Prefix names the agents: cluster i (from 0) is <Prefix>-<i>, and so is its namespace on the spoke.
	Prefix string
	// Primary is the hub every agent joins first (its own bootstrap certificate, user Primary.BootstrapUser()).
	Primary *framework.Hub
	// Alternates are the agents' alternate hubs: each agent gets a Secret <hub name>-bootstrap with its own
	// bootstrap kubeconfig of that hub and a FailoverConfig "failover" listing them in this order. None: no
	// FailoverConfig.
	Alternates []*framework.Hub
	// FailoverConfig, if set, changes every agent's FailoverConfig spec (timeouts, probe interval).
	FailoverConfig func(*failoverv1alpha1.FailoverConfigSpec)
}

// Prepare is PrepareOn with one spoke.
func Prepare(t testing.TB, ctx context.Context, spoke *framework.Spoke, dir string, f Fleet) []string {
	t.Helper()
	return PrepareOn(t, ctx, []*framework.Spoke{spoke}, dir, f)
}

// PrepareOn writes the agents of f into dir (the layout of Options.Dir), agent i on spokes[i % len(spokes)], and
// creates what each needs on its spoke: its namespace, manifests/rbac.yaml's grants for its ServiceAccount
// identity, and, with alternates, their bootstrap Secrets and its FailoverConfig (the FailoverConfig CRD is
// installed). Every agent gets certificates and a kube-system UID of its own. Several spokes spread what the
// agents ask of their own cluster's apiserver (a fleet has one per cluster). It returns the cluster names in
// order and fails the test on error.
func PrepareOn(t testing.TB, ctx context.Context, spokes []*framework.Spoke, dir string, f Fleet) []string {
	t.Helper()
	if f.Count < 1 || f.Primary == nil || f.Prefix == "" || len(spokes) == 0 {
		t.Fatalf("hollow.PrepareOn: Count %d, Prefix %q, Primary %v, %d spokes: want at least one agent, a prefix, a primary hub and a spoke",
			f.Count, f.Prefix, f.Primary, len(spokes))
	}
	names := make([]string, f.Count)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", f.Prefix, i)
	}
	for k, spoke := range spokes {
		var onSpoke []string
		for i := k; i < len(names); i += len(spokes) {
			onSpoke = append(onSpoke, names[i])
		}
		if len(onSpoke) > 0 {
			prepareSpoke(t, ctx, spoke, onSpoke)
		}
	}

	// Certificates are issued here, on the test goroutine (the framework's issuers fail the test).
	notBefore, notAfter := time.Now().Add(-time.Hour), time.Now().Add(365*24*time.Hour)
	alternateBootstraps := make([][][]byte, len(names))
	for i, name := range names {
		agentDir := filepath.Join(dir, name)
		if err := os.MkdirAll(agentDir, 0o700); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{
			SpokeKubeconfigFile: spokes[i%len(spokes)].UserKubeconfig("system:serviceaccount:"+name+":"+serviceAccount,
				"system:serviceaccounts", "system:serviceaccounts:"+name),
			BootstrapKubeconfigFile: f.Primary.UserKubeconfig(f.Primary.BootstrapUser(), notBefore, notAfter, framework.BootstrapGroup),
			KubeSystemUIDFile:       []byte(uuid.NewUUID()),
		}
		for file, data := range files {
			if err := os.WriteFile(filepath.Join(agentDir, file), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for _, hub := range f.Alternates {
			alternateBootstraps[i] = append(alternateBootstraps[i], hub.UserKubeconfig(hub.BootstrapUser(), notBefore, notAfter, framework.BootstrapGroup))
		}
	}
	if len(f.Alternates) == 0 {
		return names
	}
	fos := make([]failoverclientset.Interface, len(spokes))
	for k, spoke := range spokes {
		fo, err := failoverclientset.NewForConfig(spoke.AdminConfig)
		if err != nil {
			t.Fatal(err)
		}
		fos[k] = fo
	}
	indexes := make([]int, len(names))
	for i := range indexes {
		indexes[i] = i
	}
	if err := util.ForEach(indexes, 16, func(i int) error {
		name, spoke, fo := names[i], spokes[i%len(spokes)], fos[i%len(spokes)]
		spec := failoverv1alpha1.FailoverConfigSpec{}
		for j, hub := range f.Alternates {
			secret := hub.Name + "-bootstrap"
			if _, err := spoke.Kube.CoreV1().Secrets(name).Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: name},
				Data:       map[string][]byte{failoverv1alpha1.KubeconfigSecretKey: alternateBootstraps[i][j]},
			}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("Secret %s/%s: %w", name, secret, err)
			}
			spec.AlternateHubs = append(spec.AlternateHubs, failoverv1alpha1.AlternateHub{Name: hub.Name, BootstrapKubeconfigSecretRef: secret})
		}
		if f.FailoverConfig != nil {
			f.FailoverConfig(&spec)
		}
		if _, err := fo.FailoverV1alpha1().FailoverConfigs(name).Create(ctx, &failoverv1alpha1.FailoverConfig{
			ObjectMeta: metav1.ObjectMeta{Name: "failover", Namespace: name},
			Spec:       spec,
		}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("FailoverConfig %s/failover: %w", name, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return names
}

// prepareSpoke installs the FailoverConfig CRD on spoke and creates the namespaces and agent RBAC of names there.
func prepareSpoke(t testing.TB, ctx context.Context, spoke *framework.Spoke, names []string) {
	t.Helper()
	util.InstallFailoverConfigCRD(t, spoke)
	if err := util.ForEach(names, 16, func(name string) error {
		_, err := spoke.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: %w", name, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	util.ApplyAgentRBAC(t, ctx, spoke, names...)
}
