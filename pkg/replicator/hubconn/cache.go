package hubconn

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
)

// cachedObject is what the hub's informers store instead of the unstructured object the watch delivers: the
// object's name and namespace (the cache key) and its JSON without managedFields and status, which the
// replicator never mirrors. An unstructured ManifestWork in memory is several times the size of its JSON (every
// nested field is a map entry); the replicator decodes the JSON again only for the objects it syncs.
type cachedObject struct {
	metav1.ObjectMeta
	raw []byte
	// renewTime and created are set for Leases (spec.renewTime and metadata.creationTimestamp), which the
	// direction decision reads for every cluster on every recheck.
	renewTime, created time.Time
	hasRenewTime       bool
	// lastWrite is the object's last write by a user (mirror.LastWrite, from the managedFields dropped here).
	lastWrite time.Time
}

// GetObjectKind implements runtime.Object; the kind is not kept.
func (c *cachedObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject implements runtime.Object. raw is never modified, so it is shared.
func (c *cachedObject) DeepCopyObject() runtime.Object {
	out := *c
	out.ObjectMeta = *c.ObjectMeta.DeepCopy()
	return &out
}

// object decodes the cached JSON (numbers as int64 where integral, as unstructured objects from the API
// server hold them); nil if it does not decode.
func (c *cachedObject) object() *unstructured.Unstructured {
	m := map[string]any{}
	if err := utiljson.Unmarshal(c.raw, &m); err != nil {
		return nil
	}
	return &unstructured.Unstructured{Object: m}
}

// compactTransform is the informers' transform: it turns an unstructured object into a cachedObject.
// Tombstones and objects of other types pass through unchanged.
func compactTransform(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	lastWrite := mirror.LastWrite(u)
	u.SetManagedFields(nil)
	delete(u.Object, "status")
	c := &cachedObject{
		ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), ResourceVersion: u.GetResourceVersion()},
		lastWrite:  lastWrite,
	}
	if u.GetAPIVersion() == "coordination.k8s.io/v1" && u.GetKind() == "Lease" {
		// Only the two times are read.
		c.renewTime, c.hasRenewTime = RenewTime(u)
		c.created = u.GetCreationTimestamp().Time
		return c, nil
	}
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	c.raw = raw
	return c, nil
}
