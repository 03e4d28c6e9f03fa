package failover

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/huberror"
)

// TestProbeResultFor pins the one mapping from a classified hub failure to a standby probe result.
func TestProbeResultFor(t *testing.T) {
	want := map[huberror.Kind]failoverv1alpha1.HubProbeResult{
		huberror.None:               failoverv1alpha1.HubProbeReady,
		huberror.Unauthorized:       failoverv1alpha1.HubProbeUnauthorized,
		huberror.Forbidden:          failoverv1alpha1.HubProbeForbidden,
		huberror.HTTPStatus:         failoverv1alpha1.HubProbeUnreachable,
		huberror.CANotTrusted:       failoverv1alpha1.HubProbeServerUntrusted,
		huberror.WrongHost:          failoverv1alpha1.HubProbeServerUntrusted,
		huberror.CertificateInvalid: failoverv1alpha1.HubProbeServerUntrusted,
		huberror.ProxyFailed:        failoverv1alpha1.HubProbeUnreachable,
		huberror.Timeout:            failoverv1alpha1.HubProbeUnreachable,
		huberror.Unreachable:        failoverv1alpha1.HubProbeUnreachable,
		huberror.Other:              failoverv1alpha1.HubProbeUnreachable,
		huberror.Kind("NotAKind"):   failoverv1alpha1.HubProbeUnreachable,
	}
	for _, k := range append(huberror.Kinds(), huberror.None) {
		if _, ok := want[k]; !ok {
			t.Errorf("Kind %q has no expected probe result in this test", k)
		}
	}
	for k, w := range want {
		if got := probeResultFor(k); got != w {
			t.Errorf("probeResultFor(%q) = %q, want %q", k, got, w)
		}
	}
}

// TestProbeResultForError checks the message of each class of failure, without a network.
func TestProbeResultForError(t *testing.T) {
	urlErr := func(err error) error { return &url.Error{Op: "Get", URL: "https://hub:6443/version", Err: err} }
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	direct := &rest.Config{Host: "https://hub:6443", Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }}
	proxied := &rest.Config{Host: "https://hub:6443", Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy:3128", User: url.UserPassword("u", "s3cret")})}

	cases := []struct {
		name       string
		config     *rest.Config
		err        error
		wantResult failoverv1alpha1.HubProbeResult
		wantPrefix string
		wantSuffix string
	}{
		{"nil", direct, nil, failoverv1alpha1.HubProbeReady, "", ""},
		{"401", direct, apierrors.NewUnauthorized("Unauthorized"), failoverv1alpha1.HubProbeUnauthorized, "the hub rejected the credentials (HTTP 401 Unauthorized)", ")"},
		{"403", proxied, apierrors.NewForbidden(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, "", errors.New("no")), failoverv1alpha1.HubProbeForbidden, "the hub forbids the request (HTTP 403 Forbidden): ", "no"},
		{"503", proxied, apierrors.NewServiceUnavailable("down"), failoverv1alpha1.HubProbeUnreachable, "the hub answered HTTP 503: ", "down"},
		{"unknown authority", direct, urlErr(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), failoverv1alpha1.HubProbeServerUntrusted,
			"hub serving certificate not trusted by the kubeconfig's certificate authority: ", "unknown authority"},
		{"host name", direct, urlErr(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "hub"}), failoverv1alpha1.HubProbeServerUntrusted,
			"hub serving certificate is not valid for the server name: ", ""},
		{"expired", direct, urlErr(x509.CertificateInvalidError{Reason: x509.Expired}), failoverv1alpha1.HubProbeServerUntrusted,
			"hub serving certificate is invalid: ", ""},
		{"proxy", proxied, urlErr(&net.OpError{Op: "proxyconnect", Net: "tcp", Err: refused}), failoverv1alpha1.HubProbeUnreachable,
			"cannot connect to the proxy http://u:xxxxx@proxy:3128: ", "connection refused"},
		{"timeout", direct, urlErr(context.DeadlineExceeded), failoverv1alpha1.HubProbeUnreachable, "the hub did not answer in time: ", "deadline exceeded"},
		{"refused through a proxy", proxied, urlErr(refused), failoverv1alpha1.HubProbeUnreachable, "the hub is unreachable: ",
			"connection refused (through the proxy http://u:xxxxx@proxy:3128)"},
		{"other", direct, errors.New("boom"), failoverv1alpha1.HubProbeUnreachable, "the hub is unreachable: boom", "boom"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ProbeResultForError(tc.config, tc.err)
			if got.Result != tc.wantResult || !strings.HasPrefix(got.Message, tc.wantPrefix) || !strings.HasSuffix(got.Message, tc.wantSuffix) {
				t.Errorf("ProbeResultForError = %q %q\nwant %q, prefix %q, suffix %q", got.Result, got.Message, tc.wantResult, tc.wantPrefix, tc.wantSuffix)
			}
			if got.Server != tc.config.Host {
				t.Errorf("Server = %q, want %q", got.Server, tc.config.Host)
			}
			if strings.Contains(got.Message, "s3cret") {
				t.Errorf("message %q contains the proxy password", got.Message)
			}
		})
	}
}
