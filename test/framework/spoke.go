package framework

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
)

// Spoke is a running managed cluster: kube-apiserver + etcd (authorization RBAC) serving the ClusterClaim CRD
// (cluster.open-cluster-management.io/v1alpha1). Its methods that take no context call t.Fatal on failure and
// must be called from the test goroutine.
type Spoke struct {
	// AdminConfig authenticates as user "admin" in group system:masters.
	AdminConfig *rest.Config
	// Kube is a clientset built from AdminConfig.
	Kube kubernetes.Interface
	// Cluster is an OCM cluster clientset built from AdminConfig (ClusterClaims: Cluster.ClusterV1alpha1()).
	Cluster clusterclient.Interface

	t              testing.TB
	cp             *controlPlane
	kubeconfig     []byte
	kubeconfigFile string
}

// StartSpoke starts a spoke and stops it in t.Cleanup. It fails the test, naming the component, when it cannot
// start. It logs how long the start took.
func StartSpoke(t testing.TB) *Spoke {
	t.Helper()
	start := time.Now()
	const component = "spoke"
	root, err := RepoRoot()
	if err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	crds, err := loadCRDs(root, spokeCRDFiles())
	if err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	cp := startControlPlane(t, component, "RBAC", crds, DefaultStartTimeout)
	s := &Spoke{AdminConfig: cp.adminConfig, t: t, cp: cp}
	if s.Kube, err = kubernetes.NewForConfig(cp.adminConfig); err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	if s.Cluster, err = clusterclient.NewForConfig(cp.adminConfig); err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	if s.kubeconfig, err = kubeconfig(cp.adminConfig, "spoke-admin"); err != nil {
		t.Fatalf("%s: admin kubeconfig: %v", component, err)
	}
	s.kubeconfigFile = filepath.Join(cp.dir, "admin.kubeconfig")
	if err := os.WriteFile(s.kubeconfigFile, s.kubeconfig, 0o600); err != nil {
		t.Fatalf("%s: writing %s: %v", component, s.kubeconfigFile, err)
	}
	t.Logf("%s started in %s at %s", component, time.Since(start).Round(time.Millisecond), cp.url())
	return s
}

// URL returns the apiserver's https://127.0.0.1:<port> URL.
func (s *Spoke) URL() string { return s.cp.url() }

// CAData returns the PEM CA bundle that verifies the apiserver's serving certificate.
func (s *Spoke) CAData() []byte { return s.cp.servingCA() }

// Kubeconfig returns a self-contained admin kubeconfig (inline CA, client certificate and key).
func (s *Spoke) Kubeconfig() []byte { return s.kubeconfig }

// KubeconfigFile returns the path of a file holding Kubeconfig (removed when the test ends).
func (s *Spoke) KubeconfigFile() string { return s.kubeconfigFile }

// LogDir returns the directory holding the logs of the spoke's processes.
func (s *Spoke) LogDir() string { return s.cp.logDir }
