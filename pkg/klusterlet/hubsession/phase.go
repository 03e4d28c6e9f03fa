package hubsession

import (
	"fmt"
	"time"
)

// Phase is the coarse state of a session.
type Phase string

const (
	// PhaseBootstrapping: the hub kubeconfig Secret is not valid for this hub; a CSR is being obtained with the
	// bootstrap identity.
	PhaseBootstrapping Phase = "Bootstrapping"
	// PhaseNoCredentials: neither the hub kubeconfig Secret nor the bootstrap kubeconfig can be used (design §3
	// scenario 4); the session waits for either to change.
	PhaseNoCredentials Phase = "NoCredentials"
	// PhaseRegistered: the Secret holds valid credentials for this hub and the main controllers run.
	PhaseRegistered Phase = "Registered"
)

// phaseFacts are what the session's loop chooses its next phase from, each time the hub kubeconfig Secret
// changes or a phase ends.
type phaseFacts struct {
	// hub and bootstrapSource name the hub and where its bootstrap kubeconfig was read from; secret is the hub
	// kubeconfig Secret as "namespace/name". They only go into messages.
	hub, bootstrapSource, secret string
	// secretPresent: the Secret exists and has data.
	secretPresent bool
	// checkErr is clientcert.CheckHubKubeconfig's verdict on the Secret for this hub now; nil: valid.
	checkErr error
	// forced is the reason of a pending ForceBootstrap, "" if none.
	forced string
	// bootstrapExpired: the bootstrap kubeconfig's client certificate expired, at bootstrapNotAfter
	// (BootstrapKubeconfig.Expired; token and exec credentials never expire).
	bootstrapExpired  bool
	bootstrapNotAfter time.Time
	// warnedExpiring: the session already gave the ReasonBootstrapKubeconfigExpiring warning.
	warnedExpiring bool
}

// phaseChoice is the loop's next phase and the warning to record on the way.
type phaseChoice struct {
	// phase is PhaseRegistered to run the main controllers, PhaseBootstrapping to request a certificate with
	// the bootstrap identity, PhaseNoCredentials to wait for the Secret (or, from outside, the bootstrap
	// kubeconfig) to change.
	phase Phase
	// message is the phase message of PhaseNoCredentials; the other phases set theirs as they run.
	message string
	// reason, when not "", is a Warning event to record with warning as its message. For PhaseNoCredentials
	// (ReasonBootstrapKubeconfigExpired) it is recorded only when the phase or message changes.
	reason, warning string
}

// choosePhase is the join flow's choice of design §3 (the four scenarios):
//   - the Secret is valid and no re-bootstrap was forced: the main controllers (scenarios 2 and 3), with a
//     one-time ReasonBootstrapKubeconfigExpiring warning when the bootstrap identity has expired (scenario 3);
//   - otherwise, with an expired bootstrap identity: no credentials (scenario 4), a ReasonBootstrapKubeconfigExpired
//     warning naming both causes;
//   - otherwise a bootstrap (scenario 1, or a forced one), with a ReasonHubKubeconfigInvalid warning when a
//     Secret exists that cannot be used.
func choosePhase(f phaseFacts) phaseChoice {
	notAfter := f.bootstrapNotAfter.UTC().Format(time.RFC3339)
	switch {
	case f.checkErr == nil && f.forced == "":
		c := phaseChoice{phase: PhaseRegistered}
		if f.bootstrapExpired && !f.warnedExpiring {
			c.reason = ReasonBootstrapKubeconfigExpiring
			c.warning = fmt.Sprintf("bootstrap kubeconfig %s of hub %s expired at %s; the hub kubeconfig is valid and used, but re-bootstrap would be impossible: supply a new bootstrap kubeconfig",
				f.bootstrapSource, f.hub, notAfter)
		}
		return c
	case f.bootstrapExpired:
		why := "no hub kubeconfig"
		if f.checkErr != nil && f.secretPresent {
			why = f.checkErr.Error()
		}
		msg := fmt.Sprintf("bootstrap kubeconfig %s of hub %s expired at %s and the hub kubeconfig cannot be used (%s): supply a new bootstrap kubeconfig",
			f.bootstrapSource, f.hub, notAfter, why)
		return phaseChoice{phase: PhaseNoCredentials, message: msg, reason: ReasonBootstrapKubeconfigExpired, warning: msg}
	default:
		c := phaseChoice{phase: PhaseBootstrapping}
		if f.checkErr != nil && f.secretPresent {
			c.reason = ReasonHubKubeconfigInvalid
			c.warning = fmt.Sprintf("hub kubeconfig secret %s cannot be used with hub %s (%s): requesting a new client certificate",
				f.secret, f.hub, f.checkErr)
		}
		return c
	}
}

// setPhase records the phase and message, tells the observer on a change and reports whether it changed.
func (s *Session) setPhase(p Phase, msg string) bool {
	s.mu.Lock()
	if s.phase == p && s.message == msg {
		s.mu.Unlock()
		return false
	}
	s.phase, s.message = p, msg
	s.mu.Unlock()
	s.obs.PhaseChanged(p, msg)
	return true
}
