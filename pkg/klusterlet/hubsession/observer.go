package hubsession

import (
	"time"

	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// Observer hears what a session reports to the process that runs it (the failover orchestrator). A session calls
// it from its loop, its controllers' goroutines and informer handlers, possibly concurrently; no method may block.
type Observer interface {
	// PhaseChanged is called on every change of the session's phase or of its message.
	PhaseChanged(phase Phase, message string)
	// ManagedClusterChanged is called with every ManagedCluster the main controllers' informer observes on the
	// hub (added or updated), and with nil when it was deleted.
	ManagedClusterChanged(mc *clusterv1.ManagedCluster)
	// ClientCertificate is called with the NotAfter of the client certificate each start of the main controllers
	// runs with.
	ClientCertificate(notAfter time.Time)
	// AddOnsChanged is called with the add-on registration states of the session's hub whenever they change
	// (only when Config.Controllers.AddOns is set).
	AddOnsChanged(states []failoverv1alpha1.AddOnRegistrationStatus)
	// Contested is called when the hub kubeconfig Secret, holding credentials of this process, is replaced by
	// credentials it did not write; message names what was found (also the ReasonHubKubeconfigContested event's).
	Contested(message string)
	// EpochRecorded is called with the session epoch whenever the main controllers change it
	// (managedcluster.DecideEpoch rules 3 and 4: the higher one the ManagedCluster carries, adopted, or one above
	// it, about to be recorded).
	EpochRecorded(epoch failoverv1alpha1.AgentEpoch)
}

// NopObserver ignores every report. Embed it to implement only some of Observer's methods.
type NopObserver struct{}

var _ Observer = NopObserver{}

// PhaseChanged does nothing.
func (NopObserver) PhaseChanged(Phase, string) {}

// ManagedClusterChanged does nothing.
func (NopObserver) ManagedClusterChanged(*clusterv1.ManagedCluster) {}

// ClientCertificate does nothing.
func (NopObserver) ClientCertificate(time.Time) {}

// AddOnsChanged does nothing.
func (NopObserver) AddOnsChanged([]failoverv1alpha1.AddOnRegistrationStatus) {}

// Contested does nothing.
func (NopObserver) Contested(string) {}

// EpochRecorded does nothing.
func (NopObserver) EpochRecorded(failoverv1alpha1.AgentEpoch) {}
