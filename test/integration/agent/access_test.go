package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// listAuditPolicy makes the hub's kube-apiserver log the lists and watches of ManagedClusters and CSRs, and nothing
// else: what the agent's hub informers send.
const listAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["list", "watch"]
  resources:
  - group: cluster.open-cluster-management.io
    resources: ["managedclusters"]
  - group: certificates.k8s.io
    resources: ["certificatesigningrequests"]
- level: None
`

// autoAcceptedAnnotation is the annotation OCM's hub controller puts on a ManagedCluster it accepted automatically
// (ManagedClusterAutoApproval); on a cluster that has it, the controller does not accept it again.
const autoAcceptedAnnotation = "open-cluster-management.io/automatically-accepted-on"

// testInformersWaitForAcceptance: the hub approves the agent's CSR at once but accepts the cluster only after the
// certificate is stored, so the agent holds its certificate before OCM's hub controller has given it any right.
// Its hub informers must not list before the hub allows it (a refused list costs a second of client-go's retry):
// every list and watch of the agent's identity on the hub is answered 200, and there are some of both the
// ManagedCluster and the CSRs.
func testInformersWaitForAcceptance(t *testing.T, s *suite) {
	const cluster, agent = "late-accept", "agentla"
	ctx := context.Background()
	hub, spoke := s.hub, s.spokeB
	// Not accepted, and marked as if auto-accepted before: the hub controller leaves it to the admin.
	if _, err := hub.Cluster.ClusterV1().ManagedClusters().Create(ctx, &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: cluster, Annotations: map[string]string{autoAcceptedAnnotation: "test"}},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: false},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ManagedCluster %s: %v", cluster, err)
	}
	secret := "hks-" + cluster
	startAgent(t, spoke, agentSpec{cluster: cluster, agent: agent, secret: secret, bootstrap: hub.BootstrapKubeconfig()})
	waitValidSecret(t, spoke, hub, secret, cluster, agent, joinTimeout)
	if err := hub.AcceptCluster(ctx, cluster, true); err != nil {
		t.Fatal(err)
	}
	waitAvailable(t, hub, cluster, joinTimeout)

	events, err := hub.AuditEvents(framework.AgentUser(cluster, agent))
	if err != nil {
		t.Fatal(err)
	}
	ok := map[string]int{}
	var refused []string
	for _, ev := range events {
		if ev.ObjectRef == nil || ev.ResponseStatus == nil {
			continue
		}
		if ev.ResponseStatus.Code != 200 {
			refused = append(refused, describeAudit(ev))
			continue
		}
		ok[ev.ObjectRef.Resource]++
	}
	if len(refused) > 0 {
		t.Errorf("the agent's hub informers asked before the hub allowed it; refused: %s", strings.Join(refused, "; "))
	}
	if ok["managedclusters"] == 0 || ok["certificatesigningrequests"] == 0 {
		t.Errorf("lists and watches answered 200 by resource: %v; want the ManagedCluster and CSR informers' in the audit log", ok)
	}
}

func describeAudit(ev auditv1.Event) string {
	return fmt.Sprintf("%s %s at %s: HTTP %d", ev.Verb, ev.ObjectRef.Resource, ev.RequestReceivedTimestamp.Format("15:04:05.000"), ev.ResponseStatus.Code)
}
