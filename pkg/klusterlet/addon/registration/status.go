package registration

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonv1alpha1client "open-cluster-management.io/api/client/addon/clientset/versioned/typed/addon/v1alpha1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
)

// ensureDriver sets status.kubeClientDriver as OCM's agent does; it reports whether it patched.
func (c *AddOnRegistrationController) ensureDriver(ctx context.Context, addOn *addonv1alpha1.ManagedClusterAddOn) (bool, error) {
	want := ""
	for _, r := range addOn.Status.Registrations {
		if r.SignerName == KubeClientSigner {
			want = KubeClientDriverCSR
			break
		}
	}
	if addOn.Status.KubeClientDriver == want {
		return false, nil
	}
	updated := addOn.DeepCopy()
	updated.Status.KubeClientDriver = want
	if err := c.patchStatus(ctx, addOn, updated); err != nil {
		return false, err
	}
	return true, nil
}

// setRotatedCondition sets ClusterCertificateRotated on the hub (best effort: a failure is logged, the next
// outcome sets it again); no write when it is already so.
func (c *AddOnRegistrationController) setRotatedCondition(ctx context.Context, addOn *addonv1alpha1.ManagedClusterAddOn, status metav1.ConditionStatus, reason, msg string) {
	current, err := c.addOns.ManagedClusterAddOns(addOn.Namespace).Get(addOn.Name)
	if err != nil {
		current = addOn
	}
	updated := current.DeepCopy()
	cond := metav1.Condition{Type: ConditionClientCertificateRotated, Status: status, Reason: reason, Message: msg,
		LastTransitionTime: metav1.NewTime(c.o.Clock.Now())}
	if !meta.SetStatusCondition(&updated.Status.Conditions, cond) {
		return
	}
	if err := c.patchStatus(ctx, current, updated); err != nil {
		klog.FromContext(ctx).Info("Could not set the ClusterCertificateRotated condition", "err", err)
	}
}

// patchStatus writes the status difference between old and updated (PatchStatus).
func (c *AddOnRegistrationController) patchStatus(ctx context.Context, old, updated *addonv1alpha1.ManagedClusterAddOn) error {
	return PatchStatus(ctx, c.o.HubAddOnClient, fieldManager, old, updated)
}

// PatchStatus sends one JSON merge patch (StatusPatch) on the status subresource of old with the difference
// between old's and updated's status, with fieldManager. The error names the ManagedClusterAddOn.
func PatchStatus(ctx context.Context, client addonv1alpha1client.ManagedClusterAddOnsGetter, fieldManager string, old, updated *addonv1alpha1.ManagedClusterAddOn) error {
	patch, err := StatusPatch(old, updated)
	if err != nil {
		return err
	}
	if _, err := client.ManagedClusterAddOns(old.Namespace).Patch(ctx, old.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: fieldManager}, "status"); err != nil {
		return fmt.Errorf("patch status of ManagedClusterAddOn %s/%s on hub: %w", old.Namespace, old.Name, err)
	}
	return nil
}

// StatusPatch returns the JSON merge patch from old's status to updated's, with old's uid and resourceVersion as
// preconditions.
func StatusPatch(old, updated *addonv1alpha1.ManagedClusterAddOn) ([]byte, error) {
	type metadata struct {
		UID             types.UID `json:"uid,omitempty"`
		ResourceVersion string    `json:"resourceVersion,omitempty"`
	}
	type body struct {
		Metadata *metadata                               `json:"metadata,omitempty"`
		Status   addonv1alpha1.ManagedClusterAddOnStatus `json:"status"`
	}
	oldData, err := json.Marshal(body{Status: old.Status})
	if err != nil {
		return nil, fmt.Errorf("encode status of ManagedClusterAddOn %s: %w", old.Name, err)
	}
	newData, err := json.Marshal(body{Metadata: &metadata{UID: old.UID, ResourceVersion: old.ResourceVersion}, Status: updated.Status})
	if err != nil {
		return nil, fmt.Errorf("encode status of ManagedClusterAddOn %s: %w", old.Name, err)
	}
	patch, err := jsonpatch.CreateMergePatch(oldData, newData)
	if err != nil {
		return nil, fmt.Errorf("status patch of ManagedClusterAddOn %s: %w", old.Name, err)
	}
	return patch, nil
}

// jitterFor returns the jitter of a certificate, drawn once per certificate.
func (c *AddOnRegistrationController) jitterFor(certPEM []byte) float64 {
	leaf, err := clientcert.ParseLeafCertificate(certPEM)
	if err != nil {
		return 0
	}
	key := certKey(leaf)
	if v, ok := c.jitters[key]; ok {
		return v
	}
	v := c.o.Jitter()
	c.jitters[key] = v
	return v
}

func certKey(leaf *x509.Certificate) string {
	return leaf.SerialNumber.String() + "/" + leaf.NotAfter.String()
}

// setState records a registration's state for OnStatus; a zero notAfter leaves NotAfter unset.
func (c *AddOnRegistrationController) setState(cfg Config, state failoverv1alpha1.AddOnRegistrationState, msg string, notAfter time.Time) {
	st := failoverv1alpha1.AddOnRegistrationStatus{Name: cfg.AddOnName, Secret: cfg.Key(), SignerName: cfg.SignerName, State: state, Message: msg}
	if state == failoverv1alpha1.AddOnRegistrationRegistered {
		st.IssuingHub = c.o.HubName
	}
	if !notAfter.IsZero() {
		t := metav1.NewTime(notAfter.Truncate(time.Second))
		st.NotAfter = &t
	}
	c.states[cfg.Key()] = st
}

// report calls OnStatus when the set of states changed since the last call.
func (c *AddOnRegistrationController) report() {
	if c.o.OnStatus == nil {
		return
	}
	list := make([]failoverv1alpha1.AddOnRegistrationStatus, 0, len(c.states))
	for _, k := range slices.Sorted(maps.Keys(c.states)) {
		list = append(list, c.states[k])
	}
	if equality.Semantic.DeepEqual(list, c.lastState) {
		return
	}
	c.lastState = list
	out := make([]failoverv1alpha1.AddOnRegistrationStatus, len(list))
	for i := range list {
		list[i].DeepCopyInto(&out[i])
	}
	c.o.OnStatus(out)
}

// warnOnce emits a Warning unless the previous one for slot had the same message.
func (c *AddOnRegistrationController) warnOnce(syncCtx factory.SyncContext, slot, reason, msg string) {
	if c.lastWarns[slot] == msg {
		return
	}
	c.lastWarns[slot] = msg
	syncCtx.Recorder().Warning(reason, msg)
}
