// Copyright Contributors to the Open Cluster Management project
// Package v1 contains API Schema definitions for the work v1 API group

// +k8s:deepcopy-gen=package,register
// +k8s:openapi-model-package=io.open-cluster-management.api.work.v1alpha1
// +kubebuilder:validation:Optional
// +groupName=work.open-cluster-management.io
package v1alpha1
