package failover_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	// untrustedWindow is how long the hub serves a certificate the agent does not trust before the bootstrap
	// kubeconfig gets the new CA: more than two lease periods (shortLeaseSeconds).
	untrustedWindow = 10 * time.Second
	// caRecoveryTimeout bounds the pickup of the new CA: the agent's 5s file poll, the rebuild of the hub
	// kubeconfig and a lease renewal.
	caRecoveryTimeout = 45 * time.Second
	// untrustedCA is what the TLS error says about a serving certificate from an unknown CA.
	untrustedCA = "certificate signed by unknown authority"
)

// TestHubServingCAReplaced is FC-03. Hub A is reached through a proxy that serves a certificate of its own CA;
// after the join the proxy switches to a certificate from a new CA the agent does not trust. During the
// mismatch the agent reports the untrusted CA, sends no CSR and keeps its Secret and key. Then only the CA data
// of the bootstrap kubeconfig file is updated (same server, same credentials): the hub kubeconfig is rebuilt
// with the new CA, the key is kept and the lease is renewed again under the same ManagedCluster.
func TestHubServingCAReplaced(t *testing.T) {
	t.Parallel()
	var front *util.ReencryptingProxy
	b := newBed(t, bedOptions{
		noFailoverConfig: true,
		noHubB:           true,
		beforeAgent: func(b *bed) {
			front = util.StartReencryptingProxy(t, b.hubA.DirectURL(), b.hubA.CAData())
			if err := front.AddKubeconfigIdentity(b.hubA.BootstrapKubeconfig()); err != nil {
				t.Fatalf("bootstrap identity: %v", err)
			}
			spokeKube := b.spoke.Kube
			front.Identities = func() [][2][]byte {
				s, err := spokeKube.CoreV1().Secrets(util.AgentNamespace).Get(context.Background(), klusterlet.DefaultHubKubeconfigSecret, metav1.GetOptions{})
				if err != nil {
					return nil
				}
				return [][2][]byte{{s.Data[clientcert.TLSCertSecretKey], s.Data[clientcert.TLSKeySecretKey]}}
			}
		},
		primaryBootstrap: func(b *bed) []byte {
			return util.WithServerAndCA(t, b.hubA.BootstrapKubeconfig(), front.URL(), front.CAData())
		},
		// The bootstrap file is replaced below; the Secret must not take precedence.
		mutate: func(o *klusterlet.FailoverAgentOptions) { o.BootstrapKubeconfigSecret = "" },
	})
	ctx := context.Background()
	patch := fmt.Sprintf(`{"spec":{"leaseDurationSeconds":%d}}`, shortLeaseSeconds)
	mc, err := b.hubA.Cluster.ClusterV1().ManagedClusters().Patch(ctx, clusterName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := util.HubKubeconfigSecret(t, b.spoke)
	csrCount := func() int {
		list, err := b.hubA.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	}
	csrs := csrCount()
	leaseRenewTime := func() time.Time {
		lease, err := b.hubA.Kube.CoordinationV1().Leases(clusterName).Get(ctx, framework.ClusterLeaseName, metav1.GetOptions{})
		if err != nil || lease.Spec.RenewTime == nil {
			return time.Time{}
		}
		return lease.Spec.RenewTime.Time
	}

	// The hub serves a certificate from a CA the agent does not trust.
	front.RotateServingCA()
	front.CloseClientConnections()
	rotated := time.Now()
	// The hub monitor names the cause and the kubeconfig field to fix. (How soon is not asserted: the wait is
	// statusTimeout, and the window below is counted from the rotation either way.)
	util.WaitForEvent(t, b.spoke, failover.ReasonHubUnreachable, string(clientcert.ReasonHubCANotTrusted), statusTimeout)
	if !warningMentions(t, b.spoke, untrustedCA) {
		t.Errorf("no warning event quotes the TLS error %q", untrustedCA)
	}
	time.Sleep(time.Until(rotated.Add(untrustedWindow)))
	if n := csrCount(); n != csrs {
		t.Errorf("%d CSRs on hub A after the CA change, %d before: the agent must not send CSRs while it cannot trust the hub", n, csrs)
	}
	during := util.HubKubeconfigSecret(t, b.spoke)
	if during == nil || during.UID != before.UID || !bytes.Equal(during.Data[clientcert.TLSKeySecretKey], before.Data[clientcert.TLSKeySecretKey]) {
		t.Fatalf("the hub kubeconfig secret or its key changed while the hub CA was not trusted")
	}
	b.expectNotExited(t)

	// Only the CA data of the bootstrap kubeconfig is updated.
	stale := leaseRenewTime()
	updated := util.WithServerAndCA(t, b.hubA.BootstrapKubeconfig(), front.URL(), front.CAData())
	if err := os.WriteFile(b.agent.BootstrapFile, updated, 0o600); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, caRecoveryTimeout, util.PollInterval, func() (bool, error) {
		s := util.HubKubeconfigSecret(t, b.spoke)
		if s == nil {
			return false, nil
		}
		cfg, err := clientcmd.Load(s.Data[failoverv1alpha1.KubeconfigSecretKey])
		if err != nil {
			return false, err
		}
		for _, c := range cfg.Clusters {
			if !bytes.Equal(c.CertificateAuthorityData, front.CAData()) {
				return false, fmt.Errorf("hub kubeconfig still has the old CA")
			}
		}
		return true, nil
	}, "hub kubeconfig rebuilt with the new CA")
	framework.Eventually(t, caRecoveryTimeout, util.PollInterval, func() (bool, error) {
		return leaseRenewTime().After(stale), nil
	}, "lease on hub A renewed again")
	after := util.HubKubeconfigSecret(t, b.spoke)
	if !bytes.Equal(after.Data[clientcert.TLSKeySecretKey], before.Data[clientcert.TLSKeySecretKey]) {
		t.Errorf("the client key changed: the credentials were fine, only the CA was new")
	}
	got, err := b.hubA.Cluster.ClusterV1().ManagedClusters().Get(ctx, clusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.UID != mc.UID {
		t.Errorf("ManagedCluster %s was re-created (uid %s, was %s)", clusterName, got.UID, mc.UID)
	}
	if n := csrCount(); n != csrs {
		t.Errorf("%d CSRs on hub A after the CA update, %d before", n, csrs)
	}
	util.WaitForClusterAvailable(t, b.hubA, clusterName, statusTimeout)
}

// warningMentions reports whether a Warning event in the agent namespace mentions substr.
func warningMentions(t *testing.T, spoke *framework.Spoke, substr string) bool {
	t.Helper()
	list, err := spoke.Kube.CoreV1().Events(util.AgentNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list events: %v", err)
	}
	for _, e := range list.Items {
		if e.Type == "Warning" && strings.Contains(e.Message, substr) {
			return true
		}
	}
	return false
}
