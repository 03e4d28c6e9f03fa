package managedcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/discovery"
	corev1informers "k8s.io/client-go/informers/core/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	clusterv1client "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1"
	clusterv1informer "open-cluster-management.io/api/client/cluster/informers/externalversions/cluster/v1"
	clusterv1alpha1informer "open-cluster-management.io/api/client/cluster/informers/externalversions/cluster/v1alpha1"
	clusterv1listers "open-cluster-management.io/api/client/cluster/listers/cluster/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

// Event reasons of the status controller (spoke events). They are user-visible API and
// are emitted on transitions only.
const (
	// ReasonManagedClusterJoined (Normal): ManagedClusterJoined=True was written after the
	// hub accepted the cluster.
	ReasonManagedClusterJoined = "ManagedClusterJoined"
	// ReasonManagedClusterAvailable (Normal): ManagedClusterConditionAvailable turned True.
	ReasonManagedClusterAvailable = "ManagedClusterAvailable"
	// ReasonManagedClusterUnavailable (Warning): ManagedClusterConditionAvailable turned
	// False; the message carries the condition reason and message.
	ReasonManagedClusterUnavailable = "ManagedClusterUnavailable"
	// ReasonClusterClaimsTruncated (Warning): more custom ClusterClaims exist than
	// MaxCustomClusterClaims; the message gives the found, allowed and dropped counts.
	ReasonClusterClaimsTruncated = "ClusterClaimsTruncated"
	// ReasonClockSkewDetected (Warning): the hub set ManagedClusterConditionClockSynced=False;
	// status writes stop until it is True again. The message carries the hub's condition
	// message and, when measurable, the skew (see measureClockSkew).
	ReasonClockSkewDetected = "ClockSkewDetected"
	// ReasonClockSkewResolved (Normal): ManagedClusterConditionClockSynced is no longer False.
	ReasonClockSkewResolved = "ClockSkewResolved"
	// ReasonManagedClusterIdentityConflict (Warning): another spoke, with another id.k8s.io
	// claim, keeps the ManagedCluster of this name fresh (FC-06); this agent writes nothing.
	ReasonManagedClusterIdentityConflict = "ManagedClusterIdentityConflict"
	// ReasonManagedClusterIdentityConflictResolved (Normal): the conflict is gone (the other
	// spoke's lease went stale or the identities match again).
	ReasonManagedClusterIdentityConflictResolved = "ManagedClusterIdentityConflictResolved"
)

// Condition reasons this agent writes on the hub ManagedCluster.
const (
	// ConditionReasonManagedClusterJoined is the reason of ManagedClusterJoined=True (as OCM's agent).
	ConditionReasonManagedClusterJoined = "ManagedClusterJoined"
	// ConditionReasonManagedClusterAvailable is the reason of ManagedClusterConditionAvailable=True (as OCM's agent).
	ConditionReasonManagedClusterAvailable = "ManagedClusterAvailable"
	// ConditionReasonManagedClusterKubeAPIServerUnavailable is the reason of
	// ManagedClusterConditionAvailable=False when /livez (or /healthz) fails (as OCM's agent).
	ConditionReasonManagedClusterKubeAPIServerUnavailable = "ManagedClusterKubeAPIServerUnavailable"
	// ConditionReasonManagedClusterSpokeCredentialsRejected is the reason of
	// ManagedClusterConditionAvailable=False when the spoke API server answers 401: the
	// agent's spoke credentials were rejected (FC-13), the hub is not at fault.
	ConditionReasonManagedClusterSpokeCredentialsRejected = "ManagedClusterSpokeCredentialsRejected"
)

// Defaults applied by NewManagedClusterStatusController to zero-valued options.
const (
	// DefaultAvailableFailureThreshold is the number of consecutive failed health checks
	// before Available is set to False.
	DefaultAvailableFailureThreshold = 3
	// DefaultHealthCheckRetryInterval is the delay of the fast re-check after a failed
	// health check (capped at ClusterHealthCheckPeriod).
	DefaultHealthCheckRetryInterval = 10 * time.Second
	// DefaultHealthCheckTimeout bounds one GET /livez or /healthz.
	DefaultHealthCheckTimeout = 10 * time.Second
)

// Queue keys. The factory's periodic resync enqueues factory.DefaultQueueKey; informer
// events and the fast health re-check use their own keys so that sync knows what is due.
const (
	hubEventKey    = "hub-event"
	spokeEventKey  = "spoke-event"
	healthCheckKey = "health-check"
)

// StatusOptions are the dependencies of the status controller. Fields marked required must
// be set; the others have the documented defaults.
type StatusOptions struct {
	// ClusterName is the ManagedCluster name. Required.
	ClusterName string
	// HubClusterClient patches managedclusters/status on the hub (clientset.ClusterV1()). Required.
	HubClusterClient clusterv1client.ManagedClustersGetter
	// HubClusterInformer is the hub ManagedCluster informer scoped with
	// fieldSelector=metadata.name=<cluster> (informers.NewHubManagedClusterFactory). Required.
	HubClusterInformer clusterv1informer.ManagedClusterInformer
	// HubLeaseClient reads the hub Lease <cluster>/managed-cluster-lease to judge whether a
	// conflicting registration is kept fresh (FC-06) and to measure clock skew (FC-10).
	// Optional: without it a conflicting id.k8s.io claim always counts as a live conflict
	// and no skew is measured.
	HubLeaseClient coordinationv1client.LeasesGetter
	// OwnLeaseRenewTime returns the spec.renewTime this agent last wrote on the hub lease
	// (lease.LeaseController.LastRenewTime), zero if none. Optional: it lets the identity
	// check tell our own renewals from another spoke's.
	OwnLeaseRenewTime func() time.Time
	// SpokeDiscoveryClient is the spoke discovery client: its RESTClient() serves
	// GET /livez and /healthz, ServerVersion() gives version.kubernetes. Required.
	SpokeDiscoveryClient discovery.DiscoveryInterface
	// SpokeIdentity reads the kube-system Namespace's UID (once per process): this spoke's
	// identity when no id.k8s.io ClusterClaim exists, then published as the id.k8s.io claim.
	// Optional: without it and without that claim, identity conflicts are not detected.
	SpokeIdentity *SpokeIdentityReader
	// NodeInformer is the spoke Node informer; capacity and allocatable are summed over its
	// Nodes. Required.
	NodeInformer corev1informers.NodeInformer
	// ClaimInformer is the spoke ClusterClaim (cluster.open-cluster-management.io/v1alpha1)
	// informer. Required.
	ClaimInformer clusterv1alpha1informer.ClusterClaimInformer
	// MaxCustomClusterClaims caps the non-reserved claims exposed in status
	// (--max-custom-cluster-claims); negative counts as 0.
	MaxCustomClusterClaims int
	// ReservedClusterClaimSuffixes makes every ClusterClaim whose name ends with one of these suffixes a
	// reserved claim: always exposed, never counted against MaxCustomClusterClaims
	// (OCM's --reserved-cluster-claim-suffixes). As in OCM, an empty entry makes every claim reserved.
	ReservedClusterClaimSuffixes []string
	// ClusterHealthCheckPeriod is the resync period: health check, version and resources are
	// refreshed once per period (--cluster-healthcheck-period). Required, > 0.
	ClusterHealthCheckPeriod time.Duration
	// HealthCheckRetryInterval is the delay of the fast re-check after a failed health check
	// while below the threshold. Default DefaultHealthCheckRetryInterval, capped at
	// ClusterHealthCheckPeriod.
	HealthCheckRetryInterval time.Duration
	// HealthCheckTimeout bounds each health GET. Default DefaultHealthCheckTimeout.
	HealthCheckTimeout time.Duration
	// AvailableFailureThreshold is the number of consecutive failed health checks before
	// Available=False. Default DefaultAvailableFailureThreshold.
	AvailableFailureThreshold int
	// ConflictTracker receives the identity-conflict verdict. Default: a private tracker.
	ConflictTracker *ConflictTracker
	// Clock gives "now" for condition transition times and freshness checks. Default: real clock.
	Clock clock.PassiveClock
	// Recorder receives the spoke events of this controller. Required.
	Recorder events.Recorder
}

// statusReconciler is one aspect of the status. reconcile mutates cluster (a deep copy of
// the cached hub object) and says whether the chain goes on. Returning reconcileStop from
// the first reconcilers (the gates) means "write nothing".
type statusReconciler interface {
	reconcile(ctx context.Context, sc *statusSyncContext, cluster *clusterv1.ManagedCluster) (reconcileState, error)
}

type reconcileState int

const (
	reconcileContinue reconcileState = iota
	reconcileStop
)

// statusSyncContext carries per-sync facts between reconcilers.
type statusSyncContext struct {
	syncCtx factory.SyncContext
	logger  klog.Logger
	now     time.Time
	// periodic is true for the factory resync (and for an empty key, as in unit tests).
	periodic bool
	// key is the queue key that triggered this sync.
	key string
	// spokeHealthy is set by the available reconciler when this sync's health check passed.
	spokeHealthy bool
	// spokeID is this spoke's identity, spokeIDFromKubeSystem whether it is the kube-system
	// UID (and not an id.k8s.io ClusterClaim); set by the identity reconciler.
	spokeID               string
	spokeIDFromKubeSystem bool
	// onSuccess runs after the sync ended without error (state that must only advance
	// when the result reached the hub).
	onSuccess []func()
}

// managedClusterStatusController keeps the hub ManagedCluster status of this agent current.
//
// Requeue policy: the factory resync (every ClusterHealthCheckPeriod) refreshes health,
// version and resources; informer events recompute Joined and the claims at once and the
// resources only when the last refresh is older than one period (coalescing node churn,
// FC-16); a failed health check below the threshold re-checks after
// HealthCheckRetryInterval; hub write errors are returned for a rate-limited retry.
type managedClusterStatusController struct {
	clusterName string
	client      clusterv1client.ManagedClustersGetter
	lister      clusterv1listers.ManagedClusterLister
	clock       clock.PassiveClock
	reconcilers []statusReconciler
	// lock serialises syncs: the reconcilers keep state between syncs.
	lock sync.Mutex
}

// NewManagedClusterStatusController returns the controller "ManagedClusterStatusController".
// Run it with one worker (syncs are serialised anyway).
func NewManagedClusterStatusController(opts StatusOptions) factory.Controller {
	c := newStatusController(opts)
	hubKey := func(runtime.Object) []string { return []string{hubEventKey} }
	spokeKey := func(runtime.Object) []string { return []string{spokeEventKey} }
	return factory.New().
		WithFilteredEventsInformersQueueKeysFunc(hubKey, factory.NamesFilter(opts.ClusterName), opts.HubClusterInformer.Informer()).
		WithInformersQueueKeysFunc(spokeKey, opts.NodeInformer.Informer(), opts.ClaimInformer.Informer()).
		WithSync(c.sync).
		ResyncEvery(opts.ClusterHealthCheckPeriod).
		ToController("ManagedClusterStatusController", opts.Recorder)
}

func newStatusController(opts StatusOptions) *managedClusterStatusController {
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	tracker := opts.ConflictTracker
	if tracker == nil {
		tracker = NewConflictTracker()
	}
	threshold := opts.AvailableFailureThreshold
	if threshold <= 0 {
		threshold = DefaultAvailableFailureThreshold
	}
	retry := opts.HealthCheckRetryInterval
	if retry <= 0 {
		retry = DefaultHealthCheckRetryInterval
	}
	if opts.ClusterHealthCheckPeriod > 0 && retry > opts.ClusterHealthCheckPeriod {
		retry = opts.ClusterHealthCheckPeriod
	}
	timeout := opts.HealthCheckTimeout
	if timeout <= 0 {
		timeout = DefaultHealthCheckTimeout
	}
	maxClaims := max(opts.MaxCustomClusterClaims, 0)

	return &managedClusterStatusController{
		clusterName: opts.ClusterName,
		client:      opts.HubClusterClient,
		lister:      opts.HubClusterInformer.Lister(),
		clock:       clk,
		reconcilers: []statusReconciler{
			&identityReconciler{
				clusterName:  opts.ClusterName,
				claimLister:  opts.ClaimInformer.Lister(),
				spoke:        opts.SpokeIdentity,
				leases:       opts.HubLeaseClient,
				ownRenewTime: opts.OwnLeaseRenewTime,
				tracker:      tracker,
			},
			&clockReconciler{clusterName: opts.ClusterName, leases: opts.HubLeaseClient},
			&joinedReconciler{},
			&availableReconciler{
				discovery:     opts.SpokeDiscoveryClient,
				threshold:     threshold,
				retryInterval: retry,
				timeout:       timeout,
			},
			&resourceReconciler{
				discovery:  opts.SpokeDiscoveryClient,
				nodeLister: opts.NodeInformer.Lister(),
				period:     opts.ClusterHealthCheckPeriod,
			},
			&claimReconciler{
				claimLister:      opts.ClaimInformer.Lister(),
				maxCustom:        maxClaims,
				reservedSuffixes: opts.ReservedClusterClaimSuffixes,
			},
		},
	}
}

func (c *managedClusterStatusController) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	c.lock.Lock()
	defer c.lock.Unlock()

	key := syncCtx.QueueKey()
	logger := klog.FromContext(ctx).WithValues("controller", "ManagedClusterStatusController", "managedCluster", c.clusterName, "trigger", key)

	cluster, err := c.lister.Get(c.clusterName)
	if apierrors.IsNotFound(err) {
		// The creating controller makes it; its informer event brings us back.
		logger.V(4).Info("ManagedCluster not on the hub yet")
		return nil
	}
	if err != nil {
		return fmt.Errorf("unable to get ManagedCluster %q from the hub cache: %w", c.clusterName, err)
	}

	sc := &statusSyncContext{
		syncCtx:  syncCtx,
		logger:   logger,
		now:      c.clock.Now(),
		periodic: key == factory.DefaultQueueKey || key == "",
		key:      key,
	}
	updated := cluster.DeepCopy()
	var errs []error
	for _, r := range c.reconcilers {
		state, err := r.reconcile(ctx, sc, updated)
		if err != nil {
			errs = append(errs, err)
		}
		if state == reconcileStop {
			break
		}
	}

	if !apiequality.Semantic.DeepEqual(cluster.Status, updated.Status) {
		if err := c.patchStatus(ctx, cluster, updated); err != nil {
			errs = append(errs, err)
		} else {
			logger.V(2).Info("Patched the ManagedCluster status")
			emitTransitionEvents(syncCtx.Recorder(), cluster, updated)
		}
	}
	if len(errs) == 0 {
		for _, f := range sc.onSuccess {
			f()
		}
	}
	return utilerrors.NewAggregate(errs)
}

// statusPatchBody is the merge-patch document: the status plus uid and resourceVersion as
// preconditions, so a patch computed from a stale cache fails with a conflict instead of
// overwriting conditions the hub changed meanwhile (the conditions list is replaced whole
// by a merge patch).
type statusPatchBody struct {
	Metadata *statusPatchMetadata           `json:"metadata,omitempty"`
	Status   clusterv1.ManagedClusterStatus `json:"status"`
}

type statusPatchMetadata struct {
	UID             types.UID `json:"uid,omitempty"`
	ResourceVersion string    `json:"resourceVersion,omitempty"`
}

// patchStatus sends one JSON merge patch on the status subresource with the difference
// between old.Status and updated.Status.
func (c *managedClusterStatusController) patchStatus(ctx context.Context, old, updated *clusterv1.ManagedCluster) error {
	oldData, err := json.Marshal(statusPatchBody{Status: old.Status})
	if err != nil {
		return fmt.Errorf("unable to encode the status of ManagedCluster %q: %w", c.clusterName, err)
	}
	newData, err := json.Marshal(statusPatchBody{
		Metadata: &statusPatchMetadata{UID: old.UID, ResourceVersion: old.ResourceVersion},
		Status:   updated.Status,
	})
	if err != nil {
		return fmt.Errorf("unable to encode the status of ManagedCluster %q: %w", c.clusterName, err)
	}
	patch, err := jsonpatch.CreateMergePatch(oldData, newData)
	if err != nil {
		return fmt.Errorf("unable to build the status patch of ManagedCluster %q: %w", c.clusterName, err)
	}
	_, err = c.client.ManagedClusters().Patch(ctx, c.clusterName, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: fieldManager}, "status")
	if err != nil {
		return fmt.Errorf("unable to patch the status of ManagedCluster %q on the hub: %w", c.clusterName, err)
	}
	return nil
}

// emitTransitionEvents reports Joined and Available transitions that were just written.
func emitTransitionEvents(recorder events.Recorder, old, updated *clusterv1.ManagedCluster) {
	if !meta.IsStatusConditionTrue(old.Status.Conditions, clusterv1.ManagedClusterConditionJoined) &&
		meta.IsStatusConditionTrue(updated.Status.Conditions, clusterv1.ManagedClusterConditionJoined) {
		recorder.Eventf(ReasonManagedClusterJoined, "ManagedCluster %q joined the hub", updated.Name)
	}
	newAvailable := meta.FindStatusCondition(updated.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	if newAvailable == nil {
		return
	}
	if oldAvailable := meta.FindStatusCondition(old.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); oldAvailable != nil && oldAvailable.Status == newAvailable.Status {
		return
	}
	switch newAvailable.Status {
	case metav1.ConditionTrue:
		recorder.Eventf(ReasonManagedClusterAvailable, "ManagedCluster %q is available", updated.Name)
	case metav1.ConditionFalse:
		recorder.Warningf(ReasonManagedClusterUnavailable, "ManagedCluster %q is unavailable: %s: %s",
			updated.Name, newAvailable.Reason, newAvailable.Message)
	}
}

// setCondition sets condition with meta.SetStatusCondition semantics, stamping the
// transition time from the injected clock: the time only changes when the status does.
func setCondition(cluster *clusterv1.ManagedCluster, condition metav1.Condition, now time.Time) {
	condition.LastTransitionTime = metav1.NewTime(now)
	meta.SetStatusCondition(&cluster.Status.Conditions, condition)
}
