package agent_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/clock"

	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// Wire-contract values (design §4), spelled out here rather than imported from the product so that the suite
// checks the contract independently.
const (
	clusterNameLabel      = "open-cluster-management.io/cluster-name"
	clientSignerName      = "kubernetes.io/kube-apiserver-client"
	subjectPrefix         = "system:open-cluster-management:"
	managedClustersGroup  = "system:open-cluster-management:managed-clusters"
	defaultSecretName     = "hub-kubeconfig-secret"
	agentFieldManager     = "klusterlet-failover"
	hubLeaseName          = "managed-cluster-lease"
	secretKeyKubeconfig   = "kubeconfig"
	secretKeyTLSCert      = "tls.crt"
	secretKeyTLSKey       = "tls.key"
	secretKeyClusterName  = "cluster-name"
	secretKeyAgentName    = "agent-name"
	conditionClockSynced  = clusterv1.ManagedClusterConditionClockSynced
	eventHubControllers   = "HubControllersStarted"
	eventBootstrapExpired = "BootstrapKubeconfigExpired"
)

// secretKeys are the five keys of the hub kubeconfig Secret, sorted.
var secretKeys = []string{secretKeyAgentName, secretKeyClusterName, secretKeyKubeconfig, secretKeyTLSCert, secretKeyTLSKey}

// agentRun is one agent started by startAgent.
type agentRun struct {
	*util.Agent
	// Dir is the agent's --hub-kubeconfig-dir.
	Dir string
	// Secret is the agent's --hub-kubeconfig-secret.
	Secret string
	// Started is when RunWithClients was launched.
	Started time.Time
}

// agentSpec is what startAgent varies between agents.
type agentSpec struct {
	cluster, agent string // "" lets the agent resolve (stored) or generate the name
	secret         string // --hub-kubeconfig-secret; default defaultSecretName
	bootstrap      []byte
	urls           []string
	maxClaims      int // 0 keeps the default (20)
	clock          clock.Clock
	// dir is the agent's --hub-kubeconfig-dir; default a fresh directory.
	dir string
	// hostedKubeconfig, if set, runs the agent in hosted mode with this --spoke-kubeconfig; the spoke given to
	// startAgent is then the cluster hosting the agent.
	hostedKubeconfig string
}

// startAgent starts an agent on spoke with the suite's defaults: health-check period healthCheckPeriod, its own
// mirror directory, no FailoverConfig and no bootstrap Secret (the file is the primary's bootstrap).
func startAgent(t *testing.T, spoke *framework.Spoke, spec agentSpec) *agentRun {
	t.Helper()
	secret := spec.secret
	if secret == "" {
		secret = defaultSecretName
	}
	dir := spec.dir
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "hub-kubeconfig")
	}
	run := &agentRun{Dir: dir, Secret: secret}
	run.Agent = util.StartAgent(t, spoke, util.AgentConfig{
		Bootstrap:           spec.bootstrap,
		HubKubeconfigDir:    dir,
		Clock:               spec.clock,
		SpokeKubeconfigFile: spec.hostedKubeconfig,
		Mutate: func(o *klusterlet.FailoverAgentOptions) {
			o.ClusterName, o.AgentName = spec.cluster, spec.agent
			o.HubKubeconfigSecret = secret
			o.SpokeExternalServerURLs = spec.urls
			o.ClusterHealthCheckPeriod = healthCheckPeriod
			o.BootstrapKubeconfigSecret = ""
			o.FailoverConfigName = ""
			if spec.maxClaims > 0 {
				o.MaxCustomClusterClaims = spec.maxClaims
			}
		},
	})
	// StartAgent has prepared the namespace and CRD and just launched RunWithClients.
	run.Started = time.Now()
	return run
}

// requireRunning fails the test if the agent's RunWithClients returned.
func requireRunning(t *testing.T, a *agentRun) {
	t.Helper()
	if exited, err := a.Exited(); exited {
		t.Fatalf("agent exited (RunWithClients returned %v); it must keep running", err)
	}
}

// getMC returns ManagedCluster name from the hub, nil if it does not exist.
func getMC(t *testing.T, hub *framework.Hub, name string) *clusterv1.ManagedCluster {
	t.Helper()
	mc, err := hub.Cluster.ClusterV1().ManagedClusters().Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("hub %s: get ManagedCluster %s: %v", hub.Name, name, err)
	}
	return mc
}

// joinedAndAvailable reports whether mc has ManagedClusterJoined=True and ManagedClusterConditionAvailable=True.
func joinedAndAvailable(mc *clusterv1.ManagedCluster) bool {
	return mc != nil && meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined) &&
		meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
}

// waitAvailable waits until ManagedCluster name is Joined and Available on the hub and returns it.
func waitAvailable(t *testing.T, hub *framework.Hub, name string, timeout time.Duration) *clusterv1.ManagedCluster {
	t.Helper()
	var mc *clusterv1.ManagedCluster
	framework.Eventually(t, timeout, pollInterval, func() (bool, error) {
		mc = getMC(t, hub, name)
		return joinedAndAvailable(mc), nil
	}, "ManagedCluster %s Joined and Available on hub %s (last conditions: %s)", name, hub.Name, lazyConditions{&mc})
	return mc
}

// lazyConditions prints the conditions of *mc when formatted (after the wait).
type lazyConditions struct{ mc **clusterv1.ManagedCluster }

func (l lazyConditions) String() string {
	if *l.mc == nil {
		return "no ManagedCluster"
	}
	parts := []string{}
	for _, c := range (*l.mc).Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	return strings.Join(parts, " ")
}

// csrsOf returns the CSRs of cluster on the hub (by the wire-contract label), oldest first. The label is
// matched here rather than by a selector, so that any string, even one no label value can hold, may be asked.
func csrsOf(t *testing.T, hub *framework.Hub, cluster string) []certificatesv1.CertificateSigningRequest {
	t.Helper()
	list, err := hub.Kube.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("hub %s: list CSRs of %s: %v", hub.Name, cluster, err)
	}
	items := slices.DeleteFunc(list.Items, func(csr certificatesv1.CertificateSigningRequest) bool {
		return csr.Labels[clusterNameLabel] != cluster
	})
	sort.Slice(items, func(i, j int) bool {
		if !items[i].CreationTimestamp.Equal(&items[j].CreationTimestamp) {
			return items[i].CreationTimestamp.Before(&items[j].CreationTimestamp)
		}
		return items[i].Name < items[j].Name
	})
	return items
}

// requireNoHubObjects fails if the hub holds a CSR labelled for cluster or a ManagedCluster named cluster.
func requireNoHubObjects(t *testing.T, hub *framework.Hub, cluster string) {
	t.Helper()
	if csrs := csrsOf(t, hub, cluster); len(csrs) > 0 {
		t.Errorf("hub %s holds %d CSR(s) for cluster %q, want none", hub.Name, len(csrs), cluster)
	}
	if cluster != "" && getMC(t, hub, cluster) != nil {
		t.Errorf("hub %s holds ManagedCluster %q, want none", hub.Name, cluster)
	}
}

// checkCSR checks csr against the wire contract for cluster/agent, requested by user.
func checkCSR(t *testing.T, csr *certificatesv1.CertificateSigningRequest, cluster, agent, user string) {
	t.Helper()
	if csr.GenerateName != cluster+"-" || !strings.HasPrefix(csr.Name, cluster+"-") {
		t.Errorf("CSR %s: generateName %q, want %q", csr.Name, csr.GenerateName, cluster+"-")
	}
	if got := csr.Labels[clusterNameLabel]; got != cluster {
		t.Errorf("CSR %s: label %s=%q, want %q", csr.Name, clusterNameLabel, got, cluster)
	}
	if csr.Spec.SignerName != clientSignerName {
		t.Errorf("CSR %s: signer %q, want %q", csr.Name, csr.Spec.SignerName, clientSignerName)
	}
	usages := slices.Clone(csr.Spec.Usages)
	slices.Sort(usages)
	wantUsages := []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment}
	if diff := cmp.Diff(wantUsages, usages); diff != "" {
		t.Errorf("CSR %s: usages (-want +got):\n%s", csr.Name, diff)
	}
	if csr.Spec.Username != user {
		t.Errorf("CSR %s: requested by %q, want %q", csr.Name, csr.Spec.Username, user)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		t.Fatalf("CSR %s: spec.request is not a PEM CERTIFICATE REQUEST", csr.Name)
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatalf("CSR %s: parse request: %v", csr.Name, err)
	}
	if want := subjectPrefix + cluster + ":" + agent; req.Subject.CommonName != want {
		t.Errorf("CSR %s: CN %q, want %q", csr.Name, req.Subject.CommonName, want)
	}
	orgs := slices.Clone(req.Subject.Organization)
	slices.Sort(orgs)
	wantOrgs := []string{subjectPrefix + cluster, managedClustersGroup}
	slices.Sort(wantOrgs)
	if diff := cmp.Diff(wantOrgs, orgs); diff != "" {
		t.Errorf("CSR %s: O (-want +got):\n%s", csr.Name, diff)
	}
	pub, ok := req.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		t.Errorf("CSR %s: public key %T, want ECDSA P-256", csr.Name, req.PublicKey)
	}
}

// getSecret returns the agent-namespace Secret name from spoke, nil if it does not exist.
func getSecret(t *testing.T, spoke *framework.Spoke, name string) *corev1.Secret {
	t.Helper()
	s, err := spoke.Kube.CoreV1().Secrets(util.AgentNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("spoke: get secret %s: %v", name, err)
	}
	return s
}

// verifyHubKubeconfig checks hub kubeconfig Secret data the way another klusterlet component would use it:
// the five keys, tls.crt parses, is valid now and matches tls.key, CN/O name cluster/agent (agent "" accepts any),
// the name keys agree, and the kubeconfig is self-contained for hub (server, inline CA data, tls.crt/tls.key
// relative references). It returns the leaf certificate.
func verifyHubKubeconfig(data map[string][]byte, hub *framework.Hub, cluster, agent string, now time.Time) (*x509.Certificate, error) {
	var missing []string
	for _, k := range secretKeys {
		if len(data[k]) == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing keys %v", missing)
	}
	certs, err := certutil.ParseCertsPEM(data[secretKeyTLSCert])
	if err != nil {
		return nil, fmt.Errorf("tls.crt: %w", err)
	}
	leaf := certs[0]
	if _, err := tls.X509KeyPair(data[secretKeyTLSCert], data[secretKeyTLSKey]); err != nil {
		return leaf, fmt.Errorf("tls.key does not match tls.crt: %w", err)
	}
	if !now.Before(leaf.NotAfter) || now.Before(leaf.NotBefore) {
		return leaf, fmt.Errorf("tls.crt not valid at %s (%s to %s)", now, leaf.NotBefore, leaf.NotAfter)
	}
	gotCluster, gotAgent := string(data[secretKeyClusterName]), string(data[secretKeyAgentName])
	if gotCluster != cluster || (agent != "" && gotAgent != agent) {
		return leaf, fmt.Errorf("keys name %s/%s, want %s/%s", gotCluster, gotAgent, cluster, agent)
	}
	if want := subjectPrefix + gotCluster + ":" + gotAgent; leaf.Subject.CommonName != want {
		return leaf, fmt.Errorf("tls.crt CN %q, want %q", leaf.Subject.CommonName, want)
	}
	if !slices.Contains(leaf.Subject.Organization, subjectPrefix+cluster) || !slices.Contains(leaf.Subject.Organization, managedClustersGroup) {
		return leaf, fmt.Errorf("tls.crt O %q lacks the cluster or managed-clusters group", leaf.Subject.Organization)
	}
	cfg, err := clientcmd.Load(data[secretKeyKubeconfig])
	if err != nil {
		return leaf, fmt.Errorf("kubeconfig: %w", err)
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	if kctx == nil || cfg.Clusters[kctx.Cluster] == nil || cfg.AuthInfos[kctx.AuthInfo] == nil {
		return leaf, fmt.Errorf("kubeconfig: current context %q incomplete", cfg.CurrentContext)
	}
	c, u := cfg.Clusters[kctx.Cluster], cfg.AuthInfos[kctx.AuthInfo]
	if c.Server != hub.URL() {
		return leaf, fmt.Errorf("kubeconfig server %q, want %q", c.Server, hub.URL())
	}
	if c.CertificateAuthority != "" || !bytes.Equal(bytes.TrimSpace(c.CertificateAuthorityData), bytes.TrimSpace(hub.CAData())) {
		return leaf, fmt.Errorf("kubeconfig CA: file %q, %d bytes of inline data; want the hub's serving CA inline", c.CertificateAuthority, len(c.CertificateAuthorityData))
	}
	if u.ClientCertificate != secretKeyTLSCert || u.ClientKey != secretKeyTLSKey || len(u.ClientCertificateData) > 0 || len(u.ClientKeyData) > 0 {
		return leaf, fmt.Errorf("kubeconfig user: client-certificate %q, client-key %q; want tls.crt and tls.key relative to the directory", u.ClientCertificate, u.ClientKey)
	}
	return leaf, nil
}

// waitValidSecret waits until the agent's Secret holds valid credentials for cluster/agent and returns it.
func waitValidSecret(t *testing.T, spoke *framework.Spoke, hub *framework.Hub, name, cluster, agent string, timeout time.Duration) *corev1.Secret {
	t.Helper()
	var secret *corev1.Secret
	framework.Eventually(t, timeout, pollInterval, func() (bool, error) {
		secret = getSecret(t, spoke, name)
		if secret == nil {
			return false, errors.New("secret not found")
		}
		_, err := verifyHubKubeconfig(secret.Data, hub, cluster, agent, time.Now())
		return err == nil, err
	}, "secret %s valid for %s/%s", name, cluster, agent)
	return secret
}

// checkMirror checks that every key of data is mirrored as dir/<key> with mode 0600 and the same content.
func checkMirror(t *testing.T, dir string, data map[string][]byte) {
	t.Helper()
	framework.Eventually(t, eventTimeout, pollInterval, func() (bool, error) {
		for key, value := range data {
			path := filepath.Join(dir, key)
			info, err := os.Stat(path)
			if err != nil {
				return false, err
			}
			if info.Mode().Perm() != 0o600 {
				return false, fmt.Errorf("%s has mode %o, want 600", path, info.Mode().Perm())
			}
			got, err := os.ReadFile(path)
			if err != nil {
				return false, err
			}
			if !bytes.Equal(got, value) {
				return false, fmt.Errorf("%s differs from secret key %s", path, key)
			}
		}
		return true, nil
	}, "hub kubeconfig mirrored to %s", dir)
}

// setLeaseDuration sets spec.leaseDurationSeconds of ManagedCluster cluster, as a hub admin may.
func setLeaseDuration(t *testing.T, hub *framework.Hub, cluster string, seconds int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"leaseDurationSeconds":%d}}`, seconds)
	if _, err := hub.Cluster.ClusterV1().ManagedClusters().Patch(context.Background(), cluster, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("hub %s: set leaseDurationSeconds of %s: %v", hub.Name, cluster, err)
	}
}

// agentRenewTime returns the lease's spec.renewTime when its last write was this agent's (field manager
// agentFieldManager owning spec.renewTime), else the zero time.
func agentRenewTime(t *testing.T, hub *framework.Hub, cluster string) time.Time {
	t.Helper()
	lease, err := hub.Kube.CoordinationV1().Leases(cluster).Get(context.Background(), hubLeaseName, metav1.GetOptions{})
	if err != nil || lease.Spec.RenewTime == nil {
		return time.Time{}
	}
	for _, f := range lease.ManagedFields {
		if f.Manager == agentFieldManager && f.FieldsV1 != nil && strings.Contains(string(f.FieldsV1.Raw), "f:renewTime") {
			return lease.Spec.RenewTime.Time
		}
	}
	return time.Time{}
}

// waitLeaseRenewals waits until the agent has renewed the hub lease of cluster n more times (n distinct
// renewTimes written by agentFieldManager after the call) and returns the last renewTime.
func waitLeaseRenewals(t *testing.T, hub *framework.Hub, cluster string, n int, timeout time.Duration) time.Time {
	t.Helper()
	return waitLeaseRenewalsSince(t, hub, cluster, agentRenewTime(t, hub, cluster), n, timeout)
}

// waitLeaseRenewalsSince is waitLeaseRenewals counting from the baseline renewTime last, read by the caller
// before the cause of the renewals (an agent's start, whose first renewal comes at once), so that renewal counts.
func waitLeaseRenewalsSince(t *testing.T, hub *framework.Hub, cluster string, last time.Time, n int, timeout time.Duration) time.Time {
	t.Helper()
	seen := 0
	framework.Eventually(t, timeout, pollInterval, func() (bool, error) {
		now := agentRenewTime(t, hub, cluster)
		if !now.IsZero() && now.After(last) {
			last = now
			seen++
		}
		return seen >= n, nil
	}, "%d renewals of lease %s/%s by the agent", n, cluster, hubLeaseName)
	return last
}

// spokeEvents returns the events in the agent namespace with reason whose message contains every substr.
func spokeEvents(t *testing.T, spoke *framework.Spoke, reason string, substr ...string) []corev1.Event {
	t.Helper()
	list, err := spoke.Kube.CoreV1().Events(util.AgentNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("spoke: list events: %v", err)
	}
	var out []corev1.Event
	for _, e := range list.Items {
		if reason != "" && e.Reason != reason {
			continue
		}
		ok := true
		for _, s := range substr {
			ok = ok && strings.Contains(e.Message, s)
		}
		if ok {
			out = append(out, e)
		}
	}
	return out
}

// eventCount sums the counts of spokeEvents.
func eventCount(t *testing.T, spoke *framework.Spoke, reason string, substr ...string) int {
	t.Helper()
	n := 0
	for _, e := range spokeEvents(t, spoke, reason, substr...) {
		n += int(max(e.Count, 1))
	}
	return n
}

// waitEvent waits for an event with reason whose message contains every substr and returns its message.
func waitEvent(t *testing.T, spoke *framework.Spoke, reason string, substr ...string) string {
	t.Helper()
	var msg string
	framework.Eventually(t, eventTimeout, pollInterval, func() (bool, error) {
		evs := spokeEvents(t, spoke, reason, substr...)
		if len(evs) == 0 {
			return false, nil
		}
		msg = evs[0].Message
		return true, nil
	}, "event %s containing %q", reason, substr)
	return msg
}

// statusView is the part of a ManagedCluster status the agent owns: Joined and Available (without transition
// times), version, capacity, allocatable and claims. A change of it between two watch events is an agent write.
type statusView struct {
	Joined, Available     string
	Version               string
	Capacity, Allocatable map[string]string
	Claims                []clusterv1.ManagedClusterClaim
}

func viewOf(mc *clusterv1.ManagedCluster) statusView {
	cond := func(t string) string {
		c := meta.FindStatusCondition(mc.Status.Conditions, t)
		if c == nil {
			return ""
		}
		return fmt.Sprintf("%s/%s/%s", c.Status, c.Reason, c.Message)
	}
	list := func(l clusterv1.ResourceList) map[string]string {
		out := map[string]string{}
		for k, v := range l {
			out[string(k)] = v.String()
		}
		return out
	}
	return statusView{
		Joined:      cond(clusterv1.ManagedClusterConditionJoined),
		Available:   cond(clusterv1.ManagedClusterConditionAvailable),
		Version:     mc.Status.Version.Kubernetes,
		Capacity:    list(mc.Status.Capacity),
		Allocatable: list(mc.Status.Allocatable),
		Claims:      mc.Status.ClusterClaims,
	}
}

// mcRecorder records every version of one ManagedCluster seen through a watch.
type mcRecorder struct {
	mu       sync.Mutex
	versions []mcVersion
}

type mcVersion struct {
	at   time.Time
	typ  watch.EventType
	mc   *clusterv1.ManagedCluster
	view statusView
}

// recordMC watches ManagedCluster name on hub until the test ends.
func recordMC(t *testing.T, hub *framework.Hub, name string) *mcRecorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := hub.Cluster.ClusterV1().ManagedClusters().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		cancel()
		t.Fatalf("hub %s: watch ManagedCluster %s: %v", hub.Name, name, err)
	}
	r := &mcRecorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			mc, ok := ev.Object.(*clusterv1.ManagedCluster)
			if !ok {
				continue
			}
			r.mu.Lock()
			r.versions = append(r.versions, mcVersion{at: time.Now(), typ: ev.Type, mc: mc, view: viewOf(mc)})
			r.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		w.Stop()
		cancel()
		<-done
	})
	return r
}

// writesBetween counts the versions in [from, to) whose agent-owned status differs from the version before
// (agent status writes), and returns them.
func (r *mcRecorder) writesBetween(from, to time.Time) []mcVersion {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []mcVersion
	for i := 1; i < len(r.versions); i++ {
		v := r.versions[i]
		if v.at.Before(from) || !v.at.Before(to) {
			continue
		}
		if !cmp.Equal(r.versions[i-1].view, v.view) {
			out = append(out, v)
		}
	}
	return out
}

// describeWrites renders writes for failure messages.
func describeWrites(writes []mcVersion, start time.Time) string {
	parts := make([]string, 0, len(writes))
	for _, w := range writes {
		parts = append(parts, fmt.Sprintf("+%s rv %s", w.at.Sub(start).Round(100*time.Millisecond), w.mc.ResourceVersion))
	}
	return strings.Join(parts, ", ")
}

// skewedClock is the real clock shifted by an adjustable offset (only Now and Since are shifted; timers
// measure durations and are unaffected), to give an agent a clock the hub disagrees with.
type skewedClock struct {
	clock.RealClock
	skew atomic.Int64
}

func (c *skewedClock) set(d time.Duration)             { c.skew.Store(int64(d)) }
func (c *skewedClock) Now() time.Time                  { return time.Now().Add(time.Duration(c.skew.Load())) }
func (c *skewedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// conditionOf returns condition t of mc, nil if absent.
func conditionOf(mc *clusterv1.ManagedCluster, t string) *metav1.Condition {
	return meta.FindStatusCondition(mc.Status.Conditions, t)
}
