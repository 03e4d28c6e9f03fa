package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// testDamagedSecret (FC-07): with a valid bootstrap kubeconfig, each damaged hub kubeconfig Secret is detected at
// start; a fresh key and one CSR follow; the Secret is rewritten whole (every version the agent writes holds
// all five keys, consistent with each other) and the agent keeps running without further CSRs.
func testDamagedSecret(t *testing.T, s *suite) {
	const agent = "agent7"
	now := time.Now()
	identity := func(cluster string) (string, []string) {
		return subjectPrefix + cluster + ":" + agent, []string{subjectPrefix + cluster, managedClustersGroup}
	}
	cases := []struct {
		name    string
		cluster string
		// damage returns the Secret data for cluster.
		damage func(cluster string) map[string][]byte
		// cause is part of the HubKubeconfigInvalid event naming what is wrong.
		cause string
	}{
		{
			name: "tls.crt expired an hour ago", cluster: "fc07-expired", cause: "expired",
			damage: func(cluster string) map[string][]byte {
				user, groups := identity(cluster)
				certPEM, keyPEM := s.ca.IssueClientCert(t, user, groups, now.Add(-25*time.Hour), now.Add(-time.Hour))
				return secretData(t, s.hub, cluster, agent, certPEM, keyPEM)
			},
		},
		{
			name: "tls.crt and tls.key from different key pairs", cluster: "fc07-mismatch", cause: "does not match",
			damage: func(cluster string) map[string][]byte {
				user, groups := identity(cluster)
				certPEM, _ := s.ca.IssueClientCert(t, user, groups, now.Add(-time.Hour), now.Add(24*time.Hour))
				_, otherKey := s.ca.IssueClientCert(t, user, groups, now.Add(-time.Hour), now.Add(24*time.Hour))
				return secretData(t, s.hub, cluster, agent, certPEM, otherKey)
			},
		},
		{
			name: "truncated PEM", cluster: "fc07-truncated", cause: "unparsable",
			damage: func(cluster string) map[string][]byte {
				user, groups := identity(cluster)
				certPEM, keyPEM := s.ca.IssueClientCert(t, user, groups, now.Add(-time.Hour), now.Add(24*time.Hour))
				return secretData(t, s.hub, cluster, agent, certPEM[:len(certPEM)/2], keyPEM)
			},
		},
		{
			name: "kubeconfig key missing", cluster: "fc07-nokubeconfig", cause: "missing key kubeconfig",
			damage: func(cluster string) map[string][]byte {
				user, groups := identity(cluster)
				certPEM, keyPEM := s.ca.IssueClientCert(t, user, groups, now.Add(-time.Hour), now.Add(24*time.Hour))
				data := secretData(t, s.hub, cluster, agent, certPEM, keyPEM)
				delete(data, secretKeyKubeconfig)
				return data
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			secretName := "hks-" + tc.cluster
			damaged := tc.damage(tc.cluster)
			created, err := s.spokeB.Kube.CoreV1().Secrets(util.AgentNamespace).Create(context.Background(),
				&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: util.AgentNamespace}, Data: damaged}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			versions := recordSecret(t, s.spokeB, secretName, created.ResourceVersion)

			a := startAgent(t, s.spokeB, agentSpec{cluster: tc.cluster, agent: agent, secret: secretName, bootstrap: s.hub.BootstrapKubeconfig()})
			waitEvent(t, s.spokeB, "HubKubeconfigInvalid", secretName, tc.cause)
			secret := waitValidSecret(t, s.spokeB, s.hub, secretName, tc.cluster, agent, joinTimeout)
			waitAvailable(t, s.hub, tc.cluster, joinTimeout)

			keys := make([]string, 0, len(secret.Data))
			for k := range secret.Data {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if diff := cmp.Diff(secretKeys, keys); diff != "" {
				t.Errorf("rewritten secret keys (-want +got):\n%s", diff)
			}
			if bytes.Equal(secret.Data[secretKeyTLSKey], damaged[secretKeyTLSKey]) {
				t.Errorf("tls.key kept; want a fresh key for the new CSR")
			}
			for i, v := range versions() {
				if _, err := verifyHubKubeconfig(v.Data, s.hub, tc.cluster, agent, time.Now()); err != nil {
					t.Errorf("version %d (rv %s) written by the agent is not whole and consistent: %v", i+1, v.ResourceVersion, err)
				}
			}
			csrs := csrsOf(t, s.hub, tc.cluster)
			if len(csrs) != 1 {
				t.Fatalf("%d CSRs for %s, want 1", len(csrs), tc.cluster)
			}
			checkCSR(t, &csrs[0], tc.cluster, agent, s.hub.BootstrapUser())
			framework.Consistently(t, quietWindow, pollInterval, func() (bool, error) {
				if n := len(csrsOf(t, s.hub, tc.cluster)); n != 1 {
					return false, fmt.Errorf("%d CSRs, want 1", n)
				}
				if exited, err := a.Exited(); exited {
					return false, fmt.Errorf("agent exited: %v", err)
				}
				return true, nil
			}, "no further CSR, agent running")
		})
	}
}

// secretData returns hub kubeconfig Secret data as OCM's agent writes it: a self-contained kubeconfig for hub
// (inline CA, tls.crt/tls.key relative references), the certificate, its key and the names.
func secretData(t *testing.T, hub *framework.Hub, cluster, agent string, certPEM, keyPEM []byte) map[string][]byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: hub.URL(), CertificateAuthorityData: hub.CAData()}
	cfg.AuthInfos["agent"] = &clientcmdapi.AuthInfo{ClientCertificate: secretKeyTLSCert, ClientKey: secretKeyTLSKey}
	cfg.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "agent"}
	cfg.CurrentContext = "hub"
	kubeconfig, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{
		secretKeyKubeconfig:  kubeconfig,
		secretKeyTLSCert:     certPEM,
		secretKeyTLSKey:      keyPEM,
		secretKeyClusterName: []byte(cluster),
		secretKeyAgentName:   []byte(agent),
	}
}

// recordSecret records every version of Secret name after resourceVersion until the test ends; the returned
// function gives the versions so far.
func recordSecret(t *testing.T, spoke *framework.Spoke, name, resourceVersion string) func() []*corev1.Secret {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := spoke.Kube.CoreV1().Secrets(util.AgentNamespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + name, ResourceVersion: resourceVersion})
	if err != nil {
		cancel()
		t.Fatalf("spoke: watch secret %s: %v", name, err)
	}
	var mu sync.Mutex
	var out []*corev1.Secret
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if s, ok := ev.Object.(*corev1.Secret); ok {
				mu.Lock()
				out = append(out, s)
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		w.Stop()
		cancel()
		<-done
	})
	return func() []*corev1.Secret {
		mu.Lock()
		defer mu.Unlock()
		return append([]*corev1.Secret(nil), out...)
	}
}
