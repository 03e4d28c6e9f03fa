package huberror

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func TestClassify(t *testing.T) {
	urlErr := func(err error) error {
		return &url.Error{Op: "Get", URL: "https://hub:6443/version", Err: err}
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	csrs := schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}

	cases := []struct {
		name string
		err  error
		want Class
	}{
		{name: "nil", err: nil, want: Class{Kind: None}},
		{name: "401", err: apierrors.NewUnauthorized("Unauthorized"), want: Class{Kind: Unauthorized, Code: 401}},
		{name: "403", err: apierrors.NewForbidden(csrs, "", errors.New("no")), want: Class{Kind: Forbidden, Code: 403}},
		{name: "503", err: apierrors.NewServiceUnavailable("down"), want: Class{Kind: HTTPStatus, Code: 503}},
		{name: "404 wrapped", err: fmt.Errorf("get: %w", apierrors.NewNotFound(csrs, "x")), want: Class{Kind: HTTPStatus, Code: 404}},
		{name: "unknown authority", err: urlErr(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}),
			want: Class{Kind: CANotTrusted}},
		{name: "host name mismatch", err: urlErr(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "hub.example.com"}),
			want: Class{Kind: WrongHost, Host: "hub.example.com"}},
		{name: "expired serving certificate", err: urlErr(&tls.CertificateVerificationError{Err: x509.CertificateInvalidError{Reason: x509.Expired}}),
			want: Class{Kind: CertificateInvalid}},
		{name: "proxy refused", err: urlErr(&net.OpError{Op: "proxyconnect", Net: "tcp", Err: refused}), want: Class{Kind: ProxyFailed}},
		{name: "proxy dial timed out", err: urlErr(&net.OpError{Op: "proxyconnect", Net: "tcp", Err: timeoutError{}}), want: Class{Kind: ProxyFailed}},
		{name: "socks dial", err: urlErr(&net.OpError{Op: "socks connect", Net: "tcp", Err: refused}), want: Class{Kind: ProxyFailed}},
		{name: "CONNECT refused by the proxy", err: urlErr(errors.New("Proxy Authentication Required")), want: Class{Kind: ProxyFailed}},
		{name: "context deadline", err: urlErr(context.DeadlineExceeded), want: Class{Kind: Timeout}},
		{name: "network timeout", err: urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: timeoutError{}}), want: Class{Kind: Timeout}},
		{name: "connection refused", err: urlErr(refused), want: Class{Kind: Unreachable}},
		{name: "DNS", err: urlErr(&net.DNSError{Err: "no such host", Name: "hub"}), want: Class{Kind: Unreachable}},
		{name: "other", err: errors.New("boom"), want: Class{Kind: Other}},
	}
	seen := map[Kind]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.err); got != tc.want {
				t.Errorf("Classify(%v) = %+v, want %+v", tc.err, got, tc.want)
			}
		})
		seen[tc.want.Kind] = true
	}
	for _, k := range Kinds() {
		if !seen[k] {
			t.Errorf("no case for Kind %q", k)
		}
	}
}
