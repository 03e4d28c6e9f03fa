// Package manifests_test applies the kustomize output of manifests/ to a real spoke apiserver, so that a broken
// manifest fails CI.
package manifests_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

const applyTimeout = 2 * time.Minute

func kubectl(t *testing.T, spoke *framework.Spoke, stdin []byte, args ...string) []byte {
	t.Helper()
	dir, err := framework.BinariesDir()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "kubectl"), append([]string{"--kubeconfig", spoke.KubeconfigFile()}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

func TestManifestsApplyToARealAPIServer(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	spoke := framework.StartSpoke(t)
	rendered := kubectl(t, spoke, nil, "kustomize", filepath.Join(root, "manifests"))

	// No wildcard in any RBAC rule.
	for _, doc := range strings.Split(string(rendered), "\n---\n") {
		var obj struct {
			Kind  string `json:"kind"`
			Rules []struct {
				APIGroups []string `json:"apiGroups"`
				Resources []string `json:"resources"`
				Verbs     []string `json:"verbs"`
			} `json:"rules"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("rendered manifest does not parse: %v\n%s", err, doc)
		}
		for _, r := range obj.Rules {
			for _, v := range append(append(append([]string{}, r.APIGroups...), r.Resources...), r.Verbs...) {
				if v == "*" {
					t.Errorf("%s has a wildcard rule: %+v", obj.Kind, r)
				}
			}
		}
	}

	// A real apply (the namespaced objects need their namespace), then a server-side dry run of the same
	// manifests, which must be a clean no-op re-apply.
	kubectl(t, spoke, rendered, "apply", "--server-side", "-f", "-", "--field-manager=manifests-test")
	kubectl(t, spoke, rendered, "apply", "--server-side", "--dry-run=server", "-f", "-", "--field-manager=manifests-test")

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
	framework.Eventually(t, applyTimeout, 500*time.Millisecond, func() (bool, error) {
		dir, _ := framework.BinariesDir()
		cmd := exec.Command(filepath.Join(dir, "kubectl"), "--kubeconfig", spoke.KubeconfigFile(), "apply", "--server-side",
			"-f", filepath.Join(root, "manifests", "samples", "failoverconfig.yaml"))
		return cmd.Run() == nil, nil
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
	dir, _ := framework.BinariesDir()
	cmd := exec.Command(filepath.Join(dir, "kubectl"), "--kubeconfig", spoke.KubeconfigFile(), "apply", "--server-side", "-f", "-")
	cmd.Stdin = bytes.NewReader(invalid)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("an invalid FailoverConfig (bad hub name, 1s timeout) was accepted:\n%s", out)
	}
	for _, want := range []string{"alternateHubs[0].name", "hubConnectionTimeout"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("rejection of the invalid FailoverConfig does not name %s:\n%s", want, out)
		}
	}
}
