package failover

// Reasons of the failover feature. They are user-visible API: Kubernetes event reasons on the spoke (emitted on
// transitions, not on every sync), Verdict.Reason values and reasons of the FailoverConfig conditions. Normal
// events use a subject plus past participle; warnings are marked below.
const (
	// ReasonFailoverStarted (Normal): a switch from the active hub to another one began. The message names the
	// source hub, the target hub and the trigger.
	ReasonFailoverStarted = "FailoverStarted"
	// ReasonFailoverSucceeded (Normal): the main controllers run on the new hub with its credentials.
	ReasonFailoverSucceeded = "FailoverSucceeded"
	// ReasonFailoverFailed (Warning): bootstrapping on the target hub failed; the old Secret is kept and the
	// target is skipped for a while.
	ReasonFailoverFailed = "FailoverFailed"
	// ReasonFailbackStarted (Normal): a switch back to the primary hub began because the failback policy allows
	// it and the primary has been healthy long enough.
	ReasonFailbackStarted = "FailbackStarted"
	// ReasonPlannedSwitchRequested (Normal): the FailoverConfig asks for a switch to a named hub that is not the
	// active one. Also the Verdict.Reason of PlannedSwitch.
	ReasonPlannedSwitchRequested = "PlannedSwitchRequested"
	// ReasonHubBehind (Warning): the agent moves the cluster to a hub that the replicator last reported behind
	// the active hub (no hub in step was viable, or spec.forceSwitch forced a planned switch to it).
	ReasonHubBehind = "HubBehind"
	// ReasonHubReplicationUnknown (Warning): the agent moves the cluster to a hub that the replicator's report names
	// in step but has not confirmed for ReportStaleConfirmations of its intervals (status.hubs[].replication
	// Unknown): no hub confirmed in step was viable, and writes the replicator has not seen may be missing there.
	ReasonHubReplicationUnknown = "HubReplicationUnknown"
	// ReasonPlannedSwitchWaiting (Normal): a planned switch waits for its target, which the replicator reports
	// behind the active hub, to catch up: as long as that report lasts, unless spec.forceSwitch names the target.
	// Also the reason of the Progressing condition (True) while it waits.
	ReasonPlannedSwitchWaiting = "PlannedSwitchWaiting"
	// ReasonWorkAgentHeld (Warning): OCM's work agent stays on the hub the cluster left, because the hub it moved
	// to may be behind (WorkHold); the spoke keeps what it has.
	ReasonWorkAgentHeld = "WorkAgentHeld"
	// ReasonWorkAgentReleased: the work hold ended; OCM's work agent follows the cluster to its hub.
	ReasonWorkAgentReleased = "WorkAgentReleased"
	// ReasonNoViableHub (Warning): no configured hub can be used now; the agent reports Degraded, backs off and
	// keeps trying.
	ReasonNoViableHub = "NoViableHub"

	// ReasonHubLost (Warning): no request to the active hub succeeded for the hub connection timeout. Also the
	// Verdict.Reason of HubConnectionLost.
	ReasonHubLost = "HubLost"
	// ReasonHubUnreachable (Warning): the latest request to the active hub failed but the connection timeout has
	// not elapsed yet (Verdict.Reason of a NoFailover verdict while the countdown runs).
	ReasonHubUnreachable = "HubUnreachable"
	// ReasonHubRecovered (Normal): the active hub answers successfully again after being unreachable or lost.
	ReasonHubRecovered = "HubRecovered"
	// ReasonHubRejected (Warning): the active hub has rejected the cluster (hubAcceptsClient=false,
	// HubAcceptedManagedCluster=False, or 401/403 answers) for at least the rejection grace period. Also the
	// Verdict.Reason of HubRejected.
	ReasonHubRejected = "HubRejected"
	// ReasonHubRejectionPending (Warning): the active hub rejects the cluster but the grace period has not
	// elapsed (Verdict.Reason of a NoFailover verdict); a quick false→true flip ends here (FC-12).
	ReasonHubRejectionPending = "HubRejectionPending"
	// ReasonHubAcceptanceRevoked (Warning): the hub stopped accepting the cluster (transition observed).
	ReasonHubAcceptanceRevoked = "HubAcceptanceRevoked"
	// ReasonHubAcceptanceRestored (Normal): the hub accepts the cluster again (transition observed).
	ReasonHubAcceptanceRestored = "HubAcceptanceRestored"
	// ReasonHubAcceptancePending: the ManagedCluster was never accepted on this hub (hubAcceptsClient=false and
	// no HubAcceptedManagedCluster condition); this waits for the hub admin and is not a rejection.
	ReasonHubAcceptancePending = "HubAcceptancePending"
	// ReasonHubHealthy: nothing is pending on the active hub (Verdict.Reason of a quiet NoFailover verdict).
	ReasonHubHealthy = "HubHealthy"

	// ReasonNoValidCredentials (Warning): neither the hub kubeconfig nor the bootstrap kubeconfig of the active
	// hub is usable (design §3 scenario 4). Also the Verdict.Reason of CredentialsInvalid.
	ReasonNoValidCredentials = "NoValidCredentials"
	// ReasonBootstrapKubeconfigInvalid: the bootstrap kubeconfig of a configured hub is missing or does not
	// parse, so the cluster could not move to that hub. Reason of the FailoverConfig Degraded condition.
	ReasonBootstrapKubeconfigInvalid = "BootstrapKubeconfigInvalid"
	// ReasonBootstrapKubeconfigChanged (Normal): the bootstrap kubeconfig of a hub was added, changed or removed
	// and takes effect without a restart (FC-01, FC-02).
	ReasonBootstrapKubeconfigChanged = "BootstrapKubeconfigChanged"
	// ReasonAlternateHubShadowed (Warning): a FailoverConfig alternate has the name of a hub that
	// --bootstrap-kubeconfigs already configures; the file wins and the entry is ignored. Emitted when an entry becomes shadowed.
	ReasonAlternateHubShadowed = "AlternateHubShadowed"

	// ReasonStandbyProbeSucceeded (Normal): a hub's standby probe became Ready (emitted on the transition).
	ReasonStandbyProbeSucceeded = "StandbyProbeSucceeded"
	// ReasonStandbyProbeFailed (Warning): a hub's standby probe stopped being Ready or changed failure kind; the
	// message is ProbeResult.Message.
	ReasonStandbyProbeFailed = "StandbyProbeFailed"
	// ReasonStandbyCredentialsReady (Normal): a standby hub's credentials Secret holds a valid client certificate
	// of that hub (emitted on the transition): a switch to it sends no CSR.
	ReasonStandbyCredentialsReady = "StandbyCredentialsReady"
	// ReasonStandbyCredentialsRefused (Warning): a standby hub denied or failed the CSR for its standby
	// credentials, deleted it or issued an unusable certificate, or no client could be built for it; it stays a
	// cold standby and the CSR is retried with the bootstrap back-off.
	ReasonStandbyCredentialsRefused = "StandbyCredentialsRefused"
	// ReasonStandbyCredentialsSwapFailed (Warning): the credentials could not be handed over at a session start
	// (a Secret could not be read or written; the session then bootstraps if the hub kubeconfig Secret is not
	// valid), or the standby Secret of a hub removed from the configuration (at run time, or before the start)
	// could not be deleted.
	ReasonStandbyCredentialsSwapFailed = "StandbyCredentialsSwapFailed"
	// ReasonStandbyCredentialsRemoved (Normal): at start, the agent deleted the standby credentials Secret of a hub
	// that is no longer configured (removed while the agent was not running).
	ReasonStandbyCredentialsRemoved = "StandbyCredentialsRemoved"
	// ReasonHubSessionFailed (Warning): no hub session could be built on a hub (the message says why); the hub
	// is not started until its bootstrap kubeconfig changes.
	ReasonHubSessionFailed = "HubSessionFailed"
)

// Reasons of the FailoverConfig status conditions that are not also event reasons.
const (
	// ConditionReasonHubAvailable: Available=True, the cluster is Available on the active hub.
	ConditionReasonHubAvailable = "HubAvailable"
	// ConditionReasonHubNotAvailable: Available=False before the session reported a phase; otherwise the
	// reason is the session's phase (Bootstrapping, NoCredentials, Registered).
	ConditionReasonHubNotAvailable = "HubNotAvailable"
	// ConditionReasonSwitching: Progressing=True while the cluster moves to another hub.
	ConditionReasonSwitching = "Switching"
	// ConditionReasonStable: Progressing=False, no switch in progress.
	ConditionReasonStable = "Stable"
	// ConditionReasonDegraded: Degraded=True for a cause without a more specific reason.
	ConditionReasonDegraded = "Degraded"
	// ConditionReasonAsExpected: Degraded=False.
	ConditionReasonAsExpected = "AsExpected"
	// ConditionReasonNotHeld is the WorkAgentHeld condition's reason while no work hold lasts.
	ConditionReasonNotHeld = "NotHeld"
	// ConditionReasonHeldCredentialsRejected: WorkAgentHeld=True for a hold that began when the hub held on
	// rejected the credentials (WorkHold.Discard); a restarted agent reads it from there.
	ConditionReasonHeldCredentialsRejected = "HeldCredentialsRejected"
)
