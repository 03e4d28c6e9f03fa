// Package metrics defines the replicator's Prometheus metrics (component-base metrics, registered in the
// legacy registry that library-go's controllercmd serves on /metrics).
package metrics

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const (
	namespace = "klusterlet_failover"
	subsystem = "replicator"
)

var (
	// ReplicationLag is the time, in seconds, from the replicator hearing of a change on the source hub (the
	// watch event) to the write of the copy on a target hub completing. Labels: kind, hub (the target).
	ReplicationLag = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "replication_lag_seconds",
		Help:           "Seconds from the watch event of a change on the source hub to the completed write of the copy on a target hub.",
		Buckets:        []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900},
		StabilityLevel: metrics.ALPHA,
	}, []string{"kind", "hub"})

	// ObjectsMirrored counts the writes of copies. Labels: kind, hub (the target), operation (Create, Update,
	// Delete).
	ObjectsMirrored = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "objects_mirrored_total",
		Help:           "Copies created, updated and deleted on target hubs.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"kind", "hub", "operation"})

	// WritesBack counts the writes made on a cluster's source hub from its previous source
	// (mirror.DecideWriteBack). Labels: kind, hub (the source), operation (Create, Update, Delete).
	WritesBack = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "writes_back_total",
		Help:           "Creates, edits and deletes of a cluster's previous source written on its new source.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"kind", "hub", "operation"})

	// Conflicts counts conflicts as they are found (once per object and reason until resolved). Labels: kind,
	// hub, reason (ForeignObject, CopyModified).
	Conflicts = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "conflicts_total",
		Help:           "Conflicts found on target hubs: foreign objects with a mirrored name, and copies changed on their hub.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"kind", "hub", "reason"})

	// HubReachable is 1 while a hub is ready (reachable, caches synced), else 0. Label: hub.
	HubReachable = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "hub_reachable",
		Help:           "1 while the hub answers and the replicator's caches of it are synced, else 0.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"hub"})

	// SourceChanges counts the changes of a cluster's source hub. Label: hub (the new source).
	SourceChanges = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "source_changes_total",
		Help:           "Changes of a managed cluster's source hub (the hub it is connected to), by new source.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"hub"})

	// WriteErrors counts failed writes to target hubs. Labels: kind, hub.
	WriteErrors = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "write_errors_total",
		Help:           "Failed creates, updates and deletes of copies (retried).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"kind", "hub"})

	// DeleteBrakeEngaged is 1 while a hub's delete brake (ReplicationConfig spec.deleteBrake) is engaged: no
	// delete is made there until a person releases it; else 0. Label: hub.
	DeleteBrakeEngaged = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "delete_brake_engaged",
		Help:           "1 while the hub's delete brake is engaged (every delete there waits for a person), else 0.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"hub"})

	// ClusterIdentityConflicts is the number of managed cluster names that stand for more than one spoke
	// (direction.DecideIdentity): nothing of them is replicated or fenced until one identity is left.
	ClusterIdentityConflicts = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "cluster_identity_conflicts",
		Help:           "Managed cluster names whose ManagedClusters on the hubs belong to different spokes (id.k8s.io claims); none of them is replicated.",
		StabilityLevel: metrics.ALPHA,
	})

	// ObjectsBehind is, per hub, the number of replicated objects the hub is not in step with: not synced since
	// the hub became ready, or whose last write there failed or waits (a held delete). 0 in steady state; a
	// hub with objects behind is named behind in the in-step reports of their clusters. Label: hub. Set at each
	// status write (--status-interval). A hub whose clusters' source is unreachable stays behind for their
	// objects until that source is back.
	ObjectsBehind = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "objects_behind",
		Help:           "Replicated objects the hub is not in step with (not synced since it became ready, a write failed or held).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"hub"})

	// ClustersOnSeveralHubs is the number of managed clusters whose lease the replicator saw renewed on more than
	// one hub within direction.FreshnessFactor lease durations: an agent on each of those hubs (e.g. an old agent
	// still running after a switch, or two spokes registered under one name that the identity check has not
	// told apart). A switch itself shows for at most that long. Set at each status write.
	ClustersOnSeveralHubs = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "clusters_on_several_hubs",
		Help:           "Managed clusters whose lease was seen renewed on more than one hub within twice the lease duration.",
		StabilityLevel: metrics.ALPHA,
	})
)

var registerOnce sync.Once

// Register registers every metric of this package in the legacy registry; later calls do nothing.
func Register() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(ReplicationLag, ObjectsMirrored, WritesBack, Conflicts, HubReachable, SourceChanges, WriteErrors,
			ClusterIdentityConflicts, DeleteBrakeEngaged, ObjectsBehind, ClustersOnSeveralHubs)
	})
}
