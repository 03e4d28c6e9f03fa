package agent_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// testInvalidFlags (FC-04, FC-05): every invalid --spoke-external-server-urls value and cluster or agent name
// makes RunWithClients return one error naming the flag, the value and the rule, before any hub call: the hub
// holds no CSR and no ManagedCluster for the cluster afterwards.
func testInvalidFlags(t *testing.T, s *suite) {
	long := strings.Repeat("a", 64)
	cases := []struct {
		name        string
		cluster     string // also the cluster whose CSRs and ManagedCluster must not exist
		agent       string
		url         string
		flag, value string
		rule        string
	}{
		{name: "url without scheme", cluster: "fc04-a", url: "10.0.0.1:6443", flag: "--spoke-external-server-urls", value: "10.0.0.1:6443", rule: "https://"},
		{name: "url without host", cluster: "fc04-b", url: "https://", flag: "--spoke-external-server-urls", value: "https://", rule: "https://"},
		{name: "http url", cluster: "fc04-c", url: "http://10.0.0.1:6443", flag: "--spoke-external-server-urls", value: "http://10.0.0.1:6443", rule: "https://"},
		{name: "empty url", cluster: "fc04-d", url: "", flag: "--spoke-external-server-urls", value: "", rule: "https://"},
		{name: "cluster name with dots", cluster: "cluster0.example.internal", flag: "--cluster-name", value: "cluster0.example.internal", rule: "DNS-1123 label"},
		{name: "cluster name of 64 characters", cluster: long, flag: "--cluster-name", value: long, rule: "DNS-1123 label"},
		{name: "upper-case cluster name", cluster: "Upper", flag: "--cluster-name", value: "Upper", rule: "DNS-1123 label"},
		{name: "upper-case agent name", cluster: "fc05-agent", agent: "Agent_1", flag: "--agent-name", value: "Agent_1", rule: "DNS-1123 label"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := agentSpec{cluster: tc.cluster, agent: tc.agent, secret: "hks-" + sanitize(tc.name), bootstrap: s.hub.BootstrapKubeconfig()}
			if tc.flag == "--spoke-external-server-urls" {
				spec.urls = []string{tc.url}
			}
			a := startAgent(t, s.spokeB, spec)
			var runErr error
			framework.Eventually(t, exitTimeout, pollInterval, func() (bool, error) {
				exited, err := a.Exited()
				runErr = err
				return exited, nil
			}, "RunWithClients returns for %s %q", tc.flag, tc.value)
			if runErr == nil {
				t.Fatalf("RunWithClients returned nil for %s %q, want an error", tc.flag, tc.value)
			}
			msg := runErr.Error()
			for _, want := range []string{tc.flag, fmt.Sprintf("%q", tc.value), tc.rule} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q (it must name the flag, the value and the rule)", msg, want)
				}
			}
			if n := strings.Count(msg, "\n") + 1; n != 1 {
				t.Errorf("error has %d lines, want one message: %q", n, msg)
			}
			requireNoHubObjects(t, s.hub, tc.cluster)
			if getSecret(t, s.spokeB, spec.secret) != nil {
				t.Errorf("secret %s written although the flags are invalid", spec.secret)
			}
		})
	}
}

// testAcceptedURLsAndNames (FC-04, FC-05): an IPv6 URL and a URL with a trailing slash are accepted and published
// as given in spec.managedClusterClientConfigs (with the spoke CA); "20abc" is a DNS-1123 label and is accepted
// as a cluster name; a generated agent name is five lower-case letters. A second agent without any name gets a
// generated cluster name that starts with a letter.
func testAcceptedURLsAndNames(t *testing.T, s *suite) {
	t.Run("IPv6 and trailing slash URLs, digit-first cluster name", func(t *testing.T) {
		t.Parallel()
		urls := []string{"https://[::1]:6443", "https://10.0.0.1:6443/"}
		a := startAgent(t, s.spokeB, agentSpec{cluster: "20abc", secret: "hks-fc04-urls", bootstrap: s.hub.BootstrapKubeconfig(), urls: urls})
		mc := waitAvailable(t, s.hub, "20abc", joinTimeout)
		want := []clusterv1.ClientConfig{{URL: urls[0], CABundle: s.spokeB.CAData()}, {URL: urls[1], CABundle: s.spokeB.CAData()}}
		if diff := cmp.Diff(want, mc.Spec.ManagedClusterClientConfigs); diff != "" {
			t.Errorf("spec.managedClusterClientConfigs (-want +got):\n%s", diff)
		}
		secret := waitValidSecret(t, s.spokeB, s.hub, a.Secret, "20abc", "", hubTimeout)
		if agent := string(secret.Data[secretKeyAgentName]); !regexp.MustCompile(`^[a-z]{5}$`).MatchString(agent) {
			t.Errorf("generated agent name %q, want five lower-case letters", agent)
		}
		requireRunning(t, a)
	})
	t.Run("generated cluster name", func(t *testing.T) {
		t.Parallel()
		a := startAgent(t, s.spokeB, agentSpec{secret: "hks-fc05-generated", bootstrap: s.hub.BootstrapKubeconfig()})
		var cluster string
		framework.Eventually(t, joinTimeout, pollInterval, func() (bool, error) {
			secret := getSecret(t, s.spokeB, a.Secret)
			if secret == nil {
				return false, nil
			}
			cluster = string(secret.Data[secretKeyClusterName])
			return cluster != "", nil
		}, "secret %s written with a generated cluster name", a.Secret)
		if !regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`).MatchString(cluster) || len(cluster) > 63 {
			t.Errorf("generated cluster name %q: want a DNS-1123 label starting with a letter", cluster)
		}
		waitAvailable(t, s.hub, cluster, joinTimeout)
		requireRunning(t, a)
	})
}

// sanitize turns a subtest name into a DNS-1123 fragment.
func sanitize(name string) string {
	return strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(name), "-"), "-")
}
