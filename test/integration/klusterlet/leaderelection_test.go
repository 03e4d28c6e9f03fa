// Package klusterlet_test is the suite of the klusterlet drop-in: the klusterlet-failover binary run with OCM's
// registration command line (`registration agent`, as the klusterlet operator renders it) on real hubs with
// OCM's hub controller, with leader election on as in OCM.
//
// Run: KUBEBUILDER_ASSETS=$(hack/build-test-binaries.sh | tail -n1) go test ./test/integration/klusterlet/ -count=1 -v
package klusterlet_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	clusterName = "cluster1"
	// lockName is the Lease `registration agent` elects its leader with: OCM's registration agent's own
	// (component registration-agent), so the two never run at once.
	lockName = "registration-agent-lock"

	// Short leader election durations, so that a killed leader's lease runs out within the test.
	leaseDuration = 12 * time.Second
	renewDeadline = 8 * time.Second
	retryPeriod   = 2 * time.Second

	joinTimeout = 90 * time.Second
)

// registrationAgent starts the binary as the klusterlet operator would (`/registration agent …`, Default mode)
// with bootstrap as its bootstrap kubeconfig, its own hub kubeconfig directory, and the short election durations.
func registrationAgent(t *testing.T, spoke *framework.Spoke, name string, bootstrap []byte, cluster ...string) *framework.AgentProcess {
	t.Helper()
	spokeCluster := clusterName
	if len(cluster) > 0 {
		spokeCluster = cluster[0]
	}
	return registrationAgentWith(t, spoke, name, bootstrap, spokeCluster)
}

// registrationAgentWith is registrationAgent for cluster spokeCluster with extra flags appended.
func registrationAgentWith(t *testing.T, spoke *framework.Spoke, name string, bootstrap []byte, spokeCluster string, extra ...string) *framework.AgentProcess {
	t.Helper()
	dir := t.TempDir()
	bootstrapFile := filepath.Join(dir, "bootstrap", "kubeconfig")
	if err := os.MkdirAll(filepath.Dir(bootstrapFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bootstrapFile, bootstrap, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{
		"/registration", "agent",
		"--spoke-cluster-name=" + spokeCluster,
		"--bootstrap-kubeconfig=" + bootstrapFile,
		"--hub-kubeconfig-dir=" + filepath.Join(dir, "hub-kubeconfig"),
		"--kubeconfig=" + spoke.KubeconfigFile(),
		"--namespace=" + util.AgentNamespace,
		"--listen=127.0.0.1:" + strconv.Itoa(framework.FreeLoopbackPort(t)),
		"--leader-election-lease-duration=" + leaseDuration.String(),
		"--leader-election-renew-deadline=" + renewDeadline.String(),
		"--leader-election-retry-period=" + retryPeriod.String(),
	}
	return framework.StartAgentProcess(t, name, framework.AgentBinary(t), append(args, extra...))
}

// startOCMAgent runs OCM's own registration agent v1.2.0 (`registration agent`, leader election on, its default
// feature gates) for cluster with hub's bootstrap kubeconfig and the spoke's admin kubeconfig.
func startOCMAgent(t *testing.T, hub *framework.Hub, spoke *framework.Spoke, cluster string) *framework.AgentProcess {
	t.Helper()
	binDir, err := framework.BinariesDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bootstrapFile := filepath.Join(dir, "bootstrap-kubeconfig")
	if err := os.WriteFile(bootstrapFile, hub.BootstrapKubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	return framework.StartAgentProcess(t, "ocm-registration-agent", filepath.Join(binDir, framework.BinaryRegistration), []string{
		"agent",
		"--spoke-cluster-name=" + cluster,
		"--bootstrap-kubeconfig=" + bootstrapFile,
		"--hub-kubeconfig-dir=" + filepath.Join(dir, "ocm-hub-kubeconfig"),
		"--kubeconfig=" + spoke.KubeconfigFile(),
		"--namespace=" + util.AgentNamespace,
		"--listen=127.0.0.1:" + strconv.Itoa(framework.FreeLoopbackPort(t)),
	})
}

// holder returns the holder identity of the leader election Lease, "" when it is absent or released.
func holder(t *testing.T, spoke *framework.Spoke) string {
	t.Helper()
	lease, err := spoke.Kube.CoordinationV1().Leases(util.AgentNamespace).Get(context.Background(), lockName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatalf("get Lease %s: %v", lockName, err)
	}
	return holderOf(lease)
}

func holderOf(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// watchHolders watches the leader election Lease from its current version until the test ends; the returned
// function gives the holder of every version delivered since, "" for a released lock.
func watchHolders(t *testing.T, spoke *framework.Spoke) func() []string {
	t.Helper()
	leases := spoke.Kube.CoordinationV1().Leases(util.AgentNamespace)
	lease, err := leases.Get(context.Background(), lockName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get Lease %s: %v", lockName, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := watchtools.NewRetryWatcherWithContext(ctx, lease.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = "metadata.name=" + lockName
			return leases.Watch(ctx, o)
		},
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var mu sync.Mutex
	var out []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if l, ok := ev.Object.(*coordinationv1.Lease); ok {
				mu.Lock()
				out = append(out, holderOf(l))
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		w.Stop()
		cancel()
		<-done
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(out)
	}
}

// csrCount is the number of CSRs for the cluster on hub.
func csrCount(t *testing.T, hub *framework.Hub, cluster ...string) int {
	t.Helper()
	name := clusterName
	if len(cluster) > 0 {
		name = cluster[0]
	}
	csrs, err := hub.Kube.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{
		LabelSelector: "open-cluster-management.io/cluster-name=" + name,
	})
	if err != nil {
		t.Fatalf("list CSRs on hub %s: %v", hub.Name, err)
	}
	return len(csrs.Items)
}

// TestLeaderElection: two agents for one cluster (`registration agent`, leader election on by default), with
// bootstrap kubeconfigs of different hubs. While the first leads, the hub kubeconfig Secret names its hub
// throughout and the standby sends nothing to the other hub; when the leader is killed, the standby takes over
// once the lease has run out and registers on its hub; a leader that stops gracefully releases the lock, so its
// standby takes over without waiting out the lease.
func TestLeaderElection(t *testing.T) {
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", HubController: true})
	hubB := framework.StartHub(t, framework.HubOptions{Name: "hub-b", HubController: true})
	spoke := framework.StartSpoke(t)
	util.EnsureAgentNamespace(t, spoke)

	listen := "127.0.0.1:" + strconv.Itoa(framework.FreeLoopbackPort(t))
	first := registrationAgentWith(t, spoke, "agent-hub-a", hubA.BootstrapKubeconfig(), clusterName, "--listen="+listen)
	util.WaitForClusterAvailable(t, hubA, clusterName, joinTimeout)
	checkServesWithGeneratedCert(t, listen)
	leaderA := holder(t, spoke)
	if leaderA == "" {
		t.Fatalf("the agent is Available on hub A without holding Lease %s/%s", util.AgentNamespace, lockName)
	}

	// The standby waits for the lock: for 3 lease durations the Secret keeps naming hub A and hub B sees
	// nothing from this cluster.
	second := registrationAgent(t, spoke, "agent-hub-b", hubB.BootstrapKubeconfig())
	watchUntil := time.Now().Add(3 * leaseDuration)
	for time.Now().Before(watchUntil) {
		if s := util.HubKubeconfigSecret(t, spoke); s == nil || util.KubeconfigServer(s.Data["kubeconfig"]) != hubA.URL() {
			t.Fatalf("hub kubeconfig Secret no longer names hub A (%s) while agent A leads", hubA.URL())
		}
		if n := csrCount(t, hubB); n != 0 {
			t.Fatalf("%d CSRs for %s on hub B while the agent for hub B is a standby", n, clusterName)
		}
		if h := holder(t, spoke); h != leaderA {
			t.Fatalf("lock holder changed from %q to %q while the leader runs", leaderA, h)
		}
		if done, err := second.Exited(); done {
			t.Fatalf("the standby exited (%v):\n%s", err, second.LogTail(30))
		}
		time.Sleep(500 * time.Millisecond)
	}
	if _, err := hubB.Cluster.ClusterV1().ManagedClusters().Get(context.Background(), clusterName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ManagedCluster %s on hub B while its agent is a standby: err=%v", clusterName, err)
	}

	// The leader dies without releasing the lock: the standby takes over after the lease runs out.
	killed := time.Now()
	first.Kill()
	framework.Eventually(t, 4*leaseDuration, 200*time.Millisecond, func() (bool, error) {
		h := holder(t, spoke)
		return h != "" && h != leaderA, nil
	}, "the standby holds Lease %s after the leader was killed", lockName)
	t.Logf("measured: standby took over %.1f s after the leader was killed (lease duration %s, retry period %s)",
		time.Since(killed).Seconds(), leaseDuration, retryPeriod)
	leaderB := holder(t, spoke)
	util.WaitForClusterAvailable(t, hubB, clusterName, joinTimeout)
	if s := util.HubKubeconfigSecret(t, spoke); s == nil || util.KubeconfigServer(s.Data["kubeconfig"]) != hubB.URL() {
		t.Fatalf("after the take-over the hub kubeconfig Secret does not name hub B (%s)", hubB.URL())
	}

	// A leader stopped gracefully (SIGTERM, as in a rollout) releases the lock: the standby does not wait out
	// the lease.
	third := registrationAgent(t, spoke, "agent-hub-a-again", hubA.BootstrapKubeconfig())
	time.Sleep(2 * retryPeriod) // the new standby has tried the lock at least once
	if h := holder(t, spoke); h != leaderB {
		t.Fatalf("lock holder changed from %q to %q while the leader runs", leaderB, h)
	}
	// Whether the lock was released is read from the Lease's versions, not from how fast the standby took
	// over (the leader's shutdown may take seconds on a loaded machine): a released lock has a version with no
	// holder between leader B's and the standby's; one left to expire goes from leader B to the standby.
	holders := watchHolders(t, spoke)
	stopped := time.Now()
	if err := second.Stop(); err != nil {
		t.Fatalf("the leader did not stop on SIGTERM: %v\n%s", err, second.LogTail(30))
	}
	framework.Eventually(t, 4*leaseDuration, 100*time.Millisecond, func() (bool, error) {
		h := holder(t, spoke)
		return h != "" && h != leaderB, nil
	}, "the standby holds Lease %s after the leader stopped", lockName)
	t.Logf("measured: standby took over %.1f s after the leader stopped gracefully", time.Since(stopped).Seconds())
	var seen []string
	framework.Eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, error) {
		seen = holders()
		return slices.ContainsFunc(seen, func(h string) bool { return h != "" && h != leaderB }), nil
	}, "the watch delivers the Lease version naming the new holder")
	for _, h := range seen {
		if h == "" {
			break
		}
		if h != leaderB {
			t.Errorf("Lease %s went from %q to %q without a released version (holders seen %q): the stopped leader did not release the lock",
				lockName, leaderB, h, seen)
			break
		}
	}
	if done, err := third.Exited(); done {
		t.Fatalf("the new leader exited (%v):\n%s", err, third.LogTail(30))
	}
}

// TestMigrationFromOCMAgent: a klusterlet that ran OCM's own registration agent (v1.2.0, leader election on)
// switches to ours: OCM's agent stops gracefully and releases the lock both use, ours takes it, keeps the
// cluster name, the agent name and the hub kubeconfig Secret OCM's agent wrote (no new CSR), and renews the
// cluster lease on the hub with those credentials.
func TestMigrationFromOCMAgent(t *testing.T) {
	const cluster = "cluster-migrated"
	hub := framework.StartHub(t, framework.HubOptions{Name: "hub-migrate", HubController: true})
	spoke := framework.StartSpoke(t)
	util.EnsureAgentNamespace(t, spoke)
	ocm := startOCMAgent(t, hub, spoke, cluster)
	util.WaitForClusterAvailable(t, hub, cluster, joinTimeout)
	ocmLeader := holder(t, spoke)
	if ocmLeader == "" {
		t.Fatalf("OCM's agent is Available without holding Lease %s", lockName)
	}
	before := util.HubKubeconfigSecret(t, spoke)
	if before == nil {
		t.Fatal("OCM's agent wrote no hub kubeconfig Secret")
	}
	csrsBefore := csrCount(t, hub, cluster)
	if err := ocm.Stop(); err != nil {
		t.Fatalf("OCM's agent did not stop on SIGTERM: %v", err)
	}
	renewed := func() time.Time {
		l, err := hub.Kube.CoordinationV1().Leases(cluster).Get(context.Background(), "managed-cluster-lease", metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			return time.Time{}
		}
		return l.Spec.RenewTime.Time
	}
	// The renewal baseline is OCM's agent's last renewal, read once it has stopped and before ours starts: ours
	// renews as soon as it leads, possibly before the wait below sees it lead.
	lastByOCM := renewed()

	// Ours, as the operator renders it, without --agent-id: the names come from the stored Secret.
	ours := registrationAgent(t, spoke, "ours-after-ocm", hub.BootstrapKubeconfig(), cluster)
	framework.Eventually(t, 4*leaseDuration, 200*time.Millisecond, func() (bool, error) {
		h := holder(t, spoke)
		return h != "" && h != ocmLeader, nil
	}, "our agent holds Lease %s after OCM's agent released it", lockName)
	framework.Eventually(t, 2*time.Minute, 500*time.Millisecond, func() (bool, error) {
		return renewed().After(lastByOCM), nil
	}, "our agent renews the cluster lease on the hub")
	after := util.HubKubeconfigSecret(t, spoke)
	for _, key := range []string{"tls.crt", "tls.key", "cluster-name", "agent-name"} {
		if string(after.Data[key]) != string(before.Data[key]) {
			t.Errorf("Secret key %q changed when our agent took over from OCM's (the stored credentials are valid)", key)
		}
	}
	if n := csrCount(t, hub, cluster); n != csrsBefore {
		t.Errorf("%d CSRs for the cluster after our agent took over, %d before: it bootstrapped again", n, csrsBefore)
	}
	if done, err := ours.Exited(); done {
		t.Fatalf("our agent exited (%v):\n%s", err, ours.LogTail(40))
	}
}

// checkServesWithGeneratedCert checks that the agent listening on addr answers /healthz over TLS with the
// ECDSA certificate it generates when the command line gives none (controllercmd's own would be RSA).
func checkServesWithGeneratedCert(t *testing.T, addr string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a self-signed certificate nothing can verify
	}}
	resp, err := client.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("GET https://%s/healthz: %v", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET https://%s/healthz: HTTP %d, want 200", addr, resp.StatusCode)
	}
	if resp.TLS == nil || len(resp.TLS.PeerCertificates) == 0 {
		t.Fatalf("GET https://%s/healthz: no serving certificate", addr)
	}
	if leaf := resp.TLS.PeerCertificates[0]; leaf.PublicKeyAlgorithm != x509.ECDSA || !slices.Contains(leaf.DNSNames, "localhost") {
		t.Errorf("serving certificate %q: key %s, DNS names %v; want the generated ECDSA certificate for localhost",
			leaf.Subject.CommonName, leaf.PublicKeyAlgorithm, leaf.DNSNames)
	}
}
