package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of FailoverConfig and ReplicationConfig.
const GroupName = "failover.open-cluster-management.io"

// SchemeGroupVersion is the group and version of the types in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

var (
	// SchemeBuilder registers the types of this package with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds FailoverConfig, ReplicationConfig and their lists to a scheme (used by the generated clientset).
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kind returns a group-qualified GroupKind for kind, e.g. Kind("FailoverConfig").
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

// Resource returns a group-qualified GroupResource for resource, e.g. Resource("failoverconfigs").
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

// addKnownTypes registers FailoverConfig, ReplicationConfig, their lists and the meta/v1 types of this group version.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&FailoverConfig{},
		&FailoverConfigList{},
		&ReplicationConfig{},
		&ReplicationConfigList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
