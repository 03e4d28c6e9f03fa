package status_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned/fake"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/brake"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/hubconn"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/replication"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/status"
)

const (
	hubA = "hub-a"
	hubB = "hub-b"
	hubC = "hub-c"

	namespace = "open-cluster-management-replicator"
	name      = "replication"
)

var (
	// now has sub-second digits so that truncation to seconds shows.
	now    = time.Date(2024, 5, 1, 10, 0, 0, 789_000_000, time.UTC)
	nowSec = metav1.NewTime(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC))
	// before is an earlier transition time found in the previous status.
	before = metav1.NewTime(time.Date(2024, 4, 30, 8, 0, 0, 0, time.UTC))
)

func newRC(generation int64, kinds ...failoverv1alpha1.ReplicatedKind) *failoverv1alpha1.ReplicationConfig {
	return &failoverv1alpha1.ReplicationConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Generation: generation},
		Spec: failoverv1alpha1.ReplicationConfigSpec{
			Hubs: []failoverv1alpha1.ReplicationHub{
				{Name: hubA, KubeconfigSecret: failoverv1alpha1.KubeconfigSecretReference{Name: hubA}},
				{Name: hubB, KubeconfigSecret: failoverv1alpha1.KubeconfigSecretReference{Name: hubB}},
			},
			Kinds: kinds,
		},
	}
}

func ready(name string) status.Hub {
	return status.Hub{Name: name, Server: "https://" + name + ":6443", State: hubconn.StateReady}
}

func syncing(name string) status.Hub {
	return status.Hub{Name: name, Server: "https://" + name + ":6443", State: hubconn.StateSyncing}
}

func unreachable(name string, err error) status.Hub {
	return status.Hub{Name: name, Server: "https://" + name + ":6443", State: hubconn.StateUnreachable, Err: err}
}

func invalid(name, why string) status.Hub {
	return status.Hub{Name: name, ConfigError: why}
}

// snapshot is a controller snapshot in which every hub is caught up.
func snapshot() replication.Snapshot {
	return replication.Snapshot{
		Clusters:       3,
		SourceClusters: map[string]int{hubA: 2, hubB: 1},
		Copies:         map[string]int{hubA: 5, hubB: 7, hubC: 1},
		Conflicts:      map[string]int{hubB: 2},
		CaughtUp:       map[string]bool{hubA: true, hubB: true, hubC: true},
		KindObjects: map[failoverv1alpha1.ReplicatedKind]int{
			failoverv1alpha1.KindManagedCluster: 3, failoverv1alpha1.KindManifestWork: 4, failoverv1alpha1.KindSecret: 1,
		},
		KindConflicts: map[failoverv1alpha1.ReplicatedKind]int{failoverv1alpha1.KindManifestWork: 2},
	}
}

func condition(t *testing.T, st failoverv1alpha1.ReplicationConfigStatus, condType string) metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(st.Conditions, condType)
	if c == nil {
		t.Fatalf("condition %s missing; conditions: %+v", condType, st.Conditions)
	}
	return *c
}

var (
	errRefused = errors.New("dial tcp 10.0.0.2:6443: connect: connection refused")
	errTimeout = errors.New("context deadline exceeded")
)

func TestBuildConditions(t *testing.T) {
	type want struct {
		status  metav1.ConditionStatus
		reason  string
		message []string // substrings of the message
	}
	cases := []struct {
		name      string
		hubs      []status.Hub
		configErr string
		// identityConflicts are the snapshot's cluster names that stand for several spokes.
		identityConflicts []string
		available         want
		degraded          want
	}{
		{
			name:      "every hub ready: replicating",
			hubs:      []status.Hub{ready(hubA), ready(hubB)},
			available: want{metav1.ConditionTrue, status.ReasonReplicating, []string{"2"}},
			degraded:  want{metav1.ConditionFalse, status.ReasonReplicating, []string{"2"}},
		},
		{
			name:              "every hub ready, two names of several spokes: available, degraded naming them",
			hubs:              []status.Hub{ready(hubA), ready(hubB)},
			identityConflicts: []string{"local-cluster", "prod-1"},
			available:         want{metav1.ConditionTrue, status.ReasonReplicating, []string{"2"}},
			degraded:          want{metav1.ConditionTrue, status.ReasonClusterIdentityConflict, []string{"2 managed cluster names", "local-cluster, prod-1"}},
		},
		{
			name:              "a hub unreachable and a name of several spokes: the hub's reason, both named",
			hubs:              []status.Hub{ready(hubA), unreachable(hubB, errRefused), ready(hubC)},
			identityConflicts: []string{"local-cluster"},
			available:         want{metav1.ConditionTrue, status.ReasonHubsUnavailable, []string{hubB, "local-cluster"}},
			degraded:          want{metav1.ConditionTrue, status.ReasonHubsUnavailable, []string{hubB, "1 managed cluster names", "local-cluster"}},
		},
		{
			name:      "one of three hubs unreachable: available but degraded, message names the hub and its error",
			hubs:      []status.Hub{ready(hubA), unreachable(hubB, errRefused), ready(hubC)},
			available: want{metav1.ConditionTrue, status.ReasonHubsUnavailable, []string{hubB, errRefused.Error()}},
			degraded:  want{metav1.ConditionTrue, status.ReasonHubsUnavailable, []string{hubB, errRefused.Error()}},
		},
		{
			name:      "one of two hubs unreachable: nothing can be replicated, too few hubs ready",
			hubs:      []status.Hub{ready(hubA), unreachable(hubB, errRefused)},
			available: want{metav1.ConditionFalse, status.ReasonTooFewHubsReady, []string{"1 of 2", hubB, errRefused.Error()}},
			degraded:  want{metav1.ConditionTrue, status.ReasonTooFewHubsReady, []string{hubB, errRefused.Error()}},
		},
		{
			name:      "one hub unreachable without an error: message names the hub and its state",
			hubs:      []status.Hub{unreachable(hubA, nil), ready(hubB), ready(hubC)},
			available: want{metav1.ConditionTrue, status.ReasonHubsUnavailable, []string{hubA, string(hubconn.StateUnreachable)}},
			degraded:  want{metav1.ConditionTrue, status.ReasonHubsUnavailable, []string{hubA, string(hubconn.StateUnreachable)}},
		},
		{
			name:      "one hub syncing: not ready yet, named in the message",
			hubs:      []status.Hub{ready(hubA), syncing(hubB), ready(hubC)},
			available: want{metav1.ConditionTrue, status.ReasonHubsUnavailable, []string{hubB, string(hubconn.StateSyncing)}},
			degraded:  want{metav1.ConditionTrue, status.ReasonHubsUnavailable, []string{hubB, string(hubconn.StateSyncing)}},
		},
		{
			name:      "two of three hubs down: both named with their errors",
			hubs:      []status.Hub{unreachable(hubA, errTimeout), ready(hubB), unreachable(hubC, errRefused)},
			available: want{metav1.ConditionFalse, status.ReasonTooFewHubsReady, []string{hubA, errTimeout.Error(), hubC, errRefused.Error()}},
			degraded:  want{metav1.ConditionTrue, status.ReasonTooFewHubsReady, []string{hubA, errTimeout.Error(), hubC, errRefused.Error()}},
		},
		{
			name:      "no hub ready: unavailable, every hub named with its error",
			hubs:      []status.Hub{unreachable(hubA, errTimeout), unreachable(hubB, errRefused)},
			available: want{metav1.ConditionFalse, status.ReasonTooFewHubsReady, []string{hubA, errTimeout.Error(), hubB, errRefused.Error()}},
			degraded:  want{metav1.ConditionTrue, status.ReasonTooFewHubsReady, []string{hubA, errTimeout.Error(), hubB, errRefused.Error()}},
		},
		{
			name:      "no hub ready, both syncing",
			hubs:      []status.Hub{syncing(hubA), syncing(hubB)},
			available: want{metav1.ConditionFalse, status.ReasonTooFewHubsReady, []string{hubA, hubB}},
			degraded:  want{metav1.ConditionTrue, status.ReasonTooFewHubsReady, []string{hubA, hubB}},
		},
		{
			name:      "invalid spec: unavailable and degraded with the spec error, whatever the hubs",
			hubs:      []status.Hub{ready(hubA), ready(hubB)},
			configErr: `spec.hubs[1].name: Duplicate value: "hub-a"`,
			available: want{metav1.ConditionFalse, status.ReasonInvalidConfiguration, []string{`spec.hubs[1].name: Duplicate value: "hub-a"`}},
			degraded:  want{metav1.ConditionTrue, status.ReasonInvalidConfiguration, []string{`spec.hubs[1].name: Duplicate value: "hub-a"`}},
		},
		{
			name:      "invalid spec without hubs",
			configErr: "spec.hubs: Required value",
			available: want{metav1.ConditionFalse, status.ReasonInvalidConfiguration, []string{"spec.hubs: Required value"}},
			degraded:  want{metav1.ConditionTrue, status.ReasonInvalidConfiguration, []string{"spec.hubs: Required value"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := newRC(4)
			snap := snapshot()
			snap.IdentityConflicts = tc.identityConflicts
			got := status.Build(rc, tc.hubs, snap, tc.configErr, now)
			if got.ObservedGeneration != 4 {
				t.Errorf("ObservedGeneration = %d, want 4", got.ObservedGeneration)
			}
			if len(got.Conditions) != 3 {
				t.Errorf("got %d conditions, want 3 (Available, Degraded, DeletesHeld): %+v", len(got.Conditions), got.Conditions)
			}
			if held := condition(t, got, failoverv1alpha1.ReplicationConditionDeletesHeld); held.Status != metav1.ConditionFalse || held.Reason != status.ReasonNoDeletesHeld {
				t.Errorf("DeletesHeld = %s/%s, want False/%s without an engaged brake", held.Status, held.Reason, status.ReasonNoDeletesHeld)
			}
			for _, c := range []struct {
				condType string
				want     want
			}{{failoverv1alpha1.ReplicationConditionAvailable, tc.available}, {failoverv1alpha1.ReplicationConditionDegraded, tc.degraded}} {
				cond := condition(t, got, c.condType)
				if cond.Status != c.want.status || cond.Reason != c.want.reason {
					t.Errorf("%s = %s/%s, want %s/%s (message %q)", c.condType, cond.Status, cond.Reason, c.want.status, c.want.reason, cond.Message)
				}
				for _, s := range c.want.message {
					if !strings.Contains(cond.Message, s) {
						t.Errorf("%s message %q does not contain %q", c.condType, cond.Message, s)
					}
				}
				if cond.ObservedGeneration != 4 {
					t.Errorf("%s observedGeneration = %d, want 4", c.condType, cond.ObservedGeneration)
				}
				if !cond.LastTransitionTime.Equal(&nowSec) {
					t.Errorf("%s lastTransitionTime = %v, want %v (now truncated to seconds)", c.condType, cond.LastTransitionTime, nowSec)
				}
			}
		})
	}
}

// A hub whose kubeconfig Secret cannot be used is reported in the conditions' message with its error.
func TestBuildConditionsNameHubWithInvalidKubeconfig(t *testing.T) {
	why := `kubeconfigSecret "hub-b" has no key "kubeconfig" (keys: config)`
	got := status.Build(newRC(1), []status.Hub{ready(hubA), invalid(hubB, why)}, snapshot(), "", now)
	for _, condType := range []string{failoverv1alpha1.ReplicationConditionAvailable, failoverv1alpha1.ReplicationConditionDegraded} {
		cond := condition(t, got, condType)
		if !strings.Contains(cond.Message, hubB) || !strings.Contains(cond.Message, why) {
			t.Errorf("%s message %q does not name %s and %q", condType, cond.Message, hubB, why)
		}
	}
	if cond := condition(t, got, failoverv1alpha1.ReplicationConditionDegraded); cond.Status != metav1.ConditionTrue {
		t.Errorf("Degraded = %s, want True", cond.Status)
	}
}

// Documented behaviour: ReasonInvalidConfiguration is "the spec or a hub's kubeconfig Secret is invalid", and the API
// says Available is True only while "every hub's kubeconfig loads". A hub with a ConfigError should therefore
// make Available False with reason InvalidConfiguration (and Degraded True, same reason), even when the other
// hubs are ready.
func TestBuildHubKubeconfigInvalidIsReportedAsInvalidConfiguration(t *testing.T) {
	why := `kubeconfigSecret "hub-b": secret "hub-b" not found`
	for _, tc := range []struct {
		name string
		hubs []status.Hub
	}{
		{name: "the only other hub ready", hubs: []status.Hub{ready(hubA), invalid(hubB, why)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := status.Build(newRC(1), tc.hubs, snapshot(), "", now)
			available := condition(t, got, failoverv1alpha1.ReplicationConditionAvailable)
			degraded := condition(t, got, failoverv1alpha1.ReplicationConditionDegraded)
			if available.Status != metav1.ConditionFalse || available.Reason != status.ReasonInvalidConfiguration {
				t.Errorf("Available = %s/%s, want False/%s (message %q)", available.Status, available.Reason, status.ReasonInvalidConfiguration, available.Message)
			}
			if degraded.Status != metav1.ConditionTrue || degraded.Reason != status.ReasonInvalidConfiguration {
				t.Errorf("Degraded = %s/%s, want True/%s (message %q)", degraded.Status, degraded.Reason, status.ReasonInvalidConfiguration, degraded.Message)
			}
		})
	}
}

func TestBuildHubs(t *testing.T) {
	transition := time.Date(2024, 5, 1, 9, 30, 15, 999_000_000, time.UTC)
	transitionSec := metav1.NewTime(time.Date(2024, 5, 1, 9, 30, 15, 0, time.UTC))
	notCaughtUp := snapshot()
	notCaughtUp.CaughtUp[hubB] = false
	long := strings.Repeat("x", 2000)

	cases := []struct {
		name          string
		hubs          []status.Hub
		snap          replication.Snapshot
		prevHubs      []failoverv1alpha1.ReplicationHubStatus
		want          []failoverv1alpha1.ReplicationHubStatus
		wantReachable int32
	}{
		{
			name: "ready and caught up: reachable and synced, counts from the snapshot",
			hubs: []status.Hub{ready(hubA), ready(hubB)},
			snap: snapshot(),
			want: []failoverv1alpha1.ReplicationHubStatus{
				{Name: hubA, Server: "https://hub-a:6443", Reachable: true, Synced: true, SourceClusters: 2, Copies: 5},
				{Name: hubB, Server: "https://hub-b:6443", Reachable: true, Synced: true, SourceClusters: 1, Copies: 7, Conflicts: 2},
			},
			wantReachable: 2,
		},
		{
			name: "ready but not caught up: reachable, not synced",
			hubs: []status.Hub{ready(hubA), ready(hubB)},
			snap: notCaughtUp,
			want: []failoverv1alpha1.ReplicationHubStatus{
				{Name: hubA, Server: "https://hub-a:6443", Reachable: true, Synced: true, SourceClusters: 2, Copies: 5},
				{Name: hubB, Server: "https://hub-b:6443", Reachable: true, Synced: false, SourceClusters: 1, Copies: 7, Conflicts: 2},
			},
			wantReachable: 2,
		},
		{
			name: "syncing: reachable, never synced even when the snapshot says caught up",
			hubs: []status.Hub{ready(hubA), syncing(hubB)},
			snap: snapshot(),
			want: []failoverv1alpha1.ReplicationHubStatus{
				{Name: hubA, Server: "https://hub-a:6443", Reachable: true, Synced: true, SourceClusters: 2, Copies: 5},
				{Name: hubB, Server: "https://hub-b:6443", Reachable: true, Synced: false, SourceClusters: 1, Copies: 7, Conflicts: 2},
			},
			wantReachable: 2,
		},
		{
			name: "unreachable: not reachable, not synced, last error",
			hubs: []status.Hub{ready(hubA), unreachable(hubB, errRefused)},
			snap: snapshot(),
			want: []failoverv1alpha1.ReplicationHubStatus{
				{Name: hubA, Server: "https://hub-a:6443", Reachable: true, Synced: true, SourceClusters: 2, Copies: 5},
				{Name: hubB, Server: "https://hub-b:6443", Reachable: false, Synced: false, SourceClusters: 1, Copies: 7, Conflicts: 2, LastError: errRefused.Error()},
			},
			wantReachable: 1,
		},
		{
			name: "unreachable without error: no last error",
			hubs: []status.Hub{unreachable(hubA, nil), ready(hubB)},
			snap: snapshot(),
			want: []failoverv1alpha1.ReplicationHubStatus{
				{Name: hubA, Server: "https://hub-a:6443", SourceClusters: 2, Copies: 5},
				{Name: hubB, Server: "https://hub-b:6443", Reachable: true, Synced: true, SourceClusters: 1, Copies: 7, Conflicts: 2},
			},
			wantReachable: 1,
		},
		{
			name: "config error: last error is the config error; state ignored",
			hubs: []status.Hub{
				ready(hubA),
				{Name: hubB, State: hubconn.StateReady, Err: errRefused, ConfigError: "kubeconfigSecret \"hub-b\": not found"},
			},
			snap: snapshot(),
			want: []failoverv1alpha1.ReplicationHubStatus{
				{Name: hubA, Server: "https://hub-a:6443", Reachable: true, Synced: true, SourceClusters: 2, Copies: 5},
				{Name: hubB, Reachable: false, Synced: false, SourceClusters: 1, Copies: 7, Conflicts: 2, LastError: "kubeconfigSecret \"hub-b\": not found"},
			},
			wantReachable: 1,
		},
		{
			name: "hub absent from the snapshot: zero counts, not synced",
			hubs: []status.Hub{ready(hubA), ready("hub-new")},
			snap: snapshot(),
			want: []failoverv1alpha1.ReplicationHubStatus{
				{Name: hubA, Server: "https://hub-a:6443", Reachable: true, Synced: true, SourceClusters: 2, Copies: 5},
				{Name: "hub-new", Server: "https://hub-new:6443", Reachable: true},
			},
			wantReachable: 2,
		},
		{
			name: "spec order kept",
			hubs: []status.Hub{ready(hubC), ready(hubB), ready(hubA)},
			snap: snapshot(),
			want: []failoverv1alpha1.ReplicationHubStatus{
				{Name: hubC, Server: "https://hub-c:6443", Reachable: true, Synced: true, Copies: 1},
				{Name: hubB, Server: "https://hub-b:6443", Reachable: true, Synced: true, SourceClusters: 1, Copies: 7, Conflicts: 2},
				{Name: hubA, Server: "https://hub-a:6443", Reachable: true, Synced: true, SourceClusters: 2, Copies: 5},
			},
			wantReachable: 3,
		},
		{
			name: "long error truncated to 1024 characters",
			hubs: []status.Hub{ready(hubA), unreachable(hubB, errors.New(long))},
			snap: snapshot(),
			want: []failoverv1alpha1.ReplicationHubStatus{
				{Name: hubA, Server: "https://hub-a:6443", Reachable: true, Synced: true, SourceClusters: 2, Copies: 5},
				{Name: hubB, Server: "https://hub-b:6443", SourceClusters: 1, Copies: 7, Conflicts: 2, LastError: long[:1021] + "..."},
			},
			wantReachable: 1,
		},
		{
			name: "transition time truncated to seconds; previous one kept when the hub gives none; nil when neither",
			hubs: []status.Hub{
				with(ready(hubA), func(h *status.Hub) { h.LastTransition = transition }),
				ready(hubB),
				ready(hubC),
			},
			snap: snapshot(),
			prevHubs: []failoverv1alpha1.ReplicationHubStatus{
				{Name: hubA, LastTransitionTime: &before},
				{Name: hubB, LastTransitionTime: &before},
			},
			want: []failoverv1alpha1.ReplicationHubStatus{
				{Name: hubA, Server: "https://hub-a:6443", Reachable: true, Synced: true, SourceClusters: 2, Copies: 5, LastTransitionTime: &transitionSec},
				{Name: hubB, Server: "https://hub-b:6443", Reachable: true, Synced: true, SourceClusters: 1, Copies: 7, Conflicts: 2, LastTransitionTime: &before},
				{Name: hubC, Server: "https://hub-c:6443", Reachable: true, Synced: true, Copies: 1},
			},
			wantReachable: 3,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := newRC(1)
			rc.Status.Hubs = tc.prevHubs
			got := status.Build(rc, tc.hubs, tc.snap, "", now)
			if diff := cmp.Diff(tc.want, got.Hubs); diff != "" {
				t.Errorf("Hubs mismatch (-want +got):\n%s", diff)
			}
			if got.ReachableHubs != tc.wantReachable {
				t.Errorf("ReachableHubs = %d, want %d", got.ReachableHubs, tc.wantReachable)
			}
			if got.Clusters != int32(tc.snap.Clusters) {
				t.Errorf("Clusters = %d, want %d", got.Clusters, tc.snap.Clusters)
			}
		})
	}
}

func TestBuildKinds(t *testing.T) {
	all := make([]failoverv1alpha1.ReplicatedKindStatus, 0, len(failoverv1alpha1.AllReplicatedKinds))
	for _, k := range failoverv1alpha1.AllReplicatedKinds {
		all = append(all, failoverv1alpha1.ReplicatedKindStatus{Kind: string(k), Objects: int32(snapshot().KindObjects[k]), Conflicts: int32(snapshot().KindConflicts[k])})
	}
	cases := []struct {
		name   string
		kinds  []failoverv1alpha1.ReplicatedKind
		custom []failoverv1alpha1.CustomKind
		want   []failoverv1alpha1.ReplicatedKindStatus
	}{
		{name: "empty spec.kinds: every kind, in AllReplicatedKinds order", want: all},
		{
			name:  "spec.kinds: those kinds, in AllReplicatedKinds order, with their counts",
			kinds: []failoverv1alpha1.ReplicatedKind{failoverv1alpha1.KindManifestWork, failoverv1alpha1.KindManagedCluster},
			want: []failoverv1alpha1.ReplicatedKindStatus{
				{Kind: string(failoverv1alpha1.KindManagedCluster), Objects: 3},
				{Kind: string(failoverv1alpha1.KindManifestWork), Objects: 4, Conflicts: 2},
			},
		},
		{
			name:  "a kind without objects is listed with zero counts",
			kinds: []failoverv1alpha1.ReplicatedKind{failoverv1alpha1.KindPlacement},
			want:  []failoverv1alpha1.ReplicatedKindStatus{{Kind: string(failoverv1alpha1.KindPlacement)}},
		},
		{
			name:  "custom kinds follow, by name, with their counts",
			kinds: []failoverv1alpha1.ReplicatedKind{failoverv1alpha1.KindPlacement},
			custom: []failoverv1alpha1.CustomKind{
				{Group: "example.com", Version: "v1", Resource: "widgets", Scope: failoverv1alpha1.ScopeHubWide},
				{Version: "v1", Resource: "serviceaccounts", Namespaced: true, Scope: failoverv1alpha1.ScopeClusterByNamespace},
			},
			want: []failoverv1alpha1.ReplicatedKindStatus{
				{Kind: string(failoverv1alpha1.KindPlacement)},
				{Kind: "widgets.example.com", Objects: 5, Conflicts: 1},
				{Kind: "serviceaccounts"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := newRC(1, tc.kinds...)
			rc.Spec.CustomKinds = tc.custom
			snap := snapshot()
			snap.KindObjects["widgets.example.com"] = 5
			snap.KindConflicts["widgets.example.com"] = 1
			got := status.Build(rc, []status.Hub{ready(hubA), ready(hubB)}, snap, "", now)
			if diff := cmp.Diff(tc.want, got.Kinds); diff != "" {
				t.Errorf("Kinds mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildInvalidConfigDropsHubsAndKinds(t *testing.T) {
	rc := newRC(9)
	got := status.Build(rc, []status.Hub{ready(hubA), ready(hubB)}, snapshot(), "spec.hubs: Required value", now)
	if got.Hubs != nil || got.Kinds != nil || got.ReachableHubs != 0 || got.Clusters != 0 {
		t.Errorf("invalid config: hubs %v, kinds %v, reachableHubs %d, clusters %d; want none", got.Hubs, got.Kinds, got.ReachableHubs, got.Clusters)
	}
	if got.ObservedGeneration != 9 {
		t.Errorf("ObservedGeneration = %d, want 9", got.ObservedGeneration)
	}
	long := strings.Repeat("e", 3000)
	got = status.Build(rc, nil, replication.Snapshot{}, long, now)
	for _, c := range got.Conditions {
		if c.Type == failoverv1alpha1.ReplicationConditionDeletesHeld {
			continue
		}
		if len(c.Message) != 1024 || !strings.HasSuffix(c.Message, "...") {
			t.Errorf("%s message has %d characters, want 1024 ending in ...", c.Type, len(c.Message))
		}
	}
}

func cond(condType string, st metav1.ConditionStatus, reason string, at metav1.Time, generation int64) metav1.Condition {
	return metav1.Condition{Type: condType, Status: st, Reason: reason, Message: "previous", LastTransitionTime: at, ObservedGeneration: generation}
}

func TestBuildConditionTransitionTimes(t *testing.T) {
	available := failoverv1alpha1.ReplicationConditionAvailable
	degraded := failoverv1alpha1.ReplicationConditionDegraded
	healthy := []metav1.Condition{
		cond(available, metav1.ConditionTrue, status.ReasonReplicating, before, 1),
		cond(degraded, metav1.ConditionFalse, status.ReasonReplicating, before, 1),
	}
	hubDown := []metav1.Condition{
		cond(available, metav1.ConditionTrue, status.ReasonHubsUnavailable, before, 1),
		cond(degraded, metav1.ConditionTrue, status.ReasonHubsUnavailable, before, 1),
	}
	cases := []struct {
		name                         string
		prev                         []metav1.Condition
		hubs                         []status.Hub
		configErr                    string
		wantAvailable, wantDegraded  metav1.Time
		wantAvailReason, wantDegReas string
	}{
		{
			name:          "no previous conditions: both set now (truncated)",
			hubs:          []status.Hub{ready(hubA), ready(hubB)},
			wantAvailable: nowSec, wantDegraded: nowSec,
			wantAvailReason: status.ReasonReplicating, wantDegReas: status.ReasonReplicating,
		},
		{
			name:          "statuses unchanged: both times kept",
			prev:          healthy,
			hubs:          []status.Hub{ready(hubA), ready(hubB)},
			wantAvailable: before, wantDegraded: before,
			wantAvailReason: status.ReasonReplicating, wantDegReas: status.ReasonReplicating,
		},
		{
			name:          "hub goes down: Available stays True (time kept), Degraded turns True (now)",
			prev:          healthy,
			hubs:          []status.Hub{ready(hubA), unreachable(hubB, errRefused), ready(hubC)},
			wantAvailable: before, wantDegraded: nowSec,
			wantAvailReason: status.ReasonHubsUnavailable, wantDegReas: status.ReasonHubsUnavailable,
		},
		{
			name:          "still down with another error: both times kept though reason and message may change",
			prev:          hubDown,
			hubs:          []status.Hub{ready(hubA), unreachable(hubB, errTimeout), ready(hubC)},
			wantAvailable: before, wantDegraded: before,
			wantAvailReason: status.ReasonHubsUnavailable, wantDegReas: status.ReasonHubsUnavailable,
		},
		{
			name:          "last hub goes down: Available turns False (now), Degraded stays True (kept)",
			prev:          hubDown,
			hubs:          []status.Hub{unreachable(hubA, errTimeout), unreachable(hubB, errRefused)},
			wantAvailable: nowSec, wantDegraded: before,
			wantAvailReason: status.ReasonTooFewHubsReady, wantDegReas: status.ReasonTooFewHubsReady,
		},
		{
			name:          "recovery: both change (now)",
			prev:          hubDown[1:], // only Degraded True
			hubs:          []status.Hub{ready(hubA), ready(hubB)},
			wantAvailable: nowSec, wantDegraded: nowSec,
			wantAvailReason: status.ReasonReplicating, wantDegReas: status.ReasonReplicating,
		},
		{
			name:          "spec becomes invalid: both change (now)",
			prev:          healthy,
			hubs:          []status.Hub{ready(hubA), ready(hubB)},
			configErr:     "spec.kinds[0]: Unsupported value",
			wantAvailable: nowSec, wantDegraded: nowSec,
			wantAvailReason: status.ReasonInvalidConfiguration, wantDegReas: status.ReasonInvalidConfiguration,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := newRC(2)
			rc.Status.Conditions = tc.prev
			orig := rc.DeepCopy()
			got := status.Build(rc, tc.hubs, snapshot(), tc.configErr, now)
			a, d := condition(t, got, available), condition(t, got, degraded)
			if !a.LastTransitionTime.Equal(&tc.wantAvailable) {
				t.Errorf("Available lastTransitionTime = %v, want %v", a.LastTransitionTime, tc.wantAvailable)
			}
			if !d.LastTransitionTime.Equal(&tc.wantDegraded) {
				t.Errorf("Degraded lastTransitionTime = %v, want %v", d.LastTransitionTime, tc.wantDegraded)
			}
			if a.Reason != tc.wantAvailReason || d.Reason != tc.wantDegReas {
				t.Errorf("reasons = %s, %s; want %s, %s", a.Reason, d.Reason, tc.wantAvailReason, tc.wantDegReas)
			}
			for _, c := range []metav1.Condition{a, d} {
				if c.ObservedGeneration != 2 {
					t.Errorf("%s observedGeneration = %d, want 2", c.Type, c.ObservedGeneration)
				}
				if c.Message == "previous" {
					t.Errorf("%s message not updated", c.Type)
				}
			}
			if diff := cmp.Diff(orig, rc); diff != "" {
				t.Errorf("Build modified rc (-before +after):\n%s", diff)
			}
		})
	}
}

func with(h status.Hub, f func(*status.Hub)) status.Hub {
	f(&h)
	return h
}

// ----------------------------------------------------------------------------------------------------------
// Write

func writes(actions []clienttesting.Action) []clienttesting.Action {
	var out []clienttesting.Action
	for _, a := range actions {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			out = append(out, a)
		}
	}
	return out
}

func TestWriteSkipsEqualStatus(t *testing.T) {
	rc := newRC(3)
	rc.Status = status.Build(rc, []status.Hub{ready(hubA), unreachable(hubB, errRefused)}, snapshot(), "", now)

	cases := []struct {
		name    string
		desired failoverv1alpha1.ReplicationConfigStatus
	}{
		{name: "the same status", desired: *rc.Status.DeepCopy()},
		{
			// The steady state: the next round, later, with the same observations.
			name:    "rebuilt later from the same observations",
			desired: status.Build(rc, []status.Hub{ready(hubA), unreachable(hubB, errRefused)}, snapshot(), "", now.Add(time.Minute)),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewSimpleClientset(rc.DeepCopy())
			if err := status.Write(context.Background(), client.FailoverV1alpha1().ReplicationConfigs(namespace), rc, tc.desired); err != nil {
				t.Fatalf("Write() = %v", err)
			}
			if w := writes(client.Actions()); len(w) != 0 {
				t.Errorf("Write made %d write(s) for an unchanged status: %v", len(w), w)
			}
		})
	}
}

func TestWriteSkipsEqualStatusNilVersusEmpty(t *testing.T) {
	rc := newRC(3)
	rc.Status = failoverv1alpha1.ReplicationConfigStatus{ObservedGeneration: 3, Hubs: []failoverv1alpha1.ReplicationHubStatus{}}
	desired := failoverv1alpha1.ReplicationConfigStatus{ObservedGeneration: 3}
	client := fake.NewSimpleClientset(rc.DeepCopy())
	if err := status.Write(context.Background(), client.FailoverV1alpha1().ReplicationConfigs(namespace), rc, desired); err != nil {
		t.Fatalf("Write() = %v", err)
	}
	if w := writes(client.Actions()); len(w) != 0 {
		t.Errorf("Write made %d write(s) for a status that differs only by nil versus empty list: %v", len(w), w)
	}
}

func TestWriteUpdatesChangedStatus(t *testing.T) {
	rc := newRC(3)
	rc.Status = status.Build(rc, []status.Hub{ready(hubA), ready(hubB)}, snapshot(), "", now)

	changedSnap := snapshot()
	changedSnap.Copies[hubB] = 8
	cases := []struct {
		name    string
		desired failoverv1alpha1.ReplicationConfigStatus
	}{
		{name: "a hub went down", desired: status.Build(rc, []status.Hub{ready(hubA), unreachable(hubB, errRefused)}, snapshot(), "", now)},
		{name: "a count changed", desired: status.Build(rc, []status.Hub{ready(hubA), ready(hubB)}, changedSnap, "", now)},
		{name: "first status", desired: status.Build(newRC(3), []status.Hub{ready(hubA), ready(hubB)}, snapshot(), "", now)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			current := rc.DeepCopy()
			if tc.name == "first status" {
				current.Status = failoverv1alpha1.ReplicationConfigStatus{}
			}
			before := current.DeepCopy()
			client := fake.NewSimpleClientset(current.DeepCopy())
			if err := status.Write(context.Background(), client.FailoverV1alpha1().ReplicationConfigs(namespace), current, tc.desired); err != nil {
				t.Fatalf("Write() = %v", err)
			}
			w := writes(client.Actions())
			if len(w) != 1 {
				t.Fatalf("Write made %d writes, want 1: %v", len(w), w)
			}
			update, ok := w[0].(clienttesting.UpdateActionImpl)
			if !ok || update.GetVerb() != "update" || update.GetSubresource() != "status" {
				t.Fatalf("write = %#v, want an update of the status subresource", w[0])
			}
			if update.UpdateOptions.FieldManager != replication.FieldManager {
				t.Errorf("field manager = %q, want %q", update.UpdateOptions.FieldManager, replication.FieldManager)
			}
			sent, ok := update.GetObject().(*failoverv1alpha1.ReplicationConfig)
			if !ok {
				t.Fatalf("updated object is %T", update.GetObject())
			}
			if diff := cmp.Diff(tc.desired, sent.Status); diff != "" {
				t.Errorf("status sent mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(current.Spec, sent.Spec); diff != "" {
				t.Errorf("spec sent changed (-want +got):\n%s", diff)
			}
			stored, err := client.FailoverV1alpha1().ReplicationConfigs(namespace).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			if diff := cmp.Diff(tc.desired, stored.Status); diff != "" {
				t.Errorf("stored status mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, current); diff != "" {
				t.Errorf("Write modified its rc argument (-before +after):\n%s", diff)
			}
		})
	}
}

func TestWriteReturnsUpdateError(t *testing.T) {
	rc := newRC(1)
	client := fake.NewSimpleClientset(rc.DeepCopy())
	client.PrependReactor("update", "replicationconfigs", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd is sad")
	})
	desired := status.Build(rc, []status.Hub{ready(hubA), ready(hubB)}, snapshot(), "", now)
	err := status.Write(context.Background(), client.FailoverV1alpha1().ReplicationConfigs(namespace), rc, desired)
	if err == nil || !strings.Contains(err.Error(), "etcd is sad") || !strings.Contains(err.Error(), namespace+"/"+name) {
		t.Errorf("Write() = %v, want an error naming %s/%s and the cause", err, namespace, name)
	}
}

// TestBuildDeletesHeld: an engaged delete brake shows on its hub (since, limit, deletes held, release token), in
// the DeletesHeld condition with the command that releases it, and makes the ReplicationConfig Degraded when
// nothing else does; a hub unreachable as well keeps its own Degraded reason.
func TestBuildDeletesHeld(t *testing.T) {
	since := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	snap := snapshot()
	snap.Brakes = []brake.State{{Hub: hubB, Since: since, Limit: 20, Held: 37}}
	rc := newRC(2)
	got := status.Build(rc, []status.Hub{ready(hubA), ready(hubB)}, snap, "", now)

	wantHub := &failoverv1alpha1.DeleteBrakeStatus{Since: metav1.NewTime(since), Limit: 20, DeletesHeld: 37, ReleaseToken: "hub-b@2026-12-05T06:00:00Z"}
	if diff := cmp.Diff(wantHub, hubStatusOf(got, hubB).DeleteBrake); diff != "" {
		t.Errorf("hub-b deleteBrake (-want +got):\n%s", diff)
	}
	if b := hubStatusOf(got, hubA).DeleteBrake; b != nil {
		t.Errorf("hub-a deleteBrake = %+v, want none", b)
	}
	held := condition(t, got, failoverv1alpha1.ReplicationConditionDeletesHeld)
	wantCommand := fmt.Sprintf("kubectl -n %s annotate replicationconfig %s %s=hub-b@2026-12-05T06:00:00Z --overwrite",
		rc.Namespace, rc.Name, failoverv1alpha1.AnnotationReleaseDeletes)
	if held.Status != metav1.ConditionTrue || held.Reason != status.ReasonDeletesHeld ||
		!strings.Contains(held.Message, "hub hub-b: 37 deletes held (more than 20 within 10m0s)") || !strings.Contains(held.Message, wantCommand) {
		t.Errorf("DeletesHeld = %s/%s %q; want True/%s naming hub-b, 37 held, the limit and %q", held.Status, held.Reason, held.Message, status.ReasonDeletesHeld, wantCommand)
	}
	if degraded := condition(t, got, failoverv1alpha1.ReplicationConditionDegraded); degraded.Status != metav1.ConditionTrue || degraded.Reason != status.ReasonDeletesHeld {
		t.Errorf("Degraded = %s/%s, want True/%s", degraded.Status, degraded.Reason, status.ReasonDeletesHeld)
	}

	// An invalid spec drops the hubs from the status, but not an engaged brake: it is read back at the next start.
	rc.Status = got
	invalid := status.Build(rc, nil, replication.Snapshot{}, "spec.hubs: Required value", now)
	if len(invalid.Hubs) != 1 || invalid.Hubs[0].Name != hubB || !cmp.Equal(wantHub, invalid.Hubs[0].DeleteBrake) {
		t.Errorf("hubs with an invalid spec: %+v, want hub-b's brake only", invalid.Hubs)
	}

	got = status.Build(rc, []status.Hub{unreachable(hubA, errTimeout), ready(hubB), ready(hubC)}, snap, "", now)
	if degraded := condition(t, got, failoverv1alpha1.ReplicationConditionDegraded); degraded.Reason != status.ReasonHubsUnavailable {
		t.Errorf("Degraded reason with a hub down and a brake engaged = %s, want %s", degraded.Reason, status.ReasonHubsUnavailable)
	}
	if held := condition(t, got, failoverv1alpha1.ReplicationConditionDeletesHeld); held.Status != metav1.ConditionTrue {
		t.Errorf("DeletesHeld with a hub down = %s, want True", held.Status)
	}
}

func hubStatusOf(s failoverv1alpha1.ReplicationConfigStatus, name string) failoverv1alpha1.ReplicationHubStatus {
	for _, h := range s.Hubs {
		if h.Name == name {
			return h
		}
	}
	return failoverv1alpha1.ReplicationHubStatus{}
}
