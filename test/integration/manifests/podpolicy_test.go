package manifests_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/secretvolume"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// TestPodAnnotationPolicy: with manifests/ applied, the agent's ServiceAccount may set the hub kubeconfig hash
// annotation on a pod of its namespace (its RBAC grants patch on pods), and the ValidatingAdmissionPolicy refuses
// every other change it would make: a container image, another annotation, a label.
func TestPodAnnotationPolicy(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	spoke := framework.StartSpoke(t)
	rendered, _ := render(t, root, "manifests")
	apply(t, spoke.KubeconfigFile(), rendered)
	ctx := context.Background()
	const namespace = "open-cluster-management-agent"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "work-agent", Namespace: namespace,
			Labels: map[string]string{"app": "work"}, Annotations: map[string]string{"kept": "yes"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "work", Image: "localhost/work:v1"}}},
	}
	if _, err := spoke.Kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(spoke.AdminConfig)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":klusterlet-failover",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	agent := kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods(namespace)
	patchWith := func(body string, opts metav1.PatchOptions) error {
		_, err := agent.Patch(ctx, pod.Name, types.MergePatchType, []byte(body), opts)
		return err
	}
	patch := func(body string) error { return patchWith(body, metav1.PatchOptions{}) }

	// The policy and the RBAC take effect a moment after they are created. The wait uses dry-run patches, which
	// admission evaluates like real ones: a change accepted before the policy is in effect must not be stored, or
	// every later identical patch would be a no-op the policy has no reason to refuse.
	imagePatch := `{"spec":{"containers":[{"name":"work","image":"localhost/evil:v1"}]}}`
	const policyMessage = "may not change a pod's spec"
	var last error
	framework.Eventually(t, applyTimeout, 500*time.Millisecond, func() (bool, error) {
		last = patchWith(imagePatch, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return last != nil && strings.Contains(last.Error(), policyMessage), nil
	}, "the policy refuses the agent's change of a container image")
	if err := patch(imagePatch); !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) || err == nil || !strings.Contains(err.Error(), policyMessage) {
		t.Errorf("image change refused with %v, want the policy's message about the spec", err)
	}
	for what, body := range map[string]string{
		"another annotation": `{"metadata":{"annotations":{"kept":"no"}}}`,
		"a new annotation":   `{"metadata":{"annotations":{"added":"x"}}}`,
		"a label":            `{"metadata":{"labels":{"app":"other"}}}`,
	} {
		if err := patch(body); err == nil {
			t.Errorf("the agent changed %s of a pod; the policy must refuse it", what)
		}
	}
	if err := patch(`{"metadata":{"annotations":{"` + secretvolume.ContentHashAnnotation + `":"abc"}}}`); err != nil {
		t.Fatalf("the agent may not set %s: %v", secretvolume.ContentHashAnnotation, err)
	}
	got, err := spoke.Kube.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Annotations[secretvolume.ContentHashAnnotation] != "abc" || got.Annotations["kept"] != "yes" ||
		got.Spec.Containers[0].Image != "localhost/work:v1" || got.Labels["app"] != "work" {
		t.Errorf("pod after the patches: annotations %v, labels %v, image %s", got.Annotations, got.Labels, got.Spec.Containers[0].Image)
	}
	// The admin is not matched by the policy.
	if _, err := spoke.Kube.CoreV1().Pods(namespace).Patch(ctx, pod.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"admin"}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("the policy refused the admin's label change: %v", err)
	}
}
