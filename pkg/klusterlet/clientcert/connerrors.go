package clientcert

import (
	"fmt"
	"strings"
	"time"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/huberror"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// ConnectionProblemReason classifies why a request to a hub failed; the values are UpperCamelCase so that
// callers can use them as event reasons and condition reasons.
type ConnectionProblemReason string

const (
	// ReasonHubCANotTrusted: the hub's serving certificate is not signed by a trusted CA (FC-03, FC-15).
	ReasonHubCANotTrusted ConnectionProblemReason = "HubCANotTrusted"
	// ReasonHubServingCertificateInvalid: the serving certificate is trusted but not valid for the server name,
	// or expired / not yet valid.
	ReasonHubServingCertificateInvalid ConnectionProblemReason = "HubServingCertificateInvalid"
	// ReasonHubProxyFailed: the kubeconfig's proxy-url could not be reached or refused the tunnel (FC-01).
	ReasonHubProxyFailed ConnectionProblemReason = "HubProxyFailed"
	// ReasonHubUnreachable: the hub server could not be reached (DNS, refused, timeout).
	ReasonHubUnreachable ConnectionProblemReason = "HubUnreachable"
	// ReasonHubCredentialsRejected: the hub answered 401 (expired or unknown client certificate or token).
	ReasonHubCredentialsRejected ConnectionProblemReason = "HubCredentialsRejected"
	// ReasonHubForbidden: the hub answered 403.
	ReasonHubForbidden ConnectionProblemReason = "HubForbidden"
	// ReasonHubRequestFailed: any other failure.
	ReasonHubRequestFailed ConnectionProblemReason = "HubRequestFailed"
)

// ConnectionProblem is a classified hub request failure.
type ConnectionProblem struct {
	// Reason is the class of failure.
	Reason ConnectionProblemReason
	// Message is one sentence for an event or condition naming the kubeconfig field to look at, followed by
	// the underlying error.
	Message string
}

// ClassifyConnectionError words huberror.Classify(err) for a failed request to the hub described by b (the
// bootstrap kubeconfig in use, or nil if unknown), naming the kubeconfig field a user has to fix:
//
//   - CANotTrusted: "hub serving certificate not trusted: bootstrap kubeconfig <src> clusters["hub"] has no
//     certificate-authority-data (system roots used)" or "... is not signed by the CA in the bootstrap
//     kubeconfig <src> clusters["hub"].certificate-authority-data" (ReasonHubCANotTrusted);
//   - WrongHost, CertificateInvalid: serving certificate invalid for the server (ReasonHubServingCertificateInvalid);
//   - ProxyFailed when the kubeconfig sets a proxy-url: names clusters["hub"].proxy-url and its value
//     (ReasonHubProxyFailed); without a proxy-url (a proxy from the environment) it counts as unreachable;
//   - Unauthorized: credentials rejected, naming the bootstrap client certificate's expiry when it is past at
//     now (ReasonHubCredentialsRejected); Forbidden: ReasonHubForbidden;
//   - Timeout, Unreachable: names the server (ReasonHubUnreachable); HTTPStatus, Other: ReasonHubRequestFailed.
//
// A nil err gives a zero ConnectionProblem.
func ClassifyConnectionError(err error, b *BootstrapKubeconfig, now time.Time) ConnectionProblem {
	class := huberror.Classify(err)
	if class.Kind == huberror.None {
		return ConnectionProblem{}
	}
	src := "(unknown)"
	var hub HubInfo
	if b != nil {
		src = b.Source
		hub = b.Hub
	}

	switch class.Kind {
	case huberror.CANotTrusted:
		if len(hub.CAData) == 0 {
			return ConnectionProblem{ReasonHubCANotTrusted, fmt.Sprintf(
				"hub serving certificate not trusted: bootstrap kubeconfig %s %s has no certificate-authority-data (system roots used): %v",
				src, strings.TrimSuffix(b.ClusterField(""), "."), err)}
		}
		return ConnectionProblem{ReasonHubCANotTrusted, fmt.Sprintf(
			"hub serving certificate not trusted: it is not signed by the CA in the bootstrap kubeconfig %s %s: %v",
			src, b.ClusterField("certificate-authority-data"), err)}
	case huberror.WrongHost:
		return ConnectionProblem{ReasonHubServingCertificateInvalid, fmt.Sprintf(
			"hub serving certificate is not valid for %s (bootstrap kubeconfig %s %s): %v",
			class.Host, src, b.ClusterField("server"), err)}
	case huberror.CertificateInvalid:
		return ConnectionProblem{ReasonHubServingCertificateInvalid, fmt.Sprintf(
			"hub serving certificate is invalid: %v", err)}
	case huberror.ProxyFailed:
		if hub.ProxyURL != "" {
			return ConnectionProblem{ReasonHubProxyFailed, fmt.Sprintf(
				"cannot reach the hub through the proxy %q (bootstrap kubeconfig %s %s): %v",
				hub.ProxyURL, src, b.ClusterField("proxy-url"), err)}
		}
		return unreachable(err, src, hub, b)
	case huberror.Unauthorized:
		if b != nil && b.Expired(now) {
			return ConnectionProblem{ReasonHubCredentialsRejected, fmt.Sprintf(
				"bootstrap kubeconfig %s expired: its client certificate (users[%q]) expired at %s; supply a new one",
				src, b.UserName, text.Time(b.ClientCertificate.NotAfter))}
		}
		return ConnectionProblem{ReasonHubCredentialsRejected, fmt.Sprintf("hub rejected the credentials: %v", err)}
	case huberror.Forbidden:
		return ConnectionProblem{ReasonHubForbidden, fmt.Sprintf("hub denied the request: %v", err)}
	case huberror.Timeout, huberror.Unreachable:
		return unreachable(err, src, hub, b)
	}
	return ConnectionProblem{ReasonHubRequestFailed, fmt.Sprintf("request to the hub failed: %v", err)}
}

func unreachable(err error, src string, hub HubInfo, b *BootstrapKubeconfig) ConnectionProblem {
	return ConnectionProblem{ReasonHubUnreachable, fmt.Sprintf(
		"cannot reach the hub server %q (bootstrap kubeconfig %s %s): %v", hub.Server, src, b.ClusterField("server"), err)}
}
