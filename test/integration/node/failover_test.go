package node_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/clock"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/secretvolume"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	// connectionTimeout is the FailoverConfig's hubConnectionTimeout; it wins over the operator's 180 s minimum.
	connectionTimeout = 20 * time.Second
	// evictionGracePeriod is the work agent's appliedManifestWorkEvictionGracePeriod (Klusterlet
	// spec.workConfiguration): after it, a work agent that sees no ManifestWork for what it applied deletes it.
	evictionGracePeriod = 30 * time.Second
	failoverSlack       = 90 * time.Second
)

// TestMultipleHubsFailoverAsPods: a MultipleHubs Klusterlet (hub A, then hub B) installed by the operator pod, the
// FailoverConfig, the one extra RBAC manifest and the pod annotation policy applied, the replicator (a process) mirroring hub A to hub B.
// Hub A's apiserver stops: our registration pod moves the cluster to hub B with hub B's hot standby credentials
// and without a restart of its container; it annotates the pods that mount hub-kubeconfig-secret, so the kubelet
// remounts the Secret in OCM's work agent pod at once; the work agent serves hub B's ManifestWorks, and after
// the eviction grace period the ConfigMap it applied from hub A's ManifestWork has the same UID. Our container,
// killed afterwards, is restarted by the kubelet and comes back on hub B with the same identity and no CSR. Then
// hub A returns and hub B is lost while our container is killed (failBackWhileKilled).
func TestMultipleHubsFailoverAsPods(t *testing.T) {
	const cluster = "cluster-pods"
	network := framework.StartPodNetwork(t)
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", HubController: true, Signer: framework.SignerInProcess, Network: network})
	hubB := framework.StartHub(t, framework.HubOptions{Name: "hub-b", HubController: true, Signer: framework.SignerInProcess, Network: network})
	spoke := framework.StartSpoke(t, framework.SpokeOptions{Network: network})
	node := framework.StartNode(t, spoke, framework.NodeImages(t).All()...)
	operator := framework.DeployKlusterletOperator(t, spoke, node, framework.KlusterletOperatorPodOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	// The FailoverConfig and its RBAC before the agent starts (it reads the API once at start).
	util.EnsureAgentNamespace(t, spoke)
	util.InstallFailoverConfigCRD(t, spoke)
	util.ApplyOperatorFailoverRBAC(t, ctx, spoke, framework.DefaultAgentNamespace, "klusterlet-registration-sa")
	util.ApplyPodAnnotationPolicy(t, ctx, spoke)
	util.ApplyFailoverConfig(t, spoke, failoverv1alpha1.FailoverConfigSpec{
		HubConnectionTimeout: &metav1.Duration{Duration: connectionTimeout},
		ProbeInterval:        &metav1.Duration{Duration: 5 * time.Second},
		// Hub A may be switched back to soon after it returns.
		FailedHubSkipPeriod: &metav1.Duration{Duration: 10 * time.Second},
	})
	k, err := operator.ApplyKlusterlet(ctx, framework.KlusterletOptions{
		ClusterName: cluster, RegistrationImage: framework.AgentImageRef, WorkImage: framework.OCMWorkImageRef,
		BootstrapKubeconfigs: []framework.NamedKubeconfig{
			{Name: "bootstrap-hub-a", Kubeconfig: hubA.BootstrapKubeconfig()},
			{Name: "bootstrap-hub-b", Kubeconfig: hubB.BootstrapKubeconfig()},
		},
		HubConnectionTimeoutSeconds: 180,
		Customize: func(k *operatorv1.Klusterlet) {
			k.Spec.WorkConfiguration = &operatorv1.WorkAgentConfiguration{
				AppliedManifestWorkEvictionGracePeriod: &metav1.Duration{Duration: evictionGracePeriod},
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	util.WaitForClusterAvailable(t, hubA, cluster, joinTimeout)
	deps, err := operator.WaitForAgentPods(ctx, k.Name, k.Spec.Namespace)
	if err != nil {
		t.Fatal(err)
	}

	// Hub A's ManifestWork, applied by the work agent pod, and the replicator mirroring hub A to hub B.
	util.ApplyConfigMapWork(t, ctx, hubA, cluster, "app")
	uid := waitConfigMapData(t, ctx, spoke, "app", hubA.Name)
	startReplicator(t, hubB, util.NamedHub{Name: "primary", Hub: hubA}, util.NamedHub{Name: "hub-b", Hub: hubB})
	works := dynamic.NewForConfigOrDie(hubB.AdminConfig).Resource(schema.GroupVersionResource{Group: workv1.GroupName, Version: "v1", Resource: "manifestworks"}).Namespace(cluster)
	framework.Eventually(t, failoverSlack, util.PollInterval, func() (bool, error) {
		_, err := works.Get(ctx, "app", metav1.GetOptions{})
		return err == nil, err
	}, "ManifestWork %s/app mirrored to hub B", cluster)
	util.WaitForFailoverConfig(t, spoke, failoverSlack, "bootstrap-hub-b standby credentials Ready",
		func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
			h := util.HubProbe(fc, "bootstrap-hub-b")
			return h != nil && h.StandbyCredentials != nil && h.StandbyCredentials.State == failoverv1alpha1.StandbyCredentialsReady,
				util.DescribeFailoverStatus(fc)
		})
	appliedBefore := appliedWorkNames(t, ctx, spoke)
	if len(appliedBefore) != 1 {
		t.Fatalf("AppliedManifestWorks %v before the switch, want the one of hub A's ManifestWork", appliedBefore)
	}
	regBefore := onlyPod(t, ctx, spoke, deps.Registration)
	workBefore := onlyPod(t, ctx, spoke, deps.Work)

	// Hub A is lost.
	stopped := time.Now()
	hubA.StopAPIServer()
	util.WaitForFailoverConfig(t, spoke, connectionTimeout+failoverSlack, "active hub bootstrap-hub-b and Available",
		func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
			return fc.Status.ActiveHub == "bootstrap-hub-b" && util.ConditionIs(fc, "Available", metav1.ConditionTrue), util.DescribeFailoverStatus(fc)
		})
	util.WaitForClusterAvailableSince(t, hubB, cluster, stopped, failoverSlack)
	available := time.Since(stopped)
	t.Logf("measured: hub A stopped -> Available on hub B in %.1f s (hubConnectionTimeout %s)", available.Seconds(), connectionTimeout)

	// An edit on hub B reaches the spoke through the work agent pod, which follows the Secret volume.
	updateConfigMapWork(t, ctx, hubB, cluster, "app", "edited-on-"+hubB.Name)
	if got := waitConfigMapData(t, ctx, spoke, "app", "edited-on-"+hubB.Name); got != uid {
		t.Errorf("ConfigMap default/app has UID %s after the switch, %s before: it was re-created", got, uid)
	}
	t.Logf("measured: hub A stopped -> the work agent pod applied hub B's edit in %.1f s (%.1f s after Available on hub B)",
		time.Since(stopped).Seconds(), (time.Since(stopped) - available).Seconds())
	util.WaitForEvent(t, spoke, secretvolume.ReasonSecretVolumesRefreshed, workBefore.Name, 30*time.Second)

	regAfter := onlyPod(t, ctx, spoke, deps.Registration)
	if regAfter.UID != regBefore.UID || restarts(regAfter) != restarts(regBefore) {
		t.Errorf("our registration pod %s (restarts %d) became %s (restarts %d): the switch restarted it",
			regBefore.Name, restarts(regBefore), regAfter.Name, restarts(regAfter))
	}
	workAfter := onlyPod(t, ctx, spoke, deps.Work)
	t.Logf("measured: the work agent pod's container restarts: %d before the switch, %d after", restarts(workBefore), restarts(workAfter))

	// The eviction grace period passes: the work agent evicts the AppliedManifestWork of hub A's ManifestWork
	// and keeps what hub B's copy also applies.
	waitAppliedWorkEvicted(t, ctx, spoke, appliedBefore)
	cm, err := spoke.Kube.CoreV1().ConfigMaps("default").Get(ctx, "app", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ConfigMap default/app after the eviction grace period: %v", err)
	}
	if string(cm.UID) != uid {
		t.Errorf("ConfigMap default/app UID %s after the eviction grace period, %s before the switch", cm.UID, uid)
	}

	// Our container is killed (a crash, an OOM kill) after the switch: the kubelet restarts it, and it comes
	// back on hub B with the same identity, from the hub kubeconfig Secret, without a CSR.
	identity := util.HubKubeconfigSecret(t, spoke)
	csrs := csrCount(t, ctx, hubB, cluster)
	holderBefore := leaseHolder(t, ctx, spoke)
	killed := time.Now()
	if _, err := node.KillContainer(ctx, regAfter.Namespace, regAfter.Name, regAfter.Spec.Containers[0].Name); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, failoverSlack, util.PollInterval, func() (bool, error) {
		p := onlyPod(t, ctx, spoke, deps.Registration)
		return restarts(p) == restarts(regAfter)+1 && p.Status.ContainerStatuses[0].Ready, nil
	}, "our registration container restarted by the kubelet and Ready")
	// The restarted container leads at once: it frees the Lease its killed predecessor could not release,
	// instead of waiting out the lease duration (137 s), and renews the cluster's lease on hub B.
	waitLeaseHolderChanged(t, ctx, spoke, regAfter.Name, holderBefore)
	util.WaitForClusterAvailableSince(t, hubB, cluster, killed, failoverSlack)
	t.Logf("measured: our container killed -> restarted, leading again and renewing the cluster's lease on hub B in %.1f s", time.Since(killed).Seconds())
	if n := csrCount(t, ctx, hubB, cluster); n != csrs {
		t.Errorf("%d CSRs for %s on hub B after our container's restart, %d before", n, cluster, csrs)
	}
	after := util.HubKubeconfigSecret(t, spoke)
	if string(after.Data["agent-name"]) != string(identity.Data["agent-name"]) || string(after.Data["tls.crt"]) != string(identity.Data["tls.crt"]) {
		t.Errorf("the restart changed the agent's identity: agent-name %q -> %q, certificate kept %v",
			identity.Data["agent-name"], after.Data["agent-name"], string(after.Data["tls.crt"]) == string(identity.Data["tls.crt"]))
	}

	failBackWhileKilled(t, ctx, spoke, node, hubA, hubB, deps, cluster)
	plannedSwitchBack(t, ctx, spoke, hubA, hubB, deps, cluster)
}

// failBackWhileKilled is the second switch of TestMultipleHubsFailoverAsPods: hub A returns, hub B is lost, and our
// container is killed while the agent is detecting that loss. The restarted container finds hub B unreachable,
// switches to hub A with the credentials it kept for it, sends hub A no CSR and keeps its identity.
func failBackWhileKilled(t *testing.T, ctx context.Context, spoke *framework.Spoke, node *framework.Node, hubA, hubB *framework.Hub,
	deps *framework.AgentDeployments, cluster string) {
	t.Helper()
	hubA.StartAPIServer()
	util.WaitForFailoverConfig(t, spoke, failoverSlack, "bootstrap-hub-a (primary) standby credentials Ready",
		func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
			h := util.HubProbe(fc, "primary")
			return h != nil && h.StandbyCredentials != nil && h.StandbyCredentials.State == failoverv1alpha1.StandbyCredentialsReady,
				util.DescribeFailoverStatus(fc)
		})
	identity := util.HubKubeconfigSecret(t, spoke)
	csrs := csrCount(t, ctx, hubA, cluster)
	before := onlyPod(t, ctx, spoke, deps.Registration)
	work := onlyPod(t, ctx, spoke, deps.Work)
	stopped := time.Now()
	hubB.StopAPIServer()
	util.WaitForFailoverConfig(t, spoke, connectionTimeout, "hub B seen Unreachable (the timeout runs)",
		func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
			h := util.HubProbe(fc, "bootstrap-hub-b")
			return fc.Status.ActiveHub == "bootstrap-hub-b" && h != nil && h.ProbeResult == failoverv1alpha1.HubProbeUnreachable,
				util.DescribeFailoverStatus(fc)
		})
	if _, err := node.KillContainer(ctx, before.Namespace, before.Name, before.Spec.Containers[0].Name); err != nil {
		t.Fatal(err)
	}
	util.WaitForFailoverConfig(t, spoke, connectionTimeout+failoverSlack, "active hub primary and Available",
		func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
			return fc.Status.ActiveHub == "primary" && util.ConditionIs(fc, "Available", metav1.ConditionTrue), util.DescribeFailoverStatus(fc)
		})
	util.WaitForClusterAvailableSince(t, hubA, cluster, stopped, failoverSlack)
	available := time.Now()
	after := onlyPod(t, ctx, spoke, deps.Registration)
	t.Logf("measured: hub B stopped, our container killed once the agent saw hub B unreachable -> Available on hub A in %.1f s; restarts %d -> %d",
		time.Since(stopped).Seconds(), restarts(before), restarts(after))
	workFollows(t, ctx, spoke, hubA, deps, cluster, work, available, "switch 2 (hub B lost)")
	if restarts(after) != restarts(before)+1 || after.UID != before.UID {
		t.Errorf("our pod %s restarts %d -> pod %s restarts %d: want the same pod, restarted once", before.Name, restarts(before), after.Name, restarts(after))
	}
	if n := csrCount(t, ctx, hubA, cluster); n != csrs {
		t.Errorf("%d CSRs for %s on hub A after the switch back, %d before: the kept credentials were not used", n, cluster, csrs)
	}
	if got := util.HubKubeconfigSecret(t, spoke); string(got.Data["agent-name"]) != string(identity.Data["agent-name"]) {
		t.Errorf("agent-name %q after the switch back, %q before", got.Data["agent-name"], identity.Data["agent-name"])
	}
}

// plannedSwitchBack is the third switch of TestMultipleHubsFailoverAsPods, minutes after the first two: hub B
// returns and spec.switchTo moves the cluster to it. Our agent uses the credentials it kept for hub B (no CSR), and
// OCM's work agent pod, restarted by the kubelet for the third time in a few minutes, follows after a longer
// restart back-off, which the agent reports.
func plannedSwitchBack(t *testing.T, ctx context.Context, spoke *framework.Spoke, hubA, hubB *framework.Hub, deps *framework.AgentDeployments, cluster string) {
	t.Helper()
	hubB.StartAPIServer()
	util.WaitForFailoverConfig(t, spoke, failoverSlack, "bootstrap-hub-b standby credentials Ready again",
		func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
			h := util.HubProbe(fc, "bootstrap-hub-b")
			return h != nil && h.ProbeResult == failoverv1alpha1.HubProbeReady && h.StandbyCredentials != nil &&
				h.StandbyCredentials.State == failoverv1alpha1.StandbyCredentialsReady, util.DescribeFailoverStatus(fc)
		})
	csrs := csrCount(t, ctx, hubB, cluster)
	work := onlyPod(t, ctx, spoke, deps.Work)
	requested := time.Now()
	util.UpdateFailoverConfigSpec(t, spoke, func(s *failoverv1alpha1.FailoverConfigSpec) { s.SwitchTo = "bootstrap-hub-b" })
	util.WaitForFailoverConfig(t, spoke, failoverSlack, "active hub bootstrap-hub-b and Available",
		func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
			return fc.Status.ActiveHub == "bootstrap-hub-b" && util.ConditionIs(fc, "Available", metav1.ConditionTrue), util.DescribeFailoverStatus(fc)
		})
	util.WaitForClusterAvailableSince(t, hubB, cluster, requested, failoverSlack)
	available := time.Now()
	t.Logf("measured: switch 3 (planned, spec.switchTo) -> Available on hub B in %.1f s", available.Sub(requested).Seconds())
	// Hub A is reachable this time: until the replicator sees the lease renewed on hub B (and hub B caught up
	// after its restart), hub A is the cluster's source and an edit of hub B's copy would be overwritten from it.
	waitClusterHub(t, ctx, hubA, cluster, "hub-b")
	if n := csrCount(t, ctx, hubB, cluster); n != csrs {
		t.Errorf("%d CSRs for %s on hub B after the planned switch, %d before: the kept credentials were not used", n, cluster, csrs)
	}
	workFollows(t, ctx, spoke, hubB, deps, cluster, work, available, "switch 3 (planned)")
}

// waitClusterHub waits until hub's ManagedCluster cluster carries mirror.AnnotationClusterHub = source. The
// replicator writes that annotation on a hub's copy only once the cluster's source is source, so an edit made on
// source from then on stays. (The ManifestWorks' LabelReplicatedFrom is no such sign: after the first two
// switches, hub A's ManifestWork is still labelled a copy of hub B's while hub A is the source.)
func waitClusterHub(t *testing.T, ctx context.Context, hub *framework.Hub, cluster, source string) {
	t.Helper()
	c := dynamic.NewForConfigOrDie(hub.AdminConfig).Resource(schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1", Resource: "managedclusters"})
	framework.Eventually(t, failoverSlack, util.PollInterval, func() (bool, error) {
		u, err := c.Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return u.GetAnnotations()[mirror.AnnotationClusterHub] == source, fmt.Errorf("annotations %v", u.GetAnnotations())
	}, "ManagedCluster %s on hub %s annotated as managed from hub %s", cluster, hub.Name, source)
}

// workFollows checks, after a switch to hub that made the cluster Available there at available, that OCM's work
// agent pod serves hub: an edit of the ManifestWork made on hub reaches the ConfigMap. The work agent exits on the
// remounted hub kubeconfig (before or after it applied the edit: it also reloads it), and since the kubelet
// restarted it for an earlier switch less than ten minutes before, it delays the restart (CrashLoopBackOff): the
// agent reports that with a HubKubeconfigConsumerBackOff event naming the pod and the restart count. before is the
// work agent's pod before the switch.
func workFollows(t *testing.T, ctx context.Context, spoke *framework.Spoke, hub *framework.Hub, deps *framework.AgentDeployments,
	cluster string, before corev1.Pod, available time.Time, which string) {
	t.Helper()
	value := fmt.Sprintf("edited-on-%s-%d", hub.Name, available.Unix())
	updateConfigMapWork(t, ctx, hub, cluster, "app", value)
	waitConfigMapData(t, ctx, spoke, "app", value)
	applied := time.Since(available)
	util.WaitForEvent(t, spoke, secretvolume.ReasonHubKubeconfigConsumerBackOff,
		fmt.Sprintf("of pod %s, which reads Secret %s/%s, waits in the kubelet's restart back-off after %d restarts",
			before.Name, framework.DefaultAgentNamespace, "hub-kubeconfig-secret", restarts(before)), time.Minute)
	backOff := time.Since(available)
	after := onlyPod(t, ctx, spoke, deps.Work)
	t.Logf("measured: %s: the work agent pod applied an edit made on hub %s %.1f s after Available there; its restart back-off was reported %.1f s after Available; restarts %d -> %d",
		which, hub.Name, applied.Seconds(), backOff.Seconds(), restarts(before), restarts(after))
	if after.UID != before.UID {
		t.Errorf("%s: work agent pod %s became %s: a switch must not replace the pod", which, before.Name, after.Name)
	}
}

// appliedWorksGVR is OCM's AppliedManifestWork (cluster-scoped, on the spoke; named <hub hash>-<ManifestWork>).
var appliedWorksGVR = schema.GroupVersionResource{Group: workv1.GroupName, Version: "v1", Resource: "appliedmanifestworks"}

// appliedWorkNames returns the names of the spoke's AppliedManifestWorks.
func appliedWorkNames(t *testing.T, ctx context.Context, spoke *framework.Spoke) []string {
	t.Helper()
	list, err := dynamic.NewForConfigOrDie(spoke.AdminConfig).Resource(appliedWorksGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing AppliedManifestWorks: %v", err)
	}
	names := make([]string, 0, len(list.Items))
	for _, u := range list.Items {
		names = append(names, u.GetName())
	}
	return names
}

// waitAppliedWorkEvicted waits (eviction grace period + slack) until none of names is an AppliedManifestWork any
// more: the work agent of the new hub evicted those of the old hub.
func waitAppliedWorkEvicted(t *testing.T, ctx context.Context, spoke *framework.Spoke, names []string) {
	t.Helper()
	framework.Eventually(t, evictionGracePeriod+failoverSlack, util.PollInterval, func() (bool, error) {
		for _, n := range appliedWorkNames(t, ctx, spoke) {
			if slices.Contains(names, n) {
				return false, nil
			}
		}
		return true, nil
	}, "AppliedManifestWorks %v of hub A evicted by the work agent", names)
}

// leaseHolder returns the holder identity of the registration agent's leader election Lease on the spoke.
func leaseHolder(t *testing.T, ctx context.Context, spoke *framework.Spoke) string {
	t.Helper()
	l, err := spoke.Kube.CoordinationV1().Leases(framework.DefaultAgentNamespace).Get(ctx, registrationLock, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Lease %s: %v", registrationLock, err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// waitLeaseHolderChanged waits (well under the 137 s lease duration) until a new container of pod holds the
// registration agent's Lease.
func waitLeaseHolderChanged(t *testing.T, ctx context.Context, spoke *framework.Spoke, pod, before string) {
	t.Helper()
	framework.Eventually(t, 60*time.Second, util.PollInterval, func() (bool, error) {
		h := leaseHolder(t, ctx, spoke)
		return h != before && strings.HasPrefix(h, pod+"_"), nil
	}, "Lease %s held by a new container of pod %s (it was %s)", registrationLock, pod, before)
}

// csrCount returns the number of CSRs on hub labelled for cluster.
func csrCount(t *testing.T, ctx context.Context, hub *framework.Hub, cluster string) int {
	t.Helper()
	list, err := hub.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{
		LabelSelector: "open-cluster-management.io/cluster-name=" + cluster,
	})
	if err != nil {
		t.Fatalf("hub %s: listing CSRs: %v", hub.Name, err)
	}
	return len(list.Items)
}

// replicationNamespace and replicationConfig are where startReplicator installs the ReplicationConfig.
const replicationNamespace, replicationConfig = "open-cluster-management-failover", "replication"

// startReplicator runs the replicator in the test process, configured on host, for hubs, until the test ends.
func startReplicator(t *testing.T, host *framework.Hub, hubs ...util.NamedHub) {
	t.Helper()
	util.InstallReplication(t, host, replicationNamespace, replicationConfig, failoverv1alpha1.ReplicationConfigSpec{}, hubs...)
	o := replicator.NewOptions()
	o.Namespace = replicationNamespace
	o.HubProbeInterval, o.StatusInterval = 2*time.Second, 2*time.Second
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := o.RunWithClients(ctx, host.Kube, versioned.NewForConfigOrDie(host.AdminConfig),
			events.NewInMemoryRecorder("replicator", clock.RealClock{}), clock.RealClock{}); err != nil {
			t.Errorf("replicator returned: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// updateConfigMapWork sets the "from" value of the ConfigMap in hub's ManifestWork cluster/name.
func updateConfigMapWork(t *testing.T, ctx context.Context, hub *framework.Hub, cluster, name, value string) {
	t.Helper()
	c := dynamic.NewForConfigOrDie(hub.AdminConfig).Resource(schema.GroupVersionResource{Group: workv1.GroupName, Version: "v1", Resource: "manifestworks"}).Namespace(cluster)
	framework.Eventually(t, workTimeout, util.PollInterval, func() (bool, error) {
		u, err := c.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		manifests, _, _ := unstructured.NestedSlice(u.Object, "spec", "workload", "manifests")
		if len(manifests) != 1 {
			return false, nil
		}
		cm := manifests[0].(map[string]any)
		if err := unstructured.SetNestedField(cm, value, "data", "from"); err != nil {
			return false, err
		}
		if err := unstructured.SetNestedSlice(u.Object, manifests, "spec", "workload", "manifests"); err != nil {
			return false, err
		}
		_, err = c.Update(ctx, u, metav1.UpdateOptions{})
		return err == nil, err
	}, "ManifestWork %s/%s updated on hub %s", cluster, name, hub.Name)
}

// waitConfigMapData waits until ConfigMap default/name on the spoke has data.from == value and returns its UID.
func waitConfigMapData(t *testing.T, ctx context.Context, spoke *framework.Spoke, name, value string) string {
	t.Helper()
	var uid string
	framework.Eventually(t, workTimeout, util.PollInterval, func() (bool, error) {
		cm, err := spoke.Kube.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		uid = string(cm.UID)
		return cm.Data["from"] == value, nil
	}, "ConfigMap default/%s with from=%s on the spoke", name, value)
	return uid
}

// onlyPod returns the one running pod of Deployment d.
func onlyPod(t *testing.T, ctx context.Context, spoke *framework.Spoke, d *appsv1.Deployment) corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	framework.Eventually(t, workTimeout, util.PollInterval, func() (bool, error) {
		var err error
		pods, err = spoke.Pods(ctx, d)
		return err == nil && len(pods) == 1, err
	}, "exactly one pod of Deployment %s/%s", d.Namespace, d.Name)
	return pods[0]
}

// restarts returns the sum of the pod's container restart counts.
func restarts(p corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}
