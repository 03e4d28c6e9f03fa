package clientcert

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	certutil "k8s.io/client-go/util/cert"

	clusterv1 "open-cluster-management.io/api/cluster/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// Keys of the hub kubeconfig Secret (OCM's `hub-kubeconfig-secret`), besides failoverv1alpha1.KubeconfigSecretKey,
// which holds a self-contained kubeconfig (inline CA data) whose user references TLSCertSecretKey and
// TLSKeySecretKey as paths relative to the directory the Secret is mirrored to. Other klusterlet components
// (work agent, add-ons) read exactly these keys, so they are part of the wire contract (design §4).
const (
	// TLSCertSecretKey holds the PEM client certificate (chain, leaf first) issued by the hub.
	TLSCertSecretKey = "tls.crt"
	// TLSKeySecretKey holds the PEM private key (ECDSA P-256, "EC PRIVATE KEY") matching TLSCertSecretKey.
	TLSKeySecretKey = "tls.key"
	// ClusterNameSecretKey holds the managed cluster name (a DNS-1123 label).
	ClusterNameSecretKey = "cluster-name"
	// AgentNameSecretKey holds the agent name (a DNS-1123 label).
	AgentNameSecretKey = "agent-name"
)

// SecretKeys returns the five keys a valid hub kubeconfig Secret carries, in a stable order (a new slice on
// every call).
func SecretKeys() []string {
	return []string{failoverv1alpha1.KubeconfigSecretKey, TLSCertSecretKey, TLSKeySecretKey, ClusterNameSecretKey, AgentNameSecretKey}
}

const (
	// ClusterNameLabel is the label OCM's hub uses to find a cluster's CSRs
	// (open-cluster-management.io/api cluster/v1 ClusterNameLabelKey); its value is the cluster name.
	ClusterNameLabel = clusterv1.ClusterNameLabelKey
	// SignerName is the signer of the agent's CSRs: the kube-apiserver client signer, which the hub's
	// kube-controller-manager (csrsigning) signs once the CSR is approved.
	SignerName = certificatesv1.KubeAPIServerClientSignerName
	// SubjectPrefix prefixes every OCM agent identity (CN and per-cluster group).
	SubjectPrefix = "system:open-cluster-management:"
	// ManagedClustersGroup is the common group (O) of all managed cluster agents.
	ManagedClustersGroup = "system:open-cluster-management:managed-clusters"
)

// CommonName returns the certificate subject CN of an agent: `system:open-cluster-management:<cluster>:<agent>`.
// The hub auto-approves a renewal CSR when the requesting user equals this CN.
func CommonName(clusterName, agentName string) string {
	return SubjectPrefix + clusterName + ":" + agentName
}

// ClusterGroup returns the per-cluster group `system:open-cluster-management:<cluster>`, which the hub binds to
// the cluster's RBAC.
func ClusterGroup(clusterName string) string {
	return SubjectPrefix + clusterName
}

// Organizations returns the certificate subject O of an agent, in the order OCM's agent sends them:
// ClusterGroup(cluster), then ManagedClustersGroup.
func Organizations(clusterName string) []string {
	return []string{ClusterGroup(clusterName), ManagedClustersGroup}
}

// ParseCommonName splits an agent CN `system:open-cluster-management:<cluster>:<agent>` into its cluster and
// agent names; ok is false if cn does not have that shape (missing prefix, empty parts or extra colons).
func ParseCommonName(cn string) (clusterName, agentName string, ok bool) {
	rest, found := strings.CutPrefix(cn, SubjectPrefix)
	if !found {
		return "", "", false
	}
	clusterName, agentName, found = strings.Cut(rest, ":")
	if !found || clusterName == "" || agentName == "" || strings.Contains(agentName, ":") {
		return "", "", false
	}
	return clusterName, agentName, true
}

// IdentityFromSecretData returns the cluster and agent names stored in hub kubeconfig Secret data: the
// cluster-name / agent-name keys (surrounding whitespace trimmed), and for a missing or empty key the
// corresponding part of the CN of the leaf certificate in tls.crt. Unknown parts are returned as "".
func IdentityFromSecretData(data map[string][]byte) (clusterName, agentName string) {
	clusterName = strings.TrimSpace(string(data[ClusterNameSecretKey]))
	agentName = strings.TrimSpace(string(data[AgentNameSecretKey]))
	if clusterName != "" && agentName != "" {
		return clusterName, agentName
	}
	certs, err := certutil.ParseCertsPEM(data[TLSCertSecretKey])
	if err != nil || len(certs) == 0 {
		return clusterName, agentName
	}
	cnCluster, cnAgent, ok := ParseCommonName(certs[0].Subject.CommonName)
	if !ok {
		return clusterName, agentName
	}
	if clusterName == "" {
		clusterName = cnCluster
	}
	if agentName == "" {
		agentName = cnAgent
	}
	return clusterName, agentName
}

// IdentityFromDir is IdentityFromSecretData for a directory the Secret was mirrored to (files named after the
// keys). Missing files are not an error; any other read error is returned, naming the file.
func IdentityFromDir(dir string) (clusterName, agentName string, err error) {
	data := map[string][]byte{}
	for _, key := range []string{ClusterNameSecretKey, AgentNameSecretKey, TLSCertSecretKey} {
		content, err := os.ReadFile(filepath.Join(dir, key))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("read hub kubeconfig dir %s: %w", dir, err)
		}
		data[key] = content
	}
	clusterName, agentName = IdentityFromSecretData(data)
	return clusterName, agentName, nil
}

// GenerateClusterName returns a new random cluster name: a lower-case UUID (36 characters, a valid DNS-1123
// label) whose first character is forced to a letter (a–f), so it never starts with a digit.
func GenerateClusterName() string {
	name := []byte(strings.ToLower(string(uuid.NewUUID())))
	if name[0] >= '0' && name[0] <= '9' {
		name[0] = byte('a' + rand.IntN(6))
	}
	return string(name)
}

// GenerateAgentName returns a new random agent name of 5 lower-case letters (a–z).
func GenerateAgentName() string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	name := make([]byte, 5)
	for i := range name {
		name[i] = letters[rand.IntN(len(letters))]
	}
	return string(name)
}
