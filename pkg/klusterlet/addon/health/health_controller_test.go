package health

import (
	"context"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonfake "open-cluster-management.io/api/client/addon/clientset/versioned/fake"
	addoninformers "open-cluster-management.io/api/client/addon/informers/externalversions"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/internal/synctesting"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func lease(ns, name string, renew time.Time) *coordinationv1.Lease {
	rt := metav1.NewMicroTime(renew)
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: coordinationv1.LeaseSpec{RenewTime: &rt}}
}

// TestLeaseCondition: OCM's reasons and the 5 × 60 s grace period.
func TestLeaseCondition(t *testing.T) {
	grace := 5 * time.Minute
	cases := []struct {
		name      string
		lease     *coordinationv1.Lease
		now       time.Time
		want      metav1.ConditionStatus
		reason    string
		wantStale time.Duration
	}{
		{"no lease", nil, t0, metav1.ConditionUnknown, ReasonManagedClusterAddOnLeaseNotFound, 0},
		{"fresh", lease("ns", "a", t0), t0.Add(time.Minute), metav1.ConditionTrue, ReasonManagedClusterAddOnLeaseUpdated, 4 * time.Minute},
		{"at the grace limit", lease("ns", "a", t0), t0.Add(grace), metav1.ConditionFalse, ReasonManagedClusterAddOnLeaseUpdateStopped, 0},
		{"no renew time", &coordinationv1.Lease{}, t0, metav1.ConditionFalse, ReasonManagedClusterAddOnLeaseUpdateStopped, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, stale := LeaseCondition("a", tc.lease, grace, tc.now)
			if c.Status != tc.want || c.Reason != tc.reason || stale != tc.wantStale || c.Type != addonv1alpha1.ManagedClusterAddOnConditionAvailable {
				t.Errorf("LeaseCondition = %s/%s %q, stale in %v; want %s/%s, %v", c.Status, c.Reason, c.Message, stale, tc.want, tc.reason, tc.wantStale)
			}
		})
	}
}

type harness struct {
	c        *AddOnHealthController
	hub      *addonfake.Clientset
	spoke    *kubefake.Clientset
	hosting  *kubefake.Clientset
	inf      addoninformers.SharedInformerFactory
	clock    *clocktesting.FakeClock
	recorder events.InMemoryRecorder
}

func newHarness(t *testing.T, addOn *addonv1alpha1.ManagedClusterAddOn, spokeObjs ...runtime.Object) *harness {
	t.Helper()
	h := &harness{hub: addonfake.NewSimpleClientset(addOn), spoke: kubefake.NewClientset(spokeObjs...), hosting: kubefake.NewClientset(),
		clock: clocktesting.NewFakeClock(t0), recorder: events.NewInMemoryRecorder("test", clocktesting.NewFakeClock(t0))}
	h.inf = addoninformers.NewSharedInformerFactory(h.hub, 0)
	_ = h.inf.Addon().V1alpha1().ManagedClusterAddOns().Informer().GetStore().Add(addOn)
	var err error
	h.c, err = NewAddOnHealthController(Options{ClusterName: "cluster1", HubAddOnInformer: h.inf.Addon().V1alpha1().ManagedClusterAddOns(),
		HubAddOnClient: h.hub.AddonV1alpha1(), SpokeLeases: h.spoke.CoordinationV1(), HostingLeases: h.hosting.CoordinationV1(),
		Clock: h.clock, Recorder: h.recorder})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) sync(t *testing.T, key string) *synctesting.SyncContext {
	t.Helper()
	sc := synctesting.New(key, h.recorder)
	if err := h.c.sync(context.Background(), sc); err != nil {
		t.Fatalf("sync %s: %v", key, err)
	}
	return sc
}

// refresh copies the hub's add-on into the informer (as a watch would).
func (h *harness) refresh(t *testing.T) *addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	a, err := h.hub.AddonV1alpha1().ManagedClusterAddOns("cluster1").Get(context.Background(), "hello", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = h.inf.Addon().V1alpha1().ManagedClusterAddOns().Informer().GetStore().Update(a)
	return a
}

func patches(actions []clienttesting.Action) int {
	n := 0
	for _, a := range actions {
		if a.GetVerb() == "patch" {
			n++
		}
	}
	return n
}

func newAddOn() *addonv1alpha1.ManagedClusterAddOn {
	return &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "hello", ResourceVersion: "1"},
		Spec: addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: "addon-ns"}}
}

// TestAvailableFollowsLease: True while the lease is renewed, one patch, none while nothing changes, False after
// the grace period, requeued for the moment it goes stale.
func TestAvailableFollowsLease(t *testing.T) {
	h := newHarness(t, newAddOn(), lease("addon-ns", "hello", t0))
	q := h.sync(t, "hello")
	a := h.refresh(t)
	if c := meta.FindStatusCondition(a.Status.Conditions, "Available"); c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonManagedClusterAddOnLeaseUpdated {
		t.Fatalf("Available = %+v, want True/%s", c, ReasonManagedClusterAddOnLeaseUpdated)
	}
	if got := q.After("hello"); got != 5*time.Minute+time.Second {
		t.Errorf("requeue after %v, want 5m1s", got)
	}
	h.hub.ClearActions()
	h.clock.Step(time.Minute)
	h.sync(t, "hello")
	if n := patches(h.hub.Actions()); n != 0 {
		t.Errorf("patches while nothing changed: %d, want 0", n)
	}
	h.clock.Step(4 * time.Minute)
	h.sync(t, "hello")
	a = h.refresh(t)
	if c := meta.FindStatusCondition(a.Status.Conditions, "Available"); c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonManagedClusterAddOnLeaseUpdateStopped {
		t.Fatalf("Available after 5m = %+v, want False/%s", c, ReasonManagedClusterAddOnLeaseUpdateStopped)
	}
	var reasons []string
	for _, e := range h.recorder.Events() {
		reasons = append(reasons, e.Reason)
	}
	if len(reasons) != 2 || reasons[0] != ReasonManagedClusterAddOnStatusUpdated {
		t.Errorf("events %v, want two %s", reasons, ReasonManagedClusterAddOnStatusUpdated)
	}
}

// TestSkipsAndSources: Customized health is left to the add-on manager; hosted add-ons' leases are read on the
// hosting cluster; the default key queues every add-on.
func TestSkipsAndSources(t *testing.T) {
	customized := newAddOn()
	customized.Status.HealthCheck.Mode = addonv1alpha1.HealthCheckModeCustomized
	h := newHarness(t, customized, lease("addon-ns", "hello", t0))
	h.sync(t, "hello")
	if n := patches(h.hub.Actions()); n != 0 {
		t.Errorf("patches for a Customized add-on: %d, want 0", n)
	}

	hosted := newAddOn()
	hosted.Annotations = map[string]string{addonv1alpha1.HostingClusterNameAnnotationKey: "hosting"}
	h = newHarness(t, hosted, lease("addon-ns", "hello", t0)) // lease on the managed cluster only
	_, _ = h.hosting.CoordinationV1().Leases("addon-ns").Create(context.Background(), lease("addon-ns", "hello", t0.Add(-10*time.Minute)), metav1.CreateOptions{})
	h.sync(t, "hello")
	if c := meta.FindStatusCondition(h.refresh(t).Status.Conditions, "Available"); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("hosted add-on Available = %+v, want False from the hosting cluster's stale lease", c)
	}
	if q := h.sync(t, factory.DefaultQueueKey); len(q.Added()) != 1 || q.Added()[0] != "hello" || q.After(factory.DefaultQueueKey) != DefaultResyncInterval {
		t.Errorf("default key queued %v and after %v, want [hello] and itself after 30s", q.Added(), q.Requeues())
	}
}
