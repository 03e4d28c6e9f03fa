package util

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// ApplyAgentRBAC applies manifests/rbac.yaml (the agent's least privilege) for the ServiceAccount
// klusterlet-failover of each of namespaces, which must exist: the namespaced Role and RoleBinding of the agent
// namespace in each namespace, and the kube-system Role, ClusterRole and their bindings once, each binding
// naming every namespace's ServiceAccount (added to an existing binding of the same name). Up to 16 namespaces are
// written at once. It fails the test on error.
func ApplyAgentRBAC(t testing.TB, ctx context.Context, spoke *framework.Spoke, namespaces ...string) {
	t.Helper()
	const manifestNamespace, serviceAccount = "open-cluster-management-agent", "klusterlet-failover"
	subjects := make([]rbacv1.Subject, len(namespaces))
	for i, ns := range namespaces {
		subjects[i] = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: ns}
	}
	rbac := spoke.Kube.RbacV1()
	var perNamespace []func(ns string) error
	for _, doc := range manifestDocs(t, "manifests/rbac.yaml") {
		switch doc.kind {
		case "Role":
			role := &rbacv1.Role{}
			if err := yaml.Unmarshal(doc.raw, role); err != nil {
				t.Fatal(err)
			}
			if role.Namespace != manifestNamespace {
				if _, err := rbac.Roles(role.Namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatal(err)
				}
				continue
			}
			perNamespace = append(perNamespace, func(ns string) error {
				r := role.DeepCopy()
				r.Namespace = ns
				_, err := rbac.Roles(ns).Create(ctx, r, metav1.CreateOptions{})
				return err
			})
		case "RoleBinding":
			rb := &rbacv1.RoleBinding{}
			if err := yaml.Unmarshal(doc.raw, rb); err != nil {
				t.Fatal(err)
			}
			if rb.Namespace != manifestNamespace {
				rb.Subjects = subjects
				if _, err := rbac.RoleBindings(rb.Namespace).Create(ctx, rb, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
					got, err := rbac.RoleBindings(rb.Namespace).Get(ctx, rb.Name, metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					got.Subjects = append(got.Subjects, subjects...)
					if _, err := rbac.RoleBindings(rb.Namespace).Update(ctx, got, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				continue
			}
			perNamespace = append(perNamespace, func(ns string) error {
				b := rb.DeepCopy()
				b.Namespace = ns
				b.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: ns}}
				_, err := rbac.RoleBindings(ns).Create(ctx, b, metav1.CreateOptions{})
				return err
			})
		case "ClusterRole":
			cr := &rbacv1.ClusterRole{}
			if err := yaml.Unmarshal(doc.raw, cr); err != nil {
				t.Fatal(err)
			}
			if _, err := rbac.ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		case "ClusterRoleBinding":
			crb := &rbacv1.ClusterRoleBinding{}
			if err := yaml.Unmarshal(doc.raw, crb); err != nil {
				t.Fatal(err)
			}
			crb.Subjects = subjects
			if _, err := rbac.ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
				got, err := rbac.ClusterRoleBindings().Get(ctx, crb.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				got.Subjects = append(got.Subjects, subjects...)
				if _, err := rbac.ClusterRoleBindings().Update(ctx, got, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unexpected kind %q in manifests/rbac.yaml", doc.kind)
		}
	}
	if err := ForEach(namespaces, 16, func(ns string) error {
		for _, apply := range perNamespace {
			if err := apply(ns); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("agent RBAC in namespace %s: %w", ns, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// ForEach calls f for every item, at most workers at once, and returns the errors joined (nil when none).
func ForEach[T any](items []T, workers int, f func(T) error) error {
	work := make(chan T)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for item := range work {
				if err := f(item); err != nil && errs[w] == nil {
					errs[w] = err
				}
			}
		}()
	}
	for _, item := range items {
		work <- item
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}
