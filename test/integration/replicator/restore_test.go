package replicator_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/replication"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// restoreWatch is how long TestHubRestoredFromABackup watches both hubs once the restored hub has the newer
// state: several syncs of every key (the hubs are probed every 2 s) and a lease renewal of the agent on hub A.
const restoreWatch = 45 * time.Second

// TestHubRestoredFromABackup: hub A, the source of a cluster whose agent runs on a spoke, and of the hub-wide
// objects (the first hub), is restored from a cold backup of its etcd data directory. Since the backup, a
// ManifestWork was edited on A and another made there, as was a Placement, and the replicator copied all three
// to hub B: those copies are now the only record of the newer state. The restored hub must not become the source
// of its older state: B's copies are neither deleted (absence is no delete) nor rolled back (the restored work
// has a lower generation than the one B's copy was made from). The edited work's newer state is written back
// onto A, and the two objects A lost are made again there from B's copies, made in a later incarnation of A than
// its restored marker shows (HubRestored, WrittenBack), so that A's spoke gets them again; a user's next edit on
// A is copied to B at once (the write-back raised the work's lineage above the copy's). The replicator is
// stopped during the restore and started again: what it knows of A's incarnation comes from the hubs' markers.
// A user's delete on the restored hub is still a delete.
func TestHubRestoredFromABackup(t *testing.T) {
	const (
		cluster   = "restored1"
		namespace = "apps"
	)
	hubA := framework.StartHub(t, framework.HubOptions{Name: "hub-a", HubController: true, Signer: framework.SignerInProcess})
	hubBHub := framework.StartHub(t, framework.HubOptions{Name: hubB, HubController: true, Signer: framework.SignerInProcess})
	ctx := context.Background()
	spoke := framework.StartSpoke(t, framework.SpokeOptions{})
	util.EnsureAgentNamespace(t, spoke)
	util.StartAgent(t, spoke, util.AgentConfig{
		Bootstrap: hubA.BootstrapKubeconfig(),
		Mutate:    func(o *klusterlet.FailoverAgentOptions) { o.ClusterName = cluster },
	})
	util.WaitForClusterAvailable(t, hubA, cluster, 90*time.Second)
	if _, err := hubA.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	createWork(t, hubA, configMapWork(t, cluster, "edited", map[string]string{"v": "before the backup"}))

	r := setUpReplicator(t, hubBHub, failoverv1alpha1.ReplicationConfigSpec{},
		namedHub{name: "hub-a", hub: hubA}, namedHub{name: hubB, hub: hubBHub})
	r.start()
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "edited", replicationTimeout, "a copy from hub-a", copiedFrom("hub-a"))
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "edited", replicationTimeout, "the original held and marked",
		func(o *unstructured.Unstructured) bool { return mirror.HasCopyOn(o, hubB) })

	// The replicator advanced A's counter before it first copied from A; nothing is copied while the backup is
	// taken, so the backup holds that counter. The objects made after the backup are copied in a later
	// incarnation: the first copy from A once an interval (2 s here) passed advances the counter again.
	atBackup := incarnationOn(t, hubA, "hub-a")
	if atBackup == 0 {
		t.Fatalf("hub-a has no incarnation marker after the replicator copied from it")
	}
	backup := hubA.BackupEtcd()
	time.Sleep(2 * time.Second)
	updateWork(t, hubA, cluster, "edited", map[string]string{"v": "after the backup"})
	createWork(t, hubA, configMapWork(t, cluster, "made-after", map[string]string{"v": "after the backup"}))
	applyUnstructured(t, hubA, failoverv1alpha1.KindPlacement, map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
		"metadata": map[string]any{"name": "made-after", "namespace": namespace},
		"spec":     map[string]any{"numberOfClusters": int64(1)},
	})
	newer := sameValues(t, map[string]string{"v": "after the backup"})
	placement := func(o *unstructured.Unstructured) bool {
		if o == nil {
			return false
		}
		n, _, _ := unstructured.NestedInt64(o.Object, "spec", "numberOfClusters")
		return n == 1
	}
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "edited", replicationTimeout, "the edit copied", newer)
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "made-after", replicationTimeout, "the new work copied", copiedFrom("hub-a"))
	waitObj(t, hubBHub, failoverv1alpha1.KindPlacement, namespace, "made-after", replicationTimeout, "the new Placement copied", copiedFrom("hub-a"))
	for _, k := range []failoverv1alpha1.ReplicatedKind{failoverv1alpha1.KindManifestWork, failoverv1alpha1.KindPlacement} {
		ns := map[failoverv1alpha1.ReplicatedKind]string{failoverv1alpha1.KindManifestWork: cluster, failoverv1alpha1.KindPlacement: namespace}[k]
		if obj, err := getObj(hubBHub, mustKind(k), ns, "made-after"); err != nil || mirror.SourceIncarnation(obj).N <= atBackup {
			t.Fatalf("hub-b's %s made-after records incarnation %+v of hub-a (err %v), want one after %d, the backup's", k, mirror.SourceIncarnation(obj), err, atBackup)
		}
	}

	// The replicator is stopped while A is restored, so that the restored state can be checked before it acts;
	// started again, it knows nothing of A but what the hubs' markers and the copies say.
	r.stop()
	start := time.Now()
	hubA.RestoreEtcd(backup)
	if obj, err := getObj(hubA, mustKind(failoverv1alpha1.KindManifestWork), cluster, "edited"); err != nil || !sameValues(t, map[string]string{"v": "before the backup"})(obj) {
		t.Fatalf("restored hub-a's edited: %s (err %v), want its state at the backup", describe(obj), err)
	}
	for _, k := range []failoverv1alpha1.ReplicatedKind{failoverv1alpha1.KindManifestWork, failoverv1alpha1.KindPlacement} {
		ns := map[failoverv1alpha1.ReplicatedKind]string{failoverv1alpha1.KindManifestWork: cluster, failoverv1alpha1.KindPlacement: namespace}[k]
		if obj, err := getObj(hubA, mustKind(k), ns, "made-after"); err != nil || obj != nil {
			t.Fatalf("restored hub-a holds %s %s/made-after: %s (err %v); the backup was taken before it was made", k, ns, describe(obj), err)
		}
	}
	r.start()
	r.waitStatus(replicationTimeout, "hub-a reachable and synced again", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		return hubStatus(s, "hub-a").Reachable && hubStatus(s, "hub-a").Synced
	})
	synced := time.Since(start)

	// The newer state of the edited work is written back onto A, and what A lost is made again there.
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "edited", replicationTimeout, "the newer state written back onto hub-a", newer)
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "made-after", replicationTimeout, "the lost work made again on hub-a",
		func(o *unstructured.Unstructured) bool {
			return newer(o) && !mirror.IsCopy(o) && slices.Contains(o.GetFinalizers(), mirror.FinalizerDeleteCopies)
		})
	waitObj(t, hubA, failoverv1alpha1.KindPlacement, namespace, "made-after", replicationTimeout, "the lost Placement made again on hub-a", placement)
	written := time.Since(start)

	// The agent renews its lease on hub A meanwhile: A stays the cluster's source, and B keeps the newer state.
	checks := 0
	for deadline := time.Now().Add(restoreWatch); time.Now().Before(deadline); checks++ {
		for _, c := range []struct {
			kind      failoverv1alpha1.ReplicatedKind
			namespace string
			name      string
			want      func(*unstructured.Unstructured) bool
		}{
			{failoverv1alpha1.KindManifestWork, cluster, "edited", newer},
			{failoverv1alpha1.KindManifestWork, cluster, "made-after", newer},
			{failoverv1alpha1.KindPlacement, namespace, "made-after", placement},
		} {
			for _, h := range []*framework.Hub{hubA, hubBHub} {
				obj, err := getObj(h, mustKind(c.kind), c.namespace, c.name)
				if err != nil || obj == nil || obj.GetDeletionTimestamp() != nil || !c.want(obj) {
					t.Fatalf("hub %s's %s %s/%s after hub-a's restore: %s (err %v), want the state after the backup",
						h.Name, c.kind, c.namespace, c.name, describe(obj), err)
				}
			}
		}
		time.Sleep(3 * time.Second)
	}

	expectEvent(t, r, replication.ReasonHubRestored, "hub hub-a shows incarnation")
	expectEvent(t, r, replication.ReasonWrittenBack, "ManifestWork/"+cluster+"/edited: hub hub-a holds an older state")
	expectEvent(t, r, replication.ReasonWrittenBack, "ManifestWork/"+cluster+"/made-after: hub hub-a lost it")
	expectEvent(t, r, replication.ReasonWrittenBack, "Placement/"+namespace+"/made-after: hub hub-a lost it")

	// A user's edit on the restored hub is copied as usual.
	updateWork(t, hubA, cluster, "edited", map[string]string{"v": "edited on the restored hub"})
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "edited", replicationTimeout, "the edit made on the restored hub-a copied",
		sameValues(t, map[string]string{"v": "edited on the restored hub"}))

	// A delete on the restored hub is seen (the original came back with the replicator's finalizer) and reaches B.
	deleteObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "edited")
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "edited", replicationTimeout, "deleted on the restored hub-a", absent)
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "edited", replicationTimeout, "the delete finished on hub-a", absent)
	t.Logf("measured: hub-a synced %s after the restore (the replicator started after it), the newer state written back and the lost objects made again after %s; %d checks over %s: nothing deleted or rolled back",
		synced.Round(time.Second), written.Round(time.Second), checks, restoreWatch)
}

// TestStandbyThatLostItsCopies: hub B, a standby of the cluster, loses its copy of a ManifestWork (here deleted by
// its admin under the fence's override; a namespace deleted or restored does the same), and the cluster then
// moves to B while hub A is down. B's missing copy is no delete: when A returns, A's original, which lists B in
// has-copies, is not deleted, and the work is written back to B from it, so the cluster, now on B, keeps it. The
// copy is lost while the replicator is down (it finds it missing), or while it runs and A is down (its watch of B
// delivers the delete: `make chaos` seed 27, where such deletes were taken for a user's and deleted the
// originals). The test plays the agent by renewing the cluster's lease.
func TestStandbyThatLostItsCopies(t *testing.T) {
	for _, replicatorDown := range []bool{true, false} {
		name, cluster := "replicator running", "lost2"
		if replicatorDown {
			name, cluster = "replicator down", "lost1"
		}
		t.Run(name, func(t *testing.T) { testStandbyThatLostItsCopies(t, cluster, replicatorDown) })
	}
}

func testStandbyThatLostItsCopies(t *testing.T, cluster string, replicatorDown bool) {
	hubA, hubBHub, stopOnA, r := twoHubsLeased(t, cluster, "kept")
	defer stopOnA()
	r.start()
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "kept", replicationTimeout, "a copy from hub-a", copiedFrom("hub-a"))
	original := waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "kept", replicationTimeout, "the original marked",
		func(o *unstructured.Unstructured) bool { return mirror.HasCopyOn(o, hubB) })
	waitNamespaceMark(t, hubBHub, cluster, "hub-a")

	// B loses its copy — the replicator down, or running while A is down, so that it cannot copy it again —,
	// then the cluster moves to B while A is down.
	if replicatorDown {
		r.stop()
	} else {
		stopOnA()
		hubA.StopAPIServer()
	}
	refence := unfence(t, hubBHub, cluster)
	deleteObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "kept")
	refence()
	if replicatorDown {
		stopOnA()
		hubA.StopAPIServer()
	} else {
		// Time for the replicator's watch of B to deliver the delete (a watch event on loopback takes
		// milliseconds). The case needs the delete seen live; one not seen yet would make it the other subtest's,
		// which passes either way: nothing observable outside the replicator tells the two apart.
		time.Sleep(2 * time.Second)
	}
	stopOnB := keepRenewing(t, hubBHub, cluster, 3*time.Second)
	defer stopOnB()
	if replicatorDown {
		r.start()
	}
	r.waitStatus(replicationTimeout, "hub-b the cluster's source", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		return hubStatus(s, hubB).SourceClusters == 1
	})

	// A returns: its original stays, and B gets the work again.
	hubA.StartAPIServer()
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "kept", replicationTimeout, "written back from hub-a's original",
		func(o *unstructured.Unstructured) bool {
			return o != nil && o.GetDeletionTimestamp() == nil && o.GetAnnotations()[mirror.AnnotationSourceUID] == string(original.GetUID())
		})
	expectEvent(t, r, replication.ReasonWrittenBack, "ManifestWork/"+cluster+"/kept")
	for i := 0; i < 5; i++ {
		obj, err := getObj(hubA, mustKind(failoverv1alpha1.KindManifestWork), cluster, "kept")
		if err != nil || obj == nil || obj.GetDeletionTimestamp() != nil || obj.GetUID() != original.GetUID() {
			t.Fatalf("hub-a's original kept after the cluster moved to hub-b, which had lost its copy: %s (err %v), want it there", describe(obj), err)
		}
		time.Sleep(3 * time.Second)
	}
}

// TestStandbyRestoredFromABackup: hub B, a standby of cluster standby1, is restored from a cold backup of its
// etcd taken before three writes on hub A, the cluster's source: an edit, a delete and a create, all three
// copied to B. The restored B holds an older copy of the edited work, none of the new one, and a copy of the
// deleted one that nobody will ever delete again: its delete reached B before the backup was put back. A's log of
// deletes made records that delete (B's own log went back with the restore): the copy goes (DeleteProven), the
// older copy is brought in step and the new work copied again, and A loses nothing and gets nothing back from
// B's older state. The replicator is stopped during the restore, so that the restored state can be checked
// before it acts. The test plays the agent by renewing the cluster's lease on A.
func TestStandbyRestoredFromABackup(t *testing.T) {
	const cluster = "standby1"
	hubA, hubBHub, stopOnA, r := twoHubsLeased(t, cluster, "kept")
	defer stopOnA()
	before := map[string]string{"v": "before the backup"}
	createWork(t, hubA, configMapWork(t, cluster, "edited", before))
	createWork(t, hubA, configMapWork(t, cluster, "deleted", before))
	r.start()
	for _, name := range []string{"kept", "edited", "deleted"} {
		waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, name, replicationTimeout, "a copy from hub-a", copiedFrom("hub-a"))
	}
	waitNamespaceMark(t, hubBHub, cluster, "hub-a")
	backup := hubBHub.BackupEtcd()

	after := map[string]string{"v": "after the backup"}
	updateWork(t, hubA, cluster, "edited", after)
	deleteObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "deleted")
	createWork(t, hubA, configMapWork(t, cluster, "made-after", after))
	newer := sameValues(t, after)
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "edited", replicationTimeout, "the edit copied", newer)
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "deleted", replicationTimeout, "the delete copied", absent)
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "deleted", replicationTimeout, "the delete finished on hub-a", absent)
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "made-after", replicationTimeout, "the new work copied", copiedFrom("hub-a"))

	r.stop()
	hubBHub.RestoreEtcd(backup)
	for name, want := range map[string]func(*unstructured.Unstructured) bool{
		"edited": sameValues(t, before), "deleted": copiedFrom("hub-a"), "made-after": absent,
	} {
		if obj, err := getObj(hubBHub, mustKind(failoverv1alpha1.KindManifestWork), cluster, name); err != nil || !want(obj) {
			t.Fatalf("restored hub-b's %s: %s (err %v), want its state at the backup", name, describe(obj), err)
		}
	}
	start := time.Now()
	r.start()

	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "deleted", replicationTimeout, "the copy of the deleted work deleted on the restored hub-b", absent)
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "edited", replicationTimeout, "the older copy brought in step", newer)
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "made-after", replicationTimeout, "the new work copied again", copiedFrom("hub-a"))
	reconciled := time.Since(start)
	// The copy remains of a delete hub-a logged.
	expectEvent(t, r, replication.ReasonDeleteProven, "ManifestWork/"+cluster+"/deleted: ")

	// A keeps what it holds, and nothing of B's older state comes back to it.
	checks := 0
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); checks++ {
		for _, h := range []*framework.Hub{hubA, hubBHub} {
			for name, want := range map[string]func(*unstructured.Unstructured) bool{
				"kept": sameValues(t, map[string]string{"v": "1"}), "edited": newer, "made-after": newer, "deleted": absent,
			} {
				obj, err := getObj(h, mustKind(failoverv1alpha1.KindManifestWork), cluster, name)
				if err != nil || !want(obj) || (obj != nil && obj.GetDeletionTimestamp() != nil) {
					t.Fatalf("hub %s's %s after hub-b's restore: %s (err %v), want the state after the backup", h.Name, name, describe(obj), err)
				}
			}
		}
		time.Sleep(3 * time.Second)
	}
	if written := r.events(replication.ReasonWrittenBack); len(written) > 0 {
		t.Errorf("WrittenBack events %q: nothing of the restored standby's older state may reach hub-a", written)
	}
	t.Logf("measured: the restored hub-b in step %s after the replicator started (the copy of the deleted work deleted, the older copy updated, the lost copy written); %d checks of both hubs over 15 s",
		reconciled.Round(time.Second), checks)
}

// TestRestoredHubDeletesAgainWhatWasDeletedAfterItsBackup: hub A, the cluster's source, is restored twice from
// a cold backup taken before a user deleted a ManifestWork there, which brings the deleted work back on A (an
// original holding deletes, its copy on B gone). The replicator logged each delete on both hubs before it released
// it (their logs of deletes made, replication.DeleteLog), and B's log tells it that A's object was deleted: first with A restored
// as the source (the agent renews on A; the replicator stopped during the restore), the work is deleted again on
// A and never copied to B; then with A restored while the cluster is on B (A down, the cluster moved: the usual
// disaster recovery), A's work is deleted as a remnant on a standby, so that a failback to A would find nothing of
// it to run. A work nobody deleted stays on both hubs. The test plays the agent by renewing the cluster's lease.
func TestRestoredHubDeletesAgainWhatWasDeletedAfterItsBackup(t *testing.T) {
	const cluster = "deleted1"
	hubA, hubBHub, stopOnA, r := twoHubsLeased(t, cluster, "kept")
	defer stopOnA()
	mwKind := mustKind(failoverv1alpha1.KindManifestWork)
	createWork(t, hubA, configMapWork(t, cluster, "gone-1", map[string]string{"v": "1"}))
	createWork(t, hubA, configMapWork(t, cluster, "gone-2", map[string]string{"v": "2"}))
	r.start()
	for _, name := range []string{"kept", "gone-1", "gone-2"} {
		waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, name, replicationTimeout, "a copy from hub-a", copiedFrom("hub-a"))
		waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, name, replicationTimeout, "the original marked",
			func(o *unstructured.Unstructured) bool { return mirror.HasCopyOn(o, hubB) })
	}
	backup := hubA.BackupEtcd()
	deleteBoth := func(name string) {
		t.Helper()
		deleteObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, name)
		waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, name, replicationTimeout, "the delete copied", absent)
		waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, name, replicationTimeout, "the delete finished on hub-a", absent)
		for _, h := range []*framework.Hub{hubA, hubBHub} {
			cm, err := h.Kube.CoreV1().ConfigMaps(replication.DefaultMarkerNamespace).Get(context.Background(), replication.DeleteLog, metav1.GetOptions{})
			if err != nil || !strings.Contains(cm.Data[mirror.DeleteLogKey], "ManifestWork/"+cluster+"/"+name+"=") {
				t.Fatalf("hub %s's log of deletes made: %v (err %v), want the delete of %s", h.Name, cm.Data, err, name)
			}
		}
	}
	deleteBoth("gone-1")
	deleteBoth("gone-2")
	restoredOriginal := func(o *unstructured.Unstructured) bool {
		return o != nil && o.GetDeletionTimestamp() == nil && !mirror.IsCopy(o)
	}

	// Restored as the source: the agent stays on A.
	r.stop()
	hubA.RestoreEtcd(backup)
	for _, name := range []string{"gone-1", "gone-2"} {
		if obj, err := getObj(hubA, mwKind, cluster, name); err != nil || !restoredOriginal(obj) {
			t.Fatalf("restored hub-a's %s: %s (err %v), want the original back from the backup", name, describe(obj), err)
		}
	}
	r.start()
	for _, name := range []string{"gone-1", "gone-2"} {
		waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, name, replicationTimeout, "deleted again on the restored source", absent)
	}
	expectEvent(t, r, replication.ReasonDeleteProven, "ManifestWork/"+cluster+"/gone-1: the object on hub hub-a, the source, was deleted, as hub hub-b's log of deletes made")

	// Restored while the cluster is on B: A goes down, the cluster moves to B, and A comes back from the backup.
	stopOnA()
	stopOnB := keepRenewing(t, hubBHub, cluster, 3*time.Second)
	defer stopOnB()
	hubA.StopAPIServer()
	r.waitStatus(replicationTimeout, "hub-b the cluster's source", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		return hubStatus(s, hubB).SourceClusters == 1
	})
	hubA.StartAPIServer()
	r.stop()
	hubA.RestoreEtcd(backup)
	r.start()
	for _, name := range []string{"gone-1", "gone-2"} {
		waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, name, replicationTimeout, "deleted on the restored standby", absent)
	}
	expectEvent(t, r, replication.ReasonDeleteProven, "ManifestWork/"+cluster+"/gone-2: the object on hub hub-a was deleted, as hub hub-b's log of deletes made")
	for i := 0; i < 5; i++ {
		for _, h := range []*framework.Hub{hubA, hubBHub} {
			if obj, err := getObj(h, mwKind, cluster, "kept"); err != nil || obj == nil || obj.GetDeletionTimestamp() != nil {
				t.Fatalf("hub %s's kept: %s (err %v), want it there: nobody deleted it", h.Name, describe(obj), err)
			}
			for _, name := range []string{"gone-1", "gone-2"} {
				if obj, err := getObj(h, mwKind, cluster, name); err != nil || obj != nil {
					t.Fatalf("hub %s holds %s again: %s (err %v)", h.Name, name, describe(obj), err)
				}
			}
		}
		time.Sleep(3 * time.Second)
	}
}

// twoHubsLeased starts hubs A and B with OCM's hub controller, registers cluster on A (accepted, a 10 s lease that
// the test renews every 3 s, as an agent would, until stopOnA) with the ManifestWork work, and sets up the
// replicator for both hubs, its ReplicationConfig on B; it does not start it.
func twoHubsLeased(t *testing.T, cluster, work string) (hubA, hubBHub *framework.Hub, stopOnA func(), r *replicatorRun) {
	t.Helper()
	hubA = framework.StartHub(t, framework.HubOptions{Name: "hub-a", HubController: true, Signer: framework.SignerInProcess})
	hubBHub = framework.StartHub(t, framework.HubOptions{Name: hubB, HubController: true, Signer: framework.SignerInProcess})
	applyUnstructured(t, hubA, failoverv1alpha1.KindManagedCluster, map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
		"metadata": map[string]any{"name": cluster},
		"spec":     map[string]any{"hubAcceptsClient": true, "leaseDurationSeconds": int64(10)},
	})
	stopOnA = keepRenewing(t, hubA, cluster, 3*time.Second)
	createWork(t, hubA, configMapWork(t, cluster, work, map[string]string{"v": "1"}))
	r = setUpReplicator(t, hubBHub, failoverv1alpha1.ReplicationConfigSpec{},
		namedHub{name: "hub-a", hub: hubA}, namedHub{name: hubB, hub: hubBHub})
	return hubA, hubBHub, stopOnA, r
}

// TestDeleteOnTheNewSourceWhileTheReplicatorIsDown: hub A dies, the cluster moves to hub B, and the replicator
// lifts B's fence; then the replicator stops, and a user deletes B's copy of a ManifestWork. Nobody sees that
// delete happen, and A, the only other hub, was down when B became the source. B's copy held deletes before the
// fence was lifted, so the delete waits (Terminating) for the replicator: once it and A are back, A's original
// is deleted, B's copy finishes, and nothing is written back (`make chaos` seed 7: the work came back on every
// hub and the spoke). The test plays the agent by renewing the cluster's lease.
func TestDeleteOnTheNewSourceWhileTheReplicatorIsDown(t *testing.T) {
	const cluster, work = "held1", "deleted-on-b"
	hubA, hubBHub, stopOnA, r := twoHubsLeased(t, cluster, work)
	defer stopOnA()
	r.start()
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, work, replicationTimeout, "a copy from hub-a", copiedFrom("hub-a"))
	original := waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, work, replicationTimeout, "the original marked",
		func(o *unstructured.Unstructured) bool { return mirror.HasCopyOn(o, hubB) })
	waitNamespaceMark(t, hubBHub, cluster, "hub-a")

	// Hub A dies; the cluster moves to B, which the replicator makes the source and unfences.
	stopOnA()
	hubA.StopAPIServer()
	stopOnB := keepRenewing(t, hubBHub, cluster, 3*time.Second)
	defer stopOnB()
	r.waitStatus(replicationTimeout, "hub-b the cluster's source", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		return hubStatus(s, hubB).SourceClusters == 1
	})
	waitNamespaceMark(t, hubBHub, cluster, "")

	// The replicator stops; a user deletes the work on B, where the cluster is.
	r.stop()
	deleteObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, work)
	held, err := getObj(hubBHub, mustKind(failoverv1alpha1.KindManifestWork), cluster, work)
	if err != nil || held == nil || held.GetDeletionTimestamp() == nil {
		t.Fatalf("hub-b's %s after the user's delete: %s (err %v), want it held Terminating by %s until the replicator saw it",
			work, describe(held), err, mirror.FinalizerDeleteCopies)
	}

	// A and the replicator return: the delete reaches A's original, and B's copy goes.
	hubA.StartAPIServer()
	r.start()
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, work, replicationTimeout, "hub-a's original deleted",
		func(o *unstructured.Unstructured) bool { return o == nil || o.GetUID() != original.GetUID() })
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, work, replicationTimeout, "hub-b's copy gone", absent)
	for i := 0; i < 5; i++ {
		for _, h := range []*framework.Hub{hubA, hubBHub} {
			if obj, err := getObj(h, mustKind(failoverv1alpha1.KindManifestWork), cluster, work); err != nil || obj != nil {
				t.Fatalf("hub %s holds %s again after the user deleted it: %s (err %v)", h.Name, work, describe(obj), err)
			}
		}
		time.Sleep(2 * time.Second)
	}
	for _, m := range r.events(replication.ReasonWrittenBack) {
		if strings.Contains(m, work) {
			t.Errorf("WrittenBack event for the deleted work: %s", m)
		}
	}
}

// incarnationOn returns the counter of hub in h's incarnation marker (replication.IncarnationMarker; 0: none).
func incarnationOn(t *testing.T, h *framework.Hub, hub string) int64 {
	t.Helper()
	cm, err := h.Kube.CoreV1().ConfigMaps(replication.DefaultMarkerNamespace).Get(context.Background(), replication.IncarnationMarker, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0
	}
	if err != nil {
		t.Fatalf("hub %s: reading the incarnation marker: %v", h.Name, err)
	}
	n, _ := strconv.ParseInt(cm.Data[hub], 10, 64)
	return n
}

// TestStandbyRestoredFromABackupOfItsSourceDays: hub B is backed up while it is the source of cluster claimed1 (its
// namespace unmarked); the cluster moves back to A, and B, now a standby, is marked and its incarnation advanced
// after the marks. With the replicator stopped, B is restored from the backup: its namespace comes back unmarked,
// and a user's create and edit there are accepted (`make chaos` seed 16: they never reached A or the spoke). Once
// the replicator runs, it finds the restore, takes B's ManagedCluster, which holds the cluster as a source does,
// for a claim, and writes the two writes back onto A; B is marked again. The test plays the agent by renewing the
// cluster's lease.
func TestStandbyRestoredFromABackupOfItsSourceDays(t *testing.T) {
	const cluster = "claimed1"
	hubA, hubBHub, stopOnA, r := twoHubsLeased(t, cluster, "kept")
	stopped := false
	defer func() {
		if !stopped {
			stopOnA()
		}
	}()
	r.start()
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "kept", replicationTimeout, "a copy from hub-a", copiedFrom("hub-a"))

	// The cluster moves to B, where a user makes a work.
	stopOnA()
	stopped = true
	stopOnB := keepRenewing(t, hubBHub, cluster, 3*time.Second)
	r.waitStatus(replicationTimeout, "hub-b the cluster's source", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		return hubStatus(s, hubB).SourceClusters == 1
	})
	waitNamespaceMark(t, hubBHub, cluster, "")
	v1 := map[string]string{"v": "made on hub-b"}
	createWork(t, hubBHub, configMapWork(t, cluster, "on-b", v1))
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "on-b", replicationTimeout, "a copy from hub-b", copiedFrom(hubB))
	atBackup := markerCounterOn(t, hubBHub, hubB)
	backup := hubBHub.BackupEtcd()

	// Back to A: B is a standby, marked, its counter advanced after the marks, which A's marker records once the
	// replicator next copies from A.
	stopOnB()
	stopOnA = keepRenewing(t, hubA, cluster, 3*time.Second)
	stopped = false
	r.waitStatus(replicationTimeout, "hub-a the cluster's source again", func(s failoverv1alpha1.ReplicationConfigStatus) bool {
		return hubStatus(s, "hub-a").SourceClusters == 1
	})
	waitNamespaceMark(t, hubBHub, cluster, "hub-a")
	// A copy from A once an incarnation interval passed advances A's marker, which then records B's counter.
	createWork(t, hubA, configMapWork(t, cluster, "on-a", map[string]string{"v": "0"}))
	marked := int64(0)
	for i := 1; ; i++ {
		marked = markerCounterOn(t, hubBHub, hubB)
		if marked > atBackup && recordedOn(t, hubA, hubB) == marked {
			break
		}
		if i == 10 {
			t.Fatalf("hub-b's counter %d (%d at the backup), hub-a's marker records %d: want hub-b's advanced after its marks, and recorded on hub-a",
				marked, atBackup, recordedOn(t, hubA, hubB))
		}
		time.Sleep(3 * time.Second)
		updateWork(t, hubA, cluster, "on-a", map[string]string{"v": strconv.Itoa(i)})
	}
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "on-a", replicationTimeout, "a copy from hub-a", copiedFrom("hub-a"))

	r.stop()
	hubBHub.RestoreEtcd(backup)
	if restored := markerCounterOn(t, hubBHub, hubB); restored != atBackup {
		t.Fatalf("restored hub-b's counter %d, want %d, the backup's", restored, atBackup)
	}
	waitFence(t, hubBHub, cluster, false)
	v2 := map[string]string{"v": "edited on the restored hub-b"}
	updateWork(t, hubBHub, cluster, "on-b", v2)
	v3 := map[string]string{"v": "made on the restored hub-b"}
	createWork(t, hubBHub, configMapWork(t, cluster, "after-restore", v3))
	r.start()

	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "after-restore", replicationTimeout, "the create on the restored hub-b written back", sameValues(t, v3))
	waitObj(t, hubA, failoverv1alpha1.KindManifestWork, cluster, "on-b", replicationTimeout, "the edit on the restored hub-b written back", sameValues(t, v2))
	expectEvent(t, r, replication.ReasonHubRestored, "hub hub-b shows incarnation")
	expectEvent(t, r, replication.ReasonWrittenBack, "ManifestWork/"+cluster+"/after-restore: the create made on hub hub-b, restored from a backup")
	waitNamespaceMark(t, hubBHub, cluster, "hub-a")
	waitObj(t, hubBHub, failoverv1alpha1.KindManifestWork, cluster, "on-a", replicationTimeout, "the work made after the backup copied again", copiedFrom("hub-a"))
	for _, h := range []*framework.Hub{hubA, hubBHub} {
		for name, want := range map[string]map[string]string{"kept": {"v": "1"}, "on-b": v2, "after-restore": v3} {
			waitObj(t, h, failoverv1alpha1.KindManifestWork, cluster, name, replicationTimeout, "in step after the restore", sameValues(t, want))
		}
	}
}

// markerData returns the data of h's incarnation marker (nil: none).
func markerData(t *testing.T, h *framework.Hub) map[string]string {
	t.Helper()
	cm, err := h.Kube.CoreV1().ConfigMaps(replication.DefaultMarkerNamespace).Get(context.Background(), replication.IncarnationMarker, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data
}

// markerCounterOn returns hub's own counter in h's incarnation marker (0: none).
func markerCounterOn(t *testing.T, h *framework.Hub, hub string) int64 {
	t.Helper()
	n, _ := strconv.ParseInt(markerData(t, h)[hub], 10, 64)
	return n
}

// recordedOn returns the counter of hub that h's incarnation marker records ("<uid>/<counter>"; 0: none).
func recordedOn(t *testing.T, h *framework.Hub, hub string) int64 {
	t.Helper()
	_, n, _ := strings.Cut(markerData(t, h)[hub], "/")
	v, _ := strconv.ParseInt(n, 10, 64)
	return v
}
