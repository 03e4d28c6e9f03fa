package clientcert_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

func TestClassifyConnectionError(t *testing.T) {
	ca := mustCA(t, "hub-ca")
	withCA := &clientcert.BootstrapKubeconfig{Source: "/etc/b.kubeconfig", ClusterName: "hub", UserName: "bootstrap",
		Hub: clientcert.HubInfo{Server: "https://hub:6443", CAData: ca.CertPEM}}
	noCA := &clientcert.BootstrapKubeconfig{Source: "/etc/b.kubeconfig", ClusterName: "hub", UserName: "bootstrap",
		Hub: clientcert.HubInfo{Server: "https://hub:6443"}}
	proxied := &clientcert.BootstrapKubeconfig{Source: "secret ns/b key kubeconfig", ClusterName: "hub", UserName: "bootstrap",
		Hub: clientcert.HubInfo{Server: "https://hub:6443", ProxyURL: "http://127.0.0.1:1"}}
	expiredBootstrap := &clientcert.BootstrapKubeconfig{Source: "/etc/b.kubeconfig", ClusterName: "hub", UserName: "bootstrap",
		Hub:               clientcert.HubInfo{Server: "https://hub:6443"},
		ClientCertificate: &x509.Certificate{NotAfter: testNow.Add(-time.Hour)}}

	urlErr := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://hub:6443/apis/certificates.k8s.io/v1/certificatesigningrequests", Err: err}
	}
	unknownAuthority := urlErr(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}})
	proxyRefused := urlErr(&net.OpError{Op: "proxyconnect", Net: "tcp", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}})
	refused := urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	unauthorized := apierrors.NewUnauthorized("Unauthorized")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, "", errors.New("no"))

	cases := []struct {
		name       string
		err        error
		b          *clientcert.BootstrapKubeconfig
		wantReason clientcert.ConnectionProblemReason
		wantPrefix string
	}{
		{"nil", nil, withCA, "", ""},
		{"unknown authority without CA data", unknownAuthority, noCA, clientcert.ReasonHubCANotTrusted,
			`hub serving certificate not trusted: bootstrap kubeconfig /etc/b.kubeconfig clusters["hub"] has no certificate-authority-data (system roots used): `},
		{"unknown authority with CA data", unknownAuthority, withCA, clientcert.ReasonHubCANotTrusted,
			`hub serving certificate not trusted: it is not signed by the CA in the bootstrap kubeconfig /etc/b.kubeconfig clusters["hub"].certificate-authority-data: `},
		{"host name mismatch", urlErr(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "hub"}), withCA, clientcert.ReasonHubServingCertificateInvalid,
			`hub serving certificate is not valid for hub (bootstrap kubeconfig /etc/b.kubeconfig clusters["hub"].server): `},
		{"proxy refused", proxyRefused, proxied, clientcert.ReasonHubProxyFailed,
			`cannot reach the hub through the proxy "http://127.0.0.1:1" (bootstrap kubeconfig secret ns/b key kubeconfig clusters["hub"].proxy-url): `},
		{"server refused", refused, withCA, clientcert.ReasonHubUnreachable,
			`cannot reach the hub server "https://hub:6443" (bootstrap kubeconfig /etc/b.kubeconfig clusters["hub"].server): `},
		{"401 with an expired bootstrap certificate", unauthorized, expiredBootstrap, clientcert.ReasonHubCredentialsRejected,
			`bootstrap kubeconfig /etc/b.kubeconfig expired: its client certificate (users["bootstrap"]) expired at 2026-03-04T04:06:07Z; supply a new one`},
		{"401", unauthorized, withCA, clientcert.ReasonHubCredentialsRejected, "hub rejected the credentials: "},
		{"403", forbidden, withCA, clientcert.ReasonHubForbidden, "hub denied the request: "},
		{"other", errors.New("boom"), nil, clientcert.ReasonHubRequestFailed, "request to the hub failed: boom"},
		{"proxy refused without a proxy-url (a proxy from the environment)", proxyRefused, withCA, clientcert.ReasonHubUnreachable,
			`cannot reach the hub server "https://hub:6443" (bootstrap kubeconfig /etc/b.kubeconfig clusters["hub"].server): `},
		{"timeout", urlErr(context.DeadlineExceeded), withCA, clientcert.ReasonHubUnreachable,
			`cannot reach the hub server "https://hub:6443" (bootstrap kubeconfig /etc/b.kubeconfig clusters["hub"].server): `},
		{"503", apierrors.NewServiceUnavailable("down"), withCA, clientcert.ReasonHubRequestFailed, "request to the hub failed: down"},
		{"unknown authority without bootstrap", unknownAuthority, nil, clientcert.ReasonHubCANotTrusted,
			`hub serving certificate not trusted: bootstrap kubeconfig (unknown) clusters[?] has no certificate-authority-data`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := clientcert.ClassifyConnectionError(tc.err, tc.b, testNow)
			if got.Reason != tc.wantReason || !strings.HasPrefix(got.Message, tc.wantPrefix) {
				t.Errorf("ClassifyConnectionError = %q %q\nwant %q, prefix %q", got.Reason, got.Message, tc.wantReason, tc.wantPrefix)
			}
		})
	}
}
