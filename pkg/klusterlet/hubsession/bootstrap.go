package hubsession

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	clusterclientset "open-cluster-management.io/api/client/cluster/clientset/versioned"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/startwait"
)

// runBootstrap runs the temporary ClientCertForHubController and ManagedClusterCreatingController with the
// bootstrap identity until the Secret holds valid credentials for this hub (new ones when forced), or ctx ends.
func (s *Session) runBootstrap(ctx context.Context, before map[string][]byte, forced string, changed <-chan struct{}) {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.setPhase(PhaseBootstrapping, fmt.Sprintf("requesting a client certificate from hub %s with the bootstrap identity", s.hub.Name))

	cfg := s.hubConfig(s.hub.Bootstrap.RestConfig, "bootstrap")
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		s.setPhase(PhaseNoCredentials, fmt.Sprintf("bootstrap kubeconfig %s: %v", s.hub.Bootstrap.Source, err))
		<-ctx.Done()
		return
	}
	clusterClient, err := clusterclientset.NewForConfig(cfg)
	if err != nil {
		s.setPhase(PhaseNoCredentials, fmt.Sprintf("bootstrap kubeconfig %s: %v", s.hub.Bootstrap.Source, err))
		<-ctx.Done()
		return
	}
	csrInformers := csrInformerFactory(kubeClient, s.config.ClusterName)
	spoke := s.newSpokeInformers()
	certOptions := s.clientCertOptions(kubeClient, csrInformers, spoke)
	certOptions.OnStatusChange = func(st clientcert.Status) {
		msg := fmt.Sprintf("hub %s: %s", s.hub.Name, st.Message)
		if st.LastError != nil {
			p := clientcert.ClassifyConnectionError(st.LastError, s.hub.Bootstrap, s.config.Clock.Now())
			if p.Message != "" {
				msg = fmt.Sprintf("hub %s: %s", s.hub.Name, p.Message)
			}
		}
		s.setPhase(PhaseBootstrapping, msg)
	}
	cc, err := clientcert.NewClientCertForHubController(certOptions)
	if err != nil {
		s.setPhase(PhaseNoCredentials, fmt.Sprintf("hub %s: %v", s.hub.Name, err))
		<-ctx.Done()
		return
	}
	creating := s.config.Controllers.Creating(clusterClient.ClusterV1())
	if forced != "" {
		cc.RequestNewCertificate(forced)
	}
	var wg sync.WaitGroup
	csrInformers.Start(ctx.Done())
	spoke.start(ctx)
	startwait.AwaitSynced(ctx, s.config.Clock, syncBound, csrInformers.Certificates().V1().CertificateSigningRequests().Informer().HasSynced,
		spoke.secrets.Informer().HasSynced)
	run(ctx, &wg, cc, creating)
	defer func() {
		cancel()
		wg.Wait()
		csrInformers.Shutdown()
		spoke.shutdown()
	}()
	logger.Info("Bootstrapping with the bootstrap kubeconfig", "source", s.hub.Bootstrap.Source)

	// The bootstrap identity expiring while it waits ends this phase: the outer loop then reports NoCredentials.
	var expired <-chan time.Time
	if notAfter, ok := s.hub.Bootstrap.ClientCertNotAfter(); ok {
		timer := s.config.Clock.NewTimer(notAfter.Sub(s.config.Clock.Now()) + time.Second)
		defer timer.Stop()
		expired = timer.C()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-expired:
			logger.Info("Bootstrap client certificate expired while waiting for a certificate")
			return
		case <-changed:
		}
		data := s.secretData()
		checkErr := clientcert.CheckHubKubeconfig(data, s.config.ClusterName, s.config.AgentName, s.hub.Bootstrap.Hub, s.config.Clock.Now())
		// A takeover can land while this phase waits, also right after its own write.
		s.observe(data, checkErr)
		if checkErr != nil {
			continue
		}
		if forced != "" && bytes.Equal(data[clientcert.TLSCertSecretKey], before[clientcert.TLSCertSecretKey]) {
			continue
		}
		s.mu.Lock()
		s.forceCSR = ""
		s.mu.Unlock()
		return
	}
}
