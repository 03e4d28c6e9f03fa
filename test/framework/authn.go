package framework

import (
	"fmt"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// caAuthn is an envtest.Authn that authenticates users by client certificates signed by a hub's own client CA,
// instead of the throw-away CA envtest would create. It points kube-apiserver's --client-ca-file at the CA file
// in the hub's directory, which survives apiserver restarts and is also kube-controller-manager's signing CA.
type caAuthn struct {
	ca *testCA
}

var _ envtest.Authn = &caAuthn{}

// Configure sets --client-ca-file to the CA's certificate file.
func (a *caAuthn) Configure(_ string, args *envtest.Arguments) error {
	args.Set("client-ca-file", a.ca.certFile)
	return nil
}

// Start does nothing: the CA file was written when the CA was created.
func (a *caAuthn) Start() error { return nil }

// AddUser returns a copy of baseCfg authenticating as user with a certificate signed by the CA.
func (a *caAuthn) AddUser(user envtest.User, baseCfg *rest.Config) (*rest.Config, error) {
	certPEM, keyPEM, err := a.ca.newClientCert(user.Name, user.Groups)
	if err != nil {
		return nil, fmt.Errorf("provisioning user %q: %w", user.Name, err)
	}
	cfg := rest.CopyConfig(baseCfg)
	cfg.CertData = certPEM
	cfg.KeyData = keyPEM
	return cfg, nil
}

// Stop does nothing: the CA outlives apiserver restarts.
func (a *caAuthn) Stop() error { return nil }
