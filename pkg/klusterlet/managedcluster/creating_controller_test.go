package managedcluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openshift/library-go/pkg/controller/factory"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

var (
	testURLs     = []string{"https://spoke.example.com:6443", "https://[::1]:6443/"}
	testCABundle = []byte("-----BEGIN CERTIFICATE-----\nspoke\n-----END CERTIFICATE-----\n")
)

func expectedClientConfigs() []clusterv1.ClientConfig {
	return []clusterv1.ClientConfig{
		{URL: "https://spoke.example.com:6443", CABundle: testCABundle},
		{URL: "https://[::1]:6443/", CABundle: testCABundle},
	}
}

func TestCreatingControllerSync(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "cluster.open-cluster-management.io", Resource: "managedclusters"}, testCluster, nil)
	cases := []struct {
		name           string
		existing       *clusterv1.ManagedCluster
		urls           []string
		useInformer    bool
		reactor        clienttesting.ReactionFunc
		reactorVerb    string
		tracker        func() *ConflictTracker
		syncs          int
		expectedVerbs  []string
		expectedEvents []string
		validate       func(t *testing.T, client *clusterfake.Clientset)
	}{
		{
			name:           "absent with the bootstrap identity is created with exact client configs",
			urls:           testURLs,
			expectedVerbs:  []string{"get", "create"},
			expectedEvents: []string{ReasonManagedClusterCreated},
			validate: func(t *testing.T, client *clusterfake.Clientset) {
				created := actionsOf(client.Actions(), "create")[0].(clienttesting.CreateAction).GetObject().(*clusterv1.ManagedCluster)
				if created.Name != testCluster {
					t.Errorf("created name %q, want %q", created.Name, testCluster)
				}
				if diff := cmp.Diff(expectedClientConfigs(), created.Spec.ManagedClusterClientConfigs); diff != "" {
					t.Errorf("client configs (-want +got):\n%s", diff)
				}
				if created.Spec.HubAcceptsClient {
					t.Error("the agent must never set hubAcceptsClient")
				}
			},
		},
		{
			name:           "absent from the informer cache is created",
			urls:           testURLs,
			useInformer:    true,
			expectedVerbs:  []string{"create"},
			expectedEvents: []string{ReasonManagedClusterCreated},
		},
		{
			name:          "exists with the same client configs: no action",
			urls:          testURLs,
			existing:      &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster}, Spec: clusterv1.ManagedClusterSpec{ManagedClusterClientConfigs: expectedClientConfigs()}},
			syncs:         2,
			expectedVerbs: []string{"get", "get"},
		},
		{
			name:          "exists, no URLs configured: client configs left alone",
			existing:      &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster}, Spec: clusterv1.ManagedClusterSpec{ManagedClusterClientConfigs: []clusterv1.ClientConfig{{URL: "https://old:6443"}}}},
			expectedVerbs: []string{"get"},
		},
		{
			name:        "exists with other client configs: only the client configs are updated",
			urls:        testURLs,
			useInformer: true,
			existing: &clusterv1.ManagedCluster{
				ObjectMeta: metav1.ObjectMeta{Name: testCluster, ResourceVersion: "7"},
				Spec: clusterv1.ManagedClusterSpec{
					HubAcceptsClient:            true,
					LeaseDurationSeconds:        60,
					ManagedClusterClientConfigs: []clusterv1.ClientConfig{{URL: "https://old:6443", CABundle: []byte("old")}},
				},
			},
			expectedVerbs:  []string{"update"},
			expectedEvents: []string{ReasonManagedClusterClientConfigsUpdated},
			validate: func(t *testing.T, client *clusterfake.Clientset) {
				updated := actionsOf(client.Actions(), "update")[0].(clienttesting.UpdateAction).GetObject().(*clusterv1.ManagedCluster)
				want := clusterv1.ManagedClusterSpec{HubAcceptsClient: true, LeaseDurationSeconds: 60, ManagedClusterClientConfigs: expectedClientConfigs()}
				if diff := cmp.Diff(want, updated.Spec); diff != "" {
					t.Errorf("updated spec (-want +got):\n%s", diff)
				}
				if updated.ResourceVersion != "7" {
					t.Errorf("update must carry the observed resourceVersion, got %q", updated.ResourceVersion)
				}
			},
		},
		{
			name:          "client configs are not rewritten while the identity is unverified",
			urls:          testURLs,
			existing:      &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster}},
			tracker:       NewConflictTracker,
			expectedVerbs: []string{"get"},
		},
		{
			name:     "client configs of another spoke's registration are not rewritten",
			urls:     testURLs,
			existing: &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster}},
			tracker: func() *ConflictTracker {
				tracker := NewConflictTracker()
				tracker.Set("another spoke")
				return tracker
			},
			expectedVerbs: []string{"get"},
		},
		{
			name:     "client configs are updated once verified without conflict",
			urls:     testURLs,
			existing: &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster}},
			tracker: func() *ConflictTracker {
				tracker := NewConflictTracker()
				tracker.Clear()
				return tracker
			},
			expectedVerbs:  []string{"get", "update"},
			expectedEvents: []string{ReasonManagedClusterClientConfigsUpdated},
		},
		{
			name:        "create forbidden is reported, not retried as an error",
			urls:        testURLs,
			reactorVerb: "create",
			reactor: func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, forbidden
			},
			syncs:          2,
			expectedVerbs:  []string{"get", "create", "get", "create"},
			expectedEvents: []string{ReasonManagedClusterCreateFailed},
		},
		{
			name:        "client config update forbidden with the bootstrap identity is reported",
			urls:        testURLs,
			existing:    &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster}},
			reactorVerb: "update",
			reactor: func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, forbidden
			},
			syncs:          2,
			expectedVerbs:  []string{"get", "update", "get", "update"},
			expectedEvents: []string{ReasonManagedClusterClientConfigsUpdateFailed},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var objects []runtime.Object
			if tc.existing != nil {
				objects = append(objects, tc.existing)
			}
			client := clusterfake.NewSimpleClientset(objects...)
			if tc.reactor != nil {
				client.PrependReactor(tc.reactorVerb, "managedclusters", tc.reactor)
			}
			recorder := newTestRecorder()
			syncCtx := factory.NewSyncContext("test", recorder)
			opts := CreatingOptions{
				ClusterName: testCluster, SpokeExternalServerURLs: tc.urls, SpokeCABundle: testCABundle,
				HubClusterClient: client.ClusterV1(), ResyncInterval: 10 * time.Minute, Recorder: recorder,
			}
			if tc.tracker != nil {
				opts.ConflictTracker = tc.tracker()
			}
			if tc.useInformer {
				opts.HubClusterInformer = clusterinformers.NewSharedInformerFactory(client, 0).Cluster().V1().ManagedClusters()
				for _, obj := range objects {
					if err := opts.HubClusterInformer.Informer().GetStore().Add(obj); err != nil {
						t.Fatal(err)
					}
				}
			}
			controller := NewManagedClusterCreatingController(opts)

			// Failures repeat on every sync but must be reported once.
			for range max(tc.syncs, 1) {
				if err := controller.Sync(context.Background(), syncCtx); err != nil {
					t.Fatalf("sync: %v", err)
				}
			}
			var verbs []string
			for _, action := range client.Actions() {
				verbs = append(verbs, action.GetVerb())
			}
			if diff := cmp.Diff(tc.expectedVerbs, verbs); diff != "" {
				t.Errorf("hub calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.expectedEvents, eventReasons(recorder)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if tc.validate != nil {
				tc.validate(t, client)
			}
		})
	}
}

// TestCreatingControllerRecreatesDeletedCluster: a ManagedCluster seen once and then deleted
// on the hub is created again, and the event says so.
func TestCreatingControllerRecreatesDeletedCluster(t *testing.T) {
	existing := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster}, Spec: clusterv1.ManagedClusterSpec{ManagedClusterClientConfigs: expectedClientConfigs()}}
	client := clusterfake.NewSimpleClientset(existing)
	informer := clusterinformers.NewSharedInformerFactory(client, 0).Cluster().V1().ManagedClusters()
	if err := informer.Informer().GetStore().Add(existing); err != nil {
		t.Fatal(err)
	}
	recorder := newTestRecorder()
	syncCtx := factory.NewSyncContext("test", recorder)
	controller := NewManagedClusterCreatingController(CreatingOptions{
		ClusterName: testCluster, SpokeExternalServerURLs: testURLs, SpokeCABundle: testCABundle,
		HubClusterClient: client.ClusterV1(), HubClusterInformer: informer, ResyncInterval: 10 * time.Minute,
		Recorder: recorder,
	})
	if err := controller.Sync(context.Background(), syncCtx); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if n := len(actionsOf(client.Actions(), "create")); n != 0 {
		t.Fatalf("creates while the cluster exists = %d, want 0", n)
	}

	if err := client.ClusterV1().ManagedClusters().Delete(context.Background(), testCluster, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := informer.Informer().GetStore().Delete(existing); err != nil {
		t.Fatal(err)
	}
	if err := controller.Sync(context.Background(), syncCtx); err != nil {
		t.Fatalf("sync: %v", err)
	}
	recreated, err := client.ClusterV1().ManagedClusters().Get(context.Background(), testCluster, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ManagedCluster not re-created: %v", err)
	}
	if diff := cmp.Diff(expectedClientConfigs(), recreated.Spec.ManagedClusterClientConfigs); diff != "" {
		t.Errorf("client configs (-want +got):\n%s", diff)
	}
	events := recorder.Events()
	if len(events) != 1 || events[0].Reason != ReasonManagedClusterCreated || !strings.Contains(events[0].Message, "re-created") {
		t.Errorf("want one %s event saying re-created, got %v", ReasonManagedClusterCreated, events)
	}
}

// TestCreatingControllerCreatesWithCreateClient: with a separate create client (the bootstrap
// identity in the main controllers), an absent ManagedCluster is created through it and never
// through the hub identity, which OCM's hub does not allow to create ManagedClusters; reads and
// client-config updates still use the hub identity.
func TestCreatingControllerCreatesWithCreateClient(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "cluster.open-cluster-management.io", Resource: "managedclusters"}, testCluster, nil)
	hubIdentity := clusterfake.NewSimpleClientset()
	hubIdentity.PrependReactor("create", "managedclusters", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, forbidden
	})
	bootstrapIdentity := clusterfake.NewSimpleClientset()
	informer := clusterinformers.NewSharedInformerFactory(hubIdentity, 0).Cluster().V1().ManagedClusters()
	recorder := newTestRecorder()
	syncCtx := factory.NewSyncContext("test", recorder)
	controller := NewManagedClusterCreatingController(CreatingOptions{
		ClusterName: testCluster, SpokeExternalServerURLs: testURLs, SpokeCABundle: testCABundle,
		HubClusterClient: hubIdentity.ClusterV1(), HubClusterCreateClient: bootstrapIdentity.ClusterV1(),
		HubClusterInformer: informer, ResyncInterval: 10 * time.Minute, Recorder: recorder,
	})
	if err := controller.Sync(context.Background(), syncCtx); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if n := len(hubIdentity.Actions()); n != 0 {
		t.Errorf("hub identity calls = %d, want 0 (the informer is read, the create goes through the create client)", n)
	}
	created, err := bootstrapIdentity.ClusterV1().ManagedClusters().Get(context.Background(), testCluster, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ManagedCluster not created through the create client: %v", err)
	}
	if diff := cmp.Diff(expectedClientConfigs(), created.Spec.ManagedClusterClientConfigs); diff != "" {
		t.Errorf("client configs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{ReasonManagedClusterCreated}, eventReasons(recorder)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestEnsureManagedCluster(t *testing.T) {
	gr := schema.GroupResource{Group: "cluster.open-cluster-management.io", Resource: "managedclusters"}
	cases := []struct {
		name        string
		existing    []runtime.Object
		reactor     clienttesting.ReactionFunc // on create
		getErr      error
		wantCreated bool
		wantErr     string
		wantVerbs   []string
	}{
		{name: "present: nothing written", existing: []runtime.Object{newManagedCluster()}, wantVerbs: []string{"get"}},
		{name: "absent: created with the client configs", wantCreated: true, wantVerbs: []string{"get", "create"}},
		{name: "created meanwhile by someone else", wantVerbs: []string{"get", "create"},
			reactor: func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewAlreadyExists(gr, testCluster)
			}},
		{name: "get forbidden: an error naming the cluster, no create", getErr: apierrors.NewForbidden(gr, testCluster, nil),
			wantErr: `unable to get ManagedCluster "cluster1"`, wantVerbs: []string{"get"}},
		{name: "create fails", wantErr: `unable to create ManagedCluster "cluster1"`, wantVerbs: []string{"get", "create"},
			reactor: func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewInternalError(errors.New("etcd is down"))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := clusterfake.NewSimpleClientset(tc.existing...)
			if tc.getErr != nil {
				client.PrependReactor("get", "managedclusters", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, tc.getErr
				})
			}
			if tc.reactor != nil {
				client.PrependReactor("create", "managedclusters", tc.reactor)
			}
			created, err := EnsureManagedCluster(context.Background(), client.ClusterV1(), testCluster, testURLs, testCABundle, testAnnotations)
			if created != tc.wantCreated {
				t.Errorf("created = %v, want %v", created, tc.wantCreated)
			}
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want one containing %q", err, tc.wantErr)
			}
			var verbs []string
			for _, a := range client.Actions() {
				verbs = append(verbs, a.GetVerb())
			}
			if diff := cmp.Diff(tc.wantVerbs, verbs); diff != "" {
				t.Errorf("hub calls (-want +got):\n%s", diff)
			}
			if tc.wantCreated {
				mc, err := client.ClusterV1().ManagedClusters().Get(context.Background(), testCluster, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(expectedClientConfigs(), mc.Spec.ManagedClusterClientConfigs); diff != "" {
					t.Errorf("spec.managedClusterClientConfigs (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(testAnnotations, mc.Annotations); diff != "" {
					t.Errorf("annotations (-want +got):\n%s", diff)
				}
			}
		})
	}
}

var testAnnotations = map[string]string{ClusterAnnotationsKeyPrefix + "/owner": "team-a"}

func TestFilterClusterAnnotations(t *testing.T) {
	kept, ignored := FilterClusterAnnotations(map[string]string{
		ClusterAnnotationsKeyPrefix + "/owner": "team-a",
		"example.com/other":                    "x",
		"owner":                                "y",
	})
	if diff := cmp.Diff(map[string]string{ClusterAnnotationsKeyPrefix + "/owner": "team-a"}, kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"example.com/other", "owner"}, ignored); diff != "" {
		t.Errorf("ignored (-want +got):\n%s", diff)
	}
	if kept, _ := FilterClusterAnnotations(nil); kept != nil {
		t.Errorf("kept = %v for no annotations, want nil", kept)
	}
}
