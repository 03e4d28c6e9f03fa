package clientcert

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/util/retry"
)

const (
	// BootstrapBackoffLeaseName is the Lease in the agent namespace that holds the bootstrap CSR back-off of every
	// agent of the namespace (the agent's RBAC already covers Leases there, for leader election).
	BootstrapBackoffLeaseName = "klusterlet-failover-bootstrap-backoff"
	// BootstrapBackoffAnnotation holds the records on that Lease: a JSON object from key (cluster@hub server) to
	// BootstrapRecord.
	BootstrapBackoffAnnotation = "failover.open-cluster-management.io/bootstrap-backoff"
)

// LeaseBootstrapBackoffStore is a BootstrapBackoffStore on the annotation BootstrapBackoffAnnotation of a Lease.
// The Lease's spec is not used; it is only a small object the agent may write. Writes merge by key and retry on
// conflicts, so that agents sharing the namespace keep each other's records.
type LeaseBootstrapBackoffStore struct {
	client          coordinationv1client.LeasesGetter
	namespace, name string
}

// NewLeaseBootstrapBackoffStore returns a store on Lease namespace/name.
func NewLeaseBootstrapBackoffStore(client coordinationv1client.LeasesGetter, namespace, name string) *LeaseBootstrapBackoffStore {
	return &LeaseBootstrapBackoffStore{client: client, namespace: namespace, name: name}
}

// Load implements BootstrapBackoffStore: no Lease is no records; an annotation that does not parse is an error
// naming the Lease and the annotation.
func (s *LeaseBootstrapBackoffStore) Load(ctx context.Context) (map[string]BootstrapRecord, error) {
	lease, err := s.client.Leases(s.namespace).Get(ctx, s.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return map[string]BootstrapRecord{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get lease %s/%s: %w", s.namespace, s.name, err)
	}
	return s.decode(lease)
}

// Save implements BootstrapBackoffStore.
func (s *LeaseBootstrapBackoffStore) Save(ctx context.Context, records map[string]BootstrapRecord) error {
	if len(records) == 0 {
		return nil
	}
	leases := s.client.Leases(s.namespace)
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		lease, err := leases.Get(ctx, s.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			value, err := json.Marshal(records)
			if err != nil {
				return err
			}
			lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: s.name,
				Annotations: map[string]string{BootstrapBackoffAnnotation: string(value)}}}
			_, err = leases.Create(ctx, lease, metav1.CreateOptions{FieldManager: fieldManager})
			if apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(coordinationv1.Resource("leases"), s.name, err)
			}
			return err
		}
		if err != nil {
			return fmt.Errorf("get lease %s/%s: %w", s.namespace, s.name, err)
		}
		stored, err := s.decode(lease)
		if err != nil {
			// Unreadable: replaced by this process's records rather than kept broken.
			stored = map[string]BootstrapRecord{}
		}
		maps.Copy(stored, records)
		value, err := json.Marshal(stored)
		if err != nil {
			return err
		}
		lease = lease.DeepCopy()
		if lease.Annotations == nil {
			lease.Annotations = map[string]string{}
		}
		lease.Annotations[BootstrapBackoffAnnotation] = string(value)
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
}

func (s *LeaseBootstrapBackoffStore) decode(lease *coordinationv1.Lease) (map[string]BootstrapRecord, error) {
	records := map[string]BootstrapRecord{}
	value, ok := lease.Annotations[BootstrapBackoffAnnotation]
	if !ok || value == "" {
		return records, nil
	}
	if err := json.Unmarshal([]byte(value), &records); err != nil {
		return nil, fmt.Errorf("lease %s/%s: annotation %s: %w", s.namespace, s.name, BootstrapBackoffAnnotation, err)
	}
	return records, nil
}

// BootstrapBackoffKey is the key of a cluster's back-off on one hub: "<cluster>@<hub server>". Agents for
// different clusters, or for one cluster with different hub names, share a store without mixing.
func BootstrapBackoffKey(clusterName, server string) string {
	return clusterName + "@" + server
}
