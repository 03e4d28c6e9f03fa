package hubsession

import (
	"context"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	certificatesv1informers "k8s.io/client-go/informers/certificates/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1client "open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1"
	clusterv1informer "open-cluster-management.io/api/client/cluster/informers/externalversions/cluster/v1"
	clusterv1alpha1informer "open-cluster-management.io/api/client/cluster/informers/externalversions/cluster/v1alpha1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
)

// Controllers builds the ManagedCluster and add-on controllers a session runs. The agent's composition root
// (package klusterlet) supplies them with the agent's settings closed over: the spoke's URLs and CA bundle, the
// cluster annotations, the claim limits, the health-check period, the add-on clients. A session owns the hub
// clients and informers and decides when the controllers run and stop; what they are is decided where the agent
// is composed. The client certificate controllers are the session's own: they keep the hub kubeconfig Secret
// whose contents decide the session's phase.
type Controllers struct {
	// EnsureManagedCluster makes sure, through client (the bootstrap identity's), that the cluster's
	// ManagedCluster exists on the hub; it reports whether it created it, or the hub's error. Required.
	EnsureManagedCluster func(ctx context.Context, client clusterv1client.ManagedClustersGetter) (created bool, err error)
	// Creating builds the bootstrap phase's ManagedCluster creating controller, which creates and updates the
	// ManagedCluster through client (the bootstrap identity's). Required.
	Creating func(client clusterv1client.ManagedClustersGetter) factory.Controller
	// Registered builds the main phase's controllers on the hub identity's clients: the lease, creating and
	// status controllers, in the order they start. Required.
	Registered func(in RegisteredInputs) []factory.Controller
	// AddOns, if set, runs the add-on controllers of the main phase until ctx ends (OCM's AddonManagement), so
	// that they restart on every hub switch; it returns an error at once when they cannot be built. Nil: add-on
	// management is off.
	AddOns func(ctx context.Context, in AddOnInputs) error
}

// RegisteredInputs are what the main phase's controllers are built on: the session's hub clients and informers
// (running for the phase, stopped with it) and the hooks that report back to the session.
type RegisteredInputs struct {
	// HubKube and HubCluster have the hub identity of the hub kubeconfig Secret.
	HubKube    kubernetes.Interface
	HubCluster clusterclientset.Interface
	// BootstrapCreate, when not nil, is the bootstrap identity's client the creating controller creates an absent
	// ManagedCluster with (OCM's hub never lets the agent identity create one).
	BootstrapCreate clusterv1client.ManagedClustersGetter
	// ManagedClusters watches the cluster's ManagedCluster on the hub.
	ManagedClusters clusterv1informer.ManagedClusterInformer
	// Nodes and Claims watch the managed cluster's Nodes and ClusterClaims.
	Nodes  corev1informers.NodeInformer
	Claims clusterv1alpha1informer.ClusterClaimInformer
	// Conflicts is the session's identity-conflict verdict (FC-06): the status controller sets it, the lease
	// controller stops renewing while it is set.
	Conflicts *managedcluster.ConflictTracker
	// Epoch is the session epoch the creating controller records on the ManagedCluster; EpochRecorded hears
	// the one it recorded or adopted (managedcluster.DecideEpoch).
	Epoch         failoverv1alpha1.AgentEpoch
	EpochRecorded func(failoverv1alpha1.AgentEpoch)
	// LeaseRenewed is called with the renew time (agent clock) after every renewal of the cluster lease.
	LeaseRenewed func(time.Time)
}

// AddOnInputs are what the add-on controllers of a main phase are built on.
type AddOnInputs struct {
	// Hub is the session's hub (its name, and its server, proxy-url and CA for add-on kubeconfigs).
	Hub Hub
	// HubConfig and HubKube have the hub identity of the hub kubeconfig Secret.
	HubConfig *rest.Config
	HubKube   kubernetes.Interface
	// CSRs is the phase's running informer of the hub's CSRs labelled open-cluster-management.io/cluster-name
	// (add-on CSRs carry that label too).
	CSRs certificatesv1informers.CertificateSigningRequestInformer
	// OnStatus receives the add-on registration states whenever they change (Observer.AddOnsChanged).
	OnStatus func([]failoverv1alpha1.AddOnRegistrationStatus)
}
