package replication

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// claimedCluster is the ManagedCluster name whose agent reports id (the id.k8s.io ClusterClaim in its status).
func claimedCluster(name, id string) *unstructured.Unstructured {
	mc := managedCluster(name, nil)
	mc.Object["status"] = map[string]any{"clusterClaims": []any{
		map[string]any{"name": "platform.open-cluster-management.io", "value": "Other"},
		map[string]any{"name": mirror.ClusterIDClaim, "value": id},
	}}
	return mc
}

// TestControllerLeavesANameOfTwoSpokesAlone: local-cluster on hub-a and on hub-b are two spokes (their agents
// report different id.k8s.io claims), each with a ManifestWork of its own; hub-b's namespace still carries fence
// marks and its ManagedCluster an in-step report from before. The controller copies nothing either way, takes
// the fence marks down, names hub-a behind on hub-b (and hub-b behind on hub-a, if it reported there before
// hub-b was ready), and reports the conflict once. When hub-b's ManagedCluster
// is deleted the name stands for one spoke again: it is replicated, its copy recording the spoke's identity.
func TestControllerLeavesANameOfTwoSpokesAlone(t *testing.T) {
	const cluster = "local-cluster"
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	handler := &proxyHandler{}
	a := newTestHub(t, testHubA, handler, kinds,
		claimedCluster(cluster, "spoke-1"),
		manifestWork(cluster, "work-a", "cm-a", nil),
	)
	mcB := claimedCluster(cluster, "spoke-2")
	mcB.SetAnnotations(map[string]string{mirror.AnnotationHubsInStep: testHubA, mirror.AnnotationHubsBehind: ""})
	namespaceB := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{
			"name":        cluster,
			"labels":      map[string]any{fence.LabelClusterHub: testHubA, "team": "b"},
			"annotations": map[string]any{mirror.AnnotationClusterHub: testHubA, mirror.AnnotationClusterHubSince: "2026-12-01T00:00:00Z"},
		},
	}}
	b := newTestHub(t, testHubB, handler, kinds, mcB, manifestWork(cluster, "work-b", "cm-b", nil), namespaceB)
	for _, h := range []*testHub{a, b} {
		// These fakes serve no SelfSubjectReview: the fence policy is not installed (ReasonFenceUnavailable), and
		// the controller keeps the fence marks all the same.
		h.fake.PrependReactor("create", "selfsubjectreviews", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(fence.SelfSubjectReviewGVR.GroupResource(), "")
		})
	}
	c, recorder := startController(t, handler, Options{Kinds: kinds, Fencing: true, DirectionRecheck: time.Hour}, a, b)
	ctx := context.Background()
	eventually(t, "the conflict is reported", func() bool { return len(recorder.messages(ReasonClusterIdentityConflict)) > 0 })
	quiesce(t, c, a, b)

	// Nothing of either spoke reaches the other hub.
	for _, h := range []*testHub{a, b} {
		if w := h.writes(mwKind); len(w) != 0 {
			t.Errorf("ManifestWork writes on %s: %v, want none", h.hub.Name(), w)
		}
		// Until hub-b is ready, hub-a's cluster looks like any other and hub-a's ManagedCluster may get its
		// report (hub-b behind); from then on only reports change.
		for _, w := range h.writes(mcKind) {
			if !strings.HasPrefix(w, "patch ") {
				t.Errorf("ManagedCluster write on %s: %s, want only reports patched", h.hub.Name(), w)
			}
		}
	}
	if got := b.get(t, mwKind, cluster, "work-a"); got != nil {
		t.Errorf("hub-b holds hub-a's work-a: %v", got.GetLabels())
	}
	if got := a.get(t, mwKind, cluster, "work-b"); got != nil {
		t.Errorf("hub-a holds hub-b's work-b: %v", got.GetLabels())
	}
	for _, h := range []*testHub{a, b} {
		if mc := h.get(t, mcKind, "", cluster); mirror.IsCopy(mc) {
			t.Errorf("%s's ManagedCluster became a copy: %v", h.hub.Name(), mc.GetLabels())
		}
	}
	// The fence marks are gone, the namespace's own label stays.
	ns := b.get(t, mirror.Kind{GVR: mirror.NamespaceGVR, Name: "Namespace"}, "", cluster)
	if l := ns.GetLabels(); l[fence.LabelClusterHub] != "" || l["team"] != "b" {
		t.Errorf("hub-b's namespace labels = %v, want no %s and team=b", l, fence.LabelClusterHub)
	}
	if a := ns.GetAnnotations(); a[mirror.AnnotationClusterHub] != "" || a[mirror.AnnotationClusterHubSince] != "" {
		t.Errorf("hub-b's namespace annotations = %v, want no fence marks", a)
	}
	// Neither report names the other hub in step.
	if got := a.get(t, mcKind, "", cluster).GetAnnotations(); got[mirror.AnnotationHubsInStep] != "" {
		t.Errorf("hub-a's ManagedCluster reports %q in step, want none", got[mirror.AnnotationHubsInStep])
	}
	if got := b.get(t, mcKind, "", cluster).GetAnnotations(); got[mirror.AnnotationHubsInStep] != "" || got[mirror.AnnotationHubsBehind] != testHubA {
		t.Errorf("hub-b's ManagedCluster reports in step %q, behind %q; want none in step, hub-a behind",
			got[mirror.AnnotationHubsInStep], got[mirror.AnnotationHubsBehind])
	}
	msgs := recorder.messages(ReasonClusterIdentityConflict)
	if len(msgs) != 1 || !strings.Contains(msgs[0], "hub-a: spoke-1 (claim); hub-b: spoke-2 (claim)") {
		t.Errorf("ClusterIdentityConflict events = %q, want one naming both spokes", msgs)
	}
	if snap := c.Snapshot(); !slices.Equal(snap.IdentityConflicts, []string{cluster}) || snap.Clusters != 0 {
		t.Errorf("Snapshot: identity conflicts %v, clusters %d; want [%s] and 0", snap.IdentityConflicts, snap.Clusters, cluster)
	}
	// Every hub is caught up: no key of the name waits anywhere.
	if snap := c.Snapshot(); !snap.CaughtUp[testHubA] || !snap.CaughtUp[testHubB] {
		t.Errorf("hubs caught up: %v, want both", snap.CaughtUp)
	}

	// A second pass over everything changes nothing.
	beforeA, beforeB := len(a.writes(mwKind))+len(a.writes(mcKind)), len(b.writes(mwKind))+len(b.writes(mcKind))
	if err := c.syncDirection(ctx, cluster); err != nil {
		t.Errorf("syncDirection: %v", err)
	}
	for _, key := range c.allKeys() {
		if err := c.syncObject(ctx, key); err != nil {
			t.Errorf("syncObject(%s): %v", key, err)
		}
	}
	if n := len(a.writes(mwKind)) + len(a.writes(mcKind)); n != beforeA {
		t.Errorf("second pass wrote on hub-a: %v", a.writes(mcKind))
	}
	if n := len(b.writes(mwKind)) + len(b.writes(mcKind)); n != beforeB {
		t.Errorf("second pass wrote on hub-b: %v %v", b.writes(mwKind), b.writes(mcKind))
	}

	// Hub-b's spoke leaves under that name: the name stands for spoke-1 alone, and is replicated.
	if err := b.client.Resource(mcKind.GVR).Delete(ctx, cluster, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hub-b holds a copy of hub-a's ManagedCluster recording spoke-1", func() bool {
		mc, _ := b.hub.Peek(mcKind.Name, "", cluster)
		return mc != nil && mc.GetLabels()[mirror.LabelReplicatedFrom] == testHubA && mc.GetAnnotations()[mirror.AnnotationClusterID] == "spoke-1"
	})
	eventually(t, "hub-b holds a copy of work-a", func() bool {
		cp, _ := b.hub.Peek(mwKind.Name, cluster, "work-a")
		return cp != nil && cp.GetLabels()[mirror.LabelReplicatedFrom] == testHubA
	})
	quiesce(t, c, a, b)
	if msgs := recorder.messages(ReasonClusterIdentityResolved); len(msgs) != 1 {
		t.Errorf("ClusterIdentityResolved events = %q, want one", msgs)
	}
	if snap := c.Snapshot(); len(snap.IdentityConflicts) != 0 || snap.Clusters != 1 {
		t.Errorf("Snapshot after the resolution: identity conflicts %v, clusters %d; want none and 1", snap.IdentityConflicts, snap.Clusters)
	}
	// Hub-b's own work-b was never a copy: it stays.
	if got := b.get(t, mwKind, cluster, "work-b"); got == nil || mirror.IsCopy(got) {
		t.Errorf("hub-b's own work-b after the resolution: %v", got)
	}
}

// TestControllerWithdrawsCopiesFromTheHubOfASecondSpoke: the replicator had copied local-cluster of spoke-1
// (registered on hub-a) to hub-b — its ManagedCluster and works work-a and work-c — before local-cluster's own
// spoke on hub-b registered (a hub rebuilt, or given the replicator's access, before its local-cluster); that
// spoke, spoke-2, then joined the ManagedCluster copy, and a user of hub-b changed the copy of work-c. Once a renewal
// of spoke-1's lease on hub-a is seen, then one of spoke-2's on hub-b (two agents), the controller withdraws from
// hub-b the copy no one changed (work-a), keeps the changed one, makes the ManagedCluster spoke-2's own (without
// spoke-1's records), and touches nothing on hub-a. A spoke whose own claim changed after it left hub-a (hub-a
// still shows its old claim: renewed there no more, or again only once it moved back) or before (hub-a reports
// the new claim too) is no second spoke: what was copied to hub-b stays.
func TestControllerWithdrawsCopiesFromTheHubOfASecondSpoke(t *testing.T) {
	const cluster = "local-cluster"
	mcKind := testKind(t, failoverv1alpha1.KindManagedCluster)
	mwKind := testKind(t, failoverv1alpha1.KindManifestWork)
	kinds := []mirror.Kind{mcKind, mwKind}
	// copyOnB returns work as the replicator copies it from hub-a; changed: changed on hub-b since.
	copyOnB := func(work *unstructured.Unstructured, changed bool) *unstructured.Unstructured {
		cp := work.DeepCopy()
		cp.SetLabels(map[string]string{mirror.LabelReplicatedFrom: testHubA})
		hash := mirror.ContentOf(mwKind, cp).Hash()
		if changed {
			_ = unstructured.SetNestedField(cp.Object, "changed-on-hub-b", "spec", "deleteOption", "propagationPolicy")
		}
		cp.SetAnnotations(map[string]string{mirror.AnnotationContentHash: hash, mirror.AnnotationSourceUID: "uid-" + work.GetName()})
		return cp
	}
	for _, tc := range []struct {
		name string
		// claimOnA is what hub-a's own ManagedCluster reports; renewals, the hubs whose lease renewals are seen
		// once the conflict was, in order.
		claimOnA string
		renewals []string
		withdraw bool
	}{
		{name: "a second spoke joined the copy, both renewing", claimOnA: "spoke-1", renewals: []string{testHubA, testHubB}, withdraw: true},
		{name: "the same spoke with a new claim, its old claim left on hub-a with no renewal since", claimOnA: "spoke-1", renewals: []string{testHubB}, withdraw: false},
		{name: "the same spoke with a new claim, back on hub-a before it reported the new claim there", claimOnA: "spoke-1", renewals: []string{testHubB, testHubA}, withdraw: false},
		{name: "the same spoke with a new claim, reported on hub-a too", claimOnA: "spoke-2", renewals: []string{testHubA, testHubB}, withdraw: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			handler := &proxyHandler{}
			workA, workC := manifestWork(cluster, "work-a", "cm-a", nil), manifestWork(cluster, "work-c", "cm-c", nil)
			a := newTestHub(t, testHubA, handler, kinds, claimedCluster(cluster, tc.claimOnA), workA, workC)
			mcB := claimedCluster(cluster, "spoke-2")
			mcB.SetLabels(map[string]string{mirror.LabelReplicatedFrom: testHubA})
			mcB.SetAnnotations(map[string]string{mirror.AnnotationClusterID: "spoke-1", mirror.AnnotationContentHash: "h",
				mirror.AnnotationClusterHub: testHubA, mirror.AnnotationClusterHubSince: "2026-12-01T00:00:00Z", "team": "b",
				mirror.AnnotationMovedFrom: testHubB, mirror.AnnotationDeletesSeen: "x"})
			b := newTestHub(t, testHubB, handler, kinds, mcB, copyOnB(workA, false), copyOnB(workC, true),
				manifestWork(cluster, "work-b", "cm-b", nil))
			c, recorder := startController(t, handler, Options{Kinds: kinds, DirectionRecheck: time.Hour}, a, b)
			eventually(t, "the conflict is reported", func() bool { return len(recorder.messages(ReasonClusterIdentityConflict)) > 0 })
			quiesce(t, c, a, b)
			for _, hub := range tc.renewals {
				time.Sleep(10 * time.Millisecond) // renewals seen at distinct times of the replicator's clock
				c.OnLease(hub, cluster, hubconn.LeaseRenewed)
			}
			if tc.withdraw {
				eventually(t, "the withdrawal is reported", func() bool { return len(recorder.messages(ReasonCopiesWithdrawn)) > 0 })
			}
			quiesce(t, c, a, b)

			if got := b.get(t, mwKind, cluster, "work-a"); (got == nil) != tc.withdraw {
				t.Errorf("hub-b's copy of work-a: %v, want withdrawn %t", got, tc.withdraw)
			}
			if got := b.get(t, mwKind, cluster, "work-c"); got == nil {
				t.Errorf("hub-b's copy of work-c, changed there, was deleted")
			}
			if got := b.get(t, mwKind, cluster, "work-b"); got == nil || mirror.IsCopy(got) {
				t.Errorf("hub-b's own work-b: %v, want kept as it was", got)
			}
			for _, name := range []string{"work-a", "work-c"} {
				if got := a.get(t, mwKind, cluster, name); got == nil || got.GetDeletionTimestamp() != nil {
					t.Errorf("hub-a's %s: %v, want untouched", name, got)
				}
			}
			if w := a.writes(mwKind); len(w) != 0 {
				t.Errorf("ManifestWork writes on hub-a: %v, want none", w)
			}
			mc := b.get(t, mcKind, "", cluster)
			claim, recorded := mirror.ClusterIdentity(mc)
			accepted, _, _ := unstructured.NestedBool(mc.Object, "spec", "hubAcceptsClient")
			switch {
			case tc.withdraw && (mirror.IsCopy(mc) || recorded != "" || mc.GetAnnotations()[mirror.AnnotationContentHash] != "" ||
				mc.GetAnnotations()[mirror.AnnotationClusterHub] != "" || mc.GetAnnotations()[mirror.AnnotationMovedFrom] != "" ||
				mc.GetAnnotations()[mirror.AnnotationDeletesSeen] != ""):
				t.Errorf("hub-b's ManagedCluster: labels %v, annotations %v; want spoke-2's own, no copy marks", mc.GetLabels(), mc.GetAnnotations())
			case !tc.withdraw && (!mirror.IsCopy(mc) || recorded != "spoke-1"):
				t.Errorf("hub-b's ManagedCluster: labels %v, annotations %v; want still the copy recording spoke-1", mc.GetLabels(), mc.GetAnnotations())
			}
			if claim != "spoke-2" || !accepted || mc.GetAnnotations()["team"] != "b" {
				t.Errorf("hub-b's ManagedCluster: claim %q, hubAcceptsClient %t, annotations %v; want spoke-2's, accepted, team=b kept", claim, accepted, mc.GetAnnotations())
			}
			msgs := recorder.messages(ReasonCopiesWithdrawn)
			switch {
			case !tc.withdraw && len(msgs) != 0:
				t.Errorf("CopiesWithdrawn events = %q, want none", msgs)
			case tc.withdraw && (len(msgs) != 1 || !strings.Contains(msgs[0], "1 copies withdrawn [ManifestWork/local-cluster/work-a]") ||
				!strings.Contains(msgs[0], "ManifestWork/local-cluster/work-c")):
				t.Errorf("CopiesWithdrawn events = %q, want one naming work-a withdrawn and work-c kept", msgs)
			}
			// Later passes change nothing more.
			before := len(b.writes(mwKind)) + len(b.writes(mcKind))
			ctx := context.Background()
			if err := c.syncDirection(ctx, cluster); err != nil {
				t.Errorf("syncDirection: %v", err)
			}
			quiesce(t, c, a, b)
			if n := len(b.writes(mwKind)) + len(b.writes(mcKind)); n != before {
				t.Errorf("a second pass wrote on hub-b: %v %v", b.writes(mwKind), b.writes(mcKind))
			}
		})
	}
}
