package failover_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	// brokenHub is an alternate whose bootstrap Secret holds garbage.
	brokenHub       = "hub-broken"
	brokenHubSecret = "hub-broken-bootstrap"
	// untrustedHub is an alternate whose bootstrap kubeconfig names hub B's server with hub A's serving CA.
	untrustedHub       = "hub-untrusted"
	untrustedHubSecret = "hub-untrusted-bootstrap"
	// customClaim is a custom ClusterClaim created on the spoke before the agent starts.
	customClaim      = "region.example.com"
	customClaimValue = "eu-west-7"
)

// TestFailoverWhenHubAStops stops hub A's kube-apiserver: the cluster becomes Available on hub B within
// hubConnectionTimeout (30s) + failoverSlack, with the same cluster and agent name and its claims, the Secret
// holds hub B's credentials, and the FailoverConfig status and events record the failover. Before that, the
// standby probes report hub B Ready, an alternate with a garbage Secret InvalidKubeconfig and one whose CA does
// not sign its server's certificate ServerUntrusted. After hub A comes
// back, failback policy None keeps the cluster on hub B.
func TestFailoverWhenHubAStops(t *testing.T) {
	t.Parallel()
	s := spec(connectionTimeout)
	s.AlternateHubs = []failoverv1alpha1.AlternateHub{{Name: brokenHub, BootstrapKubeconfigSecretRef: brokenHubSecret},
		{Name: untrustedHub, BootstrapKubeconfigSecretRef: untrustedHubSecret}}
	b := newBed(t, bedOptions{
		spec: s,
		beforeAgent: func(b *bed) {
			util.CreateClusterClaim(t, b.spoke, customClaim, customClaimValue)
			util.ApplyBootstrapSecret(t, b.spoke, brokenHubSecret, []byte("this is not a kubeconfig"))
			untrusted, err := clientcmd.Load(b.hubB.BootstrapKubeconfig())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range untrusted.Clusters {
				c.CertificateAuthorityData = b.hubA.CAData()
			}
			data, err := clientcmd.Write(*untrusted)
			if err != nil {
				t.Fatal(err)
			}
			util.ApplyBootstrapSecret(t, b.spoke, untrustedHubSecret, data)
		},
	})
	before := b.expectSecretFor(t, b.hubA)

	// Standby probes: hub B is Ready, the broken alternate is clearly not.
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "hub-b probe Ready", probeIs(hubB, failoverv1alpha1.HubProbeReady, ""))
	fc := util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "hub-broken probe InvalidKubeconfig",
		probeIs(brokenHub, failoverv1alpha1.HubProbeInvalidKubeconfig, brokenHubSecret))
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "hub-untrusted probe ServerUntrusted",
		probeIs(untrustedHub, failoverv1alpha1.HubProbeServerUntrusted, "not trusted"))
	if h := util.HubProbe(fc, hubB); h.Server != b.hubB.URL() || h.LastProbeTime == nil || h.LastSuccessTime == nil {
		t.Errorf("status.hubs[%s] = %+v, want server %s and probe/success times", hubB, *h, b.hubB.URL())
	}
	// The primary is the active hub from the start, so it is never probed as a standby: its session makes the
	// same requests.
	for _, reason := range []string{failover.ReasonStandbyProbeSucceeded, failover.ReasonStandbyProbeFailed} {
		for _, m := range util.EventMessages(t, b.spoke, reason) {
			if strings.Contains(m, "standby hub "+primary+" ") || strings.Contains(m, "standby hub "+primary+":") {
				t.Errorf("%s event for the active hub %s: %q", reason, primary, m)
			}
		}
	}
	// A hub the cluster could not move to needs attention before a disaster.
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "Degraded BootstrapKubeconfigInvalid naming hub-broken",
		func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
			c := metaCondition(fc, failoverv1alpha1.ConditionDegraded)
			ok := c != nil && c.Status == metav1.ConditionTrue && c.Reason == failover.ReasonBootstrapKubeconfigInvalid &&
				strings.Contains(c.Message, brokenHub)
			return ok, "Degraded is not True/BootstrapKubeconfigInvalid naming " + brokenHub
		})
	b.expectEvents(t, failover.ReasonStandbyProbeSucceeded, failover.ReasonStandbyProbeFailed)

	// Hot standby: while hub B is a standby it issues the agent a certificate, kept in hub B's own Secret; the
	// hub kubeconfig Secret keeps hub A's credentials.
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout+failoverSlack, "hub-b standby credentials Ready", standbyCredentialsAre(hubB, failoverv1alpha1.StandbyCredentialsReady))
	standbyB := util.Secret(t, b.spoke, hubsession.StandbySecretName(klusterlet.DefaultHubKubeconfigSecret, hubB))
	if standbyB == nil {
		t.Fatalf("no standby Secret for hub B")
	}
	if err := clientcert.CheckHubKubeconfig(standbyB.Data, clusterName, agentName, hubInfo(t, b.hubB), time.Now()); err != nil {
		t.Fatalf("hub B's standby Secret is not valid for hub B: %v", err)
	}
	if standbyB.Labels[hubsession.StandbyHubLabel] != hubB {
		t.Errorf("hub B's standby Secret labels %v, want %s=%s", standbyB.Labels, hubsession.StandbyHubLabel, hubB)
	}
	b.expectSecretFor(t, b.hubA)
	csrsBefore := util.CSRNames(t, b.hubB, clusterName)

	// Hub A is lost: its kube-apiserver stops (etcd, the hub controller and the proxy stay).
	stopped := time.Now()
	b.hubA.StopAPIServer()
	mc := util.WaitForClusterAvailable(t, b.hubB, clusterName, connectionTimeout+failoverSlack)
	elapsed := time.Since(stopped)
	t.Logf("MEASURED failover time, hubConnectionTimeout %s: stop of hub A's apiserver -> cluster Available on hub B in %s (%s beyond the timeout)",
		connectionTimeout, elapsed.Round(100*time.Millisecond), (elapsed - connectionTimeout).Round(100*time.Millisecond))
	// The agent counts the silence from its last answered request, which precedes the stop by up to one
	// heartbeat interval (a third of the timeout, Orchestrator.heartbeat) when nothing else was sent since: a
	// switch earlier than that bound was made while hub A still answered, or on the first failed request.
	if earliest := connectionTimeout - connectionTimeout/3; elapsed < earliest {
		t.Errorf("cluster Available on hub B %s after hub A stopped, before %s (the connection timeout %s less one heartbeat interval)",
			elapsed, earliest, connectionTimeout)
	}

	// Same identity, claims present on B.
	if got := mc.Status.ClusterClaims; util.ClaimValue(mc, customClaim) != customClaimValue {
		t.Errorf("ManagedCluster %s on hub B: claim %s missing or wrong; claims %v", clusterName, customClaim, got)
	}
	after := b.expectSecretFor(t, b.hubB)
	if bytes.Equal(before[clientcert.TLSKeySecretKey], after[clientcert.TLSKeySecretKey]) {
		t.Errorf("hub kubeconfig secret: the key for hub B is the key used with hub A; want a new key")
	}
	// The switch used the standby credentials: no CSR on hub B, and hub A's credentials are kept for a switch back.
	if !bytes.Equal(after[clientcert.TLSCertSecretKey], standbyB.Data[clientcert.TLSCertSecretKey]) {
		t.Errorf("hub kubeconfig secret after the switch does not hold hub B's standby certificate")
	}
	if got := util.CSRNames(t, b.hubB, clusterName); strings.Join(got, ",") != strings.Join(csrsBefore, ",") {
		t.Errorf("CSRs of %s on hub B: %v before the switch, %v after; want no CSR on a switch to a hot standby", clusterName, csrsBefore, got)
	}
	t.Logf("MEASURED CSRs sent to hub B during the switch: %d", len(util.CSRNames(t, b.hubB, clusterName))-len(csrsBefore))
	b.waitEvent(t, hubsession.ReasonStandbyCredentialsUsed)
	if kept := util.Secret(t, b.spoke, hubsession.StandbySecretName(klusterlet.DefaultHubKubeconfigSecret, primary)); kept == nil ||
		!bytes.Equal(kept.Data[clientcert.TLSCertSecretKey], before[clientcert.TLSCertSecretKey]) {
		t.Errorf("hub A's credentials were not kept in its standby Secret")
	}
	csrs, err := b.hubB.Kube.CertificatesV1().CertificateSigningRequests().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, csr := range csrs.Items {
		if csr.Spec.Username != b.hubB.BootstrapUser() && csr.Spec.Username != framework.AgentUser(clusterName, agentName) {
			t.Errorf("CSR %s on hub B from user %q", csr.Name, csr.Spec.Username)
		}
	}

	fc = util.WaitForFailoverConfig(t, b.spoke, statusTimeout, "failover primary -> hub-b recorded",
		lastFailoverIs(primary, hubB, failoverv1alpha1.FailoverReasonHubConnectionLost, 1))
	if !util.ConditionIs(fc, failoverv1alpha1.ConditionAvailable, metav1.ConditionTrue) || fc.Status.ActiveHub != hubB {
		t.Errorf("after the failover: %s; want activeHub %s and Available True", util.DescribeFailoverStatus(fc), hubB)
	}
	if fc.Status.LastFailover.Message == "" || fc.Status.LastFailover.DurationMilliseconds <= 0 {
		t.Errorf("lastFailover %+v: want a message and a duration", *fc.Status.LastFailover)
	}
	t.Logf("agent-measured failover (trigger -> Available): %dms; message %q", fc.Status.LastFailover.DurationMilliseconds, fc.Status.LastFailover.Message)
	b.expectEvents(t, failover.ReasonFailoverStarted, failover.ReasonFailoverSucceeded)

	// Hub A returns; with failback policy None the cluster stays on B.
	b.hubA.StartAPIServer()
	util.WaitForFailoverConfig(t, b.spoke, statusTimeout+probeInterval, "primary probe Ready again", probeIs(primary, failoverv1alpha1.HubProbeReady, ""))
	framework.Consistently(t, healthyFor+3*probeInterval, time.Second, func() (bool, error) {
		fc, err := util.GetFailoverConfig(b.spoke)
		if err != nil {
			return false, err
		}
		return fc.Status.ActiveHub == hubB && fc.Status.FailoverCount == 1, nil
	}, "with failback policy None the cluster stays on hub B")
	util.WaitForClusterAvailable(t, b.hubB, clusterName, time.Second)

	// A planned switch to the hub whose bootstrap kubeconfig is garbage waits; the agent neither moves nor dies.
	util.UpdateFailoverConfigSpec(t, b.spoke, func(s *failoverv1alpha1.FailoverConfigSpec) { s.SwitchTo = brokenHub })
	framework.Consistently(t, 2*probeInterval, time.Second, func() (bool, error) {
		if done, err := b.agent.Exited(); done {
			return false, fmt.Errorf("the agent exited: %v", err)
		}
		fc, err := util.GetFailoverConfig(b.spoke)
		if err != nil {
			return false, err
		}
		return fc.Status.ActiveHub == hubB && fc.Status.FailoverCount == 1, nil
	}, "switchTo a hub with an invalid bootstrap kubeconfig does not move the cluster")
	util.WaitForClusterAvailable(t, b.hubB, clusterName, statusTimeout)
	b.expectNotExited(t)
}
