package registration

import (
	"crypto/sha256"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
)

// Names and defaults of OCM's add-on registration contract (open-cluster-management.io/ocm v1.2.0, registration
// agent, package spoke/addon).
const (
	// DefaultInstallNamespace is where an add-on agent runs when neither status.namespace nor
	// spec.installNamespace of its ManagedClusterAddOn says otherwise.
	DefaultInstallNamespace = "open-cluster-management-agent-addon"
	// KubeClientSigner is the signer of an add-on's hub kubeconfig registration.
	KubeClientSigner = certificatesv1.KubeAPIServerClientSignerName
	// KubeClientDriverCSR is the value the agent writes to status.kubeClientDriver of a ManagedClusterAddOn with a
	// KubeClientSigner registration: its credentials come from CSRs (OCM's "token" driver is not implemented).
	KubeClientDriverCSR = "csr"
	// KubeconfigContextNamespace is the namespace of the add-on kubeconfig's context, as OCM writes it.
	KubeconfigContextNamespace = "configuration"
)

// Config is one registration of one add-on, resolved with OCM's rules: where its Secret lives, under which name,
// for which certificate subject.
type Config struct {
	// AddOnName is the ManagedClusterAddOn's name.
	AddOnName string
	// SignerName is the registration's signer.
	SignerName string
	// Subject is the certificate subject, defaults applied (see ResolveSubject).
	Subject pkix.Name
	// Namespace is the add-on's install namespace, where the Secret is written (InstallNamespace).
	Namespace string
	// SecretName is SecretNameFor(AddOnName, SignerName).
	SecretName string
	// Hosted is true when the add-on agent runs outside the managed cluster (annotation
	// addon.open-cluster-management.io/hosting-cluster-name set): the Secret then goes to the cluster hosting the
	// agent instead of the managed cluster.
	Hosted bool
	// Hash identifies the configuration (signer, subject, namespace, hosted); a changed hash is a new
	// registration, and the old one's Secret is removed.
	Hash string
}

// Key is "<namespace>/<secret>" with a "hosted:" prefix for Secrets on the hosting cluster: unique per Secret.
func (c Config) Key() string {
	if c.Hosted {
		return "hosted:" + c.Namespace + "/" + c.SecretName
	}
	return c.Namespace + "/" + c.SecretName
}

// KubeClient reports whether the registration is the add-on's hub kubeconfig (signer KubeClientSigner).
func (c Config) KubeClient() bool { return c.SignerName == KubeClientSigner }

// InstallNamespace returns the add-on's install namespace with OCM's precedence: status.namespace, then
// spec.installNamespace, then DefaultInstallNamespace.
func InstallNamespace(addOn *addonv1alpha1.ManagedClusterAddOn) string {
	switch {
	case addOn.Status.Namespace != "":
		return addOn.Status.Namespace
	case addOn.Spec.InstallNamespace != "":
		return addOn.Spec.InstallNamespace
	default:
		return DefaultInstallNamespace
	}
}

// IsHosted reports whether the add-on agent runs outside the managed cluster: the annotation
// addon.open-cluster-management.io/hosting-cluster-name is set and not empty (OCM's rule).
func IsHosted(addOn *addonv1alpha1.ManagedClusterAddOn) bool {
	return addOn.Annotations[addonv1alpha1.HostingClusterNameAnnotationKey] != ""
}

// SecretNameFor returns the name of an add-on registration's Secret: "<addon>-hub-kubeconfig" for
// KubeClientSigner, else "<addon>-<signer with every / replaced by ->-client-cert" (OCM's names).
func SecretNameFor(addOnName, signerName string) string {
	if signerName == KubeClientSigner {
		return addOnName + "-hub-kubeconfig"
	}
	return addOnName + "-" + strings.ReplaceAll(signerName, "/", "-") + "-client-cert"
}

// DefaultCommonName is OCM's CN of an add-on agent when the registration's subject has no user:
// "system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<agent>".
func DefaultCommonName(clusterName, agentName, addOnName string) string {
	return DefaultOrganization(clusterName, addOnName) + ":agent:" + agentName
}

// DefaultOrganization is OCM's O of an add-on agent for KubeClientSigner when the subject has no groups:
// "system:open-cluster-management:cluster:<cluster>:addon:<addon>".
func DefaultOrganization(clusterName, addOnName string) string {
	return fmt.Sprintf("system:open-cluster-management:cluster:%s:addon:%s", clusterName, addOnName)
}

// ResolveSubject returns the certificate subject of a registration: user → CN, groups → O, organizationUnits → OU;
// an empty user becomes DefaultCommonName (agentName is this agent's name), and for KubeClientSigner empty groups
// become DefaultOrganization (custom signers keep no O), as OCM's agent does.
func ResolveSubject(clusterName, agentName, addOnName string, reg addonv1alpha1.RegistrationConfig) pkix.Name {
	subject := pkix.Name{
		CommonName:         reg.Subject.User,
		Organization:       slices.Clone(reg.Subject.Groups),
		OrganizationalUnit: slices.Clone(reg.Subject.OrganizationUnits),
	}
	if subject.CommonName == "" {
		subject.CommonName = DefaultCommonName(clusterName, agentName, addOnName)
	}
	if reg.SignerName == KubeClientSigner && len(subject.Organization) == 0 {
		subject.Organization = []string{DefaultOrganization(clusterName, addOnName)}
	}
	return subject
}

// SubjectMatches reports whether a certificate subject is the wanted one: same CN, the same set of O and the same
// set of OU (order and duplicates do not matter), OCM's rule for keeping a certificate.
func SubjectMatches(got, want pkix.Name) bool {
	return got.CommonName == want.CommonName &&
		sets.New(got.Organization...).Equal(sets.New(want.Organization...)) &&
		sets.New(got.OrganizationalUnit...).Equal(sets.New(want.OrganizationalUnit...))
}

// ConfigsFor resolves every registration in addOn's status.registrations. A registration with an empty signer, or
// whose Secret name is not a valid Secret name, is an error naming the add-on, the index and the rule; the valid
// ones are still returned. Two registrations with the same signer are one (the first wins), as their Secret would
// be the same.
func ConfigsFor(clusterName, agentName string, addOn *addonv1alpha1.ManagedClusterAddOn) ([]Config, []error) {
	namespace := InstallNamespace(addOn)
	hosted := IsHosted(addOn)
	var configs []Config
	var errs []error
	seen := map[string]bool{}
	if nsErrs := validation.IsDNS1123Label(namespace); len(nsErrs) > 0 {
		return nil, []error{fmt.Errorf("ManagedClusterAddOn %s: install namespace %q: %s", addOn.Name, namespace, strings.Join(nsErrs, "; "))}
	}
	for i, reg := range addOn.Status.Registrations {
		if reg.SignerName == "" {
			errs = append(errs, fmt.Errorf("ManagedClusterAddOn %s: status.registrations[%d].signerName is empty", addOn.Name, i))
			continue
		}
		name := SecretNameFor(addOn.Name, reg.SignerName)
		if nameErrs := validation.IsDNS1123Subdomain(name); len(nameErrs) > 0 {
			errs = append(errs, fmt.Errorf("ManagedClusterAddOn %s: status.registrations[%d].signerName %q: Secret name %q: %s",
				addOn.Name, i, reg.SignerName, name, strings.Join(nameErrs, "; ")))
			continue
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		c := Config{
			AddOnName:  addOn.Name,
			SignerName: reg.SignerName,
			Subject:    ResolveSubject(clusterName, agentName, addOn.Name, reg),
			Namespace:  namespace,
			SecretName: name,
			Hosted:     hosted,
		}
		c.Hash = configHash(c)
		configs = append(configs, c)
	}
	return configs, errs
}

// configHash hashes what makes a registration: signer, subject, namespace, hosted.
func configHash(c Config) string {
	data, _ := json.Marshal(struct {
		Signer    string   `json:"signer"`
		CN        string   `json:"cn"`
		O         []string `json:"o"`
		OU        []string `json:"ou"`
		Namespace string   `json:"namespace"`
		Hosted    bool     `json:"hosted"`
	}{c.SignerName, c.Subject.CommonName, c.Subject.Organization, c.Subject.OrganizationalUnit, c.Namespace, c.Hosted})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
