package managedcluster

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	clusterv1client "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1"
	clusterv1informer "open-cluster-management.io/api/client/cluster/informers/externalversions/cluster/v1"
	clusterv1listers "open-cluster-management.io/api/client/cluster/listers/cluster/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// Event reasons of the creating controller. They are user-visible API.
const (
	// ReasonManagedClusterCreated (Normal): the ManagedCluster was created (or re-created
	// after a deletion on the hub).
	ReasonManagedClusterCreated = "ManagedClusterCreated"
	// ReasonManagedClusterCreateFailed (Warning): the hub refused or failed the create or
	// the get (for example 401/403 once the bootstrap identity expired). Emitted once per
	// distinct failure, not on every retry.
	ReasonManagedClusterCreateFailed = "ManagedClusterCreateFailed"
	// ReasonManagedClusterClientConfigsUpdated (Normal): spec.managedClusterClientConfigs
	// was replaced with the configured spoke external server URLs.
	ReasonManagedClusterClientConfigsUpdated = "ManagedClusterClientConfigsUpdated"
	// ReasonManagedClusterClientConfigsUpdateFailed (Warning): the update of the client
	// configs was refused (the bootstrap identity may only create and get). Emitted once per
	// distinct failure.
	ReasonManagedClusterClientConfigsUpdateFailed = "ManagedClusterClientConfigsUpdateFailed"
	// ReasonEpochRecorded (Normal): the agent's session epoch was recorded on the ManagedCluster
	// (failoverv1alpha1.AnnotationEpoch).
	ReasonEpochRecorded = "EpochRecorded"
	// ReasonEpochRestored (Warning): the ManagedCluster carried a lower epoch than the agent's session: the hub was
	// restored from a backup taken before the agent's last session there, or someone changed the annotation. The
	// agent's epoch is recorded again.
	ReasonEpochRestored = "EpochRestored"
	// ReasonEpochUpdateFailed (Warning): the epoch could not be recorded (the hub refused the update). Emitted
	// once per distinct failure.
	ReasonEpochUpdateFailed = "EpochUpdateFailed"
)

// fieldManager is the field manager recorded on every write this package makes on the hub.
const fieldManager = "klusterlet-failover"

// CreatingOptions are the dependencies of the creating controller.
type CreatingOptions struct {
	// ClusterName is the ManagedCluster name (a DNS-1123 label). Required.
	ClusterName string
	// SpokeExternalServerURLs are the absolute https:// URLs of the spoke API server
	// (flag --spoke-external-server-urls), published in order as
	// spec.managedClusterClientConfigs[].url. When empty, the controller never changes the
	// client configs of an existing ManagedCluster.
	SpokeExternalServerURLs []string
	// SpokeCABundle is the PEM CA bundle of the spoke API server, published as
	// spec.managedClusterClientConfigs[].caBundle for every URL. May be empty.
	SpokeCABundle []byte
	// Annotations are set on the ManagedCluster when the agent creates it, and never changed afterwards (other
	// actors may edit them): OCM's --cluster-annotations. Only keys with the prefix
	// ClusterAnnotationsKeyPrefix belong here (FilterClusterAnnotations).
	Annotations map[string]string
	// HubClusterClient creates, gets and updates the ManagedCluster on the hub
	// (clientset.ClusterV1()). Required.
	HubClusterClient clusterv1client.ManagedClustersGetter
	// HubClusterCreateClient, when set, creates the ManagedCluster instead of
	// HubClusterClient. OCM's hub lets an agent identity only get, list, update and watch
	// its own ManagedCluster (ClusterRole open-cluster-management:managedcluster:<cluster>)
	// and removes even that when the ManagedCluster is deleted, while the bootstrap
	// identity may create ManagedClusters: the main controllers pass the bootstrap
	// identity's client here so that a ManagedCluster deleted on the hub is re-created.
	HubClusterCreateClient clusterv1client.ManagedClustersGetter
	// HubClusterInformer, when set, is a ManagedCluster informer scoped with
	// fieldSelector=metadata.name=<cluster> (informers.NewHubManagedClusterFactory): its
	// events trigger a sync (so a deletion on the hub leads to a re-create at once) and its
	// lister replaces the GET. Leave nil with the bootstrap identity, which may only create
	// and get ManagedClusters; the controller then GETs on each resync.
	HubClusterInformer clusterv1informer.ManagedClusterInformer
	// ConflictTracker, when set, guards the client configs of an existing ManagedCluster:
	// they are updated only once the status controller verified this spoke's identity and
	// while no conflict is recorded, so an agent that shares another spoke's cluster name
	// never rewrites that spoke's URLs (FC-06). Creating an absent ManagedCluster is not
	// guarded. Leave nil for the bootstrap phase (no status controller runs then).
	ConflictTracker *ConflictTracker
	// Epoch is the agent's session epoch, recorded on the ManagedCluster as failoverv1alpha1.AnnotationEpoch
	// (DecideEpoch) under the same guard as the client configs (ConflictTracker; never on another spoke's
	// ManagedCluster). A zero Number records nothing: the bootstrap phase, whose identity may not update.
	Epoch failoverv1alpha1.AgentEpoch
	// EpochRecorded, when set, is called from the controller's goroutine with the session epoch whenever
	// DecideEpoch changes it (rules 3 and 4: the ManagedCluster's adopted, or a number above it about to be
	// written; called before the write, which may still fail and is retried).
	EpochRecorded func(failoverv1alpha1.AgentEpoch)
	// ResyncInterval is the period of the unconditional resync. Required, > 0.
	ResyncInterval time.Duration
	// Recorder receives the events of this controller (spoke events in the agent
	// namespace). Required.
	Recorder events.Recorder
}

// managedClusterCreatingController ensures the ManagedCluster exists on the hub and
// carries our client configs. Requeue policy: transient hub errors are returned (rate
// limited retry); 401/403 are reported once through an event and retried on the next
// resync only, since they persist until the identity changes.
type managedClusterCreatingController struct {
	clusterName   string
	clientConfigs []clusterv1.ClientConfig
	annotations   map[string]string
	client        clusterv1client.ManagedClustersGetter
	createClient  clusterv1client.ManagedClustersGetter
	lister        clusterv1listers.ManagedClusterLister
	tracker       *ConflictTracker
	// epoch is the session epoch to record (zero Number: none); epochRecorded hears every new value.
	epoch         failoverv1alpha1.AgentEpoch
	epochRecorded func(failoverv1alpha1.AgentEpoch)
	// epochSeen is set once the ManagedCluster was seen carrying the session epoch: a lower one later is a
	// restore, not the hub's record from before this session.
	epochSeen bool
	// seen is set once the ManagedCluster was observed on the hub, so that a later create
	// is reported as a re-create.
	seen bool
	// lastFailure is the last reported failure (reason + message), used to emit each
	// distinct failure event once.
	lastFailure string
}

// NewManagedClusterCreatingController returns the controller "ManagedClusterCreatingController".
// Run it with one worker.
func NewManagedClusterCreatingController(opts CreatingOptions) factory.Controller {
	c := &managedClusterCreatingController{
		clusterName:   opts.ClusterName,
		clientConfigs: desiredClientConfigs(opts.SpokeExternalServerURLs, opts.SpokeCABundle),
		annotations:   opts.Annotations,
		client:        opts.HubClusterClient,
		createClient:  opts.HubClusterCreateClient,
		tracker:       opts.ConflictTracker,
		epoch:         opts.Epoch,
		epochRecorded: opts.EpochRecorded,
	}
	if c.createClient == nil {
		c.createClient = opts.HubClusterClient
	}
	f := factory.New().WithSync(c.sync).ResyncEvery(opts.ResyncInterval)
	if opts.ConflictTracker != nil {
		f = f.WithPostStartHooks(c.watchConflicts)
	}
	if opts.HubClusterInformer != nil {
		c.lister = opts.HubClusterInformer.Lister()
		f = f.WithFilteredEventsInformers(factory.NamesFilter(opts.ClusterName), opts.HubClusterInformer.Informer())
	}
	return f.ToController("ManagedClusterCreatingController", opts.Recorder)
}

func (c *managedClusterCreatingController) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	logger := klog.FromContext(ctx).WithValues("controller", "ManagedClusterCreatingController", "managedCluster", c.clusterName)

	existing, err := c.getCluster(ctx)
	switch {
	case apierrors.IsNotFound(err):
		return c.create(ctx, syncCtx, logger)
	case isAuthError(err):
		c.reportFailure(syncCtx, ReasonManagedClusterCreateFailed,
			fmt.Sprintf("Unable to get ManagedCluster %q from the hub: %v", c.clusterName, err))
		logger.V(2).Info("Not allowed to get the ManagedCluster, retrying on the next resync", "err", err)
		return nil
	case err != nil:
		return fmt.Errorf("unable to get ManagedCluster %q from the hub: %w", c.clusterName, err)
	}
	c.seen = true

	configsDue := len(c.clientConfigs) > 0 && !clientConfigsEqual(existing.Spec.ManagedClusterClientConfigs, c.clientConfigs)
	// The epoch is read and written only on a ManagedCluster verified to be this spoke's: never in the bootstrap
	// phase (no identity guard), nor on another spoke's of the same name.
	guarded := c.tracker != nil
	if guarded {
		conflict, _ := c.tracker.Conflict()
		guarded = !conflict && c.tracker.Verified()
	}
	epoch, epochDue := c.epoch, false
	if c.epoch.Number > 0 && guarded {
		epoch, epochDue = DecideEpoch(existing.Annotations[failoverv1alpha1.AnnotationEpoch], c.epoch)
	}
	if !configsDue && !epochDue {
		c.lastFailure = ""
		if guarded {
			c.adoptEpoch(epoch)
			c.epochSeen = c.epochSeen || c.epoch.Number > 0
		}
		return nil
	}
	if c.tracker != nil && !guarded {
		logger.V(2).Info("Identity unverified or in conflict; client configs left unchanged")
		return nil
	}
	c.adoptEpoch(epoch)
	updated := existing.DeepCopy()
	if configsDue {
		updated.Spec.ManagedClusterClientConfigs = c.clientConfigs
	}
	if epochDue {
		if updated.Annotations == nil {
			updated.Annotations = map[string]string{}
		}
		updated.Annotations[failoverv1alpha1.AnnotationEpoch] = epoch.String()
	}
	_, err = c.client.ManagedClusters().Update(ctx, updated, metav1.UpdateOptions{FieldManager: fieldManager})
	reason, what := ReasonManagedClusterClientConfigsUpdateFailed, "client configs"
	if !configsDue {
		reason, what = ReasonEpochUpdateFailed, "epoch"
	}
	switch {
	case isAuthError(err):
		c.reportFailure(syncCtx, reason,
			fmt.Sprintf("Unable to update the %s of ManagedCluster %q on the hub: %v", what, c.clusterName, err))
		logger.V(2).Info("Not allowed to update the ManagedCluster, retrying on the next resync", "what", what, "err", err)
		return nil
	case err != nil:
		return fmt.Errorf("unable to update the %s of ManagedCluster %q on the hub: %w", what, c.clusterName, err)
	}
	c.lastFailure = ""
	if configsDue {
		syncCtx.Recorder().Eventf(ReasonManagedClusterClientConfigsUpdated,
			"client configs of ManagedCluster %q set to %s", c.clusterName, clientConfigURLs(c.clientConfigs))
		logger.Info("Updated the ManagedCluster client configs", "urls", clientConfigURLs(c.clientConfigs))
	}
	if epochDue {
		current := existing.Annotations[failoverv1alpha1.AnnotationEpoch]
		if prev, err := failoverv1alpha1.ParseAgentEpoch(current); err == nil && prev.Number < epoch.Number && (c.epochSeen || epoch.From == "") {
			syncCtx.Recorder().Warningf(ReasonEpochRestored, "ManagedCluster %q carried epoch %d, lower than this agent's session epoch %d: "+
				"the hub was restored from a backup taken before, or the annotation %s was changed; recorded %s again",
				c.clusterName, prev.Number, epoch.Number, failoverv1alpha1.AnnotationEpoch, epoch)
		} else {
			syncCtx.Recorder().Eventf(ReasonEpochRecorded, "ManagedCluster %q: %s recorded (was %q)", c.clusterName, epoch, current)
		}
		logger.Info("Recorded the agent's epoch on the ManagedCluster", "epoch", epoch.String(), "was", current)
		c.epochSeen = true
	}
	return nil
}

// adoptEpoch makes epoch the session epoch (DecideEpoch's outcome) and reports a new value.
func (c *managedClusterCreatingController) adoptEpoch(epoch failoverv1alpha1.AgentEpoch) {
	if epoch == c.epoch || epoch.Number == 0 {
		return
	}
	c.epoch = epoch
	if c.epochRecorded != nil {
		c.epochRecorded(epoch)
	}
}

// DecideEpoch returns the session epoch after reading current, the ManagedCluster's AnnotationEpoch value ("" when
// absent), given session, the agent's session epoch (Number >= 1), and whether the ManagedCluster is to be
// updated with it. The rules:
//  1. current absent, unparsable or lower than session: write session. A hub restored from a backup taken
//     before the agent's session there, or an annotation someone removed, gets the agent's epoch again.
//  2. current equal to session: nothing (already recorded, or a restart onto the hub of the agent's last session).
//  3. current higher and session.From empty (no switch, and the agent lost its own record: it runs without a
//     FailoverConfig, or its status was lost): adopt current, write nothing.
//  4. current higher and session.From set (a switch, whose epoch must exceed every earlier one): write
//     {current + 1, session.From}.
func DecideEpoch(current string, session failoverv1alpha1.AgentEpoch) (failoverv1alpha1.AgentEpoch, bool) {
	cur, err := failoverv1alpha1.ParseAgentEpoch(current)
	switch {
	case current == "" || err != nil || cur.Number < session.Number:
		return session, true
	case cur.Number == session.Number:
		return session, false
	case session.From == "":
		return cur, false
	default:
		return failoverv1alpha1.AgentEpoch{Number: cur.Number + 1, From: session.From}, true
	}
}

// watchConflicts requeues the controller when the identity verdict changes.
func (c *managedClusterCreatingController) watchConflicts(ctx context.Context, syncCtx factory.SyncContext) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.tracker.Changed():
			syncCtx.Queue().Add(factory.DefaultQueueKey)
		}
	}
}

// getCluster reads the ManagedCluster from the lister when an informer was given, from the
// hub otherwise. A NotFound from the lister is confirmed by create's AlreadyExists.
func (c *managedClusterCreatingController) getCluster(ctx context.Context) (*clusterv1.ManagedCluster, error) {
	if c.lister != nil {
		return c.lister.Get(c.clusterName)
	}
	return c.client.ManagedClusters().Get(ctx, c.clusterName, metav1.GetOptions{})
}

func (c *managedClusterCreatingController) create(ctx context.Context, syncCtx factory.SyncContext, logger klog.Logger) error {
	_, err := c.createClient.ManagedClusters().Create(ctx, managedClusterObject(c.clusterName, c.clientConfigs, c.annotations), metav1.CreateOptions{FieldManager: fieldManager})
	switch {
	case apierrors.IsAlreadyExists(err):
		// The lister lagged behind the hub; the next event or resync sees the object.
		return nil
	case isAuthError(err):
		c.reportFailure(syncCtx, ReasonManagedClusterCreateFailed,
			fmt.Sprintf("Unable to create ManagedCluster %q on the hub: %v", c.clusterName, err))
		logger.V(2).Info("Not allowed to create the ManagedCluster, retrying on the next resync", "err", err)
		return nil
	case err != nil:
		return fmt.Errorf("unable to create ManagedCluster %q on the hub: %w", c.clusterName, err)
	}
	c.lastFailure = ""
	verb := "created"
	if c.seen {
		verb = "re-created after its deletion"
	}
	syncCtx.Recorder().Eventf(ReasonManagedClusterCreated, "ManagedCluster %q %s on the hub with client configs %s",
		c.clusterName, verb, clientConfigURLs(c.clientConfigs))
	logger.Info("Created the ManagedCluster on the hub", "recreated", c.seen)
	return nil
}

// EnsureManagedCluster GETs ManagedCluster clusterName with client and, when the hub has none, creates it with
// client configs for urls and caBundle and with annotations (as the creating controller would). It returns true when it created it;
// AlreadyExists counts as present. The main controllers cannot do this themselves when the ManagedCluster is
// absent: OCM's hub grants the agent identity access only to an existing, accepted ManagedCluster, so their hub
// informer never syncs. client is the bootstrap identity's (OCM's bootstrap ClusterRole allows get and create).
// Errors are the hub's, wrapped with the cluster name.
func EnsureManagedCluster(ctx context.Context, client clusterv1client.ManagedClustersGetter, clusterName string, urls []string, caBundle []byte, annotations map[string]string) (bool, error) {
	_, err := client.ManagedClusters().Get(ctx, clusterName, metav1.GetOptions{})
	switch {
	case err == nil:
		return false, nil
	case !apierrors.IsNotFound(err):
		return false, fmt.Errorf("unable to get ManagedCluster %q from the hub: %w", clusterName, err)
	}
	_, err = client.ManagedClusters().Create(ctx, managedClusterObject(clusterName, desiredClientConfigs(urls, caBundle), annotations), metav1.CreateOptions{FieldManager: fieldManager})
	switch {
	case apierrors.IsAlreadyExists(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("unable to create ManagedCluster %q on the hub: %w", clusterName, err)
	}
	return true, nil
}

// managedClusterObject is the ManagedCluster the agent creates: name, annotations and client configs, nothing
// else.
func managedClusterObject(name string, configs []clusterv1.ClientConfig, annotations map[string]string) *clusterv1.ManagedCluster {
	var copied map[string]string
	if len(annotations) > 0 {
		copied = make(map[string]string, len(annotations))
		for k, v := range annotations {
			copied[k] = v
		}
	}
	return &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: copied},
		Spec:       clusterv1.ManagedClusterSpec{ManagedClusterClientConfigs: configs},
	}
}

// reportFailure emits a Warning event for a failure that differs from the last reported one.
func (c *managedClusterCreatingController) reportFailure(syncCtx factory.SyncContext, reason, message string) {
	if key := reason + "\x00" + message; key != c.lastFailure {
		c.lastFailure = key
		syncCtx.Recorder().Warning(reason, message)
	}
}

// desiredClientConfigs returns one ClientConfig per URL, in order, each with caBundle, or
// nil when there are no URLs.
func desiredClientConfigs(urls []string, caBundle []byte) []clusterv1.ClientConfig {
	if len(urls) == 0 {
		return nil
	}
	configs := make([]clusterv1.ClientConfig, 0, len(urls))
	for _, url := range urls {
		configs = append(configs, clusterv1.ClientConfig{URL: url, CABundle: bytes.Clone(caBundle)})
	}
	return configs
}

// clientConfigsEqual compares two client config lists in order, URL and CA bundle bytes.
func clientConfigsEqual(a, b []clusterv1.ClientConfig) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].URL != b[i].URL || !bytes.Equal(a[i].CABundle, b[i].CABundle) {
			return false
		}
	}
	return true
}

func clientConfigURLs(configs []clusterv1.ClientConfig) []string {
	urls := make([]string, 0, len(configs))
	for _, config := range configs {
		urls = append(urls, config.URL)
	}
	return urls
}

func isAuthError(err error) bool {
	return apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err)
}
