package clientcert

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	certificatesv1informers "k8s.io/client-go/informers/certificates/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
	certificatesv1client "k8s.io/client-go/kubernetes/typed/certificates/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	certificatesv1listers "k8s.io/client-go/listers/certificates/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/backoff"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// Event reasons of ClientCertForHubController (spoke events, through the controller's recorder).
const (
	// ReasonCSRCreated (Normal): a CSR was created on the hub; the message names it and why it was needed.
	ReasonCSRCreated = "CSRCreated"
	// ReasonCSRCreateFailed (Warning): creating the CSR failed; emitted when the error message changes.
	ReasonCSRCreateFailed = "CSRCreateFailed"
	// ReasonCSRBackoff (Warning): a CSR for new credentials waits for the hub's bootstrap back-off (bootstraps in
	// a row that failed or were undone, e.g. by another agent writing the same Secret); the message gives the
	// time of the next attempt. Emitted once per wait.
	ReasonCSRBackoff = "CSRBackoff"
	// ReasonCSRDenied (Warning): the CSR was denied or failed on the hub; a new one follows after back-off.
	ReasonCSRDenied = "CSRDenied"
	// ReasonCSRDeleted (Warning): the CSR disappeared before a certificate was issued (e.g. the hub's
	// csrcleaner); a new one follows after back-off.
	ReasonCSRDeleted = "CSRDeleted"
	// ReasonClientCertificateInvalid (Warning): the hub issued a certificate that does not match the key or the
	// identity, or has expired; a new CSR follows after back-off.
	ReasonClientCertificateInvalid = "ClientCertificateInvalid"
	// ReasonClientCertificateIssued (Normal): a certificate was issued and stored.
	ReasonClientCertificateIssued = "ClientCertificateIssued"
	// ReasonHubKubeconfigSecretCreated (Normal): the hub kubeconfig Secret was created with all five keys.
	ReasonHubKubeconfigSecretCreated = "HubKubeconfigSecretCreated"
	// ReasonHubKubeconfigSecretUpdated (Normal): the hub kubeconfig Secret was rewritten with all five keys.
	ReasonHubKubeconfigSecretUpdated = "HubKubeconfigSecretUpdated"
	// ReasonHubKubeconfigRebuilt (Normal): only the kubeconfig key was rewritten because the hub's CA, proxy-url
	// or TLS options changed while the server stayed the same (FC-03); key and certificate were kept.
	ReasonHubKubeconfigRebuilt = "HubKubeconfigRebuilt"
	// ReasonHubKubeconfigSecretWriteFailed (Warning): writing the Secret failed; retried with the same
	// certificate.
	ReasonHubKubeconfigSecretWriteFailed = "HubKubeconfigSecretWriteFailed"
)

const (
	controllerName = "ClientCertForHubController"
	fieldManager   = "klusterlet-failover-clientcert"

	defaultResyncInterval = 10 * time.Minute
	// maxNotYetValidWait bounds how long a stored certificate that is not yet valid (hub clock ahead) is waited
	// for instead of being replaced.
	maxNotYetValidWait = time.Hour
	// secretWriteTimeout bounds the Create or Update of the hub kubeconfig Secret, which is not cancelled with
	// the controller.
	secretWriteTimeout = 10 * time.Second
)

// ControllerOptions configures a ClientCertForHubController. Every field without a stated default is required.
type ControllerOptions struct {
	// ClusterName and AgentName are the identity put in CSRs and required of the stored certificate.
	ClusterName, AgentName string
	// Namespace and SecretName name the spoke hub kubeconfig Secret, e.g.
	// open-cluster-management-agent/hub-kubeconfig-secret.
	Namespace, SecretName string
	// Hub is the active hub's server, proxy-url, CA and TLS options (from its bootstrap kubeconfig); it is written
	// into the kubeconfig key and required of the stored one.
	Hub HubInfo
	// SecretLabels, if set, are the labels of the Secret when the controller creates it; an existing Secret keeps
	// its own.
	SecretLabels map[string]string
	// SpokeSecrets writes (and, before deciding to create a CSR or to write, reads live) the Secret.
	SpokeSecrets corev1client.SecretsGetter
	// SpokeSecretInformer is a Secret informer covering Namespace (it may be namespace-scoped); only events for
	// SecretName trigger a sync.
	SpokeSecretInformer corev1informers.SecretInformer
	// HubCSRs creates and reads CSRs on the hub: the bootstrap identity for the first join, the current hub
	// identity for rotation (the hub auto-approves a renewal when the requester equals the certificate CN).
	HubCSRs certificatesv1client.CertificateSigningRequestInterface
	// HubCSRInformer watches hub CSRs; it should be filtered by the label ClusterNameLabel=<ClusterName>.
	HubCSRInformer certificatesv1informers.CertificateSigningRequestInformer
	// ExpirationSeconds, if set, is sent as spec.expirationSeconds (>= 600; short-lived certificates in tests).
	ExpirationSeconds *int32
	// Clock supplies now; default clock.RealClock{}.
	Clock clock.PassiveClock
	// Jitter returns a number in [0, 1) drawn once per certificate to place its rotation deadline in the
	// 20–25 % band (RotationDeadline); default rand.Float64.
	Jitter func() float64
	// RetryBackoff spaces failed CSR attempts of this controller; zero fields take their defaults (10s, 5m).
	RetryBackoff backoff.Backoff
	// BootstrapBackoff, if set, spaces the CSRs this controller sends for new credentials (every CSR but a
	// rotation of valid credentials) together with every other controller of the process for the same hub, and
	// learns the certificates it writes. Nil: only RetryBackoff applies.
	BootstrapBackoff *BootstrapBackoff
	// RotationOnly makes the controller only rotate valid credentials: while the Secret is not valid for Hub it
	// reports PhaseCredentialsInvalid and sends nothing, leaving new credentials to a bootstrap controller (the
	// hub session runs one when the Secret changes).
	RotationOnly bool
	// BackoffHub is the key in BootstrapBackoff (BootstrapBackoffKey of the cluster and the hub's server);
	// required with BootstrapBackoff.
	BackoffHub string
	// ResyncInterval is the periodic resync; 0 means 10m, negative disables it.
	ResyncInterval time.Duration
	// Recorder receives the controller's events (reasons above).
	Recorder events.Recorder
	// OnStatusChange, if set, is called (from the sync goroutine, without locks held) whenever Status changes.
	OnStatusChange func(Status)
}

// Phase is the controller's coarse state, for conditions such as "waiting for CSR approval".
type Phase string

const (
	// PhaseCredentialsValid: the Secret is valid and no rotation is due.
	PhaseCredentialsValid Phase = "CredentialsValid"
	// PhaseWaitingForApproval: a CSR is outstanding on the hub (not yet approved, or approved and not signed).
	PhaseWaitingForApproval Phase = "WaitingForApproval"
	// PhaseCSRCreateFailing: creating the CSR failed; LastError says why (classify it with
	// ClassifyConnectionError).
	PhaseCSRCreateFailing Phase = "CSRCreateFailing"
	// PhaseBackingOff: the last CSR was denied, failed, deleted or gave an invalid certificate; the next one is
	// created at RetryAt.
	PhaseBackingOff Phase = "BackingOff"
	// PhaseWaitingForValidity: the stored certificate is valid from a near future instant (hub clock ahead).
	PhaseWaitingForValidity Phase = "WaitingForCertificateValidity"
	// PhaseSecretWriteFailing: a certificate was issued but the Secret could not be written yet.
	PhaseSecretWriteFailing Phase = "SecretWriteFailing"
	// PhaseCredentialsInvalid: a RotationOnly controller found the Secret not valid for the hub; it waits.
	PhaseCredentialsInvalid Phase = "CredentialsInvalid"
)

// Status is a snapshot of the controller's progress.
type Status struct {
	// Phase is the coarse state.
	Phase Phase
	// Reason is why new credentials are needed (the InvalidReason of the Secret, or ReasonRotationDue); "" when
	// the credentials are valid.
	Reason InvalidReason
	// Message is a human-readable sentence about the state.
	Message string
	// CSRName is the outstanding CSR, if any.
	CSRName string
	// NotAfter is the expiry of the stored certificate; zero if there is none or it does not parse.
	NotAfter time.Time
	// RotationDeadline is when the stored valid certificate is due for rotation; zero otherwise.
	RotationDeadline time.Time
	// RetryAt is when the next CSR attempt is allowed while backing off; zero otherwise.
	RetryAt time.Time
	// LastError is the error of the last failed hub or spoke call of this controller; nil after a success.
	LastError error
}

// ClientCertForHubController obtains a client certificate from the hub through a CSR and keeps the spoke hub
// kubeconfig Secret valid: used with the bootstrap identity for the first join (design §3 step 3) and with
// the hub identity for rotation.
//
// Sync policy (single queue key):
//   - Secret valid (CheckHubKubeconfig) and before its rotation deadline: nothing; requeue at the deadline.
//   - Secret valid except that its kubeconfig's CA / proxy-url / TLS options differ from Hub while the server is
//     the same (FC-03): rewrite only the kubeconfig key, keep key and certificate.
//   - Certificate valid only from a near future instant: requeue then.
//   - Otherwise at most one CSR is in flight: a fresh key in memory, one CSR (event CSRCreated); later syncs
//     read it from the informer (or the hub when the informer lacks it). Issued → verify against key and
//     identity, write the Secret whole in one Create/Update (five keys; labels, annotations and unrelated keys
//     kept), events ClientCertificateIssued and HubKubeconfigSecretCreated/Updated. Denied/failed/deleted/
//     invalid → Warning event, drop the CSR, next attempt after RetryBackoff. Create or write errors are
//     returned (requeue) and keep the same key and CSR template, so no second CSR is created for one key.
//   - The previous Secret is never touched until new credentials are written.
type ClientCertForHubController struct {
	factory.Controller

	opts         ControllerOptions
	secretLister corev1listers.SecretLister
	csrLister    certificatesv1listers.CertificateSigningRequestLister
	syncCtx      factory.SyncContext

	// Sync state; the factory never runs two syncs of the single key concurrently.
	pending      *pendingCSR
	failures     int
	retryAt      time.Time
	jitterKey    string
	jitterValue  float64
	lastEventMsg string

	mu     sync.Mutex
	status Status
	forced string
}

// pendingCSR is the one CSR in flight and its private key (memory only; never logged).
type pendingCSR struct {
	keyPEM   []byte
	template *certificatesv1.CertificateSigningRequest
	name     string // "" until Create succeeded
	reason   InvalidReason
}

// NewClientCertForHubController validates o, fills its defaults and returns the controller. It returns an
// error naming the first missing or invalid option.
func NewClientCertForHubController(o ControllerOptions) (*ClientCertForHubController, error) {
	switch {
	case o.ClusterName == "" || o.AgentName == "":
		return nil, fmt.Errorf("%s: ClusterName and AgentName are required", controllerName)
	case o.Namespace == "" || o.SecretName == "":
		return nil, fmt.Errorf("%s: Namespace and SecretName are required", controllerName)
	case o.SpokeSecrets == nil || o.SpokeSecretInformer == nil:
		return nil, fmt.Errorf("%s: SpokeSecrets and SpokeSecretInformer are required", controllerName)
	case o.HubCSRs == nil || o.HubCSRInformer == nil:
		return nil, fmt.Errorf("%s: HubCSRs and HubCSRInformer are required", controllerName)
	case o.Recorder == nil:
		return nil, fmt.Errorf("%s: Recorder is required", controllerName)
	case o.BootstrapBackoff != nil && o.BackoffHub == "":
		return nil, fmt.Errorf("%s: BackoffHub is required with BootstrapBackoff", controllerName)
	}
	if _, err := BuildHubKubeconfig(o.Hub); err != nil {
		return nil, fmt.Errorf("%s: Hub: %w", controllerName, err)
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	o.RetryBackoff = o.RetryBackoff.WithDefaults(backoff.Default)
	if o.ResyncInterval == 0 {
		o.ResyncInterval = defaultResyncInterval
	}

	c := &ClientCertForHubController{
		opts:         o,
		secretLister: o.SpokeSecretInformer.Lister(),
		csrLister:    o.HubCSRInformer.Lister(),
		syncCtx:      factory.NewSyncContext(controllerName, o.Recorder),
	}
	f := factory.New().
		WithSyncContext(c.syncCtx).
		WithFilteredEventsInformers(secretNameFilter(o.Namespace, o.SecretName), o.SpokeSecretInformer.Informer()).
		WithInformers(o.HubCSRInformer.Informer()).
		WithSync(c.sync)
	if o.ResyncInterval > 0 {
		f = f.ResyncEvery(o.ResyncInterval)
	}
	c.Controller = f.ToController(controllerName, o.Recorder)
	return c, nil
}

// Status returns a snapshot of the controller's progress. Safe for concurrent use.
func (c *ClientCertForHubController) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// RequestNewCertificate makes the controller obtain a new certificate even though the stored one is valid (for
// example when the hub keeps rejecting it with 401). reason is put in the CSRCreated event. The request is
// cleared once a new certificate is written. Safe for concurrent use.
func (c *ClientCertForHubController) RequestNewCertificate(reason string) {
	c.mu.Lock()
	c.forced = reason
	c.mu.Unlock()
	c.syncCtx.Queue().Add(factory.DefaultQueueKey)
}

func (c *ClientCertForHubController) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	logger := klog.FromContext(ctx).WithValues("controller", controllerName,
		"secret", klog.KRef(c.opts.Namespace, c.opts.SecretName), "cluster", c.opts.ClusterName, "agent", c.opts.AgentName)
	now := c.opts.Clock.Now()
	c.mu.Lock()
	forced := c.forced
	c.mu.Unlock()

	secret, err := c.secretLister.Secrets(c.opts.Namespace).Get(c.opts.SecretName)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get secret %s/%s: %w", c.opts.Namespace, c.opts.SecretName, err)
	}
	if apierrors.IsNotFound(err) {
		secret = nil
	}
	checkErr := c.check(secret, now)
	if checkErr != nil && c.pending == nil {
		// The cache may lag behind a write of ours: confirm with the API before starting a CSR.
		live, err := c.getLiveSecret(ctx)
		if err != nil {
			return err
		}
		secret = live
		checkErr = c.check(secret, now)
	}

	var invalid *InvalidHubKubeconfigError
	errors.As(checkErr, &invalid)
	reason, why := InvalidReason(""), ""
	switch {
	case checkErr == nil:
		leaf, _ := parseLeafCertificate(secret.Data[TLSCertSecretKey])
		deadline := RotationDeadline(leaf, c.jitterFor(leaf))
		if forced == "" && now.Before(deadline) {
			if c.pending != nil {
				logger.Info("Hub kubeconfig Secret is valid; dropping the in-flight CSR", "csr", c.pending.name)
				c.pending = nil
			}
			c.failures, c.retryAt = 0, time.Time{}
			c.setStatus(Status{
				Phase:            PhaseCredentialsValid,
				Message:          fmt.Sprintf("client certificate valid until %s; rotation due at %s", text.Time(leaf.NotAfter), text.Time(deadline)),
				NotAfter:         leaf.NotAfter,
				RotationDeadline: deadline,
			})
			syncCtx.Queue().AddAfter(syncCtx.QueueKey(), deadline.Sub(now))
			return nil
		}
		reason, why = ReasonRotationDue, fmt.Sprintf("client certificate rotation due at %s (expires %s)", text.Time(deadline), text.Time(leaf.NotAfter))
		if forced != "" {
			why = "new certificate requested: " + forced
		}
	case invalid != nil && invalid.Reason == ReasonCertificateNotYetValid && forced == "" &&
		invalid.NotBefore.Sub(now) <= maxNotYetValidWait:
		c.setStatus(Status{Phase: PhaseWaitingForValidity, Reason: invalid.Reason, Message: invalid.Message, NotAfter: invalid.NotAfter})
		syncCtx.Queue().AddAfter(syncCtx.QueueKey(), invalid.NotBefore.Sub(now))
		return nil
	case invalid != nil && invalid.Reason == ReasonHubMismatch && forced == "" && !slices.Contains(invalid.HubFields, "server"):
		return c.rebuildKubeconfig(ctx, syncCtx, logger, invalid)
	case c.opts.RotationOnly:
		if c.pending != nil {
			logger.Info("Hub kubeconfig Secret is no longer valid for this hub; dropping the rotation CSR", "csr", c.pending.name)
			c.pending = nil
		}
		c.setStatus(Status{Phase: PhaseCredentialsInvalid, Reason: InvalidReasonOf(checkErr), Message: checkErr.Error()})
		return nil
	default:
		reason, why = InvalidReasonOf(checkErr), checkErr.Error()
	}
	// Every CSR of a bootstrap controller is for new credentials; a RotationOnly controller's only when forced.
	return c.ensureCertificate(ctx, syncCtx, logger, now, reason, why, !c.opts.RotationOnly || forced != "")
}

// check runs CheckHubKubeconfig on a possibly absent Secret.
func (c *ClientCertForHubController) check(secret *corev1.Secret, now time.Time) error {
	if secret == nil {
		return &InvalidHubKubeconfigError{Reason: ReasonMissingKey,
			Message: fmt.Sprintf("secret %s/%s not found", c.opts.Namespace, c.opts.SecretName)}
	}
	return CheckHubKubeconfig(secret.Data, c.opts.ClusterName, c.opts.AgentName, c.opts.Hub, now)
}
