package hubsession

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/informers"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/startwait"
)

// Hot standby credentials (design §6): while a hub is a standby, the agent keeps a client certificate of that hub
// for its cluster and agent name in a Secret of its own (StandbySecretName), obtained through a CSR sent with
// the hub's bootstrap kubeconfig and rotated like any other. A switch writes those credentials into the hub
// kubeconfig Secret (Swap) and the session on the new hub starts its main controllers at once: no CSR and no
// approval wait on the critical path. Nothing else is written on a standby: no lease, no ManagedCluster.

// Event reasons of the standby credentials.
const (
	// ReasonStandbyCredentialsUsed (Normal): a switch wrote the standby credentials of the hub it moves to into the
	// hub kubeconfig Secret; the session starts without a CSR.
	ReasonStandbyCredentialsUsed = "StandbyCredentialsUsed"
	// ReasonStandbyCredentialsSaved (Normal): a switch kept the still valid credentials of the hub it leaves as
	// that hub's standby credentials.
	ReasonStandbyCredentialsSaved = "StandbyCredentialsSaved"
)

// StandbyHubLabel is set on every standby credentials Secret the agent creates; its value is the hub's name.
const StandbyHubLabel = "failover.open-cluster-management.io/standby-hub"

// maxSecretNameLength is the longest Secret name the apiserver takes (a DNS-1123 subdomain).
const maxSecretNameLength = 253

// MaxHubKubeconfigSecretName is the longest hub kubeconfig Secret name that leaves room for every standby Secret
// name: "<name>-<hub>" with a hub name of up to 63 characters (a DNS-1123 label) fits in 253.
const MaxHubKubeconfigSecretName = maxSecretNameLength - 64

// StandbySecretName returns the name of hub's standby credentials Secret: "<hubKubeconfigSecret>-<hub>", e.g.
// "hub-kubeconfig-secret-hub-b". It holds the same five keys as the hub kubeconfig Secret.
func StandbySecretName(hubKubeconfigSecret, hub string) string {
	return hubKubeconfigSecret + "-" + hub
}

// StandbyStatus is the state of one standby hub's credentials, as StandbyCredentials.Keep reports it.
type StandbyStatus struct {
	// State is Ready (the Secret holds valid credentials for the hub), Pending or Refused.
	State failoverv1alpha1.StandbyCredentialsState
	// Secret is the standby Secret's name in the agent namespace.
	Secret string
	// Message is a sentence about the state, from the CSR controller (never key material).
	Message string
	// NotAfter is the stored certificate's expiry while State is Ready.
	NotAfter time.Time
}

// StandbyCredentials keeps hot standby credentials for the hubs of one agent process and hands them over at a
// switch. It shares the sessions' Config: the identity, the agent namespace and its clients, the bootstrap
// back-off (standby CSRs to a hub count in a record of their own there, standbyBackoffKey, so a standby that
// keeps refusing is asked at most as often as a bootstrap would, and never delays a bootstrap), the clock and
// the recorder.
type StandbyCredentials struct {
	config Config
}

// NewStandbyCredentials checks config as New does and returns the keeper. It returns an error naming the first
// missing field, or the hub kubeconfig Secret name when "<name>-<hub>" could exceed 253 characters for a hub
// name of 63.
func NewStandbyCredentials(config Config) (*StandbyCredentials, error) {
	if err := config.check("standby"); err != nil {
		return nil, err
	}
	if len(config.SecretName) > MaxHubKubeconfigSecretName {
		return nil, fmt.Errorf("hub kubeconfig secret name %q: at most %d characters, so that the standby Secrets (<name>-<hub>) fit in %d",
			config.SecretName, MaxHubKubeconfigSecretName, maxSecretNameLength)
	}
	return &StandbyCredentials{config: config.withDefaults()}, nil
}

// SecretName returns hub's standby Secret name (StandbySecretName).
func (c *StandbyCredentials) SecretName(hub string) string {
	return StandbySecretName(c.config.SecretName, hub)
}

// Keep keeps valid credentials of hub in its standby Secret until ctx ends: a ClientCertForHubController with
// the hub's bootstrap identity sends a CSR when the Secret is missing, invalid for this cluster, agent and hub, or
// due for rotation, bounded by the bootstrap back-off. report is called from the controller's goroutine with
// every status change. It returns nil when ctx ends, or at once an error when no hub client can be built.
func (c *StandbyCredentials) Keep(ctx context.Context, hub Hub, report func(StandbyStatus)) error {
	if hub.Bootstrap == nil || hub.Name == "" {
		return fmt.Errorf("standby credentials: hub name and bootstrap kubeconfig are required")
	}
	name := c.SecretName(hub.Name)
	kubeClient, err := kubernetes.NewForConfig(hubRESTConfig(c.config, hub.Bootstrap.RestConfig, "standby", nil))
	if err != nil {
		return fmt.Errorf("standby credentials for hub %s: bootstrap kubeconfig %s: %w", hub.Name, hub.Bootstrap.Source, err)
	}
	csrInformers := csrInformerFactory(kubeClient, c.config.ClusterName)
	// Only the standby Secret: a field selector keeps the other Secrets of the namespace out of the cache.
	secretInformers := kubeinformers.NewSharedInformerFactoryWithOptions(c.config.AgentKubeClient, 0,
		kubeinformers.WithNamespace(c.config.Namespace), kubeinformers.WithTransform(informers.StripManagedFields),
		kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	secrets := secretInformers.Core().V1().Secrets()
	lister := secrets.Lister()

	backoffKey := c.standbyBackoffKey(hub)
	// onStatus runs on the controller's one sync goroutine (OnStatusChange), so last needs no lock.
	var last StandbyStatus
	onStatus := func(st clientcert.Status) {
		s := StandbyStatus{Secret: name, Message: st.Message}
		now := c.config.Clock.Now()
		// The Secret, not the controller's phase, says whether a switch would need a CSR: credentials due for
		// rotation are still valid while the rotation's CSR waits.
		if sec, ok := c.validStandbySecret(ctx, lister, name, hub, now); ok {
			s.State = failoverv1alpha1.StandbyCredentialsReady
			// Issued and valid is what "in use" means for standby credentials: the CSRs that got them stop
			// counting against the next one (a rotation) once they have been valid for the proving period.
			c.config.BootstrapBackoff.InUse(backoffKey)
			if leaf, err := clientcert.ParseLeafCertificate(sec.Data[clientcert.TLSCertSecretKey]); err == nil {
				s.NotAfter = leaf.NotAfter
			}
		} else if st.Phase == clientcert.PhaseBackingOff {
			s.State = failoverv1alpha1.StandbyCredentialsRefused
		} else {
			s.State = failoverv1alpha1.StandbyCredentialsPending
		}
		if st.LastError != nil {
			if p := clientcert.ClassifyConnectionError(st.LastError, hub.Bootstrap, now); p.Message != "" {
				s.Message = p.Message
			}
		}
		s.Message = fmt.Sprintf("hub %s: %s", hub.Name, s.Message)
		if s != last {
			last = s
			report(s)
		}
	}
	opts := clientCertOptionsFor(c.config, hub, name, backoffKey, kubeClient, csrInformers, secrets)
	opts.SecretLabels = map[string]string{StandbyHubLabel: hub.Name}
	opts.OnStatusChange = onStatus
	cc, err := clientcert.NewClientCertForHubController(opts)
	if err != nil {
		return fmt.Errorf("standby credentials for hub %s: %w", hub.Name, err)
	}
	csrInformers.Start(ctx.Done())
	secretInformers.Start(ctx.Done())
	defer func() {
		csrInformers.Shutdown()
		secretInformers.Shutdown()
	}()
	startwait.AwaitSynced(ctx, c.config.Clock, syncBound, csrInformers.Certificates().V1().CertificateSigningRequests().Informer().HasSynced,
		secrets.Informer().HasSynced)
	klog.FromContext(ctx).Info("Keeping standby credentials", "hub", hub.Name, "secret", klog.KRef(c.config.Namespace, name))
	cc.Run(ctx, 1)
	return nil
}

// validStandbySecret returns the standby Secret name and whether it holds credentials valid for hub at now: as the
// informer holds it, else as the cluster does (a GET). The status is judged right after the controller stored the
// Secret, and it changes no more after that: judged only from an informer that has not seen the write yet (event
// delivery lags by seconds with a thousand agents in one process), the credentials would stay Pending until their
// rotation.
func (c *StandbyCredentials) validStandbySecret(ctx context.Context, lister corev1listers.SecretLister, name string, hub Hub, now time.Time) (*corev1.Secret, bool) {
	valid := func(sec *corev1.Secret) bool {
		return clientcert.CheckHubKubeconfig(sec.Data, c.config.ClusterName, c.config.AgentName, hub.Bootstrap.Hub, now) == nil
	}
	if sec, err := lister.Secrets(c.config.Namespace).Get(name); err == nil && valid(sec) {
		return sec, true
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	sec, err := c.config.AgentKubeClient.CoreV1().Secrets(c.config.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, false
	}
	return sec, valid(sec)
}

// Forget deletes hub's standby Secret (a hub removed from the configuration): no key material is kept for a
// hub the agent no longer uses. A Secret already gone is no error; other errors name the Secret.
func (c *StandbyCredentials) Forget(ctx context.Context, hub string) error {
	name := c.SecretName(hub)
	err := c.config.AgentKubeClient.CoreV1().Secrets(c.config.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting standby secret %s/%s: %w", c.config.Namespace, name, err)
	}
	return nil
}

// ForgetOthers deletes this agent's standby Secrets of hubs not in keep: hubs removed from the configuration
// while the agent was not running, whose removal Forget never saw. A standby Secret is this agent's when it has
// the label StandbyHubLabel and is named StandbySecretName(hub kubeconfig Secret, label value); Secrets of other
// agents in the namespace, and anything else, are left alone. Each delete has the listed Secret's UID as its
// precondition. It returns the hubs whose Secret it deleted (not those deleted meanwhile by someone else), sorted,
// and the first error, naming the Secret.
func (c *StandbyCredentials) ForgetOthers(ctx context.Context, keep []string) ([]string, error) {
	secrets := c.config.AgentKubeClient.CoreV1().Secrets(c.config.Namespace)
	list, err := secrets.List(ctx, metav1.ListOptions{LabelSelector: StandbyHubLabel})
	if err != nil {
		return nil, fmt.Errorf("listing standby secrets in %s: %w", c.config.Namespace, err)
	}
	kept := sets.New(keep...)
	var forgotten []string
	for i := range list.Items {
		s := &list.Items[i]
		hub := s.Labels[StandbyHubLabel]
		if kept.Has(hub) || s.Name != c.SecretName(hub) {
			continue
		}
		uid := s.UID
		err := secrets.Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		switch {
		case err == nil:
			forgotten = append(forgotten, hub)
		case apierrors.IsNotFound(err): // deleted meanwhile
		default:
			sort.Strings(forgotten)
			return forgotten, fmt.Errorf("deleting standby secret %s/%s of hub %s, which is no longer configured: %w", c.config.Namespace, s.Name, hub, err)
		}
	}
	sort.Strings(forgotten)
	return forgotten, nil
}

// Handover is what Swap does before a session starts.
type Handover struct {
	// From is the hub left; nil when there is none (the process starts, or no session ran).
	From *Hub
	// DiscardFrom says the credentials of From are not worth keeping (the hub rejected them, or they are not
	// usable there): From's standby Secret is deleted instead, so that its keeper gets new ones.
	DiscardFrom bool
	// To is the hub the session starts on.
	To Hub
}

// Swap prepares the hub kubeconfig Secret for a session on h.To. First, credentials in it valid for h.From are
// copied into From's standby Secret, so that the hub left stays a hot standby (with DiscardFrom, From's standby
// Secret is deleted instead); if that copy fails, nothing more is done, so no credentials are lost. Then, when
// the hub kubeconfig Secret is not valid for To, holds no credentials of another cluster or agent (another
// writer's, judged by the session's takeover rules), and To's standby Secret is valid, the standby credentials
// are written into it (the five keys; its labels, annotations and other keys kept), and the session on To
// starts without a CSR. It reports whether that write happened. Errors name the Secret and the step. Reads and
// writes use the live Secrets, not a cache; writes are retried on conflict.
func (c *StandbyCredentials) Swap(ctx context.Context, h Handover) (used bool, err error) {
	used, _, err = c.swap(ctx, h)
	return used, err
}

// Adopt is the hand-over a session makes itself before a bootstrap that was not forced (Swap with no hub left):
// when the hub kubeconfig Secret, as the cluster holds it, is not valid for hub, holds no other writer's
// credentials, and hub's standby Secret is valid, the standby credentials are written into it. It reports
// whether the Secret is valid for hub now (written, or already so — the session's informer may not show it
// yet); false with a nil error means a bootstrap is needed. Errors are Swap's.
func (c *StandbyCredentials) Adopt(ctx context.Context, hub Hub) (valid bool, err error) {
	used, alreadyValid, err := c.swap(ctx, Handover{To: hub})
	return used || alreadyValid, err
}

// swap is Swap; alreadyValid reports that the hub kubeconfig Secret was valid for h.To before anything was
// written to it.
func (c *StandbyCredentials) swap(ctx context.Context, h Handover) (used, alreadyValid bool, err error) {
	ns, secrets := c.config.Namespace, c.config.AgentKubeClient.CoreV1()
	now := c.config.Clock.Now()
	read := func(name string) (map[string][]byte, error) {
		s, err := secrets.Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("get secret %s/%s: %w", ns, name, err)
		}
		return s.Data, nil
	}
	valid := func(data map[string][]byte, hub Hub) bool {
		return data != nil && hub.Bootstrap != nil &&
			clientcert.CheckHubKubeconfig(data, c.config.ClusterName, c.config.AgentName, hub.Bootstrap.Hub, now) == nil
	}
	write := func(name string, data map[string][]byte, labels map[string]string, check func(*corev1.Secret) error) error {
		creds := make(map[string][]byte, len(clientcert.SecretKeys()))
		for _, k := range clientcert.SecretKeys() {
			creds[k] = data[k]
		}
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			_, err := clientcert.WriteSecretDataIf(ctx, secrets, ns, name, creds, labels, check)
			if apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(metav1.SchemeGroupVersion.WithResource("secrets").GroupResource(), name, err)
			}
			return err
		})
	}

	current, err := read(c.config.SecretName)
	if err != nil {
		return false, false, err
	}
	if from := h.From; from != nil {
		name := c.SecretName(from.Name)
		switch {
		case h.DiscardFrom:
			if err := c.Forget(ctx, from.Name); err != nil {
				return false, false, fmt.Errorf("discarding the credentials of hub %s: %w", from.Name, err)
			}
		case valid(current, *from):
			if err := write(name, current, map[string]string{StandbyHubLabel: from.Name}, nil); err != nil {
				return false, false, fmt.Errorf("keeping the credentials of hub %s: %w", from.Name, err)
			}
			c.config.Recorder.Eventf(ReasonStandbyCredentialsSaved, "credentials of hub %s kept in secret %s/%s for a switch back", from.Name, ns, name)
		}
	}
	// replaceable says why the hub kubeconfig Secret's data must not be replaced by standby credentials: it is
	// valid for To already, or holds another writer's credentials (the session's takeover rules and back-off
	// decide when to replace them). It is asked of the Secret read first and again of the one each write
	// replaces, which another writer may have written since.
	replaceable := func(data map[string][]byte) error {
		if valid(data, h.To) {
			return errAlreadyValid
		}
		if owner := clientcert.OwnerOf(data); len(data[clientcert.TLSCertSecretKey]) > 0 &&
			(owner.ClusterName != c.config.ClusterName || owner.AgentName != c.config.AgentName) {
			return errOtherWriter
		}
		return nil
	}
	switch err := replaceable(current); {
	case errors.Is(err, errAlreadyValid):
		return false, true, nil
	case err != nil:
		return false, false, nil
	}
	name := c.SecretName(h.To.Name)
	standby, err := read(name)
	if err != nil || !valid(standby, h.To) {
		return false, false, err
	}
	err = write(c.config.SecretName, standby, nil, func(existing *corev1.Secret) error {
		var data map[string][]byte
		if existing != nil {
			data = existing.Data
		}
		if err := replaceable(data); err != nil {
			return err
		}
		// Credentials of this agent written since the first read (a bootstrap's write that outlived its
		// session) may be the hub left's, still to be kept: the decision is made again from a new read.
		if !bytes.Equal(data[clientcert.TLSCertSecretKey], current[clientcert.TLSCertSecretKey]) {
			return errSecretChanged
		}
		return nil
	})
	switch {
	case errors.Is(err, errAlreadyValid):
		return false, true, nil
	case errors.Is(err, errOtherWriter):
		return false, false, nil
	case err != nil:
		return false, false, fmt.Errorf("using the standby credentials of hub %s: %w", h.To.Name, err)
	}
	// The session must see them as this process's own, not as a takeover.
	c.config.BootstrapBackoff.RecordWritten(standby[clientcert.TLSCertSecretKey])
	c.awaitSecretCache(ctx, standby[clientcert.TLSCertSecretKey])
	c.config.Recorder.Eventf(ReasonStandbyCredentialsUsed, "hub %s: standby credentials from secret %s/%s written to %s/%s; no CSR needed",
		h.To.Name, ns, name, ns, c.config.SecretName)
	return true, false, nil
}

// Why swap leaves the hub kubeconfig Secret alone: the first two are never returned by Swap or Adopt; the last
// is, wrapped, so that the caller tries again from a new read (Adopt's attempts; Swap's caller starts the session,
// which bootstraps only if it must).
var (
	errAlreadyValid  = errors.New("the hub kubeconfig Secret is valid for the hub already")
	errOtherWriter   = errors.New("the hub kubeconfig Secret holds another writer's credentials")
	errSecretChanged = errors.New("the hub kubeconfig Secret changed since it was read")
)

// swapCacheWait bounds how long Swap waits for the agent's Secret informer to show what it wrote.
const swapCacheWait = 5 * time.Second

// awaitSecretCache waits, at most swapCacheWait (or until ctx ends), until the agent's Secret informer holds the
// hub kubeconfig Secret with certificate cert. The session that starts after Swap reads that Secret from the
// informer: started before the informer has seen the write, it would find the credentials of the hub left, take
// them as invalid for its hub and bootstrap (a CSR) — seen with a thousand agents switching at once, where event
// delivery lags by seconds. When the wait ends without it, the session's own rules apply as before.
func (c *StandbyCredentials) awaitSecretCache(ctx context.Context, cert []byte) {
	lister := c.config.SecretInformer.Lister().Secrets(c.config.Namespace)
	seen := func(context.Context) (bool, error) {
		s, err := lister.Get(c.config.SecretName)
		return err == nil && bytes.Equal(s.Data[clientcert.TLSCertSecretKey], cert), nil
	}
	ctx, cancel := context.WithTimeout(ctx, swapCacheWait)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, seen); err != nil {
		klog.FromContext(ctx).Info("The Secret informer has not shown the standby credentials written; the session starts anyway",
			"secret", c.config.Namespace+"/"+c.config.SecretName, "waited", swapCacheWait)
	}
}

// standbyBackoffKey is the key of hub's standby CSRs in the bootstrap back-off: a record of its own, beside the
// bootstrap key of that hub, so that standby CSRs never delay the bootstrap of a switch to a cold standby.
func (c *StandbyCredentials) standbyBackoffKey(hub Hub) string {
	return clientcert.BootstrapBackoffKey(c.config.ClusterName, hub.Bootstrap.Hub.Server) + "#standby"
}
