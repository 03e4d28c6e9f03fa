package failover

import (
	"time"

	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

// sessionObserver is the orchestrator's hubsession.Observer for the session of generation gen on hub: it records
// what the session reports in r.facts and enqueues a round, which decides on them. Reports of a session that was
// already replaced (an older generation) are dropped, except a contested Secret: the hub kubeconfig Secret is the
// same for every session. It runs in the session's goroutines.
type sessionObserver struct {
	r   *Orchestrator
	gen int
	hub string
}

var _ hubsession.Observer = (*sessionObserver)(nil)

// PhaseChanged records the session's phase, and since when it holds.
func (o *sessionObserver) PhaseChanged(p hubsession.Phase, msg string) {
	if o.r.facts.setPhase(o.gen, p, msg, o.r.o.Agent.Clock.Now()) {
		o.r.kick()
	}
}

// ManagedClusterChanged records the hub's acceptance of the cluster and its Available condition (nil: deleted).
func (o *sessionObserver) ManagedClusterChanged(mc *clusterv1.ManagedCluster) {
	if o.r.facts.setManagedCluster(o.gen, mc, o.r.o.Agent.Clock.Now()) {
		o.r.kick()
	}
}

// ClientCertificate sets the client certificate expiry metric.
func (o *sessionObserver) ClientCertificate(notAfter time.Time) {
	o.r.o.Metrics.SetClientCertificateExpiry(notAfter)
}

// AddOnsChanged records the add-on registration states of the session's hub (status.hubs[].addOns) and sets
// their certificate expiry metrics.
func (o *sessionObserver) AddOnsChanged(list []failoverv1alpha1.AddOnRegistrationStatus) {
	if o.r.facts.setAddOns(o.gen, o.hub, list) {
		o.r.o.Metrics.SetAddOnCertificateExpiry(list)
		o.r.kick()
	}
}

// Contested records the report of the hub kubeconfig Secret taken over by another writer, whichever session
// made it.
func (o *sessionObserver) Contested(msg string) {
	o.r.facts.setContested(msg, o.r.o.Agent.Clock.Now())
	o.r.kick()
}

// EpochRecorded records the session epoch the session recorded on its hub's ManagedCluster, or adopted from it
// (status.epoch).
func (o *sessionObserver) EpochRecorded(epoch failoverv1alpha1.AgentEpoch) {
	o.r.facts.setEpoch(o.hub, epoch.Number)
	o.r.kick()
}
