package util

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// ApplyOperatorFailoverRBAC applies manifests/klusterlet-operator/failoverconfig-rbac.yaml (the one extra manifest
// of an operator-installed klusterlet) in namespace, bound to ServiceAccount sa. It fails the test on error.
func ApplyOperatorFailoverRBAC(t testing.TB, ctx context.Context, spoke *framework.Spoke, namespace, sa string) {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "manifests", "klusterlet-operator", "failoverconfig-rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	decoder := yaml.NewYAMLOrJSONDecoder(strings.NewReader(string(data)), 4096)
	for {
		var raw runtime.RawExtension
		if err := decoder.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("parsing the operator-mode RBAC manifest: %v", err)
		}
		if len(raw.Raw) == 0 {
			continue
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(raw.Raw, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "Role":
			role := &rbacv1.Role{}
			if err := yaml.Unmarshal(raw.Raw, role); err != nil {
				t.Fatal(err)
			}
			role.Namespace = namespace
			if _, err := spoke.Kube.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		case "RoleBinding":
			rb := &rbacv1.RoleBinding{}
			if err := yaml.Unmarshal(raw.Raw, rb); err != nil {
				t.Fatal(err)
			}
			rb.Namespace = namespace
			rb.Subjects[0].Namespace, rb.Subjects[0].Name = namespace, sa
			if _, err := spoke.Kube.RbacV1().RoleBindings(namespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unexpected kind %q in the operator-mode RBAC manifest", meta.Kind)
		}
	}
}
