package failover_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// freezeSecretPolicy is the ValidatingAdmissionPolicy (and binding) that refuses every write of the hub kubeconfig
// Secret on the spoke while it exists: a spoke apiserver that cannot take the hand-over's write in time.
const freezeSecretPolicy = "test-freeze-hub-kubeconfig-secret"

// TestStandbyCredentialsAdoptedWhenTheHandOverFails: hub A is lost while the spoke refuses writes of the hub
// kubeconfig Secret, so the hand-over before the session on hub B starts fails (StandbyCredentialsSwapFailed).
// Once the spoke takes writes again, the session on hub B writes hub B's standby credentials itself: the cluster is
// Available on hub B with the standby certificate and no CSR is sent to hub B. Without the session's adoption it
// would bootstrap and send one.
func TestStandbyCredentialsAdoptedWhenTheHandOverFails(t *testing.T) {
	t.Parallel()
	b := newBed(t, bedOptions{spec: spec(shortConnectionTimeout)})
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout+failoverSlack, "hub-b standby credentials Ready", standbyCredentialsAre(hubB, failoverv1alpha1.StandbyCredentialsReady))
	standbyB := util.Secret(t, b.spoke, hubsession.StandbySecretName(klusterlet.DefaultHubKubeconfigSecret, hubB))
	if standbyB == nil {
		t.Fatal("no standby Secret for hub B")
	}
	before := b.expectSecretFor(t, b.hubA)

	freezeHubKubeconfigSecret(t, b.spoke)
	csrsBefore := util.CSRNames(t, b.hubB, clusterName)
	b.hubA.StopAPIServer()
	// The switch comes after the connection timeout and the detection.
	util.WaitForEventCount(t, b.spoke, failover.ReasonStandbyCredentialsSwapFailed, 1, shortConnectionTimeout+failoverSlack)
	unfreezeHubKubeconfigSecret(t, b.spoke)

	util.WaitForClusterAvailable(t, b.hubB, clusterName, shortConnectionTimeout+failoverSlack)
	after := b.expectSecretFor(t, b.hubB)
	if !bytes.Equal(after[clientcert.TLSCertSecretKey], standbyB.Data[clientcert.TLSCertSecretKey]) {
		t.Errorf("the hub kubeconfig Secret does not hold hub B's standby certificate")
	}
	if got := util.CSRNames(t, b.hubB, clusterName); strings.Join(got, ",") != strings.Join(csrsBefore, ",") {
		t.Errorf("CSRs of %s on hub B: %v before the loss, %v after; want none sent when standby credentials wait", clusterName, csrsBefore, got)
	}
	b.waitEvent(t, hubsession.ReasonStandbyCredentialsUsed)
	// The hand-over kept hub A's credentials before its refused write.
	if kept := util.Secret(t, b.spoke, hubsession.StandbySecretName(klusterlet.DefaultHubKubeconfigSecret, primary)); kept == nil ||
		!bytes.Equal(kept.Data[clientcert.TLSCertSecretKey], before[clientcert.TLSCertSecretKey]) {
		t.Errorf("hub A's credentials were not kept in its standby Secret")
	}
	b.expectNotExited(t)
}

// freezeHubKubeconfigSecret makes the spoke refuse every write of the hub kubeconfig Secret in the agent namespace
// (a ValidatingAdmissionPolicy), and waits until the apiserver enforces it.
func freezeHubKubeconfigSecret(t *testing.T, spoke *framework.Spoke) {
	t.Helper()
	ctx := t.Context()
	fail := admissionregistrationv1.Fail
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: freezeSecretPolicy},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					ResourceNames: []string{klusterlet.DefaultHubKubeconfigSecret},
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"secrets"}},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "request.namespace != '" + util.AgentNamespace + "'",
				Message:    "the test freezes the hub kubeconfig Secret",
			}},
		},
	}
	if _, err := spoke.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: freezeSecretPolicy},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        freezeSecretPolicy,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	if _, err := spoke.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, statusTimeout, 200*time.Millisecond, func() (bool, error) {
		return secretWriteRefused(ctx, spoke)
	}, "the spoke refuses writes of the hub kubeconfig Secret")
}

// unfreezeHubKubeconfigSecret removes freezeHubKubeconfigSecret's policy and waits until the Secret can be written.
func unfreezeHubKubeconfigSecret(t *testing.T, spoke *framework.Spoke) {
	t.Helper()
	ctx := t.Context()
	if err := spoke.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, freezeSecretPolicy, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := spoke.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, freezeSecretPolicy, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, statusTimeout, 100*time.Millisecond, func() (bool, error) {
		refused, err := secretWriteRefused(ctx, spoke)
		return !refused, err
	}, "the spoke takes writes of the hub kubeconfig Secret again")
}

// secretWriteRefused reports whether a dry-run update of the hub kubeconfig Secret is refused by admission.
func secretWriteRefused(ctx context.Context, spoke *framework.Spoke) (bool, error) {
	s, err := spoke.Kube.CoreV1().Secrets(util.AgentNamespace).Get(ctx, klusterlet.DefaultHubKubeconfigSecret, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	_, err = spoke.Kube.CoreV1().Secrets(util.AgentNamespace).Update(ctx, s, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case err == nil:
		return false, nil
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
		return true, nil
	case apierrors.IsConflict(err):
		return false, nil // written meanwhile: tried again
	}
	return false, err
}
