package v1alpha1

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HubNamePrimary is the reserved name of the primary hub, the one the agent's --bootstrap-kubeconfig points at.
// It is not listed in spec.alternateHubs; status.activeHub, status.hubs[].name, spec.switchTo and the
// from/to of a FailoverRecord use it.
const HubNamePrimary = "primary"

// KubeconfigSecretKey is the key that holds the kubeconfig in every kubeconfig Secret the agent and the
// replicator read or write: the hub kubeconfig Secret (OCM's hub-kubeconfig-secret, whose other keys are in
// package clientcert), a bootstrap Secret (AlternateHub.BootstrapKubeconfigSecretRef, the klusterlet operator's
// bootstrap-hub-kubeconfig) and, by default, a replicator hub's Secret (ReplicationHub.KubeconfigSecret). It is
// OCM's key.
const KubeconfigSecretKey = "kubeconfig"

// MaxAlternateHubs is the maximum number of entries in spec.alternateHubs.
const MaxAlternateHubs = 16

// Defaults of the optional durations of FailoverConfigSpec, applied by the CRD schema on the server and by
// WithDefaults in code.
const (
	// DefaultHubConnectionTimeout is the default of spec.hubConnectionTimeout: longer than a hub's etcd stall of
	// 40 s plus the up to a third of the timeout between the agent's last answered request and the stall, so a hub
	// that survives such a stall, or an apiserver or etcd restart (seconds), keeps its clusters (make bench,
	// detection scenario; docs/failoverconfig.md "Choosing hubConnectionTimeout").
	DefaultHubConnectionTimeout = 90 * time.Second
	// DefaultHubRejectionGracePeriod is the default of spec.hubRejectionGracePeriod.
	DefaultHubRejectionGracePeriod = 5 * time.Minute
	// DefaultFailedHubSkipPeriod is the default of spec.failedHubSkipPeriod.
	DefaultFailedHubSkipPeriod = 5 * time.Minute
	// DefaultProbeInterval is the default of spec.probeInterval.
	DefaultProbeInterval = 30 * time.Second
	// DefaultFailbackHealthyFor is the default of spec.failback.healthyFor.
	DefaultFailbackHealthyFor = 10 * time.Minute
)

// Minimums of the durations of FailoverConfigSpec, enforced by the CRD schema (CEL) and by
// ValidateFailoverConfig. Keep them in step with the XValidation markers below.
const (
	// MinHubConnectionTimeout is the minimum of spec.hubConnectionTimeout.
	MinHubConnectionTimeout = 10 * time.Second
	// MinHubRejectionGracePeriod is the minimum of spec.hubRejectionGracePeriod.
	MinHubRejectionGracePeriod = 10 * time.Second
	// MinFailedHubSkipPeriod is the minimum of spec.failedHubSkipPeriod.
	MinFailedHubSkipPeriod = 10 * time.Second
	// MinProbeInterval is the minimum of spec.probeInterval.
	MinProbeInterval = 5 * time.Second
	// MinFailbackHealthyFor is the minimum of spec.failback.healthyFor.
	MinFailbackHealthyFor = 10 * time.Second
)

// Condition types of FailoverConfigStatus.Conditions.
const (
	// ConditionAvailable is True while the cluster is joined to the active hub and its main controllers run.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while a switch to another hub (failover, planned switch or failback) is in
	// progress.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when something needs attention: no hub is viable, an alternate hub's
	// bootstrap kubeconfig is invalid, or the last switch failed. The message names the hub and the cause.
	ConditionDegraded = "Degraded"
	// ConditionHubKubeconfigContested is True for an hour after the hub kubeconfig Secret, holding credentials
	// this agent wrote, was replaced by credentials it did not write: another agent (a second replica without
	// leader election, OCM's own registration agent) may be running for this cluster. The message names the
	// cluster, agent and hub server found. The condition is absent until that first happens.
	ConditionHubKubeconfigContested = "HubKubeconfigContested"
	// ConditionWorkAgentHeld is True while OCM's work agent is held on a hub the cluster left: the agent moved the
	// cluster to a hub the replicator reported behind (or could not confirm in step), and the hub kubeconfig Secret,
	// which the work agent reads, keeps the credentials of the hub left until the replicator reports that hub in
	// step on the hub the cluster is on, or spec.forceSwitch names the hub the cluster is on. The spoke keeps what
	// it has meanwhile. The message names both hubs and the time the hold began.
	ConditionWorkAgentHeld = "WorkAgentHeld"
)

// FailoverConfig configures the hub failover of a klusterlet-failover agent. The agent reads the one
// FailoverConfig in its own namespace (the component namespace) and writes its status.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="ActiveHub",type=string,JSONPath=`.status.activeHub`,description="Hub the cluster is registered with"
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`,description="Whether the cluster is joined to the active hub"
// +kubebuilder:printcolumn:name="Failovers",type=integer,JSONPath=`.status.failoverCount`,description="Number of completed hub switches"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type FailoverConfig struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists the alternate hubs and the failover timings. An empty spec means: the primary hub only, with
	// default timings.
	// +optional
	// +kubebuilder:default={}
	Spec FailoverConfigSpec `json:"spec,omitempty"`

	// status is written by the agent only.
	// +optional
	Status FailoverConfigStatus `json:"status,omitempty"`
}

// FailoverConfigSpec is the desired failover behaviour. Every duration is a Go duration string ("90s", "5m",
// "1h30m"); an omitted duration takes its default (filled in by the API server from the CRD schema, and by
// WithDefaults in code).
type FailoverConfigSpec struct {
	// alternateHubs are the hubs the cluster may move to, in order of preference, after the primary hub
	// (the one of --bootstrap-kubeconfig, named "primary"). Names are unique; at most 16 entries.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	AlternateHubs []AlternateHub `json:"alternateHubs,omitempty"`

	// hubConnectionTimeout is how long no request to the active hub may succeed before the agent fails over
	// (trigger "HubConnectionLost"). Default 90s, minimum 10s.
	// +optional
	// +kubebuilder:default="90s"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('10s')",message="hubConnectionTimeout must be at least 10s"
	HubConnectionTimeout *metav1.Duration `json:"hubConnectionTimeout,omitempty"`

	// hubRejectionGracePeriod is how long the active hub must keep rejecting the cluster (its ManagedCluster
	// has hubAcceptsClient=false or condition HubAcceptedManagedCluster=False, or requests for the cluster's own
	// objects keep failing with 401/403) before the agent fails over (trigger "HubRejected"). A rejection that
	// ends sooner does not move the cluster. Default 5m, minimum 10s.
	// +optional
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('10s')",message="hubRejectionGracePeriod must be at least 10s"
	HubRejectionGracePeriod *metav1.Duration `json:"hubRejectionGracePeriod,omitempty"`

	// failedHubSkipPeriod is how long a hub that the agent failed to join, or failed over from, is skipped when
	// choosing the next hub (status.hubs[].skippedUntil), so that the cluster does not hop between hubs.
	// Default 5m, minimum 10s.
	// +optional
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('10s')",message="failedHubSkipPeriod must be at least 10s"
	FailedHubSkipPeriod *metav1.Duration `json:"failedHubSkipPeriod,omitempty"`

	// probeInterval is the period of the standby probes of the hubs that are not active (bootstrap kubeconfig
	// parses, server answers, SelfSubjectAccessReviews allow creating CSRs and ManagedClusters); results go to
	// status.hubs. Default 30s, minimum 5s.
	// +optional
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('5s')",message="probeInterval must be at least 5s"
	ProbeInterval *metav1.Duration `json:"probeInterval,omitempty"`

	// switchTo asks for a planned switch: the name of the hub the cluster should be registered with, "primary",
	// the name of an entry of alternateHubs, or the name of a hub the agent has from a bootstrap kubeconfig file
	// (under OCM's klusterlet operator, one per --bootstrap-kubeconfigs entry, e.g. "bootstrap-hub-b"). The API
	// server checks only that it is a DNS-1123 label, since the agent alone knows its file hubs; the agent
	// reports a name it does not know as Degraded and does not switch. While set and different from
	// status.activeHub, the agent moves to that hub (trigger "PlannedSwitch") once its standby probe is Ready and
	// it is not skipped. While set, the named hub takes the place of the primary as the preferred hub: automatic
	// failover away from it still happens, and failback returns to it instead of to the primary. Empty means no
	// planned switch.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	SwitchTo string `json:"switchTo,omitempty"`

	// forceSwitch names a hub that a planned switch (switchTo, or failback) goes to without waiting for the
	// replicator to report it in step with the active hub. Without it, a planned switch to a hub the replicator
	// reports behind (status.hubs[].replication Behind) waits as long as that lasts, however long a catch-up
	// takes (event PlannedSwitchWaiting): a switch to a hub behind makes OCM's work agent apply the older
	// ManifestWorks of that hub, and creates and edits made on the active hub since are lost to the cluster. Set
	// it when the replicator cannot catch the hub up (it is stopped, or cannot reach the active hub) and the
	// switch matters more; the switch then goes ahead with a HubBehind warning. The same names as switchTo;
	// empty: no planned switch is forced.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	ForceSwitch string `json:"forceSwitch,omitempty"`

	// failback controls whether the cluster returns to the primary hub after a failover.
	// Default: policy None.
	// +optional
	// +kubebuilder:default={}
	Failback *FailbackSpec `json:"failback,omitempty"`
}

// AlternateHub is a hub the cluster may move to.
type AlternateHub struct {
	// name identifies the hub in switchTo and status. A DNS-1123 label (lower-case alphanumerics and '-',
	// at most 63 characters), unique within alternateHubs, and not "primary" (reserved for the hub of
	// --bootstrap-kubeconfig).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self != 'primary'",message="name \"primary\" is reserved for the hub of --bootstrap-kubeconfig"
	Name string `json:"name"`

	// bootstrapKubeconfigSecretRef is the name of a Secret in the FailoverConfig's namespace whose key
	// "kubeconfig" holds the bootstrap kubeconfig of this hub. A DNS-1123 subdomain. The Secret is watched:
	// changes take effect without a restart.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	BootstrapKubeconfigSecretRef string `json:"bootstrapKubeconfigSecretRef"`
}

// FailbackPolicy says whether the cluster returns to the preferred hub after a failover.
// +kubebuilder:validation:Enum=None;Primary
type FailbackPolicy string

const (
	// FailbackPolicyNone keeps the cluster on the hub it failed over to.
	FailbackPolicyNone FailbackPolicy = "None"
	// FailbackPolicyPrimary moves the cluster back to the primary hub (or to spec.switchTo's hub when set)
	// once that hub's standby probe has been Ready for failback.healthyFor without interruption (trigger
	// "Failback").
	FailbackPolicyPrimary FailbackPolicy = "Primary"
)

// FailbackSpec configures the return to the primary hub.
type FailbackSpec struct {
	// policy is None (stay on the current hub) or Primary (return to the primary hub once it has been healthy
	// for healthyFor). Default None.
	// +optional
	// +kubebuilder:default=None
	Policy FailbackPolicy `json:"policy,omitempty"`

	// healthyFor is how long the primary hub's standby probe must be Ready without interruption before the
	// cluster returns to it. Ignored when policy is None. Default 10m, minimum 10s.
	// +optional
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('10s')",message="failback.healthyFor must be at least 10s"
	HealthyFor *metav1.Duration `json:"healthyFor,omitempty"`
}

// HubProbeResult is the outcome of the last check of a hub.
// +kubebuilder:validation:Enum=Ready;Unreachable;ServerUntrusted;Unauthorized;Forbidden;Rejected;InvalidKubeconfig;IdentityConflict;Unknown
type HubProbeResult string

const (
	// HubProbeReady: the kubeconfig parses, the server answers and the agent may create CSRs and
	// ManagedClusters (SelfSubjectAccessReview) — a failover to this hub would be expected to work.
	HubProbeReady HubProbeResult = "Ready"
	// HubProbeUnreachable: the server gave no usable answer (connection refused, timeout, DNS or proxy error,
	// an unexpected HTTP status).
	HubProbeUnreachable HubProbeResult = "Unreachable"
	// HubProbeServerUntrusted: the server's serving certificate is not trusted with the kubeconfig's CA: not
	// signed by it, not valid for the server name, or expired.
	HubProbeServerUntrusted HubProbeResult = "ServerUntrusted"
	// HubProbeUnauthorized: the server answered 401; the credentials are invalid or expired.
	HubProbeUnauthorized HubProbeResult = "Unauthorized"
	// HubProbeForbidden: the server answered 403, or a SelfSubjectAccessReview denied creating CSRs or
	// ManagedClusters.
	HubProbeForbidden HubProbeResult = "Forbidden"
	// HubProbeRejected: the hub does not accept the cluster (hubAcceptsClient=false or
	// HubAcceptedManagedCluster=False on its ManagedCluster).
	HubProbeRejected HubProbeResult = "Rejected"
	// HubProbeInvalidKubeconfig: the bootstrap Secret or its "kubeconfig" key is missing, or the kubeconfig
	// does not parse or lacks a server, CA or credentials.
	HubProbeInvalidKubeconfig HubProbeResult = "InvalidKubeconfig"
	// HubProbeIdentityConflict: the hub's ManagedCluster of this cluster's name belongs to another spoke — a copy
	// the replicator keeps for another identity (AnnotationClusterID), or a registration another spoke keeps
	// available (its id.k8s.io claim) — so joining it would run that spoke's ManifestWorks here.
	HubProbeIdentityConflict HubProbeResult = "IdentityConflict"
	// HubProbeUnknown: not probed yet, or the result does not fit another value (see the message).
	HubProbeUnknown HubProbeResult = "Unknown"
)

// FailoverReason is the trigger of a switch between hubs.
// +kubebuilder:validation:Enum=HubConnectionLost;HubRejected;CredentialsInvalid;PlannedSwitch;Failback
type FailoverReason string

const (
	// FailoverReasonHubConnectionLost: no request to the active hub succeeded for spec.hubConnectionTimeout.
	FailoverReasonHubConnectionLost FailoverReason = "HubConnectionLost"
	// FailoverReasonHubRejected: the active hub rejected the cluster for longer than
	// spec.hubRejectionGracePeriod.
	FailoverReasonHubRejected FailoverReason = "HubRejected"
	// FailoverReasonCredentialsInvalid: neither the hub kubeconfig nor the bootstrap kubeconfig of the active
	// hub is usable (design scenario 4).
	FailoverReasonCredentialsInvalid FailoverReason = "CredentialsInvalid"
	// FailoverReasonPlannedSwitch: spec.switchTo named another hub.
	FailoverReasonPlannedSwitch FailoverReason = "PlannedSwitch"
	// FailoverReasonFailback: spec.failback.policy Primary returned the cluster to the preferred hub.
	FailoverReasonFailback FailoverReason = "Failback"
)

// FailoverConfigStatus is the observed failover state, written by the agent.
type FailoverConfigStatus struct {
	// observedGeneration is the metadata.generation of the spec this status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// activeHub is the name of the hub the cluster is registered with: "primary" or an alternateHubs name.
	// Empty until the agent has chosen a hub.
	// +optional
	ActiveHub string `json:"activeHub,omitempty"`

	// activeHubServer is the API server URL of the active hub, from its bootstrap kubeconfig.
	// +optional
	ActiveHubServer string `json:"activeHubServer,omitempty"`

	// conditions are Available, Progressing and Degraded (see the Condition* constants).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// hubs holds one entry per known hub — the primary first, then alternateHubs in spec order — with the
	// result of its last check (a standby probe, or the hub monitor for the active hub).
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=17
	Hubs []HubStatus `json:"hubs,omitempty"`

	// lastFailover describes the most recent switch between hubs, finished or in progress.
	// +optional
	LastFailover *FailoverRecord `json:"lastFailover,omitempty"`

	// failoverCount is the number of switches between hubs that completed (any reason) since the
	// FailoverConfig was created.
	// +optional
	FailoverCount int32 `json:"failoverCount,omitempty"`

	// epoch is the number of the agent's latest session on a hub: it only grows, and is raised at every session on
	// a hub other than the last one. The agent records it on the ManagedCluster of the hub it is on
	// (annotation failover.open-cluster-management.io/epoch), with the hub it left.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Epoch int64 `json:"epoch,omitempty"`

	// workAgentHeldOn names the hub OCM's work agent is held on while the cluster is on activeHub (condition
	// WorkAgentHeld True): the hub kubeconfig Secret keeps that hub's credentials. Empty when no hold lasts. An
	// agent that restarts resumes the hold on activeHub.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	WorkAgentHeldOn string `json:"workAgentHeldOn,omitempty"`
}

// HubStatus is the observed state of one hub.
type HubStatus struct {
	// name is "primary" or an alternateHubs name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// server is the hub's API server URL, from its bootstrap kubeconfig. Empty when the kubeconfig is invalid.
	// +optional
	Server string `json:"server,omitempty"`

	// probeResult is the outcome of the last check of this hub.
	// +optional
	ProbeResult HubProbeResult `json:"probeResult,omitempty"`

	// message is a human-readable detail of probeResult (e.g. the connection error). Never holds key material.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// lastProbeTime is when this hub was last checked. A status that changes in nothing but messages and probe
	// times is written at most every 10 seconds, so this may lag the latest check by that much.
	// +optional
	LastProbeTime *metav1.Time `json:"lastProbeTime,omitempty"`

	// lastTransitionTime is when probeResult last changed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`

	// lastSuccessTime is when a check of this hub last gave Ready.
	// +optional
	LastSuccessTime *metav1.Time `json:"lastSuccessTime,omitempty"`

	// skippedUntil is set while the hub is skipped as a failover target after a failure: until this time it
	// is not chosen (see spec.failedHubSkipPeriod).
	// +optional
	SkippedUntil *metav1.Time `json:"skippedUntil,omitempty"`

	// addOns is the add-on registration state the agent last saw while this hub was active: one entry per
	// add-on registration Secret, sorted by secret. For a hub that is no longer active it is what was true when
	// the cluster left it.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	AddOns []AddOnRegistrationStatus `json:"addOns,omitempty"`

	// standbyCredentials is the client identity the agent keeps on this hub while it is a standby (hot
	// standby credentials): a certificate issued by this hub through a CSR sent with its bootstrap kubeconfig,
	// kept in the Secret "<hub kubeconfig secret>-<name>" of the agent namespace and written into the hub
	// kubeconfig Secret only when the cluster switches to this hub. Absent for the active hub and for a standby
	// whose probe has not been Ready yet.
	// +optional
	StandbyCredentials *StandbyCredentialsStatus `json:"standbyCredentials,omitempty"`

	// replication is how the replicator last reported this hub against the cluster's state on the active hub
	// (the annotations failover.open-cluster-management.io/hubs-in-step and …/hubs-behind of the cluster's
	// ManagedCluster there): InStep or Behind. Empty for the active hub and when not reported (no replicator,
	// or hub names that differ from the ReplicationConfig's).
	// +optional
	Replication HubReplicationState `json:"replication,omitempty"`
}

// HubReplicationState is how a hub stands with the cluster's state on the active hub, as the replicator
// reports it.
// +kubebuilder:validation:Enum=InStep;Behind;Unknown
type HubReplicationState string

const (
	// HubInStep: the hub holds the cluster's state as the active hub has it.
	HubInStep HubReplicationState = "InStep"
	// HubBehind: the hub was unreachable to the replicator, or has objects of the cluster still to be
	// written: joining it may apply older ManifestWorks.
	HubBehind HubReplicationState = "Behind"
	// HubReplicationUnknown: the replicator named the hub in step, but its report was not confirmed within
	// ReportStaleConfirmations of its intervals (AnnotationHubsReported): the replicator is stopped, crash-looping
	// or cannot write the active hub, so the hub may be behind. Ranked like a hub not reported; a planned switch to
	// it waits like one to a hub behind. A hub named behind stays HubBehind however old the report.
	HubReplicationUnknown HubReplicationState = "Unknown"
)

// Annotations the replicator writes on a cluster's ManagedCluster on the cluster's source hub (only there):
// comma-separated ReplicationConfig hub names, which the agent matches with its own hub names ("primary" and
// the alternates' names).
const (
	// AnnotationHubsInStep lists the other hubs that hold the cluster's state as the source has it.
	AnnotationHubsInStep = "failover.open-cluster-management.io/hubs-in-step"
	// AnnotationHubsBehind lists the other hubs that are not in step.
	AnnotationHubsBehind = "failover.open-cluster-management.io/hubs-behind"
	// AnnotationHubsReported, beside the two lists, says who wrote them, when, and how often the writer confirms
	// them (HubsReport.String): "writer=<ReplicationConfig name>,time=<RFC 3339>,every=<Go duration>". The
	// replicator writes a new value at least every `every` while it keeps the cluster in step. The agent never
	// compares `time` with its own clock: it times, on its own clock, how long it has seen one value, and takes
	// the hubs the report names in step as unknown (HubReplicationUnknown) once that exceeds
	// ReportStaleConfirmations × every.
	AnnotationHubsReported = "failover.open-cluster-management.io/hubs-reported"
)

// ReportStaleConfirmations is how many of its intervals a report (AnnotationHubsReported) may go unconfirmed
// before the agent takes it as unknown.
const ReportStaleConfirmations = 3

// HubsReport is the value of AnnotationHubsReported (an annotation, not an API object: no deep copy).
//
// +kubebuilder:object:generate=false
type HubsReport struct {
	// Writer is the name of the ReplicationConfig whose replicator wrote the report.
	Writer string
	// Time is when the writer wrote it, on the writer's clock (for people; no decision reads it).
	Time time.Time
	// Every is the longest the writer lets pass between two values while it runs.
	Every time.Duration
}

// String returns the annotation value: "writer=<Writer>,time=<Time, RFC 3339, UTC>,every=<Every>".
func (r HubsReport) String() string {
	return "writer=" + r.Writer + ",time=" + r.Time.UTC().Truncate(time.Second).Format(time.RFC3339) + ",every=" + r.Every.String()
}

// ParseHubsReport parses an AnnotationHubsReported value. It returns an error naming the part and the rule
// when a part is missing or malformed, or every is not positive.
func ParseHubsReport(value string) (HubsReport, error) {
	var r HubsReport
	seen := map[string]bool{}
	for _, part := range strings.Split(value, ",") {
		key, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return HubsReport{}, fmt.Errorf("%s %q: part %q is not key=value", AnnotationHubsReported, value, part)
		}
		var err error
		switch key {
		case "writer":
			r.Writer = v
		case "time":
			r.Time, err = time.Parse(time.RFC3339, v)
		case "every":
			r.Every, err = time.ParseDuration(v)
			if err == nil && r.Every <= 0 {
				err = fmt.Errorf("must be positive")
			}
		default:
			continue
		}
		if err != nil {
			return HubsReport{}, fmt.Errorf("%s %q: %s %q: %w", AnnotationHubsReported, value, key, v, err)
		}
		seen[key] = true
	}
	for _, key := range []string{"writer", "time", "every"} {
		if !seen[key] {
			return HubsReport{}, fmt.Errorf("%s %q: %s is missing", AnnotationHubsReported, value, key)
		}
	}
	return r, nil
}

// LabelReplicatedFrom marks the replicator's copy of an object on a hub: its value is the name (ReplicationConfig
// spec.hubs[].name) of the hub the copy was made from.
const LabelReplicatedFrom = "failover.open-cluster-management.io/replicated-from"

// AnnotationClusterID is, on the replicator's copy of a ManagedCluster, the identity of the spoke the copy was
// made for: the id.k8s.io claim that spoke's agent reports on the cluster's source hub (KEP-2149; our agent
// reports the spoke's kube-system namespace UID when the spoke has no such claim). The agent does not join a
// hub whose copy names another identity (HubProbeIdentityConflict).
const AnnotationClusterID = "failover.open-cluster-management.io/cluster-id"

// AnnotationEpoch is written by the agent on its cluster's ManagedCluster on the hub it is on (AgentEpoch.String):
// "epoch=<n>" or "epoch=<n>,from=<hub>". n is the agent's session number, which only grows: kept on the spoke
// (FailoverConfig status.epoch), raised at every session on a hub other than the last one (a join, a switch, a
// restart onto another hub), never lowered by a restart. from names the hub the agent left for this one (its
// "primary" or an alternate's name, which ReplicationConfig spec.hubs[].name must match). The replicator reads it
// to order hubs without comparing clocks (the highest epoch is where the agent went last) and to know which hub
// the cluster came from when it did not see the move itself (it was stopped, or the source hub unreachable).
const AnnotationEpoch = "failover.open-cluster-management.io/epoch"

// AgentEpoch is the value of AnnotationEpoch (an annotation, not an API object: no deep copy).
//
// +kubebuilder:object:generate=false
type AgentEpoch struct {
	// Number is the session number, >= 1.
	Number int64
	// From is the hub the agent left for this one; "" for a first join or a restart onto the same hub.
	From string
}

// String returns the annotation value: "epoch=<Number>" or "epoch=<Number>,from=<From>".
func (e AgentEpoch) String() string {
	out := "epoch=" + strconv.FormatInt(e.Number, 10)
	if e.From != "" {
		out += ",from=" + e.From
	}
	return out
}

// ParseAgentEpoch parses an AnnotationEpoch value. It returns an error naming the part and the rule when epoch is
// missing, not an integer >= 1, or a part is not key=value. Unknown keys are ignored.
func ParseAgentEpoch(value string) (AgentEpoch, error) {
	var e AgentEpoch
	seen := false
	for _, part := range strings.Split(value, ",") {
		key, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return AgentEpoch{}, fmt.Errorf("%s %q: part %q is not key=value", AnnotationEpoch, value, part)
		}
		switch key {
		case "epoch":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return AgentEpoch{}, fmt.Errorf("%s %q: epoch %q must be an integer >= 1", AnnotationEpoch, value, v)
			}
			e.Number, seen = n, true
		case "from":
			e.From = v
		}
	}
	if !seen {
		return AgentEpoch{}, fmt.Errorf("%s %q: epoch is missing", AnnotationEpoch, value)
	}
	return e, nil
}

// StandbyCredentialsState is the state of the client identity the agent keeps on a standby hub.
// +kubebuilder:validation:Enum=Ready;Pending;Refused
type StandbyCredentialsState string

const (
	// StandbyCredentialsReady: the standby Secret holds a valid certificate of this hub for the cluster and agent:
	// a switch to the hub sends no CSR (a hot standby).
	StandbyCredentialsReady StandbyCredentialsState = "Ready"
	// StandbyCredentialsPending: a CSR is waiting for approval or signing, could not be created yet, or waits for
	// the hub's bootstrap back-off; a switch now would bootstrap on the hub (a cold standby until it is Ready).
	StandbyCredentialsPending StandbyCredentialsState = "Pending"
	// StandbyCredentialsRefused: the hub denied or failed the last CSR, deleted it, or issued an unusable
	// certificate; the agent retries with the bootstrap back-off and the hub stays a cold standby meanwhile.
	StandbyCredentialsRefused StandbyCredentialsState = "Refused"
)

// StandbyCredentialsStatus is the state of the client identity the agent keeps on a standby hub.
type StandbyCredentialsStatus struct {
	// state is Ready, Pending or Refused.
	// +required
	State StandbyCredentialsState `json:"state"`

	// secret is the Secret, in the agent namespace, that holds the credentials.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Secret string `json:"secret"`

	// message says why the state is what it is (the CSR's name, the hub's denial, the back-off's next attempt).
	// Never holds key material.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// notAfter is the expiry of the stored certificate while the state is Ready.
	// +optional
	NotAfter *metav1.Time `json:"notAfter,omitempty"`
}

// AddOnRegistrationState is the state of one add-on registration on a hub.
type AddOnRegistrationState string

const (
	// AddOnRegistrationRegistered: the Secret holds a valid certificate this hub issued.
	AddOnRegistrationRegistered AddOnRegistrationState = "Registered"
	// AddOnRegistrationPending: a CSR is waiting for approval or signing on this hub.
	AddOnRegistrationPending AddOnRegistrationState = "Pending"
	// AddOnRegistrationFailed: the last CSR was denied or failed, could not be created, or the Secret could not be
	// written; the agent retries with back-off.
	AddOnRegistrationFailed AddOnRegistrationState = "Failed"
	// AddOnRegistrationNotOnHub: the Secret was issued by another hub and this hub has no such add-on; the Secret
	// is kept untouched.
	AddOnRegistrationNotOnHub AddOnRegistrationState = "NotOnHub"
)

// AddOnRegistrationStatus is one add-on registration Secret as the agent saw it on a hub.
type AddOnRegistrationStatus struct {
	// name is the ManagedClusterAddOn's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// secret is the registration's Secret, "<namespace>/<name>" (prefixed "hosted:" when it is on the cluster
	// hosting the agent).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=330
	Secret string `json:"secret"`

	// signerName is the registration's signer; empty for NotOnHub.
	// +optional
	// +kubebuilder:validation:MaxLength=571
	SignerName string `json:"signerName,omitempty"`

	// state is the registration's state on this hub.
	// +required
	// +kubebuilder:validation:Enum=Registered;Pending;Failed;NotOnHub
	State AddOnRegistrationState `json:"state"`

	// message is a human-readable detail of state. Never holds key material.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// issuingHub is the hub whose credentials the Secret holds, when known.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	IssuingHub string `json:"issuingHub,omitempty"`

	// notAfter is the expiry of the Secret's certificate, when it holds one.
	// +optional
	NotAfter *metav1.Time `json:"notAfter,omitempty"`
}

// FailoverRecord describes one switch between hubs.
type FailoverRecord struct {
	// from is the hub the cluster left ("primary" or an alternateHubs name).
	// +required
	From string `json:"from"`

	// to is the hub the cluster moved, or is moving, to.
	// +required
	To string `json:"to"`

	// reason is the trigger of the switch.
	// +required
	Reason FailoverReason `json:"reason"`

	// message is a human-readable detail of the trigger (e.g. the last connection error).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// startTime is when the switch began (the trigger fired).
	// +required
	StartTime metav1.Time `json:"startTime"`

	// endTime is when the cluster became Available on the new hub; unset while the switch is in progress.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`

	// durationMilliseconds is endTime minus startTime in milliseconds, kept at millisecond precision
	// (metav1.Time has whole seconds); 0 while the switch is in progress.
	// +optional
	// +kubebuilder:validation:Minimum=0
	DurationMilliseconds int64 `json:"durationMilliseconds,omitempty"`
}

// FailoverConfigList is a list of FailoverConfigs.
//
// +kubebuilder:object:root=true
type FailoverConfigList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the FailoverConfigs.
	Items []FailoverConfig `json:"items"`
}
