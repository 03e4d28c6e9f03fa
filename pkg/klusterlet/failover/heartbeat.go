package failover

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1client "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/hubsession"
)

// heartbeatState is the heartbeat of the active hub. inFlight is set by the decision goroutine when it starts a
// heartbeat and cleared by that heartbeat's goroutine when it returns. kept is the heartbeat's kept client, reused
// from one heartbeat to the next while its credentials stay the same; mu guards it (the decision goroutine builds
// it, the heartbeat's goroutine replaces it after it got no answer).
type heartbeatState struct {
	inFlight atomic.Bool

	mu   sync.Mutex
	kept *heartbeatClient
}

// heartbeatClient is a ManagedCluster client of the active hub on a transport of its own (outside client-go's
// shared cache), for the credentials key names. config is the heartbeat's configuration without the tracker's
// wrapper (each client adds its own).
type heartbeatClient struct {
	key        string
	config     *rest.Config
	clusters   clusterv1client.ManagedClusterInterface
	httpClient *http.Client
	// answersOnly makes the tracker record only the hub's answers on this client (while it is the kept one).
	answersOnly *atomic.Bool
}

// close closes the idle connections of c's transport (nil: nothing).
func (c *heartbeatClient) close() {
	if c != nil {
		utilnet.CloseIdleConnectionsFor(c.httpClient.Transport)
	}
}

// maxHeartbeatDeadline bounds one heartbeat: a hub that accepts connections but does not answer (a stopped
// process, a black-holed port) is seen failing within it, and the next heartbeat follows.
const maxHeartbeatDeadline = 10 * time.Second

// heartbeat keeps the hub monitor informed about a quiet active hub. The monitor judges the hub by the agent's
// own requests, but a registered agent may send none for minutes (the lease is renewed once per
// leaseDurationSeconds, status only when it changed), so a hubConnectionTimeout shorter than that would declare
// a healthy hub lost. When no request has been answered for a third of the timeout, heartbeat GETs the cluster's
// own ManagedCluster through the connectivity tracker, with the credentials of the session's phase: the hub
// kubeconfig Secret once registered (the bootstrap kubeconfig when the Secret cannot be used), the bootstrap
// kubeconfig while bootstrapping; none without credentials.
// A 401/403 answer counts as such (the rejection rule judges it), a success ends a 401/403 run.
//
// The heartbeat has connections of its own, not the one client-go shares between the session's clients (an
// HTTP/2 connection to a dead peer can hang for about 45 s). It first asks on its kept connection, reused from
// one heartbeat to the next while the credentials stay the same, so a quiet hub costs one GET per heartbeat and
// no TLS handshake; only the hub's answers there are recorded. When that gets no answer within half the
// heartbeat's deadline (heartbeatDeadline), or fails at once, the same GET goes on a new connection as well,
// recorded in full (its failure is the monitor's evidence), and that client is kept from then on. So a kept
// connection that leads nowhere while the hub answers on new ones never makes the hub look lost, and a dead hub
// gives its evidence by the end of the deadline, as with a connection per heartbeat. At most one heartbeat is in
// flight. It returns when the next one may be due.
func (r *Orchestrator) heartbeat(ctx context.Context, phase hubsession.Phase, timeout time.Duration, now time.Time) time.Duration {
	if timeout <= 0 {
		timeout = DefaultHubConnectionTimeout
	}
	interval := max(timeout/3, time.Second)
	inFlight := r.beat.inFlight.Load()
	c := r.tracker.Snapshot()
	last := c.TrackingSince
	for _, t := range []time.Time{c.LastSuccess, c.LastUnauthorized} {
		if t.After(last) {
			last = t
		}
	}
	if due := last.Add(interval); now.Before(due) {
		return due.Sub(now)
	}
	if inFlight {
		return interval
	}
	kept := r.heartbeatClientFor(phase)
	if kept == nil {
		return interval
	}
	r.beat.inFlight.Store(true)
	name, hub := r.o.Agent.ClusterName, r.run.hub
	deadline := heartbeatDeadline(last, timeout, now)
	go func() {
		defer func() {
			r.beat.inFlight.Store(false)
			r.kick()
		}()
		hctx, cancel := context.WithTimeout(ctx, deadline)
		defer cancel()
		keptDone := make(chan error, 1)
		go func() { keptDone <- heartbeatGet(hctx, kept.clusters, name) }()
		hedge := time.NewTimer(deadline / 2)
		defer hedge.Stop()
		select {
		case err := <-keptDone:
			if err == nil || answered(err) {
				return
			}
		case <-hedge.C:
		case <-hctx.Done():
			return
		}
		klog.FromContext(ctx).V(4).Info("Hub heartbeat got no answer on its kept connection; asking on a new one", "hub", hub)
		fresh, err := r.newHeartbeatClient(kept.key, kept.config, false)
		if err != nil {
			return
		}
		if err := heartbeatGet(hctx, fresh.clusters, name); err != nil && !answered(err) {
			klog.FromContext(ctx).V(4).Info("Hub heartbeat failed", "hub", hub, "err", err)
		}
		// From now on the new connection is the kept one, recording the hub's answers only.
		fresh.answersOnly.Store(true)
		r.beat.mu.Lock()
		if r.beat.kept == kept {
			r.beat.kept = fresh
		}
		r.beat.mu.Unlock()
		kept.close()
	}()
	return interval
}

// heartbeatDeadline is how long a heartbeat sent at now waits for its answer, given the hub's last answer (or the
// start of tracking) and the connection timeout: until the moment the verdict could fire (last + timeout) — a slow
// hub that answers by then is up, and no verdict comes sooner anyway — at least a third of the timeout (a
// heartbeat sent late, after a stall, still gets a fair wait), at most maxHeartbeatDeadline.
func heartbeatDeadline(last time.Time, timeout time.Duration, now time.Time) time.Duration {
	return min(max(last.Add(timeout).Sub(now), max(timeout/3, time.Second)), maxHeartbeatDeadline)
}

// heartbeatGet GETs ManagedCluster name through clusters; NotFound is no error.
func heartbeatGet(ctx context.Context, clusters clusterv1client.ManagedClusterInterface, name string) error {
	_, err := clusters.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// answered reports whether err is the hub's answer (an HTTP status), not a failure to get one.
func answered(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status)
}

// heartbeatClientFor returns the heartbeat's client of the active hub for the credentials of phase (the kept one
// when they are the same as last time; a new one otherwise, and the old one's connection closed), wrapped by the
// connectivity tracker, or nil when the hub has no bootstrap kubeconfig or the phase no credentials at all.
func (r *Orchestrator) heartbeatClientFor(phase hubsession.Phase) *heartbeatClient {
	h, ok := r.hubs[r.run.hub]
	if !ok || h.bootstrap == nil {
		return nil
	}
	// The key names the credentials the client was built from: the bootstrap kubeconfig as loaded (a new one is
	// a new object), and, once registered, the version of the hub kubeconfig Secret too.
	base, credentialsKey := h.bootstrap.RestConfig, fmt.Sprintf("%p", h.bootstrap)
	switch phase {
	case hubsession.PhaseRegistered:
		// The session's own credentials; when they cannot be used here (the Secret missing from the cache or
		// unreadable, or another writer's for another hub), the bootstrap kubeconfig's: the hub's loss must
		// always be provable by a request (Evaluate rule 4), and any answer, a 401 included, proves it is there.
		if secret, err := r.o.Agent.SecretInformer.Lister().Secrets(r.o.Agent.Namespace).Get(r.run.secretName); err == nil {
			if cfg, err := clientcert.RestConfigFromSecretData(secret.Data); err == nil &&
				!slices.Contains(h.bootstrap.Hub.Diff(clientcert.HubInfo{Server: cfg.Host}), "server") {
				base, credentialsKey = cfg, credentialsKey+"/"+string(secret.UID)+"/"+secret.ResourceVersion
			}
		}
	case hubsession.PhaseBootstrapping:
	default:
		return nil
	}
	key := string(phase) + "/" + credentialsKey
	r.beat.mu.Lock()
	defer r.beat.mu.Unlock()
	if r.beat.kept != nil && r.beat.kept.key == key {
		return r.beat.kept
	}
	cfg := rest.CopyConfig(base)
	cfg.UserAgent = "klusterlet-failover-heartbeat"
	if cfg.Proxy == nil {
		// What client-go's transport uses without a proxy-url; a set Proxy also keeps the transport out of
		// client-go's shared cache, so the heartbeat gets a connection of its own.
		cfg.Proxy = http.ProxyFromEnvironment
	}
	client, err := r.newHeartbeatClient(key, cfg, true)
	if err != nil {
		return nil
	}
	r.beat.kept.close()
	r.beat.kept = client
	return client
}

// newHeartbeatClient builds a heartbeat client for key from cfg (the heartbeat's configuration: a set Proxy gives
// it a transport of its own), wrapped by the tracker, recording only the hub's answers when answersOnly.
func (r *Orchestrator) newHeartbeatClient(key string, cfg *rest.Config, answersOnly bool) (*heartbeatClient, error) {
	flag := &atomic.Bool{}
	flag.Store(answersOnly)
	wrapped := rest.CopyConfig(cfg)
	wrapped.Wrap(r.tracker.wrapTransportSwitchable(flag))
	httpClient, err := rest.HTTPClientFor(wrapped)
	if err != nil {
		return nil, err
	}
	client, err := clusterclientset.NewForConfigAndClient(wrapped, httpClient)
	if err != nil {
		return nil, err
	}
	return &heartbeatClient{key: key, config: cfg, clusters: client.ClusterV1().ManagedClusters(), httpClient: httpClient, answersOnly: flag}, nil
}
