package clientcert

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
)

// HubInfo is how the agent reaches and trusts a hub: the cluster entry of the hub's bootstrap kubeconfig.
// It is what the hub kubeconfig the agent writes must carry, and what CheckHubKubeconfig compares against.
type HubInfo struct {
	// Server is the hub API server URL as written in the kubeconfig (https://host[:port][/path]).
	Server string
	// ProxyURL is the kubeconfig's proxy-url ("" for none; http, https or socks5 URL).
	ProxyURL string
	// CAData is the PEM CA bundle trusted for the hub's serving certificate; empty means the system roots.
	CAData []byte
	// TLSServerName is the kubeconfig's tls-server-name ("" for none).
	TLSServerName string
	// InsecureSkipTLSVerify is the kubeconfig's insecure-skip-tls-verify (test beds only).
	InsecureSkipTLSVerify bool
}

// Diff returns the kubeconfig field names ("server", "proxy-url", "certificate-authority-data",
// "tls-server-name", "insecure-skip-tls-verify") whose values differ between h and other, in that order; nil
// if they describe the same hub. Servers are compared without a trailing "/"; CA bundles are compared as sets
// of certificates (PEM formatting does not matter) and byte for byte if either does not parse.
func (h HubInfo) Diff(other HubInfo) []string {
	var fields []string
	if strings.TrimSuffix(h.Server, "/") != strings.TrimSuffix(other.Server, "/") {
		fields = append(fields, "server")
	}
	if h.ProxyURL != other.ProxyURL {
		fields = append(fields, "proxy-url")
	}
	if !sameCABundle(h.CAData, other.CAData) {
		fields = append(fields, "certificate-authority-data")
	}
	if h.TLSServerName != other.TLSServerName {
		fields = append(fields, "tls-server-name")
	}
	if h.InsecureSkipTLSVerify != other.InsecureSkipTLSVerify {
		fields = append(fields, "insecure-skip-tls-verify")
	}
	return fields
}

// BootstrapKubeconfig is a parsed, checked bootstrap kubeconfig of one hub.
type BootstrapKubeconfig struct {
	// Source names where the kubeconfig came from, as used in error messages: a file path, or e.g.
	// "secret open-cluster-management-agent/hub-b-bootstrap key kubeconfig".
	Source string
	// ContextName, ClusterName and UserName are the kubeconfig entry names in use (from current-context).
	ContextName, ClusterName, UserName string
	// Hub is the cluster entry: server, proxy-url, CA data (inlined from a file if need be) and TLS options.
	Hub HubInfo
	// RestConfig is a client config with every file reference inlined (CA, client certificate and key,
	// token file), so it does not depend on the files staying in place.
	RestConfig *rest.Config
	// ClientCertificate is the leaf of the user's client certificate, or nil if the user does not
	// authenticate with a client certificate (token, basic auth, exec).
	ClientCertificate *x509.Certificate
	// Raw is the kubeconfig exactly as read.
	Raw []byte
}

// ClientCertNotAfter returns the expiry of the bootstrap client certificate; ok is false if the user does not
// authenticate with a client certificate.
func (b *BootstrapKubeconfig) ClientCertNotAfter() (notAfter time.Time, ok bool) {
	if b == nil || b.ClientCertificate == nil {
		return time.Time{}, false
	}
	return b.ClientCertificate.NotAfter, true
}

// Expired reports whether the bootstrap identity is known to be unusable at now: its client certificate has
// expired (FC-09). Token and exec credentials are never reported expired (their expiry is not visible here).
func (b *BootstrapKubeconfig) Expired(now time.Time) bool {
	notAfter, ok := b.ClientCertNotAfter()
	return ok && !now.Before(notAfter)
}

// ClusterField returns the kubeconfig path of a field of the cluster entry in use, e.g.
// `clusters["hub"].certificate-authority-data`, for messages.
func (b *BootstrapKubeconfig) ClusterField(field string) string {
	if b == nil {
		return "clusters[?]." + field
	}
	return fmt.Sprintf("clusters[%q].%s", b.ClusterName, field)
}

// KubeconfigError is a bootstrap kubeconfig that cannot be used, naming the kubeconfig field at fault (FC-15).
// Error() reads e.g.
// `bootstrap kubeconfig /etc/b.kubeconfig: clusters["hub"].certificate-authority "/nope/ca.crt": no such file`.
type KubeconfigError struct {
	// Source is the kubeconfig's origin (see BootstrapKubeconfig.Source).
	Source string
	// Field is the kubeconfig path of the field at fault, e.g. `users["bootstrap"].client-key`; "" when the
	// whole document is at fault (empty, not YAML).
	Field string
	// Value is the offending value as written (a path or URL); "" for data fields.
	Value string
	// Err is the cause; errors.Is(err, fs.ErrNotExist) holds for missing files.
	Err error
}

// Error implements error.
func (e *KubeconfigError) Error() string {
	var b strings.Builder
	b.WriteString("bootstrap kubeconfig ")
	b.WriteString(e.Source)
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		if e.Value != "" {
			fmt.Fprintf(&b, " %q", e.Value)
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the cause.
func (e *KubeconfigError) Unwrap() error { return e.Err }

// noSuchFileError is a short "no such file" that still satisfies errors.Is(err, fs.ErrNotExist).
type noSuchFileError struct{}

func (noSuchFileError) Error() string { return "no such file" }
func (noSuchFileError) Unwrap() error { return fs.ErrNotExist }

var errFileRefInSecret = errors.New("file references are not allowed in a kubeconfig read from a Secret; inline the data")

// LoadBootstrapKubeconfigFile reads and parses the bootstrap kubeconfig at path. Relative file references in it
// (certificate-authority, client-certificate, client-key, tokenFile, exec command with a "/") resolve against
// the directory of path, as kubectl does, and are inlined. Errors are *KubeconfigError values.
func LoadBootstrapKubeconfigFile(path string) (*BootstrapKubeconfig, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &KubeconfigError{Source: path, Err: noSuchFileError{}}
	}
	if err != nil {
		return nil, &KubeconfigError{Source: path, Err: err}
	}
	return parseBootstrapKubeconfig(data, path, filepath.Dir(path), true)
}

// ParseBootstrapKubeconfigFileData parses data that was read from the bootstrap kubeconfig file at path, as
// LoadBootstrapKubeconfigFile does (relative file references resolve against the directory of path and are
// inlined; a missing file is named with its field), for callers that read and compare the file themselves (the
// failover orchestrator polls the --bootstrap-kubeconfig file). The source in errors is path. Errors are
// *KubeconfigError values.
func ParseBootstrapKubeconfigFileData(data []byte, path string) (*BootstrapKubeconfig, error) {
	return parseBootstrapKubeconfig(data, path, filepath.Dir(path), true)
}

// ParseBootstrapKubeconfig parses a bootstrap kubeconfig held in memory (typically a Secret's "kubeconfig"
// key). source names the origin in errors, e.g. "secret ns/hub-b-bootstrap key kubeconfig". Such a kubeconfig
// must be self-contained: any file reference, and any exec credential plugin, is rejected naming the field.
// Errors are *KubeconfigError values.
func ParseBootstrapKubeconfig(data []byte, source string) (*BootstrapKubeconfig, error) {
	return parseBootstrapKubeconfig(data, source, "", false)
}

// BootstrapKubeconfigFromSecret parses the failoverv1alpha1.KubeconfigSecretKey of a bootstrap kubeconfig Secret with
// ParseBootstrapKubeconfig, the source being "secret <namespace>/<name> key kubeconfig".
func BootstrapKubeconfigFromSecret(secret *corev1.Secret) (*BootstrapKubeconfig, error) {
	source := fmt.Sprintf("secret %s/%s key %s", secret.Namespace, secret.Name, failoverv1alpha1.KubeconfigSecretKey)
	data, ok := secret.Data[failoverv1alpha1.KubeconfigSecretKey]
	if !ok {
		return nil, &KubeconfigError{Source: source, Err: errors.New("key not found in the Secret")}
	}
	return ParseBootstrapKubeconfig(data, source)
}

// HubInfoFromKubeconfig returns the HubInfo of the current context's cluster of a self-contained kubeconfig
// (for example the hub kubeconfig in the Secret). A certificate-authority file reference is an error.
func HubInfoFromKubeconfig(kubeconfig []byte) (HubInfo, error) {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return HubInfo{}, fmt.Errorf("parse kubeconfig: %w", err)
	}
	_, clusterName, cluster, _, _, err := currentEntries(cfg)
	if err != nil {
		return HubInfo{}, err
	}
	if cluster.CertificateAuthority != "" && len(cluster.CertificateAuthorityData) == 0 {
		return HubInfo{}, fmt.Errorf("clusters[%q].certificate-authority %q: kubeconfig is not self-contained", clusterName, cluster.CertificateAuthority)
	}
	return hubInfoOf(cluster), nil
}

func parseBootstrapKubeconfig(data []byte, source, baseDir string, fromFile bool) (*BootstrapKubeconfig, error) {
	fail := func(field, value string, err error) error {
		return &KubeconfigError{Source: source, Field: field, Value: value, Err: err}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fail("", "", errors.New("empty"))
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fail("", "", fmt.Errorf("not a kubeconfig: %w", err))
	}
	contextName, clusterName, cluster, userName, user, err := currentEntries(cfg)
	if err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			return nil, fail(fe.field, fe.value, fe.err)
		}
		return nil, fail("", "", err)
	}
	cluster = cluster.DeepCopy()
	user = user.DeepCopy()
	clusterField := func(f string) string { return fmt.Sprintf("clusters[%q].%s", clusterName, f) }
	userField := func(f string) string { return fmt.Sprintf("users[%q].%s", userName, f) }

	// readRef reads a file reference, or explains why it cannot be used.
	readRef := func(field, ref string) ([]byte, error) {
		if !fromFile {
			return nil, fail(field, ref, errFileRefInSecret)
		}
		// Resolved as kubectl resolves a file reference of a kubeconfig file; read here, so that an error names
		// the field.
		path := clientcmdapi.ResolvePath(ref, baseDir)
		value := ref
		if path != ref {
			value = fmt.Sprintf("%s (%s)", ref, path)
		}
		content, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fail(field, value, noSuchFileError{})
		}
		if err != nil {
			return nil, fail(field, value, err)
		}
		return content, nil
	}

	// Cluster: server, proxy-url, TLS.
	if err := checkServerURL(cluster.Server); err != nil {
		return nil, fail(clusterField("server"), cluster.Server, err)
	}
	if cluster.ProxyURL != "" {
		if err := checkProxyURL(cluster.ProxyURL); err != nil {
			return nil, fail(clusterField("proxy-url"), cluster.ProxyURL, err)
		}
	}
	if len(cluster.CertificateAuthorityData) == 0 && cluster.CertificateAuthority != "" {
		caData, err := readRef(clusterField("certificate-authority"), cluster.CertificateAuthority)
		if err != nil {
			return nil, err
		}
		if _, err := certutil.ParseCertsPEM(caData); err != nil {
			return nil, fail(clusterField("certificate-authority"), cluster.CertificateAuthority, fmt.Errorf("not a PEM certificate bundle: %w", err))
		}
		cluster.CertificateAuthorityData = caData
	} else if len(cluster.CertificateAuthorityData) > 0 {
		if _, err := certutil.ParseCertsPEM(cluster.CertificateAuthorityData); err != nil {
			return nil, fail(clusterField("certificate-authority-data"), "", fmt.Errorf("not a PEM certificate bundle: %w", err))
		}
	}
	cluster.CertificateAuthority = ""
	if cluster.InsecureSkipTLSVerify && len(cluster.CertificateAuthorityData) > 0 {
		return nil, fail(clusterField("insecure-skip-tls-verify"), "", errors.New("cannot be combined with a certificate authority"))
	}

	// User: client certificate and key, token file, exec plugin.
	if len(user.ClientCertificateData) == 0 && user.ClientCertificate != "" {
		certData, err := readRef(userField("client-certificate"), user.ClientCertificate)
		if err != nil {
			return nil, err
		}
		user.ClientCertificateData = certData
	}
	if len(user.ClientKeyData) == 0 && user.ClientKey != "" {
		keyData, err := readRef(userField("client-key"), user.ClientKey)
		if err != nil {
			return nil, err
		}
		user.ClientKeyData = keyData
	}
	user.ClientCertificate, user.ClientKey = "", ""
	var clientCert *x509.Certificate
	switch {
	case len(user.ClientCertificateData) > 0 && len(user.ClientKeyData) == 0:
		return nil, fail(userField("client-key-data"), "", errors.New("missing while a client certificate is set"))
	case len(user.ClientCertificateData) == 0 && len(user.ClientKeyData) > 0:
		return nil, fail(userField("client-certificate-data"), "", errors.New("missing while a client key is set"))
	case len(user.ClientCertificateData) > 0:
		certs, err := certutil.ParseCertsPEM(user.ClientCertificateData)
		if err != nil {
			return nil, fail(userField("client-certificate-data"), "", fmt.Errorf("not a PEM certificate: %w", err))
		}
		if _, err := tls.X509KeyPair(user.ClientCertificateData, user.ClientKeyData); err != nil {
			return nil, fail(userField("client-key-data"), "", fmt.Errorf("does not match the client certificate: %w", err))
		}
		clientCert = certs[0]
	}
	if user.TokenFile != "" {
		token, err := readRef(userField("tokenFile"), user.TokenFile)
		if err != nil {
			return nil, err
		}
		if user.Token == "" {
			user.Token = strings.TrimSpace(string(token))
		}
		user.TokenFile = ""
	}
	if user.Exec != nil {
		if !fromFile {
			return nil, fail(userField("exec"), user.Exec.Command, errors.New("exec credential plugins are not allowed in a kubeconfig read from a Secret"))
		}
		// A command with a path separator is relative to the kubeconfig's directory; one without is looked up
		// in PATH (clientcmd.GetAuthInfoFileReferences).
		if err := clientcmd.ResolvePaths(clientcmd.GetAuthInfoFileReferences(&clientcmdapi.AuthInfo{Exec: user.Exec}), baseDir); err != nil {
			return nil, fail(userField("exec.command"), user.Exec.Command, err)
		}
	}

	inlined := clientcmdapi.NewConfig()
	inlined.Clusters[clusterName] = cluster
	inlined.AuthInfos[userName] = user
	inlined.Contexts[contextName] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: userName}
	inlined.CurrentContext = contextName
	restConfig, err := clientcmd.NewNonInteractiveClientConfig(*inlined, contextName, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fail("", "", err)
	}
	return &BootstrapKubeconfig{
		Source:            source,
		ContextName:       contextName,
		ClusterName:       clusterName,
		UserName:          userName,
		Hub:               hubInfoOf(cluster),
		RestConfig:        restConfig,
		ClientCertificate: clientCert,
		Raw:               data,
	}, nil
}

// fieldError is a kubeconfig structure error found by currentEntries.
type fieldError struct {
	field, value string
	err          error
}

func (e *fieldError) Error() string {
	if e.value != "" {
		return fmt.Sprintf("%s %q: %v", e.field, e.value, e.err)
	}
	return fmt.Sprintf("%s: %v", e.field, e.err)
}

func (e *fieldError) Unwrap() error { return e.err }

// currentEntries resolves current-context to its context, cluster and user entries. A context without a user
// is accepted only if its user name is empty (anonymous); callers decide whether that is usable.
func currentEntries(cfg *clientcmdapi.Config) (contextName, clusterName string, cluster *clientcmdapi.Cluster, userName string, user *clientcmdapi.AuthInfo, err error) {
	contextName = cfg.CurrentContext
	if contextName == "" {
		return "", "", nil, "", nil, &fieldError{field: "current-context", err: errors.New("not set")}
	}
	kctx, ok := cfg.Contexts[contextName]
	if !ok {
		return "", "", nil, "", nil, &fieldError{field: "current-context", value: contextName, err: errors.New("no such context")}
	}
	clusterName = kctx.Cluster
	if clusterName == "" {
		return "", "", nil, "", nil, &fieldError{field: fmt.Sprintf("contexts[%q].cluster", contextName), err: errors.New("not set")}
	}
	cluster, ok = cfg.Clusters[clusterName]
	if !ok {
		return "", "", nil, "", nil, &fieldError{field: fmt.Sprintf("contexts[%q].cluster", contextName), value: clusterName, err: errors.New("no such cluster")}
	}
	userName = kctx.AuthInfo
	if userName == "" {
		return "", "", nil, "", nil, &fieldError{field: fmt.Sprintf("contexts[%q].user", contextName), err: errors.New("not set")}
	}
	user, ok = cfg.AuthInfos[userName]
	if !ok {
		return "", "", nil, "", nil, &fieldError{field: fmt.Sprintf("contexts[%q].user", contextName), value: userName, err: errors.New("no such user")}
	}
	return contextName, clusterName, cluster, userName, user, nil
}

func hubInfoOf(cluster *clientcmdapi.Cluster) HubInfo {
	return HubInfo{
		Server:                cluster.Server,
		ProxyURL:              cluster.ProxyURL,
		CAData:                bytes.Clone(cluster.CertificateAuthorityData),
		TLSServerName:         cluster.TLSServerName,
		InsecureSkipTLSVerify: cluster.InsecureSkipTLSVerify,
	}
}

// checkServerURL accepts an absolute https URL with a host.
func checkServerURL(server string) error {
	if server == "" {
		return errors.New("not set")
	}
	u, err := url.Parse(server)
	if err != nil {
		return fmt.Errorf("not a URL: %w", unwrapURLError(err))
	}
	if u.Scheme != "https" || u.Host == "" {
		return errors.New("not an absolute https:// URL")
	}
	return nil
}

// checkProxyURL accepts the proxy schemes client-go supports (http, https, socks5) with a host.
func checkProxyURL(proxyURL string) error {
	u, err := url.Parse(proxyURL)
	if err != nil {
		return fmt.Errorf("not a URL: %w", unwrapURLError(err))
	}
	switch u.Scheme {
	case "http", "https", "socks5":
	default:
		return errors.New("scheme must be http, https or socks5")
	}
	if u.Host == "" {
		return errors.New("no host")
	}
	return nil
}

// unwrapURLError drops url.Error's repetition of the URL, which the message already quotes.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// sameCABundle compares two PEM bundles as sets of DER certificates, falling back to bytes.
func sameCABundle(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	ca, errA := certutil.ParseCertsPEM(a)
	cb, errB := certutil.ParseCertsPEM(b)
	if errA != nil || errB != nil {
		return false
	}
	setA := map[string]bool{}
	for _, c := range ca {
		setA[string(c.Raw)] = true
	}
	setB := map[string]bool{}
	for _, c := range cb {
		setB[string(c.Raw)] = true
	}
	if len(setA) != len(setB) {
		return false
	}
	for k := range setA {
		if !setB[k] {
			return false
		}
	}
	return true
}
