// Package huberror is the one classification of a failed request to a hub: Classify looks at the error
// (Kubernetes API status, x509 verification, proxy, timeout, network) and says which Kind of failure it is.
// It writes no message: each user of the class words it for its audience — clientcert.ClassifyConnectionError
// names the bootstrap kubeconfig field to fix (events and conditions of the hub session and the failover
// orchestrator), failover.ProbeResultForError maps it to a standby probe result.
package huberror

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kind is the class of a failed hub request. The values are stable UpperCamelCase words (they may appear in
// logs), but they are not event reasons: the callers map them to their own reasons.
type Kind string

const (
	// None: no error.
	None Kind = ""
	// Unauthorized: the hub answered HTTP 401 (an expired or unknown client certificate or token).
	Unauthorized Kind = "Unauthorized"
	// Forbidden: the hub answered HTTP 403 (authenticated, but RBAC denies the request).
	Forbidden Kind = "Forbidden"
	// HTTPStatus: the hub answered with another HTTP error status (Class.Code).
	HTTPStatus Kind = "HTTPStatus"
	// CANotTrusted: the hub's serving certificate is not signed by a trusted certificate authority
	// (x509.UnknownAuthorityError; FC-03, FC-15).
	CANotTrusted Kind = "CANotTrusted"
	// WrongHost: the serving certificate is trusted but not valid for the server's host name
	// (x509.HostnameError; Class.Host is the name checked).
	WrongHost Kind = "WrongHost"
	// CertificateInvalid: any other invalid serving certificate, e.g. expired or not yet valid
	// (x509.CertificateInvalidError).
	CertificateInvalid Kind = "CertificateInvalid"
	// ProxyFailed: the proxy could not be dialled or refused the tunnel (FC-01): net/http's "proxyconnect"
	// dial error, a SOCKS dial error, or a CONNECT answered with an error such as 407.
	ProxyFailed Kind = "ProxyFailed"
	// Timeout: the request did not complete in time (context deadline, or a network timeout).
	Timeout Kind = "Timeout"
	// Unreachable: the server could not be reached: connection refused or reset, DNS failure, other dial
	// and network errors (*net.OpError, *net.DNSError).
	Unreachable Kind = "Unreachable"
	// Other: anything else.
	Other Kind = "Other"
)

// Kinds lists every Kind but None, in Classify's rule order.
func Kinds() []Kind {
	return []Kind{Unauthorized, Forbidden, HTTPStatus, CANotTrusted, WrongHost, CertificateInvalid, ProxyFailed,
		Timeout, Unreachable, Other}
}

// Class is the classification of one error.
type Class struct {
	// Kind is the class of failure.
	Kind Kind
	// Code is the HTTP status of an API error (Unauthorized, Forbidden, HTTPStatus); 0 otherwise.
	Code int
	// Host is the host name the serving certificate was checked against (WrongHost); "" otherwise.
	Host string
}

// Classify classifies err, a failure of a request to a hub (typically a *url.Error from client-go's transport
// or an API status error). Its rules, first match wins:
//  1. nil → None.
//  2. An API status (an error with Status() metav1.Status, e.g. *apierrors.StatusError): 401 or reason
//     Unauthorized → Unauthorized; 403 or reason Forbidden → Forbidden; any other non-zero code → HTTPStatus.
//  3. x509.UnknownAuthorityError → CANotTrusted; x509.HostnameError → WrongHost; x509.CertificateInvalidError
//     → CertificateInvalid (also when wrapped in a tls.CertificateVerificationError).
//  4. A proxy failure → ProxyFailed: a *net.OpError with Op "proxyconnect" or "socks…", or an error text with
//     "proxyconnect", "socks connect" or "Proxy Authentication Required" (net/http returns a CONNECT refusal
//     as a plain error).
//  5. context.DeadlineExceeded or an error whose Timeout() is true → Timeout.
//  6. A *net.OpError or *net.DNSError → Unreachable.
//  7. Anything else → Other.
func Classify(err error) Class {
	if err == nil {
		return Class{Kind: None}
	}
	var status interface{ Status() metav1.Status }
	if errors.As(err, &status) {
		code := int(status.Status().Code)
		switch {
		case apierrors.IsUnauthorized(err):
			return Class{Kind: Unauthorized, Code: code}
		case apierrors.IsForbidden(err):
			return Class{Kind: Forbidden, Code: code}
		case code != 0:
			return Class{Kind: HTTPStatus, Code: code}
		}
	}

	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		opErr            *net.OpError
		dnsErr           *net.DNSError
	)
	switch {
	case errors.As(err, &unknownAuthority):
		return Class{Kind: CANotTrusted}
	case errors.As(err, &hostname):
		return Class{Kind: WrongHost, Host: hostname.Host}
	case errors.As(err, &invalid):
		return Class{Kind: CertificateInvalid}
	case isProxyError(err):
		return Class{Kind: ProxyFailed}
	case isTimeout(err):
		return Class{Kind: Timeout}
	case errors.As(err, &opErr) || errors.As(err, &dnsErr):
		return Class{Kind: Unreachable}
	}
	return Class{Kind: Other}
}

// isProxyError is rule 4 of Classify.
func isProxyError(err error) bool {
	var opErr *net.OpError
	if errors.As(err, &opErr) && (opErr.Op == "proxyconnect" || strings.HasPrefix(opErr.Op, "socks")) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "proxyconnect") || strings.Contains(msg, "Proxy Authentication Required") ||
		strings.Contains(msg, "socks connect")
}

// isTimeout is rule 5 of Classify.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &t) && t.Timeout())
}
