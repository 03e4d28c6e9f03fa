package util

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
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
	for _, doc := range manifestDocs(t, "manifests/klusterlet-operator/failoverconfig-rbac.yaml") {
		raw := doc.raw
		switch doc.kind {
		case "Role":
			role := &rbacv1.Role{}
			if err := yaml.Unmarshal(raw, role); err != nil {
				t.Fatal(err)
			}
			role.Namespace = namespace
			if _, err := spoke.Kube.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		case "RoleBinding":
			rb := &rbacv1.RoleBinding{}
			if err := yaml.Unmarshal(raw, rb); err != nil {
				t.Fatal(err)
			}
			rb.Namespace = namespace
			rb.Subjects[0].Namespace, rb.Subjects[0].Name = namespace, sa
			if _, err := spoke.Kube.RbacV1().RoleBindings(namespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unexpected kind %q in the operator-mode RBAC manifest", doc.kind)
		}
	}
}

// ApplyPodAnnotationPolicy creates the ValidatingAdmissionPolicy and its binding of
// manifests/pod-annotation-policy.yaml on the spoke. It fails the test on error.
func ApplyPodAnnotationPolicy(t testing.TB, ctx context.Context, spoke *framework.Spoke) {
	t.Helper()
	for _, doc := range manifestDocs(t, "manifests/pod-annotation-policy.yaml") {
		raw := doc.raw
		switch doc.kind {
		case "ValidatingAdmissionPolicy":
			p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
			if err := yaml.Unmarshal(raw, p); err != nil {
				t.Fatal(err)
			}
			if _, err := spoke.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		case "ValidatingAdmissionPolicyBinding":
			b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
			if err := yaml.Unmarshal(raw, b); err != nil {
				t.Fatal(err)
			}
			if _, err := spoke.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unexpected kind %q in manifests/pod-annotation-policy.yaml", doc.kind)
		}
	}
}

// manifestDoc is one YAML document of a manifest file and its kind.
type manifestDoc struct {
	kind string
	raw  []byte
}

// manifestDocs returns the documents of the repository file rel (slash-separated), skipping empty ones. It
// fails the test when the file cannot be read or parsed.
func manifestDocs(t testing.TB, rel string) []manifestDoc {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	var docs []manifestDoc
	decoder := yaml.NewYAMLOrJSONDecoder(strings.NewReader(string(data)), 4096)
	for {
		var raw runtime.RawExtension
		if err := decoder.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("parsing %s: %v", rel, err)
		}
		if len(raw.Raw) == 0 {
			continue
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(raw.Raw, &meta); err != nil {
			t.Fatalf("parsing %s: %v", rel, err)
		}
		docs = append(docs, manifestDoc{kind: meta.Kind, raw: raw.Raw})
	}
	return docs
}
