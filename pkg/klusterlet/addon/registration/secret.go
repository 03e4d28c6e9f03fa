package registration

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/clientcmd"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/text"
)

// Keys of an add-on registration Secret, OCM's: KubeconfigKey (KubeClientSigner only), TLSCertKey, TLSKeyKey and
// ClusterNameKey. Add-on agents read exactly these.
const (
	// KubeconfigKey holds a kubeconfig for the hub (inline CA, context namespace "configuration") whose user
	// references TLSCertKey and TLSKeyKey as paths relative to the directory the Secret is mounted at.
	KubeconfigKey = failoverv1alpha1.KubeconfigSecretKey
	// TLSCertKey holds the PEM certificate (chain, leaf first) issued by the hub for the registration's subject.
	TLSCertKey = clientcert.TLSCertSecretKey
	// TLSKeyKey holds the PEM private key (ECDSA P-256) of TLSCertKey.
	TLSKeyKey = clientcert.TLSKeySecretKey
	// ClusterNameKey holds the managed cluster's name.
	ClusterNameKey = clientcert.ClusterNameSecretKey
)

// Metadata the agent puts on the Secrets it writes, on top of OCM's contract. The label selects them (a
// label-filtered informer, so the agent never watches every Secret of the cluster); the annotation says which hub
// issued the credentials, so that a Secret of another hub is never removed and is re-issued by the active hub.
const (
	// AddOnNameLabel (open-cluster-management.io/addon-name) carries the add-on's name.
	AddOnNameLabel = addonv1alpha1.AddonLabelKey
	// IssuingHubAnnotation carries the name of the hub whose credentials the Secret holds ("primary" or a
	// FailoverConfig alternate's name).
	IssuingHubAnnotation = "failover.open-cluster-management.io/issuing-hub"
)

// BuildAddOnKubeconfig returns the kubeconfig of an add-on's hub kubeconfig Secret: the agent's hub kubeconfig
// (clientcert.BuildHubKubeconfig: the hub's server, proxy-url, inline CA, user with tls.crt / tls.key relative
// paths) with the context namespace KubeconfigContextNamespace, as OCM writes it.
func BuildAddOnKubeconfig(hub clientcert.HubInfo) ([]byte, error) {
	data, err := clientcert.BuildHubKubeconfig(hub)
	if err != nil {
		return nil, fmt.Errorf("add-on kubeconfig: %w", err)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("add-on kubeconfig: %w", err)
	}
	if ctx := cfg.Contexts[cfg.CurrentContext]; ctx != nil {
		ctx.Namespace = KubeconfigContextNamespace
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("add-on kubeconfig: %w", err)
	}
	return out, nil
}

// AdditionalData returns the Secret keys of a registration besides the certificate and key: ClusterNameKey, and
// KubeconfigKey for a KubeClientSigner registration. A Secret whose values differ (another hub, another cluster)
// needs a new certificate, as in OCM.
func AdditionalData(c Config, clusterName string, hub clientcert.HubInfo) (map[string][]byte, error) {
	data := map[string][]byte{ClusterNameKey: []byte(clusterName)}
	if c.KubeClient() {
		kubeconfig, err := BuildAddOnKubeconfig(hub)
		if err != nil {
			return nil, err
		}
		data[KubeconfigKey] = kubeconfig
	}
	return data, nil
}

// Reasons a registration Secret needs a new certificate (Assessment.Reason).
const (
	// ReasonNoCertificate: the Secret is absent or lacks tls.crt / tls.key.
	ReasonNoCertificate = "NoCertificate"
	// ReasonCertificateInvalid: tls.crt does not parse, does not match tls.key, or expired.
	ReasonCertificateInvalid = "CertificateInvalid"
	// ReasonSubjectChanged: the certificate's subject is not the registration's.
	ReasonSubjectChanged = "SubjectChanged"
	// ReasonHubChanged: the kubeconfig or cluster-name keys, or the issuing hub, are not the active hub's (after a
	// failover, or a hub CA change).
	ReasonHubChanged = "HubChanged"
	// ReasonRotationDue: less than 20–25 % of the certificate's lifetime remains.
	ReasonRotationDue = "RotationDue"
)

// Assessment is Assess's verdict on a registration Secret.
type Assessment struct {
	// Valid is true when the Secret can be kept as it is until RotateAt.
	Valid bool
	// Reason is one of the *Reason constants when not Valid.
	Reason string
	// Message says what is wrong (never the key material).
	Message string
	// NotAfter is the leaf certificate's expiry when it parsed; zero otherwise.
	NotAfter time.Time
	// RotateAt is when the certificate is due for rotation (clientcert.RotationDeadline) when it parsed.
	RotateAt time.Time
}

// Assess decides whether the Secret data of a registration may be kept at now, in this order: tls.crt and tls.key
// present; tls.crt parses, matches tls.key and has not expired; the leaf's subject matches c.Subject
// (SubjectMatches); every key of additional has its value (the kubeconfig may differ in layout if it names the same
// hub and tls.crt / tls.key, sameHubKubeconfig); issuingHub (the Secret's IssuingHubAnnotation, "" when
// absent) is empty or hubName; now is before the rotation deadline for jitter (in [0, 1), drawn once per
// certificate). Pure: it reads no clock.
func Assess(data map[string][]byte, c Config, additional map[string][]byte, issuingHub, hubName string, now time.Time, jitter float64) Assessment {
	if len(data[TLSCertKey]) == 0 || len(data[TLSKeyKey]) == 0 {
		return Assessment{Reason: ReasonNoCertificate, Message: fmt.Sprintf("Secret %s has no %s/%s", c.SecretName, TLSCertKey, TLSKeyKey)}
	}
	leaf, err := clientcert.ParseLeafCertificate(data[TLSCertKey])
	if err != nil {
		return Assessment{Reason: ReasonCertificateInvalid, Message: fmt.Sprintf("Secret %s: %s unparsable: %v", c.SecretName, TLSCertKey, err)}
	}
	a := Assessment{NotAfter: leaf.NotAfter, RotateAt: clientcert.RotationDeadline(leaf, jitter)}
	switch {
	case !clientcert.CertificateMatchesKey(data[TLSCertKey], data[TLSKeyKey]):
		a.Reason, a.Message = ReasonCertificateInvalid, fmt.Sprintf("Secret %s: %s does not match %s", c.SecretName, TLSKeyKey, TLSCertKey)
	case !now.Before(leaf.NotAfter):
		a.Reason, a.Message = ReasonCertificateInvalid, fmt.Sprintf("Secret %s: %s expired at %s", c.SecretName, TLSCertKey, text.Time(leaf.NotAfter))
	case !SubjectMatches(leaf.Subject, c.Subject):
		a.Reason, a.Message = ReasonSubjectChanged, fmt.Sprintf("Secret %s: certificate subject CN %q O %q, want CN %q O %q",
			c.SecretName, leaf.Subject.CommonName, leaf.Subject.Organization, c.Subject.CommonName, c.Subject.Organization)
	default:
		for _, k := range slices.Sorted(maps.Keys(additional)) {
			if k == KubeconfigKey && sameHubKubeconfig(data[k], additional[k]) {
				continue
			}
			if !equality.Semantic.DeepEqual(data[k], additional[k]) {
				a.Reason, a.Message = ReasonHubChanged, fmt.Sprintf("Secret %s: key %s is not the active hub's", c.SecretName, k)
				return a
			}
		}
		switch {
		case issuingHub != "" && issuingHub != hubName:
			a.Reason, a.Message = ReasonHubChanged, fmt.Sprintf("Secret %s holds credentials of hub %s, the active hub is %s", c.SecretName, issuingHub, hubName)
		case !now.Before(a.RotateAt):
			a.Reason, a.Message = ReasonRotationDue, fmt.Sprintf("Secret %s: certificate rotation due at %s (expires %s)", c.SecretName,
				text.Time(a.RotateAt), text.Time(leaf.NotAfter))
		default:
			a.Valid = true
		}
	}
	return a
}

// sameHubKubeconfig reports whether kubeconfig got, written by another writer (OCM's agent lays it out
// differently), points at the same hub as want — server, proxy-url, CA and TLS options (clientcert.HubInfo.Diff) —
// and authenticates with tls.crt and tls.key next to it: then it is kept, and no new certificate is needed.
func sameHubKubeconfig(got, want []byte) bool {
	gotHub, err := clientcert.HubInfoFromKubeconfig(got)
	if err != nil {
		return false
	}
	wantHub, err := clientcert.HubInfoFromKubeconfig(want)
	if err != nil || len(gotHub.Diff(wantHub)) > 0 {
		return false
	}
	cfg, err := clientcmd.Load(got)
	if err != nil {
		return false
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || cfg.AuthInfos[ctx.AuthInfo] == nil {
		return false
	}
	user := cfg.AuthInfos[ctx.AuthInfo]
	return filepath.Base(user.ClientCertificate) == TLSCertKey && filepath.Base(user.ClientKey) == TLSKeyKey &&
		len(user.ClientCertificateData) == 0 && len(user.ClientKeyData) == 0 && user.Token == "" && user.TokenFile == "" && user.Exec == nil
}

// SecretData returns the data written for an issued certificate: existing (kept keys of the live Secret, nil for
// a new one) overlaid with tls.crt, tls.key and additional — the whole credentials of one hub, in one write.
func SecretData(existing map[string][]byte, certPEM, keyPEM []byte, additional map[string][]byte) map[string][]byte {
	data := make(map[string][]byte, len(existing)+2+len(additional))
	maps.Copy(data, existing)
	maps.Copy(data, additional)
	data[TLSCertKey] = certPEM
	data[TLSKeyKey] = keyPEM
	return data
}
