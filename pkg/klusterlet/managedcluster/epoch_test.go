package managedcluster

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openshift/library-go/pkg/controller/factory"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

func TestDecideEpoch(t *testing.T) {
	switched := failoverv1alpha1.AgentEpoch{Number: 5, From: "primary"}
	restarted := failoverv1alpha1.AgentEpoch{Number: 5}
	cases := []struct {
		name      string
		current   string
		session   failoverv1alpha1.AgentEpoch
		want      failoverv1alpha1.AgentEpoch
		wantWrite bool
	}{
		{name: "absent: rule 1 writes the session's", session: switched, want: switched, wantWrite: true},
		{name: "unparsable: rule 1", current: "five", session: switched, want: switched, wantWrite: true},
		{name: "zero is invalid: rule 1", current: "epoch=0", session: restarted, want: restarted, wantWrite: true},
		{name: "lower (a hub left before, or restored): rule 1", current: "epoch=3,from=hub-b", session: switched, want: switched, wantWrite: true},
		{name: "lower on a restart onto the same hub: rule 1", current: "epoch=4", session: restarted, want: restarted, wantWrite: true},
		{name: "equal: rule 2", current: "epoch=5,from=primary", session: switched, want: switched},
		{name: "equal, written by the previous process: rule 2 keeps its from", current: "epoch=5,from=hub-b", session: restarted, want: restarted},
		{name: "higher without a switch: rule 3 adopts", current: "epoch=9,from=hub-b", session: restarted,
			want: failoverv1alpha1.AgentEpoch{Number: 9, From: "hub-b"}},
		{name: "higher on a switch: rule 4 goes above", current: "epoch=9,from=hub-b", session: switched,
			want: failoverv1alpha1.AgentEpoch{Number: 10, From: "primary"}, wantWrite: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, write := DecideEpoch(tc.current, tc.session)
			if got != tc.want || write != tc.wantWrite {
				t.Errorf("DecideEpoch(%q, %v) = %v, %t; want %v, %t", tc.current, tc.session, got, write, tc.want, tc.wantWrite)
			}
		})
	}
}

// TestCreatingControllerRecordsEpoch: the main controllers' creating controller records the session epoch on
// the ManagedCluster once the identity is verified, never while it is not, reports what it recorded or adopted,
// and records it again (with a warning) when the hub loses it.
func TestCreatingControllerRecordsEpoch(t *testing.T) {
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster,
		Annotations: map[string]string{"keep": "me", failoverv1alpha1.AnnotationEpoch: "epoch=2"}}}
	client := clusterfake.NewSimpleClientset(mc)
	recorder := newTestRecorder()
	syncCtx := factory.NewSyncContext("test", recorder)
	tracker := NewConflictTracker()
	var reported []failoverv1alpha1.AgentEpoch
	controller := NewManagedClusterCreatingController(CreatingOptions{
		ClusterName: testCluster, HubClusterClient: client.ClusterV1(), ResyncInterval: time.Minute, Recorder: recorder,
		ConflictTracker: tracker, Epoch: failoverv1alpha1.AgentEpoch{Number: 3, From: "hub-b"},
		EpochRecorded: func(e failoverv1alpha1.AgentEpoch) { reported = append(reported, e) },
	})
	annotation := func() string {
		got, err := client.ClusterV1().ManagedClusters().Get(context.Background(), testCluster, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Annotations["keep"] != "me" {
			t.Errorf("other annotations lost: %v", got.Annotations)
		}
		return got.Annotations[failoverv1alpha1.AnnotationEpoch]
	}
	sync := func() {
		t.Helper()
		if err := controller.Sync(context.Background(), syncCtx); err != nil {
			t.Fatalf("sync: %v", err)
		}
	}

	sync()
	if got := annotation(); got != "epoch=2" {
		t.Fatalf("epoch recorded before the identity was verified: %q", got)
	}
	tracker.Clear() // verified
	sync()
	if got := annotation(); got != "epoch=3,from=hub-b" {
		t.Fatalf("epoch = %q, want epoch=3,from=hub-b", got)
	}
	sync() // recorded: no second write
	if diff := cmp.Diff([]string{ReasonEpochRecorded}, eventReasons(recorder)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// The hub restored from a backup taken before this session: recorded again, with a warning.
	restored, _ := client.ClusterV1().ManagedClusters().Get(context.Background(), testCluster, metav1.GetOptions{})
	restored.Annotations[failoverv1alpha1.AnnotationEpoch] = "epoch=1"
	if _, err := client.ClusterV1().ManagedClusters().Update(context.Background(), restored, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	sync()
	if got := annotation(); got != "epoch=3,from=hub-b" {
		t.Fatalf("epoch after the restore = %q, want epoch=3,from=hub-b", got)
	}
	if diff := cmp.Diff([]string{ReasonEpochRecorded, ReasonEpochRestored}, eventReasons(recorder)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// Another writer went higher (the agent lost its record, then switched here): the switch goes above it.
	higher, _ := client.ClusterV1().ManagedClusters().Get(context.Background(), testCluster, metav1.GetOptions{})
	higher.Annotations[failoverv1alpha1.AnnotationEpoch] = "epoch=7"
	if _, err := client.ClusterV1().ManagedClusters().Update(context.Background(), higher, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	sync()
	if got := annotation(); got != "epoch=8,from=hub-b" {
		t.Fatalf("epoch = %q, want epoch=8,from=hub-b", got)
	}
	want := []failoverv1alpha1.AgentEpoch{{Number: 8, From: "hub-b"}}
	if diff := cmp.Diff(want, reported); diff != "" {
		t.Errorf("reported epochs (-want +got):\n%s", diff)
	}
}

// TestCreatingControllerBootstrapRecordsNoEpoch: without the identity guard (the bootstrap phase) nothing is
// written for the epoch.
func TestCreatingControllerBootstrapRecordsNoEpoch(t *testing.T) {
	client := clusterfake.NewSimpleClientset(&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster}})
	recorder := newTestRecorder()
	controller := NewManagedClusterCreatingController(CreatingOptions{
		ClusterName: testCluster, HubClusterClient: client.ClusterV1(), ResyncInterval: time.Minute, Recorder: recorder,
		Epoch: failoverv1alpha1.AgentEpoch{Number: 1},
	})
	if err := controller.Sync(context.Background(), factory.NewSyncContext("test", recorder)); err != nil {
		t.Fatal(err)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() != "get" {
			t.Errorf("bootstrap phase wrote: %s", a.GetVerb())
		}
	}
}

// TestCreatingControllerAdoptsOnlyAVerifiedEpoch: a higher epoch on a ManagedCluster not verified to be this
// spoke's (another spoke of the same name) is not adopted; once verified it is.
func TestCreatingControllerAdoptsOnlyAVerifiedEpoch(t *testing.T) {
	client := clusterfake.NewSimpleClientset(&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster,
		Annotations: map[string]string{failoverv1alpha1.AnnotationEpoch: "epoch=9,from=hub-b"}}})
	recorder := newTestRecorder()
	syncCtx := factory.NewSyncContext("test", recorder)
	tracker := NewConflictTracker()
	tracker.Set("another spoke")
	var reported []failoverv1alpha1.AgentEpoch
	controller := NewManagedClusterCreatingController(CreatingOptions{
		ClusterName: testCluster, HubClusterClient: client.ClusterV1(), ResyncInterval: time.Minute, Recorder: recorder,
		ConflictTracker: tracker, Epoch: failoverv1alpha1.AgentEpoch{Number: 1},
		EpochRecorded: func(e failoverv1alpha1.AgentEpoch) { reported = append(reported, e) },
	})
	if err := controller.Sync(context.Background(), syncCtx); err != nil {
		t.Fatal(err)
	}
	if len(reported) != 0 {
		t.Fatalf("adopted %v from a ManagedCluster in conflict", reported)
	}
	tracker.Clear()
	if err := controller.Sync(context.Background(), syncCtx); err != nil {
		t.Fatal(err)
	}
	if want := []failoverv1alpha1.AgentEpoch{{Number: 9, From: "hub-b"}}; !cmp.Equal(want, reported) {
		t.Errorf("reported %v, want %v", reported, want)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() != "get" {
			t.Errorf("adoption wrote: %s", a.GetVerb())
		}
	}
}
