package registration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	certificatesv1informers "k8s.io/client-go/informers/certificates/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
	certificatesv1client "k8s.io/client-go/kubernetes/typed/certificates/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	certificatesv1listers "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonv1alpha1client "open-cluster-management.io/api/client/addon/clientset/versioned/typed/addon/v1alpha1"
	addoninformerv1alpha1 "open-cluster-management.io/api/client/addon/informers/externalversions/addon/v1alpha1"
	addonlisterv1alpha1 "open-cluster-management.io/api/client/addon/listers/addon/v1alpha1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/backoff"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// Event reasons of the add-on registration controller (spoke events). They are user-visible API.
const (
	// ReasonAddOnCSRCreated (Normal): a CSR for an add-on registration was created on the hub.
	ReasonAddOnCSRCreated = "AddOnCSRCreated"
	// ReasonAddOnCSRCreateFailed (Warning): creating it failed; retried with back-off.
	ReasonAddOnCSRCreateFailed = "AddOnCSRCreateFailed"
	// ReasonAddOnCSRFailed (Warning): the CSR was denied, failed, deleted before issue, or its certificate does
	// not match the key; a new one follows after back-off.
	ReasonAddOnCSRFailed = "AddOnCSRFailed"
	// ReasonAddOnCSRCreationHalted (Warning): the hub already holds AddOnCSRThreshold pending CSRs of this
	// add-on; no new one is created until some are approved, denied or cleaned up (OCM's rule).
	ReasonAddOnCSRCreationHalted = "AddOnCSRCreationHalted"
	// ReasonAddOnCredentialsIssued (Normal): the registration Secret was written whole with a new certificate.
	ReasonAddOnCredentialsIssued = "AddOnCredentialsIssued"
	// ReasonAddOnCredentialsWriteFailed (Warning): writing the Secret failed; retried with the same certificate.
	ReasonAddOnCredentialsWriteFailed = "AddOnCredentialsWriteFailed"
	// ReasonAddOnCredentialsRemoved (Normal): the Secret of a removed registration or add-on was deleted.
	ReasonAddOnCredentialsRemoved = "AddOnCredentialsRemoved"
	// ReasonAddOnNotOnHub (Warning): a registration Secret issued by another hub belongs to an add-on (or a
	// registration) the active hub does not have; the Secret is kept untouched.
	ReasonAddOnNotOnHub = "AddOnNotOnHub"
	// ReasonAddOnRegistrationInvalid (Warning): a registration in the ManagedClusterAddOn's status cannot be
	// served (empty signer, Secret name not valid, bad install namespace).
	ReasonAddOnRegistrationInvalid = "AddOnRegistrationInvalid"
)

// Condition the controller sets on the ManagedClusterAddOn on the hub, with OCM's type and reasons.
const (
	// ConditionClientCertificateRotated is OCM's condition type for the add-on's client certificate.
	ConditionClientCertificateRotated = "ClusterCertificateRotated"
	// ReasonClientCertificateUpdated: a new certificate was stored (status True).
	ReasonClientCertificateUpdated = "ClientCertificateUpdated"
	// ReasonClientCertificateUpdateFailed: a CSR failed or could not be created (status False).
	ReasonClientCertificateUpdateFailed = "ClientCertificateUpdateFailed"
)

const (
	controllerName = "AddOnRegistrationController"
	fieldManager   = "klusterlet-failover-addon"

	// AddOnCSRThreshold is OCM's cap on pending CSRs of one add-on of one cluster before CSR creation halts.
	AddOnCSRThreshold = 10
	// DefaultResyncInterval is the periodic resync (OCM's add-on registration resync: 10 minutes).
	DefaultResyncInterval = 10 * time.Minute
	// secretWriteTimeout bounds a Secret write, which is not cancelled with the controller.
	secretWriteTimeout = 10 * time.Second
	// namespaceRecheck is how soon a Secret whose install namespace does not exist yet is tried again.
	namespaceRecheck = 5 * time.Second
)

// Options configures NewAddOnRegistrationController. Fields without a stated default are required.
type Options struct {
	// ClusterName and AgentName are the agent's identity; the add-on subjects default from them.
	ClusterName, AgentName string
	// HubName names the active hub ("primary" or a FailoverConfig alternate); it goes into IssuingHubAnnotation.
	HubName string
	// Hub is the active hub's server, proxy-url and CA, written into add-on kubeconfigs.
	Hub clientcert.HubInfo
	// HubAddOnInformer lists the ManagedClusterAddOns of namespace ClusterName on the hub.
	HubAddOnInformer addoninformerv1alpha1.ManagedClusterAddOnInformer
	// HubAddOnClient patches their status (kubeClientDriver, ClusterCertificateRotated) in namespace ClusterName.
	HubAddOnClient addonv1alpha1client.ManagedClusterAddOnsGetter
	// HubCSRs creates and reads CSRs on the hub with the agent's hub identity.
	HubCSRs certificatesv1client.CertificateSigningRequestInterface
	// HubCSRInformer watches the add-on CSRs of this cluster (labels cluster-name=<cluster> and addon-name).
	HubCSRInformer certificatesv1informers.CertificateSigningRequestInformer
	// SpokeSecrets writes the Secrets of add-ons whose agents run on the managed cluster.
	SpokeSecrets corev1client.SecretsGetter
	// SpokeSecretInformer watches the Secrets labelled AddOnNameLabel on the managed cluster.
	SpokeSecretInformer corev1informers.SecretInformer
	// HostingSecrets and HostingSecretInformer are the same for the cluster hosting the agent, used for hosted
	// add-ons (annotation hosting-cluster-name). Default: the Spoke ones (the agent runs on the managed cluster).
	HostingSecrets        corev1client.SecretsGetter
	HostingSecretInformer corev1informers.SecretInformer
	// ExpirationSeconds, if set, is sent as spec.expirationSeconds of every add-on CSR (the agent's
	// --client-cert-expiration-seconds, as OCM).
	ExpirationSeconds *int32
	// RetryBackoff spaces failed CSR attempts per registration; zero fields take 10s and 5m.
	RetryBackoff backoff.Backoff
	// ResyncInterval is the periodic resync; 0 means DefaultResyncInterval.
	ResyncInterval time.Duration
	// Clock supplies now; default clock.RealClock{}.
	Clock clock.Clock
	// Jitter returns a number in [0, 1) drawn once per certificate for its rotation deadline; default
	// rand.Float64.
	Jitter func() float64
	// Recorder receives the controller's events.
	Recorder events.Recorder
	// OnStatus, if set, is called from the sync goroutine with every registration's state (sorted by secret)
	// whenever it changed; it must not block.
	OnStatus func([]failoverv1alpha1.AddOnRegistrationStatus)
}

// AddOnRegistrationController keeps the credentials of the cluster's add-ons on the active hub: for every
// registration in a ManagedClusterAddOn's status.registrations it keeps a Secret (SecretNameFor, in
// InstallNamespace, on the managed cluster or — hosted add-ons — on the cluster hosting the agent) holding a
// certificate the hub issued for the registration's subject (ResolveSubject), written whole in one Create/Update.
//
// Sync policy (queue key = add-on name; the default key resyncs every add-on):
//   - ManagedClusterAddOn absent: delete the Secrets this controller kept for it (OCM's cleanup); a deleting
//     add-on is left alone (its agent may need the credentials to clean up).
//   - status.kubeClientDriver is set to "csr" when the add-on has a kube-apiserver-client registration, "" when
//     not (one status patch, only when it differs), as OCM does.
//   - per registration: Assess the live Secret; valid → requeue at its rotation deadline; else at most one CSR in
//     flight (fresh ECDSA key in memory, OCM's labels and names), followed through the CSR informer; issued →
//     verify and write the Secret; denied, failed, deleted or invalid → Warning and back-off.
//   - a registration that disappeared (or whose namespace or signer changed) has its old Secret deleted; a changed
//     subject keeps the Secret until the new certificate replaces it.
//   - at the first resync, Secrets carrying IssuingHubAnnotation of this hub whose add-on or registration is gone
//     are deleted (cleanup across agent restarts); those of another hub are always kept, and reported
//     (AddOnNotOnHub) when this hub has no ManagedClusterAddOn of that name.
//
// Errors are returned (requeue with rate limit); a hub CSR create failure is also backed off per registration.
type AddOnRegistrationController struct {
	factory.Controller

	o         Options
	addOns    addonlisterv1alpha1.ManagedClusterAddOnLister
	csrLister certificatesv1listers.CertificateSigningRequestLister

	// State of the single sync worker.
	known    map[string]map[string]Config // add-on → config hash → config kept in this run
	pending  map[string]*pendingCSR       // Config.Key() → CSR in flight
	failures map[string]failureState      // Config.Key() → back-off
	jitters  map[string]float64           // certificate serial/NotAfter → jitter
	scanned  bool
	// separateHosting is true when hosted add-ons' Secrets live on another cluster than the managed one.
	separateHosting bool
	lastWarns       map[string]string
	states          map[string]failoverv1alpha1.AddOnRegistrationStatus // Config.Key() → state, for OnStatus
	lastState       []failoverv1alpha1.AddOnRegistrationStatus
}

// pendingCSR is one CSR in flight and its private key (memory only; never logged).
type pendingCSR struct {
	config   Config
	keyPEM   []byte
	template *certificatesv1.CertificateSigningRequest
	name     string
	reason   string
}

type failureState struct {
	count   int
	retryAt time.Time
}

// NewAddOnRegistrationController checks o, fills its defaults and returns the controller; the error names the
// first missing option.
func NewAddOnRegistrationController(o Options) (*AddOnRegistrationController, error) {
	switch {
	case o.ClusterName == "" || o.AgentName == "" || o.HubName == "":
		return nil, fmt.Errorf("%s: ClusterName, AgentName and HubName are required", controllerName)
	case o.HubAddOnInformer == nil || o.HubAddOnClient == nil:
		return nil, fmt.Errorf("%s: HubAddOnInformer and HubAddOnClient are required", controllerName)
	case o.HubCSRs == nil || o.HubCSRInformer == nil:
		return nil, fmt.Errorf("%s: HubCSRs and HubCSRInformer are required", controllerName)
	case o.SpokeSecrets == nil || o.SpokeSecretInformer == nil:
		return nil, fmt.Errorf("%s: SpokeSecrets and SpokeSecretInformer are required", controllerName)
	case o.Recorder == nil:
		return nil, fmt.Errorf("%s: Recorder is required", controllerName)
	}
	if _, err := BuildAddOnKubeconfig(o.Hub); err != nil {
		return nil, fmt.Errorf("%s: Hub: %w", controllerName, err)
	}
	if o.HostingSecrets == nil || o.HostingSecretInformer == nil {
		o.HostingSecrets, o.HostingSecretInformer = o.SpokeSecrets, o.SpokeSecretInformer
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	o.RetryBackoff = o.RetryBackoff.WithDefaults(backoff.Default)
	if o.ResyncInterval <= 0 {
		o.ResyncInterval = DefaultResyncInterval
	}
	c := &AddOnRegistrationController{
		o:         o,
		addOns:    o.HubAddOnInformer.Lister(),
		csrLister: o.HubCSRInformer.Lister(),
		known:     map[string]map[string]Config{},
		pending:   map[string]*pendingCSR{},
		failures:  map[string]failureState{},
		jitters:   map[string]float64{},
		lastWarns: map[string]string{},
		states:    map[string]failoverv1alpha1.AddOnRegistrationStatus{},
	}
	// Typed informers are new values on every call of a factory: compare the shared informers under them.
	c.separateHosting = o.HostingSecretInformer.Informer() != o.SpokeSecretInformer.Informer()
	informers := []factory.Informer{o.HubAddOnInformer.Informer(), o.HubCSRInformer.Informer(), o.SpokeSecretInformer.Informer()}
	if c.separateHosting {
		informers = append(informers, o.HostingSecretInformer.Informer())
	}
	c.Controller = factory.New().
		WithInformersQueueKeysFunc(addOnQueueKeys, informers...).
		WithSync(c.sync).
		ResyncEvery(o.ResyncInterval).
		ToController(controllerName, o.Recorder)
	return c, nil
}

// addOnQueueKeys maps an add-on, an add-on CSR or a labelled Secret to the add-on's name.
func addOnQueueKeys(obj runtime.Object) []string {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	if _, ok := obj.(*addonv1alpha1.ManagedClusterAddOn); ok {
		return []string{accessor.GetName()}
	}
	if name := accessor.GetLabels()[AddOnNameLabel]; name != "" {
		return []string{name}
	}
	return nil
}

func (c *AddOnRegistrationController) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	key := syncCtx.QueueKey()
	logger := klog.FromContext(ctx).WithValues("controller", controllerName, "hub", c.o.HubName, "cluster", c.o.ClusterName)
	ctx = klog.NewContext(ctx, logger)
	defer c.report()
	if key != factory.DefaultQueueKey {
		return c.syncAddOn(ctx, syncCtx, key)
	}
	addOns, err := c.addOns.ManagedClusterAddOns(c.o.ClusterName).List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list ManagedClusterAddOns of cluster %s: %w", c.o.ClusterName, err)
	}
	names := map[string]bool{}
	for _, a := range addOns {
		names[a.Name] = true
	}
	for name := range c.known {
		names[name] = true
	}
	for name := range names {
		syncCtx.Queue().Add(name)
	}
	if !c.scanned {
		if err := c.scanSecrets(ctx, syncCtx); err != nil {
			return err
		}
		c.scanned = true
	}
	return nil
}

// syncAddOn reconciles every registration of one add-on.
func (c *AddOnRegistrationController) syncAddOn(ctx context.Context, syncCtx factory.SyncContext, name string) error {
	logger := klog.FromContext(ctx).WithValues("addon", name)
	ctx = klog.NewContext(ctx, logger)
	addOn, err := c.addOns.ManagedClusterAddOns(c.o.ClusterName).Get(name)
	if apierrors.IsNotFound(err) {
		return c.removeAll(ctx, syncCtx, name, fmt.Sprintf("ManagedClusterAddOn %s/%s is gone from hub %s", c.o.ClusterName, name, c.o.HubName))
	}
	if err != nil {
		return fmt.Errorf("get ManagedClusterAddOn %s/%s: %w", c.o.ClusterName, name, err)
	}
	if !addOn.DeletionTimestamp.IsZero() {
		return nil
	}
	if patched, err := c.ensureDriver(ctx, addOn); err != nil || patched {
		// The status event requeues the add-on with the new status.
		return err
	}

	configs, cfgErrs := ConfigsFor(c.o.ClusterName, c.o.AgentName, addOn)
	if len(cfgErrs) > 0 {
		c.warnOnce(syncCtx, "invalid/"+name, ReasonAddOnRegistrationInvalid, utilerrors.NewAggregate(cfgErrs).Error())
	}
	wanted := map[string]Config{}
	wantedKeys := map[string]bool{}
	for _, cfg := range configs {
		wanted[cfg.Hash] = cfg
		wantedKeys[cfg.Key()] = true
	}
	var errs []error
	for hash, old := range c.known[name] {
		if _, ok := wanted[hash]; ok {
			continue
		}
		if wantedKeys[old.Key()] {
			// Same Secret, another subject or signer: it is kept until the new certificate replaces it.
			delete(c.pending, old.Key())
			delete(c.failures, old.Key())
			continue
		}
		if err := c.remove(ctx, syncCtx, old, fmt.Sprintf("registration %s of add-on %s is gone or changed on hub %s", old.SignerName, name, c.o.HubName)); err != nil {
			errs = append(errs, err)
		}
	}
	var next time.Duration
	for _, cfg := range configs {
		after, err := c.reconcile(ctx, syncCtx, addOn, cfg)
		if err != nil {
			errs = append(errs, err)
		}
		if after > 0 && (next == 0 || after < next) {
			next = after
		}
	}
	if len(wanted) == 0 {
		delete(c.known, name)
	} else {
		c.known[name] = wanted
	}
	if next > 0 {
		syncCtx.Queue().AddAfter(name, next)
	}
	return utilerrors.NewAggregate(errs)
}

// reconcile drives one registration; it returns when to look again (0: on the next event).
func (c *AddOnRegistrationController) reconcile(ctx context.Context, syncCtx factory.SyncContext, addOn *addonv1alpha1.ManagedClusterAddOn, cfg Config) (time.Duration, error) {
	now := c.o.Clock.Now()
	additional, err := AdditionalData(cfg, c.o.ClusterName, c.o.Hub)
	if err != nil {
		return 0, err
	}
	if p := c.pending[cfg.Key()]; p != nil && p.config.Hash != cfg.Hash {
		delete(c.pending, cfg.Key())
	}
	live, err := c.getSecret(ctx, cfg)
	if err != nil {
		return 0, err
	}
	if p := c.pending[cfg.Key()]; p != nil && p.name != "" {
		return c.follow(ctx, syncCtx, addOn, p, live, additional, now)
	}

	var data map[string][]byte
	issuer := ""
	if live != nil {
		data, issuer = live.Data, live.Annotations[IssuingHubAnnotation]
	}
	a := Assess(data, cfg, additional, issuer, c.o.HubName, now, c.jitterFor(data[TLSCertKey]))
	if a.Valid {
		delete(c.failures, cfg.Key())
		if err := c.adopt(ctx, cfg, live); err != nil {
			return 0, err
		}
		c.setState(cfg, failoverv1alpha1.AddOnRegistrationRegistered, fmt.Sprintf("certificate valid until %s, rotation due at %s",
			text.Time(a.NotAfter), text.Time(a.RotateAt)), a.NotAfter)
		return a.RotateAt.Sub(now), nil
	}
	if f := c.failures[cfg.Key()]; now.Before(f.retryAt) {
		return f.retryAt.Sub(now), nil
	}
	if n := c.pendingCSRsOf(cfg.AddOnName); n >= AddOnCSRThreshold {
		c.warnOnce(syncCtx, "halt/"+cfg.Key(), ReasonAddOnCSRCreationHalted,
			fmt.Sprintf("add-on %s: %d CSRs are pending on hub %s; no new CSR for Secret %s until some are approved or removed", cfg.AddOnName, n, c.o.HubName, cfg.Key()))
		c.setState(cfg, failoverv1alpha1.AddOnRegistrationFailed, fmt.Sprintf("%d CSRs pending on the hub: CSR creation halted (%s)", n, a.Message), time.Time{})
		return c.o.RetryBackoff.Max, nil
	}
	return 0, c.createCSR(ctx, syncCtx, addOn, cfg, a, now)
}
