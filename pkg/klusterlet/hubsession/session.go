package hubsession

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
)

// Session is one registration with one hub.
type Session struct {
	config Config
	hub    Hub
	obs    Observer
	// wrapTransport wraps every hub client's transport (Params.WrapTransport); nil: none.
	wrapTransport func(http.RoundTripper) http.RoundTripper
	// standby adopts this hub's standby credentials before a bootstrap (Params.Standby); nil: off. adoptTried:
	// Run's goroutine made that attempt already (once per session).
	standby    *StandbyCredentials
	adoptTried bool
	// conflicts records an identity conflict (FC-06) seen by the status controller; the lease stops renewing
	// while it is set. The verdict belongs to one hub, so each session has its own.
	conflicts *managedcluster.ConflictTracker

	// wake is signalled by Secret events and ForceBootstrap.
	wake chan struct{}

	// ours: the Secret's credentials last seen were this process's (see Takeover); only Run's goroutine uses it.
	ours bool

	mu       sync.Mutex
	phase    Phase
	message  string
	forceCSR string
	// epoch is the session epoch the creating controller records (Params.Epoch, then what it recorded or adopted).
	epoch failoverv1alpha1.AgentEpoch
	// inStandbySecret: the session keeps its credentials in the hub's standby Secret (Params.SecretName), which
	// a Secret it creates must carry StandbyHubLabel for, as the standby keeper's do.
	inStandbySecret bool
}

// New checks config and p and returns a session for p.Hub. It returns an error naming the first missing field.
func New(config Config, p Params) (*Session, error) {
	if p.Hub.Bootstrap == nil || p.Hub.Name == "" {
		return nil, fmt.Errorf("hub session: hub name and bootstrap kubeconfig are required")
	}
	if err := config.check(p.Hub.Name); err != nil {
		return nil, err
	}
	obs := p.Observer
	if obs == nil {
		obs = NopObserver{}
	}
	inStandbySecret := p.SecretName != ""
	if inStandbySecret {
		config.SecretName, p.Standby = p.SecretName, nil
	}
	return &Session{
		config:        config.withDefaults(),
		hub:           p.Hub,
		obs:           obs,
		wrapTransport: p.WrapTransport,
		standby:       p.Standby,
		conflicts:     managedcluster.NewConflictTracker(),
		wake:          make(chan struct{}, 1),
		epoch:         p.Epoch,

		inStandbySecret: inStandbySecret,
	}, nil
}

// sessionEpoch returns the session epoch to record now.
func (s *Session) sessionEpoch() failoverv1alpha1.AgentEpoch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epoch
}

// epochRecorded keeps epoch, recorded or adopted by the creating controller, and reports it to the observer.
func (s *Session) epochRecorded(epoch failoverv1alpha1.AgentEpoch) {
	s.mu.Lock()
	s.epoch = epoch
	s.mu.Unlock()
	s.obs.EpochRecorded(epoch)
}

// Hub returns the hub of the session.
func (s *Session) Hub() Hub { return s.hub }

// Phase returns the current phase and its message. Safe for concurrent use.
func (s *Session) Phase() (Phase, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase, s.message
}

// ForceBootstrap makes the session obtain a new certificate with the bootstrap identity even though the stored
// one looks valid — used when the hub keeps rejecting it (lasting 401). reason goes into the CSR event.
func (s *Session) ForceBootstrap(reason string) {
	s.mu.Lock()
	s.forceCSR = reason
	s.mu.Unlock()
	notify(s.wake)
}

// Run registers the cluster with the hub and keeps it registered until ctx is cancelled; then it stops every
// controller and informer it started and returns nil. It never returns early for hub errors: they are reported
// to the Observer and in events, and retried with back-off.
func (s *Session) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("hub", s.hub.Name, "server", s.hub.Bootstrap.Hub.Server, "cluster", s.config.ClusterName)
	ctx = klog.NewContext(ctx, logger)
	changed := s.wake
	reg, err := s.config.SecretInformer.Informer().AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj interface{}) bool {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			sec, ok := obj.(*corev1.Secret)
			return ok && sec.Namespace == s.config.Namespace && sec.Name == s.config.SecretName
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(interface{}) { notify(changed) },
			UpdateFunc: func(interface{}, interface{}) { notify(changed) },
			DeleteFunc: func(interface{}) { notify(changed) },
		},
	})
	if err != nil {
		return fmt.Errorf("hub session %s: watch secret %s/%s: %w", s.hub.Name, s.config.Namespace, s.config.SecretName, err)
	}
	defer func() { _ = s.config.SecretInformer.Informer().RemoveEventHandler(reg) }()
	if !cache.WaitForCacheSync(ctx.Done(), s.config.SecretInformer.Informer().HasSynced) {
		return nil
	}

	warnedExpiring := false
	for ctx.Err() == nil {
		data := s.secretData()
		now := s.config.Clock.Now()
		checkErr := clientcert.CheckHubKubeconfig(data, s.config.ClusterName, s.config.AgentName, s.hub.Bootstrap.Hub, now)
		s.observe(data, checkErr)
		s.mu.Lock()
		forced := s.forceCSR
		s.mu.Unlock()
		bootstrapNotAfter, _ := s.hub.Bootstrap.ClientCertNotAfter()
		c := choosePhase(phaseFacts{
			hub:               s.hub.Name,
			bootstrapSource:   s.hub.Bootstrap.Source,
			secret:            s.config.Namespace + "/" + s.config.SecretName,
			secretPresent:     data != nil,
			checkErr:          checkErr,
			forced:            forced,
			bootstrapExpired:  s.hub.Bootstrap.Expired(now),
			bootstrapNotAfter: bootstrapNotAfter,
			warnedExpiring:    warnedExpiring,
		})
		if c.phase == PhaseNoCredentials {
			if s.setPhase(c.phase, c.message) {
				s.config.Recorder.Warning(c.reason, c.warning)
			}
			// Waits on the Secret watch; a new bootstrap kubeconfig restarts the session from outside.
			waitChanged(ctx, changed)
			continue
		}
		if c.phase == PhaseBootstrapping && forced == "" && s.standby != nil && !s.adoptTried {
			s.adoptTried = true
			s.adoptStandby(ctx, changed)
			continue
		}
		if c.reason != "" {
			s.config.Recorder.Warning(c.reason, c.warning)
			warnedExpiring = warnedExpiring || c.reason == ReasonBootstrapKubeconfigUnusable
		}
		if c.phase == PhaseRegistered {
			s.config.BootstrapBackoff.RecordWritten(data[clientcert.TLSCertSecretKey])
			s.ours = true
			s.runMain(ctx, data, changed)
		} else {
			s.runBootstrap(ctx, data, forced, changed)
		}
	}
	return nil
}

// Adopting standby credentials from the session: at most adoptAttempts tries of StandbyCredentials.Adopt, each
// bounded by adoptAttemptTimeout (the hand-over's own bound), the first adoptRetryDelay after a failed one,
// doubling (1+2+4+8 s: a spoke apiserver busy with a herd gets 15 s before the session sends a CSR instead); then
// up to adoptCacheWait for the Secret informer to show credentials valid for the hub.
const (
	adoptAttempts       = 5
	adoptAttemptTimeout = 10 * time.Second
	adoptRetryDelay     = time.Second
	adoptCacheWait      = 10 * time.Second
)

// adoptStandby runs before the session's first bootstrap that was not forced: the hand-over made before the
// session started (StandbyCredentials.Swap, bounded) can time out when the spoke apiserver is slow — a hub lost
// with all its clusters —, and a bootstrap would then send a CSR to the new hub although valid credentials of
// it wait in its standby Secret. A request that fails is tried again (adoptAttempts); when the Secret is valid
// for this hub as the cluster holds it, the session waits until its informer shows credentials valid for the hub
// (checked at every change, at most adoptCacheWait), and its loop decides again. It returns at once when Adopt
// finds nothing to adopt.
func (s *Session) adoptStandby(ctx context.Context, changed <-chan struct{}) {
	logger := klog.FromContext(ctx)
	s.setPhase(PhaseBootstrapping, fmt.Sprintf("hub %s: looking for standby credentials of this hub in secret %s/%s before a CSR",
		s.hub.Name, s.config.Namespace, StandbySecretName(s.config.SecretName, s.hub.Name)))
	delay := adoptRetryDelay
	for attempt := 1; ; attempt++ {
		attemptCtx, cancel := context.WithTimeout(ctx, adoptAttemptTimeout)
		valid, err := s.standby.Adopt(attemptCtx, s.hub)
		cancel()
		if err == nil {
			if valid {
				s.awaitInformerValid(ctx, changed, adoptCacheWait)
			}
			return
		}
		if attempt == adoptAttempts || ctx.Err() != nil {
			logger.Info("Could not adopt this hub's standby credentials; bootstrapping", "attempts", attempt, "err", err)
			return
		}
		timer := s.config.Clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C():
		}
		delay *= 2
	}
}

// awaitInformerValid waits until the Secret informer holds credentials valid for the session's hub, checking at
// every change of the Secret, for at most d on the session's clock or until ctx ends.
func (s *Session) awaitInformerValid(ctx context.Context, changed <-chan struct{}, d time.Duration) {
	timer := s.config.Clock.NewTimer(d)
	defer timer.Stop()
	for clientcert.CheckHubKubeconfig(s.secretData(), s.config.ClusterName, s.config.AgentName, s.hub.Bootstrap.Hub, s.config.Clock.Now()) != nil {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-timer.C():
			klog.FromContext(ctx).Info("The Secret informer has not shown this hub's credentials; the session decides on what it shows",
				"waited", d)
			return
		}
	}
}

// AbandonBootstrap tells the hub's bootstrap back-off that the agent leaves this hub (a switch), so that the pending
// bootstrap, cut short, does not count as failed there (BootstrapBackoff.Abandoned). Not called when the process
// stops: a process restarted in a loop stays backed off.
func (s *Session) AbandonBootstrap() {
	s.config.BootstrapBackoff.Abandoned(s.backoffKey())
}

// backoffKey is the session's key in BootstrapBackoff: the cluster and the hub's server, so that two agents of
// one cluster sharing the persisted back-off agree on it whatever they call the hub.
func (s *Session) backoffKey() string {
	return clientcert.BootstrapBackoffKey(s.config.ClusterName, s.hub.Bootstrap.Hub.Server)
}
