package testbed_test

import (
	"context"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// hubControllerTimeout bounds what OCM's hub controller does after a change, on a loaded 2-core machine.
const hubControllerTimeout = 30 * time.Second

// TestHubControllerAcceptsCluster runs OCM's real hub registration controller with kube-controller-manager: a
// ManagedCluster created with the bootstrap identity and accepted gets its namespace, lease and
// HubAcceptedManagedCluster=True, and a CSR from the bootstrap user is approved without ApproveCSR and signed.
func TestHubControllerAcceptsCluster(t *testing.T) {
	hub := framework.StartHub(t, framework.HubOptions{Name: "ocm", Signer: framework.SignerKCM, HubController: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	bootstrapConfig, err := clientcmd.RESTConfigFromKubeConfig(hub.BootstrapKubeconfig())
	if err != nil {
		t.Fatalf("parsing the bootstrap kubeconfig: %v", err)
	}
	bootstrapCluster := clusterclientset.NewForConfigOrDie(bootstrapConfig)
	bootstrapKube := kubernetes.NewForConfigOrDie(bootstrapConfig)

	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: testCluster},
		Spec:       clusterv1.ManagedClusterSpec{LeaseDurationSeconds: 60},
	}
	if _, err := bootstrapCluster.ClusterV1().ManagedClusters().Create(ctx, mc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ManagedCluster %s as the bootstrap user: %v", testCluster, err)
	}
	if err := hub.AcceptCluster(ctx, testCluster, true); err != nil {
		t.Fatal(err)
	}

	framework.Eventually(t, hubControllerTimeout, pollInterval, func() (bool, error) {
		got, err := hub.Cluster.ClusterV1().ManagedClusters().Get(ctx, testCluster, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(got.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted), nil
	}, "ManagedCluster %s condition %s=True", testCluster, clusterv1.ManagedClusterConditionHubAccepted)
	framework.Eventually(t, hubControllerTimeout, pollInterval, func() (bool, error) {
		_, err := hub.Kube.CoreV1().Namespaces().Get(ctx, testCluster, metav1.GetOptions{})
		return err == nil, err
	}, "namespace %s created by the hub controller", testCluster)
	framework.Eventually(t, hubControllerTimeout, pollInterval, func() (bool, error) {
		_, err := hub.Kube.CoordinationV1().Leases(testCluster).Get(ctx, framework.ClusterLeaseName, metav1.GetOptions{})
		return err == nil, err
	}, "lease %s/%s created by the hub controller", testCluster, framework.ClusterLeaseName)

	_, csr := newAgentCSR(t, testCluster, testAgent, nil)
	created, err := bootstrapKube.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a CSR as the bootstrap user: %v", err)
	}
	certPEM := waitForCertificate(t, bootstrapKube, created.Name)
	signed, err := hub.Kube.CertificatesV1().CertificateSigningRequests().Get(ctx, created.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	approvedBy := ""
	for _, c := range signed.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved {
			approvedBy = c.Reason
		}
	}
	if approvedBy == "" || approvedBy == framework.ApprovedReason {
		t.Errorf("CSR %s approval reason %q, want an approval by the hub controller", created.Name, approvedBy)
	}
	if issued := parseCertificate(t, certPEM); issued.Subject.CommonName != framework.AgentUser(testCluster, testAgent) {
		t.Errorf("issued certificate CN %q, want %q", issued.Subject.CommonName, framework.AgentUser(testCluster, testAgent))
	}
}

// TestAcceptClusterWithoutHubController checks what AcceptCluster does in place of the hub controller: accepting
// creates the namespace, lease, condition and the RBAC an agent needs; denying takes the agent's rights away.
func TestAcceptClusterWithoutHubController(t *testing.T) {
	hub := framework.StartHub(t, framework.HubOptions{Name: "emulated", Signer: framework.SignerInProcess})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	bootstrapCluster := clusterclientset.NewForConfigOrDie(hub.BootstrapConfig())
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster}}
	if _, err := bootstrapCluster.ClusterV1().ManagedClusters().Create(ctx, mc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ManagedCluster %s as the bootstrap user: %v", testCluster, err)
	}
	agentConfig := hub.UserConfig(framework.AgentUser(testCluster, testAgent), framework.AgentGroups(testCluster)...)
	agentCluster := clusterclientset.NewForConfigOrDie(agentConfig)
	agentKube := kubernetes.NewForConfigOrDie(agentConfig)

	if _, err := agentCluster.ClusterV1().ManagedClusters().Get(ctx, testCluster, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("agent getting its ManagedCluster before acceptance: got %v, want 403 Forbidden", err)
	}

	if err := hub.AcceptCluster(ctx, testCluster, true); err != nil {
		t.Fatal(err)
	}
	// RBAC changes reach the authorizer through informers: allow a moment (on a loaded machine, more than one).
	var got *clusterv1.ManagedCluster
	framework.Eventually(t, hubControllerTimeout, pollInterval, func() (bool, error) {
		var err error
		got, err = agentCluster.ClusterV1().ManagedClusters().Get(ctx, testCluster, metav1.GetOptions{})
		return err == nil, err
	}, "agent allowed to get its ManagedCluster after acceptance")
	if !got.Spec.HubAcceptsClient || !meta.IsStatusConditionTrue(got.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) {
		t.Errorf("accepted ManagedCluster: hubAcceptsClient=%t, conditions %v", got.Spec.HubAcceptsClient, got.Status.Conditions)
	}
	lease, err := agentKube.CoordinationV1().Leases(testCluster).Get(ctx, framework.ClusterLeaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("agent getting its lease: %v", err)
	}
	lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	if _, err := agentKube.CoordinationV1().Leases(testCluster).Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Errorf("agent renewing its lease: %v", err)
	}
	patch := []byte(`{"status":{"version":{"kubernetes":"v1.34.3"}}}`)
	if _, err := agentCluster.ClusterV1().ManagedClusters().Patch(ctx, testCluster, types.MergePatchType, patch,
		metav1.PatchOptions{}, "status"); err != nil {
		t.Errorf("agent patching its ManagedCluster status: %v", err)
	}
	if _, err := agentCluster.ClusterV1().ManagedClusters().Get(ctx, "other", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("agent getting another ManagedCluster: got %v, want 403 Forbidden", err)
	}

	if err := hub.AcceptCluster(ctx, testCluster, false); err != nil {
		t.Fatal(err)
	}
	got, err = hub.Cluster.ClusterV1().ManagedClusters().Get(ctx, testCluster, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.HubAcceptsClient || !meta.IsStatusConditionFalse(got.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) {
		t.Errorf("denied ManagedCluster: hubAcceptsClient=%t, conditions %v", got.Spec.HubAcceptsClient, got.Status.Conditions)
	}
	framework.Eventually(t, hubControllerTimeout, pollInterval, func() (bool, error) {
		_, err := agentKube.CoordinationV1().Leases(testCluster).Get(ctx, framework.ClusterLeaseName, metav1.GetOptions{})
		return apierrors.IsForbidden(err), err
	}, "agent forbidden to read its lease after denial")
	if _, err := agentCluster.ClusterV1().ManagedClusters().Get(ctx, testCluster, metav1.GetOptions{}); err != nil {
		t.Errorf("denied agent getting its ManagedCluster (still allowed by OCM): %v", err)
	}
}
