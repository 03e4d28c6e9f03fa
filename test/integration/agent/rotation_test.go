package agent_test

import (
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// testRotation: on a hub whose certificates live shortCertDuration (plus the signer's 5-minute backdate), the
// agent sends a renewal CSR with its current certificate (the real hub controller approves it because the
// requester is the certificate's CN) and stores a new tls.crt before the old one expires; the cluster and agent
// names stay, the cluster stays Available and the lease keeps being renewed.
func testRotation(t *testing.T, hub *framework.Hub, spoke *framework.Spoke) {
	const cluster, agent = "rotation", "agentr"
	a := startAgent(t, spoke, agentSpec{cluster: cluster, agent: agent, secret: "hks-" + cluster, bootstrap: hub.BootstrapKubeconfig()})
	waitAvailable(t, hub, cluster, joinTimeout)
	first := waitValidSecret(t, spoke, hub, a.Secret, cluster, agent, hubTimeout)
	leaf1 := parseLeaf(t, first.Data[secretKeyTLSCert])
	if life := leaf1.NotAfter.Sub(leaf1.NotBefore); life > shortCertDuration+6*time.Minute {
		t.Fatalf("first certificate lives %s; the hub's cap of %s did not apply", life, shortCertDuration)
	}
	setLeaseDuration(t, hub, cluster, leaseSeconds)

	framework.Eventually(t, rotationTimeout, pollInterval, func() (bool, error) {
		s := getSecret(t, spoke, a.Secret)
		leaf, err := verifyHubKubeconfig(s.Data, hub, cluster, agent, time.Now())
		if err != nil {
			return false, err
		}
		return leaf.SerialNumber.Cmp(leaf1.SerialNumber) != 0, nil
	}, "a new certificate for %s/%s in the secret", cluster, agent)
	if rotatedAt := time.Now(); !rotatedAt.Before(leaf1.NotAfter) {
		t.Errorf("rotated at %s, after the first certificate expired at %s", rotatedAt, leaf1.NotAfter)
	}

	csrs := csrsOf(t, hub, cluster)
	if len(csrs) < 2 {
		t.Fatalf("%d CSRs for %s, want the bootstrap one and at least one renewal", len(csrs), cluster)
	}
	checkCSR(t, &csrs[0], cluster, agent, hub.BootstrapUser())
	renewal := csrs[1]
	checkCSR(t, &renewal, cluster, agent, subjectPrefix+cluster+":"+agent)
	approvedBy := ""
	for _, c := range renewal.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved {
			approvedBy = c.Reason
		}
	}
	if approvedBy == "" || approvedBy == framework.ApprovedReason {
		t.Errorf("renewal CSR %s approval reason %q, want an approval by the hub controller", renewal.Name, approvedBy)
	}

	waitEvent(t, spoke, "CSRCreated", renewal.Name, "rotation")
	waitLeaseRenewals(t, hub, cluster, 2, 3*leaseSeconds*time.Second+hubTimeout)
	if mc := getMC(t, hub, cluster); !joinedAndAvailable(mc) {
		t.Errorf("ManagedCluster %s not Joined and Available after the rotation", cluster)
	}
	if s := getSecret(t, spoke, a.Secret); string(s.Data[secretKeyClusterName]) != cluster || string(s.Data[secretKeyAgentName]) != agent {
		t.Errorf("identity after rotation %s/%s, want %s/%s", s.Data[secretKeyClusterName], s.Data[secretKeyAgentName], cluster, agent)
	}
	requireRunning(t, a)
}
