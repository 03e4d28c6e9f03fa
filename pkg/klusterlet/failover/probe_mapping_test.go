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

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/huberror"
)

// TestProbeResultFor pins the one mapping from a classified hub failure to a standby probe result.
func TestProbeResultFor(t *testing.T) {
	want := map[huberror.Kind]ProbeResultType{
		huberror.None:               ProbeReady,
		huberror.Unauthorized:       ProbeUnauthorized,
		huberror.Forbidden:          ProbeForbidden,
		huberror.HTTPStatus:         ProbeUnreachable,
		huberror.CANotTrusted:       ProbeUnreachable,
		huberror.WrongHost:          ProbeUnreachable,
		huberror.CertificateInvalid: ProbeUnreachable,
		huberror.ProxyFailed:        ProbeUnreachable,
		huberror.Timeout:            ProbeUnreachable,
		huberror.Unreachable:        ProbeUnreachable,
		huberror.Other:              ProbeUnreachable,
		huberror.Kind("NotAKind"):   ProbeUnreachable,
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
		wantResult ProbeResultType
		wantPrefix string
		wantSuffix string
	}{
		{"nil", direct, nil, ProbeReady, "", ""},
		{"401", direct, apierrors.NewUnauthorized("Unauthorized"), ProbeUnauthorized, "the hub rejected the credentials (HTTP 401 Unauthorized)", ")"},
		{"403", proxied, apierrors.NewForbidden(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, "", errors.New("no")), ProbeForbidden, "the hub forbids the request (HTTP 403 Forbidden): ", "no"},
		{"503", proxied, apierrors.NewServiceUnavailable("down"), ProbeUnreachable, "the hub answered HTTP 503: ", "down"},
		{"unknown authority", direct, urlErr(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), ProbeUnreachable,
			"hub serving certificate not trusted by the kubeconfig's certificate authority: ", "unknown authority"},
		{"host name", direct, urlErr(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "hub"}), ProbeUnreachable,
			"hub serving certificate is not valid for the server name: ", ""},
		{"expired", direct, urlErr(x509.CertificateInvalidError{Reason: x509.Expired}), ProbeUnreachable,
			"hub serving certificate is invalid: ", ""},
		{"proxy", proxied, urlErr(&net.OpError{Op: "proxyconnect", Net: "tcp", Err: refused}), ProbeUnreachable,
			"cannot connect to the proxy http://u:xxxxx@proxy:3128: ", "connection refused"},
		{"timeout", direct, urlErr(context.DeadlineExceeded), ProbeUnreachable, "the hub did not answer in time: ", "deadline exceeded"},
		{"refused through a proxy", proxied, urlErr(refused), ProbeUnreachable, "the hub is unreachable: ",
			"connection refused (through the proxy http://u:xxxxx@proxy:3128)"},
		{"other", direct, errors.New("boom"), ProbeUnreachable, "the hub is unreachable: boom", "boom"},
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
