package failover

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
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
// heartbeat GET and cleared by that GET's goroutine when it returns. kept is the heartbeat's client, kept from
// one heartbeat to the next while its credentials stay the same; mu guards it (the decision goroutine builds it,
// the GET's goroutine replaces it after a failure).
type heartbeatState struct {
	inFlight atomic.Bool

	mu   sync.Mutex
	kept *heartbeatClient
}

// heartbeatClient is a ManagedCluster client of the active hub on a transport of its own (outside client-go's
// shared cache), for the credentials key names.
type heartbeatClient struct {
	key        string
	config     *rest.Config
	clusters   clusterv1client.ManagedClusterInterface
	httpClient *http.Client
}

// close closes the idle connections of c's transport (nil: nothing).
func (c *heartbeatClient) close() {
	if c != nil {
		utilnet.CloseIdleConnectionsFor(c.httpClient.Transport)
	}
}

// maxHeartbeatDeadline bounds one heartbeat GET: a hub that accepts connections but does not answer (a stopped
// process, a black-holed port) is seen failing within it, and the next heartbeat follows.
const maxHeartbeatDeadline = 10 * time.Second

// heartbeat keeps the hub monitor informed about a quiet active hub. The monitor judges the hub by the agent's
// own requests, but a registered agent may send none for minutes (the lease is renewed once per
// leaseDurationSeconds, status only when it changed), so a hubConnectionTimeout shorter than that would declare
// a healthy hub lost. When no request has been answered for a third of the timeout, heartbeat GETs the cluster's
// own ManagedCluster through the connectivity tracker, with the credentials of the session's phase: the hub
// kubeconfig Secret once registered, the bootstrap kubeconfig while bootstrapping; none without credentials.
// A 401/403 answer counts as such (the rejection rule judges it), a success ends a 401/403 run. The heartbeat
// has a connection of its own, not the one client-go shares between the session's clients (an HTTP/2 connection
// to a dead peer can hang for about 45 s), kept from one heartbeat to the next while the credentials stay the
// same, so a quiet hub costs one GET per heartbeat and no TLS handshake. A GET that gets no answer from the hub
// (a transport error or the deadline, not an HTTP status) drops that connection and is sent once more on a new
// one, which is kept from then on: a kept connection that leads nowhere while the hub answers on new ones never
// makes the hub look lost; only successes are timed, so a dead hub is seen as fast as with a connection per
// heartbeat. Each attempt has a deadline of the time left until the hub's last answer is a timeout old (the
// earliest the hub monitor could declare it lost: a hub that answers by then is up, however slowly), at least a
// third of the timeout and at most maxHeartbeatDeadline. At most one heartbeat is in flight. It returns when the
// next one may be due.
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
	client := r.heartbeatClientFor(phase)
	if client == nil {
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
		err := heartbeatGet(ctx, client, name, deadline)
		if err == nil || answered(err) {
			return
		}
		klog.FromContext(ctx).V(4).Info("Hub heartbeat got no answer; trying a new connection", "hub", hub, "err", err)
		fresh, buildErr := newHeartbeatClient(client.key, client.config)
		if buildErr != nil {
			return
		}
		r.beat.mu.Lock()
		if r.beat.kept == client {
			r.beat.kept = fresh
		}
		r.beat.mu.Unlock()
		client.close()
		if err := heartbeatGet(ctx, fresh, name, deadline); err != nil && !answered(err) {
			klog.FromContext(ctx).V(4).Info("Hub heartbeat failed", "hub", hub, "err", err)
		}
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

// heartbeatGet GETs ManagedCluster name through c within deadline; NotFound is no error.
func heartbeatGet(ctx context.Context, c *heartbeatClient, name string, deadline time.Duration) error {
	hctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	_, err := c.clusters.Get(hctx, name, metav1.GetOptions{})
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
// connectivity tracker, or nil when there are none.
func (r *Orchestrator) heartbeatClientFor(phase hubsession.Phase) *heartbeatClient {
	h, ok := r.hubs[r.run.hub]
	if !ok || h.bootstrap == nil {
		return nil
	}
	var base *rest.Config
	switch phase {
	case hubsession.PhaseRegistered:
		secret, err := r.o.Agent.SecretInformer.Lister().Secrets(r.o.Agent.Namespace).Get(r.o.Agent.SecretName)
		if err != nil {
			return nil
		}
		if base, err = clientcert.RestConfigFromSecretData(secret.Data); err != nil {
			return nil
		}
		if slices.Contains(h.bootstrap.Hub.Diff(clientcert.HubInfo{Server: base.Host}), "server") {
			// Another writer's credentials for another hub: they say nothing about the active hub.
			return nil
		}
	case hubsession.PhaseBootstrapping:
		base = h.bootstrap.RestConfig
	default:
		return nil
	}
	key := heartbeatKey(phase, base)
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
	cfg.Wrap(r.tracker.WrapTransport)
	client, err := newHeartbeatClient(key, cfg)
	if err != nil {
		return nil
	}
	r.beat.kept.close()
	r.beat.kept = client
	return client
}

// heartbeatKey names the credentials of a heartbeat client: the phase, the server and the identity.
func heartbeatKey(phase hubsession.Phase, c *rest.Config) string {
	sum := sha256.Sum256([]byte(c.Host + "\x00" + string(c.CertData) + "\x00" + c.CertFile + "\x00" + c.BearerToken + "\x00" + c.BearerTokenFile + "\x00" + string(c.CAData)))
	return string(phase) + "/" + hex.EncodeToString(sum[:])
}

// newHeartbeatClient builds a heartbeat client for key from cfg (already the heartbeat's configuration): a
// transport of its own, since cfg has a Proxy.
func newHeartbeatClient(key string, cfg *rest.Config) (*heartbeatClient, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	client, err := clusterclientset.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return &heartbeatClient{key: key, config: cfg, clusters: client.ClusterV1().ManagedClusters(), httpClient: httpClient}, nil
}
