package clientcert

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ConnectionProblemReason classifies why a request to a hub failed; the values are UpperCamelCase so that
// callers can use them as event reasons and condition reasons.
type ConnectionProblemReason string

const (
	// HubCANotTrustedReason: the hub's serving certificate is not signed by a trusted CA (FC-03, FC-15).
	HubCANotTrustedReason ConnectionProblemReason = "HubCANotTrusted"
	// HubServingCertificateInvalidReason: the serving certificate is trusted but not valid for the server name,
	// or expired / not yet valid.
	HubServingCertificateInvalidReason ConnectionProblemReason = "HubServingCertificateInvalid"
	// HubProxyFailedReason: the kubeconfig's proxy-url could not be reached or refused the tunnel (FC-01).
	HubProxyFailedReason ConnectionProblemReason = "HubProxyFailed"
	// HubUnreachableReason: the hub server could not be reached (DNS, refused, timeout).
	HubUnreachableReason ConnectionProblemReason = "HubUnreachable"
	// HubCredentialsRejectedReason: the hub answered 401 (expired or unknown client certificate or token).
	HubCredentialsRejectedReason ConnectionProblemReason = "HubCredentialsRejected"
	// HubForbiddenReason: the hub answered 403.
	HubForbiddenReason ConnectionProblemReason = "HubForbidden"
	// HubRequestFailedReason: any other failure.
	HubRequestFailedReason ConnectionProblemReason = "HubRequestFailed"
)

// ConnectionProblem is a classified hub request failure.
type ConnectionProblem struct {
	// Reason is the class of failure.
	Reason ConnectionProblemReason
	// Message is one sentence for an event or condition naming the kubeconfig field to look at, followed by
	// the underlying error.
	Message string
}

// ClassifyConnectionError explains a failed request to the hub described by b (the bootstrap kubeconfig in use,
// or nil if unknown), naming the kubeconfig field a user has to fix:
//
//   - x509 unknown authority: "hub serving certificate not trusted: bootstrap kubeconfig <src>
//     clusters["hub"] has no certificate-authority-data (system roots used)" or "... is not signed by the CA
//     in the bootstrap kubeconfig <src> clusters["hub"].certificate-authority-data";
//   - x509 host name / validity errors: serving certificate invalid for the server;
//   - proxy dial or CONNECT failures when a proxy-url is set: names clusters["hub"].proxy-url and its value;
//   - 401: credentials rejected (the bootstrap client certificate's expiry at now is named when it is past);
//   - 403, dial errors, anything else.
//
// A nil err gives a zero ConnectionProblem.
func ClassifyConnectionError(err error, b *BootstrapKubeconfig, now time.Time) ConnectionProblem {
	if err == nil {
		return ConnectionProblem{}
	}
	src := "(unknown)"
	var hub HubInfo
	if b != nil {
		src = b.Source
		hub = b.Hub
	}

	var unknownAuthority x509.UnknownAuthorityError
	if errors.As(err, &unknownAuthority) {
		if len(hub.CAData) == 0 {
			return ConnectionProblem{HubCANotTrustedReason, fmt.Sprintf(
				"hub serving certificate not trusted: bootstrap kubeconfig %s %s has no certificate-authority-data (system roots used): %v",
				src, strings.TrimSuffix(b.ClusterField(""), "."), err)}
		}
		return ConnectionProblem{HubCANotTrustedReason, fmt.Sprintf(
			"hub serving certificate not trusted: it is not signed by the CA in the bootstrap kubeconfig %s %s: %v",
			src, b.ClusterField("certificate-authority-data"), err)}
	}
	var hostname x509.HostnameError
	if errors.As(err, &hostname) {
		return ConnectionProblem{HubServingCertificateInvalidReason, fmt.Sprintf(
			"hub serving certificate is not valid for %s (bootstrap kubeconfig %s %s): %v",
			hostname.Host, src, b.ClusterField("server"), err)}
	}
	var invalid x509.CertificateInvalidError
	if errors.As(err, &invalid) {
		return ConnectionProblem{HubServingCertificateInvalidReason, fmt.Sprintf(
			"hub serving certificate is invalid: %v", err)}
	}

	if hub.ProxyURL != "" && isProxyError(err) {
		return ConnectionProblem{HubProxyFailedReason, fmt.Sprintf(
			"cannot reach the hub through the proxy %q (bootstrap kubeconfig %s %s): %v",
			hub.ProxyURL, src, b.ClusterField("proxy-url"), err)}
	}

	if apierrors.IsUnauthorized(err) {
		if b != nil && b.Expired(now) {
			return ConnectionProblem{HubCredentialsRejectedReason, fmt.Sprintf(
				"bootstrap kubeconfig %s expired: its client certificate (users[%q]) expired at %s; supply a new one",
				src, b.UserName, b.ClientCertificate.NotAfter.UTC().Format(time.RFC3339))}
		}
		return ConnectionProblem{HubCredentialsRejectedReason, fmt.Sprintf("hub rejected the credentials: %v", err)}
	}
	if apierrors.IsForbidden(err) {
		return ConnectionProblem{HubForbiddenReason, fmt.Sprintf("hub denied the request: %v", err)}
	}

	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.As(err, &opErr) || errors.As(err, &dnsErr) || isTimeout(err) {
		return ConnectionProblem{HubUnreachableReason, fmt.Sprintf(
			"cannot reach the hub server %q (bootstrap kubeconfig %s %s): %v", hub.Server, src, b.ClusterField("server"), err)}
	}
	return ConnectionProblem{HubRequestFailedReason, fmt.Sprintf("request to the hub failed: %v", err)}
}

// isProxyError recognises net/http's failures to dial a proxy ("proxyconnect") or to open a tunnel through it.
func isProxyError(err error) bool {
	var opErr *net.OpError
	if errors.As(err, &opErr) && (opErr.Op == "proxyconnect" || strings.HasPrefix(opErr.Op, "socks")) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "proxyconnect") || strings.Contains(msg, "Proxy Authentication Required") ||
		strings.Contains(msg, "socks connect")
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
