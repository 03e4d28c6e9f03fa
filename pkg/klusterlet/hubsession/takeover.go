package hubsession

import (
	"fmt"
	"time"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

// observe looks at the hub kubeconfig Secret's data (checkErr: CheckHubKubeconfig's verdict for this hub) and
// reports a takeover (Takeover) once. Only the session's goroutine calls it.
func (s *Session) observe(data map[string][]byte, checkErr error) {
	cert := data[clientcert.TLSCertSecretKey]
	report, ours := Takeover(s.ours, cert, s.config.BootstrapBackoff.Wrote(cert))
	s.ours = ours
	if report {
		s.reportContested(data, checkErr)
	}
}

// Takeover decides whether the hub kubeconfig Secret was taken over by another writer. ours says whether the
// credentials last seen were this process's (written, or run with); cert is the certificate seen now and wrote
// whether this process wrote it. Rules:
//  1. No certificate (the Secret deleted or emptied): not a takeover, ours unchanged — a foreign Secret created
//     after a deletion still is one.
//  2. A certificate this process wrote: not a takeover; ours.
//  3. Another certificate: a takeover when the credentials were ours; from then on not ours, so each takeover is
//     reported once.
func Takeover(ours bool, cert []byte, wrote bool) (report, nowOurs bool) {
	switch {
	case len(cert) == 0:
		return false, ours
	case wrote:
		return false, true
	default:
		return ours, false
	}
}

// reportContested reports a hub kubeconfig Secret taken over by another writer (event, Observer.Contested).
// Credentials that cannot be used here (checkErr != nil) also grow the hub's bootstrap back-off, so that the agent
// does not overwrite them at once; valid ones (the same names on the same hub) are used as they are.
func (s *Session) reportContested(data map[string][]byte, checkErr error) {
	owner := clientcert.OwnerOf(data)
	what := fmt.Sprintf("cluster %q, agent %q, hub server %q", owner.ClusterName, owner.AgentName, owner.Server)
	var msg string
	if checkErr == nil {
		msg = fmt.Sprintf("hub kubeconfig secret %s/%s was replaced by credentials this agent did not write (%s), valid for it: "+
			"another agent may be running for this cluster; the agent uses them as they are",
			s.config.Namespace, s.config.SecretName, what)
	} else {
		st := s.config.BootstrapBackoff.Contested(s.backoffKey())
		next := "now"
		if !st.NotBefore.IsZero() {
			next = st.NotBefore.UTC().Format(time.RFC3339)
		}
		msg = fmt.Sprintf("hub kubeconfig secret %s/%s was replaced by credentials this agent did not write (%s; %v): "+
			"another agent may be running for this cluster; next CSR to hub %s not before %s",
			s.config.Namespace, s.config.SecretName, what, clientcert.InvalidReasonOf(checkErr), s.hub.Name, next)
	}
	s.config.Recorder.Warning(ReasonHubKubeconfigContested, msg)
	s.obs.Contested(msg)
}
