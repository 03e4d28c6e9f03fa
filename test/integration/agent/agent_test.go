package agent_test

import (
	"sync"
	"testing"
	"time"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// suite holds the fixtures shared by the subtests of TestAgent.
type suite struct {
	// hub runs kube-controller-manager as signer and OCM's hub registration controller (auto-approval); its
	// audit log has the lists of ManagedClusters and CSRs (listAuditPolicy).
	hub *framework.Hub
	// ca is hub's client CA, to issue expired or mismatching certificates.
	ca *util.ClientCA
	// spokeA belongs to the join chain alone; spokeB is shared (see the package comment).
	spokeA, spokeB *framework.Spoke
	// firstJoin is closed once the join chain's first join is over (or failed), so that the join latency it
	// reports is measured without ten other agents joining at the same moment; the other scenarios wait for it.
	firstJoin     chan struct{}
	firstJoinOnce sync.Once
}

// firstJoinDone releases the scenarios waiting for the first join.
func (s *suite) firstJoinDone() { s.firstJoinOnce.Do(func() { close(s.firstJoin) }) }

// afterFirstJoin runs test after the first join is over.
func (s *suite) afterFirstJoin(test func(*testing.T, *suite)) func(*testing.T) {
	return func(t *testing.T) {
		t.Parallel()
		<-s.firstJoin
		test(t, s)
	}
}

// TestAgent runs the whole real-wire suite against two hubs and two spokes (see the package comment).
func TestAgent(t *testing.T) {
	start := time.Now()
	t.Cleanup(func() { t.Logf("suite wall time %s", time.Since(start).Round(time.Second)) })

	// Spoke B is shared by both hubs' scenarios, so it starts first.
	spokeB := framework.StartSpoke(t)

	t.Run("short-lived certificates", func(t *testing.T) {
		t.Parallel()
		hub := framework.StartHub(t, framework.HubOptions{Name: "short", Signer: framework.SignerInProcess,
			CertificateDuration: shortCertDuration, HubController: true})
		testRotation(t, hub, spokeB)
	})

	t.Run("ocm hub", func(t *testing.T) {
		t.Parallel()
		s := &suite{spokeB: spokeB, firstJoin: make(chan struct{})}
		s.hub = framework.StartHub(t, framework.HubOptions{Name: "ocm", Signer: framework.SignerKCM, HubController: true,
			AuditPolicy: []byte(listAuditPolicy)})
		s.ca = util.HubClientCA(t, s.hub)
		s.spokeA = framework.StartSpoke(t)

		t.Run("join chain", func(t *testing.T) {
			t.Parallel()
			defer s.firstJoinDone()
			testJoinChain(t, s)
		})
		t.Run("FC-04 FC-05 invalid flags", s.afterFirstJoin(testInvalidFlags))
		t.Run("FC-04 FC-05 accepted URLs and names", s.afterFirstJoin(testAcceptedURLsAndNames))
		t.Run("FC-07 damaged secret", s.afterFirstJoin(testDamagedSecret))
		t.Run("contested secret", s.afterFirstJoin(testContestedSecret))
		t.Run("FC-09 both expired", s.afterFirstJoin(testBothExpired))
		t.Run("FC-15 bootstrap file references", s.afterFirstJoin(testBootstrapFileReferences))
		t.Run("FC-10 clock skew", s.afterFirstJoin(testClockSkew))
		t.Run("FC-16 status churn", s.afterFirstJoin(testStatusChurn))
		t.Run("FC-13 hosted spoke credentials", s.afterFirstJoin(testHostedSpokeCredentials))
		t.Run("generated names survive a restart before the first certificate", s.afterFirstJoin(testGeneratedNamesSurviveRestart))
		t.Run("hub informers wait for the hub's acceptance", s.afterFirstJoin(testInformersWaitForAcceptance))
		t.Run("first start with leftover CSRs on the hub", s.afterFirstJoin(testLeftoverCSRs))
		t.Run("hollow agents", s.afterFirstJoin(testHollowAgents))
	})
}
