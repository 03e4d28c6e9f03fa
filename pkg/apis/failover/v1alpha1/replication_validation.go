package v1alpha1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateReplicationConfig checks rc.Spec against the rules the CRD schema enforces on the API server, so
// that objects that did not pass through it (fake clients, an older CRD) are held to the same rules:
//   - spec.hubs has between MinReplicationHubs and MaxReplicationHubs entries;
//   - each hub name is a DNS-1123 label and unique;
//   - each kubeconfigSecret.name is a DNS-1123 subdomain, each key (when set) a valid Secret data key;
//   - spec.clusterSelector, when set, is a valid label selector;
//   - spec.kinds holds known ReplicatedKinds, each at most once.
//
// It returns every violation found, each naming the field path (e.g. "spec.hubs[1].name"); an empty list
// means valid. A nil rc yields one Required error.
func ValidateReplicationConfig(rc *ReplicationConfig) field.ErrorList {
	path := field.NewPath("spec")
	if rc == nil {
		return field.ErrorList{field.Required(path, "a ReplicationConfig is required")}
	}
	spec := &rc.Spec
	var errs field.ErrorList

	hubsPath := path.Child("hubs")
	switch {
	case len(spec.Hubs) < MinReplicationHubs:
		errs = append(errs, field.Invalid(hubsPath, len(spec.Hubs), "at least 2 hubs are required: a source and a standby"))
	case len(spec.Hubs) > MaxReplicationHubs:
		errs = append(errs, field.TooMany(hubsPath, len(spec.Hubs), MaxReplicationHubs))
	}
	seen := sets.New[string]()
	for i, hub := range spec.Hubs {
		hubPath := hubsPath.Index(i)
		namePath := hubPath.Child("name")
		switch {
		case hub.Name == "":
			errs = append(errs, field.Required(namePath, "the name of the hub is required"))
		case seen.Has(hub.Name):
			errs = append(errs, field.Duplicate(namePath, hub.Name))
		default:
			if msgs := validation.IsDNS1123Label(hub.Name); len(msgs) > 0 {
				errs = append(errs, field.Invalid(namePath, hub.Name, strings.Join(msgs, "; ")))
			}
		}
		seen.Insert(hub.Name)

		secretPath := hubPath.Child("kubeconfigSecret")
		if hub.KubeconfigSecret.Name == "" {
			errs = append(errs, field.Required(secretPath.Child("name"), "the name of the Secret holding the hub's kubeconfig is required"))
		} else if msgs := validation.IsDNS1123Subdomain(hub.KubeconfigSecret.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(secretPath.Child("name"), hub.KubeconfigSecret.Name, strings.Join(msgs, "; ")))
		}
		if hub.KubeconfigSecret.Key != "" {
			if msgs := validation.IsConfigMapKey(hub.KubeconfigSecret.Key); len(msgs) > 0 {
				errs = append(errs, field.Invalid(secretPath.Child("key"), hub.KubeconfigSecret.Key, strings.Join(msgs, "; ")))
			}
		}
	}

	if spec.ClusterSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(spec.ClusterSelector); err != nil {
			errs = append(errs, field.Invalid(path.Child("clusterSelector"), spec.ClusterSelector.String(), err.Error()))
		}
	}

	kindsPath := path.Child("kinds")
	known := sets.New(AllReplicatedKinds...)
	seenKinds := sets.New[ReplicatedKind]()
	for i, kind := range spec.Kinds {
		switch {
		case !known.Has(kind):
			errs = append(errs, field.NotSupported(kindsPath.Index(i), kind, AllReplicatedKinds))
		case seenKinds.Has(kind):
			errs = append(errs, field.Duplicate(kindsPath.Index(i), kind))
		}
		seenKinds.Insert(kind)
	}
	return errs
}

// ReplicatedKinds returns the kinds spec replicates: spec.Kinds in AllReplicatedKinds order, or all of them
// when spec.Kinds is empty. Unknown kinds are dropped (ValidateReplicationConfig reports them).
func (spec *ReplicationConfigSpec) ReplicatedKinds() []ReplicatedKind {
	if len(spec.Kinds) == 0 {
		return append([]ReplicatedKind(nil), AllReplicatedKinds...)
	}
	wanted := sets.New(spec.Kinds...)
	var out []ReplicatedKind
	for _, kind := range AllReplicatedKinds {
		if wanted.Has(kind) {
			out = append(out, kind)
		}
	}
	return out
}

// SecretKey returns ref.Key, or ReplicationKubeconfigSecretKey when it is empty (the CRD's default).
func (ref KubeconfigSecretReference) SecretKey() string {
	if ref.Key == "" {
		return ReplicationKubeconfigSecretKey
	}
	return ref.Key
}
