package managedcluster

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

const testCluster = "cluster1"

var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newTestRecorder returns an in-memory recorder on a clock fixed at testNow.
func newTestRecorder() events.InMemoryRecorder {
	return events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(testNow))
}

func eventReasons(recorder events.InMemoryRecorder) []string {
	var reasons []string
	for _, event := range recorder.Events() {
		reasons = append(reasons, event.Reason)
	}
	return reasons
}

func actionsOf(actions []clienttesting.Action, verb string) []clienttesting.Action {
	var matched []clienttesting.Action
	for _, action := range actions {
		if action.GetVerb() == verb {
			matched = append(matched, action)
		}
	}
	return matched
}

// spokeServer is a fake spoke API server: /livez and /healthz answer the next code of
// their script (the last one repeats), /version answers gitVersion.
type spokeServer struct {
	*httptest.Server
	lock    sync.Mutex
	scripts map[string][]int
	paths   []string
}

func newSpokeServer(t *testing.T, scripts map[string][]int) *spokeServer {
	s := &spokeServer{scripts: scripts}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.lock.Lock()
		s.paths = append(s.paths, r.URL.Path)
		script := s.scripts[r.URL.Path]
		code := http.StatusNotFound
		if len(script) > 0 {
			code = script[0]
			if len(script) > 1 {
				s.scripts[r.URL.Path] = script[1:]
			}
		}
		s.lock.Unlock()

		if r.URL.Path == "/version" {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"gitVersion": "v1.34.3", "major": "1", "minor": "34"})
			return
		}
		w.WriteHeader(code)
		if code == http.StatusOK {
			_, _ = w.Write([]byte("ok"))
		} else {
			_, _ = w.Write([]byte("livez check failed"))
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *spokeServer) discovery(t *testing.T) discovery.DiscoveryInterface {
	t.Helper()
	client, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func (s *spokeServer) requestedPaths() []string {
	s.lock.Lock()
	defer s.lock.Unlock()
	return append([]string(nil), s.paths...)
}

func healthy(t *testing.T) *spokeServer {
	return newSpokeServer(t, map[string][]int{"/livez": {http.StatusOK}, "/version": {http.StatusOK}})
}

type clusterOption func(*clusterv1.ManagedCluster)

func newManagedCluster(options ...clusterOption) *clusterv1.ManagedCluster {
	cluster := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: testCluster, UID: "uid-1", ResourceVersion: "10"},
	}
	for _, option := range options {
		option(cluster)
	}
	return cluster
}

func withCondition(conditionType string, status metav1.ConditionStatus, reason, message string) clusterOption {
	return func(cluster *clusterv1.ManagedCluster) {
		cluster.Status.Conditions = append(cluster.Status.Conditions, metav1.Condition{
			Type: conditionType, Status: status, Reason: reason, Message: message,
			LastTransitionTime: metav1.NewTime(testNow.Add(-time.Hour)),
		})
	}
}

func accepted() clusterOption {
	return withCondition(clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionTrue, "HubClusterAdminAccepted", "Accepted by hub cluster admin")
}

func withClaims(claims ...clusterv1.ManagedClusterClaim) clusterOption {
	return func(cluster *clusterv1.ManagedCluster) { cluster.Status.ClusterClaims = claims }
}

func withLeaseDuration(seconds int32) clusterOption {
	return func(cluster *clusterv1.ManagedCluster) { cluster.Spec.LeaseDurationSeconds = seconds }
}

func withVersion(version string) clusterOption {
	return func(cluster *clusterv1.ManagedCluster) { cluster.Status.Version.Kubernetes = version }
}
