package framework

import (
	"fmt"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// caAuthn is an envtest.Authn that authenticates users by client certificates signed by a control plane's own
// CAs, instead of the throw-away CA envtest would create. kube-apiserver's --client-ca-file is a bundle file in
// the control plane's directory (it survives apiserver restarts, and kube-apiserver reloads it when it changes)
// holding the admin CA, which signs the users envtest adds (admin), and the signing CA, which is also
// kube-controller-manager's signing CA.
type caAuthn struct {
	admin, signing *testCA
	bundleFile     string
}

var _ envtest.Authn = &caAuthn{}

// Configure writes the CA bundle and sets --client-ca-file to it.
func (a *caAuthn) Configure(_ string, args *envtest.Arguments) error {
	if err := a.writeBundle(); err != nil {
		return err
	}
	args.Set("client-ca-file", a.bundleFile)
	return nil
}

// writeBundle (re)writes the bundle file from the two CAs' current certificates.
func (a *caAuthn) writeBundle() error {
	bundle := append(append([]byte{}, a.admin.pem()...), a.signing.pem()...)
	if err := writeFileAtomic(a.bundleFile, bundle); err != nil {
		return fmt.Errorf("writing the client CA bundle: %w", err)
	}
	return nil
}

// Start does nothing: the bundle was written by Configure.
func (a *caAuthn) Start() error { return nil }

// AddUser returns a copy of baseCfg authenticating as user with a certificate signed by the admin CA.
func (a *caAuthn) AddUser(user envtest.User, baseCfg *rest.Config) (*rest.Config, error) {
	certPEM, keyPEM, err := a.admin.newClientCert(user.Name, user.Groups)
	if err != nil {
		return nil, fmt.Errorf("provisioning user %q: %w", user.Name, err)
	}
	cfg := rest.CopyConfig(baseCfg)
	cfg.CertData = certPEM
	cfg.KeyData = keyPEM
	return cfg, nil
}

// Stop does nothing: the CAs outlive apiserver restarts.
func (a *caAuthn) Stop() error { return nil }
