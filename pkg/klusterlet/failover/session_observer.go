package failover

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

// sessionObserver is the orchestrator's hubsession.Observer for the session of generation gen on hub: it records
// what the session reports as facts under r.mu and wakes the loop, which decides on them. Reports of a session
// that was already replaced (an older generation) are dropped, except a contested Secret: the hub kubeconfig
// Secret is the same for every session.
type sessionObserver struct {
	r   *Orchestrator
	gen int
	hub string
}

var _ hubsession.Observer = (*sessionObserver)(nil)

// update runs f under r.mu and reports true when the session is still the active one; a late call of a session
// that was already replaced changes nothing.
func (o *sessionObserver) update(f func(r *Orchestrator)) bool {
	o.r.mu.Lock()
	defer o.r.mu.Unlock()
	if o.r.generation != o.gen {
		return false
	}
	f(o.r)
	return true
}

// PhaseChanged records the session's phase, and since when it holds.
func (o *sessionObserver) PhaseChanged(p hubsession.Phase, msg string) {
	if o.update(func(r *Orchestrator) {
		if r.phase != p {
			r.phaseSince = r.o.Clock.Now()
		}
		r.phase, r.phaseMsg = p, msg
	}) {
		o.r.kick()
	}
}

// ManagedClusterChanged records the hub's acceptance of the cluster and its Available condition (nil: deleted).
func (o *sessionObserver) ManagedClusterChanged(mc *clusterv1.ManagedCluster) {
	if o.update(func(r *Orchestrator) {
		if mc == nil {
			r.acceptance = HubAcceptance{}
			r.mcAvail = ""
			return
		}
		r.acceptance = HubAcceptance{Observed: true, HubAcceptsClient: mc.Spec.HubAcceptsClient}
		if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted); c != nil {
			r.acceptance.AcceptedCondition = c.Status
		}
		r.mcAvail = ""
		if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c != nil {
			r.mcAvail = c.Status
		}
	}) {
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
	if o.update(func(r *Orchestrator) { r.addOns[o.hub] = list }) {
		o.r.o.Metrics.SetAddOnCertificateExpiry(list)
		o.r.kick()
	}
}

// Contested records the report of the hub kubeconfig Secret taken over by another writer, whichever session
// made it.
func (o *sessionObserver) Contested(msg string) {
	r := o.r
	r.mu.Lock()
	r.contested, r.contestedAt = msg, r.o.Clock.Now()
	r.mu.Unlock()
	r.kick()
}
