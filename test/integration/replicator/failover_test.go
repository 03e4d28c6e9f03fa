package replicator_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	cluster = "cluster1"
	// hubB is hub B's name in the agent's FailoverConfig and in the ReplicationConfig.
	hubB    = "hub-b"
	primary = failoverv1alpha1.HubNamePrimary
	// connectionTimeout is the agent's spec.hubConnectionTimeout.
	connectionTimeout = 30 * time.Second
	// evictionGracePeriod is the work agent's --appliedmanifestwork-eviction-grace-period: once it has passed
	// after a switch, every AppliedManifestWork the new hub has no ManifestWork for is evicted.
	evictionGracePeriod = 20 * time.Second
	// agentAnnotation is an annotation the agent sets on the ManagedCluster it creates (reserved prefix
	// agent.open-cluster-management.io/, never mirrored).
	agentAnnotation = "agent.open-cluster-management.io/region"
	// failoverSlack is what a failover may take beyond the connection timeout on a loaded machine.
	failoverSlack = 90 * time.Second
	// executorServiceAccount is the spoke ServiceAccount (namespace default) that ManifestWork work-exec's
	// spec.executor names.
	executorServiceAccount = "deployer"
	// defaultQuietWindow is how long the test watches the replicator write nothing once the hubs are in step,
	// unless QUIET_WINDOW (a Go duration) says otherwise: a loop paced by something slower than a minute (the
	// replicator's 5 min direction recheck, an OCM controller's resync) shows only in a longer window.
	defaultQuietWindow = time.Minute
	// replicatorWritesAuditPolicy logs the metadata and request body of every write of the replicator's
	// ServiceAccount on a hub (util.ReplicatorKubeconfig's identity), nothing else.
	replicatorWritesAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  users: ["system:serviceaccount:open-cluster-management-replicator:klusterlet-failover-replicator"]
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`
)

// TestReplicatedClusterSurvivesFailover: hub A (primary) manages cluster1 through the failover agent and OCM's
// work agent; the replicator keeps hub B in step. After hub A is lost the agent moves to B, which already has
// the cluster accepted, its labels, sets, Placement, backup-labelled ConfigMap and ManifestWorks: once the work
// agent's eviction grace period has passed, every resource the works applied on the spoke still has its UID.
// An edit on B reaches the spoke; when A comes back it receives B's state and says where the cluster is; a
// planned switch back to A disturbs no workload either.
func TestReplicatedClusterSurvivesFailover(t *testing.T) {
	// Complete hubs: OCM's webhooks judge every copy, and the replicator writes under its own ClusterRole.
	// Their audit logs hold the replicator's writes.
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", ClusterManager: true, Signer: framework.SignerInProcess,
		AuditPolicy: []byte(replicatorWritesAuditPolicy)})
	hubBHub := framework.StartHub(t, framework.HubOptions{Name: hubB, ClusterManager: true, Signer: framework.SignerInProcess,
		AuditPolicy: []byte(replicatorWritesAuditPolicy)})
	spoke := framework.StartSpoke(t, framework.SpokeOptions{WorkCRD: true})
	ctx := context.Background()
	// The ServiceAccount a ManifestWork's executor names, allowed on the spoke what OCM's work agent checks
	// before it applies a ConfigMap as it (pkg/work/spoke/auth/basic).
	allowExecutor(t, spoke, "default", executorServiceAccount)

	// The agent: hub A primary, hub B alternate.
	util.EnsureAgentNamespace(t, spoke)
	util.ApplyBootstrapSecret(t, spoke, "hub-b-bootstrap", hubBHub.BootstrapKubeconfig())
	util.ApplyFailoverConfig(t, spoke, failoverv1alpha1.FailoverConfigSpec{
		AlternateHubs:        []failoverv1alpha1.AlternateHub{{Name: hubB, BootstrapKubeconfigSecretRef: "hub-b-bootstrap"}},
		HubConnectionTimeout: &metav1.Duration{Duration: connectionTimeout},
		ProbeInterval:        &metav1.Duration{Duration: 5 * time.Second},
		// Hub A may be switched back to soon after it returns.
		FailedHubSkipPeriod: &metav1.Duration{Duration: 10 * time.Second},
	})
	agent := util.StartAgent(t, spoke, util.AgentConfig{
		Bootstrap: hubA.BootstrapKubeconfig(),
		Mutate: func(o *klusterlet.FailoverAgentOptions) {
			o.ClusterName, o.AgentName = cluster, "agent1"
			// The agent's own annotation on the ManagedCluster it creates: hub A's copy has it, hub B's must not.
			o.ClusterAnnotations = map[string]string{agentAnnotation: "eu-1"}
		},
	})
	util.WaitForClusterAvailable(t, hubA, cluster, 90*time.Second)
	// The agent's first session: epoch 1, from no hub, on hub A's ManagedCluster (OCM's webhook lets the agent
	// update it) and in its status.
	waitObj(t, hubA, failoverv1alpha1.KindManagedCluster, "", cluster, 30*time.Second, "the agent's epoch 1",
		hasAnnotation(failoverv1alpha1.AnnotationEpoch, "epoch=1"))
	util.WaitForFailoverConfig(t, spoke, 30*time.Second, "status.epoch 1", epochIs(1))

	// OCM's work agent reads the hub kubeconfig the agent mirrors, and restarts when it changes.
	work := startWorkAgent(t, spoke, agent, cluster, evictionGracePeriod)

	// Hub A's management state of the cluster.
	patchManagedCluster(t, hubA, cluster, func(mc *unstructured.Unstructured) {
		labels := mc.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["env"] = "prod"
		labels["cluster.open-cluster-management.io/clusterset"] = "set-1"
		mc.SetLabels(labels)
	})
	applyUnstructured(t, hubA, failoverv1alpha1.KindManagedClusterSet, map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
		"metadata": map[string]any{"name": "set-1"},
	})
	applyUnstructured(t, hubA, failoverv1alpha1.KindManagedClusterSetBinding, map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
		"metadata": map[string]any{"name": "set-1", "namespace": "apps"},
		"spec":     map[string]any{"clusterSet": "set-1"},
	})
	applyUnstructured(t, hubA, failoverv1alpha1.KindPlacement, map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
		"metadata": map[string]any{"name": "prod", "namespace": "apps"},
		"spec": map[string]any{"clusterSets": []any{"set-1"}, "predicates": []any{map[string]any{
			"requiredClusterSelector": map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"env": "prod"}}},
		}}},
	})
	applyUnstructured(t, hubA, failoverv1alpha1.KindConfigMap, map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "app-settings", "namespace": "apps", "labels": map[string]any{mirror.BackupLabel: "true"}},
		"data":     map[string]any{"replicas": "3"},
	})
	applyUnstructured(t, hubA, failoverv1alpha1.KindSecret, map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "app-credentials", "namespace": cluster, "labels": map[string]any{mirror.BackupLabel: "true"}},
		"type":     "Opaque",
		"data":     map[string]any{"token": "c2VjcmV0"},
	})
	applyUnstructured(t, hubA, failoverv1alpha1.KindManagedClusterAddOn, map[string]any{
		"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn",
		"metadata": map[string]any{"name": "application-manager", "namespace": cluster},
		"spec":     map[string]any{"installNamespace": "open-cluster-management-agent-addon"},
	})
	createWork(t, hubA, configMapWork(t, cluster, "work-1", map[string]string{"cm-1a": "one", "cm-1b": "one"}))
	createWork(t, hubA, configMapWork(t, cluster, "work-2", map[string]string{"cm-2": "two"}))
	// A ManifestWork with an executor: OCM's work webhook accepts its copy on hub B only from a writer allowed
	// manifestworks/execute-as for that ServiceAccount.
	execWork := configMapWork(t, cluster, "work-exec", map[string]string{"cm-exec": "as-deployer"})
	if err := unstructured.SetNestedMap(execWork.Object, map[string]any{"subject": map[string]any{
		"type": "ServiceAccount", "serviceAccount": map[string]any{"namespace": "default", "name": executorServiceAccount},
	}}, "spec", "executor"); err != nil {
		t.Fatal(err)
	}
	createWork(t, hubA, execWork)
	// Generated workloads: a ManifestWorkReplicaSet and an add-on installed by strategy from an AddOnTemplate,
	// both placed by a Placement that tolerates the taints a standby puts on a cluster not connected to it.
	applyGenerators(t, hubA)
	// Governance, a ManagedServiceAccount and a kind of the user's own, Widget, named in the ReplicationConfig
	// (customKinds) and granted to the replicator by a ClusterRole of the user's.
	for _, h := range []*framework.Hub{hubA, hubBHub} {
		installWidgets(t, h)
	}
	applyHubKinds(t, hubA)
	uids := waitSpokeConfigMaps(t, spoke, map[string]string{"cm-1a": "one", "cm-1b": "one", "cm-2": "two", "cm-exec": "as-deployer",
		"cm-mwrs": "from-set", "cm-addon": "from-template"})
	// On hub A the generators made their ManifestWorks and the add-on manager its ManagedClusterAddOn.
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, mwrsName, replicationTimeout, "the set's ManifestWork", func(o *unstructured.Unstructured) bool {
		return o != nil && o.GetLabels()[mirror.ManifestWorkReplicaSetLabel] == "apps."+mwrsName
	})

	// The replicator, configured on hub B (a standby), mirrors it all to hub B.
	started := time.Now()
	r := setUpReplicator(t, hubBHub, failoverv1alpha1.ReplicationConfigSpec{CustomKinds: []failoverv1alpha1.CustomKind{widgetKind}},
		namedHub{name: primary, hub: hubA}, namedHub{name: hubB, hub: hubBHub})
	r.start()
	mcB := waitObj(t, hubBHub, failoverv1alpha1.KindManagedCluster, "", cluster, replicationTimeout, "a copy from primary, accepted, labelled, saying the cluster is on primary",
		func(o *unstructured.Unstructured) bool {
			if o == nil {
				return false
			}
			accepted, _, _ := unstructured.NestedBool(o.Object, "spec", "hubAcceptsClient")
			return copiedFrom(primary)(o) && accepted && o.GetLabels()["env"] == "prod" &&
				o.GetAnnotations()[mirror.AnnotationClusterHub] == primary && o.GetAnnotations()[mirror.AnnotationClusterHubSince] != ""
		})
	for _, obj := range []struct {
		kind            failoverv1alpha1.ReplicatedKind
		namespace, name string
	}{
		{failoverv1alpha1.KindManagedClusterSet, "", "set-1"},
		{failoverv1alpha1.KindManagedClusterSetBinding, "apps", "set-1"},
		{failoverv1alpha1.KindPlacement, "apps", "prod"},
		{failoverv1alpha1.KindConfigMap, "apps", "app-settings"},
		{failoverv1alpha1.KindSecret, cluster, "app-credentials"},
		{failoverv1alpha1.KindManagedClusterAddOn, cluster, "application-manager"},
		{failoverv1alpha1.KindManifestWork, cluster, "work-1"},
		{failoverv1alpha1.KindManifestWork, cluster, "work-2"},
		{failoverv1alpha1.KindManifestWork, cluster, "work-exec"},
		{failoverv1alpha1.KindPlacement, "apps", workloadsPlacement},
		{failoverv1alpha1.KindManifestWorkReplicaSet, "apps", mwrsName},
		{failoverv1alpha1.KindAddOnTemplate, "", addOnTemplateName},
		{failoverv1alpha1.KindClusterManagementAddOn, "", addOnName},
	} {
		// Each records the incarnation of primary it was written in (or, written before primary had a marker,
		// the first one): a copy that records none is written again the next time its key is synced.
		waitObj(t, hubBHub, obj.kind, obj.namespace, obj.name, replicationTimeout, "a copy from primary recording primary's incarnation",
			func(o *unstructured.Unstructured) bool {
				return copiedFrom(primary)(o) && mirror.SourceIncarnation(o).Known()
			})
	}
	// Hub B generates its own: its work manager the set's ManifestWork, its add-on manager the
	// ManagedClusterAddOn (the fence lets both through) and the add-on's ManifestWork. The replicator wrote
	// none of them (no content hash); OCM's work manager gives the set's works the set's labels, the copy label
	// of B's copy of the set included.
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, mwrsName, 2*replicationTimeout, "hub B's work manager's own",
		func(o *unstructured.Unstructured) bool {
			if o == nil {
				return false
			}
			_, written := o.GetAnnotations()[mirror.AnnotationContentHash]
			return !written && o.GetLabels()[mirror.ManifestWorkReplicaSetLabel] == "apps."+mwrsName
		})
	addOnOnB := waitObj(t, hubBHub, failoverv1alpha1.KindManagedClusterAddOn, cluster, addOnName, 2*replicationTimeout, "hub B's add-on manager's own",
		func(o *unstructured.Unstructured) bool {
			return o != nil && !mirror.IsCopy(o) && len(o.GetOwnerReferences()) > 0
		})
	addOnUIDOnB := string(addOnOnB.GetUID())
	ownReplicaUID := waitHubKindsCopied(t, hubBHub, primary)
	waitAddOnWork(t, hubBHub, cluster, addOnName)
	execCopy, err := getObj(hubBHub, mustKind(failoverv1alpha1.KindManifestWork), cluster, "work-exec")
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(execCopy.Object, "spec", "executor", "subject", "serviceAccount", "name"); got != executorServiceAccount {
		t.Errorf("hub B's copy of work-exec runs as %q, want the original's executor %s", got, executorServiceAccount)
	}
	t.Logf("measured: replicator start -> hub B holds the cluster's whole state in %.1f s", time.Since(started).Seconds())
	// The originals of the kinds that hold deletes carry the replicator's finalizer; the label-listed backup
	// Secret does not.
	for _, obj := range []struct {
		kind       failoverv1alpha1.ReplicatedKind
		name       string
		wantHolder bool
	}{
		{failoverv1alpha1.KindManagedClusterAddOn, "application-manager", true},
		{failoverv1alpha1.KindManifestWork, "work-1", true},
		{failoverv1alpha1.KindSecret, "app-credentials", false},
	} {
		waitObj(t, hubA, obj.kind, cluster, obj.name, replicationTimeout, fmt.Sprintf("the original, finalizer %s present: %t", mirror.FinalizerDeleteCopies, obj.wantHolder),
			func(o *unstructured.Unstructured) bool {
				return o != nil && mirror.HasCopyOn(o, hubB) && slices.Contains(o.GetFinalizers(), mirror.FinalizerDeleteCopies) == obj.wantHolder
			})
	}
	if mcA, err := getObj(hubA, mustKind(failoverv1alpha1.KindManagedCluster), "", cluster); err != nil || mcA.GetAnnotations()[agentAnnotation] != "eu-1" {
		t.Fatalf("hub A's ManagedCluster lacks the agent's annotation %s (err %v): the check below would prove nothing", agentAnnotation, err)
	}
	if got, ok := mcB.GetAnnotations()[agentAnnotation]; ok {
		t.Errorf("the agent-owned annotation %s was copied to hub B: %q", agentAnnotation, got)
	}
	r.waitStatus(replicationTimeout, "both hubs reachable and synced, cluster1 sourced from primary, the custom kind's widget counted", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		return s.ReachableHubs == 2 && hubStatus(s, hubB).Synced && hubStatus(s, primary).SourceClusters == 1 && s.Clusters == 1 &&
			slices.Contains(s.Kinds, failoverv1alpha1.ReplicatedKindStatus{Kind: string(widgetKind.Name()), Objects: 1})
	})
	// Hub B's controller treats the pre-created cluster as its own: accepted, with its namespace.
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		_, err := hubBHub.Kube.CoreV1().Namespaces().Get(ctx, cluster, metav1.GetOptions{})
		return err == nil, err
	}, "hub B made the cluster namespace for the accepted copy")
	// In step, and nothing changes: the replicator writes nothing, on either hub, although each hub's webhooks
	// and controllers (the hub controller, add-on manager, placement controller, work manager) run on what it
	// wrote. A write that a hub's own components undo would repeat here.
	quietWindow := defaultQuietWindow
	if v := os.Getenv("QUIET_WINDOW"); v != "" {
		if quietWindow, err = time.ParseDuration(v); err != nil || quietWindow <= 0 {
			t.Fatalf("QUIET_WINDOW=%q: want a positive Go duration such as 11m", v)
		}
	}
	quietFrom := time.Now()
	// The audit log holds the replicator's writes: those of the initial sync are there.
	if synced := replicatorWrites(t, hubBHub, started, quietFrom); len(synced) == 0 {
		t.Fatalf("hub %s's audit log holds no write of the replicator since it started: a write loop would not show either", hubBHub.Name)
	} else {
		t.Logf("hub %s: %d writes by the replicator from its start to the end of the sync", hubBHub.Name, len(synced))
	}
	time.Sleep(quietWindow)
	// The one write a running replicator makes when nothing changes: the in-step report on the source's
	// ManagedCluster, confirmed once every report interval.
	confirmation := "patch /apis/cluster.open-cluster-management.io/v1/managedclusters/" + cluster + " 200"
	allowed := int(quietWindow/r.opts.ReportInterval) + 1
	for _, h := range []*framework.Hub{hubA, hubBHub} {
		all := replicatorWrites(t, h, quietFrom, time.Now())
		writes := all
		if h == hubA {
			writes = slices.DeleteFunc(slices.Clone(all), func(w string) bool { return w == confirmation })
		}
		confirmations := len(all) - len(writes)
		if len(writes) > 0 || confirmations > allowed {
			t.Errorf("hub %s: the replicator wrote %d times in a quiet %s, want 0, and confirmed the report %d times, want at most %d: %v",
				h.Name, len(writes), quietWindow, confirmations, allowed, writes)
			for _, ev := range replicatorAuditEvents(t, h, quietFrom, time.Now()) {
				if ev.RequestObject != nil && len(ev.RequestObject.Raw) < 2000 {
					t.Logf("hub %s: %s %s: %s", h.Name, ev.Verb, ev.RequestURI, ev.RequestObject.Raw)
				}
			}
		} else {
			t.Logf("measured: hub %s: 0 writes by the replicator in a quiet %s besides %d confirmations of the in-step report (report interval %s)",
				h.Name, quietWindow, confirmations, r.opts.ReportInterval)
		}
	}
	// The agent reads the report on hub A's ManagedCluster. A replicator that stopped confirming it (stopped,
	// crash-looping) leaves a report the agent takes as unknown after three of its intervals, timed on the
	// agent's clock; a running replicator's confirmation makes it known again.
	replicationIs := func(want failoverv1alpha1.HubReplicationState) func(*failoverv1alpha1.FailoverConfig) (bool, string) {
		return func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
			h := util.HubProbe(fc, hubB)
			return h != nil && h.Replication == want, util.DescribeFailoverStatus(fc)
		}
	}
	util.WaitForFailoverConfig(t, spoke, replicationTimeout, "hub-b reported InStep", replicationIs(failoverv1alpha1.HubInStep))
	interval := r.opts.ReportInterval
	r.stop()
	r.opts.ReportInterval = 2 * time.Second
	r.start()
	// The report confirmed every 2s names hub-b in step: a hub named behind stays behind however old the report.
	waitObj(t, hubA, failoverv1alpha1.KindManagedCluster, "", cluster, replicationTimeout, "a report confirmed every 2s, hub-b in step", func(o *unstructured.Unstructured) bool {
		return o != nil && strings.HasSuffix(o.GetAnnotations()[mirror.AnnotationHubsReported], ",every=2s") &&
			slices.Contains(strings.Split(o.GetAnnotations()[mirror.AnnotationHubsInStep], ","), hubB) && o.GetAnnotations()[mirror.AnnotationHubsBehind] == ""
	})
	r.stop()
	stoppedAt := time.Now()
	util.WaitForFailoverConfig(t, spoke, replicationTimeout, "hub-b Unknown once the replicator stopped", replicationIs(failoverv1alpha1.HubReplicationUnknown))
	t.Logf("measured: replicator stopped -> the agent reports hub-b Unknown in %.1f s (3 intervals of 2 s)", time.Since(stoppedAt).Seconds())
	if since := time.Since(stoppedAt); since < 4*time.Second {
		t.Errorf("the agent took the report as unknown %s after the replicator stopped, before two of its 2 s intervals had passed", since)
	}
	r.opts.ReportInterval = interval
	r.start()
	util.WaitForFailoverConfig(t, spoke, replicationTimeout, "hub-b InStep once the replicator runs again", replicationIs(failoverv1alpha1.HubInStep))
	// The add-on installed by strategy: the replicator never wrote it on hub B, and hub B's add-on manager never
	// deleted and re-made it there.
	for resource, name := range map[string]string{"managedclusteraddons": addOnName, "manifestworks": mwrsName, "policies": replicatedPolicy} {
		if writes := replicatorWritesOf(t, hubBHub, resource, cluster, name, started, time.Now()); len(writes) > 0 {
			t.Errorf("the replicator wrote %s %s/%s on hub B, which makes its own: %v", resource, cluster, name, writes)
		}
	}
	if o, err := getObj(hubBHub, mustKind(failoverv1alpha1.KindManagedClusterAddOn), cluster, addOnName); err != nil || string(o.GetUID()) != addOnUIDOnB {
		t.Errorf("hub B's ManagedClusterAddOn %s was deleted or made again during the quiet window (err %v)", addOnName, err)
	} else {
		t.Logf("measured: hub B's ManagedClusterAddOn %s kept its UID from before the quiet window to after it; 0 writes of it by the replicator", addOnName)
	}

	// Hub A is lost.
	restarts := work.Restarts()
	stopped := time.Now()
	hubA.StopAPIServer()
	util.WaitForFailoverConfig(t, spoke, connectionTimeout+failoverSlack, "active hub hub-b and Available", util.ActiveAndAvailable(hubB))
	util.WaitForClusterAvailable(t, hubBHub, cluster, failoverSlack)
	available := time.Since(stopped)
	t.Logf("measured: hub A stopped -> Available on hub B in %.1f s (connection timeout %s)", available.Seconds(), connectionTimeout)
	// An edit on hub B at once reaches the spoke: OCM's work agent follows the switch (it restarts on the
	// changed kubeconfig) and serves hub B's ManifestWorks.
	updateWork(t, hubBHub, cluster, "work-1", map[string]string{"cm-1a": "edited-on-b", "cm-1b": "one"})
	waitSpokeConfigMaps(t, spoke, map[string]string{"cm-1a": "edited-on-b", "cm-1b": "one", "cm-2": "two"})
	t.Logf("measured: hub A stopped -> an edit made on hub B once the cluster was Available there applied on the spoke in %.1f s (%.1f s after Available)",
		time.Since(stopped).Seconds(), (time.Since(stopped) - available).Seconds())
	// The agent records its move on B's ManagedCluster: epoch 2, from primary.
	waitObj(t, hubBHub, failoverv1alpha1.KindManagedCluster, "", cluster, failoverSlack, "the agent's epoch 2 from primary",
		hasAnnotation(failoverv1alpha1.AnnotationEpoch, "epoch=2,from="+primary))
	util.WaitForFailoverConfig(t, spoke, failoverSlack, "status.epoch 2", epochIs(2))
	// The replicator sees the cluster on B: B's ManagedCluster is the source now and says nothing of a move.
	waitObj(t, hubBHub, failoverv1alpha1.KindManagedCluster, "", cluster, replicationTimeout, "no cluster-hub annotation on the source",
		func(o *unstructured.Unstructured) bool {
			if o == nil {
				return false
			}
			_, annotated := o.GetAnnotations()[mirror.AnnotationClusterHub]
			return !annotated
		})
	framework.Eventually(t, failoverSlack, util.PollInterval, func() (bool, error) {
		return work.Restarts() > restarts, nil
	}, "the work agent restarted on hub B's kubeconfig")
	// The work agent's eviction grace period passes: without hub B's ManifestWorks it would delete the
	// ConfigMaps now.
	time.Sleep(evictionGracePeriod + 15*time.Second)
	expectSameUIDs(t, spoke, uids)
	if len(r.events("ClusterSourceChanged")) == 0 {
		t.Errorf("no ClusterSourceChanged event after the failover")
	}
	// What governance and the user's kinds had on hub A is on hub B after the failover, and hub B's own
	// replicated Policy, which carries its root copy's marks, was never taken for a copy.
	waitObj(t, hubBHub, failoverv1alpha1.KindPolicy, "apps", rootPolicy, replicationTimeout, "the Policy made on hub A, its spec whole",
		func(o *unstructured.Unstructured) bool {
			if o == nil || o.GetDeletionTimestamp() != nil {
				return false
			}
			action, _, _ := unstructured.NestedString(o.Object, "spec", "remediationAction")
			templates, _, _ := unstructured.NestedSlice(o.Object, "spec", "policy-templates")
			return action == "inform" && len(templates) == 1
		})
	for _, obj := range []struct {
		kind            failoverv1alpha1.ReplicatedKind
		namespace, name string
	}{
		{failoverv1alpha1.KindPlacementBinding, "apps", placementBinding},
		{failoverv1alpha1.KindPolicySet, "apps", policySet},
		{failoverv1alpha1.KindManagedServiceAccount, cluster, managedServiceAccount},
		{widgetKind.Name(), cluster, widget},
	} {
		if o, err := getObj(hubBHub, mustKind(obj.kind), obj.namespace, obj.name); err != nil || o == nil || o.GetDeletionTimestamp() != nil {
			t.Errorf("hub B lost %s %s/%s after the failover (err %v)", obj.kind, obj.namespace, obj.name, err)
		}
	}
	if o, err := getObj(hubBHub, mustKind(failoverv1alpha1.KindPolicy), cluster, replicatedPolicy); err != nil || o == nil || o.GetUID() != ownReplicaUID {
		t.Errorf("hub B's own replicated Policy %s/%s was deleted or made again (err %v)", cluster, replicatedPolicy, err)
	}

	// The edit on hub B kept the objects.
	expectSameUIDs(t, spoke, uids)

	// Hub A comes back: it gets B's edit, and its ManagedCluster says the cluster is on hub B.
	hubA.StartAPIServer()
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "work-1", 2*replicationTimeout, "B's edit, taken over from B",
		func(o *unstructured.Unstructured) bool {
			return copiedFrom(hubB)(o) && sameValues(t, map[string]string{"cm-1a": "edited-on-b", "cm-1b": "one"})(o)
		})
	waitObj(t, hubA, failoverv1alpha1.KindManagedCluster, "", cluster, replicationTimeout, "annotated: the cluster is on hub-b",
		func(o *unstructured.Unstructured) bool {
			return o != nil && o.GetAnnotations()[mirror.AnnotationClusterHub] == hubB && o.GetAnnotations()[mirror.AnnotationClusterHubSince] != ""
		})

	// Hub A is back and caught up: the write-back of the move to B (epoch 2, from primary) is finished.
	waitObj(t, hubBHub, failoverv1alpha1.KindManagedCluster, "", cluster, replicationTimeout, "the write-back of epoch 2 finished",
		hasAnnotation(mirror.AnnotationWrittenBackEpoch, "2"))

	// A planned switch back to hub A disturbs no workload either.
	util.UpdateFailoverConfigSpec(t, spoke, func(s *failoverv1alpha1.FailoverConfigSpec) { s.SwitchTo = primary })
	util.WaitForFailoverConfig(t, spoke, failoverSlack, "active hub primary and Available", util.ActiveAndAvailable(primary))
	// Epoch 3 from hub-b on A, whose write-back ends once B has nothing left to give; B's ManagedCluster keeps its
	// epoch and record.
	waitObj(t, hubA, failoverv1alpha1.KindManagedCluster, "", cluster, failoverSlack, "the agent's epoch 3 from hub-b",
		hasAnnotation(failoverv1alpha1.AnnotationEpoch, "epoch=3,from="+hubB))
	waitObj(t, hubA, failoverv1alpha1.KindManagedCluster, "", cluster, replicationTimeout, "the write-back of epoch 3 finished",
		hasAnnotation(mirror.AnnotationWrittenBackEpoch, "3"))
	if o, err := getObj(hubBHub, mustKind(failoverv1alpha1.KindManagedCluster), "", cluster); err != nil || o == nil ||
		o.GetAnnotations()[failoverv1alpha1.AnnotationEpoch] != "epoch=2,from="+primary || o.GetAnnotations()[mirror.AnnotationWrittenBackEpoch] != "2" {
		t.Errorf("hub B's ManagedCluster after the switch back: annotations %v (err %v), want epoch=2,from=%s and written-back-epoch 2",
			o.GetAnnotations(), err, primary)
	}
	waitObj(t, hubBHub, failoverv1alpha1.KindManagedCluster, "", cluster, replicationTimeout, "annotated: the cluster is on primary again",
		func(o *unstructured.Unstructured) bool {
			return o != nil && o.GetAnnotations()[mirror.AnnotationClusterHub] == primary
		})
	time.Sleep(evictionGracePeriod + 15*time.Second)
	expectSameUIDs(t, spoke, uids)
	waitSpokeConfigMaps(t, spoke, map[string]string{"cm-1a": "edited-on-b", "cm-1b": "one", "cm-2": "two"})
	// Hub B, which the cluster left, fences the custom kind as it does ManifestWorks.
	checkWidgetFence(t, hubBHub, primary)

	// After the round trip A → B → A, hub B's copy of work-2 carries the cleanup finalizer OCM's work agent put on
	// it while the cluster was on B, which only a work agent connected to B would remove. work-2 deleted on A and
	// made again there with new content (GitOps tools and kubectl replace --force do this): B's old copy goes,
	// nothing stays Terminating, and B holds a copy of the new work-2, so the next switch to B keeps it.
	if old, err := getObj(hubBHub, mustKind(failoverv1alpha1.KindManifestWork), cluster, "work-2"); err == nil && old != nil {
		t.Logf("hub-b's copy of work-2 before the delete: finalizers %v", old.GetFinalizers())
	}
	deleteObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "work-2")
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "work-2", replicationTimeout, "the old copy gone from hub-b, not left Terminating", absent)
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "work-2", replicationTimeout, "the delete finished on primary", absent)
	createWork(t, hubA, configMapWork(t, cluster, "work-2", map[string]string{"cm-2": "two-again"}))
	remade := waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "work-2", replicationTimeout, "work-2 made again, its copy listed",
		func(o *unstructured.Unstructured) bool { return mirror.HasCopyOn(o, hubB) })
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "work-2", replicationTimeout, "a copy of the new work-2",
		func(o *unstructured.Unstructured) bool {
			return o != nil && o.GetDeletionTimestamp() == nil && o.GetAnnotations()[mirror.AnnotationSourceUID] == string(remade.GetUID()) &&
				sameValues(t, map[string]string{"cm-2": "two-again"})(o)
		})
	waitSpokeConfigMaps(t, spoke, map[string]string{"cm-2": "two-again"})
}

// The generators applyGenerators makes on a hub.
const (
	// workloadsPlacement, in namespace apps, decides the clusters labelled env=prod of set set-1, tolerating
	// the taints a hub puts on a cluster that is not connected to it.
	workloadsPlacement = "workloads"
	// mwrsName is the ManifestWorkReplicaSet (namespace apps) that puts ConfigMap cm-mwrs on those clusters.
	mwrsName = "web"
	// addOnName is the ClusterManagementAddOn installed by strategy on those clusters, from AddOnTemplate
	// addOnTemplateName, which puts ConfigMap cm-addon there.
	addOnName         = "hello"
	addOnTemplateName = "hello-template"
)

// applyGenerators makes on hub h the Placement workloadsPlacement, the ManifestWorkReplicaSet mwrsName and
// the template add-on addOnName (AddOnTemplate and ClusterManagementAddOn, install strategy Placements).
func applyGenerators(t *testing.T, h *framework.Hub) {
	t.Helper()
	toleration := func(key string) map[string]any {
		return map[string]any{"key": key, "operator": "Exists"}
	}
	applyUnstructured(t, h, failoverv1alpha1.KindPlacement, map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
		"metadata": map[string]any{"name": workloadsPlacement, "namespace": "apps"},
		"spec": map[string]any{
			"clusterSets": []any{"set-1"},
			"predicates": []any{map[string]any{"requiredClusterSelector": map[string]any{"labelSelector": map[string]any{
				"matchLabels": map[string]any{"env": "prod"}}}}},
			"tolerations": []any{toleration("cluster.open-cluster-management.io/unreachable"), toleration("cluster.open-cluster-management.io/unavailable")},
		},
	})
	manifests := func(name, value string) []any {
		return []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "default"}, "data": map[string]any{"value": value}}}
	}
	applyUnstructured(t, h, failoverv1alpha1.KindManifestWorkReplicaSet, map[string]any{
		"apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet",
		"metadata": map[string]any{"name": mwrsName, "namespace": "apps"},
		"spec": map[string]any{
			"placementRefs":        []any{map[string]any{"name": workloadsPlacement}},
			"manifestWorkTemplate": map[string]any{"workload": map[string]any{"manifests": manifests("cm-mwrs", "from-set")}},
		},
	})
	applyUnstructured(t, h, failoverv1alpha1.KindAddOnTemplate, map[string]any{
		"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "AddOnTemplate",
		"metadata": map[string]any{"name": addOnTemplateName},
		"spec": map[string]any{
			"addonName": addOnName,
			"agentSpec": map[string]any{"workload": map[string]any{"manifests": manifests("cm-addon", "from-template")}},
		},
	})
	applyTemplateClusterManagementAddOn(t, h, addOnName, addOnTemplateName, map[string]any{"type": "Placements",
		"placements": []any{map[string]any{"name": workloadsPlacement, "namespace": "apps"}}})
}

// applyTemplateClusterManagementAddOn makes on hub h the ClusterManagementAddOn addOn, whose default config is
// AddOnTemplate template, with spec.installStrategy installStrategy.
func applyTemplateClusterManagementAddOn(t *testing.T, h *framework.Hub, addOn, template string, installStrategy map[string]any) {
	t.Helper()
	applyUnstructured(t, h, failoverv1alpha1.KindClusterManagementAddOn, map[string]any{
		"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ClusterManagementAddOn",
		"metadata": map[string]any{"name": addOn},
		"spec": map[string]any{
			"supportedConfigs": []any{map[string]any{"group": "addon.open-cluster-management.io", "resource": "addontemplates",
				"defaultConfig": map[string]any{"name": template}}},
			"installStrategy": installStrategy,
		},
	})
}

// waitAddOnWork waits until hub h holds a ManifestWork of add-on addOn (label mirror.AddonNameLabel) in
// cluster's namespace.
func waitAddOnWork(t *testing.T, h *framework.Hub, cluster, addOn string) {
	t.Helper()
	framework.Eventually(t, 2*replicationTimeout, util.PollInterval, func() (bool, error) {
		works, err := dyn(h).Resource(mustKind(failoverv1alpha1.KindManifestWork).GVR).Namespace(cluster).List(context.Background(),
			metav1.ListOptions{LabelSelector: mirror.AddonNameLabel + "=" + addOn})
		if err != nil {
			return false, err
		}
		return len(works.Items) > 0, nil
	}, "hub %s's add-on manager made add-on %s's ManifestWork in namespace %s", h.Name, addOn, cluster)
}

// replicatorWritesOf returns the replicator's writes on hub h between from and to (as replicatorWrites) of the
// object resource namespace/name, creates included (a create's request URI does not name the object; its
// audit event's objectRef does).
func replicatorWritesOf(t *testing.T, h *framework.Hub, resource, namespace, name string, from, to time.Time) []string {
	t.Helper()
	var out []string
	for _, ev := range replicatorAuditEvents(t, h, from, to) {
		if ref := ev.ObjectRef; ref != nil && ref.Resource == resource && ref.Namespace == namespace && ref.Name == name {
			out = append(out, fmt.Sprintf("%s %s", ev.Verb, ev.RequestURI))
		}
	}
	return out
}

// waitSpokeConfigMaps waits until the spoke's default namespace holds the ConfigMaps with those values, and
// returns their UIDs.
func waitSpokeConfigMaps(t *testing.T, spoke *framework.Spoke, want map[string]string) map[string]types.UID {
	t.Helper()
	uids := map[string]types.UID{}
	framework.Eventually(t, 2*replicationTimeout, util.PollInterval, func() (bool, error) {
		for name, value := range want {
			cm, err := spoke.Kube.CoreV1().ConfigMaps("default").Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if cm.Data["value"] != value {
				return false, nil
			}
			uids[name] = cm.UID
		}
		return true, nil
	}, "ConfigMaps %v applied on the spoke by the work agent", want)
	return uids
}

// expectSameUIDs fails the test when a ConfigMap is gone or was recreated.
func expectSameUIDs(t *testing.T, spoke *framework.Spoke, uids map[string]types.UID) {
	t.Helper()
	for name, uid := range uids {
		var cm *corev1.ConfigMap
		cm, err := spoke.Kube.CoreV1().ConfigMaps("default").Get(context.Background(), name, metav1.GetOptions{})
		switch {
		case err != nil:
			t.Errorf("ConfigMap default/%s on the spoke: %v (deleted by the work agent?)", name, err)
		case cm.UID != uid:
			t.Errorf("ConfigMap default/%s was recreated: UID %s, was %s", name, cm.UID, uid)
		}
	}
}

// allowExecutor creates ServiceAccount namespace/name on the spoke and lets it get, create, update, patch and
// delete ConfigMaps in namespace: what OCM's work agent asks a SubjectAccessReview for before it applies a
// ConfigMap of a ManifestWork whose executor is that ServiceAccount.
func allowExecutor(t *testing.T, spoke *framework.Spoke, namespace, name string) {
	t.Helper()
	ctx := context.Background()
	if _, err := spoke.Kube.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := spoke.Kube.RbacV1().Roles(namespace).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := spoke.Kube.RbacV1().RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// replicatorWrites returns "<verb> <request URI> <code>" of each write of the replicator's ServiceAccount on h
// (replicatorWritesAuditPolicy) whose request was received between from and to.
func replicatorWrites(t *testing.T, h *framework.Hub, from, to time.Time) []string {
	t.Helper()
	var out []string
	for _, ev := range replicatorAuditEvents(t, h, from, to) {
		code := int32(0)
		if ev.ResponseStatus != nil {
			code = ev.ResponseStatus.Code
		}
		out = append(out, fmt.Sprintf("%s %s %d", ev.Verb, ev.RequestURI, code))
	}
	return out
}

// replicatorAuditEvents returns the audit events of the replicator's ServiceAccount (util.ReplicatorKubeconfig's
// identity) on hub h received between from and to.
func replicatorAuditEvents(t *testing.T, h *framework.Hub, from, to time.Time) []auditv1.Event {
	t.Helper()
	events, err := h.AuditEvents("system:serviceaccount:" + util.ReplicatorHubNamespace + ":" + util.ReplicatorHubServiceAccount)
	if err != nil {
		t.Fatal(err)
	}
	var out []auditv1.Event
	for _, ev := range events {
		if at := ev.RequestReceivedTimestamp.Time; !at.Before(from) && !at.After(to) {
			out = append(out, ev)
		}
	}
	return out
}

// hasAnnotation is a waitObj condition: the object exists and carries annotation key = value.
func hasAnnotation(key, value string) func(*unstructured.Unstructured) bool {
	return func(o *unstructured.Unstructured) bool {
		return o != nil && o.GetAnnotations()[key] == value
	}
}

// epochIs is a WaitForFailoverConfig condition: status.epoch is n.
func epochIs(n int64) func(*failoverv1alpha1.FailoverConfig) (bool, string) {
	return func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		return fc.Status.Epoch == n, fmt.Sprintf("status.epoch %d, want %d", fc.Status.Epoch, n)
	}
}
