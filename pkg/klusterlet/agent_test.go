package klusterlet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	"k8s.io/utils/clock"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"

	failoverfake "github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned/fake"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

// TestCompleteIdentity: Complete chooses the names from the flags, the Secret, the directory or generates
// them (with one event per generated name, none after a restart), and stores them in the directory.
func TestCompleteIdentity(t *testing.T) {
	const ns = "open-cluster-management-agent"
	secret := func(cluster, agent string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: DefaultHubKubeconfigSecret},
			Data:       map[string][]byte{clientcert.ClusterNameSecretKey: []byte(cluster), clientcert.AgentNameSecretKey: []byte(agent)},
		}
	}
	tests := []struct {
		name                   string
		flagCluster, flagAgent string
		objects                []runtime.Object
		dirFiles               map[string]string
		// wantCluster/wantAgent "" means generated: any valid name, the same after a restart.
		wantCluster, wantAgent string
		// wantDir are the name files expected in the directory afterwards.
		wantDir map[string]string
	}{
		{
			name:        "flags win",
			flagCluster: "c1", flagAgent: "a1",
			objects:     []runtime.Object{secret("stored", "storedagent")},
			wantCluster: "c1", wantAgent: "a1",
			wantDir: map[string]string{"cluster-name": "stored", "agent-name": "storedagent"},
		},
		{
			name:        "names stored in the Secret",
			objects:     []runtime.Object{secret("stored", "storedagent")},
			wantCluster: "stored", wantAgent: "storedagent",
			wantDir: map[string]string{"cluster-name": "stored", "agent-name": "storedagent"},
		},
		{
			name:        "names stored in the directory only",
			dirFiles:    map[string]string{"cluster-name": "fromdir", "agent-name": "diragent"},
			wantCluster: "fromdir", wantAgent: "diragent",
			wantDir: map[string]string{"cluster-name": "fromdir", "agent-name": "diragent"},
		},
		{
			name:        "flag names without a Secret are stored in the directory",
			flagCluster: "c1", flagAgent: "a1",
			wantCluster: "c1", wantAgent: "a1",
			wantDir: map[string]string{"cluster-name": "c1", "agent-name": "a1"},
		},
		{
			name: "generated names are stored before any certificate",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "hub-kubeconfig")
			if _, err := clientcert.MirrorToDir(toBytes(tc.dirFiles), dir); err != nil {
				t.Fatal(err)
			}
			client := fake.NewClientset(tc.objects...)
			recorder := events.NewInMemoryRecorder("test", clock.RealClock{})
			run := func() *FailoverAgentOptions {
				o := NewFailoverAgentOptions()
				o.ComponentNamespace, o.HubKubeconfigDir, o.BootstrapKubeconfig = ns, dir, "/bootstrap/kubeconfig"
				o.ClusterName, o.AgentName = tc.flagCluster, tc.flagAgent
				if err := o.Complete(client.CoreV1(), context.Background(), recorder); err != nil {
					t.Fatalf("Complete: %v", err)
				}
				if o.ComponentNamespace != ns {
					t.Fatalf("Complete changed the namespace to %q", o.ComponentNamespace)
				}
				return o
			}
			first := run()
			var generated []string
			for _, e := range recorder.Events() {
				generated = append(generated, e.Reason)
			}
			var wantEvents []string
			if tc.wantCluster == "" {
				wantEvents = []string{ReasonClusterNameGenerated, ReasonAgentNameGenerated}
			}
			if !slices.Equal(generated, wantEvents) {
				t.Errorf("events %v, want %v", generated, wantEvents)
			}
			if tc.wantCluster != "" && (first.ClusterName != tc.wantCluster || first.AgentName != tc.wantAgent) {
				t.Fatalf("identity %s/%s, want %s/%s", first.ClusterName, first.AgentName, tc.wantCluster, tc.wantAgent)
			}
			if err := first.Validate(); err != nil {
				t.Fatalf("the resolved identity does not validate: %v", err)
			}
			want := tc.wantDir
			if want == nil {
				want = map[string]string{"cluster-name": first.ClusterName, "agent-name": first.AgentName}
			}
			for file, content := range want {
				got, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil || string(got) != content {
					t.Errorf("%s in the directory = %q (%v), want %q", file, got, err, content)
				}
			}
			if tc.flagCluster == "" {
				// A restart (the Secret still absent or unchanged) resolves the same names.
				second := run()
				if second.ClusterName != first.ClusterName || second.AgentName != first.AgentName {
					t.Errorf("after a restart the identity is %s/%s, first run chose %s/%s", second.ClusterName, second.AgentName, first.ClusterName, first.AgentName)
				}
			}
		})
	}
}

func toBytes(m map[string]string) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

// TestSpokeClientRateLimits: the spoke and agent-cluster clients get --kube-api-qps/--kube-api-burst (OCM's
// defaults, 50/100) instead of client-go's 5/10, on a copy of the command's config.
func TestSpokeClientRateLimits(t *testing.T) {
	o := NewFailoverAgentOptions()
	base := &rest.Config{Host: "https://spoke.example.com:6443"}
	got := o.rateLimited(base)
	if got.QPS != DefaultKubeAPIQPS || got.Burst != DefaultKubeAPIBurst {
		t.Errorf("QPS/Burst = %v/%d, want %v/%d", got.QPS, got.Burst, float32(DefaultKubeAPIQPS), DefaultKubeAPIBurst)
	}
	if base.QPS != 0 || base.Burst != 0 {
		t.Errorf("the command's config was changed: %v/%d", base.QPS, base.Burst)
	}
}

// TestCheckFailoverConfigAPI: 404 and 403 are definite (the agent runs without FailoverConfig), success is, and
// any other error is retried rather than taken for "present" (an informer on an absent API never syncs).
func TestCheckFailoverConfigAPI(t *testing.T) {
	gr := schema.GroupResource{Group: "failover.open-cluster-management.io", Resource: "failoverconfigs"}
	cases := []struct {
		name    string
		answers []error // one per LIST, the last repeated
		want    string  // "" for nil
		lists   int
	}{
		{name: "served", answers: []error{nil}, lists: 1},
		{name: "not served", answers: []error{apierrors.NewNotFound(gr, "")}, want: "is not served", lists: 1},
		{name: "forbidden", answers: []error{apierrors.NewForbidden(gr, "", errors.New("no RBAC"))}, want: "may not list FailoverConfigs", lists: 1},
		{name: "apiserver not ready, then not served", answers: []error{apierrors.NewServiceUnavailable("starting"), errors.New("connection refused"), apierrors.NewNotFound(gr, "")},
			want: "is not served", lists: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := failoverfake.NewSimpleClientset()
			lists := 0
			client.PrependReactor("list", "failoverconfigs", func(clienttesting.Action) (bool, runtime.Object, error) {
				err := tc.answers[min(lists, len(tc.answers)-1)]
				lists++
				if err != nil {
					return true, nil, err
				}
				return false, nil, nil
			})
			err := CheckFailoverConfigAPI(context.Background(), client, "ns", time.Millisecond)
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("CheckFailoverConfigAPI() = %v, want %q", err, tc.want)
			}
			if lists != tc.lists {
				t.Errorf("%d LISTs, want %d", lists, tc.lists)
			}
		})
	}
	// A cancelled context ends the retries.
	client := failoverfake.NewSimpleClientset()
	client.PrependReactor("list", "failoverconfigs", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := CheckFailoverConfigAPI(ctx, client, "ns", 5*time.Millisecond); err == nil {
		t.Error("CheckFailoverConfigAPI returned nil on a context that ended with the API unknown")
	}
}

// TestCompleteOnce: Complete fills in the namespace and the names, and a second call (RunWithClients after the
// command's run function) reads nothing more and emits no event.
func TestCompleteOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hub-kubeconfig")
	client := fake.NewClientset()
	recorder := events.NewInMemoryRecorder("test", clock.RealClock{})
	o := NewFailoverAgentOptions()
	o.HubKubeconfigDir, o.BootstrapKubeconfig = dir, "/bootstrap/kubeconfig"
	if err := o.Complete(client.CoreV1(), context.Background(), recorder); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if o.ComponentNamespace == "" || o.ClusterName == "" || o.AgentName == "" {
		t.Fatalf("Complete left namespace %q, cluster %q, agent %q", o.ComponentNamespace, o.ClusterName, o.AgentName)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("Validate after Complete: %v", err)
	}
	cluster, actions, evts := o.ClusterName, len(client.Actions()), len(recorder.Events())
	if err := o.completeAndValidate(context.Background(), client.CoreV1(), recorder); err != nil {
		t.Fatalf("completeAndValidate: %v", err)
	}
	if o.ClusterName != cluster || len(client.Actions()) != actions || len(recorder.Events()) != evts {
		t.Errorf("second completion: cluster %q (was %q), %d API calls (was %d), %d events (was %d)",
			o.ClusterName, cluster, len(client.Actions()), actions, len(recorder.Events()), evts)
	}
}
