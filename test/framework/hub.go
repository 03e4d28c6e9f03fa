package framework

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
)

// Signer chooses who signs approved kubernetes.io/kube-apiserver-client CSRs on a hub.
type Signer string

const (
	// SignerKCM runs kube-controller-manager with --controllers=csrsigning,csrcleaner signing with the hub's
	// client CA: the real thing, about 2-5 s more start time.
	SignerKCM Signer = "kube-controller-manager"
	// SignerInProcess signs in the test process with the hub's client CA, following kube-controller-manager's
	// policy (backdate, 10-minute floor and --cluster-signing-duration cap on spec.expirationSeconds).
	SignerInProcess Signer = "in-process"
	// SignerNone signs nothing: approved CSRs stay without a certificate.
	SignerNone Signer = "none"
)

// Identities and objects a hub is set up with, as OCM's cluster-manager creates them.
const (
	// BootstrapGroup is the group of the bootstrap user; cluster-manager binds the bootstrap ClusterRole to it.
	BootstrapGroup = "system:bootstrappers:managedcluster"
	// BootstrapUserPrefix prefixes the hub name to form the bootstrap user, as bootstrap-token users are named
	// system:bootstrap:<token-id>.
	BootstrapUserPrefix = "system:bootstrap:"
	// BootstrapClusterRole is cluster-manager's ClusterRole for bootstrapping agents
	// (open-cluster-management.io/ocm deploy/cluster-manager/chart, bootstrap_cluster_role.yaml).
	BootstrapClusterRole = "open-cluster-management:bootstrap"
	// BootstrapClusterRoleBinding binds BootstrapClusterRole to BootstrapGroup.
	BootstrapClusterRoleBinding = "open-cluster-management:bootstrap:managedcluster"
	// HubControllerNamespace is the namespace given to the hub registration controller (--namespace), where it
	// records its events.
	HubControllerNamespace = "open-cluster-management-hub"
	// ApprovedReason is the reason of the Approved condition ApproveCSR adds.
	ApprovedReason = "ApprovedByTestFramework"

	// defaultCertificateDuration is kube-controller-manager's default --cluster-signing-duration.
	defaultCertificateDuration = 365 * 24 * time.Hour
	// adminUser is the user of the admin rest.Config (group system:masters).
	adminUser = "admin"
)

// HubOptions configures StartHub. The zero value is a hub named "hub" signing with kube-controller-manager,
// without the hub controller and without a proxy.
type HubOptions struct {
	// Name is a DNS-1123 label naming the hub in messages, log directories and its bootstrap user
	// (BootstrapUserPrefix + Name). Default "hub". Give each hub of a test its own name.
	Name string
	// Signer signs approved CSRs. Default SignerKCM.
	Signer Signer
	// CertificateDuration caps the lifetime of signed certificates (kube-controller-manager's
	// --cluster-signing-duration) and is the lifetime of CSRs without spec.expirationSeconds. Both signers
	// backdate NotBefore by 5 minutes and give at least 10 minutes to a CSR asking for less, unless this cap is
	// lower: set e.g. 90*time.Second for short-lived certificates. Default 8760h.
	CertificateDuration time.Duration
	// HubController runs OCM's hub registration controller (`registration controller`, v1.2.0) with
	// ManagedClusterAutoApproval on and the bootstrap user as auto-approved CSR user: it approves the bootstrap
	// user's CSRs (and renewals whose requester is the certificate's CN and may renew), accepts every new
	// ManagedCluster once (annotation open-cluster-management.io/automatically-accepted-on; a later
	// AcceptCluster(false) sticks), creates the cluster namespace, RBAC and lease, and sets Available=Unknown on
	// clusters whose lease is older than 5x leaseDurationSeconds. Its log is <LogDir>/registration-controller.log.
	HubController bool
	// AddonManager runs OCM's hub add-on manager (`addon manager`, v1.2.0) and serves the add-on CRDs it needs
	// (ClusterManagementAddOn, AddOnTemplate, AddOnDeploymentConfig): it fills ManagedClusterAddOn status
	// (registrations, namespace) for template add-ons and approves their CSRs. Its log is
	// <LogDir>/addon-manager.log.
	AddonManager bool
	// ClusterManager makes the hub complete: besides HubController and AddonManager (both implied), what OCM
	// v1.2.0's cluster-manager runs — its CRDs (add-on CRDs served as v1alpha1 and v1beta1 with the conversion
	// webhook, ManifestWorkReplicaSet, AddOnPlacementScore), the registration, work and add-on webhooks (OCM's
	// handlers, in hack/tools/ocm/ocm-webhooks on a loopback port, registered by URL), the placement controller
	// and the work manager with ManifestWorkReplicaSet on. Logs: <LogDir>/{ocm-webhooks,placement-controller,
	// work-manager}.log. It also serves the CRDs of the kinds the replicator mirrors that cluster-manager does not
	// install (governance's Policy, PlacementBinding and PolicySet, ManagedServiceAccount; no controller of
	// theirs runs), read from Go's module cache (hack/tools/crds).
	ClusterManager bool
	// Proxy puts a TCP proxy in front of the apiserver; URL, the bootstrap kubeconfig and UserConfig then go
	// through it, so the test can cut the hub off (Hub.Proxy). Admin clients, kube-controller-manager and the hub
	// controller always talk to the apiserver directly.
	Proxy bool
	// StartTimeout bounds the start of each process. Default DefaultStartTimeout.
	StartTimeout time.Duration
	// Network, when set, makes the apiserver (and the proxy) listen on the pod network's host address instead of
	// 127.0.0.1, so that pods (a klusterlet on a node of the test bed) reach the hub; the apiserver's serving
	// certificate is valid for that address.
	Network *PodNetwork
	// AuditPolicy, when not empty, is an audit.k8s.io/v1 Policy (YAML or JSON) for the hub's kube-apiserver,
	// which then logs the audited requests as JSON lines to Hub.AuditLogPath() (blocking log backend, no
	// rotation). Used by test/benchmark to count an agent's requests per hub. Default: no audit log.
	AuditPolicy []byte
}

// Hub is a running OCM hub: kube-apiserver + etcd, OCM CRDs, bootstrap RBAC, a CSR signer and optionally OCM's hub
// registration controller and a proxy. Its methods that take no context call t.Fatal on failure and must be
// called from the test goroutine.
type Hub struct {
	// Name is HubOptions.Name.
	Name string
	// AdminConfig authenticates as user "admin" in group system:masters, directly to the apiserver.
	AdminConfig *rest.Config
	// Kube is a clientset built from AdminConfig.
	Kube kubernetes.Interface
	// Cluster is an OCM cluster clientset built from AdminConfig.
	Cluster clusterclientset.Interface
	// Proxy is the TCP proxy in front of the apiserver when HubOptions.Proxy is set, else nil.
	Proxy *Proxy

	t                   testing.TB
	opts                HubOptions
	cp                  *controlPlane
	webhooks            *ocmWebhooks
	bootstrapKubeconfig []byte
	adminKubeconfigFile string
	auditLogPath        string
	// frozen are the PIDs FreezeAPIServer and FreezeEtcd stopped and Thaw has not continued.
	frozen []int
	// controllers are the controller processes StartHub started (kube-controller-manager, OCM's hub
	// controllers), and stopSigner stops the in-process signer: Rebuild stops and starts them again.
	controllers []*process
	stopSigner  func()
}

// StartHub starts a hub and stops it in t.Cleanup. It fails the test, naming the component, when anything cannot
// start (binaries missing, port clash, process exit, timeout). It logs how long the start took.
func StartHub(t testing.TB, opts HubOptions) *Hub {
	t.Helper()
	start := time.Now()
	opts = defaultHubOptions(opts)
	component := "hub-" + opts.Name
	if errs := validation.IsDNS1123Label(opts.Name); len(errs) > 0 {
		t.Fatalf("%s: HubOptions.Name %q: %s", component, opts.Name, strings.Join(errs, "; "))
	}
	switch opts.Signer {
	case SignerKCM, SignerInProcess, SignerNone:
	default:
		t.Fatalf("%s: HubOptions.Signer %q: want %q, %q or %q", component, opts.Signer, SignerKCM, SignerInProcess, SignerNone)
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	crds, err := loadCRDs(root, crdFiles(opts))
	if err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	var webhooks *ocmWebhooks
	if opts.ClusterManager {
		if webhooks, err = newOCMWebhooks(component, t.TempDir()); err != nil {
			t.Fatalf("%s: %v", component, err)
		}
		crds = webhooks.withConversionWebhooks(crds)
		others, err := loadModuleCRDs(root, mirroredKindCRDs())
		if err != nil {
			t.Fatalf("%s: %v", component, err)
		}
		crds = append(crds, others...)
	}

	auditArgs, auditLogPath := auditFlags(t, component, opts.AuditPolicy)
	cp := startControlPlane(t, component, controlPlaneOptions{authzMode: "Node,RBAC", crds: crds,
		startTimeout: opts.StartTimeout, flags: auditArgs, network: opts.Network})
	apiserverUp := time.Since(start)
	h := &Hub{Name: opts.Name, AdminConfig: cp.adminConfig, t: t, opts: opts, cp: cp, auditLogPath: auditLogPath, webhooks: webhooks}
	if h.Kube, err = kubernetes.NewForConfig(cp.adminConfig); err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	if h.Cluster, err = clusterclientset.NewForConfig(cp.adminConfig); err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	if opts.Proxy {
		h.Proxy = startProxy(t, listenHost(opts.Network), cp.hostPort())
		if opts.Network != nil {
			if err := opts.Network.AllowHostPort(h.Proxy.Port()); err != nil {
				t.Fatalf("%s: opening the proxy's port to pods: %v", component, err)
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), opts.StartTimeout)
	defer cancel()
	if err := h.createBootstrapRBAC(ctx); err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	bootstrapConfig := h.BootstrapConfig()
	if h.bootstrapKubeconfig, err = kubeconfig(bootstrapConfig, "bootstrap-"+opts.Name); err != nil {
		t.Fatalf("%s: bootstrap kubeconfig: %v", component, err)
	}
	h.adminKubeconfigFile = h.writeControllersKubeconfig()

	timings := []string{fmt.Sprintf("etcd+kube-apiserver+CRDs %s", apiserverUp.Round(time.Millisecond))}
	if opts.ClusterManager {
		began := time.Now()
		h.startOCMWebhooks()
		timings = append(timings, fmt.Sprintf("webhooks %s", time.Since(began).Round(time.Millisecond)))
	}
	timings = append(timings, h.startControllers()...)
	t.Logf("%s started in %s (%s) at %s, proxy %v, signer %s", component, time.Since(start).Round(time.Millisecond),
		strings.Join(timings, ", "), cp.url(), h.Proxy != nil, opts.Signer)
	return h
}

// startControllers starts the hub's controllers as HubOptions asks — the signer, OCM's hub controller, add-on
// manager, placement controller and work manager — and returns how long each took to start.
func (h *Hub) startControllers() []string {
	h.t.Helper()
	var timings []string
	switch h.opts.Signer {
	case SignerKCM:
		began := time.Now()
		h.startKubeControllerManager()
		timings = append(timings, fmt.Sprintf("kube-controller-manager %s", time.Since(began).Round(time.Millisecond)))
	case SignerInProcess:
		h.startInProcessSigner()
	}
	if h.opts.HubController {
		began := time.Now()
		h.startHubController()
		timings = append(timings, fmt.Sprintf("hub controller %s", time.Since(began).Round(time.Millisecond)))
	}
	if h.opts.AddonManager {
		began := time.Now()
		h.startAddonManager()
		timings = append(timings, fmt.Sprintf("add-on manager %s", time.Since(began).Round(time.Millisecond)))
	}
	if h.opts.ClusterManager {
		began := time.Now()
		h.startPlacementController()
		h.startWorkManager()
		timings = append(timings, fmt.Sprintf("placement controller and work manager %s", time.Since(began).Round(time.Millisecond)))
	}
	return timings
}

// Rebuild rebuilds the hub empty under its name, as an operator rebuilds a lost hub: its controllers stopped,
// etcd's data directory replaced by installed (a directory BackupEtcd returned before anything joined the hub:
// what the hub's installer made — CRDs, bootstrap RBAC), etcd and kube-apiserver started again (RestoreEtcd), and
// the controllers started anew, with caches that never saw the old hub (a controller that kept watching across
// the rebuild could resume its watch at a revision the new etcd reaches later and miss what happened before it,
// which is why Kubernetes asks for its components to be restarted after an etcd restore). OCM's webhooks
// (HubOptions.ClusterManager) keep running: they answer admission requests from what each request carries and
// keep no cache of the hub. The certificates, the bootstrap kubeconfig and the URL stay. It fails the test when a
// controller cannot be stopped or started.
func (h *Hub) Rebuild(installed string) {
	h.t.Helper()
	start := time.Now()
	for _, p := range h.controllers {
		if err := p.stop(stopTimeout); err != nil {
			h.t.Fatalf("hub %s: %v", h.Name, err)
		}
	}
	h.controllers = nil
	if h.stopSigner != nil {
		h.stopSigner()
		h.stopSigner = nil
	}
	h.RestoreEtcd(installed)
	if h.opts.HubController {
		// The hub controller's start is judged by the ManagedClusterSet "global" it makes once its informers
		// synced; installed may hold the one made before the backup.
		ctx, cancel := context.WithTimeout(context.Background(), h.opts.StartTimeout)
		err := h.Cluster.ClusterV1beta2().ManagedClusterSets().Delete(ctx, "global", metav1.DeleteOptions{})
		cancel()
		if err != nil && !apierrors.IsNotFound(err) {
			h.t.Fatalf("hub %s: deleting ManagedClusterSet global before the hub controller starts again: %v", h.Name, err)
		}
	}
	h.startControllers()
	h.t.Logf("hub %s: rebuilt empty from %s in %s", h.Name, installed, time.Since(start).Round(time.Millisecond))
}

func defaultHubOptions(opts HubOptions) HubOptions {
	if opts.Name == "" {
		opts.Name = "hub"
	}
	if opts.Signer == "" {
		opts.Signer = SignerKCM
	}
	if opts.CertificateDuration <= 0 {
		opts.CertificateDuration = defaultCertificateDuration
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.ClusterManager {
		opts.HubController, opts.AddonManager = true, true
	}
	return opts
}

// URL returns the URL agents use: the proxy's when HubOptions.Proxy is set, else the apiserver's.
func (h *Hub) URL() string {
	if h.Proxy != nil {
		return h.Proxy.URL()
	}
	return h.cp.url()
}

// DirectURL returns the apiserver's own https://127.0.0.1:<port> URL, which does not go through the proxy.
func (h *Hub) DirectURL() string { return h.cp.url() }

// CAData returns the PEM CA bundle that verifies the apiserver's serving certificate (also through the proxy).
func (h *Hub) CAData() []byte { return h.cp.servingCA() }

// ClientCAData returns the PEM certificate of the hub's client CA, which the apiserver trusts for client
// certificates and which signs approved CSRs.
func (h *Hub) ClientCAData() []byte { return h.cp.ca.pem() }

// LogDir returns the directory holding the logs of the hub's processes.
func (h *Hub) LogDir() string { return h.cp.logDir }

// BootstrapUser returns the bootstrap user's name (CN of its certificate): BootstrapUserPrefix + Name. Its only
// group (O) is BootstrapGroup.
func (h *Hub) BootstrapUser() string { return BootstrapUserPrefix + h.Name }

// BootstrapKubeconfig returns a self-contained kubeconfig for the bootstrap user: server URL(), inline serving CA
// data, inline client certificate and key (valid one year). The same bytes on every call.
func (h *Hub) BootstrapKubeconfig() []byte { return h.bootstrapKubeconfig }

// BootstrapConfig returns a new rest.Config for the bootstrap user, to URL(), with a freshly issued certificate.
func (h *Hub) BootstrapConfig() *rest.Config {
	h.t.Helper()
	return h.UserConfig(h.BootstrapUser(), BootstrapGroup)
}

// UserConfig returns a rest.Config to URL() that authenticates as user in groups with a certificate (valid one
// year) signed by the hub's client CA, e.g. an agent identity
// ("system:open-cluster-management:<cluster>:<agent>", groups "system:open-cluster-management:<cluster>" and
// "system:open-cluster-management:managed-clusters").
func (h *Hub) UserConfig(user string, groups ...string) *rest.Config {
	h.t.Helper()
	cfg, err := h.cp.userConfig(h.URL(), user, groups)
	if err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	return cfg
}

// IssueClientCert issues, with the hub's client CA, a client certificate for user in groups valid from notBefore
// to notAfter (for example an expired one), for a new key. It returns both as PEM.
func (h *Hub) IssueClientCert(user string, groups []string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte) {
	h.t.Helper()
	certPEM, keyPEM, err := h.cp.ca.newClientCertValidity(user, groups, notBefore, notAfter)
	if err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	return certPEM, keyPEM
}

// UserKubeconfig returns a self-contained kubeconfig (server URL(), inline CA data, inline client certificate
// and key) for user in groups, with a certificate valid from notBefore to notAfter signed by the hub's client
// CA. A window in the past gives an expired identity, e.g. an expired bootstrap kubeconfig:
// UserKubeconfig(hub.BootstrapUser(), now.Add(-2*time.Hour), now.Add(-time.Hour), BootstrapGroup).
func (h *Hub) UserKubeconfig(user string, notBefore, notAfter time.Time, groups ...string) []byte {
	h.t.Helper()
	certPEM, keyPEM, err := h.cp.ca.newClientCertValidity(user, groups, notBefore, notAfter)
	if err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	cfg := &rest.Config{Host: h.URL(), TLSClientConfig: rest.TLSClientConfig{CAData: h.CAData(), CertData: certPEM, KeyData: keyPEM}}
	data, err := kubeconfig(cfg, user)
	if err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	return data
}

// RotateClientCA replaces the hub's client CA with a new one, as a hub restored with another CA would have:
// kube-apiserver stops trusting every certificate the old CA signed (agents' certificates and the old bootstrap
// kubeconfig answer 401) while the admin and controllers identities, signed by a separate admin CA, keep working;
// approved CSRs are signed with the new CA (the in-process signer at once, kube-controller-manager once it has
// reloaded its signing files, within seconds); BootstrapKubeconfig, BootstrapConfig, UserConfig, UserKubeconfig,
// IssueClientCert and ClientCAData use the new CA. It returns once kube-apiserver accepts the new bootstrap
// kubeconfig and rejects the old one, and fails the test if that takes longer than a minute.
func (h *Hub) RotateClientCA() {
	h.t.Helper()
	old := h.BootstrapConfig()
	if err := h.cp.ca.rotate(h.cp.component + "-client-ca-" + strconv.FormatInt(time.Now().Unix(), 10)); err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	if err := h.cp.authn.writeBundle(); err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	bootstrapConfig := h.BootstrapConfig()
	data, err := kubeconfig(bootstrapConfig, "bootstrap-"+h.Name)
	if err != nil {
		h.t.Fatalf("hub %s: bootstrap kubeconfig: %v", h.Name, err)
	}
	h.bootstrapKubeconfig = data
	whoami := func(cfg *rest.Config) error {
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		_, err = client.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return err
	}
	Eventually(h.t, time.Minute, 200*time.Millisecond, func() (bool, error) {
		if err := whoami(bootstrapConfig); err != nil {
			return false, fmt.Errorf("new CA: %w", err)
		}
		if err := whoami(old); !apierrors.IsUnauthorized(err) {
			return false, fmt.Errorf("old CA: got %v, want 401", err)
		}
		return true, nil
	}, "hub %s: kube-apiserver trusts the new client CA and no longer the old one", h.Name)
}

// StopAPIServer stops the hub's kube-apiserver; etcd, the port, certificates and data stay, and
// kube-controller-manager and the hub controller keep running (and retrying).
func (h *Hub) StopAPIServer() {
	h.t.Helper()
	start := time.Now()
	if err := h.cp.stopAPIServer(); err != nil {
		h.t.Fatal(err)
	}
	h.t.Logf("hub %s: kube-apiserver stopped in %s", h.Name, time.Since(start).Round(time.Millisecond))
}

// FreezeAPIServer stops the hub's kube-apiserver process with SIGSTOP: its listening socket stays open, so the
// kernel still accepts connections, but nothing answers on them or on those already open, like a hung process.
// Thaw continues it; so does t.Cleanup, before the hub stops.
func (h *Hub) FreezeAPIServer() { h.freeze(BinaryKubeAPIServer, h.cp.apiServerPID) }

// FreezeEtcd stops the hub's etcd with SIGSTOP, like a stalled disk: the apiserver keeps answering what needs no
// storage (health, discovery) and its storage requests time out. Thaw continues it; so does t.Cleanup.
func (h *Hub) FreezeEtcd() { h.freeze(BinaryEtcd, h.cp.etcdPID) }

// freeze sends SIGSTOP to the process pid finds and remembers it for Thaw.
func (h *Hub) freeze(what string, pid func() (int, error)) {
	h.t.Helper()
	p, err := pid()
	if err != nil {
		h.t.Fatal(err)
	}
	if err := syscall.Kill(p, syscall.SIGSTOP); err != nil {
		h.t.Fatalf("hub %s: SIGSTOP to %s (pid %d): %v", h.Name, what, p, err)
	}
	if len(h.frozen) == 0 {
		h.t.Cleanup(h.Thaw)
	}
	h.frozen = append(h.frozen, p)
	h.t.Logf("hub %s: %s (pid %d) frozen with SIGSTOP", h.Name, what, p)
}

// Thaw continues (SIGCONT) every process of the hub that FreezeAPIServer or FreezeEtcd stopped.
func (h *Hub) Thaw() {
	h.t.Helper()
	for _, p := range h.frozen {
		// ESRCH: the frozen process was killed meanwhile (KillAPIServer, RestartEtcd).
		if err := syscall.Kill(p, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			h.t.Errorf("hub %s: SIGCONT to pid %d: %v", h.Name, p, err)
		}
	}
	h.frozen = nil
}

// RestartEtcd kills the hub's etcd with SIGKILL and starts it again at once with the same command line (data
// directory, ports), as a crashed etcd restarted by its supervisor; the kube-apiserver keeps running and
// reconnects. The new etcd writes to the same log and stops with the hub, after its apiserver. It returns when
// etcd answers /health again.
func (h *Hub) RestartEtcd() { h.t.Helper(); h.restartEtcd(nil) }

// BackupEtcd copies the hub's etcd data directory while etcd is stopped (a cold backup: RestartEtcd with the copy
// made in between) and returns the directory holding the copy, removed when the test ends. RestoreEtcd puts it back.
func (h *Hub) BackupEtcd() string {
	h.t.Helper()
	backup := filepath.Join(h.t.TempDir(), "etcd-backup")
	h.restartEtcd(func(dataDir string) {
		if out, err := exec.Command("cp", "-a", dataDir, backup).CombinedOutput(); err != nil {
			h.t.Fatalf("hub %s: copying etcd's data directory %s: %v: %s", h.Name, dataDir, err, out)
		}
	})
	h.t.Logf("hub %s: etcd data directory backed up to %s", h.Name, backup)
	return backup
}

// RestoreEtcd restores the hub from backup (a directory BackupEtcd returned) as an operator restores a hub from a
// backup of its etcd: kube-apiserver stopped, etcd stopped, its data directory replaced by the backup, etcd and
// then kube-apiserver started again (the apiserver's watch cache would otherwise hold newer states than etcd).
// Everything written since the backup is gone from the hub; objects are back at their state of then, with the
// same UIDs.
func (h *Hub) RestoreEtcd(backup string) {
	h.t.Helper()
	h.StopAPIServer()
	h.restartEtcd(func(dataDir string) {
		if err := os.RemoveAll(dataDir); err != nil {
			h.t.Fatalf("hub %s: removing etcd's data directory: %v", h.Name, err)
		}
		if out, err := exec.Command("cp", "-a", backup, dataDir).CombinedOutput(); err != nil {
			h.t.Fatalf("hub %s: restoring etcd's data directory from %s: %v: %s", h.Name, backup, err, out)
		}
	})
	h.StartAPIServer()
	h.t.Logf("hub %s: restored from the etcd backup %s", h.Name, backup)
}

// restartEtcd is RestartEtcd, calling between (when set) with etcd's data directory while etcd is down.
func (h *Hub) restartEtcd(between func(dataDir string)) {
	h.t.Helper()
	pid, err := h.cp.etcdPID()
	if err != nil {
		h.t.Fatal(err)
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		h.t.Fatalf("hub %s: reading etcd's command line: %v", h.Name, err)
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		h.t.Fatalf("hub %s: SIGKILL to etcd (pid %d): %v", h.Name, pid, err)
	}
	// The killed process is envtest's child: envtest reaps it. Its ports are free once it is gone.
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, err := h.cp.etcdPID()
		return err != nil, nil
	}); err != nil {
		h.t.Fatalf("hub %s: etcd (pid %d) still runs 10 s after SIGKILL", h.Name, pid)
	}
	if between != nil {
		dataDir := ""
		for i, a := range args {
			if v, ok := strings.CutPrefix(a, "--data-dir="); ok {
				dataDir = v
			} else if a == "--data-dir" && i+1 < len(args) {
				dataDir = args[i+1]
			}
		}
		if dataDir == "" {
			h.t.Fatalf("hub %s: etcd's command line names no --data-dir: %q", h.Name, args)
		}
		between(dataDir)
	}
	log := openLog(h.t, h.cp.component, filepath.Join(h.cp.logDir, BinaryEtcd+".log"))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("hub %s: starting etcd again: %v", h.Name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	h.cp.restartedEtcd = append(h.cp.restartedEtcd, func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(stopTimeout):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	health := h.cp.env.ControlPlane.Etcd.URL.String() + "/health"
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, DefaultStartTimeout, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, health, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	}); err != nil {
		h.t.Fatalf("hub %s: etcd not healthy %s after its restart (log %s)", h.Name, DefaultStartTimeout, filepath.Join(h.cp.logDir, BinaryEtcd+".log"))
	}
	h.t.Logf("hub %s: etcd killed (pid %d) and started again (pid %d)", h.Name, pid, cmd.Process.Pid)
}

// KillAPIServer kills the hub's kube-apiserver process with SIGKILL: no graceful shutdown, its connections are
// reset by the kernel and new ones refused. The apiserver cannot be started again by StartAPIServer afterwards.
func (h *Hub) KillAPIServer() {
	h.t.Helper()
	pid, err := h.cp.apiServerPID()
	if err != nil {
		h.t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		h.t.Fatalf("hub %s: SIGKILL to kube-apiserver (pid %d): %v", h.Name, pid, err)
	}
	h.t.Logf("hub %s: kube-apiserver (pid %d) killed with SIGKILL", h.Name, pid)
}

// StartAPIServer starts the hub's kube-apiserver again after StopAPIServer, on the same port with the same
// serving certificate and client CA, so existing clients and kubeconfigs reconnect, and waits until /readyz
// answers ok.
func (h *Hub) StartAPIServer() {
	h.t.Helper()
	start := time.Now()
	if err := h.cp.startAPIServer(); err != nil {
		h.t.Fatal(err)
	}
	h.t.Logf("hub %s: kube-apiserver restarted in %s", h.Name, time.Since(start).Round(time.Millisecond))
}

// ApproveCSR adds an Approved=True condition (reason ApprovedReason) to CSR name through the approval
// subresource, as `clusteradm accept` does; a CSR already approved is left alone. Errors name the CSR.
func (h *Hub) ApproveCSR(ctx context.Context, name string) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		csr, err := h.Kube.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if hasCondition(csr, certificatesv1.CertificateApproved) {
			return nil
		}
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type:           certificatesv1.CertificateApproved,
			Status:         corev1.ConditionTrue,
			Reason:         ApprovedReason,
			Message:        "approved by the klusterlet-failover test framework, like clusteradm accept",
			LastUpdateTime: metav1.Now(),
		})
		_, err = h.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("hub %s: approving CSR %s: %w", h.Name, name, err)
	}
	return nil
}

// createBootstrapRBAC creates cluster-manager's bootstrap ClusterRole and its binding to BootstrapGroup.
func (h *Hub) createBootstrapRBAC(ctx context.Context) error {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: BootstrapClusterRole},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
			{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"},
				Verbs: []string{"create", "get", "list", "watch"}},
			{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclusters"},
				Verbs: []string{"get", "create", "list", "watch"}},
			{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclustersets/join"},
				Verbs: []string{"create"}},
		},
	}
	if _, err := h.Kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating ClusterRole %s: %w", role.Name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: BootstrapClusterRoleBinding},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: BootstrapClusterRole},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: BootstrapGroup}},
	}
	if _, err := h.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating ClusterRoleBinding %s: %w", binding.Name, err)
	}
	return nil
}

// AdminKubeconfigFile returns the path of a kubeconfig file for the hub's admin (a system:masters user, straight
// to the apiserver), for commands a hub administrator runs.
func (h *Hub) AdminKubeconfigFile() string { return h.adminKubeconfigFile }

// writeControllersKubeconfig writes the kubeconfig kube-controller-manager and the hub controller use: a
// system:masters user, straight to the apiserver.
func (h *Hub) writeControllersKubeconfig() string {
	h.t.Helper()
	// Signed by the admin CA, so that RotateClientCA leaves the controllers authenticated.
	cfg, err := h.cp.userConfigFrom(h.cp.adminCA, h.cp.url(), "klusterlet-failover:test-controllers", []string{"system:masters"})
	if err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	data, err := kubeconfig(cfg, "controllers")
	if err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	file := filepath.Join(h.cp.dir, "controllers.kubeconfig")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		h.t.Fatalf("hub %s: writing %s: %v", h.Name, file, err)
	}
	return file
}

// startKubeControllerManager runs kube-controller-manager's csrsigning and csrcleaner controllers with the hub's
// client CA and waits for its /healthz.
func (h *Hub) startKubeControllerManager() {
	h.t.Helper()
	binDir, err := BinariesDir(BinaryKubeControllerManager)
	if err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	port, err := freeLoopbackPort()
	if err != nil {
		h.t.Fatalf("hub %s: kube-controller-manager: %v", h.Name, err)
	}
	certDir := filepath.Join(h.cp.dir, "kube-controller-manager")
	args := []string{
		"--kubeconfig=" + h.adminKubeconfigFile,
		"--authentication-kubeconfig=" + h.adminKubeconfigFile,
		"--authorization-kubeconfig=" + h.adminKubeconfigFile,
		"--controllers=csrsigning,csrcleaner",
		"--cluster-signing-cert-file=" + h.cp.ca.certFile,
		"--cluster-signing-key-file=" + h.cp.ca.keyFile,
		"--cluster-signing-duration=" + h.opts.CertificateDuration.String(),
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + certDir,
	}
	h.runHealthyProcess(BinaryKubeControllerManager, filepath.Join(binDir, BinaryKubeControllerManager), args, port)
}

// startInProcessSigner runs the in-process signer until the test ends; its log is <LogDir>/signer.log.
func (h *Hub) startInProcessSigner() {
	h.t.Helper()
	logFile := openLog(h.t, "hub "+h.Name, filepath.Join(h.cp.logDir, "signer.log"))
	s := &inProcessSigner{client: h.Kube, ca: h.cp.ca, maxDuration: h.opts.CertificateDuration, log: logFile}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.run(ctx)
	}()
	stop := func() {
		cancel()
		<-done
	}
	h.stopSigner = stop
	h.t.Cleanup(stop)
}

// startHubController runs OCM's hub registration controller and waits until its /healthz answers and it has
// created the ManagedClusterSet "global" (its DefaultClusterSet feature, on by default), which shows its
// informers have synced.
func (h *Hub) startHubController() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), h.opts.StartTimeout)
	defer cancel()
	binDir, err := BinariesDir(BinaryRegistration)
	if err != nil {
		h.t.Fatalf("hub %s: %v", h.Name, err)
	}
	p := h.startHubProcess("registration-controller", filepath.Join(binDir, BinaryRegistration),
		"controller",
		"--feature-gates=ManagedClusterAutoApproval=true",
		"--auto-approved-csr-users="+h.BootstrapUser(),
	)
	var lastErr error
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if done, exitErr := p.exited(); done {
			return false, fmt.Errorf("registration-controller exited: %v", exitErr)
		}
		_, lastErr = h.Cluster.ClusterV1beta2().ManagedClusterSets().Get(ctx, "global", metav1.GetOptions{})
		return lastErr == nil, nil
	}); err != nil {
		h.t.Fatalf("hub %s: registration-controller did not create ManagedClusterSet global (%v; last: %v); log %s:\n%s",
			h.Name, err, lastErr, p.logPath, tailFile(p.logPath, logTailLines))
	}
}

// patchHubAcceptsClient merge-patches spec.hubAcceptsClient of ManagedCluster cluster.
func (h *Hub) patchHubAcceptsClient(ctx context.Context, cluster string, accept bool) error {
	patch := fmt.Sprintf(`{"spec":{"hubAcceptsClient":%t}}`, accept)
	if _, err := h.Cluster.ClusterV1().ManagedClusters().Patch(ctx, cluster, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("hub %s: setting spec.hubAcceptsClient=%t on ManagedCluster %s: %w", h.Name, accept, cluster, err)
	}
	return nil
}

// AdminKubeconfig returns a kubeconfig for AdminConfig (user "admin", group system:masters, directly to the
// apiserver), e.g. for a component under test that takes a kubeconfig. It fails the test on error.
func (h *Hub) AdminKubeconfig() []byte {
	h.t.Helper()
	data, err := kubeconfig(h.AdminConfig, h.Name)
	if err != nil {
		h.t.Fatalf("hub %s: encoding the admin kubeconfig: %v", h.Name, err)
	}
	return data
}
