package klusterlet

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/klog/v2"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

// Event reasons of Complete (Normal, on the spoke).
const (
	// ReasonClusterNameGenerated: no --cluster-name was given and none was stored, so one was generated.
	ReasonClusterNameGenerated = "ClusterNameGenerated"
	// ReasonAgentNameGenerated: no --agent-name was given and none was stored, so one was generated.
	ReasonAgentNameGenerated = "AgentNameGenerated"
)

// Complete fills in the values the flags left empty (OCM's SpokeAgentOptions.Complete does the same I/O):
//   - ComponentNamespace: CompleteNamespace (the service-account namespace file, else DefaultComponentNamespace);
//   - ClusterName and AgentName (design §2): the flag when set, else the name stored in the hub kubeconfig
//     Secret (--hub-kubeconfig-secret in ComponentNamespace, read through coreV1Client on the cluster the agent
//     runs in: its `cluster-name` / `agent-name` keys or the CN of its certificate), else the name stored in the
//     files of --hub-kubeconfig-dir (clientcert.IdentityFromDir), else a generated one, announced with a
//     ClusterNameGenerated / AgentNameGenerated event on recorder.
//
// An existing Secret is first mirrored into --hub-kubeconfig-dir (design §3 step 1). When the Secret does not
// hold both names yet, the chosen ones are written to the directory's cluster-name and agent-name files so that
// a restart before the first certificate keeps them. A failed read of the Secret (other than NotFound) is
// returned; failures to mirror or write the directory are logged only. Call Validate afterwards. Complete is
// idempotent: once the names are filled in, a second call reads nothing and emits nothing.
func (o *FailoverAgentOptions) Complete(coreV1Client corev1client.CoreV1Interface, ctx context.Context, recorder events.Recorder) error {
	o.CompleteNamespace()
	if o.completed {
		return nil
	}
	clusterName, agentName, err := o.resolveIdentity(ctx, coreV1Client, recorder)
	if err != nil {
		return err
	}
	o.ClusterName, o.AgentName = clusterName, agentName
	o.completed = true
	return nil
}

// resolveIdentity is Complete's identity step: it returns the cluster and agent names Complete documents,
// reading the Secret through secrets, and does not change o.
func (o *FailoverAgentOptions) resolveIdentity(ctx context.Context, secrets corev1client.SecretsGetter, recorder events.Recorder) (clusterName, agentName string, err error) {
	secret, err := secrets.Secrets(o.ComponentNamespace).Get(ctx, o.HubKubeconfigSecret, metav1.GetOptions{})
	var data map[string][]byte
	switch {
	case err == nil:
		data = secret.Data
		if _, err := clientcert.MirrorToDir(data, o.HubKubeconfigDir); err != nil {
			// The mirror controller retries; the Secret itself is the source of truth.
			klog.FromContext(ctx).Error(err, "Mirroring the hub kubeconfig secret", "dir", o.HubKubeconfigDir)
		}
	case apierrors.IsNotFound(err):
	default:
		return "", "", fmt.Errorf("read hub kubeconfig secret %s/%s: %w", o.ComponentNamespace, o.HubKubeconfigSecret, err)
	}
	storedCluster, storedAgent := clientcert.IdentityFromSecretData(data)
	if storedCluster == "" || storedAgent == "" {
		dirCluster, dirAgent, err := clientcert.IdentityFromDir(o.HubKubeconfigDir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			klog.FromContext(ctx).Error(err, "Reading the stored identity", "dir", o.HubKubeconfigDir)
		}
		if storedCluster == "" {
			storedCluster = dirCluster
		}
		if storedAgent == "" {
			storedAgent = dirAgent
		}
	}
	clusterName, agentName = o.ClusterName, o.AgentName
	if clusterName == "" {
		clusterName = storedCluster
	}
	if clusterName == "" {
		clusterName = clientcert.GenerateClusterName()
		recorder.Eventf(ReasonClusterNameGenerated, "cluster name %q generated: no --cluster-name, and none stored in Secret %s/%s or directory %s",
			clusterName, o.ComponentNamespace, o.HubKubeconfigSecret, o.HubKubeconfigDir)
	}
	if agentName == "" {
		agentName = storedAgent
	}
	if agentName == "" {
		agentName = clientcert.GenerateAgentName()
		recorder.Eventf(ReasonAgentNameGenerated, "agent name %q generated: no --agent-name, and none stored in Secret %s/%s or directory %s",
			agentName, o.ComponentNamespace, o.HubKubeconfigSecret, o.HubKubeconfigDir)
	}
	if len(data[clientcert.ClusterNameSecretKey]) == 0 || len(data[clientcert.AgentNameSecretKey]) == 0 {
		// Until the first certificate is issued the Secret does not exist (it is written whole, never half), so
		// the names go to the directory at once: an agent restarted while its first CSR waits for approval comes
		// back with the same names instead of new generated ones (the directory outlives container restarts).
		if _, err := clientcert.MirrorToDir(map[string][]byte{
			clientcert.ClusterNameSecretKey: []byte(clusterName),
			clientcert.AgentNameSecretKey:   []byte(agentName),
		}, o.HubKubeconfigDir); err != nil {
			klog.FromContext(ctx).Error(err, "Storing the cluster and agent names; a restart before the first certificate may choose new ones",
				"dir", o.HubKubeconfigDir)
		}
	}
	return clusterName, agentName, nil
}
