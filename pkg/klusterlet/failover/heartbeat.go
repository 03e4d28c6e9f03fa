package failover

import (
	"context"
	"net/http"
	"slices"
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
// heartbeat GET and cleared by that GET's goroutine when it returns.
type heartbeatState struct {
	inFlight atomic.Bool
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
// A 401/403 answer counts as such (the rejection rule judges it), a success ends a 401/403 run. Every heartbeat
// opens a connection of its own and closes it after the answer, with a deadline of a third of the timeout, at
// most maxHeartbeatDeadline: a hub kept alive on a reused connection to a dead peer (client-go shares one
// transport per TLS configuration, and an HTTP/2 connection to a dead peer can hang for about 45 s) would
// neither fail nor answer. At most one heartbeat is in flight. It returns when the next one may be due.
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
	client, httpClient := r.heartbeatClientFor(phase)
	if client == nil {
		return interval
	}
	r.beat.inFlight.Store(true)
	name, hub := r.o.Agent.ClusterName, r.run.hub
	go func() {
		hctx, cancel := context.WithTimeout(ctx, min(interval, maxHeartbeatDeadline))
		defer cancel()
		if _, err := client.Get(hctx, name, metav1.GetOptions{}); err != nil && !apierrors.IsNotFound(err) {
			klog.FromContext(ctx).V(4).Info("Hub heartbeat failed", "hub", hub, "err", err)
		}
		utilnet.CloseIdleConnectionsFor(httpClient.Transport)
		r.beat.inFlight.Store(false)
		r.kick()
	}()
	return interval
}

// heartbeatClientFor returns a ManagedCluster client of the active hub for the credentials of phase, wrapped
// by the connectivity tracker, on an HTTP client of its own (close its idle connections after the request), or
// nil when there are none.
func (r *Orchestrator) heartbeatClientFor(phase hubsession.Phase) (clusterv1client.ManagedClusterInterface, *http.Client) {
	h, ok := r.hubs[r.run.hub]
	if !ok || h.bootstrap == nil {
		return nil, nil
	}
	var base *rest.Config
	switch phase {
	case hubsession.PhaseRegistered:
		secret, err := r.o.Agent.SecretInformer.Lister().Secrets(r.o.Agent.Namespace).Get(r.o.Agent.SecretName)
		if err != nil {
			return nil, nil
		}
		if base, err = clientcert.RestConfigFromSecretData(secret.Data); err != nil {
			return nil, nil
		}
		if slices.Contains(h.bootstrap.Hub.Diff(clientcert.HubInfo{Server: base.Host}), "server") {
			// Another writer's credentials for another hub: they say nothing about the active hub.
			return nil, nil
		}
	case hubsession.PhaseBootstrapping:
		base = h.bootstrap.RestConfig
	default:
		return nil, nil
	}
	cfg := rest.CopyConfig(base)
	cfg.UserAgent = "klusterlet-failover-heartbeat"
	if cfg.Proxy == nil {
		// What client-go's transport uses without a proxy-url; a set Proxy also keeps the transport out of
		// client-go's shared cache, so the heartbeat gets a connection of its own.
		cfg.Proxy = http.ProxyFromEnvironment
	}
	cfg.Wrap(r.tracker.WrapTransport)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil
	}
	client, err := clusterclientset.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, nil
	}
	return client.ClusterV1().ManagedClusters(), httpClient
}
