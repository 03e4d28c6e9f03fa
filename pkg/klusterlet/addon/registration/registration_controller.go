package registration

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
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
	clusterv1 "open-cluster-management.io/api/cluster/v1"

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

// createCSR creates the registration's CSR with a fresh key (or the key of a failed create).
func (c *AddOnRegistrationController) createCSR(ctx context.Context, syncCtx factory.SyncContext, addOn *addonv1alpha1.ManagedClusterAddOn, cfg Config, a Assessment, now time.Time) error {
	p := c.pending[cfg.Key()]
	if p == nil {
		keyPEM, err := clientcert.NewPrivateKey()
		if err != nil {
			return err
		}
		template, err := clientcert.NewSubjectCSR(clientcert.SubjectCSRRequest{
			GenerateName: fmt.Sprintf("addon-%s-%s-", c.o.ClusterName, cfg.AddOnName),
			Labels: map[string]string{
				clusterv1.ClusterNameLabelKey: c.o.ClusterName,
				AddOnNameLabel:                cfg.AddOnName,
			},
			Subject:           cfg.Subject,
			DNSNames:          []string{cfg.AddOnName + ".addon.open-cluster-management.io"},
			SignerName:        cfg.SignerName,
			ExpirationSeconds: c.o.ExpirationSeconds,
		}, keyPEM)
		if err != nil {
			return fmt.Errorf("add-on %s: %w", cfg.AddOnName, err)
		}
		p = &pendingCSR{config: cfg, keyPEM: keyPEM, template: template, reason: a.Reason}
		c.pending[cfg.Key()] = p
	}
	created, err := c.o.HubCSRs.Create(ctx, p.template.DeepCopy(), metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil {
		c.backOff(cfg, now)
		c.warnOnce(syncCtx, "create/"+cfg.Key(), ReasonAddOnCSRCreateFailed, fmt.Sprintf("add-on %s: creating a CSR on hub %s for Secret %s failed: %v", cfg.AddOnName, c.o.HubName, cfg.Key(), err))
		c.setRotatedCondition(ctx, addOn, metav1.ConditionFalse, ReasonClientCertificateUpdateFailed, fmt.Sprintf("Failed to create CSR %v", err))
		c.setState(cfg, failoverv1alpha1.AddOnRegistrationFailed, fmt.Sprintf("creating a CSR failed: %v", err), time.Time{})
		return fmt.Errorf("add-on %s: create CSR: %w", cfg.AddOnName, err)
	}
	p.name = created.Name
	delete(c.lastWarns, "create/"+cfg.Key())
	klog.FromContext(ctx).Info("Created add-on CSR", "csr", created.Name, "signer", cfg.SignerName, "reason", a.Reason)
	syncCtx.Recorder().Eventf(ReasonAddOnCSRCreated, "CSR %s created on hub %s for add-on %s (signer %s, subject %q): %s",
		created.Name, c.o.HubName, cfg.AddOnName, cfg.SignerName, cfg.Subject.CommonName, a.Message)
	c.setState(cfg, failoverv1alpha1.AddOnRegistrationPending, fmt.Sprintf("waiting for CSR %s (%s)", created.Name, a.Message), time.Time{})
	return nil
}

// follow reads the in-flight CSR and writes the Secret once it is issued.
func (c *AddOnRegistrationController) follow(ctx context.Context, syncCtx factory.SyncContext, addOn *addonv1alpha1.ManagedClusterAddOn, p *pendingCSR,
	live *corev1.Secret, additional map[string][]byte, now time.Time) (time.Duration, error) {
	cfg := p.config
	csr, err := c.csrLister.Get(p.name)
	if apierrors.IsNotFound(err) {
		csr, err = c.o.HubCSRs.Get(ctx, p.name, metav1.GetOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
		return c.fail(ctx, syncCtx, addOn, p, now, fmt.Sprintf("CSR %s was deleted before a certificate was issued", p.name))
	case err != nil:
		return 0, fmt.Errorf("add-on %s: get CSR %s: %w", cfg.AddOnName, p.name, err)
	}
	outcome, cond := clientcert.OutcomeOf(csr)
	switch outcome {
	case clientcert.CSRPending:
		return 0, nil
	case clientcert.CSRDenied, clientcert.CSRFailed:
		return c.fail(ctx, syncCtx, addOn, p, now, fmt.Sprintf("CSR %s %s: %s: %s", p.name, cond.Type, cond.Reason, cond.Message))
	}
	leaf, err := clientcert.VerifyCertificateForKey(csr.Status.Certificate, p.keyPEM, now)
	if err != nil {
		return c.fail(ctx, syncCtx, addOn, p, now, fmt.Sprintf("CSR %s: %v", p.name, err))
	}
	if !SubjectMatches(leaf.Subject, cfg.Subject) {
		// Stored, the next sync would find SubjectChanged and send another CSR at once: a signer that rewrites
		// the subject must meet the back-off instead.
		return c.fail(ctx, syncCtx, addOn, p, now, fmt.Sprintf("CSR %s: the signer issued subject CN %q O %q, the registration asks for CN %q O %q",
			p.name, leaf.Subject.CommonName, leaf.Subject.Organization, cfg.Subject.CommonName, cfg.Subject.Organization))
	}
	var existing map[string][]byte
	if live != nil {
		existing = live.Data
	}
	data := SecretData(existing, csr.Status.Certificate, p.keyPEM, additional)
	if err := c.writeSecret(ctx, cfg, live, data); err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if live == nil && apierrors.IsNotFound(err) {
			// The install namespace does not exist yet (the add-on's manifests create it): keep the certificate and
			// look again soon, not at the rate limiter's growing delays.
			c.warnOnce(syncCtx, "write/"+cfg.Key(), ReasonAddOnCredentialsWriteFailed, fmt.Sprintf("add-on %s: Secret %s not written yet: %v", cfg.AddOnName, cfg.Key(), err))
			c.setState(cfg, failoverv1alpha1.AddOnRegistrationFailed, fmt.Sprintf("certificate from CSR %s issued; waiting for namespace %s: %v", p.name, cfg.Namespace, err), time.Time{})
			return namespaceRecheck, nil
		}
		c.warnOnce(syncCtx, "write/"+cfg.Key(), ReasonAddOnCredentialsWriteFailed, fmt.Sprintf("add-on %s: writing Secret %s failed: %v", cfg.AddOnName, cfg.Key(), err))
		c.setState(cfg, failoverv1alpha1.AddOnRegistrationFailed, fmt.Sprintf("certificate from CSR %s issued; writing the Secret failed: %v", p.name, err), time.Time{})
		return 0, err
	}
	delete(c.pending, cfg.Key())
	delete(c.failures, cfg.Key())
	delete(c.lastWarns, "write/"+cfg.Key())
	klog.FromContext(ctx).Info("Add-on credentials issued and stored", "csr", p.name, "secret", cfg.Key(), "notAfter", leaf.NotAfter)
	syncCtx.Recorder().Eventf(ReasonAddOnCredentialsIssued, "Secret %s of add-on %s written with a certificate from hub %s (CSR %s, subject %q, valid until %s)",
		cfg.Key(), cfg.AddOnName, c.o.HubName, p.name, leaf.Subject.CommonName, text.Time(leaf.NotAfter))
	c.setRotatedCondition(ctx, addOn, metav1.ConditionTrue, ReasonClientCertificateUpdated,
		fmt.Sprintf("client certificate rotated starting from %v to %v", leaf.NotBefore, leaf.NotAfter))
	deadline := clientcert.RotationDeadline(leaf, c.jitterFor(csr.Status.Certificate))
	c.setState(cfg, failoverv1alpha1.AddOnRegistrationRegistered, fmt.Sprintf("certificate from CSR %s valid until %s, rotation due at %s",
		p.name, text.Time(leaf.NotAfter), text.Time(deadline)), leaf.NotAfter)
	return max(deadline.Sub(now), time.Second), nil
}

// fail drops the in-flight CSR after a terminal outcome and backs off.
func (c *AddOnRegistrationController) fail(ctx context.Context, syncCtx factory.SyncContext, addOn *addonv1alpha1.ManagedClusterAddOn, p *pendingCSR, now time.Time, msg string) (time.Duration, error) {
	delete(c.pending, p.config.Key())
	retryAt := c.backOff(p.config, now)
	syncCtx.Recorder().Warningf(ReasonAddOnCSRFailed, "add-on %s, Secret %s: %s; next CSR at %s", p.config.AddOnName, p.config.Key(), msg, text.Time(retryAt))
	c.setState(p.config, failoverv1alpha1.AddOnRegistrationFailed, fmt.Sprintf("%s; next CSR at %s", msg, text.Time(retryAt)), time.Time{})
	c.setRotatedCondition(ctx, addOn, metav1.ConditionFalse, ReasonClientCertificateUpdateFailed, "Failed to rotated client certificate "+msg)
	return retryAt.Sub(now), nil
}

func (c *AddOnRegistrationController) backOff(cfg Config, now time.Time) time.Time {
	f := c.failures[cfg.Key()]
	f.count++
	f.retryAt = now.Add(c.o.RetryBackoff.Delay(f.count))
	c.failures[cfg.Key()] = f
	return f.retryAt
}

// pendingCSRsOf counts this add-on's CSRs on the hub that are neither issued, denied nor failed.
func (c *AddOnRegistrationController) pendingCSRsOf(addOnName string) int {
	csrs, err := c.csrLister.List(labels.SelectorFromSet(labels.Set{clusterv1.ClusterNameLabelKey: c.o.ClusterName, AddOnNameLabel: addOnName}))
	if err != nil {
		return 0
	}
	n := 0
	for _, csr := range csrs {
		if outcome, cond := clientcert.OutcomeOf(csr); outcome == clientcert.CSRPending && cond == nil {
			n++
		}
	}
	return n
}

// secretsFor returns the Secret client of a registration's cluster.
func (c *AddOnRegistrationController) secretsFor(cfg Config) corev1client.SecretInterface {
	if cfg.Hosted {
		return c.o.HostingSecrets.Secrets(cfg.Namespace)
	}
	return c.o.SpokeSecrets.Secrets(cfg.Namespace)
}

// getSecret reads the registration's Secret live (it may predate the label the informer selects on); nil when
// absent.
func (c *AddOnRegistrationController) getSecret(ctx context.Context, cfg Config) (*corev1.Secret, error) {
	secret, err := c.secretsFor(cfg).Get(ctx, cfg.SecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("add-on %s: get Secret %s: %w", cfg.AddOnName, cfg.Key(), err)
	}
	return secret, nil
}

// writeSecret writes data in one Create or Update (the live Secret's other metadata kept), with the add-on label
// and the issuing hub annotation.
func (c *AddOnRegistrationController) writeSecret(ctx context.Context, cfg Config, live *corev1.Secret, data map[string][]byte) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), secretWriteTimeout)
	defer cancel()
	client := c.secretsFor(cfg)
	if live == nil {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:   cfg.Namespace,
				Name:        cfg.SecretName,
				Labels:      map[string]string{AddOnNameLabel: cfg.AddOnName},
				Annotations: map[string]string{IssuingHubAnnotation: c.o.HubName},
			},
			Type: corev1.SecretTypeOpaque,
			Data: data,
		}
		if _, err := client.Create(ctx, secret, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
			return fmt.Errorf("create Secret %s: %w", cfg.Key(), err)
		}
		return nil
	}
	secret := live.DeepCopy()
	markOwned(secret, cfg.AddOnName, c.o.HubName)
	secret.Data = data
	if _, err := client.Update(ctx, secret, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("update Secret %s: %w", cfg.Key(), err)
	}
	return nil
}

// adopt labels and annotates a valid Secret that lacks the agent's metadata (written by OCM's agent before the
// migration), so that the label-filtered informer and the start-up scan see it. No write when nothing is missing.
func (c *AddOnRegistrationController) adopt(ctx context.Context, cfg Config, live *corev1.Secret) error {
	if live.Labels[AddOnNameLabel] == cfg.AddOnName && live.Annotations[IssuingHubAnnotation] == c.o.HubName {
		return nil
	}
	secret := live.DeepCopy()
	markOwned(secret, cfg.AddOnName, c.o.HubName)
	if _, err := c.secretsFor(cfg).Update(ctx, secret, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("label Secret %s: %w", cfg.Key(), err)
	}
	return nil
}

func markOwned(secret *corev1.Secret, addOnName, hubName string) {
	if secret.Labels == nil {
		secret.Labels = map[string]string{}
	}
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Labels[AddOnNameLabel] = addOnName
	secret.Annotations[IssuingHubAnnotation] = hubName
}

// removeAll deletes every Secret kept for an add-on in this run.
func (c *AddOnRegistrationController) removeAll(ctx context.Context, syncCtx factory.SyncContext, name, why string) error {
	var errs []error
	for _, cfg := range c.known[name] {
		if err := c.remove(ctx, syncCtx, cfg, why); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		delete(c.known, name)
	}
	return utilerrors.NewAggregate(errs)
}

// remove deletes one registration's Secret and forgets its CSR. A Secret another hub issued (its issuing-hub
// annotation names another hub) is kept untouched: it is that hub's credentials, good again after a switch back.
// The delete is conditional on the version read, so a Secret rewritten meanwhile is not lost.
func (c *AddOnRegistrationController) remove(ctx context.Context, syncCtx factory.SyncContext, cfg Config, why string) error {
	delete(c.states, cfg.Key())
	delete(c.pending, cfg.Key())
	delete(c.failures, cfg.Key())
	live, err := c.secretsFor(cfg).Get(ctx, cfg.SecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("add-on %s: get Secret %s: %w", cfg.AddOnName, cfg.Key(), err)
	}
	if issuer, ok := live.Annotations[IssuingHubAnnotation]; ok && issuer != c.o.HubName {
		klog.FromContext(ctx).Info("Keeping the Secret of a gone registration: another hub issued it", "secret", cfg.Key(), "issuingHub", issuer)
		return nil
	}
	err = c.secretsFor(cfg).Delete(ctx, cfg.SecretName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &live.UID, ResourceVersion: &live.ResourceVersion}})
	if apierrors.IsConflict(err) {
		return fmt.Errorf("add-on %s: Secret %s changed while it was being deleted; looking again: %w", cfg.AddOnName, cfg.Key(), err)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("add-on %s: delete Secret %s: %w", cfg.AddOnName, cfg.Key(), err)
	}
	if err == nil {
		syncCtx.Recorder().Eventf(ReasonAddOnCredentialsRemoved, "Secret %s of add-on %s deleted: %s", cfg.Key(), cfg.AddOnName, why)
	}
	return nil
}

// scanSecrets looks at every labelled Secret with the issuing-hub annotation once per run: those issued by this
// hub whose add-on or registration is gone are deleted; those of another hub whose add-on this hub does not have
// are kept and reported.
func (c *AddOnRegistrationController) scanSecrets(ctx context.Context, syncCtx factory.SyncContext) error {
	type target struct {
		hosted   bool
		informer corev1informers.SecretInformer
	}
	targets := []target{{false, c.o.SpokeSecretInformer}}
	if c.separateHosting {
		targets = append(targets, target{true, c.o.HostingSecretInformer})
	}
	var errs []error
	notOnHub := map[string][]string{}
	for _, t := range targets {
		secrets, err := t.informer.Lister().List(labels.Everything())
		if err != nil {
			return fmt.Errorf("list add-on Secrets: %w", err)
		}
		for _, s := range secrets {
			issuer, ok := s.Annotations[IssuingHubAnnotation]
			name := s.Labels[AddOnNameLabel]
			if !ok || name == "" {
				continue
			}
			cfg := Config{AddOnName: name, Namespace: s.Namespace, SecretName: s.Name, Hosted: t.hosted}
			exists, has := c.registered(name, cfg.Key(), t.hosted)
			switch {
			case has:
			case issuer == c.o.HubName && !exists:
				// Only when the add-on itself is gone: a registration missing for a moment (status being rewritten)
				// must not cost the add-on its credentials; the add-on's own sync removes a registration that went.
				if err := c.remove(ctx, syncCtx, cfg, fmt.Sprintf("issued by hub %s, which no longer has this registration", c.o.HubName)); err != nil {
					errs = append(errs, err)
				}
			case !exists:
				notOnHub[issuer] = append(notOnHub[issuer], fmt.Sprintf("%s (Secret %s)", name, cfg.Key()))
				c.states[cfg.Key()] = failoverv1alpha1.AddOnRegistrationStatus{Name: name, Secret: cfg.Key(), State: failoverv1alpha1.AddOnRegistrationNotOnHub,
					IssuingHub: issuer, Message: fmt.Sprintf("issued by hub %s; hub %s has no ManagedClusterAddOn %s: the Secret is kept untouched", issuer, c.o.HubName, name)}
			}
		}
	}
	for _, issuer := range slices.Sorted(maps.Keys(notOnHub)) {
		list := notOnHub[issuer]
		slices.Sort(list)
		syncCtx.Recorder().Warningf(ReasonAddOnNotOnHub, "hub %s has no registration for add-on %v issued by hub %s; the Secrets are kept untouched",
			c.o.HubName, list, issuer)
	}
	return utilerrors.NewAggregate(errs)
}

// registered reports whether the hub has the add-on, and whether it has a registration whose Secret is key. A
// Secret on a cluster that serves both managed and hosted add-ons (the agent runs on the managed cluster) matches
// either kind. A deleting add-on counts as having every registration (left alone, as OCM).
func (c *AddOnRegistrationController) registered(name, key string, hosted bool) (exists, has bool) {
	addOn, err := c.addOns.ManagedClusterAddOns(c.o.ClusterName).Get(name)
	if err != nil {
		return false, false
	}
	if !addOn.DeletionTimestamp.IsZero() {
		return true, true
	}
	configs, _ := ConfigsFor(c.o.ClusterName, c.o.AgentName, addOn)
	for _, cfg := range configs {
		if cfg.Key() == key || (!c.separateHosting && !hosted && cfg.Hosted && "hosted:"+key == cfg.Key()) {
			return true, true
		}
	}
	return true, false
}

// ensureDriver sets status.kubeClientDriver as OCM's agent does; it reports whether it patched.
func (c *AddOnRegistrationController) ensureDriver(ctx context.Context, addOn *addonv1alpha1.ManagedClusterAddOn) (bool, error) {
	want := ""
	for _, r := range addOn.Status.Registrations {
		if r.SignerName == KubeClientSigner {
			want = KubeClientDriverCSR
			break
		}
	}
	if addOn.Status.KubeClientDriver == want {
		return false, nil
	}
	updated := addOn.DeepCopy()
	updated.Status.KubeClientDriver = want
	if err := c.patchStatus(ctx, addOn, updated); err != nil {
		return false, err
	}
	return true, nil
}

// setRotatedCondition sets ClusterCertificateRotated on the hub (best effort: a failure is logged, the next
// outcome sets it again); no write when it is already so.
func (c *AddOnRegistrationController) setRotatedCondition(ctx context.Context, addOn *addonv1alpha1.ManagedClusterAddOn, status metav1.ConditionStatus, reason, msg string) {
	current, err := c.addOns.ManagedClusterAddOns(addOn.Namespace).Get(addOn.Name)
	if err != nil {
		current = addOn
	}
	updated := current.DeepCopy()
	cond := metav1.Condition{Type: ConditionClientCertificateRotated, Status: status, Reason: reason, Message: msg,
		LastTransitionTime: metav1.NewTime(c.o.Clock.Now())}
	if !meta.SetStatusCondition(&updated.Status.Conditions, cond) {
		return
	}
	if err := c.patchStatus(ctx, current, updated); err != nil {
		klog.FromContext(ctx).Info("Could not set the ClusterCertificateRotated condition", "err", err)
	}
}

// patchStatus writes the status difference between old and updated (PatchStatus).
func (c *AddOnRegistrationController) patchStatus(ctx context.Context, old, updated *addonv1alpha1.ManagedClusterAddOn) error {
	return PatchStatus(ctx, c.o.HubAddOnClient, fieldManager, old, updated)
}

// PatchStatus sends one JSON merge patch (StatusPatch) on the status subresource of old with the difference
// between old's and updated's status, with fieldManager. The error names the ManagedClusterAddOn.
func PatchStatus(ctx context.Context, client addonv1alpha1client.ManagedClusterAddOnsGetter, fieldManager string, old, updated *addonv1alpha1.ManagedClusterAddOn) error {
	patch, err := StatusPatch(old, updated)
	if err != nil {
		return err
	}
	if _, err := client.ManagedClusterAddOns(old.Namespace).Patch(ctx, old.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: fieldManager}, "status"); err != nil {
		return fmt.Errorf("patch status of ManagedClusterAddOn %s/%s on hub: %w", old.Namespace, old.Name, err)
	}
	return nil
}

// StatusPatch returns the JSON merge patch from old's status to updated's, with old's uid and resourceVersion as
// preconditions.
func StatusPatch(old, updated *addonv1alpha1.ManagedClusterAddOn) ([]byte, error) {
	type metadata struct {
		UID             types.UID `json:"uid,omitempty"`
		ResourceVersion string    `json:"resourceVersion,omitempty"`
	}
	type body struct {
		Metadata *metadata                               `json:"metadata,omitempty"`
		Status   addonv1alpha1.ManagedClusterAddOnStatus `json:"status"`
	}
	oldData, err := json.Marshal(body{Status: old.Status})
	if err != nil {
		return nil, fmt.Errorf("encode status of ManagedClusterAddOn %s: %w", old.Name, err)
	}
	newData, err := json.Marshal(body{Metadata: &metadata{UID: old.UID, ResourceVersion: old.ResourceVersion}, Status: updated.Status})
	if err != nil {
		return nil, fmt.Errorf("encode status of ManagedClusterAddOn %s: %w", old.Name, err)
	}
	patch, err := jsonpatch.CreateMergePatch(oldData, newData)
	if err != nil {
		return nil, fmt.Errorf("status patch of ManagedClusterAddOn %s: %w", old.Name, err)
	}
	return patch, nil
}

// jitterFor returns the jitter of a certificate, drawn once per certificate.
func (c *AddOnRegistrationController) jitterFor(certPEM []byte) float64 {
	leaf, err := clientcert.ParseLeafCertificate(certPEM)
	if err != nil {
		return 0
	}
	key := certKey(leaf)
	if v, ok := c.jitters[key]; ok {
		return v
	}
	v := c.o.Jitter()
	c.jitters[key] = v
	return v
}

func certKey(leaf *x509.Certificate) string {
	return leaf.SerialNumber.String() + "/" + leaf.NotAfter.String()
}

// setState records a registration's state for OnStatus; a zero notAfter leaves NotAfter unset.
func (c *AddOnRegistrationController) setState(cfg Config, state failoverv1alpha1.AddOnRegistrationState, msg string, notAfter time.Time) {
	st := failoverv1alpha1.AddOnRegistrationStatus{Name: cfg.AddOnName, Secret: cfg.Key(), SignerName: cfg.SignerName, State: state, Message: msg}
	if state == failoverv1alpha1.AddOnRegistrationRegistered {
		st.IssuingHub = c.o.HubName
	}
	if !notAfter.IsZero() {
		t := metav1.NewTime(notAfter.Truncate(time.Second))
		st.NotAfter = &t
	}
	c.states[cfg.Key()] = st
}

// report calls OnStatus when the set of states changed since the last call.
func (c *AddOnRegistrationController) report() {
	if c.o.OnStatus == nil {
		return
	}
	list := make([]failoverv1alpha1.AddOnRegistrationStatus, 0, len(c.states))
	for _, k := range slices.Sorted(maps.Keys(c.states)) {
		list = append(list, c.states[k])
	}
	if equality.Semantic.DeepEqual(list, c.lastState) {
		return
	}
	c.lastState = list
	out := make([]failoverv1alpha1.AddOnRegistrationStatus, len(list))
	for i := range list {
		list[i].DeepCopyInto(&out[i])
	}
	c.o.OnStatus(out)
}

// warnOnce emits a Warning unless the previous one for slot had the same message.
func (c *AddOnRegistrationController) warnOnce(syncCtx factory.SyncContext, slot, reason, msg string) {
	if c.lastWarns[slot] == msg {
		return
	}
	c.lastWarns[slot] = msg
	syncCtx.Recorder().Warning(reason, msg)
}
