package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

const (
	// reasonSpokeCredentialsRejected is the Available=False reason when the managed cluster answers 401.
	reasonSpokeCredentialsRejected = "ManagedClusterSpokeCredentialsRejected"
	reasonAvailable                = "ManagedClusterAvailable"
	eventUnavailable               = "ManagedClusterUnavailable"
	// spokeCredentialTimeout bounds the Available condition following a spoke credential change: up to a
	// health-check period, two re-checks 10 s apart (failure threshold 3), the reload check (10 s), plus load.
	spokeCredentialTimeout = 90 * time.Second
)

// testHostedSpokeCredentials is FC-13: the agent runs in hosted mode with an external spoke kubeconfig holding a
// ServiceAccount token of the managed cluster (spoke B); a third apiserver hosts the agent (its namespace, hub
// kubeconfig Secret and events). The token is revoked (the ServiceAccount deleted) and re-issued later: the
// cluster turns Available=False with a reason naming the spoke credentials, the hub lease is renewed all along,
// and the re-issued token, written to the same file, is used without a restart.
func testHostedSpokeCredentials(t *testing.T, s *suite) {
	const (
		cluster   = "fc13-hosted"
		agentName = "agent13"
		saNS      = "fc13-hosted"
		saName    = "klusterlet-hosted"
	)
	hub, managed := s.hub, s.spokeB
	ctx := context.Background()
	host := framework.StartSpoke(t) // the cluster hosting the agent

	// What the agent needs on the managed cluster in hosted mode, and nothing more (docs/install.md: hosted mode).
	mustCreate(t, "namespace", func() error {
		_, err := managed.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: saNS}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, "cluster role", func() error {
		_, err := managed.Kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "fc13-managed-cluster-reader"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
				{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: []string{"kube-system"}, Verbs: []string{"get"}},
				{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"clusterclaims"}, Verbs: []string{"get", "list", "watch"}},
			},
		}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, "cluster role binding", func() error {
		_, err := managed.Kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "fc13-managed-cluster-reader"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "fc13-managed-cluster-reader"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: saNS, Name: saName}},
		}, metav1.CreateOptions{})
		return err
	})
	kubeconfigPath := filepath.Join(t.TempDir(), "managed-cluster", "kubeconfig")
	if err := os.MkdirAll(filepath.Dir(kubeconfigPath), 0o700); err != nil {
		t.Fatal(err)
	}
	issue := func() {
		t.Helper()
		mustCreate(t, "service account", func() error {
			_, err := managed.Kube.CoreV1().ServiceAccounts(saNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: saName}}, metav1.CreateOptions{})
			return err
		})
		expiration := int64(3600)
		tr, err := managed.Kube.CoreV1().ServiceAccounts(saNS).CreateToken(ctx, saName,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiration}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("managed cluster: token for %s/%s: %v", saNS, saName, err)
		}
		writeTokenKubeconfig(t, kubeconfigPath, managed, tr.Status.Token)
	}
	issue()

	a := startAgent(t, host, agentSpec{cluster: cluster, agent: agentName, secret: "hks-" + cluster, bootstrap: hub.BootstrapKubeconfig(),
		urls: []string{managed.URL()}, hostedKubeconfig: kubeconfigPath})
	mc := waitAvailable(t, hub, cluster, joinTimeout)

	// Objects land where hosted mode puts them: the hub kubeconfig Secret on the hosting cluster only, the managed
	// cluster's URL and CA in the ManagedCluster.
	waitValidSecret(t, host, hub, a.Secret, cluster, agentName, hubTimeout)
	if getSecret(t, managed, a.Secret) != nil {
		t.Errorf("hosted mode wrote the hub kubeconfig Secret %s to the managed cluster", a.Secret)
	}
	if cfgs := mc.Spec.ManagedClusterClientConfigs; len(cfgs) != 1 || cfgs[0].URL != managed.URL() || !bytes.Equal(cfgs[0].CABundle, managed.CAData()) {
		t.Errorf("spec.managedClusterClientConfigs = %+v, want the managed cluster's URL %s and CA bundle", cfgs, managed.URL())
	}
	setLeaseDuration(t, hub, cluster, leaseSeconds)
	waitLeaseRenewals(t, hub, cluster, 1, 2*leaseSeconds*time.Second+hubTimeout)

	// Revoke: a bound token dies with its ServiceAccount.
	if err := managed.Kube.CoreV1().ServiceAccounts(saNS).Delete(ctx, saName, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("managed cluster: delete service account: %v", err)
	}
	revoked := time.Now()
	waitAvailableReason(t, hub, cluster, metav1.ConditionFalse, reasonSpokeCredentialsRejected)
	t.Logf("Available=False (%s) %.1f s after the token was revoked", reasonSpokeCredentialsRejected, time.Since(revoked).Seconds())
	msg := waitEvent(t, host, eventUnavailable, cluster)
	if !strings.Contains(msg, "spoke credentials") {
		t.Errorf("event %s %q does not name the spoke credentials", eventUnavailable, msg)
	}
	// The hub side is not affected: the lease is renewed while the spoke rejects the agent.
	waitLeaseRenewals(t, hub, cluster, 2, 3*leaseSeconds*time.Second+hubTimeout)
	if got := getMC(t, hub, cluster); !meta.IsStatusConditionTrue(got.Status.Conditions, clusterv1.ManagedClusterConditionJoined) {
		t.Errorf("ManagedCluster %s lost Joined while only the spoke credentials were revoked: %s", cluster, lazyConditions{&got})
	}

	// Re-issue to the same file: picked up without a restart.
	issue()
	reissued := time.Now()
	waitAvailableReason(t, hub, cluster, metav1.ConditionTrue, reasonAvailable)
	t.Logf("Available=True again %.1f s after the token was re-issued", time.Since(reissued).Seconds())
	requireRunning(t, a)
}

// waitAvailableReason waits until the ManagedCluster's Available condition has status and reason.
func waitAvailableReason(t *testing.T, hub *framework.Hub, cluster string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	var mc *clusterv1.ManagedCluster
	framework.Eventually(t, spokeCredentialTimeout, pollInterval, func() (bool, error) {
		mc = getMC(t, hub, cluster)
		c := conditionOf(mc, clusterv1.ManagedClusterConditionAvailable)
		return c != nil && c.Status == status && c.Reason == reason, nil
	}, "ManagedCluster %s Available=%s with reason %s (last conditions: %s)", cluster, status, reason, lazyConditions{&mc})
}

// writeTokenKubeconfig replaces path, as the kubelet replaces a mounted Secret (write aside, rename), with a
// kubeconfig for spoke that authenticates with token.
func writeTokenKubeconfig(t *testing.T, path string, spoke *framework.Spoke, token string) {
	t.Helper()
	data, err := clientcmd.Write(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"managed": {Server: spoke.URL(), CertificateAuthorityData: spoke.CAData()}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"klusterlet": {Token: token}},
		Contexts:       map[string]*clientcmdapi.Context{"managed": {Cluster: "managed", AuthInfo: "klusterlet"}},
		CurrentContext: "managed",
	})
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// mustCreate runs create and fails the test on any error but AlreadyExists.
func mustCreate(t *testing.T, what string, create func() error) {
	t.Helper()
	if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(fmt.Errorf("create %s: %w", what, err))
	}
}
