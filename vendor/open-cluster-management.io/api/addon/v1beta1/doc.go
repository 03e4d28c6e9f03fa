// Copyright Contributors to the Open Cluster Management project
// Package v1beta1 contains API Schema definitions for the addon v1beta1 API group

// +k8s:deepcopy-gen=package,register
// +k8s:openapi-model-package=io.open-cluster-management.api.addon.v1beta1
// +kubebuilder:validation:Optional
// +groupName=addon.open-cluster-management.io
// +k8s:conversion-gen=open-cluster-management.io/api/addon/v1alpha1
package v1beta1
