package util

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// ApplyConfigMapWork creates ManifestWork name in the cluster namespace on hub, holding ConfigMap name in the
// default namespace.
func ApplyConfigMapWork(t testing.TB, ctx context.Context, hub *framework.Hub, cluster, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Data:       map[string]string{"from": hub.Name},
	}
	raw, err := json.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	mw := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{
			Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}},
		}},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(mw)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(workv1.GroupVersion.String())
	u.SetKind("ManifestWork")
	client := dynamic.NewForConfigOrDie(hub.AdminConfig).Resource(schema.GroupVersionResource{Group: workv1.GroupName, Version: "v1", Resource: "manifestworks"}).Namespace(cluster)
	framework.Eventually(t, 2*time.Minute, PollInterval, func() (bool, error) {
		_, err := client.Create(ctx, u, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), err
	}, "ManifestWork %s/%s created on hub %s", cluster, name, hub.Name)
}
