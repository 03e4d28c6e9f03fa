package util

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	failoverclientset "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// PollInterval is how often the failover helpers poll the spoke and the hubs.
const PollInterval = 250 * time.Millisecond

// FailoverConfigName is the FailoverConfig the suites create: the agent's default --failover-config-name.
const FailoverConfigName = klusterlet.DefaultFailoverConfigName

// FailoverClient returns a FailoverConfig clientset for the spoke (admin).
func FailoverClient(t testing.TB, spoke *framework.Spoke) failoverclientset.Interface {
	t.Helper()
	c, err := failoverclientset.NewForConfig(spoke.AdminConfig)
	if err != nil {
		t.Fatalf("failover clientset: %v", err)
	}
	return c
}

// ApplySecret creates Secret name in AgentNamespace on the spoke with data, or replaces the data of the existing
// one. It installs the agent namespace first.
func ApplySecret(t testing.TB, spoke *framework.Spoke, name string, data map[string][]byte) {
	t.Helper()
	EnsureAgentNamespace(t, spoke)
	ctx := context.Background()
	secrets := spoke.Kube.CoreV1().Secrets(AgentNamespace)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: AgentNamespace}, Data: data}
	_, err := secrets.Create(ctx, secret, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			existing, err := secrets.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			existing.Data = data
			_, err = secrets.Update(ctx, existing, metav1.UpdateOptions{})
			return err
		})
	}
	if err != nil {
		t.Fatalf("apply secret %s/%s on the spoke: %v", AgentNamespace, name, err)
	}
}

// ApplyBootstrapSecret stores kubeconfig under key "kubeconfig" of Secret name in AgentNamespace (an alternate
// hub's bootstrap Secret, or the primary's bootstrap-hub-kubeconfig).
func ApplyBootstrapSecret(t testing.TB, spoke *framework.Spoke, name string, kubeconfig []byte) {
	t.Helper()
	ApplySecret(t, spoke, name, map[string][]byte{failoverv1alpha1.KubeconfigSecretKey: kubeconfig})
}

// LabelSecret sets label key=value on Secret name in AgentNamespace, leaving its data alone.
func LabelSecret(t testing.TB, spoke *framework.Spoke, name, key, value string) {
	t.Helper()
	ctx := context.Background()
	secrets := spoke.Kube.CoreV1().Secrets(AgentNamespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		existing, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if existing.Labels == nil {
			existing.Labels = map[string]string{}
		}
		existing.Labels[key] = value
		_, err = secrets.Update(ctx, existing, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("label secret %s/%s on the spoke: %v", AgentNamespace, name, err)
	}
}

// ApplyFailoverConfig creates the FailoverConfig FailoverConfigName in AgentNamespace with spec, or replaces the
// spec of the existing one. It installs the CRD and namespace first.
func ApplyFailoverConfig(t testing.TB, spoke *framework.Spoke, spec failoverv1alpha1.FailoverConfigSpec) {
	t.Helper()
	EnsureAgentNamespace(t, spoke)
	ctx := context.Background()
	client := FailoverClient(t, spoke).FailoverV1alpha1().FailoverConfigs(AgentNamespace)
	fc := &failoverv1alpha1.FailoverConfig{ObjectMeta: metav1.ObjectMeta{Name: FailoverConfigName, Namespace: AgentNamespace}, Spec: spec}
	_, err := client.Create(ctx, fc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			existing, err := client.Get(ctx, FailoverConfigName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			existing.Spec = spec
			_, err = client.Update(ctx, existing, metav1.UpdateOptions{})
			return err
		})
	}
	if err != nil {
		t.Fatalf("apply FailoverConfig %s/%s: %v", AgentNamespace, FailoverConfigName, err)
	}
}

// UpdateFailoverConfigSpec changes the spec of the FailoverConfig with mutate (retrying on conflicts).
func UpdateFailoverConfigSpec(t testing.TB, spoke *framework.Spoke, mutate func(*failoverv1alpha1.FailoverConfigSpec)) {
	t.Helper()
	ctx := context.Background()
	client := FailoverClient(t, spoke).FailoverV1alpha1().FailoverConfigs(AgentNamespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		existing, err := client.Get(ctx, FailoverConfigName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(&existing.Spec)
		_, err = client.Update(ctx, existing, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("update FailoverConfig %s/%s: %v", AgentNamespace, FailoverConfigName, err)
	}
}

// GetFailoverConfig returns the FailoverConfig, or an error.
func GetFailoverConfig(spoke *framework.Spoke) (*failoverv1alpha1.FailoverConfig, error) {
	c, err := failoverclientset.NewForConfig(spoke.AdminConfig)
	if err != nil {
		return nil, err
	}
	return c.FailoverV1alpha1().FailoverConfigs(AgentNamespace).Get(context.Background(), FailoverConfigName, metav1.GetOptions{})
}

// WaitForFailoverConfig polls the FailoverConfig until cond returns true and returns it; on timeout it fails the
// test with the last reason cond gave and the status.
func WaitForFailoverConfig(t testing.TB, spoke *framework.Spoke, timeout time.Duration, what string,
	cond func(fc *failoverv1alpha1.FailoverConfig) (bool, string)) *failoverv1alpha1.FailoverConfig {
	t.Helper()
	var last *failoverv1alpha1.FailoverConfig
	framework.Eventually(t, timeout, PollInterval, func() (bool, error) {
		fc, err := GetFailoverConfig(spoke)
		if err != nil {
			return false, err
		}
		last = fc
		ok, why := cond(fc)
		if !ok {
			return false, fmt.Errorf("%s; status: %s", why, DescribeFailoverStatus(fc))
		}
		return true, nil
	}, "FailoverConfig: %s", what)
	return last
}

// DescribeFailoverStatus formats the interesting part of a FailoverConfig status for messages.
func DescribeFailoverStatus(fc *failoverv1alpha1.FailoverConfig) string {
	if fc == nil {
		return "<nil>"
	}
	s := fc.Status
	var b strings.Builder
	fmt.Fprintf(&b, "activeHub=%q failoverCount=%d", s.ActiveHub, s.FailoverCount)
	for _, c := range s.Conditions {
		fmt.Fprintf(&b, " %s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, h := range s.Hubs {
		fmt.Fprintf(&b, " hub[%s]=%s(%s)", h.Name, h.ProbeResult, h.Message)
	}
	if lf := s.LastFailover; lf != nil {
		fmt.Fprintf(&b, " lastFailover=%s->%s(%s) durationMs=%d", lf.From, lf.To, lf.Reason, lf.DurationMilliseconds)
	}
	return b.String()
}

// ConditionIs reports whether fc has condition typ with status.
func ConditionIs(fc *failoverv1alpha1.FailoverConfig, typ string, status metav1.ConditionStatus) bool {
	c := meta.FindStatusCondition(fc.Status.Conditions, typ)
	return c != nil && c.Status == status
}

// ActiveAndAvailable is a WaitForFailoverConfig condition: status.activeHub is hub and Available is True.
func ActiveAndAvailable(hub string) func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
	return func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		if fc.Status.ActiveHub != hub {
			return false, fmt.Sprintf("activeHub %q, want %q", fc.Status.ActiveHub, hub)
		}
		if !ConditionIs(fc, failoverv1alpha1.ConditionAvailable, metav1.ConditionTrue) {
			return false, "condition Available is not True"
		}
		return true, ""
	}
}

// HubProbe returns the status entry of hub name, or nil.
func HubProbe(fc *failoverv1alpha1.FailoverConfig, name string) *failoverv1alpha1.HubStatus {
	for i := range fc.Status.Hubs {
		if fc.Status.Hubs[i].Name == name {
			return &fc.Status.Hubs[i]
		}
	}
	return nil
}

// ClusterAvailable reports whether ManagedCluster cluster exists on hub with the conditions HubAcceptedManagedCluster,
// ManagedClusterJoined and ManagedClusterConditionAvailable True. A condition says what was true when it was last
// written: after a switch, judge it with WaitForClusterAvailableSince.
func ClusterAvailable(hub *framework.Hub, cluster string) (bool, error) {
	mc, err := hub.Cluster.ClusterV1().ManagedClusters().Get(context.Background(), cluster, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	for _, c := range []string{clusterv1.ManagedClusterConditionHubAccepted, clusterv1.ManagedClusterConditionJoined, clusterv1.ManagedClusterConditionAvailable} {
		if !meta.IsStatusConditionTrue(mc.Status.Conditions, c) {
			return false, fmt.Errorf("ManagedCluster %s on hub %s: condition %s not True: %v", cluster, hub.Name, c, mc.Status.Conditions)
		}
	}
	return true, nil
}

// WaitForClusterAvailableSince waits until ManagedCluster cluster is Available and Joined on hub (ClusterAvailable)
// and its lease managed-cluster-lease was renewed after since: an agent runs the cluster on hub now, not a
// condition left from before since (OCM's hub marks a silent cluster Unknown only after five lease durations).
func WaitForClusterAvailableSince(t testing.TB, hub *framework.Hub, cluster string, since time.Time, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, PollInterval, func() (bool, error) {
		l, err := hub.Kube.CoordinationV1().Leases(cluster).Get(context.Background(), "managed-cluster-lease", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if l.Spec.RenewTime == nil || !l.Spec.RenewTime.After(since) {
			return false, fmt.Errorf("lease %s/managed-cluster-lease on hub %s last renewed %v, not after %s", cluster, hub.Name, l.Spec.RenewTime, since.Format(time.RFC3339Nano))
		}
		return ClusterAvailable(hub, cluster)
	}, "ManagedCluster %s Available and Joined on hub %s, its lease renewed after %s", cluster, hub.Name, since.Format(time.RFC3339))
}

// WaitForClusterAvailable waits until ManagedCluster cluster is Available on hub and returns it.
func WaitForClusterAvailable(t testing.TB, hub *framework.Hub, cluster string, timeout time.Duration) *clusterv1.ManagedCluster {
	t.Helper()
	framework.Eventually(t, timeout, PollInterval, func() (bool, error) { return ClusterAvailable(hub, cluster) },
		"ManagedCluster %s Available on hub %s", cluster, hub.Name)
	mc, err := hub.Cluster.ClusterV1().ManagedClusters().Get(context.Background(), cluster, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get ManagedCluster %s on hub %s: %v", cluster, hub.Name, err)
	}
	return mc
}

// HubKubeconfigSecret returns the agent's hub kubeconfig Secret on the spoke, nil when absent.
func HubKubeconfigSecret(t testing.TB, spoke *framework.Spoke) *corev1.Secret {
	t.Helper()
	return Secret(t, spoke, klusterlet.DefaultHubKubeconfigSecret)
}

// Secret returns the Secret name of the agent namespace on the spoke, nil when absent.
func Secret(t testing.TB, spoke *framework.Spoke, name string) *corev1.Secret {
	t.Helper()
	s, err := spoke.Kube.CoreV1().Secrets(AgentNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get secret %s/%s: %v", AgentNamespace, name, err)
	}
	return s
}

// CSRNames returns the sorted names of the CSRs of cluster (label open-cluster-management.io/cluster-name) on hub.
func CSRNames(t testing.TB, hub *framework.Hub, cluster string) []string {
	t.Helper()
	list, err := hub.Kube.CertificatesV1().CertificateSigningRequests().List(context.Background(),
		metav1.ListOptions{LabelSelector: clientcert.ClusterNameLabel + "=" + cluster})
	if err != nil {
		t.Fatalf("list CSRs of %s on hub %s: %v", cluster, hub.Name, err)
	}
	names := make([]string, 0, len(list.Items))
	for _, csr := range list.Items {
		names = append(names, csr.Name)
	}
	sort.Strings(names)
	return names
}

// KubeconfigServer returns the server of the current context of kubeconfig, "" when it does not parse.
func KubeconfigServer(kubeconfig []byte) string {
	info, err := clientcert.HubInfoFromKubeconfig(kubeconfig)
	if err != nil {
		return ""
	}
	return info.Server
}

// WithServer returns kubeconfig with the server of every cluster replaced by server (e.g. to route a hub's
// bootstrap kubeconfig through a CountingProxy; the hub's serving certificate is valid for any 127.0.0.1 port).
func WithServer(t testing.TB, kubeconfig []byte, server string) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatalf("parse kubeconfig: %v", err)
	}
	for _, c := range cfg.Clusters {
		c.Server = server
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatalf("write kubeconfig: %v", err)
	}
	return out
}

// CreateClusterClaim creates a custom ClusterClaim name=value on the spoke.
func CreateClusterClaim(t testing.TB, spoke *framework.Spoke, name, value string) {
	t.Helper()
	claim := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: value}}
	if _, err := spoke.Cluster.ClusterV1alpha1().ClusterClaims().Create(context.Background(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ClusterClaim %s on the spoke: %v", name, err)
	}
}

// ClaimValue returns the value of claim name in the status of mc, "" when absent.
func ClaimValue(mc *clusterv1.ManagedCluster, name string) string {
	for _, c := range mc.Status.ClusterClaims {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// SetHubAcceptsClient sets spec.hubAcceptsClient of ManagedCluster cluster on hub.
func SetHubAcceptsClient(t testing.TB, hub *framework.Hub, cluster string, accept bool) {
	t.Helper()
	if err := hub.AcceptCluster(context.Background(), cluster, accept); err != nil {
		t.Fatal(err)
	}
}

// WaitForEventCount waits until the events with reason in the agent namespace count at least n and returns the
// count.
func WaitForEventCount(t testing.TB, spoke *framework.Spoke, reason string, n int, timeout time.Duration) int {
	t.Helper()
	got := 0
	framework.Eventually(t, timeout, PollInterval, func() (bool, error) {
		got = EventReasons(t, spoke)[reason]
		return got >= n, fmt.Errorf("%d events %s", got, reason)
	}, "at least %d events %s", n, reason)
	return got
}
