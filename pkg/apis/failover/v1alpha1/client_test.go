package v1alpha1_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned/fake"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/client/informers/externalversions"
)

// TestGeneratedClientRoundTrip exercises the registration (register.go), the deepcopy functions and the
// generated clientset, informers and listers together, as a controller would use them.
func TestGeneratedClientRoundTrip(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	fc := &failoverv1alpha1.FailoverConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "open-cluster-management-agent", Name: "failover"},
		Spec: failoverv1alpha1.FailoverConfigSpec{
			AlternateHubs: []failoverv1alpha1.AlternateHub{{Name: "hub-b", BootstrapKubeconfigSecretRef: "hub-b-bootstrap"}},
		},
	}
	client := fake.NewSimpleClientset(fc)
	factory := externalversions.NewSharedInformerFactoryWithOptions(client, 0, externalversions.WithNamespace(fc.Namespace))
	informer := factory.Failover().V1alpha1().FailoverConfigs()
	lister := informer.Lister()
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer for %v did not sync", typ)
		}
	}

	got, err := lister.FailoverConfigs(fc.Namespace).Get(fc.Name)
	if err != nil {
		t.Fatalf("lister Get: %v", err)
	}
	if diff := cmp.Diff(fc.Spec, got.Spec); diff != "" {
		t.Errorf("listed spec (-want +got):\n%s", diff)
	}

	updated := got.DeepCopy()
	updated.Status.ActiveHub = "hub-b"
	updated.Status.FailoverCount = 1
	if _, err := client.FailoverV1alpha1().FailoverConfigs(fc.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("UpdateStatus: %v", err)
	}
	if got.Status.ActiveHub != "" {
		t.Errorf("DeepCopy shares memory with the cached object: cached activeHub = %q", got.Status.ActiveHub)
	}
	stored, err := client.FailoverV1alpha1().FailoverConfigs(fc.Namespace).Get(ctx, fc.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if stored.Status.ActiveHub != "hub-b" || stored.Status.FailoverCount != 1 {
		t.Errorf("stored status = %+v, want activeHub hub-b and failoverCount 1", stored.Status)
	}
}

// TestDecodeFromServerJSON decodes an object as the API server returns it after CRD defaulting (durations
// as the schema defaults write them) through a scheme built with AddToScheme.
func TestDecodeFromServerJSON(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := failoverv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	data := []byte(`{"apiVersion":"failover.open-cluster-management.io/v1alpha1","kind":"FailoverConfig",
		"metadata":{"name":"failover","namespace":"agent"},
		"spec":{"hubConnectionTimeout":"5m","probeInterval":"30s","failback":{"policy":"Primary","healthyFor":"10m"},
		        "alternateHubs":[{"name":"hub-b","bootstrapKubeconfigSecretRef":"hub-b-bootstrap"}]},
		"status":{"activeHub":"primary","lastFailover":{"from":"primary","to":"hub-b","reason":"HubConnectionLost",
		          "startTime":"2026-01-02T03:04:05Z","durationMilliseconds":1500}}}`)
	obj, gvk, err := serializer.NewCodecFactory(scheme).UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if gvk.Kind != "FailoverConfig" {
		t.Errorf("kind = %q", gvk.Kind)
	}
	fc, ok := obj.(*failoverv1alpha1.FailoverConfig)
	if !ok {
		t.Fatalf("decoded %T, want *FailoverConfig", obj)
	}
	eff := failoverv1alpha1.WithDefaults(fc.Spec)
	if eff.HubConnectionTimeout.Duration != 5*time.Minute || eff.ProbeInterval.Duration != 30*time.Second ||
		eff.HubRejectionGracePeriod.Duration != failoverv1alpha1.DefaultHubRejectionGracePeriod ||
		eff.Failback.Policy != failoverv1alpha1.FailbackPolicyPrimary || eff.Failback.HealthyFor.Duration != 10*time.Minute {
		t.Errorf("effective spec = %+v", eff)
	}
	if lf := fc.Status.LastFailover; lf == nil || lf.Reason != failoverv1alpha1.FailoverReasonHubConnectionLost || lf.DurationMilliseconds != 1500 {
		t.Errorf("lastFailover = %+v", fc.Status.LastFailover)
	}
	if errs := failoverv1alpha1.ValidateFailoverConfig(fc); len(errs) != 0 {
		t.Errorf("ValidateFailoverConfig: %v", errs)
	}
}
