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
