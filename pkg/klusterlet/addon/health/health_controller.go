package health

import (
	"context"
	"fmt"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonv1alpha1client "open-cluster-management.io/api/client/addon/clientset/versioned/typed/addon/v1alpha1"
	addoninformerv1alpha1 "open-cluster-management.io/api/client/addon/informers/externalversions/addon/v1alpha1"
	addonlisterv1alpha1 "open-cluster-management.io/api/client/addon/listers/addon/v1alpha1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/addon/registration"
)

// Reasons of the Available condition, OCM's (they are read by users and OCM's hub tooling).
const (
	// ReasonManagedClusterAddOnLeaseUpdated: the add-on's lease was renewed within the grace period (status True).
	ReasonManagedClusterAddOnLeaseUpdated = "ManagedClusterAddOnLeaseUpdated"
	// ReasonManagedClusterAddOnLeaseUpdateStopped: the lease has not been renewed for longer than the grace period (status False).
	ReasonManagedClusterAddOnLeaseUpdateStopped = "ManagedClusterAddOnLeaseUpdateStopped"
	// ReasonManagedClusterAddOnLeaseNotFound: the add-on has no lease (status Unknown).
	ReasonManagedClusterAddOnLeaseNotFound = "ManagedClusterAddOnLeaseNotFound"
)

// ReasonManagedClusterAddOnStatusUpdated (Normal spoke event, OCM's reason): the Available condition of an add-on changed.
const ReasonManagedClusterAddOnStatusUpdated = "ManagedClusterAddOnStatusUpdated"

const (
	controllerName = "ManagedClusterAddOnLeaseController"
	fieldManager   = "klusterlet-failover-addon"

	// DefaultLeaseDurationSeconds is OCM's add-on lease duration; the grace period is GraceFactor times it.
	DefaultLeaseDurationSeconds = 60
	// GraceFactor is how many lease durations may pass without a renewal before the add-on is unavailable.
	GraceFactor = 5
	// DefaultResyncInterval is how often every add-on's lease is read (OCM's 30 s).
	DefaultResyncInterval = 30 * time.Second
	// factoryResync is the factory's own resync, which starts the controller and backs up the self-requeue.
	factoryResync = 10 * time.Minute
)

// Options configures NewAddOnHealthController. Fields without a stated default are required.
type Options struct {
	// ClusterName is the hub namespace of the cluster's ManagedClusterAddOns.
	ClusterName string
	// HubAddOnInformer lists them; HubAddOnClient patches their status.
	HubAddOnInformer addoninformerv1alpha1.ManagedClusterAddOnInformer
	HubAddOnClient   addonv1alpha1client.ManagedClusterAddOnsGetter
	// SpokeLeases reads add-on leases on the managed cluster; HostingLeases on the cluster hosting the agent, for
	// hosted add-ons (default SpokeLeases).
	SpokeLeases, HostingLeases coordinationv1client.LeasesGetter
	// LeaseDurationSeconds is the add-on lease duration; 0 means DefaultLeaseDurationSeconds.
	LeaseDurationSeconds int
	// ResyncInterval is how often all leases are read; 0 means DefaultResyncInterval.
	ResyncInterval time.Duration
	// Clock supplies now; default clock.RealClock{}.
	Clock clock.Clock
	// Recorder receives the controller's events.
	Recorder events.Recorder
}

// AddOnHealthController sets the Available condition of lease-checked add-ons on the hub.
//
// Sync policy: the default key queues every add-on and itself again after ResyncInterval; an add-on key reads the add-on's lease
// live, computes the condition (LeaseCondition) and patches the status only when the condition's status, reason or
// message differs. While Available is True it requeues the add-on for the moment the lease would go stale. Add-ons
// with health check mode Customized are skipped; a lease read error other than NotFound is returned (requeue).
type AddOnHealthController struct {
	factory.Controller
	o      Options
	addOns addonlisterv1alpha1.ManagedClusterAddOnLister
}

// NewAddOnHealthController checks o, fills its defaults and returns the controller; the error names the first
// missing option.
func NewAddOnHealthController(o Options) (*AddOnHealthController, error) {
	switch {
	case o.ClusterName == "":
		return nil, fmt.Errorf("%s: ClusterName is required", controllerName)
	case o.HubAddOnInformer == nil || o.HubAddOnClient == nil:
		return nil, fmt.Errorf("%s: HubAddOnInformer and HubAddOnClient are required", controllerName)
	case o.SpokeLeases == nil:
		return nil, fmt.Errorf("%s: SpokeLeases is required", controllerName)
	case o.Recorder == nil:
		return nil, fmt.Errorf("%s: Recorder is required", controllerName)
	case o.LeaseDurationSeconds < 0:
		return nil, fmt.Errorf("%s: LeaseDurationSeconds %d: must be >= 0", controllerName, o.LeaseDurationSeconds)
	}
	if o.HostingLeases == nil {
		o.HostingLeases = o.SpokeLeases
	}
	if o.LeaseDurationSeconds == 0 {
		o.LeaseDurationSeconds = DefaultLeaseDurationSeconds
	}
	if o.ResyncInterval <= 0 {
		o.ResyncInterval = DefaultResyncInterval
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	c := &AddOnHealthController{o: o, addOns: o.HubAddOnInformer.Lister()}
	c.Controller = factory.New().
		WithInformersQueueKeysFunc(func(obj runtime.Object) []string {
			accessor, err := meta.Accessor(obj)
			if err != nil {
				return nil
			}
			return []string{accessor.GetName()}
		}, o.HubAddOnInformer.Informer()).
		WithSync(c.sync).
		// The factory warns (an event on every start, i.e. every hub switch) about resyncs under a minute: the
		// 30 s period is kept by the default key requeueing itself, the factory's resync only starts it.
		ResyncEvery(max(o.ResyncInterval, factoryResync)).
		ToController(controllerName, o.Recorder)
	return c, nil
}

// GracePeriod is how long after its last renewal a lease still counts as renewed.
func (c *AddOnHealthController) GracePeriod() time.Duration {
	return time.Duration(GraceFactor*c.o.LeaseDurationSeconds) * time.Second
}

// LeaseCondition returns the Available condition for an add-on's lease at now (lease nil: not found) and, when it
// is True, how long until it turns False without a renewal. Pure, OCM's rule and messages.
func LeaseCondition(addOnName string, lease *coordinationv1.Lease, grace time.Duration, now time.Time) (metav1.Condition, time.Duration) {
	cond := metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable}
	switch {
	case lease == nil:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionUnknown, ReasonManagedClusterAddOnLeaseNotFound, fmt.Sprintf("The status of %s add-on is unknown.", addOnName)
		return cond, 0
	case lease.Spec.RenewTime != nil && now.Before(lease.Spec.RenewTime.Add(grace)):
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ReasonManagedClusterAddOnLeaseUpdated, fmt.Sprintf("%s add-on is available.", addOnName)
		return cond, lease.Spec.RenewTime.Add(grace).Sub(now)
	default:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonManagedClusterAddOnLeaseUpdateStopped, fmt.Sprintf("%s add-on is not available.", addOnName)
		return cond, 0
	}
}

func (c *AddOnHealthController) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	key := syncCtx.QueueKey()
	if key == factory.DefaultQueueKey {
		addOns, err := c.addOns.ManagedClusterAddOns(c.o.ClusterName).List(labels.Everything())
		if err != nil {
			return fmt.Errorf("list ManagedClusterAddOns of cluster %s: %w", c.o.ClusterName, err)
		}
		for _, a := range addOns {
			syncCtx.Queue().Add(a.Name)
		}
		syncCtx.Queue().AddAfter(factory.DefaultQueueKey, c.o.ResyncInterval)
		return nil
	}
	addOn, err := c.addOns.ManagedClusterAddOns(c.o.ClusterName).Get(key)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get ManagedClusterAddOn %s/%s: %w", c.o.ClusterName, key, err)
	}
	if addOn.Status.HealthCheck.Mode == addonv1alpha1.HealthCheckModeCustomized {
		return nil
	}
	namespace := registration.InstallNamespace(addOn)
	leases := c.o.SpokeLeases
	if registration.IsHosted(addOn) {
		leases = c.o.HostingLeases
	}
	lease, err := leases.Leases(namespace).Get(ctx, addOn.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		lease = nil
	case err != nil:
		return fmt.Errorf("get Lease %s/%s of add-on %s: %w", namespace, addOn.Name, addOn.Name, err)
	}
	now := c.o.Clock.Now()
	cond, staleIn := LeaseCondition(addOn.Name, lease, c.GracePeriod(), now)
	if staleIn > 0 {
		syncCtx.Queue().AddAfter(key, staleIn+time.Second)
	}
	if existing := meta.FindStatusCondition(addOn.Status.Conditions, cond.Type); existing != nil &&
		existing.Status == cond.Status && existing.Reason == cond.Reason && existing.Message == cond.Message {
		return nil
	}
	updated := addOn.DeepCopy()
	cond.LastTransitionTime = metav1.NewTime(now)
	meta.SetStatusCondition(&updated.Status.Conditions, cond)
	if err := c.patchStatus(ctx, addOn, updated); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Add-on availability updated", "addon", addOn.Name, "status", cond.Status, "reason", cond.Reason)
	syncCtx.Recorder().Eventf(ReasonManagedClusterAddOnStatusUpdated, "update managed cluster addon %q available condition to %q with its lease %q/%q status",
		addOn.Name, cond.Status, namespace, addOn.Name)
	return nil
}

// patchStatus writes the status difference between old and updated (registration.PatchStatus).
func (c *AddOnHealthController) patchStatus(ctx context.Context, old, updated *addonv1alpha1.ManagedClusterAddOn) error {
	return registration.PatchStatus(ctx, c.o.HubAddOnClient, fieldManager, old, updated)
}
