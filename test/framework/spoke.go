package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
)

// Spoke is a running managed cluster: kube-apiserver + etcd (authorization RBAC) serving the ClusterClaim CRD
// (cluster.open-cluster-management.io/v1alpha1), plus the CRDs SpokeOptions asks for. Its methods that take no
// context call t.Fatal on failure and must be called from the test goroutine.
type Spoke struct {
	// AdminConfig authenticates as user "admin" in group system:masters.
	AdminConfig *rest.Config
	// Kube is a clientset built from AdminConfig.
	Kube kubernetes.Interface
	// Cluster is an OCM cluster clientset built from AdminConfig (ClusterClaims: Cluster.ClusterV1alpha1()).
	Cluster clusterclientset.Interface

	t              testing.TB
	cp             *controlPlane
	kubeconfig     []byte
	kubeconfigFile string
	network        *PodNetwork
}

// SpokeOptions configures StartSpoke. The zero value serves ClusterClaim only.
type SpokeOptions struct {
	// WorkCRD also serves OCM's AppliedManifestWork CRD (work.open-cluster-management.io/v1), which OCM's work
	// agent needs. StartWorkAgent installs it when missing, so this is only needed to have it from the start.
	WorkCRD bool
	// KlusterletCRD also serves OCM's Klusterlet CRD (operator.open-cluster-management.io/v1).
	// StartKlusterletOperator installs it when missing.
	KlusterletCRD bool
	// Network, when set, makes the spoke the control plane of a node (StartNode): its apiserver listens on the
	// pod network's host address, serves the `kubernetes` Service from the network's service range with a serving
	// certificate valid for it, admits ServiceAccounts (pods get token volumes) and authorizes kubelets
	// (--authorization-mode=Node,RBAC, NodeRestriction).
	Network *PodNetwork
	// GarbageCollector also runs kube-controller-manager's garbage collector, as every real cluster does: it
	// deletes objects whose owners are gone (OCM's work agent makes each applied resource owned by its
	// AppliedManifestWork, and relies on this for a resource applied while the ManifestWork was deleted).
	GarbageCollector bool
}

// StartSpoke starts a spoke and stops it in t.Cleanup. opts is optional (at most one; the zero value without it).
// It fails the test, naming the component, when it cannot start. It logs how long the start took.
func StartSpoke(t testing.TB, opts ...SpokeOptions) *Spoke {
	t.Helper()
	start := time.Now()
	const component = "spoke"
	if len(opts) > 1 {
		t.Fatalf("%s: StartSpoke takes at most one SpokeOptions, got %d", component, len(opts))
	}
	var o SpokeOptions
	if len(opts) == 1 {
		o = opts[0]
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	files := spokeCRDFiles()
	if o.WorkCRD {
		files = append(files, appliedManifestWorkCRDFile)
	}
	if o.KlusterletCRD {
		files = append(files, klusterletCRDFile)
	}
	crds, err := loadCRDs(root, files)
	if err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	cpOpts := controlPlaneOptions{authzMode: "RBAC", crds: crds, startTimeout: DefaultStartTimeout}
	if o.Network != nil {
		cpOpts.authzMode, cpOpts.network, cpOpts.node = "Node,RBAC", o.Network, true
	}
	cp := startControlPlane(t, component, cpOpts)
	s := &Spoke{AdminConfig: cp.adminConfig, t: t, cp: cp, network: o.Network}
	if s.Kube, err = kubernetes.NewForConfig(cp.adminConfig); err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	if s.Cluster, err = clusterclientset.NewForConfig(cp.adminConfig); err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	if s.kubeconfig, err = kubeconfig(cp.adminConfig, "spoke-admin"); err != nil {
		t.Fatalf("%s: admin kubeconfig: %v", component, err)
	}
	s.kubeconfigFile = filepath.Join(cp.dir, "admin.kubeconfig")
	if err := os.WriteFile(s.kubeconfigFile, s.kubeconfig, 0o600); err != nil {
		t.Fatalf("%s: writing %s: %v", component, s.kubeconfigFile, err)
	}
	if o.GarbageCollector {
		s.startGarbageCollector()
	}
	t.Logf("%s started in %s at %s", component, time.Since(start).Round(time.Millisecond), cp.url())
	return s
}

// startGarbageCollector runs kube-controller-manager's garbagecollector controller on the spoke, as the
// admin, and waits for its /healthz; it stops in t.Cleanup.
func (s *Spoke) startGarbageCollector() {
	s.t.Helper()
	const component = "spoke"
	binDir, err := BinariesDir(BinaryKubeControllerManager)
	if err != nil {
		s.t.Fatalf("%s: %v", component, err)
	}
	port, err := freeLoopbackPort()
	if err != nil {
		s.t.Fatalf("%s: kube-controller-manager: %v", component, err)
	}
	args := []string{
		"--kubeconfig=" + s.kubeconfigFile,
		"--authentication-kubeconfig=" + s.kubeconfigFile,
		"--authorization-kubeconfig=" + s.kubeconfigFile,
		"--controllers=garbagecollector",
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(s.cp.dir, "kube-controller-manager"),
	}
	runHealthyProcess(s.t, component, s.cp.logDir, BinaryKubeControllerManager, filepath.Join(binDir, BinaryKubeControllerManager), args, port, DefaultStartTimeout)
}

// URL returns the apiserver's https://127.0.0.1:<port> URL (the pod network's host address with
// SpokeOptions.Network).
func (s *Spoke) URL() string { return s.cp.url() }

// UserKubeconfig returns a self-contained kubeconfig (server URL(), inline serving CA, inline client certificate
// and key) for user in groups, with a certificate valid one year signed by the spoke's client CA: a ServiceAccount's
// identity is user "system:serviceaccount:<namespace>:<name>" in groups "system:serviceaccounts" and
// "system:serviceaccounts:<namespace>", which RBAC bindings to that ServiceAccount match. Each call issues a new
// key, so client-go gives each kubeconfig's clients their own connections (its transport cache is keyed by the
// TLS settings), as separate processes have.
func (s *Spoke) UserKubeconfig(user string, groups ...string) []byte {
	s.t.Helper()
	cfg, err := s.cp.userConfig(s.URL(), user, groups)
	if err != nil {
		s.t.Fatalf("spoke: %v", err)
	}
	data, err := kubeconfig(cfg, user)
	if err != nil {
		s.t.Fatalf("spoke: %v", err)
	}
	return data
}

// CAData returns the PEM CA bundle that verifies the apiserver's serving certificate.
func (s *Spoke) CAData() []byte { return s.cp.servingCA() }

// Kubeconfig returns a self-contained admin kubeconfig (inline CA, client certificate and key).
func (s *Spoke) Kubeconfig() []byte { return s.kubeconfig }

// KubeconfigFile returns the path of a file holding Kubeconfig (removed when the test ends).
func (s *Spoke) KubeconfigFile() string { return s.kubeconfigFile }

// LogDir returns the directory holding the logs of the spoke's processes.
func (s *Spoke) LogDir() string { return s.cp.logDir }

// ServiceAccountKubeconfig returns a self-contained kubeconfig (server URL(), inline CA data, bearer token) for
// ServiceAccount namespace/name, whose token comes from the spoke's TokenRequest API (kube-apiserver signs it
// with the service-account key envtest configures) and expires after expiration (the apiserver raises values
// below 10 minutes to 10 minutes). The ServiceAccount must exist; errors come from the TokenRequest call.
func (s *Spoke) ServiceAccountKubeconfig(ctx context.Context, namespace, name string, expiration time.Duration) ([]byte, error) {
	seconds := int64(expiration / time.Second)
	tr, err := s.Kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("spoke: requesting a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	cfg := &rest.Config{Host: s.URL(), BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: s.CAData()}}
	data, err := kubeconfig(cfg, "sa-"+namespace+"-"+name)
	if err != nil {
		return nil, fmt.Errorf("spoke: kubeconfig for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return data, nil
}
