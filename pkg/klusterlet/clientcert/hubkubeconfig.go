package clientcert

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// Entry names of the hub kubeconfig the agent writes (the names OCM's agent uses).
const (
	hubKubeconfigClusterName = "default-cluster"
	hubKubeconfigUserName    = "default-auth"
	hubKubeconfigContextName = "default-context"
)

// BuildHubKubeconfig returns the serialized hub kubeconfig for the Secret's failoverv1alpha1.KubeconfigSecretKey: one cluster with
// hub's server, proxy-url, tls-server-name, insecure-skip-tls-verify and CA data inline, one user whose
// client-certificate and client-key are the relative paths "tls.crt" and "tls.key" (client-go resolves them
// against the directory the kubeconfig file is in, i.e. the directory the Secret is mirrored to), and a current
// context joining them. The result never references a file outside that directory (FC-15).
func BuildHubKubeconfig(hub HubInfo) ([]byte, error) {
	if err := checkServerURL(hub.Server); err != nil {
		return nil, fmt.Errorf("build hub kubeconfig: server %q: %w", hub.Server, err)
	}
	if hub.ProxyURL != "" {
		if err := checkProxyURL(hub.ProxyURL); err != nil {
			return nil, fmt.Errorf("build hub kubeconfig: proxy-url %q: %w", hub.ProxyURL, err)
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[hubKubeconfigClusterName] = &clientcmdapi.Cluster{
		Server:                   hub.Server,
		ProxyURL:                 hub.ProxyURL,
		CertificateAuthorityData: hub.CAData,
		TLSServerName:            hub.TLSServerName,
		InsecureSkipTLSVerify:    hub.InsecureSkipTLSVerify,
	}
	cfg.AuthInfos[hubKubeconfigUserName] = &clientcmdapi.AuthInfo{
		ClientCertificate: TLSCertSecretKey,
		ClientKey:         TLSKeySecretKey,
	}
	cfg.Contexts[hubKubeconfigContextName] = &clientcmdapi.Context{
		Cluster:  hubKubeconfigClusterName,
		AuthInfo: hubKubeconfigUserName,
	}
	cfg.CurrentContext = hubKubeconfigContextName
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("build hub kubeconfig: %w", err)
	}
	return out, nil
}

// RestConfigFromSecretData builds a hub client config from hub kubeconfig Secret data alone: the cluster of
// the kubeconfig key's current context, authenticated with tls.crt / tls.key inline, so that callers do not
// depend on the mirrored directory being up to date. A missing key, an unparsable kubeconfig or a
// certificate-authority file reference without inline data is an error.
func RestConfigFromSecretData(data map[string][]byte) (*rest.Config, error) {
	for _, key := range []string{failoverv1alpha1.KubeconfigSecretKey, TLSCertSecretKey, TLSKeySecretKey} {
		if len(data[key]) == 0 {
			return nil, fmt.Errorf("hub kubeconfig secret data: missing key %s", key)
		}
	}
	cfg, err := clientcmd.Load(data[failoverv1alpha1.KubeconfigSecretKey])
	if err != nil {
		return nil, fmt.Errorf("hub kubeconfig secret data: parse key %s: %w", failoverv1alpha1.KubeconfigSecretKey, err)
	}
	contextName, clusterName, cluster, _, _, err := currentEntries(cfg)
	if err != nil {
		return nil, fmt.Errorf("hub kubeconfig secret data: key %s: %w", failoverv1alpha1.KubeconfigSecretKey, err)
	}
	if cluster.CertificateAuthority != "" && len(cluster.CertificateAuthorityData) == 0 {
		return nil, fmt.Errorf("hub kubeconfig secret data: key %s: clusters[%q].certificate-authority %q: kubeconfig is not self-contained",
			failoverv1alpha1.KubeconfigSecretKey, clusterName, cluster.CertificateAuthority)
	}
	cluster = cluster.DeepCopy()
	cluster.CertificateAuthority = ""
	inlined := clientcmdapi.NewConfig()
	inlined.Clusters[clusterName] = cluster
	inlined.AuthInfos[hubKubeconfigUserName] = &clientcmdapi.AuthInfo{
		ClientCertificateData: data[TLSCertSecretKey],
		ClientKeyData:         data[TLSKeySecretKey],
	}
	inlined.Contexts[contextName] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: hubKubeconfigUserName}
	inlined.CurrentContext = contextName
	restConfig, err := clientcmd.NewNonInteractiveClientConfig(*inlined, contextName, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("hub kubeconfig secret data: %w", err)
	}
	return restConfig, nil
}

// InvalidReason says why hub kubeconfig Secret data is not usable (or, for ReasonRotationDue, why it is being
// replaced). Values are UpperCamelCase so they can serve as event or condition reasons.
type InvalidReason string

const (
	// ReasonMissingKey: one of the five Secret keys is absent or empty (FC-07).
	ReasonMissingKey InvalidReason = "MissingKey"
	// ReasonCertificateUnparsable: tls.crt is not a PEM certificate (e.g. truncated, FC-07).
	ReasonCertificateUnparsable InvalidReason = "CertificateUnparsable"
	// ReasonKeyUnparsable: tls.key is not a PEM private key.
	ReasonKeyUnparsable InvalidReason = "KeyUnparsable"
	// ReasonKeyMismatch: tls.key is not the key of tls.crt (FC-07).
	ReasonKeyMismatch InvalidReason = "KeyMismatch"
	// ReasonIdentityMismatch: the certificate subject (or the cluster-name / agent-name keys) names another
	// cluster or agent, or is not an OCM agent identity.
	ReasonIdentityMismatch InvalidReason = "IdentityMismatch"
	// ReasonCertificateNotYetValid: now is before the certificate's NotBefore (hub clock ahead).
	ReasonCertificateNotYetValid InvalidReason = "CertificateNotYetValid"
	// ReasonCertificateExpired: now is at or after the certificate's NotAfter (FC-07, FC-08).
	ReasonCertificateExpired InvalidReason = "CertificateExpired"
	// ReasonKubeconfigUnparsable: the kubeconfig key is not a kubeconfig or has no usable current context.
	ReasonKubeconfigUnparsable InvalidReason = "KubeconfigUnparsable"
	// ReasonKubeconfigCredentialsMismatch: the kubeconfig's user does not authenticate with tls.crt / tls.key.
	ReasonKubeconfigCredentialsMismatch InvalidReason = "KubeconfigCredentialsMismatch"
	// ReasonHubMismatch: the kubeconfig's server, proxy-url, CA or TLS options differ from the active hub's
	// bootstrap kubeconfig (FC-02, FC-03).
	ReasonHubMismatch InvalidReason = "HubMismatch"
	// ReasonRotationDue: the Secret is valid but less than 20–25 % of the certificate lifetime remains. Never
	// returned by CheckHubKubeconfig; used in controller Status.
	ReasonRotationDue InvalidReason = "RotationDue"
)

// InvalidHubKubeconfigError is CheckHubKubeconfig's verdict on unusable Secret data.
type InvalidHubKubeconfigError struct {
	// Reason classifies the problem, for callers to branch on (e.g. ReasonHubMismatch vs
	// ReasonCertificateExpired).
	Reason InvalidReason
	// Message says exactly what is wrong, naming the key and the values.
	Message string
	// HubFields lists the kubeconfig fields that differ from the hub (see HubInfo.Diff), for ReasonHubMismatch.
	HubFields []string
	// NotBefore and NotAfter are the leaf certificate's validity window when tls.crt parsed; zero otherwise.
	NotBefore, NotAfter time.Time
}

// Error implements error: "invalid hub kubeconfig: <Message>".
func (e *InvalidHubKubeconfigError) Error() string {
	return "invalid hub kubeconfig: " + e.Message
}

// InvalidReasonOf returns the Reason of an *InvalidHubKubeconfigError in err's chain, or "" if there is none.
func InvalidReasonOf(err error) InvalidReason {
	var ie *InvalidHubKubeconfigError
	if errors.As(err, &ie) {
		return ie.Reason
	}
	return ""
}

// CheckHubKubeconfig decides whether hub kubeconfig Secret data is usable for clusterName/agentName against
// hub at now (design §3 step 2). It returns nil if it is, else an *InvalidHubKubeconfigError, checking in this
// order: all five keys present and non-empty; tls.crt parses (leaf first); tls.key parses and matches tls.crt;
// the leaf's CN is CommonName(clusterName, agentName) and its O contains ClusterGroup(clusterName), and the
// cluster-name / agent-name keys agree; NotBefore <= now < NotAfter; the kubeconfig parses, its current user
// references tls.crt and tls.key (by base name, no inline credentials); its cluster equals hub (HubInfo.Diff).
// An empty clusterName or agentName skips comparing that part with the expected names (the certificate and
// the keys must still agree with each other).
func CheckHubKubeconfig(data map[string][]byte, clusterName, agentName string, hub HubInfo, now time.Time) error {
	invalid := func(reason InvalidReason, format string, args ...any) *InvalidHubKubeconfigError {
		return &InvalidHubKubeconfigError{Reason: reason, Message: fmt.Sprintf(format, args...)}
	}

	var missing []string
	for _, key := range SecretKeys() {
		if len(data[key]) == 0 {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		return invalid(ReasonMissingKey, "missing key %s", strings.Join(missing, ", "))
	}

	leaf, err := parseLeafCertificate(data[TLSCertSecretKey])
	if err != nil {
		return invalid(ReasonCertificateUnparsable, "%s unparsable: %v", TLSCertSecretKey, err)
	}
	withValidity := func(e *InvalidHubKubeconfigError) *InvalidHubKubeconfigError {
		e.NotBefore, e.NotAfter = leaf.NotBefore, leaf.NotAfter
		return e
	}
	if err := checkKeyMatches(data[TLSCertSecretKey], data[TLSKeySecretKey]); err != nil {
		return withValidity(err)
	}
	if err := checkSubject(leaf, clusterName, agentName); err != nil {
		return withValidity(err)
	}
	keyCluster := strings.TrimSpace(string(data[ClusterNameSecretKey]))
	keyAgent := strings.TrimSpace(string(data[AgentNameSecretKey]))
	certCluster, certAgent, _ := ParseCommonName(leaf.Subject.CommonName)
	if keyCluster != certCluster || keyAgent != certAgent {
		return withValidity(invalid(ReasonIdentityMismatch, "keys %s/%s name cluster/agent %s:%s, but %s names %s:%s",
			ClusterNameSecretKey, AgentNameSecretKey, keyCluster, keyAgent, TLSCertSecretKey, certCluster, certAgent))
	}
	if now.Before(leaf.NotBefore) {
		return withValidity(invalid(ReasonCertificateNotYetValid, "%s not yet valid: valid from %s, now is %s",
			TLSCertSecretKey, text.Time(leaf.NotBefore), text.Time(now)))
	}
	if !now.Before(leaf.NotAfter) {
		return withValidity(invalid(ReasonCertificateExpired, "%s expired at %s", TLSCertSecretKey, text.Time(leaf.NotAfter)))
	}

	cfg, err := clientcmd.Load(data[failoverv1alpha1.KubeconfigSecretKey])
	if err != nil {
		return withValidity(invalid(ReasonKubeconfigUnparsable, "%s unparsable: %v", failoverv1alpha1.KubeconfigSecretKey, err))
	}
	_, kcClusterName, cluster, userName, user, err := currentEntries(cfg)
	if err != nil {
		return withValidity(invalid(ReasonKubeconfigUnparsable, "%s: %v", failoverv1alpha1.KubeconfigSecretKey, err))
	}
	if filepath.Base(user.ClientCertificate) != TLSCertSecretKey || filepath.Base(user.ClientKey) != TLSKeySecretKey ||
		len(user.ClientCertificateData) > 0 || len(user.ClientKeyData) > 0 || user.Token != "" || user.TokenFile != "" ||
		user.Exec != nil || user.AuthProvider != nil {
		return withValidity(invalid(ReasonKubeconfigCredentialsMismatch,
			"%s users[%q] does not authenticate with client-certificate %s and client-key %s only",
			failoverv1alpha1.KubeconfigSecretKey, userName, TLSCertSecretKey, TLSKeySecretKey))
	}
	current := hubInfoOf(cluster)
	if cluster.CertificateAuthority != "" && len(cluster.CertificateAuthorityData) == 0 {
		// A file reference is not self-contained; treat it as CA data that does not match.
		current.CAData = []byte("file:" + cluster.CertificateAuthority)
	}
	if fields := current.Diff(hub); len(fields) > 0 {
		e := invalid(ReasonHubMismatch, "%s clusters[%q] differs from the hub's bootstrap kubeconfig in %s",
			failoverv1alpha1.KubeconfigSecretKey, kcClusterName, describeHubDiff(fields, current, hub))
		e.HubFields = fields
		return withValidity(e)
	}
	return nil
}

// checkKeyMatches parses the key and checks it belongs to the leaf of certPEM.
func checkKeyMatches(certPEM, keyPEM []byte) *InvalidHubKubeconfigError {
	if _, err := parsePrivateKey(keyPEM); err != nil {
		return &InvalidHubKubeconfigError{Reason: ReasonKeyUnparsable, Message: fmt.Sprintf("%s unparsable: %v", TLSKeySecretKey, err)}
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return &InvalidHubKubeconfigError{Reason: ReasonKeyMismatch, Message: fmt.Sprintf("%s does not match %s: %v", TLSKeySecretKey, TLSCertSecretKey, err)}
	}
	return nil
}

// checkSubject checks the leaf carries the agent identity: CN CommonName(cluster, agent) and O containing
// ClusterGroup(cluster). Empty expected names are not compared.
func checkSubject(leaf *x509.Certificate, clusterName, agentName string) *InvalidHubKubeconfigError {
	cn := leaf.Subject.CommonName
	certCluster, certAgent, ok := ParseCommonName(cn)
	if !ok {
		return &InvalidHubKubeconfigError{Reason: ReasonIdentityMismatch,
			Message: fmt.Sprintf("%s subject CN %q is not an OCM agent identity (%s<cluster>:<agent>)", TLSCertSecretKey, cn, SubjectPrefix)}
	}
	if (clusterName != "" && certCluster != clusterName) || (agentName != "" && certAgent != agentName) {
		want := fmt.Sprintf("%s:%s", orAny(clusterName), orAny(agentName))
		return &InvalidHubKubeconfigError{Reason: ReasonIdentityMismatch,
			Message: fmt.Sprintf("%s subject CN names cluster/agent %s:%s, not %s", TLSCertSecretKey, certCluster, certAgent, want)}
	}
	if !slices.Contains(leaf.Subject.Organization, ClusterGroup(certCluster)) {
		return &InvalidHubKubeconfigError{Reason: ReasonIdentityMismatch,
			Message: fmt.Sprintf("%s subject O %q lacks the cluster group %q", TLSCertSecretKey, leaf.Subject.Organization, ClusterGroup(certCluster))}
	}
	return nil
}

func orAny(name string) string {
	if name == "" {
		return "*"
	}
	return name
}

// describeHubDiff renders the differing fields with their values (CA data is summarised, never dumped).
func describeHubDiff(fields []string, got, want HubInfo) string {
	parts := make([]string, 0, len(fields))
	for _, f := range fields {
		switch f {
		case "server":
			parts = append(parts, fmt.Sprintf("server (%q, hub %q)", got.Server, want.Server))
		case "proxy-url":
			parts = append(parts, fmt.Sprintf("proxy-url (%q, hub %q)", got.ProxyURL, want.ProxyURL))
		case "certificate-authority-data":
			parts = append(parts, fmt.Sprintf("certificate-authority-data (%s, hub %s)", describeCA(got.CAData), describeCA(want.CAData)))
		case "tls-server-name":
			parts = append(parts, fmt.Sprintf("tls-server-name (%q, hub %q)", got.TLSServerName, want.TLSServerName))
		case "insecure-skip-tls-verify":
			parts = append(parts, fmt.Sprintf("insecure-skip-tls-verify (%t, hub %t)", got.InsecureSkipTLSVerify, want.InsecureSkipTLSVerify))
		}
	}
	return strings.Join(parts, ", ")
}

// describeCA names a CA bundle by its certificates' subjects, or says it is empty / unparsable / a file.
func describeCA(data []byte) string {
	if len(data) == 0 {
		return "none"
	}
	if ref, ok := strings.CutPrefix(string(data), "file:"); ok {
		return fmt.Sprintf("file %q", ref)
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		return "unparsable"
	}
	names := make([]string, 0, len(certs))
	for _, c := range certs {
		names = append(names, c.Subject.CommonName)
	}
	return fmt.Sprintf("CN %s", strings.Join(names, "+"))
}

// parseLeafCertificate returns the first certificate of a PEM chain.
func parseLeafCertificate(certPEM []byte) (*x509.Certificate, error) {
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, err
	}
	return certs[0], nil
}
