package replicator_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/replication"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// TestHubRebuiltEmpty: hub A, the source of a cluster (its agent and OCM's work agent run on a spoke) and of the
// hub-wide objects (the first hub), is rebuilt empty under its name while the replicator runs: its etcd goes back
// to what the hub's installer made (CRDs, bootstrap RBAC), its certificates stay, and its operator installs the
// replicator's access again. Every ManifestWork and Placement on A is gone, with no delete anyone could observe;
// hub B's copies are the only record of them. None is deleted: absence is no delete. The agent, rejected by A
// (403), moves the cluster to B; the spoke keeps every resource with its UID; A gets the cluster's works again as
// copies of B's; the Placement A lost stays on B, reported (CopyKept), until a person makes it again on A, from
// where it replicates as a new object.
func TestHubRebuiltEmpty(t *testing.T) {
	const (
		cluster   = "rebuilt1"
		namespace = "apps"
	)
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", HubController: true, Signer: framework.SignerInProcess})
	hubBHub := framework.StartHub(t, framework.HubOptions{Name: hubB, HubController: true, Signer: framework.SignerInProcess})
	// What hub A's installer made, before any cluster joined: a rebuild starts from it.
	installed := hubA.BackupEtcd()
	ctx := context.Background()
	spoke := framework.StartSpoke(t, framework.SpokeOptions{WorkCRD: true})
	util.EnsureAgentNamespace(t, spoke)
	util.ApplyBootstrapSecret(t, spoke, "hub-b-bootstrap", hubBHub.BootstrapKubeconfig())
	util.ApplyFailoverConfig(t, spoke, failoverv1alpha1.FailoverConfigSpec{
		AlternateHubs:        []failoverv1alpha1.AlternateHub{{Name: hubB, BootstrapKubeconfigSecretRef: "hub-b-bootstrap"}},
		HubConnectionTimeout: &metav1.Duration{Duration: connectionTimeout},
		ProbeInterval:        &metav1.Duration{Duration: 5 * time.Second},
		FailedHubSkipPeriod:  &metav1.Duration{Duration: 10 * time.Second},
		// A rebuilt hub answers 403 (it knows the certificates, not the cluster): a lasting rejection.
		HubRejectionGracePeriod: &metav1.Duration{Duration: 15 * time.Second},
	})
	agent := util.StartAgent(t, spoke, util.AgentConfig{
		Bootstrap: hubA.BootstrapKubeconfig(),
		Mutate:    func(o *klusterlet.FailoverAgentOptions) { o.ClusterName, o.AgentName = cluster, "agent1" },
	})
	util.WaitForClusterAvailable(t, hubA, cluster, 90*time.Second)
	startWorkAgent(t, spoke, agent, cluster, evictionGracePeriod)
	if _, err := hubA.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	createWork(t, hubA, configMapWork(t, cluster, "work-1", map[string]string{"cm-1": "one"}))
	createWork(t, hubA, configMapWork(t, cluster, "work-2", map[string]string{"cm-2": "two"}))
	applyUnstructured(t, hubA, failoverv1alpha1.KindPlacement, map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
		"metadata": map[string]any{"name": "prod", "namespace": namespace},
		"spec":     map[string]any{"numberOfClusters": int64(1)},
	})
	uids := waitSpokeConfigMaps(t, spoke, map[string]string{"cm-1": "one", "cm-2": "two"})

	r := setUpReplicator(t, hubBHub, failoverv1alpha1.ReplicationConfigSpec{},
		namedHub{name: primary, hub: hubA}, namedHub{name: hubB, hub: hubBHub})
	r.start()
	for _, name := range []string{"work-1", "work-2"} {
		waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, name, replicationTimeout, "a copy from primary", copiedFrom(primary))
	}
	waitObj(t, hubBHub, failoverv1alpha1.KindPlacement, namespace, "prod", replicationTimeout, "a copy from primary", copiedFrom(primary))
	waitNamespaceMark(t, hubBHub, cluster, primary)

	// The rebuild: hub A's etcd back to what its installer made; its operator installs the replicator's
	// ServiceAccount and role again and gives the replicator a new token.
	rebuilt := time.Now()
	hubA.Rebuild(installed)
	reinstallReplicatorAccess(t, r, hubA, primary, "")
	t.Logf("hub-a rebuilt empty")

	// Through the work agent's eviction grace period and more, while the agent finds hub A rejecting it
	// (403: its ManagedCluster and RBAC are gone) and moves the cluster to B: B keeps every copy and the spoke
	// every resource.
	kept := []struct {
		kind      failoverv1alpha1.ReplicatedKind
		namespace string
		name      string
	}{
		{failoverv1alpha1.KindManifestWork, cluster, "work-1"},
		{failoverv1alpha1.KindManifestWork, cluster, "work-2"},
		{failoverv1alpha1.KindPlacement, namespace, "prod"},
	}
	checks := 0
	for deadline := time.Now().Add(restoreWatch + evictionGracePeriod); time.Now().Before(deadline); checks++ {
		for _, c := range kept {
			obj, err := getObj(hubBHub, mustKind(c.kind), c.namespace, c.name)
			if err != nil || obj == nil || obj.GetDeletionTimestamp() != nil {
				t.Fatalf("hub-b's %s %s/%s %s after hub-a was rebuilt empty: %s (err %v), want it kept",
					c.kind, c.namespace, c.name, time.Since(rebuilt).Round(time.Second), describe(obj), err)
			}
		}
		expectSameUIDs(t, spoke, uids)
		time.Sleep(3 * time.Second)
	}
	fc := util.WaitForFailoverConfig(t, spoke, time.Minute, "the cluster moved to hub-b, hub-a rejecting it", func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		return fc.Status.ActiveHub == hubB && fc.Status.LastFailover != nil && fc.Status.LastFailover.Reason == failoverv1alpha1.FailoverReasonHubRejected &&
			util.ConditionIs(fc, failoverv1alpha1.ConditionAvailable, metav1.ConditionTrue), util.DescribeFailoverStatus(fc)
	})
	moved := fc.Status.LastFailover.StartTime.Sub(rebuilt)

	// B is the cluster's source now: the rebuilt A gets the cluster's works again, as copies of B's.
	for _, name := range []string{"work-1", "work-2"} {
		waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, name, replicationTimeout, "copied back from hub-b", copiedFrom(hubB))
	}
	waitObj(t, hubA, failoverv1alpha1.KindManagedCluster, "", cluster, replicationTimeout, "the ManagedCluster copied back from hub-b, accepted",
		func(o *unstructured.Unstructured) bool {
			if !copiedFrom(hubB)(o) {
				return false
			}
			accepted, _, _ := unstructured.NestedBool(o.Object, "spec", "hubAcceptsClient")
			return accepted
		})
	if _, err := hubA.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, fence.PolicyName, metav1.GetOptions{}); err != nil {
		t.Errorf("the fence on the rebuilt hub-a: %v, want it installed again", err)
	}
	// A hub-wide object the first hub lost is kept on B and reported; made again on A by a person, it replicates
	// as a new object.
	expectEvent(t, r, replication.ReasonCopyKept, "Placement/"+namespace+"/prod: the source hub holds no object of this name")
	if obj, err := getObj(hubA, mustKind(failoverv1alpha1.KindPlacement), namespace, "prod"); err != nil || obj != nil {
		t.Fatalf("rebuilt hub-a's Placement %s/prod: %s (err %v), want none: nothing tells the replicator it was lost rather than deleted", namespace, describe(obj), err)
	}
	if _, err := hubA.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	applyUnstructured(t, hubA, failoverv1alpha1.KindPlacement, map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
		"metadata": map[string]any{"name": "prod", "namespace": namespace},
		"spec":     map[string]any{"numberOfClusters": int64(2)},
	})
	remade, err := getObj(hubA, mustKind(failoverv1alpha1.KindPlacement), namespace, "prod")
	if err != nil || remade == nil {
		t.Fatalf("hub-a's Placement %s/prod made again: %s (err %v)", namespace, describe(remade), err)
	}
	waitObj(t, hubBHub, failoverv1alpha1.KindPlacement, namespace, "prod", replicationTimeout, "the copy of the Placement made again on hub-a",
		func(o *unstructured.Unstructured) bool {
			if o == nil {
				return false
			}
			n, _, _ := unstructured.NestedInt64(o.Object, "spec", "numberOfClusters")
			return n == 2 && o.GetAnnotations()[mirror.AnnotationSourceUID] == string(remade.GetUID())
		})

	// OCM's work agent follows the cluster: an edit on B reaches the spoke, and nothing else changed there.
	updateWork(t, hubBHub, cluster, "work-1", map[string]string{"cm-1": "edited on hub-b"})
	after := waitSpokeConfigMaps(t, spoke, map[string]string{"cm-1": "edited on hub-b", "cm-2": "two"})
	for name, uid := range uids {
		if after[name] != uid {
			t.Errorf("spoke ConfigMap %s: UID %s after hub-a's rebuild, want %s (made again)", name, after[name], uid)
		}
	}
	t.Logf("measured: %d checks over %s after hub-a was rebuilt empty, nothing deleted on hub-b or the spoke; the agent left hub-a %s after the rebuild (spec.hubRejectionGracePeriod 15 s)",
		checks, restoreWatch+evictionGracePeriod, moved.Round(time.Second))
}

// reinstallReplicatorAccess installs the replicator's ServiceAccount and ClusterRole on h again (a rebuilt hub
// lost them) and writes the new kubeconfig (to server, "" for the apiserver's own URL) into the hub's kubeconfig
// Secret on the replicator's host, as the replicator's operator would after a rebuild.
func reinstallReplicatorAccess(t *testing.T, r *replicatorRun, h *framework.Hub, name, server string) {
	t.Helper()
	kubeconfig := util.ReplicatorKubeconfig(t, h, server)
	secrets := r.host.Kube.CoreV1().Secrets(replicatorNamespace)
	s, err := secrets.Get(context.Background(), name+"-kubeconfig", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the replicator's kubeconfig Secret of hub %s: %v", name, err)
	}
	s.Data["kubeconfig"] = kubeconfig
	if _, err := secrets.Update(context.Background(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("the replicator's kubeconfig Secret of hub %s: %v", name, err)
	}
}

// runRebuild is the scripted schedule "a hub rebuilt empty" (`make chaos`): the first hub, a standby then (a
// planned switch moves the cluster off it first), is rebuilt from what its installer made (framework.Hub.Rebuild) while the replicator runs, after the
// user made and edited works on the cluster's hub; its operators install the users' bindings and the replicator's
// access again, and the twin's spoke registers there again once the replicator copied the other hub's twin there
// (a name's second spoke joining a copy: the copies must be withdrawn). Nothing of the rebuilt hub's absence reaches the
// other hub or the spoke: the replicator writes the cluster's state there again and reports it in step; then the
// cluster's hub stops, the cluster moves to the rebuilt hub, and the spoke keeps every work as the user left it
// through the eviction grace period. Once the stopped hub is back the work agent follows the cluster (a user's
// edit on the rebuilt hub reaches the spoke). The spoke's watch must see no rollback and no delete throughout,
// and at the end both hubs hold what the user wrote and the twins are untouched.
func (b *chaosBed) runRebuild(t *testing.T) chaosSchedule {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The first hub is the one rebuilt, wherever the seeds left the cluster: the source of hub-wide copies, and the
	// hub whose twin's lease an engine restart sees first (direction.DecideSource rule 1). A planned switch moves
	// the cluster off it; switchTo is cleared once it did, so that it asks for nothing later.
	if fc, err := util.GetFailoverConfig(b.spoke); err != nil {
		t.Fatalf("rebuild schedule: FailoverConfig: %v", err)
	} else if fc.Status.ActiveHub == b.names[0] {
		util.UpdateFailoverConfigSpec(t, b.spoke, func(s *failoverv1alpha1.FailoverConfigSpec) { s.SwitchTo = b.names[1] })
		util.WaitForFailoverConfig(t, b.spoke, 2*failoverSlack, "a planned switch to "+b.names[1]+" before the rebuild", util.ActiveAndAvailable(b.names[1]))
		util.UpdateFailoverConfigSpec(t, b.spoke, func(s *failoverv1alpha1.FailoverConfigSpec) { s.SwitchTo = "" })
	}
	// The last seed may have moved the cluster late: its hub is the source (not fenced) before the user writes.
	b.waitSourceFollowed(t, ctx)
	sc := b.startScripted(t, ctx, "rebuild")
	s, works, rec, i, j, write := &sc.s, sc.works, sc.rec, sc.i, sc.j, sc.write
	edited, kept := chaosPrefix+"rebuild-edited", chaosPrefix+"rebuild-kept"
	write(i, "create", edited, 1)
	write(i, "create", kept, 2)
	write(i, "edit", edited, 3)
	if got := b.settle(ctx, works); got[edited] != 3 || got[kept] != 2 {
		t.Fatalf("rebuild schedule: the spoke holds %v, want both works applied", got)
	}
	for _, name := range []string{edited, kept} {
		framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
			obj, err := dyn(b.hubs[j]).Resource(workGVR).Namespace(chaosCluster).Get(ctx, name, metav1.GetOptions{})
			return err == nil && workValue(obj, name) == works[name].seq, nil
		}, "%s holds %s's last write", b.names[j], name)
	}

	// The rebuild, and what the hub's operators install again on it: the users' bindings, then the replicator's
	// access (until then it cannot reach the rebuilt hub: its proxy is cut, as a token of the old hub fails). The
	// twin's spoke registers there only once the replicator copied the other hub's twin there (below).
	b.replProxy[j].Cut()
	b.hubs[j].Rebuild(b.installed[j])
	s.steps = append(s.steps, fmt.Sprintf("hub %s rebuilt empty", b.names[j]))
	b.users[j] = userClient(t, b.hubs[j], fenceUser)
	b.losers[j] = userClient(t, b.hubs[j], "chaos-loss", fence.GroupManagedClusters)
	reinstallReplicatorAccess(t, b.r, b.hubs[j], b.names[j], b.replProxy[j].URL())
	// The report's time is on the replicator's clock, which the chaos schedules may have set off.
	reinstalled := b.r.now()
	b.replProxy[j].Heal()

	// The replicator writes the cluster's state there again — its ManagedCluster, accepted, which gives the agent
	// its permissions back, and its works — and reports it in step in a report written since it got its access.
	mcGVR := mustKind(failoverv1alpha1.KindManagedCluster).GVR
	framework.Eventually(t, 3*replicationTimeout, util.PollInterval, func() (bool, error) {
		// Each unmet condition is returned as the error, for the failure message.
		cp, err := dyn(b.hubs[j]).Resource(mcGVR).Get(ctx, chaosCluster, metav1.GetOptions{})
		if err != nil || !mirror.IsCopy(cp) {
			return false, fmt.Errorf("%s's ManagedCluster %s: %s (err %v), want a copy", b.names[j], chaosCluster, describe(cp), err)
		}
		if accepted, _, _ := unstructured.NestedBool(cp.Object, "spec", "hubAcceptsClient"); !accepted {
			return false, fmt.Errorf("%s's ManagedCluster %s: not accepted", b.names[j], chaosCluster)
		}
		for name, w := range works {
			obj, err := dyn(b.hubs[j]).Resource(workGVR).Namespace(chaosCluster).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, fmt.Errorf("%s's ManifestWork %s: %v", b.names[j], name, err)
			}
			if got := workValue(obj, name); got != w.seq {
				return false, fmt.Errorf("%s's ManifestWork %s gives %d, want %d", b.names[j], name, got, w.seq)
			}
		}
		mc, err := dyn(b.hubs[i]).Resource(mcGVR).Get(ctx, chaosCluster, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		reported, inStep := mc.GetAnnotations()[failoverv1alpha1.AnnotationHubsReported], mc.GetAnnotations()[failoverv1alpha1.AnnotationHubsInStep]
		report, err := failoverv1alpha1.ParseHubsReport(reported)
		// The report's time has whole seconds.
		if err != nil || report.Time.Before(reinstalled.Add(time.Second)) || !slices.Contains(strings.Split(inStep, ","), b.names[j]) {
			return false, fmt.Errorf("%s's report %q (err %v), in step %q; want one written since %s (the replicator's clock) naming %s in step",
				b.names[i], reported, err, inStep, reinstalled.Format(time.RFC3339Nano), b.names[j])
		}
		return true, nil
	}, "the rebuilt %s holding the cluster's ManagedCluster, accepted, and works again, and named in step on %s by a report written since", b.names[j], b.names[i])
	// The twin's spoke registers on the rebuilt hub late, as a local-cluster registered after the replicator got
	// its access: it joins the copy of the other hub's twin, and the replicator must withdraw what it copied
	// there for the other spoke (checkTwins, at the end).
	framework.Eventually(t, 3*replicationTimeout, util.PollInterval, func() (bool, error) {
		cp, err := dyn(b.hubs[j]).Resource(mcGVR).Get(ctx, chaosTwin, metav1.GetOptions{})
		if err != nil || !mirror.IsCopy(cp) {
			return false, nil
		}
		w, err := dyn(b.hubs[j]).Resource(workGVR).Namespace(chaosTwin).Get(ctx, twinWork(i), metav1.GetOptions{})
		return err == nil && mirror.IsCopy(w), nil
	}, "the rebuilt %s holding copies of %s's %s and %s", b.names[j], b.names[i], chaosTwin, twinWork(i))
	b.registerTwin(t, j, b.hubs[j])
	s.steps = append(s.steps, fmt.Sprintf("the twin's spoke joined the copy of %s's twin on %s", b.names[i], b.names[j]))
	// The withdrawal waits for a renewal of the other twin's lease on its hub, seen after the conflict, then one
	// on this hub (two agents at once).
	framework.Eventually(t, 3*replicationTimeout, util.PollInterval, func() (bool, error) {
		mc, err := dyn(b.hubs[j]).Resource(mcGVR).Get(ctx, chaosTwin, metav1.GetOptions{})
		if err != nil || mirror.IsCopy(mc) {
			return false, err
		}
		_, err = dyn(b.hubs[j]).Resource(workGVR).Namespace(chaosTwin).Get(ctx, twinWork(i), metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}, "%s's %s its own spoke's, and the copy of %s withdrawn", b.names[j], chaosTwin, twinWork(i))
	s.steps = append(s.steps, fmt.Sprintf("the copies made for %s's twin withdrawn from %s", b.names[i], b.names[j]))
	util.WaitForFailoverConfig(t, b.spoke, 3*replicationTimeout, fmt.Sprintf("rebuilt %s in step and a Ready standby", b.names[j]), func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		for _, h := range fc.Status.Hubs {
			if h.Name == b.names[j] {
				return fc.Status.ActiveHub == b.names[i] && h.Replication == failoverv1alpha1.HubInStep && h.ProbeResult == failoverv1alpha1.HubProbeReady, util.DescribeFailoverStatus(fc)
			}
		}
		return false, util.DescribeFailoverStatus(fc)
	})
	s.steps = append(s.steps, fmt.Sprintf("%s reported in step", b.names[j]))
	n, v := checkChaos(works, b.settle(ctx, works), rec.snapshot())
	s.checks, s.violations = s.checks+n, append(s.violations, v...)

	b.hubs[i].StopAPIServer()
	s.steps = append(s.steps, fmt.Sprintf("hub %s apiserver down=true", b.names[i]))
	moved := util.WaitForFailoverConfig(t, b.spoke, 2*time.Minute, "the cluster moved to the rebuilt hub", func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		return fc.Status.ActiveHub == b.names[j] && util.ConditionIs(fc, failoverv1alpha1.ConditionAvailable, metav1.ConditionTrue), util.DescribeFailoverStatus(fc)
	})
	// The report read before the hub stopped is unconfirmed by the time the agent leaves (the bed confirms
	// reports every 2 s): the move may hold OCM's work agent on the stopped hub (failover.WorkHold).
	s.steps = append(s.steps, fmt.Sprintf("agent moved to %s (work agent held: %t)", b.names[j],
		util.ConditionIs(moved, failoverv1alpha1.ConditionWorkAgentHeld, metav1.ConditionTrue)))
	// Beyond the work agent's eviction grace period: what the rebuilt hub lacked would be gone from the spoke.
	time.Sleep(chaosEvictionGrace + 10*time.Second)
	n, v = checkChaos(works, b.settle(ctx, works), rec.snapshot())
	s.checks, s.violations = s.checks+n, append(s.violations, v...)

	b.hubs[i].StartAPIServer()
	s.steps = append(s.steps, fmt.Sprintf("hub %s apiserver down=false", b.names[i]))
	util.WaitForFailoverConfig(t, b.spoke, 2*replicationTimeout, "the work agent on the rebuilt hub", func(fc *failoverv1alpha1.FailoverConfig) (bool, string) {
		return fc.Status.ActiveHub == b.names[j] && !util.ConditionIs(fc, failoverv1alpha1.ConditionWorkAgentHeld, metav1.ConditionTrue), util.DescribeFailoverStatus(fc)
	})
	// The work agent follows the cluster: a write on the rebuilt hub reaches the spoke.
	write(j, "edit", kept, 4)
	n, v = checkChaos(works, b.settle(ctx, works), rec.snapshot())
	s.checks, s.violations = s.checks+n, append(s.violations, v...)
	n, v = b.checkHubs(ctx, works)
	s.checks, s.violations = s.checks+n, append(s.violations, v...)
	n, v = b.checkTwins(t, ctx)
	s.checks, s.violations = s.checks+n, append(s.violations, v...)
	return sc.finish()
}
