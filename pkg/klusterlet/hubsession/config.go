package hubsession

import (
	"fmt"
	"net/http"

	"github.com/openshift/library-go/pkg/operator/events"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

// Hub is one hub the cluster can register with.
type Hub struct {
	// Name is "primary" for the hub of --bootstrap-kubeconfig, else the FailoverConfig alternate's name.
	Name string
	// Bootstrap is the hub's parsed bootstrap kubeconfig.
	Bootstrap *clientcert.BootstrapKubeconfig
}

// Config is the configuration every session of a process shares: set once when the agent starts, never changed
// afterwards: the agent's wiring builds it once and hands the orchestrator a failover.SessionBuilder that calls New
// with it. Fields without a stated default are required.
type Config struct {
	// ClusterName and AgentName are the agent's identity (design §2); they never change within a process.
	ClusterName, AgentName string
	// Namespace is the agent namespace: the hub kubeconfig Secret (SecretName) lives there, and so do the
	// FailoverConfig and the bootstrap Secrets the orchestrator reads.
	Namespace string
	// SecretName names the hub kubeconfig Secret in Namespace.
	SecretName string
	// SecretInformer covers Namespace on AgentKubeClient's cluster; the caller starts it and keeps it running
	// across sessions. A session only adds (and removes again) an event handler to follow the hub kubeconfig
	// Secret. The controllers of a session run on informers of their own (Secrets of Namespace, Nodes,
	// ClusterClaims) that stop with them: library-go's factory never removes the handlers it adds, so shared
	// informers would collect one set of handlers per session and per credential change.
	SecretInformer corev1informers.SecretInformer
	// CSRExpirationSeconds, if set, is sent as spec.expirationSeconds of every CSR.
	CSRExpirationSeconds *int32
	// BootstrapBackoff spaces the bootstrap CSRs to each hub across the sessions of the process and remembers the
	// certificates the process wrote; one for every session of a process. Nil: one private to each session, with
	// the defaults (the agent's wiring passes one restored from its Lease).
	BootstrapBackoff *clientcert.BootstrapBackoff
	// AgentKubeClient writes the hub kubeconfig Secret in Namespace of the cluster the agent runs in: the managed
	// cluster, or in hosted mode (--spoke-kubeconfig) the cluster hosting the agent.
	AgentKubeClient kubernetes.Interface
	// SpokeKubeClient and SpokeClusterClient read the managed cluster: the sessions' Node and ClusterClaim
	// informers (and, for SpokeClusterClient, the id.k8s.io claim the orchestrator's standby probes check).
	SpokeKubeClient    kubernetes.Interface
	SpokeClusterClient clusterclientset.Interface
	// HubQPS and HubBurst, when > 0, rate-limit every hub client of a session (requests per second, burst);
	// zero keeps client-go's defaults (5, 10).
	HubQPS   float32
	HubBurst int
	// Controllers builds the ManagedCluster and add-on controllers of every session (required).
	Controllers Controllers
	// Clock drives the controllers and validity checks (and the orchestrator's decisions). Default: real clock.
	Clock clock.Clock
	// Recorder receives the events of the sessions and their controllers (and of the orchestrator).
	Recorder events.Recorder
}

// Params are what one session gets besides Config; they differ between the sessions of a process.
type Params struct {
	// Hub is the hub to register with; its name and bootstrap kubeconfig are required.
	Hub Hub
	// Observer hears what the session reports (phase, ManagedCluster, client certificate, add-ons, contested
	// Secret). Nil: NopObserver.
	Observer Observer
	// WrapTransport, if set, wraps the transport of every hub client of the session (the orchestrator's
	// connectivity tracking).
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Epoch is the agent's session epoch, recorded on the hub's ManagedCluster by the main controllers
	// (managedcluster.DecideEpoch); zero Number: none is recorded.
	Epoch failoverv1alpha1.AgentEpoch
	// Standby, when set, is the process's keeper of hot standby credentials: before its first bootstrap that was
	// not forced, the session adopts this hub's standby credentials (StandbyCredentials.Adopt) — the hand-over
	// made before it started may have failed or timed out. Nil: standby credentials are off.
	Standby *StandbyCredentials
	// SecretName, when set, names the Secret in Config.Namespace the session keeps its credentials in, instead of
	// Config.SecretName: the hub's standby credentials Secret (StandbySecretName) while OCM's work agent is held on
	// the hub left, whose credentials the hub kubeconfig Secret keeps. Standby is then ignored: the session's own
	// Secret is the standby Secret.
	SecretName string
}

// check returns an error naming the first missing field of c for a session on hub.
func (c *Config) check(hub string) error {
	switch {
	case c.ClusterName == "" || c.AgentName == "" || c.Namespace == "" || c.SecretName == "":
		return fmt.Errorf("hub session %s: cluster name, agent name, namespace and secret name are required", hub)
	case c.AgentKubeClient == nil || c.SpokeKubeClient == nil || c.SpokeClusterClient == nil || c.SecretInformer == nil:
		return fmt.Errorf("hub session %s: spoke client and informers are required", hub)
	case c.Recorder == nil:
		return fmt.Errorf("hub session %s: recorder is required", hub)
	case c.Controllers.EnsureManagedCluster == nil || c.Controllers.Creating == nil || c.Controllers.Registered == nil:
		return fmt.Errorf("hub session %s: the ManagedCluster controllers' builders are required", hub)
	}
	return nil
}

// withDefaults returns c with its defaults filled in: the real clock, a private bootstrap back-off.
func (c Config) withDefaults() Config {
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.BootstrapBackoff == nil {
		c.BootstrapBackoff = clientcert.NewBootstrapBackoff(clientcert.BootstrapBackoffOptions{Clock: c.Clock})
	}
	return c
}
