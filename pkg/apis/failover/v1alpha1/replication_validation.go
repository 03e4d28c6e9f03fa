package v1alpha1

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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
//   - spec.kinds holds known ReplicatedKinds, each at most once;
//   - spec.customKinds has at most MaxCustomKinds entries, each naming a resource once (group a DNS-1123
//     subdomain or empty, version and resource DNS-1123 labels), a scope that fits namespaced (ClusterByName a
//     cluster-scoped resource, the ClusterByNamespace scopes a namespaced one), fields that are top-level
//     field names other than apiVersion, kind, metadata and status, each once, a labelSelector that parses
//     and generatedLabels that are label keys. That no custom kind is a ReplicatedKind's resource is checked
//     by the replicator (mirror.ResolveKinds), which knows their resources;
//   - spec.deleteBrake.percent, when set, is between 1 and 100, and spec.deleteBrake.minimum between 0 and
//     MaxDeleteBrakeMinimum.
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
	errs = append(errs, validateCustomKinds(path.Child("customKinds"), spec.CustomKinds)...)
	return append(errs, validateDeleteBrake(path.Child("deleteBrake"), spec.DeleteBrake)...)
}

// validateDeleteBrake checks spec.deleteBrake (see ValidateReplicationConfig).
func validateDeleteBrake(path *field.Path, b *DeleteBrake) field.ErrorList {
	if b == nil {
		return nil
	}
	var errs field.ErrorList
	if b.Percent != nil && (*b.Percent < 1 || *b.Percent > 100) {
		errs = append(errs, field.Invalid(path.Child("percent"), *b.Percent, "must be between 1 and 100"))
	}
	if b.Minimum != nil && (*b.Minimum < 0 || *b.Minimum > MaxDeleteBrakeMinimum) {
		errs = append(errs, field.Invalid(path.Child("minimum"), *b.Minimum, "must be between 0 and 100000"))
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

// KindNames returns the names of every kind spec replicates: ReplicatedKinds, then each custom kind's Name in
// spec.customKinds order.
func (spec *ReplicationConfigSpec) KindNames() []ReplicatedKind {
	names := spec.ReplicatedKinds()
	for _, ck := range spec.CustomKinds {
		names = append(names, ck.Name())
	}
	return names
}

// Name returns the name of ck in status, events and metrics: "<resource>.<group>", or "<resource>" in the core
// group.
func (ck CustomKind) Name() ReplicatedKind {
	if ck.Group == "" {
		return ReplicatedKind(ck.Resource)
	}
	return ReplicatedKind(ck.Resource + "." + ck.Group)
}

// CopiedFields returns ck.Fields, or ["spec"] when it is empty (the documented default).
func (ck CustomKind) CopiedFields() []string {
	if len(ck.Fields) == 0 {
		return []string{"spec"}
	}
	return append([]string(nil), ck.Fields...)
}

// reservedFields are the top-level fields a custom kind's copy never takes from its source.
var reservedFields = []string{"apiVersion", "kind", "metadata", "status"}

// validateCustomKinds checks spec.customKinds (see ValidateReplicationConfig).
func validateCustomKinds(path *field.Path, kinds []CustomKind) field.ErrorList {
	var errs field.ErrorList
	if len(kinds) > MaxCustomKinds {
		errs = append(errs, field.TooMany(path, len(kinds), MaxCustomKinds))
	}
	seen := sets.New[ReplicatedKind]()
	for i, ck := range kinds {
		p := path.Index(i)
		if ck.Group != "" {
			if msgs := validation.IsDNS1123Subdomain(ck.Group); len(msgs) > 0 {
				errs = append(errs, field.Invalid(p.Child("group"), ck.Group, strings.Join(msgs, "; ")))
			}
		}
		if ck.Version == "" {
			errs = append(errs, field.Required(p.Child("version"), "the API version the hubs serve is required"))
		} else if msgs := validation.IsDNS1123Label(ck.Version); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("version"), ck.Version, strings.Join(msgs, "; ")))
		}
		if ck.Resource == "" {
			errs = append(errs, field.Required(p.Child("resource"), "the resource's plural name is required"))
		} else if msgs := validation.IsDNS1123Label(ck.Resource); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("resource"), ck.Resource, "must be a resource's plural, lower-case name: "+strings.Join(msgs, "; ")))
		}
		if ck.Resource != "" && seen.Has(ck.Name()) {
			errs = append(errs, field.Duplicate(p, string(ck.Name())))
		}
		seen.Insert(ck.Name())
		scopePath := p.Child("scope")
		switch ck.Scope {
		case ScopeHubWide:
		case ScopeClusterByName:
			if ck.Namespaced {
				errs = append(errs, field.Invalid(scopePath, ck.Scope, "needs a cluster-scoped resource (namespaced: false): the object is named after its cluster"))
			}
		case ScopeClusterByNamespace, ScopeClusterByNamespaceIfCluster:
			if !ck.Namespaced {
				errs = append(errs, field.Invalid(scopePath, ck.Scope, "needs a namespaced resource (namespaced: true): the object is in its cluster's namespace"))
			}
		case "":
			errs = append(errs, field.Required(scopePath, "which hub is an object's source is required"))
		default:
			errs = append(errs, field.NotSupported(scopePath, ck.Scope, []CustomKindScope{ScopeHubWide, ScopeClusterByName, ScopeClusterByNamespace, ScopeClusterByNamespaceIfCluster}))
		}
		seenFields := sets.New[string]()
		for j, f := range ck.Fields {
			fp := p.Child("fields").Index(j)
			switch {
			case slices.Contains(reservedFields, f):
				errs = append(errs, field.Invalid(fp, f, "a copy never takes apiVersion, kind, metadata or status from its source"))
			case seenFields.Has(f):
				errs = append(errs, field.Duplicate(fp, f))
			case len(validation.IsCIdentifier(f)) > 0:
				errs = append(errs, field.Invalid(fp, f, "must be a top-level field name (letters, digits and '_', not starting with a digit)"))
			}
			seenFields.Insert(f)
		}
		if ck.LabelSelector != "" {
			if _, err := labels.Parse(ck.LabelSelector); err != nil {
				errs = append(errs, field.Invalid(p.Child("labelSelector"), ck.LabelSelector, err.Error()))
			}
		}
		for j, l := range ck.GeneratedLabels {
			if msgs := validation.IsQualifiedName(l); len(msgs) > 0 {
				errs = append(errs, field.Invalid(p.Child("generatedLabels").Index(j), l, "must be a label key: "+strings.Join(msgs, "; ")))
			}
		}
	}
	return errs
}

// SecretKey returns ref.Key, or KubeconfigSecretKey when it is empty (the CRD's default).
func (ref KubeconfigSecretReference) SecretKey() string {
	if ref.Key == "" {
		return KubeconfigSecretKey
	}
	return ref.Key
}
