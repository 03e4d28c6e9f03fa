// Package status builds the status of a ReplicationConfig from what the replicator observed (Build, pure)
// and writes it only when it changed (Write).
package status

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned/typed/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/replication"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// Condition reasons.
const (
	// ReasonReplicating: every hub is ready.
	ReasonReplicating = "Replicating"
	// ReasonHubsUnavailable: some hubs are not ready (the message names them and why); replication runs among
	// the others as long as at least two are ready.
	ReasonHubsUnavailable = "HubsUnavailable"
	// ReasonTooFewHubsReady: fewer than two hubs are ready, so nothing can be replicated.
	ReasonTooFewHubsReady = "TooFewHubsReady"
	// ReasonClusterIdentityConflict: every hub is ready, but some managed cluster names stand for more than one
	// spoke (the message names them); those clusters are not replicated (Degraded only).
	ReasonClusterIdentityConflict = "ClusterIdentityConflict"
	// ReasonDeletesHeld: a hub's delete brake is engaged (condition DeletesHeld, and Degraded when nothing else
	// degrades it); the message names the hubs and the command that releases them.
	ReasonDeletesHeld = "DeletesHeld"
	// ReasonNoDeletesHeld: no delete brake is engaged (condition DeletesHeld False).
	ReasonNoDeletesHeld = "NoDeletesHeld"
	// ReasonInvalidConfiguration: the spec or a hub's kubeconfig Secret is invalid (the message says which field or
	// hub and why). With an invalid spec nothing is replicated; with an unusable hub kubeconfig the other
	// hubs go on when at least two are ready.
	ReasonInvalidConfiguration = "InvalidConfiguration"
)

// Hub is one hub's connection state for Build.
type Hub struct {
	// Name is the hub's name from the spec.
	Name string
	// Server is its API server URL (empty when its kubeconfig is invalid).
	Server string
	// State is its connection state; ignored when ConfigError is set.
	State hubconn.State
	// Err is the last error of the hub (probe or request), nil after a success.
	Err error
	// LastTransition is when State last changed.
	LastTransition time.Time
	// ConfigError says why the hub's kubeconfig Secret cannot be used; empty when it can.
	ConfigError string
}

// Build returns the status of rc for the given hubs (in spec order) and controller snapshot, keeping rc's
// condition transition times when a condition's status does not change. configErr, when not empty, says why
// the spec is invalid: the status then reports that and no hub is replicated.
func Build(rc *failoverv1alpha1.ReplicationConfig, hubs []Hub, snap replication.Snapshot, configErr string, now time.Time) failoverv1alpha1.ReplicationConfigStatus {
	out := failoverv1alpha1.ReplicationConfigStatus{
		ObservedGeneration: rc.Generation,
		Conditions:         append([]metav1.Condition(nil), rc.Status.Conditions...),
		Clusters:           int32(snap.Clusters),
	}
	var notReady []string
	ready, invalidHubs := 0, 0
	for _, h := range hubs {
		hs := failoverv1alpha1.ReplicationHubStatus{
			Name:           h.Name,
			Server:         h.Server,
			SourceClusters: int32(snap.SourceClusters[h.Name]),
			Copies:         int32(snap.Copies[h.Name]),
			Conflicts:      int32(snap.Conflicts[h.Name]),
		}
		switch {
		case h.ConfigError != "":
			invalidHubs++
			hs.LastError = text.Truncate(h.ConfigError, maxMessageLength)
			notReady = append(notReady, fmt.Sprintf("%s: %s", h.Name, h.ConfigError))
		case h.State == hubconn.StateReady:
			ready++
			hs.Reachable = true
			hs.Synced = snap.CaughtUp[h.Name]
			if h.Err != nil { // the last write failed
				hs.LastError = text.Truncate(h.Err.Error(), maxMessageLength)
			}
		default:
			hs.Reachable = h.State == hubconn.StateSyncing
			reason := string(h.State)
			if h.Err != nil {
				hs.LastError = text.Truncate(h.Err.Error(), maxMessageLength)
				reason = h.Err.Error()
			}
			notReady = append(notReady, fmt.Sprintf("%s: %s", h.Name, reason))
		}
		if hs.Reachable {
			out.ReachableHubs++
		}
		if !h.LastTransition.IsZero() {
			t := metav1.NewTime(h.LastTransition.Truncate(time.Second))
			hs.LastTransitionTime = &t
		}
		for _, b := range snap.Brakes {
			if b.Hub == h.Name {
				hs.DeleteBrake = &failoverv1alpha1.DeleteBrakeStatus{
					Since: metav1.NewTime(b.Since), Limit: int32(b.Limit), DeletesHeld: int32(b.Held), ReleaseToken: b.Token(),
				}
			}
		}
		// Keep the previous transition time when nothing else says otherwise.
		for _, prev := range rc.Status.Hubs {
			if prev.Name == h.Name && hs.LastTransitionTime == nil {
				hs.LastTransitionTime = prev.LastTransitionTime
			}
		}
		out.Hubs = append(out.Hubs, hs)
	}
	for _, kind := range rc.Spec.KindNames() {
		out.Kinds = append(out.Kinds, failoverv1alpha1.ReplicatedKindStatus{
			Kind:      string(kind),
			Objects:   int32(snap.KindObjects[kind]),
			Conflicts: int32(snap.KindConflicts[kind]),
		})
	}

	available := metav1.Condition{Type: failoverv1alpha1.ReplicationConditionAvailable, ObservedGeneration: rc.Generation}
	degraded := metav1.Condition{Type: failoverv1alpha1.ReplicationConditionDegraded, ObservedGeneration: rc.Generation}
	switch {
	case configErr != "":
		available.Status, available.Reason, available.Message = metav1.ConditionFalse, ReasonInvalidConfiguration, text.Truncate(configErr, maxMessageLength)
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonInvalidConfiguration, text.Truncate(configErr, maxMessageLength)
		out.Hubs, out.Kinds, out.ReachableHubs, out.Clusters = nil, nil, 0, 0
		// An engaged delete brake stays recorded: the replicator reads it back when the spec is valid again.
		for _, prev := range rc.Status.Hubs {
			if prev.DeleteBrake != nil {
				out.Hubs = append(out.Hubs, failoverv1alpha1.ReplicationHubStatus{Name: prev.Name, DeleteBrake: prev.DeleteBrake})
			}
		}
	case ready < 2:
		reason := ReasonTooFewHubsReady
		if invalidHubs > 0 {
			reason = ReasonInvalidConfiguration
		}
		msg := fmt.Sprintf("%d of %d hubs ready, nothing is replicated: %s", ready, len(hubs), strings.Join(notReady, "; "))
		available.Status, available.Reason, available.Message = metav1.ConditionFalse, reason, text.Truncate(msg, maxMessageLength)
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, reason, text.Truncate(msg, maxMessageLength)
	case len(notReady) > 0:
		reason := ReasonHubsUnavailable
		if invalidHubs > 0 {
			reason = ReasonInvalidConfiguration
		}
		msg := fmt.Sprintf("%d of %d hubs ready; not ready: %s", ready, len(hubs), strings.Join(notReady, "; "))
		if len(snap.IdentityConflicts) > 0 {
			msg += fmt.Sprintf("; %d managed cluster names stand for more than one spoke and are not replicated: %s",
				len(snap.IdentityConflicts), strings.Join(snap.IdentityConflicts, ", "))
		}
		available.Status, available.Reason, available.Message = metav1.ConditionTrue, reason, text.Truncate(msg, maxMessageLength)
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, reason, text.Truncate(msg, maxMessageLength)
	case len(snap.IdentityConflicts) > 0:
		msg := fmt.Sprintf("all %d hubs ready", len(hubs))
		available.Status, available.Reason, available.Message = metav1.ConditionTrue, ReasonReplicating, msg
		conflicts := fmt.Sprintf("%d managed cluster names stand for more than one spoke (their agents report different id.k8s.io claims) and are not replicated: %s",
			len(snap.IdentityConflicts), strings.Join(snap.IdentityConflicts, ", "))
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonClusterIdentityConflict, text.Truncate(conflicts, maxMessageLength)
	default:
		msg := fmt.Sprintf("all %d hubs ready", len(hubs))
		available.Status, available.Reason, available.Message = metav1.ConditionTrue, ReasonReplicating, msg
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionFalse, ReasonReplicating, msg
	}
	held := metav1.Condition{Type: failoverv1alpha1.ReplicationConditionDeletesHeld, ObservedGeneration: rc.Generation,
		Status: metav1.ConditionFalse, Reason: ReasonNoDeletesHeld, Message: "no delete brake is engaged"}
	if configErr == "" && len(snap.Brakes) > 0 {
		msg := deletesHeldMessage(rc, snap)
		held.Status, held.Reason, held.Message = metav1.ConditionTrue, ReasonDeletesHeld, text.Truncate(msg, maxMessageLength)
		if degraded.Status != metav1.ConditionTrue {
			degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonDeletesHeld, text.Truncate(msg, maxMessageLength)
		}
	}
	setCondition(&out.Conditions, available, now)
	setCondition(&out.Conditions, degraded, now)
	setCondition(&out.Conditions, held, now)
	return out
}

// deletesHeldMessage names each engaged brake of snap (hub, deletes held, limit, token) and the command that
// releases them all.
func deletesHeldMessage(rc *failoverv1alpha1.ReplicationConfig, snap replication.Snapshot) string {
	parts := make([]string, 0, len(snap.Brakes))
	tokens := make([]string, 0, len(snap.Brakes))
	for _, b := range snap.Brakes {
		parts = append(parts, fmt.Sprintf("hub %s: %d deletes held (more than %d within %s)", b.Hub, b.Held, b.Limit, failoverv1alpha1.DeleteBrakeWindow))
		tokens = append(tokens, b.Token())
	}
	return fmt.Sprintf("%s; check what would be deleted (events %s, status.hubs[].deleteBrake), then release with: kubectl -n %s annotate replicationconfig %s %s=%s --overwrite",
		strings.Join(parts, "; "), replication.ReasonDeletesHeld, rc.Namespace, rc.Name, failoverv1alpha1.AnnotationReleaseDeletes, strings.Join(tokens, ","))
}

// Write updates rc's status to desired unless it already holds it (no write that changes nothing).
func Write(ctx context.Context, client v1alpha1.ReplicationConfigInterface, rc *failoverv1alpha1.ReplicationConfig, desired failoverv1alpha1.ReplicationConfigStatus) error {
	if equality.Semantic.DeepEqual(rc.Status, desired) {
		return nil
	}
	updated := rc.DeepCopy()
	updated.Status = desired
	if _, err := client.UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: replication.FieldManager}); err != nil {
		return fmt.Errorf("updating status of ReplicationConfig %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	return nil
}

// maxMessageLength bounds, in bytes, the status fields that carry a message or an error (status.hubs[].lastError
// and the condition messages of the ReplicationConfig).
const maxMessageLength = 1024

// setCondition sets cond in conditions, keeping the transition time when the status is unchanged.
func setCondition(conditions *[]metav1.Condition, cond metav1.Condition, now time.Time) {
	cond.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	meta.SetStatusCondition(conditions, cond)
}
