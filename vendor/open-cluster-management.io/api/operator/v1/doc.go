// Copyright Contributors to the Open Cluster Management project
// Package v1 contains API Schema definitions for the operator v1 API group

// +k8s:deepcopy-gen=package,register
// +k8s:openapi-model-package=io.open-cluster-management.api.operator.v1
// +kubebuilder:validation:Optional
// +groupName=operator.open-cluster-management.io
package v1
