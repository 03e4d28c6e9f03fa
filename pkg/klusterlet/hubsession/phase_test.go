package hubsession

import (
	"errors"
	"testing"
	"time"
)

// TestChoosePhase walks the join flow's choice (design §3) through every branch: which phase comes next, and which
// warning is recorded on the way.
func TestChoosePhase(t *testing.T) {
	notAfter := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	invalid := errors.New("CertificateExpired: the client certificate expired")
	base := phaseFacts{hub: "primary", bootstrapSource: "/bootstrap/kubeconfig", secret: "agent-ns/hub-kubeconfig-secret",
		bootstrapNotAfter: notAfter}
	const (
		expiring       = "bootstrap kubeconfig /bootstrap/kubeconfig of hub primary expired at 2026-01-02T02:04:05Z; the hub kubeconfig is valid and used, but re-bootstrap would be impossible: supply a new bootstrap kubeconfig"
		expiredInvalid = "bootstrap kubeconfig /bootstrap/kubeconfig of hub primary expired at 2026-01-02T02:04:05Z and the hub kubeconfig cannot be used (CertificateExpired: the client certificate expired): supply a new bootstrap kubeconfig"
		expiredAbsent  = "bootstrap kubeconfig /bootstrap/kubeconfig of hub primary expired at 2026-01-02T02:04:05Z and the hub kubeconfig cannot be used (no hub kubeconfig): supply a new bootstrap kubeconfig"
		hubInvalid     = "hub kubeconfig secret agent-ns/hub-kubeconfig-secret cannot be used with hub primary (CertificateExpired: the client certificate expired): requesting a new client certificate"
	)
	cases := []struct {
		name string
		edit func(*phaseFacts)
		want phaseChoice
	}{
		{name: "scenario 2: valid Secret, valid bootstrap", edit: func(f *phaseFacts) { f.secretPresent = true },
			want: phaseChoice{phase: PhaseRegistered}},
		{name: "scenario 3: valid Secret, expired bootstrap, first time", edit: func(f *phaseFacts) { f.secretPresent, f.bootstrapExpired = true, true },
			want: phaseChoice{phase: PhaseRegistered, reason: ReasonBootstrapKubeconfigExpiring, warning: expiring}},
		{name: "scenario 3: valid Secret, expired bootstrap, already warned", edit: func(f *phaseFacts) {
			f.secretPresent, f.bootstrapExpired, f.warnedExpiring = true, true, true
		}, want: phaseChoice{phase: PhaseRegistered}},
		{name: "forced re-bootstrap with a valid Secret", edit: func(f *phaseFacts) { f.secretPresent, f.forced = true, "lasting 401" },
			want: phaseChoice{phase: PhaseBootstrapping}},
		{name: "forced re-bootstrap with an expired bootstrap: no credentials", edit: func(f *phaseFacts) {
			f.secretPresent, f.forced, f.bootstrapExpired = true, "lasting 401", true
		}, want: phaseChoice{phase: PhaseNoCredentials, message: expiredAbsent, reason: ReasonBootstrapKubeconfigExpired, warning: expiredAbsent}},
		{name: "scenario 1: invalid Secret", edit: func(f *phaseFacts) { f.secretPresent, f.checkErr = true, invalid },
			want: phaseChoice{phase: PhaseBootstrapping, reason: ReasonHubKubeconfigInvalid, warning: hubInvalid}},
		{name: "scenario 1: invalid Secret and a forced re-bootstrap", edit: func(f *phaseFacts) {
			f.secretPresent, f.checkErr, f.forced = true, invalid, "lasting 401"
		}, want: phaseChoice{phase: PhaseBootstrapping, reason: ReasonHubKubeconfigInvalid, warning: hubInvalid}},
		{name: "scenario 1: no Secret", edit: func(f *phaseFacts) { f.checkErr = invalid },
			want: phaseChoice{phase: PhaseBootstrapping}},
		{name: "scenario 4: invalid Secret, expired bootstrap", edit: func(f *phaseFacts) {
			f.secretPresent, f.checkErr, f.bootstrapExpired = true, invalid, true
		}, want: phaseChoice{phase: PhaseNoCredentials, message: expiredInvalid, reason: ReasonBootstrapKubeconfigExpired, warning: expiredInvalid}},
		{name: "scenario 4: no Secret, expired bootstrap", edit: func(f *phaseFacts) { f.checkErr, f.bootstrapExpired = invalid, true },
			want: phaseChoice{phase: PhaseNoCredentials, message: expiredAbsent, reason: ReasonBootstrapKubeconfigExpired, warning: expiredAbsent}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := base
			tc.edit(&f)
			if got := choosePhase(f); got != tc.want {
				t.Errorf("choosePhase =\n  %+v\nwant\n  %+v", got, tc.want)
			}
		})
	}
}
