package failover_test

import (
	"context"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// TestStandbyCredentialsRefused: hub B runs no hub controller, so nobody approves the CSR the agent sends it as
// a standby: hub B's standby credentials are Pending. The hub admin denies the CSR: the agent reports them
// Refused (status and a StandbyCredentialsRefused warning) and stays Available on hub A, a cold standby kept.
// The standby Secret of a hub removed while the agent was not running is deleted at start
// (StandbyCredentialsRemoved); another agent's is kept.
func TestStandbyCredentialsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const removed = "hub-removed"
	stale := hubsession.StandbySecretName(klusterlet.DefaultHubKubeconfigSecret, removed)
	othersName := hubsession.StandbySecretName("another-agents-secret", removed)
	b := newBed(t, bedOptions{spec: spec(shortConnectionTimeout), noHubBController: true, beforeAgent: func(b *bed) {
		for _, name := range []string{stale, othersName} {
			if _, err := b.spoke.Kube.CoreV1().Secrets(util.AgentNamespace).Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: util.AgentNamespace, Labels: map[string]string{hubsession.StandbyHubLabel: removed}},
				Data:       map[string][]byte{"tls.key": []byte("stale")},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}})
	b.waitEvent(t, failover.ReasonStandbyCredentialsRemoved)
	if _, err := b.spoke.Kube.CoreV1().Secrets(util.AgentNamespace).Get(ctx, stale, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the standby Secret %s of a hub no longer configured is still there (err %v)", stale, err)
	}
	if _, err := b.spoke.Kube.CoreV1().Secrets(util.AgentNamespace).Get(ctx, othersName, metav1.GetOptions{}); err != nil {
		t.Errorf("another agent's standby Secret %s: %v, want it kept", othersName, err)
	}
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout+failoverSlack, "hub-b standby credentials Pending",
		standbyCredentialsAre(hubB, failoverv1alpha1.StandbyCredentialsPending))
	var csrs []string
	framework.Eventually(t, statusTimeout, time.Second, func() (bool, error) {
		csrs = util.CSRNames(t, b.hubB, clusterName)
		return len(csrs) == 1, nil
	}, "one standby CSR on hub B")
	csr, err := b.hubB.Kube.CertificatesV1().CertificateSigningRequests().Get(context.Background(), csrs[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if csr.Spec.Username != b.hubB.BootstrapUser() {
		t.Errorf("standby CSR %s sent by %q, want hub B's bootstrap user %q", csr.Name, csr.Spec.Username, b.hubB.BootstrapUser())
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "TestDenied", Message: "denied by the test",
		LastUpdateTime: metav1.Now(),
	})
	if _, err := b.hubB.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(context.Background(), csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "hub-b standby credentials Refused",
		standbyCredentialsAre(hubB, failoverv1alpha1.StandbyCredentialsRefused))
	b.waitEvent(t, failover.ReasonStandbyCredentialsRefused)
	fc := util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "primary Available", util.ActiveAndAvailable(primary))
	if fc.Status.FailoverCount != 0 {
		t.Errorf("failoverCount %d after a refused standby CSR, want 0", fc.Status.FailoverCount)
	}
	b.expectNotExited(t)
}
