package framework

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// inProcessSigner signs approved kubernetes.io/kube-apiserver-client CSRs with a hub's client CA, in the test
// process, following kube-controller-manager's csrsigning policy (see testCA.signCSR and requestedDuration).
// CSRs with another signer, not approved, failed or already signed are left alone. A request the policy rejects
// gets a Failed condition with reason SignerValidationFailure, as kube-controller-manager does.
type inProcessSigner struct {
	client      kubernetes.Interface
	ca          *testCA
	maxDuration time.Duration
	log         io.Writer

	mu sync.Mutex // serializes signing and log writes
}

// run signs until ctx ends. Failed updates are retried on the informer's 2-second resync.
func (s *inProcessSigner) run(ctx context.Context) {
	factory := informers.NewSharedInformerFactory(s.client, 2*time.Second)
	informer := factory.Certificates().V1().CertificateSigningRequests().Informer()
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.handle(ctx, obj) },
		UpdateFunc: func(_, obj any) { s.handle(ctx, obj) },
	})
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
}

func (s *inProcessSigner) handle(ctx context.Context, obj any) {
	csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
	if !ok || ctx.Err() != nil {
		return
	}
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName || len(csr.Status.Certificate) > 0 ||
		!hasCondition(csr, certificatesv1.CertificateApproved) || hasCondition(csr, certificatesv1.CertificateFailed) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	csr = csr.DeepCopy()
	certPEM, signErr := s.sign(csr)
	if signErr != nil {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type:           certificatesv1.CertificateFailed,
			Status:         corev1.ConditionTrue,
			Reason:         "SignerValidationFailure",
			Message:        signErr.Error(),
			LastUpdateTime: metav1.Now(),
		})
	} else {
		csr.Status.Certificate = certPEM
	}
	if _, err := s.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		s.logf("updating CSR %s: %v (retried on resync)", csr.Name, err)
		return
	}
	if signErr != nil {
		s.logf("CSR %s failed: %v", csr.Name, signErr)
		return
	}
	s.logf("CSR %s signed", csr.Name)
}

// logf appends a timestamped line to the signer's log; callers hold s.mu.
func (s *inProcessSigner) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "%s in-process signer: %s\n", time.Now().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
}

// sign returns the PEM certificate for csr.
func (s *inProcessSigner) sign(csr *certificatesv1.CertificateSigningRequest) ([]byte, error) {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, fmt.Errorf("spec.request of CSR %s is not a PEM CERTIFICATE REQUEST", csr.Name)
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing spec.request of CSR %s: %w", csr.Name, err)
	}
	return s.ca.signCSR(req, csr.Spec.Usages, requestedDuration(csr.Spec.ExpirationSeconds, s.maxDuration), time.Now())
}

// hasCondition reports whether csr has a condition of type t with status True (an empty status counts as True,
// as in k8s.io/kubernetes pkg/apis/certificates helpers).
func hasCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && (c.Status == "" || c.Status == corev1.ConditionTrue) {
			return true
		}
	}
	return false
}
