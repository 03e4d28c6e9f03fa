package clientcert_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/keyutil"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

func TestNewPrivateKey(t *testing.T) {
	keyPEM, err := clientcert.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		t.Fatalf("key is %T, want ECDSA P-256", key)
	}
	other, err := clientcert.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	if string(other) == string(keyPEM) {
		t.Error("two keys are equal")
	}
}

func TestNewCSRWireContract(t *testing.T) {
	keyPEM, err := clientcert.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	expiration := int32(600)
	csr, err := clientcert.NewCSR("cluster1", "abcde", keyPEM, &expiration)
	if err != nil {
		t.Fatal(err)
	}
	wantMeta := metav1.ObjectMeta{
		GenerateName: "cluster1-",
		Labels:       map[string]string{"open-cluster-management.io/cluster-name": "cluster1"},
	}
	if diff := cmp.Diff(wantMeta, csr.ObjectMeta); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if csr.Spec.SignerName != "kubernetes.io/kube-apiserver-client" {
		t.Errorf("signer %q", csr.Spec.SignerName)
	}
	wantUsages := []certificatesv1.KeyUsage{"digital signature", "key encipherment", "client auth"}
	if diff := cmp.Diff(wantUsages, csr.Spec.Usages); diff != "" {
		t.Errorf("usages (-want +got):\n%s", diff)
	}
	if csr.Spec.ExpirationSeconds == nil || *csr.Spec.ExpirationSeconds != 600 || csr.Spec.ExpirationSeconds == &expiration {
		t.Errorf("expirationSeconds %v (must be a copy of 600)", csr.Spec.ExpirationSeconds)
	}
	if csr.Spec.Username != "" || len(csr.Spec.Groups) != 0 {
		t.Errorf("username/groups must be left to the API server: %q %v", csr.Spec.Username, csr.Spec.Groups)
	}

	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		t.Fatalf("request is not a PEM CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := req.CheckSignature(); err != nil {
		t.Errorf("request signature: %v", err)
	}
	wantSubject := pkix.Name{
		CommonName:   "system:open-cluster-management:cluster1:abcde",
		Organization: []string{"system:open-cluster-management:cluster1", "system:open-cluster-management:managed-clusters"},
	}
	if req.Subject.CommonName != wantSubject.CommonName || !cmp.Equal(req.Subject.Organization, wantSubject.Organization) {
		t.Errorf("subject CN %q O %q, want %q %q", req.Subject.CommonName, req.Subject.Organization, wantSubject.CommonName, wantSubject.Organization)
	}
	if len(req.DNSNames) != 0 || len(req.IPAddresses) != 0 {
		t.Errorf("SANs %v %v, want none", req.DNSNames, req.IPAddresses)
	}
	key, _ := keyutil.ParsePrivateKeyPEM(keyPEM)
	if !key.(*ecdsa.PrivateKey).PublicKey.Equal(req.PublicKey) {
		t.Error("request is not for the given key")
	}

	noExpiry, err := clientcert.NewCSR("cluster1", "abcde", keyPEM, nil)
	if err != nil || noExpiry.Spec.ExpirationSeconds != nil {
		t.Errorf("NewCSR without expiration: %v, %v", noExpiry.Spec.ExpirationSeconds, err)
	}
	if _, err := clientcert.NewCSR("cluster1", "abcde", []byte("junk"), nil); err == nil {
		t.Error("NewCSR accepted a junk key")
	}
}

func TestVerifyIssuedCertificate(t *testing.T) {
	ca := mustCA(t, "hub-client-ca")
	keyPEM, err := clientcert.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	csr, err := clientcert.NewCSR(testCluster, testAgent, keyPEM, nil)
	if err != nil {
		t.Fatal(err)
	}
	good, err := ca.SignCSR(csr.Spec.Request, testNow.Add(-time.Minute), testNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	expired, err := ca.SignCSR(csr.Spec.Request, testNow.Add(-2*time.Hour), testNow.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	future, err := ca.SignCSR(csr.Spec.Request, testNow.Add(time.Minute), testNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	otherKeyCert, _, err := ca.IssueClientCert(testCluster, testAgent, testNow, testNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	otherCSR, err := clientcert.NewCSR("cluster2", testAgent, keyPEM, nil)
	if err != nil {
		t.Fatal(err)
	}
	otherCluster, err := ca.SignCSR(otherCSR.Spec.Request, testNow, testNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		certPEM []byte
		wantErr string
	}{
		{"issued for the key and identity", good, ""},
		{"hub clock ahead (NotBefore in the future) is accepted", future, ""},
		{"expired", expired, "issued certificate expired at 2026-03-04T04:06:07Z"},
		{"for another key", otherKeyCert, "issued certificate does not match the CSR's private key"},
		{"for another cluster", otherCluster, `issued certificate subject CN "system:open-cluster-management:cluster2:abcde", want "system:open-cluster-management:cluster1:abcde"`},
		{"garbage", []byte("garbage"), "issued certificate unparsable: data does not contain any valid RSA or ECDSA certificates"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leaf, err := clientcert.VerifyIssuedCertificate(tc.certPEM, keyPEM, testCluster, testAgent, testNow)
			if tc.wantErr == "" {
				if err != nil || leaf == nil {
					t.Fatalf("VerifyIssuedCertificate = %v, %v", leaf, err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("error = %v, want %s", err, tc.wantErr)
			}
		})
	}
}
