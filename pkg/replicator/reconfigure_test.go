package replicator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned/fake"
	replisters "github.com/klusterlet-failover/klusterlet-failover/pkg/client/listers/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/status"
)

// TestReconfigureSync: the controller's sync starts an engine for a valid ReplicationConfig (here with no usable
// kubeconfig Secret: nothing is replicated, and each hub's status says why), stops it for an invalid spec,
// writing the validation error into the status, starts one again once the spec is valid, restarts it when a
// referenced Secret appears (the fingerprint changed), and stops it when the ReplicationConfig is deleted.
func TestReconfigureSync(t *testing.T) {
	const ns = "open-cluster-management-replicator"
	hub := func(name string) failoverv1alpha1.ReplicationHub {
		return failoverv1alpha1.ReplicationHub{Name: name, KubeconfigSecret: failoverv1alpha1.KubeconfigSecretReference{Name: name + "-kubeconfig"}}
	}
	rc := &failoverv1alpha1.ReplicationConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "replication", Generation: 1},
		Spec:       failoverv1alpha1.ReplicationConfigSpec{Hubs: []failoverv1alpha1.ReplicationHub{hub("hub-a"), hub("hub-b")}},
	}
	client := fake.NewSimpleClientset(rc)
	configIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	secretIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	o := NewOptions()
	o.Namespace = ns
	c := &reconfigureController{
		ctx: context.Background(), o: o, replClient: client, recorder: events.NewInMemoryRecorder("test", clock.RealClock{}),
		clk:     clocktesting.NewFakeClock(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)),
		configs: replisters.NewReplicationConfigLister(configIndexer).ReplicationConfigs(ns),
		secrets: corelisters.NewSecretLister(secretIndexer).Secrets(ns),
		queue:   func() {}, // a brake engaging asks for a sync: none engages here
	}
	defer c.stop()
	sync := func(what string, obj *failoverv1alpha1.ReplicationConfig) failoverv1alpha1.ReplicationConfigStatus {
		t.Helper()
		if obj != nil {
			if err := configIndexer.Update(obj); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.sync(context.Background(), nil); err != nil {
			t.Fatalf("%s: sync: %v", what, err)
		}
		got, err := client.FailoverV1alpha1().ReplicationConfigs(ns).Get(context.Background(), "replication", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}

	st := sync("valid, no Secrets", rc)
	if c.running == nil || c.running.controller != nil {
		t.Fatalf("valid spec without usable Secrets: running %+v, want an engine without a controller", c.running)
	}
	if len(st.Hubs) != 2 || !strings.Contains(st.Hubs[0].LastError, `kubeconfigSecret "hub-a-kubeconfig"`) {
		t.Errorf("hub statuses %+v, want both hubs, hub-a's naming its missing Secret", st.Hubs)
	}
	first := c.running

	invalid := rc.DeepCopy()
	invalid.Generation = 2
	invalid.Spec.Hubs = invalid.Spec.Hubs[:1]
	st = sync("invalid", invalid)
	if c.running != nil {
		t.Errorf("invalid spec: an engine still runs")
	}
	if cond := meta.FindStatusCondition(st.Conditions, failoverv1alpha1.ReplicationConditionDegraded); cond == nil ||
		cond.Reason != status.ReasonInvalidConfiguration || !strings.Contains(cond.Message, "spec.hubs") {
		t.Errorf("Degraded condition %+v, want %s naming spec.hubs", cond, status.ReasonInvalidConfiguration)
	}

	valid := rc.DeepCopy()
	valid.Generation = 3
	sync("valid again", valid)
	if c.running == nil || c.running == first {
		t.Fatalf("valid spec again: running %p (first %p), want a new engine", c.running, first)
	}
	again := c.running
	sync("nothing changed", nil)
	if c.running != again {
		t.Errorf("a sync with nothing changed restarted the engine")
	}
	if err := secretIndexer.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hub-a-kubeconfig", ResourceVersion: "5"}}); err != nil {
		t.Fatal(err)
	}
	st = sync("a Secret appeared", nil)
	if c.running == again {
		t.Errorf("a referenced Secret appeared and the engine was not restarted")
	}
	if len(st.Hubs) != 2 || !strings.Contains(st.Hubs[0].LastError, `has no key "kubeconfig"`) {
		t.Errorf("hub statuses %+v, want hub-a's naming the key its Secret lacks", st.Hubs)
	}

	if err := configIndexer.Delete(valid); err != nil {
		t.Fatal(err)
	}
	if err := c.sync(context.Background(), nil); err != nil {
		t.Fatalf("deleted: sync: %v", err)
	}
	if c.running != nil {
		t.Errorf("ReplicationConfig deleted: an engine still runs")
	}
}
