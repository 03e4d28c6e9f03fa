// Package crd embeds the CustomResourceDefinitions that hack/update-codegen.sh generates (controller-gen)
// from pkg/apis, so that tests and tools can install them without reading files at run time.
package crd

import (
	"embed"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// FailoverConfigFileName is the name, in FS and in this directory, of the FailoverConfig CRD
// (failoverconfigs.failover.open-cluster-management.io).
const FailoverConfigFileName = "failover.open-cluster-management.io_failoverconfigs.yaml"

// ReplicationConfigFileName is the name, in FS and in this directory, of the ReplicationConfig CRD
// (replicationconfigs.failover.open-cluster-management.io), installed on the cluster the replicator runs in.
const ReplicationConfigFileName = "failover.open-cluster-management.io_replicationconfigs.yaml"

// FS holds every generated CRD manifest of this directory (*.yaml, one CRD per file).
//
//go:embed *.yaml
var FS embed.FS

// FailoverConfigCRD decodes the embedded FailoverConfig CRD. Every call returns a new object, which the caller
// may modify (e.g. pass to envtest.CRDInstallOptions.CRDs). It fails only if the embedded file is corrupt.
func FailoverConfigCRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	return decode(FailoverConfigFileName)
}

// ReplicationConfigCRD decodes the embedded ReplicationConfig CRD, as FailoverConfigCRD does.
func ReplicationConfigCRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	return decode(ReplicationConfigFileName)
}

// decode reads and strictly decodes the embedded CRD file name.
func decode(name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := FS.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading embedded CRD %s: %w", name, err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return nil, fmt.Errorf("decoding embedded CRD %s: %w", name, err)
	}
	return crd, nil
}
