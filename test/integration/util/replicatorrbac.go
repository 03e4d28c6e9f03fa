package util

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// The replicator's identity on a hub, as manifests/replicator/hub/serviceaccount.yaml creates it.
const (
	ReplicatorHubNamespace      = "open-cluster-management-replicator"
	ReplicatorHubServiceAccount = "klusterlet-failover-replicator"
)

// replicatorTokenLifetime is how long the tokens of ReplicatorKubeconfig are valid: longer than any suite.
const replicatorTokenLifetime = 12 * time.Hour

// ReplicatorKubeconfig applies manifests/replicator/hub (Namespace, ServiceAccount, ClusterRole and its
// binding; objects that exist are kept) on hub and returns a kubeconfig for that ServiceAccount, as the
// manifests' kustomization.yaml tells a user to make it: a bearer token from the TokenRequest API, hub's CA, and
// server (hub.DirectURL() when empty, not through the hub's proxy, as the admin kubeconfig; else e.g. a proxy's
// URL). It returns once the hub authorizes the ServiceAccount
// to list ManagedClusters (RBAC's informer has seen the binding). It fails the test on error.
func ReplicatorKubeconfig(t testing.TB, hub *framework.Hub, server string) []byte {
	t.Helper()
	ctx := context.Background()
	for _, rel := range []string{"manifests/replicator/hub/namespace.yaml", "manifests/replicator/hub/serviceaccount.yaml", "manifests/replicator/hub/rbac.yaml"} {
		for _, doc := range manifestDocs(t, rel) {
			var err error
			switch doc.kind {
			case "Namespace":
				ns := &corev1.Namespace{}
				if err = yaml.Unmarshal(doc.raw, ns); err == nil {
					_, err = hub.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
				}
			case "ServiceAccount":
				sa := &corev1.ServiceAccount{}
				if err = yaml.Unmarshal(doc.raw, sa); err == nil {
					_, err = hub.Kube.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{})
				}
			case "ClusterRole":
				role := &rbacv1.ClusterRole{}
				if err = yaml.Unmarshal(doc.raw, role); err == nil {
					_, err = hub.Kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
				}
			case "ClusterRoleBinding":
				binding := &rbacv1.ClusterRoleBinding{}
				if err = yaml.Unmarshal(doc.raw, binding); err == nil {
					_, err = hub.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
				}
			default:
				t.Fatalf("unexpected kind %q in %s", doc.kind, rel)
			}
			if err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("hub %s: apply %s (%s): %v", hub.Name, rel, doc.kind, err)
			}
		}
	}
	seconds := int64(replicatorTokenLifetime / time.Second)
	tr, err := hub.Kube.CoreV1().ServiceAccounts(ReplicatorHubNamespace).CreateToken(ctx, ReplicatorHubServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("hub %s: token for %s/%s: %v", hub.Name, ReplicatorHubNamespace, ReplicatorHubServiceAccount, err)
	}
	user := "system:serviceaccount:" + ReplicatorHubNamespace + ":" + ReplicatorHubServiceAccount
	framework.Eventually(t, 30*time.Second, PollInterval, func() (bool, error) {
		sar, err := hub.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User:   user,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ReplicatorHubNamespace, "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Group: "cluster.open-cluster-management.io", Resource: "managedclusters", Verb: "list",
				},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return sar.Status.Allowed, nil
	}, "hub %s authorizes %s to list ManagedClusters", hub.Name, user)
	if server == "" {
		server = hub.DirectURL()
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[hub.Name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: hub.CAData()}
	cfg.AuthInfos["replicator"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts[hub.Name] = &clientcmdapi.Context{Cluster: hub.Name, AuthInfo: "replicator"}
	cfg.CurrentContext = hub.Name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatalf("hub %s: write the replicator's kubeconfig: %v", hub.Name, err)
	}
	return data
}
