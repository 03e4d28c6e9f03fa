package replicator_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/replication"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// TestDeleteBrake: with spec.deleteBrake {percent 1, minimum 2}, five ManifestWorks of a cluster on hub A are
// copied to hub B, then all five are deleted on A at once (a mass delete, as a cluster namespace deleted by
// mistake makes). The replicator deletes two copies on B; the third engages hub B's brake: three copies stay on
// B, their originals stay on A held by the delete-copies finalizer, the ReplicationConfig is DeletesHeld and
// Degraded with the release command, and A's ManagedCluster names hub B behind. A restart of the replicator
// keeps the brake engaged (read back from the status). The annotation with the release token, set while the
// replicator is stopped, lets the held deletes through once the new run has asked for them again: B's copies and
// A's originals go, no new brake engages, and the brake is off.
func TestDeleteBrake(t *testing.T) {
	const cluster = "braked1"
	const works = 5
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", HubController: true, Signer: framework.SignerInProcess})
	hubBHub := framework.StartHub(t, framework.HubOptions{Name: hubB, HubController: true, Signer: framework.SignerInProcess})
	applyUnstructured(t, hubA, failoverv1alpha1.KindManagedCluster, map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
		"metadata": map[string]any{"name": cluster},
		"spec":     map[string]any{"hubAcceptsClient": true, "leaseDurationSeconds": int64(10)},
	})
	stopOnA := keepRenewing(t, hubA, cluster, 3*time.Second)
	defer stopOnA()
	names := make([]string, works)
	for i := range works {
		names[i] = fmt.Sprintf("work-%d", i)
		createWork(t, hubA, configMapWork(t, cluster, names[i], map[string]string{fmt.Sprintf("cm-%d", i): "1"}))
	}
	r := setUpReplicator(t, hubBHub, failoverv1alpha1.ReplicationConfigSpec{
		DeleteBrake: &failoverv1alpha1.DeleteBrake{Percent: ptr.To[int32](1), Minimum: ptr.To[int32](2)},
	}, namedHub{name: "hub-a", hub: hubA}, namedHub{name: hubB, hub: hubBHub})
	r.start()
	for _, name := range names {
		waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, name, replicationTimeout, "a copy from hub-a", copiedFrom("hub-a"))
	}

	for _, name := range names {
		deleteObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, name)
	}
	s := r.waitStatus(replicationTimeout, "hub-b's delete brake engaged with 3 deletes held", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		b := hubStatus(s, hubB).DeleteBrake
		return b != nil && b.DeletesHeld == 3
	})
	brake := hubStatus(s, hubB).DeleteBrake
	if brake.Limit != 2 || brake.ReleaseToken != failoverv1alpha1.ReleaseToken(hubB, brake.Since.Time) {
		t.Errorf("hub-b's brake %+v, want limit 2 and the token of its since", brake)
	}
	held := condition(s, failoverv1alpha1.ReplicationConditionDeletesHeld)
	wantCommand := fmt.Sprintf("kubectl -n %s annotate replicationconfig %s %s=%s --overwrite", replicatorNamespace, configName,
		failoverv1alpha1.AnnotationReleaseDeletes, brake.ReleaseToken)
	if held == nil || held.Status != metav1.ConditionTrue || !strings.Contains(held.Message, wantCommand) {
		t.Errorf("DeletesHeld condition %+v, want True with %q", held, wantCommand)
	}
	if degraded := condition(s, failoverv1alpha1.ReplicationConditionDegraded); degraded == nil || degraded.Status != metav1.ConditionTrue {
		t.Errorf("Degraded condition %+v, want True", degraded)
	}
	if msgs := r.events(replication.ReasonDeletesHeld); len(msgs) != 1 || !strings.Contains(msgs[0], brake.ReleaseToken) {
		t.Errorf("DeletesHeld events %q, want one naming %s", msgs, brake.ReleaseToken)
	}
	kept := heldWorks(t, hubA, hubBHub, cluster, names)
	if len(kept) != 3 {
		t.Fatalf("after the mass delete, hub-b holds copies of %v and hub-a the held originals; want 3 of each", kept)
	}
	waitObj(t, hubA, failoverv1alpha1.KindManagedCluster, "", cluster, replicationTimeout, "hub-b named behind", func(o *unstructured.Unstructured) bool {
		return o != nil && strings.Contains(o.GetAnnotations()[mirror.AnnotationHubsBehind], hubB)
	})

	// A restart keeps the brake (judged on a status the new run wrote: its hubs' transition times are new).
	r.stop()
	restarted := time.Now().Truncate(time.Second)
	r.start()
	r.waitStatus(replicationTimeout, "after a restart, hub-b's brake engaged again with the 3 deletes held", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		h := hubStatus(s, hubB)
		return h.LastTransitionTime != nil && !h.LastTransitionTime.Time.Before(restarted) &&
			h.DeleteBrake != nil && h.DeleteBrake.DeletesHeld == 3 && h.DeleteBrake.ReleaseToken == brake.ReleaseToken
	})
	if after := heldWorks(t, hubA, hubBHub, cluster, names); len(after) != 3 {
		t.Fatalf("after a restart, held copies %v, want the 3 of %v", after, kept)
	}

	// The release, annotated while the replicator is stopped: the new run reads it before it has asked again for
	// the deletes its brake (restored from the status) holds; the release opens hub-b until it is caught up, so
	// those deletes are made uncounted and engage no new brake.
	r.stop()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, failoverv1alpha1.AnnotationReleaseDeletes, brake.ReleaseToken)
	if _, err := replClient(r.host).FailoverV1alpha1().ReplicationConfigs(replicatorNamespace).Patch(context.Background(), configName,
		types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	r.start()
	for _, name := range kept {
		waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, name, replicationTimeout, "deleted after the release", absent)
		waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, name, replicationTimeout, "the original's delete finished", absent)
	}
	r.waitStatus(replicationTimeout, "no brake engaged", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		c := condition(s, failoverv1alpha1.ReplicationConditionDeletesHeld)
		return hubStatus(s, hubB).DeleteBrake == nil && c != nil && c.Status == metav1.ConditionFalse
	})
	if msgs := r.events(replication.ReasonDeletesReleased); len(msgs) != 1 || !strings.Contains(msgs[0], brake.ReleaseToken) {
		t.Errorf("DeletesReleased events %q, want one naming %s", msgs, brake.ReleaseToken)
	}
	if msgs := r.events(replication.ReasonDeletesHeld); len(msgs) != 1 {
		t.Errorf("DeletesHeld events %q, want only the first engagement (the restarts and the release engaged no new brake)", msgs)
	}
}

// heldWorks returns the names among names whose copy hub b still holds; each must be a copy there and its
// original on hub a must be held (being deleted, with the delete-copies finalizer).
func heldWorks(t *testing.T, a, b *framework.Hub, cluster string, names []string) []string {
	t.Helper()
	var out []string
	for _, name := range names {
		cp, err := getObj(b, mustKind(failoverv1alpha1.KindManifestWork), cluster, name)
		if err != nil {
			t.Fatal(err)
		}
		if cp == nil {
			continue
		}
		out = append(out, name)
		if cp.GetDeletionTimestamp() != nil {
			t.Errorf("hub-b's copy of %s is being deleted although its brake holds it", name)
		}
		orig, err := getObj(a, mustKind(failoverv1alpha1.KindManifestWork), cluster, name)
		if err != nil {
			t.Fatal(err)
		}
		if orig == nil || orig.GetDeletionTimestamp() == nil || !slices.Contains(orig.GetFinalizers(), mirror.FinalizerDeleteCopies) {
			t.Errorf("hub-a's %s: %s; want it being deleted and held by %s", name, describe(orig), mirror.FinalizerDeleteCopies)
		}
	}
	return out
}

// condition returns s's condition of type condType, or nil.
func condition(s failoverv1alpha1.ReplicationConfigStatus, condType string) *metav1.Condition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == condType {
			return &s.Conditions[i]
		}
	}
	return nil
}
