package agent_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/managedcluster"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

const (
	flakyHealthCheckPeriod = 3 * time.Second
	// flakyIsolatedWindow is how long one /livez probe in three fails; Available must stay True throughout.
	flakyIsolatedWindow    = 20 * time.Second
	flakyTransitionTimeout = 90 * time.Second
)

// FC-11: the spoke API server's /livez fails one probe in three, then fails for good, then answers 404 while
// /healthz works. The agent reaches the real spoke apiserver through an HTTPS proxy that injects the faults.
func TestFlakySpokeAPIServer(t *testing.T) {
	t.Parallel()
	const cluster = "flaky-spoke"
	hub := framework.StartHub(t, framework.HubOptions{Name: "flaky", Signer: framework.SignerInProcess, HubController: true})
	spoke := framework.StartSpoke(t)
	proxy := util.StartReencryptingProxy(t, spoke.URL(), spoke.CAData())
	if err := proxy.AddIdentity(spoke.AdminConfig.CertData, spoke.AdminConfig.KeyData); err != nil {
		t.Fatalf("proxy identity: %v", err)
	}
	spokeConfig := rest.CopyConfig(spoke.AdminConfig)
	spokeConfig.Host = proxy.URL()
	spokeConfig.CAData = proxy.CAData()

	var livez, healthz atomic.Int64
	var mode atomic.Int32 // 0 healthy, 1 one livez in three fails, 2 both fail, 3 livez 404
	proxy.SetFault(func(r *http.Request) (int, bool) {
		switch r.URL.Path {
		case "/livez":
			n := livez.Add(1)
			switch mode.Load() {
			case 1:
				if n%3 == 0 {
					return http.StatusInternalServerError, true
				}
			case 2:
				return http.StatusInternalServerError, true
			case 3:
				return http.StatusNotFound, true
			}
		case "/healthz":
			healthz.Add(1)
			if mode.Load() == 2 {
				return http.StatusInternalServerError, true
			}
		}
		return 0, false
	})

	util.StartAgent(t, spoke, util.AgentConfig{
		Bootstrap:   hub.BootstrapKubeconfig(),
		SpokeConfig: spokeConfig,
		Mutate: func(o *klusterlet.FailoverAgentOptions) {
			o.ClusterName, o.AgentName = cluster, "flaky"
			o.ClusterHealthCheckPeriod = flakyHealthCheckPeriod
		},
	})
	ctx := context.Background()
	available := func() (*metav1.Condition, error) {
		mc, err := hub.Cluster.ClusterV1().ManagedClusters().Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return nil, nil
		}
		return meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
	}
	waitAvailable := func(status metav1.ConditionStatus, reason string) {
		t.Helper()
		framework.Eventually(t, flakyTransitionTimeout, 250*time.Millisecond, func() (bool, error) {
			c, err := available()
			return c != nil && c.Status == status && c.Reason == reason, err
		}, "Available=%s reason %s", status, reason)
	}
	waitAvailable(metav1.ConditionTrue, managedcluster.ConditionReasonManagedClusterAvailable)

	// Isolated failures do not flip Available.
	mode.Store(1)
	start := livez.Load()
	framework.Consistently(t, flakyIsolatedWindow, 500*time.Millisecond, func() (bool, error) {
		c, err := available()
		return c != nil && c.Status == metav1.ConditionTrue, err
	}, "Available stays True while one /livez probe in three fails")
	if probes := livez.Load() - start; probes < 3 {
		t.Fatalf("only %d /livez probes reached the spoke in %s; the isolated-failure phase proved nothing", probes, flakyIsolatedWindow)
	}

	// A sustained failure sets False with a reason and a message.
	mode.Store(2)
	waitAvailable(metav1.ConditionFalse, managedcluster.ConditionReasonManagedClusterKubeAPIServerUnavailable)
	if c, _ := available(); c == nil || c.Message == "" {
		t.Fatalf("Available=False carries no message: %+v", c)
	}

	// /livez 404 falls back to /healthz, which works: recovery returns True.
	healthzBefore := healthz.Load()
	mode.Store(3)
	waitAvailable(metav1.ConditionTrue, managedcluster.ConditionReasonManagedClusterAvailable)
	if healthz.Load() == healthzBefore {
		t.Fatalf("Available recovered while /livez answered 404, but /healthz was never asked")
	}
}
