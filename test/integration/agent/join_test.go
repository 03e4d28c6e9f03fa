package agent_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"

	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	chainCluster = "cluster-a"
	chainAgent   = "agenta"
	// customClaims is the number of custom ClusterClaims of FC-14, maxClaims the limit.
	customClaims = 25
	maxClaims    = 20
)

// reservedClaims are OCM's reserved ClusterClaim names (clusterv1alpha1.ReservedClusterClaimNames).
var reservedClaims = []string{"id.k8s.io", "kubeversion.open-cluster-management.io", "platform.open-cluster-management.io", "product.open-cluster-management.io"}

// testJoinChain runs, on spoke A and the OCM hub, one cluster through its life: scenario 1 (first join with
// status, lease, Secret, mirror, CSR and FC-14 claims), scenario 2 (restart with a valid Secret), the
// ManagedCluster deleted on the hub and re-created, and scenario 3 / FC-09 case 1 (expired bootstrap, valid
// hub kubeconfig).
func testJoinChain(t *testing.T, s *suite) {
	hub, spoke := s.hub, s.spokeA
	ctx := context.Background()
	createNodes(t, spoke)
	kubeSystemUID := createClaims(t, spoke)
	externalURL := "https://spoke-a.example.com:6443"

	// Scenario 1: bootstrap valid, no hub kubeconfig.
	a1 := startAgent(t, spoke, agentSpec{cluster: chainCluster, agent: chainAgent, bootstrap: hub.BootstrapKubeconfig(),
		urls: []string{externalURL}, maxClaims: maxClaims})
	mc := waitAvailable(t, hub, chainCluster, joinTimeout)
	t.Logf("join latency (agent start → ManagedCluster Joined and Available on the real OCM hub): %s",
		time.Since(a1.Started).Round(10*time.Millisecond))
	s.firstJoinDone()
	if !meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) || !mc.Spec.HubAcceptsClient {
		t.Errorf("ManagedCluster %s: not accepted by the hub controller (hubAcceptsClient %t)", chainCluster, mc.Spec.HubAcceptsClient)
	}
	wantConfigs := []clusterv1.ClientConfig{{URL: externalURL, CABundle: spoke.CAData()}}
	if diff := cmp.Diff(wantConfigs, mc.Spec.ManagedClusterClientConfigs); diff != "" {
		t.Errorf("spec.managedClusterClientConfigs (-want +got):\n%s", diff)
	}

	t.Run("secret, mirror and CSR", func(t *testing.T) {
		secret := waitValidSecret(t, spoke, hub, defaultSecretName, chainCluster, chainAgent, hubTimeout)
		keys := make([]string, 0, len(secret.Data))
		for k := range secret.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if diff := cmp.Diff(secretKeys, keys); diff != "" {
			t.Errorf("secret %s keys (-want +got):\n%s", defaultSecretName, diff)
		}
		checkMirror(t, a1.Dir, secret.Data)

		csrs := csrsOf(t, hub, chainCluster)
		if len(csrs) != 1 {
			t.Fatalf("%d CSRs for %s on the hub, want 1", len(csrs), chainCluster)
		}
		csr := csrs[0]
		checkCSR(t, &csr, chainCluster, chainAgent, hub.BootstrapUser())
		approved := false
		for _, c := range csr.Status.Conditions {
			approved = approved || c.Type == certificatesv1.CertificateApproved
		}
		if !approved || string(csr.Status.Certificate) != string(secret.Data[secretKeyTLSCert]) {
			t.Errorf("CSR %s: approved %t, certificate equal to the Secret's tls.crt %t; want both", csr.Name, approved,
				string(csr.Status.Certificate) == string(secret.Data[secretKeyTLSCert]))
		}
		leaf := parseLeaf(t, secret.Data[secretKeyTLSCert])
		if err := leaf.CheckSignatureFrom(parseLeaf(t, hub.ClientCAData())); err != nil {
			t.Errorf("tls.crt is not signed by the hub's client CA: %v", err)
		}
	})

	t.Run("events of the join", func(t *testing.T) {
		for _, ev := range []struct{ reason, substr string }{
			{"CSRCreated", subjectPrefix + chainCluster + ":" + chainAgent},
			{"ClientCertificateIssued", subjectPrefix + chainCluster + ":" + chainAgent},
			{"HubKubeconfigSecretCreated", defaultSecretName},
			{"ManagedClusterCreated", chainCluster},
			{"ManagedClusterJoined", chainCluster},
			{"ManagedClusterAvailable", chainCluster},
			{"LeaseUpdateStarted", chainCluster},
			{eventHubControllers, chainCluster},
		} {
			waitEvent(t, spoke, ev.reason, ev.substr)
		}
	})

	t.Run("lease renewed by the agent", func(t *testing.T) {
		setLeaseDuration(t, hub, chainCluster, leaseSeconds)
		waitLeaseRenewals(t, hub, chainCluster, 2, 4*leaseSeconds*time.Second+hubTimeout)
	})

	t.Run("status", func(t *testing.T) {
		version, err := spoke.Kube.Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		wantCapacity := clusterv1.ResourceList{"cpu": resource.MustParse("6"), "memory": resource.MustParse("24Gi"), "pods": resource.MustParse("220")}
		wantAllocatable := clusterv1.ResourceList{"cpu": resource.MustParse("5500m"), "memory": resource.MustParse("22Gi"), "pods": resource.MustParse("210")}
		framework.Eventually(t, hubTimeout, pollInterval, func() (bool, error) {
			mc := getMC(t, hub, chainCluster)
			if mc.Status.Version.Kubernetes != version.GitVersion {
				return false, fmt.Errorf("version.kubernetes %q, want %q", mc.Status.Version.Kubernetes, version.GitVersion)
			}
			if err := sameResources("capacity", wantCapacity, mc.Status.Capacity); err != nil {
				return false, err
			}
			return true, sameResources("allocatable", wantAllocatable, mc.Status.Allocatable)
		}, "status version, capacity and allocatable of %s", chainCluster)
	})

	t.Run("FC-14 claims", func(t *testing.T) {
		custom := make([]string, 0, customClaims)
		for i := range customClaims {
			custom = append(custom, customClaimName(i))
		}
		waitClaims(t, hub, kubeSystemUID, custom[:maxClaims])
		waitEvent(t, spoke, "ClusterClaimsTruncated", fmt.Sprintf("%d custom ClusterClaims found, %d allowed", customClaims, maxClaims),
			fmt.Sprintf("%d dropped", customClaims-maxClaims), chainCluster)

		deleted := customClaimName(3)
		if err := spoke.Cluster.ClusterV1alpha1().ClusterClaims().Delete(ctx, deleted, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		remaining := slices.DeleteFunc(slices.Clone(custom), func(n string) bool { return n == deleted })
		waitClaims(t, hub, kubeSystemUID, remaining[:maxClaims])
		waitEvent(t, spoke, "ClusterClaimsTruncated", fmt.Sprintf("%d custom ClusterClaims found, %d allowed", customClaims-1, maxClaims),
			fmt.Sprintf("%d dropped", customClaims-1-maxClaims))
	})
	if t.Failed() {
		return
	}

	// Scenario 2: restart with a valid Secret; names resolved from the Secret.
	t.Run("scenario 2 restart with valid secret", func(t *testing.T) {
		csrsBefore := len(csrsOf(t, hub, chainCluster))
		started := eventCount(t, spoke, eventHubControllers, chainCluster)
		// The lease duration is set here, not left to the "lease renewed by the agent" step (which -run may skip),
		// and the renewal baseline is read before the restart: the new agent renews at once, and that renewal
		// must count.
		setLeaseDuration(t, hub, chainCluster, leaseSeconds)
		a1.Stop()
		renewBaseline := agentRenewTime(t, hub, chainCluster)
		a2 := startAgent(t, spoke, agentSpec{bootstrap: hub.BootstrapKubeconfig(), urls: []string{externalURL}, maxClaims: maxClaims})
		framework.Eventually(t, eventTimeout, pollInterval, func() (bool, error) {
			return eventCount(t, spoke, eventHubControllers, chainCluster) > started, nil
		}, "main controllers restarted for %s", chainCluster)
		waitLeaseRenewalsSince(t, hub, chainCluster, renewBaseline, 1, 2*leaseSeconds*time.Second+hubTimeout)
		rec := recordMC(t, hub, chainCluster)
		quietFrom := time.Now()
		framework.Consistently(t, quietWindow, pollInterval, func() (bool, error) {
			if n := len(csrsOf(t, hub, chainCluster)); n != csrsBefore {
				return false, fmt.Errorf("%d CSRs, want %d (no new CSR)", n, csrsBefore)
			}
			if mc := getMC(t, hub, chainCluster); !joinedAndAvailable(mc) {
				return false, fmt.Errorf("not Joined and Available")
			}
			return true, nil
		}, "no new CSR and Available after the restart")
		// Nothing changed on the spoke: a health-check period passed without a status write (FC-14, FC-16).
		if writes := rec.writesBetween(quietFrom, time.Now()); len(writes) > 0 {
			t.Errorf("%d status writes although nothing changed (%s)", len(writes), describeWrites(writes, quietFrom))
		}
		requireRunning(t, a2)

		// The ManagedCluster deleted on the hub is re-created by the running agent.
		old := getMC(t, hub, chainCluster)
		deletedAt := time.Now()
		if err := hub.Cluster.ClusterV1().ManagedClusters().Delete(ctx, chainCluster, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, 2*hubTimeout, pollInterval, func() (bool, error) {
			mc := getMC(t, hub, chainCluster)
			return mc != nil && mc.UID != old.UID && joinedAndAvailable(mc), nil
		}, "ManagedCluster %s re-created, Joined and Available", chainCluster)
		t.Logf("ManagedCluster re-created and Available %s after its deletion", time.Since(deletedAt).Round(10*time.Millisecond))
		if diff := cmp.Diff(wantConfigs, getMC(t, hub, chainCluster).Spec.ManagedClusterClientConfigs); diff != "" {
			t.Errorf("re-created spec.managedClusterClientConfigs (-want +got):\n%s", diff)
		}
		waitEvent(t, spoke, "ManagedClusterCreated", chainCluster, "re-created")
		setLeaseDuration(t, hub, chainCluster, leaseSeconds)
		waitLeaseRenewals(t, hub, chainCluster, 1, 2*leaseSeconds*time.Second+hubTimeout)
		waitValidSecret(t, spoke, hub, defaultSecretName, chainCluster, chainAgent, hubTimeout)
		requireRunning(t, a2)
		a2.Stop()

		// Deleted on the hub while the agent is down: the hub removes what it granted the agent identity, so the
		// restarted agent (valid Secret, main controllers) must create the ManagedCluster with the bootstrap
		// identity before its hub informers can sync.
		old = getMC(t, hub, chainCluster)
		if err := hub.Cluster.ClusterV1().ManagedClusters().Delete(ctx, chainCluster, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, hubTimeout, pollInterval, func() (bool, error) {
			return getMC(t, hub, chainCluster) == nil, nil
		}, "ManagedCluster %s gone from the hub (finalizers done)", chainCluster)
		restarted := time.Now()
		a2b := startAgent(t, spoke, agentSpec{bootstrap: hub.BootstrapKubeconfig(), urls: []string{externalURL}, maxClaims: maxClaims})
		framework.Eventually(t, 2*hubTimeout, pollInterval, func() (bool, error) {
			mc := getMC(t, hub, chainCluster)
			return mc != nil && mc.UID != old.UID && joinedAndAvailable(mc), nil
		}, "ManagedCluster %s created again by the restarted agent, Joined and Available", chainCluster)
		t.Logf("ManagedCluster deleted while the agent was down: created again and Available %s after the restart",
			time.Since(restarted).Round(10*time.Millisecond))
		waitEvent(t, spoke, "ManagedClusterCreated", chainCluster, "before the main controllers start")
		// The re-created ManagedCluster has the default lease duration (60 s): the next steps wait for renewals.
		setLeaseDuration(t, hub, chainCluster, leaseSeconds)
		requireRunning(t, a2b)
		a2b.Stop()
	})
	if t.Failed() {
		return
	}

	// Scenario 3 / FC-09 case 1: the bootstrap certificate expired an hour ago, the hub kubeconfig is valid.
	t.Run("scenario 3 expired bootstrap valid secret", func(t *testing.T) {
		csrsBefore := len(csrsOf(t, hub, chainCluster))
		started := eventCount(t, spoke, eventHubControllers, chainCluster)
		// The lease duration and the renewal baseline are fixed before the agent starts: its first renewal
		// comes at once and must count, whatever the steps before left behind.
		setLeaseDuration(t, hub, chainCluster, leaseSeconds)
		renewBaseline := agentRenewTime(t, hub, chainCluster)
		a3 := startAgent(t, spoke, agentSpec{bootstrap: util.ExpiredBootstrapKubeconfig(t, hub, s.ca), urls: []string{externalURL}, maxClaims: maxClaims})
		framework.Eventually(t, eventTimeout, pollInterval, func() (bool, error) {
			return eventCount(t, spoke, eventHubControllers, chainCluster) > started, nil
		}, "main controllers started with the hub kubeconfig for %s", chainCluster)
		waitEvent(t, spoke, "BootstrapKubeconfigUnusable", a3.BootstrapFile, "expired")
		waitLeaseRenewalsSince(t, hub, chainCluster, renewBaseline, 1, 2*leaseSeconds*time.Second+hubTimeout)
		framework.Consistently(t, quietWindow, pollInterval, func() (bool, error) {
			if n := len(csrsOf(t, hub, chainCluster)); n != csrsBefore {
				return false, fmt.Errorf("%d CSRs, want %d (the expired bootstrap must not be used)", n, csrsBefore)
			}
			if mc := getMC(t, hub, chainCluster); !joinedAndAvailable(mc) {
				return false, fmt.Errorf("not Joined and Available")
			}
			return true, nil
		}, "main controllers on the hub identity, no CSR")
		requireRunning(t, a3)
	})
}

// createNodes creates two Nodes with capacity and allocatable on spoke (sums: cpu 6 / 5500m, memory 24Gi / 22Gi,
// pods 220 / 210).
func createNodes(t *testing.T, spoke *framework.Spoke) {
	t.Helper()
	nodes := []struct {
		name               string
		capacity, allocate corev1.ResourceList
	}{
		{"node-1", resources("4", "16Gi", "110"), resources("3500m", "15Gi", "110")},
		{"node-2", resources("2", "8Gi", "110"), resources("2", "7Gi", "100")},
	}
	for _, n := range nodes {
		createNode(t, spoke, n.name, n.capacity, n.allocate)
	}
}

func createNode(t *testing.T, spoke *framework.Spoke, name string, capacity, allocatable corev1.ResourceList) *corev1.Node {
	t.Helper()
	ctx := context.Background()
	node, err := spoke.Kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("spoke: create node %s: %v", name, err)
	}
	node.Status.Capacity, node.Status.Allocatable = capacity, allocatable
	node, err = spoke.Kube.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("spoke: set status of node %s: %v", name, err)
	}
	return node
}

func resources(cpu, memory, pods string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		corev1.ResourcePods: resource.MustParse(pods)}
}

// sameResources compares two resource lists by quantity.
func sameResources(field string, want, got clusterv1.ResourceList) error {
	if len(want) != len(got) {
		return fmt.Errorf("%s %v, want %v", field, got, want)
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || g.Cmp(w) != 0 {
			return fmt.Errorf("%s %v, want %v", field, got, want)
		}
	}
	return nil
}

// createClaims creates FC-14's ClusterClaims: every reserved claim (id.k8s.io is the kube-system UID, as a real
// cluster's is), customClaims custom ones and one spoke-only claim that would sort first. It returns the UID.
func createClaims(t *testing.T, spoke *framework.Spoke) string {
	t.Helper()
	ctx := context.Background()
	ns, err := spoke.Kube.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	create := func(name, value string, labels map[string]string) {
		claim := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: clusterv1alpha1.ClusterClaimSpec{Value: value}}
		if _, err := spoke.Cluster.ClusterV1alpha1().ClusterClaims().Create(ctx, claim, metav1.CreateOptions{}); err != nil {
			t.Fatalf("spoke: create ClusterClaim %s: %v", name, err)
		}
	}
	for _, name := range reservedClaims {
		value := "value-of-" + name
		if name == "id.k8s.io" {
			value = string(ns.UID)
		}
		create(name, value, nil)
	}
	for i := range customClaims {
		create(customClaimName(i), fmt.Sprintf("v%d", i), nil)
	}
	create("aaa-spoke-only", "secret", map[string]string{"open-cluster-management.io/spoke-only": ""})
	return string(ns.UID)
}

func customClaimName(i int) string { return fmt.Sprintf("custom-%02d", i) }

// waitClaims waits until status.clusterClaims is exactly the reserved claims then custom, in that order.
func waitClaims(t *testing.T, hub *framework.Hub, kubeSystemUID string, custom []string) {
	t.Helper()
	want := make([]clusterv1.ManagedClusterClaim, 0, len(reservedClaims)+len(custom))
	for _, name := range reservedClaims {
		value := "value-of-" + name
		if name == "id.k8s.io" {
			value = kubeSystemUID
		}
		want = append(want, clusterv1.ManagedClusterClaim{Name: name, Value: value})
	}
	for _, name := range custom {
		var i int
		fmt.Sscanf(name, "custom-%d", &i)
		want = append(want, clusterv1.ManagedClusterClaim{Name: name, Value: fmt.Sprintf("v%d", i)})
	}
	framework.Eventually(t, hubTimeout, pollInterval, func() (bool, error) {
		got := getMC(t, hub, chainCluster).Status.ClusterClaims
		if diff := cmp.Diff(want, got); diff != "" {
			return false, fmt.Errorf("status.clusterClaims (-want +got):\n%s", diff)
		}
		return true, nil
	}, "status.clusterClaims of %s", chainCluster)
}

func parseLeaf(t *testing.T, pemData []byte) *x509.Certificate {
	t.Helper()
	certs, err := certutil.ParseCertsPEM(pemData)
	if err != nil {
		t.Fatalf("parse certificate: %v", err)
	}
	return certs[0]
}
