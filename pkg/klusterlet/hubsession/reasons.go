package hubsession

// Reasons of the session's own events.
const (
	// ReasonHubKubeconfigInvalid: the stored hub kubeconfig cannot be used with this hub; a CSR follows.
	ReasonHubKubeconfigInvalid = "HubKubeconfigInvalid"
	// ReasonBootstrapKubeconfigExpired: the bootstrap client certificate expired and the hub kubeconfig is not
	// valid either, so the cluster cannot register until one of them is replaced.
	ReasonBootstrapKubeconfigExpired = "BootstrapKubeconfigExpired"
	// ReasonBootstrapKubeconfigExpiring is a warning that the bootstrap identity has expired while the hub
	// kubeconfig is still valid: a later re-bootstrap would be impossible.
	ReasonBootstrapKubeconfigExpiring = "BootstrapKubeconfigUnusable"
	// ReasonHubKubeconfigContested (Warning): the hub kubeconfig Secret, holding credentials this agent wrote or
	// used, was replaced by credentials it did not write (another agent name, another hub, another key): another
	// agent may be running for this cluster. The agent backs off before it writes the Secret again.
	ReasonHubKubeconfigContested = "HubKubeconfigContested"
	// ReasonMainControllersStarted: the main controllers run on this hub with the hub kubeconfig.
	ReasonMainControllersStarted = "HubControllersStarted"
)
