// Package manifests_test applies the kustomize output of manifests/ (the agent, to a real spoke apiserver) and of
// manifests/replicator and manifests/replicator/hub (the replicator, to a real hub apiserver), so that a broken
// manifest fails CI, and checks with SubjectAccessReviews and a ServiceAccount token what the RBAC grants.
package manifests_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	failoverclient "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/fence"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

const (
	applyTimeout = 2 * time.Minute

	replicatorNamespace      = "open-cluster-management-replicator"
	replicatorServiceAccount = "klusterlet-failover-replicator"
)

// tryKubectl runs the test bed's kubectl, with --kubeconfig when kubeconfig is not empty, and returns its
// stdout, its stderr and the error of the run.
func tryKubectl(t *testing.T, kubeconfig string, stdin []byte, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	dir, err := framework.BinariesDir()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
	defer cancel()
	if kubeconfig != "" {
		args = append([]string{"--kubeconfig", kubeconfig}, args...)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "kubectl"), args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.Bytes(), errOut.Bytes(), err
}

// kubectl runs tryKubectl and fails the test when kubectl fails.
func kubectl(t *testing.T, kubeconfig string, stdin []byte, args ...string) []byte {
	t.Helper()
	out, errOut, err := tryKubectl(t, kubeconfig, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// renderedObject is the part of a rendered manifest the checks read.
type renderedObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Rules []struct {
		APIGroups []string `json:"apiGroups"`
		Resources []string `json:"resources"`
		Verbs     []string `json:"verbs"`
	} `json:"rules"`
}

// render runs `kubectl kustomize <repo root>/dir` and returns the output and its objects; it fails the test
// when a rendered RBAC rule has a wildcard apiGroup, resource or verb.
func render(t *testing.T, root, dir string) ([]byte, []renderedObject) {
	t.Helper()
	rendered := kubectl(t, "", nil, "kustomize", filepath.Join(root, filepath.FromSlash(dir)))
	var objects []renderedObject
	for _, doc := range strings.Split(string(rendered), "\n---\n") {
		var obj renderedObject
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%s: rendered manifest does not parse: %v\n%s", dir, err, doc)
		}
		for _, r := range obj.Rules {
			for _, v := range slices.Concat(r.APIGroups, r.Resources, r.Verbs) {
				if v == "*" {
					t.Errorf("%s: %s %s has a wildcard rule: %+v", dir, obj.Kind, obj.Metadata.Name, r)
				}
			}
		}
		objects = append(objects, obj)
	}
	if len(objects) < 2 {
		t.Fatalf("%s renders %d objects:\n%s", dir, len(objects), rendered)
	}
	return rendered, objects
}

// requireNamespace fails the test unless objects hold kind/name in namespace.
func requireNamespace(t *testing.T, dir string, objects []renderedObject, kind, name, namespace string) {
	t.Helper()
	for _, o := range objects {
		if o.Kind == kind && o.Metadata.Name == name {
			if o.Metadata.Namespace != namespace {
				t.Errorf("%s: %s %s rendered in namespace %q, want %q", dir, kind, name, o.Metadata.Namespace, namespace)
			}
			return
		}
	}
	t.Errorf("%s renders no %s %s", dir, kind, name)
}

// apply applies rendered for real (namespaced objects need their namespace), then dry-runs the same apply on
// the server, which must be a clean no-op re-apply.
func apply(t *testing.T, kubeconfig string, rendered []byte) {
	t.Helper()
	kubectl(t, kubeconfig, rendered, "apply", "--server-side", "-f", "-", "--field-manager=manifests-test")
	kubectl(t, kubeconfig, rendered, "apply", "--server-side", "--dry-run=server", "-f", "-", "--field-manager=manifests-test")
}

func TestManifestsApplyToARealAPIServer(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	spoke := framework.StartSpoke(t)
	rendered, objects := render(t, root, "manifests")
	requireNamespace(t, "manifests", objects, "Role", "klusterlet-failover-authentication-reader", "kube-system")
	requireNamespace(t, "manifests", objects, "RoleBinding", "klusterlet-failover-authentication-reader", "kube-system")
	apply(t, spoke.KubeconfigFile(), rendered)

	ctx := context.Background()
	dep, err := spoke.Kube.AppsV1().Deployments("open-cluster-management-agent").Get(ctx, "klusterlet-failover", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Deployment not created: %v", err)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if got := strings.Join(c.Args[:2], " "); got != "agent failover" {
		t.Errorf("Deployment args start with %q, want %q", got, "agent failover")
	}
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("Deployment container must have a read-only root filesystem")
	}
	if sc := dep.Spec.Template.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("Deployment must run as non-root")
	}

	// The sample FailoverConfig is accepted by the CRD's validation once the CRD is served.
	sample := filepath.Join(root, "manifests", "samples", "failoverconfig.yaml")
	framework.Eventually(t, applyTimeout, 500*time.Millisecond, func() (bool, error) {
		_, _, err := tryKubectl(t, spoke.KubeconfigFile(), nil, "apply", "--server-side", "-f", sample)
		return err == nil, nil
	}, "sample FailoverConfig applies")
	invalid := []byte(`apiVersion: failover.open-cluster-management.io/v1alpha1
kind: FailoverConfig
metadata:
  name: invalid
  namespace: open-cluster-management-agent
spec:
  alternateHubs:
  - name: Hub_B
    bootstrapKubeconfigSecretRef: hub-b-bootstrap
  hubConnectionTimeout: 1s
`)
	_, out, err := tryKubectl(t, spoke.KubeconfigFile(), invalid, "apply", "--server-side", "-f", "-")
	if err == nil {
		t.Fatalf("an invalid FailoverConfig (bad hub name, 1s timeout) was accepted")
	}
	for _, want := range []string{"alternateHubs[0].name", "hubConnectionTimeout"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("rejection of the invalid FailoverConfig does not name %s:\n%s", want, out)
		}
	}
}

// access is one request a SubjectAccessReview asks about.
type access struct {
	verb, group, resource, subresource, namespace, name string
}

func (a access) String() string {
	s := a.verb + " " + a.resource
	if a.group != "" {
		s += "." + a.group
	}
	if a.subresource != "" {
		s += "/" + a.subresource
	}
	if a.name != "" {
		s += " " + a.name
	}
	if a.namespace != "" {
		s += " in " + a.namespace
	}
	return s
}

// checkAccess asks hub, with a SubjectAccessReview per request, whether the replicator's ServiceAccount may do
// each of allowed and none of denied; every wrong answer is a test error.
func checkAccess(t *testing.T, hub *framework.Hub, phase string, allowed, denied []access) {
	t.Helper()
	user := "system:serviceaccount:" + replicatorNamespace + ":" + replicatorServiceAccount
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + replicatorNamespace, "system:authenticated"}
	ask := func(a access) bool {
		t.Helper()
		sar, err := hub.Kube.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User:   user,
				Groups: groups,
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource,
					Namespace: a.namespace, Name: a.name,
				},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SubjectAccessReview %s: %v", a, err)
		}
		return sar.Status.Allowed
	}
	for _, a := range allowed {
		if !ask(a) {
			t.Errorf("%s: the replicator's ServiceAccount may not %s, want allowed", phase, a)
		}
	}
	for _, a := range denied {
		if ask(a) {
			t.Errorf("%s: the replicator's ServiceAccount may %s, want denied", phase, a)
		}
	}
}

// serviceAccountKubeconfig writes, to a file it returns, a kubeconfig for the replicator's ServiceAccount on hub
// with a token from the TokenRequest API, as `kubectl create token` makes it.
func serviceAccountKubeconfig(t *testing.T, hub *framework.Hub) string {
	t.Helper()
	seconds := int64(600)
	tr, err := hub.Kube.CoreV1().ServiceAccounts(replicatorNamespace).CreateToken(context.Background(), replicatorServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for the replicator's ServiceAccount: %v", err)
	}
	c := clientcmdapi.NewConfig()
	c.Clusters["hub"] = &clientcmdapi.Cluster{Server: strings.TrimSuffix(hub.URL(), "/"), CertificateAuthorityData: hub.CAData()}
	c.AuthInfos["replicator"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	c.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "replicator"}
	c.CurrentContext = "hub"
	data, err := clientcmd.Write(*c)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "replicator.kubeconfig")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestReplicatorManifestsApplyToAHub installs what a standby hub gets: manifests/replicator/hub (the identity of
// the replicator's kubeconfig, on every hub) and manifests/replicator (the replicator itself), checks the access
// each grants, that a kubeconfig for the ServiceAccount works as documented, and that the CRD accepts the sample
// ReplicationConfig and rejects invalid ones as ValidateReplicationConfig does.
func TestReplicatorManifestsApplyToAHub(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	hub := framework.StartHub(t, framework.HubOptions{Name: "hub", Signer: framework.SignerNone})
	now := time.Now()
	admin := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := os.WriteFile(admin, hub.UserKubeconfig("manifests-test-admin", now.Add(-time.Hour), now.Add(time.Hour), "system:masters"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The hub part alone, as on a hub that does not run the replicator.
	hubRendered, hubObjects := render(t, root, "manifests/replicator/hub")
	requireNamespace(t, "manifests/replicator/hub", hubObjects, "ServiceAccount", replicatorServiceAccount, replicatorNamespace)
	apply(t, admin, hubRendered)

	hubAllowed := []access{
		{verb: "create", group: "work.open-cluster-management.io", resource: "manifestworks", namespace: "cluster1"},
		{verb: "delete", group: "work.open-cluster-management.io", resource: "manifestworks", namespace: "cluster1", name: "w"},
		{verb: "watch", group: "work.open-cluster-management.io", resource: "manifestworks"},
		// What OCM v1.2.0's work webhook asks (pkg/work/webhook/v1) for a ManifestWork with spec.executor.
		{verb: "execute-as", group: "work.open-cluster-management.io", resource: "manifestworks", namespace: "cluster1", name: "system:serviceaccount:default:deployer"},
		{verb: "execute-as", group: "work.open-cluster-management.io", resource: "manifestworks", namespace: "cluster1", name: "system:serviceaccount::klusterlet-work-sa"},
		{verb: "update", group: "cluster.open-cluster-management.io", resource: "managedclusters", name: "cluster1"},
		{verb: "create", group: "cluster.open-cluster-management.io", resource: "managedclusters"},
		{verb: "list", group: "cluster.open-cluster-management.io", resource: "managedclustersets"},
		{verb: "patch", group: "cluster.open-cluster-management.io", resource: "managedclustersetbindings", namespace: "default", name: "prod"},
		{verb: "create", group: "cluster.open-cluster-management.io", resource: "placements", namespace: "default"},
		{verb: "create", group: "cluster.open-cluster-management.io", resource: "managedclustersets", subresource: "join", name: "prod"},
		{verb: "create", group: "cluster.open-cluster-management.io", resource: "managedclustersets", subresource: "bind", name: "prod"},
		{verb: "update", group: "register.open-cluster-management.io", resource: "managedclusters", subresource: "accept", name: "cluster1"},
		{verb: "update", group: "addon.open-cluster-management.io", resource: "managedclusteraddons", namespace: "cluster1", name: "a"},
		{verb: "list", resource: "secrets"},
		{verb: "create", resource: "secrets", namespace: "cluster1"},
		{verb: "delete", resource: "configmaps", namespace: "default", name: "c"},
		{verb: "create", resource: "namespaces"},
		{verb: "watch", resource: "namespaces"},
		{verb: "patch", resource: "namespaces", name: "cluster1"},
		{verb: "create", group: "admissionregistration.k8s.io", resource: "validatingadmissionpolicies"},
		{verb: "patch", group: "admissionregistration.k8s.io", resource: "validatingadmissionpolicies", name: "klusterlet-failover-fence"},
		{verb: "patch", group: "admissionregistration.k8s.io", resource: "validatingadmissionpolicybindings", name: "klusterlet-failover-fence"},
		{verb: "get", group: "admissionregistration.k8s.io", resource: "validatingadmissionpolicybindings", name: "klusterlet-failover-fence"},
		{verb: "create", group: "authentication.k8s.io", resource: "selfsubjectreviews"},
		{verb: "watch", group: "coordination.k8s.io", resource: "leases"},
		{verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: "cluster1", name: "managed-cluster-lease"},
	}
	denied := []access{
		{verb: "delete", resource: "namespaces", name: "cluster1"},
		{verb: "update", resource: "namespaces", name: "cluster1"},
		{verb: "patch", group: "admissionregistration.k8s.io", resource: "validatingadmissionpolicies", name: "another-policy"},
		{verb: "delete", group: "admissionregistration.k8s.io", resource: "validatingadmissionpolicybindings", name: "klusterlet-failover-fence"},
		{verb: "create", group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterroles"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings", namespace: "cluster1"},
		{verb: "impersonate", resource: "serviceaccounts", namespace: "cluster1"},
		{verb: "create", resource: "pods", namespace: "cluster1"},
		{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: "cluster1", name: "x"},
		{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: "cluster1", name: "managed-cluster-lease"},
		{verb: "update", group: "cluster.open-cluster-management.io", resource: "managedclusters", subresource: "status", name: "cluster1"},
		{verb: "update", group: "work.open-cluster-management.io", resource: "manifestworks", subresource: "status", namespace: "cluster1", name: "w"},
		{verb: "create", group: "cluster.open-cluster-management.io", resource: "placementdecisions", namespace: "default"},
		{verb: "approve", group: "certificates.k8s.io", resource: "signers", name: "kubernetes.io/kube-apiserver-client"},
		{verb: "update", group: "certificates.k8s.io", resource: "certificatesigningrequests", subresource: "approval", name: "csr"},
	}
	replicatorAllowed := []access{
		{verb: "watch", resource: "secrets", namespace: replicatorNamespace},
		{verb: "get", group: "failover.open-cluster-management.io", resource: "replicationconfigs", namespace: replicatorNamespace, name: "replication"},
		{verb: "watch", group: "failover.open-cluster-management.io", resource: "replicationconfigs", namespace: replicatorNamespace},
		{verb: "patch", group: "failover.open-cluster-management.io", resource: "replicationconfigs", subresource: "status", namespace: replicatorNamespace, name: "replication"},
		{verb: "update", group: "failover.open-cluster-management.io", resource: "replicationconfigs", subresource: "status", namespace: replicatorNamespace, name: "replication"},
		{verb: "create", resource: "events", namespace: replicatorNamespace},
		{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: replicatorNamespace},
		{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: replicatorNamespace, name: "klusterlet-failover-replicator-lock"},
		{verb: "get", resource: "pods", namespace: replicatorNamespace, name: "p"},
		{verb: "get", group: "apps", resource: "replicasets", namespace: replicatorNamespace, name: "r"},
		{verb: "get", resource: "configmaps", namespace: "kube-system", name: "extension-apiserver-authentication"},
		{verb: "create", group: "authentication.k8s.io", resource: "tokenreviews"},
		{verb: "create", group: "authorization.k8s.io", resource: "subjectaccessreviews"},
	}
	// Before the replicator is installed its own permissions are absent: the hub part grants none of them beyond
	// the Secrets and ConfigMaps every hub must grant.
	var replicatorOnly []access
	for _, a := range replicatorAllowed {
		if a.resource != "secrets" && a.resource != "configmaps" {
			replicatorOnly = append(replicatorOnly, a)
		}
	}
	checkAccess(t, hub, "hub part only", hubAllowed, slices.Concat(denied, replicatorOnly))

	// The replicator on the same hub, as on a standby hub.
	repRendered, repObjects := render(t, root, "manifests/replicator")
	const dir = "manifests/replicator"
	requireNamespace(t, dir, repObjects, "Role", "klusterlet-failover-replicator-authentication-reader", "kube-system")
	requireNamespace(t, dir, repObjects, "RoleBinding", "klusterlet-failover-replicator-authentication-reader", "kube-system")
	requireNamespace(t, dir, repObjects, "Role", "klusterlet-failover-replicator", replicatorNamespace)
	requireNamespace(t, dir, repObjects, "Deployment", "klusterlet-failover-replicator", replicatorNamespace)
	apply(t, admin, repRendered)
	checkAccess(t, hub, "hub part and replicator", slices.Concat(hubAllowed, replicatorAllowed), slices.Concat(denied, []access{
		{verb: "create", group: "failover.open-cluster-management.io", resource: "replicationconfigs", namespace: replicatorNamespace},
		{verb: "update", group: "failover.open-cluster-management.io", resource: "replicationconfigs", namespace: replicatorNamespace, name: "replication"},
		{verb: "delete", group: "coordination.k8s.io", resource: "leases", namespace: replicatorNamespace, name: "klusterlet-failover-replicator-lock"},
		{verb: "get", resource: "pods", namespace: "cluster1", name: "p"},
	}))

	checkReplicatorDeployment(t, hub)

	// A kubeconfig with a TokenRequest token authenticates as the ServiceAccount and gets what the ClusterRole
	// grants, and no more.
	sa := serviceAccountKubeconfig(t, hub)
	kubectl(t, sa, nil, "create", "namespace", "cluster1")
	kubectl(t, sa, []byte(`apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  name: replicated
  namespace: cluster1
spec:
  workload:
    manifests:
    - apiVersion: v1
      kind: ConfigMap
      metadata:
        name: replicated
        namespace: default
`), "create", "-f", "-")
	kubectl(t, sa, nil, "get", "leases", "--all-namespaces")
	if _, out, err := tryKubectl(t, sa, nil, "delete", "namespace", "cluster1", "--wait=false"); err == nil || !strings.Contains(string(out), "Forbidden") {
		t.Errorf("the replicator's ServiceAccount deleted a namespace (err %v):\n%s", err, out)
	}

	checkFenceApplies(t, hub, sa)

	checkReplicationConfigSchema(t, hub, admin, root)
}

// checkFenceApplies applies, with the replicator ServiceAccount's kubeconfig sa, the fence policy and binding the
// replicator installs (fence.Policy, fence.Binding), twice (a create, then an update), as the replicator does
// each time a hub becomes ready. (Their evaluation is checked in test/integration/replicator.)
func checkFenceApplies(t *testing.T, hub *framework.Hub, sa string) {
	t.Helper()
	widgets := failoverv1alpha1.CustomKind{Group: "example.com", Version: "v1", Resource: "widgets", Namespaced: true,
		Scope: failoverv1alpha1.ScopeClusterByNamespace, Fields: []string{"spec", "data"}, GeneratedLabels: []string{"example.com/generated-by"}}
	policy, err := fence.Policy("hub-x", "system:serviceaccount:"+replicatorNamespace+":"+replicatorServiceAccount,
		append(slices.Clone(mirror.Kinds), mirror.CustomKindOf(widgets)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		for _, obj := range []any{policy, fence.Binding()} {
			data, err := yaml.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			kubectl(t, sa, data, "apply", "--server-side", "--force-conflicts", "--field-manager=klusterlet-failover-replicator", "-f", "-")
		}
	}
	if _, err := hub.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(context.Background(), fence.PolicyName, metav1.GetOptions{}); err != nil {
		t.Errorf("the fence binding after the replicator's apply: %v", err)
	}
}

// checkReplicatorDeployment checks the replicator's Deployment as the API server stored it.
func checkReplicatorDeployment(t *testing.T, hub *framework.Hub) {
	t.Helper()
	dep, err := hub.Kube.AppsV1().Deployments(replicatorNamespace).Get(context.Background(), "klusterlet-failover-replicator", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("replicator Deployment not created: %v", err)
	}
	spec := dep.Spec.Template.Spec
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 1 || spec.ServiceAccountName != replicatorServiceAccount || len(spec.Containers) != 1 {
		t.Fatalf("replicas %v, ServiceAccount %q, %d containers: want 1, %s, 1", dep.Spec.Replicas, spec.ServiceAccountName,
			len(spec.Containers), replicatorServiceAccount)
	}
	c := spec.Containers[0]
	wantArgs := []string{"replicator", "--namespace=" + replicatorNamespace, "--config-name=replication"}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args %q, want %q", c.Args, wantArgs)
	}
	fieldPaths := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			fieldPaths[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if fieldPaths["POD_NAME"] != "metadata.name" || fieldPaths["POD_NAMESPACE"] != "metadata.namespace" {
		t.Errorf("downward API env %v, want POD_NAME from metadata.name and POD_NAMESPACE from metadata.namespace", fieldPaths)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8443 {
		t.Errorf("ports %+v, want 8443 only", c.Ports)
	}
	for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Port.IntValue() != 8443 || p.HTTPGet.Scheme != corev1.URISchemeHTTPS {
			t.Errorf("%s probe %+v, want HTTPS GET on 8443", name, p)
		}
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("container security context %+v, want a read-only root filesystem and no privilege escalation", sc)
	}
	if sc := spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("the replicator must run as non-root")
	}
	// The limit fits the largest fleet measured (docs/benchmarks-replication.md: a peak of 433 MiB at 3,500
	// clusters x 10 ManifestWorks x 2 standbys) with at least 40 % to spare: an OOM-killed replicator holds deletes.
	limit, ok := c.Resources.Limits[corev1.ResourceMemory]
	if floor := resource.MustParse("607Mi"); !ok || limit.Cmp(floor) < 0 {
		t.Errorf("memory limit %s, want at least %s (1.4 x the 433 MiB peak measured)", limit.String(), floor.String())
	}
	if got := c.Resources.Requests[corev1.ResourceMemory]; got.IsZero() || got.Cmp(limit) > 0 {
		t.Errorf("memory request %s, want one, not above the limit %s", got.String(), limit.String())
	}
}

// checkReplicationConfigSchema creates the sample ReplicationConfig (the CRD defaults each kubeconfigSecret.key)
// and checks that the CRD rejects invalid ones, naming the field, where ValidateReplicationConfig rejects them
// too.
func checkReplicationConfigSchema(t *testing.T, hub *framework.Hub, admin, root string) {
	t.Helper()
	sample := filepath.Join(root, "manifests", "samples", "replicationconfig.yaml")
	framework.Eventually(t, applyTimeout, 500*time.Millisecond, func() (bool, error) {
		_, _, err := tryKubectl(t, admin, nil, "apply", "--server-side", "--dry-run=server", "-f", sample)
		return err == nil, nil
	}, "sample ReplicationConfig passes a server-side dry run")
	kubectl(t, admin, nil, "create", "-f", sample)
	client, err := failoverclient.NewForConfig(hub.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := client.FailoverV1alpha1().ReplicationConfigs(replicatorNamespace).Get(context.Background(), "replication", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("sample ReplicationConfig: %v", err)
	}
	type hubRef struct{ Name, Secret, Key string }
	var got []hubRef
	for _, h := range rc.Spec.Hubs {
		got = append(got, hubRef{h.Name, h.KubeconfigSecret.Name, h.KubeconfigSecret.Key})
	}
	want := []hubRef{{"primary", "hub-primary-kubeconfig", "kubeconfig"}, {"hub-b", "hub-b-kubeconfig", "kubeconfig"}}
	if !slices.Equal(got, want) {
		t.Errorf("sample hubs as stored %+v, want %+v (the key defaulted)", got, want)
	}
	if errs := failoverv1alpha1.ValidateReplicationConfig(rc); len(errs) > 0 {
		t.Errorf("ValidateReplicationConfig rejects the sample: %v", errs.ToAggregate())
	}

	const head = `apiVersion: failover.open-cluster-management.io/v1alpha1
kind: ReplicationConfig
metadata:
  name: invalid
  namespace: open-cluster-management-replicator
spec:
`
	invalid := []struct {
		name string
		spec string
		// want are substrings of the API server's rejection.
		want []string
	}{
		{
			name: "a single hub",
			spec: `  hubs:
  - name: primary
    kubeconfigSecret:
      name: hub-primary-kubeconfig
`,
			want: []string{"spec.hubs: Invalid value: 1", "at least 2 items"},
		},
		{
			name: "bad names and an unknown kind",
			spec: `  hubs:
  - name: Hub_B
    kubeconfigSecret:
      name: hub-b-kubeconfig
  - name: primary
    kubeconfigSecret:
      name: Hub.Primary
  kinds: [Pod]
`,
			want: []string{`spec.hubs[0].name: Invalid value: "Hub_B"`, `spec.hubs[1].kubeconfigSecret.name: Invalid value: "Hub.Primary"`,
				`spec.kinds[0]: Unsupported value: "Pod"`},
		},
		{
			name: "duplicate hub names",
			spec: `  hubs:
  - name: primary
    kubeconfigSecret:
      name: a
  - name: primary
    kubeconfigSecret:
      name: b
`,
			want: []string{`spec.hubs[1]: Duplicate value: {"name":"primary"}`},
		},
	}
	for _, tc := range invalid {
		doc := []byte(head + tc.spec)
		_, out, err := tryKubectl(t, admin, doc, "create", "--dry-run=server", "-f", "-")
		if err == nil {
			t.Errorf("%s: the CRD accepted the invalid ReplicationConfig", tc.name)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: the rejection does not contain %q:\n%s", tc.name, w, out)
			}
		}
		var obj failoverv1alpha1.ReplicationConfig
		if err := yaml.UnmarshalStrict(doc, &obj); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if errs := failoverv1alpha1.ValidateReplicationConfig(&obj); len(errs) == 0 {
			t.Errorf("%s: the CRD rejects it and ValidateReplicationConfig accepts it", tc.name)
		}
	}
}
