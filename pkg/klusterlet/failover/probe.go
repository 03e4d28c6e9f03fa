package failover

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	clusterv1client "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/huberror"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// StandbyProbeResults lists, in a fixed order, every HubProbeResult a standby probe produces (ProbeRESTConfig,
// ProbeResultForError, or an unparsable bootstrap kubeconfig): the "result" label values of the standby probe
// metric. Rejected and Unknown are the active hub's results only (activeHubResult).
func StandbyProbeResults() []failoverv1alpha1.HubProbeResult {
	return []failoverv1alpha1.HubProbeResult{failoverv1alpha1.HubProbeReady, failoverv1alpha1.HubProbeInvalidKubeconfig,
		failoverv1alpha1.HubProbeUnreachable, failoverv1alpha1.HubProbeServerUntrusted, failoverv1alpha1.HubProbeUnauthorized,
		failoverv1alpha1.HubProbeForbidden, failoverv1alpha1.HubProbeIdentityConflict}
}

// ProbeIdentity is what a standby probe checks the hub's ManagedCluster against: the agent's cluster name and
// the spoke's identities (managedcluster.SpokeIdentityReader). An empty name or no current identity: the check
// is not made.
type ProbeIdentity struct {
	ClusterName string
	Spoke       managedcluster.SpokeIdentities
}

// ProbeResult is the outcome of one probe.
type ProbeResult struct {
	// Result is the outcome.
	Result failoverv1alpha1.HubProbeResult
	// Message is a short sentence for users (status, events); it never contains key material.
	Message string
	// Server is the hub API server URL from the kubeconfig, when it could be read.
	Server string
}

// Permission is one access a bootstrap identity needs on a hub, checked by a SelfSubjectAccessReview.
type Permission struct {
	// Verb is the Kubernetes API verb, e.g. "create".
	Verb string
	// Group is the API group, e.g. "certificates.k8s.io".
	Group string
	// Resource is the plural resource name, e.g. "certificatesigningrequests".
	Resource string
}

// String returns "<verb> <resource>.<group>".
func (p Permission) String() string {
	return p.Verb + " " + p.Resource + "." + p.Group
}

// RequiredBootstrapPermissions returns what a bootstrap identity needs to join a hub (design §4): create
// CertificateSigningRequests (certificates.k8s.io), create and get ManagedClusters
// (cluster.open-cluster-management.io). OCM's bootstrap ClusterRole grants these.
func RequiredBootstrapPermissions() []Permission {
	return []Permission{
		{Verb: "create", Group: "certificates.k8s.io", Resource: "certificatesigningrequests"},
		{Verb: "create", Group: "cluster.open-cluster-management.io", Resource: "managedclusters"},
		{Verb: "get", Group: "cluster.open-cluster-management.io", Resource: "managedclusters"},
	}
}

// ProbeRESTConfig checks whether a hub could be joined with the identity of config (a standby's bootstrap
// kubeconfig). It never returns an error: every failure is a ProbeResult.
//  1. GET /version through the discovery REST client. 401 → HubProbeUnauthorized (anonymous access may be
//     disabled, and a rejected client certificate or token also yields 401); 403 is accepted (the server
//     answered; RBAC may hide /version); any other failure → ProbeResultForError.
//  2. One SelfSubjectAccessReview (authorization.k8s.io/v1) per RequiredBootstrapPermissions entry. A denial →
//     HubProbeForbidden naming every missing permission.
//  3. With identity set, a GET of the ManagedCluster identity.ClusterName (404: none, fine; another failure →
//     ProbeResultForError). One that belongs to another spoke (managedcluster.OwnedByAnotherSpoke: a copy the
//     replicator keeps for another identity, or another spoke's registration the hub sees available) →
//     HubProbeIdentityConflict, saying whose it is: joining would run that spoke's ManifestWorks here.
//
// Otherwise → HubProbeReady. config is not modified; the probe uses JSON, a client timeout of timeout
// (non-positive: 30 s) and a connection of its own (a transport outside client-go's shared cache), closed
// afterwards: a new TLS handshake sees the hub's serving certificate as it is now (FC-03).
func ProbeRESTConfig(ctx context.Context, config *rest.Config, timeout time.Duration, identity ProbeIdentity) ProbeResult {
	config = probeConfig(config, timeout)
	if config.Proxy == nil {
		// What client-go's transport uses without a proxy-url; a set Proxy keeps the transport out of client-go's
		// shared cache, so this probe dials a connection of its own.
		config.Proxy = http.ProxyFromEnvironment
	}
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return ProbeResult{Result: failoverv1alpha1.HubProbeInvalidKubeconfig, Message: fmt.Sprintf("the kubeconfig's TLS or auth settings are unusable: %v", err), Server: config.Host}
	}
	defer utilnet.CloseIdleConnectionsFor(httpClient.Transport)
	return probe(ctx, config, httpClient, identity, true)
}

// ProbeKeptConnection is the standby probe between two ProbeRESTConfig (see standbyFullProbeInterval): steps 1 and
// 3 of ProbeRESTConfig — the server answers, the cluster's ManagedCluster there is not another spoke's — without
// the SelfSubjectAccessReviews, on the connection client-go keeps for config's TLS settings (the one the standby
// credentials controllers use, when they run), so that a probe costs the hub two GETs and no TLS handshake (with a
// proxy-url, which client-go's cache cannot hold, a connection per probe, closed after it). When
// that fails, the result is a full probe's (ProbeRESTConfig, on a new connection): a kept connection can lead to
// a peer that is gone while the hub answers on new ones (until client-go's HTTP/2 health check drops it), and
// only a failure on a fresh connection says the hub is not ready. The transport's idle connections are closed
// then. Same results and timeout per attempt as ProbeRESTConfig; config is not modified.
func ProbeKeptConnection(ctx context.Context, config *rest.Config, timeout time.Duration, identity ProbeIdentity) ProbeResult {
	config = probeConfig(config, timeout)
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return ProbeResult{Result: failoverv1alpha1.HubProbeInvalidKubeconfig, Message: fmt.Sprintf("the kubeconfig's TLS or auth settings are unusable: %v", err), Server: config.Host}
	}
	if config.Proxy != nil {
		// client-go cannot cache a transport with a proxy: each probe gets its own, closed after it.
		defer utilnet.CloseIdleConnectionsFor(httpClient.Transport)
	}
	res := probe(ctx, config, httpClient, identity, false)
	if res.Result == failoverv1alpha1.HubProbeReady || res.Result == failoverv1alpha1.HubProbeIdentityConflict {
		return res
	}
	utilnet.CloseIdleConnectionsFor(httpClient.Transport)
	return ProbeRESTConfig(ctx, config, timeout, identity)
}

// probeConfig is a copy of config for a probe: JSON, client timeout timeout (non-positive: 30 s).
func probeConfig(config *rest.Config, timeout time.Duration) *rest.Config {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	config = rest.CopyConfig(config)
	config.Timeout = timeout
	config.ContentType = "application/json"
	config.AcceptContentTypes = "application/json"
	return config
}

// probe runs the steps of ProbeRESTConfig on httpClient within config.Timeout (set by probeConfig); permissions
// says whether step 2 runs.
func probe(ctx context.Context, config *rest.Config, httpClient *http.Client, identity ProbeIdentity, permissions bool) ProbeResult {
	ctx, cancel := context.WithTimeout(ctx, config.Timeout)
	defer cancel()
	server := config.Host
	discoveryClient, err := discovery.NewDiscoveryClientForConfigAndClient(config, httpClient)
	if err != nil {
		return ProbeResult{Result: failoverv1alpha1.HubProbeInvalidKubeconfig, Message: fmt.Sprintf("cannot build a client from the kubeconfig: %v", err), Server: server}
	}
	authorizationClient, err := authorizationv1client.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return ProbeResult{Result: failoverv1alpha1.HubProbeInvalidKubeconfig, Message: fmt.Sprintf("cannot build a client from the kubeconfig: %v", err), Server: server}
	}

	serverVersion := ""
	raw, err := discoveryClient.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	switch {
	case err == nil:
		var info version.Info
		if json.Unmarshal(raw, &info) == nil {
			serverVersion = info.GitVersion
		}
	case huberror.Classify(err).Kind == huberror.Forbidden:
		// The server answered and authenticated us; /version is merely not allowed.
	default:
		return ProbeResultForError(config, err)
	}

	var missing []string
	for _, p := range RequiredBootstrapPermissions() {
		if !permissions {
			break
		}
		review := &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: p.Verb, Group: p.Group, Resource: p.Resource},
			},
		}
		answer, err := authorizationClient.SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			result := ProbeResultForError(config, err)
			result.Message = fmt.Sprintf("SelfSubjectAccessReview for %q failed: %s", p.String(), result.Message)
			return result
		}
		if !answer.Status.Allowed {
			missing = append(missing, describeDenial(p, answer.Status))
		}
	}
	if len(missing) > 0 {
		return ProbeResult{
			Result:  failoverv1alpha1.HubProbeForbidden,
			Message: "the identity may not " + strings.Join(missing, ", "),
			Server:  server,
		}
	}

	if identity.ClusterName != "" && identity.Spoke.Current() != "" {
		clusterClient, err := clusterv1client.NewForConfigAndClient(config, httpClient)
		if err != nil {
			return ProbeResult{Result: failoverv1alpha1.HubProbeInvalidKubeconfig, Message: fmt.Sprintf("cannot build a client from the kubeconfig: %v", err), Server: server}
		}
		mc, err := clusterClient.ManagedClusters().Get(ctx, identity.ClusterName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			result := ProbeResultForError(config, err)
			result.Message = fmt.Sprintf("reading ManagedCluster %q failed: %s", identity.ClusterName, result.Message)
			return result
		default:
			if another, why := managedcluster.OwnedByAnotherSpoke(mc, identity.Spoke); another {
				return ProbeResult{Result: failoverv1alpha1.HubProbeIdentityConflict, Message: why + "; the cluster does not move there", Server: server}
			}
		}
	}

	server = "the server"
	if serverVersion != "" {
		server = fmt.Sprintf("the server (Kubernetes %s)", serverVersion)
	}
	msg := server + " answers and the identity may create CertificateSigningRequests and ManagedClusters"
	if !permissions {
		msg = server + " answers on the kept connection (permissions as the last full probe found them)"
	}
	return ProbeResult{Result: failoverv1alpha1.HubProbeReady, Message: msg, Server: config.Host}
}

// describeDenial names a denied permission with the authorizer's reason when there is one.
func describeDenial(p Permission, status authorizationv1.SubjectAccessReviewStatus) string {
	s := p.String()
	var details []string
	if status.Reason != "" {
		details = append(details, status.Reason)
	}
	if status.EvaluationError != "" {
		details = append(details, "evaluation error: "+status.EvaluationError)
	}
	if len(details) > 0 {
		s += " (" + strings.Join(details, "; ") + ")"
	}
	return s
}

// probeResultFor returns the standby probe result of a hub request that failed with kind k: the one place
// where hub request failures become probe results. No failure is Ready; a 401 is Unauthorized, a 403
// Forbidden; a serving certificate the kubeconfig cannot trust (not signed by its CA, not valid for the server
// name, expired or otherwise invalid) is ServerUntrusted; every other failure, a proxy problem included, means
// the hub gave no usable answer: Unreachable.
func probeResultFor(k huberror.Kind) failoverv1alpha1.HubProbeResult {
	switch k {
	case huberror.None:
		return failoverv1alpha1.HubProbeReady
	case huberror.Unauthorized:
		return failoverv1alpha1.HubProbeUnauthorized
	case huberror.Forbidden:
		return failoverv1alpha1.HubProbeForbidden
	case huberror.CANotTrusted, huberror.WrongHost, huberror.CertificateInvalid:
		return failoverv1alpha1.HubProbeServerUntrusted
	}
	return failoverv1alpha1.HubProbeUnreachable
}

// ProbeResultForError turns an error of a request to a hub made with config into a ProbeResult with a short
// message for users; Server is config.Host. The error is classified by huberror.Classify and the class mapped
// to a result by probeResultFor. Only the standby probes (ProbeRESTConfig) use it; the bootstrap and the hub
// monitor's messages come from clientcert.ClassifyConnectionError, which names the bootstrap kubeconfig field
// at fault. The messages, by class:
//   - Unauthorized: "the hub rejected the credentials (HTTP 401 Unauthorized)", with the client certificate's
//     validity end when the config has inline certificate data; Forbidden: "the hub forbids the request (HTTP
//     403 Forbidden)"; HTTPStatus: "the hub answered HTTP <code>".
//   - CANotTrusted: "hub serving certificate not trusted by the kubeconfig's certificate authority";
//     WrongHost: "… not valid for the server name"; CertificateInvalid (expired, not yet valid, …): "… invalid".
//   - ProxyFailed: "cannot connect to the proxy <url>" (credentials redacted).
//   - Timeout: "the hub did not answer in time"; Unreachable (connection refused, DNS, …) and Other: "the hub
//     is unreachable".
//   - every message but the HTTP and proxy ones mentions the proxy when config's server is reached through one
//     (config.Proxy or the environment).
//
// Each message ends with the error. A nil err gives HubProbeReady with an empty message.
func ProbeResultForError(config *rest.Config, err error) ProbeResult {
	class := huberror.Classify(err)
	result := ProbeResult{Result: probeResultFor(class.Kind), Server: config.Host}
	proxy := proxyURLFor(config)
	switch class.Kind {
	case huberror.None:
		return result
	case huberror.Unauthorized:
		result.Message = "the hub rejected the credentials (HTTP 401 Unauthorized)" + clientCertificateValidity(config)
		return result
	case huberror.Forbidden:
		result.Message = fmt.Sprintf("the hub forbids the request (HTTP 403 Forbidden): %v", err)
		return result
	case huberror.HTTPStatus:
		result.Message = fmt.Sprintf("the hub answered HTTP %d: %v", class.Code, err)
		return result
	case huberror.ProxyFailed:
		result.Message = fmt.Sprintf("cannot connect to the proxy %s: %v", redacted(proxy), err)
		return result
	case huberror.CANotTrusted:
		result.Message = fmt.Sprintf("hub serving certificate not trusted by the kubeconfig's certificate authority: %v", err)
	case huberror.WrongHost:
		result.Message = fmt.Sprintf("hub serving certificate is not valid for the server name: %v", err)
	case huberror.CertificateInvalid:
		result.Message = fmt.Sprintf("hub serving certificate is invalid: %v", err)
	case huberror.Timeout:
		result.Message = fmt.Sprintf("the hub did not answer in time: %v", err)
	default:
		result.Message = fmt.Sprintf("the hub is unreachable: %v", err)
	}
	if proxy != nil {
		result.Message += fmt.Sprintf(" (through the proxy %s)", redacted(proxy))
	}
	return result
}

// clientCertificateValidity returns "; the client certificate is valid until <time>" for a kubeconfig with an
// inline client certificate, so a user can tell an expired bootstrap certificate (FC-09) without this code
// reading the wall clock.
func clientCertificateValidity(config *rest.Config) string {
	if len(config.CertData) == 0 {
		return ""
	}
	certs, err := certutil.ParseCertsPEM(config.CertData)
	if err != nil || len(certs) == 0 {
		return ""
	}
	return "; the client certificate is valid until " + text.Time(certs[0].NotAfter)
}

// proxyURLFor returns the proxy client-go uses for config's server: config.Proxy, else the environment
// (HTTPS_PROXY/NO_PROXY, with CIDR support as client-go does). nil when there is none.
func proxyURLFor(config *rest.Config) *url.URL {
	serverURL, _, err := rest.DefaultServerUrlFor(config)
	if err != nil {
		return nil
	}
	proxy := config.Proxy
	if proxy == nil {
		proxy = utilnet.NewProxierWithNoProxyCIDR(http.ProxyFromEnvironment)
	}
	u, err := proxy(&http.Request{Method: http.MethodGet, URL: serverURL, Host: serverURL.Host})
	if err != nil {
		return nil
	}
	return u
}

func redacted(u *url.URL) string {
	if u == nil {
		return "<none>"
	}
	return u.Redacted()
}
