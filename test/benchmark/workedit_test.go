//go:build bench

package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

const (
	// editWorkPrefix starts the name of the ManifestWork of the failover scenario's figure (b) (then the cluster
	// name), in the cluster namespace of each hub. OCM's work agent names AppliedManifestWorks after the hub and the
	// work name only, so each repetition has its own work name: none adopts an earlier one's AppliedManifestWork.
	editWorkPrefix = "bench-edit-"
	// editKey is the key of the ConfigMap's data that the edit changes.
	editKey = "version"
	// editBefore and editAfter are editKey's value in the copies before hub A is lost and in hub B's copy after
	// the edit.
	editBefore = "before"
	editAfter  = "after"
	// editFirstApplyTimeout bounds the wait for the work agent to apply hub A's copy before the hub is stopped.
	editFirstApplyTimeout = 2 * time.Minute
)

// manifestWorksResource is ManifestWork's resource (open-cluster-management.io/api work/v1).
var manifestWorksResource = schema.GroupVersionResource{Group: workv1.GroupName, Version: "v1", Resource: "manifestworks"}

// editProbe measures figure (b) of the failover scenario for one agent: ManifestWork editWorkName holding
// ConfigMap default/<cluster> on hub A and hub B (the same content on both, as the replicator keeps a standby),
// applied on the spoke by OCM's work agent (v1.2.0, a process restarted 1 s after each exit) reading the agent's
// hub kubeconfig directory; at hub A's loss the copy on hub B is edited, and the probe reports when the spoke's
// ConfigMap shows the edit.
type editProbe struct {
	spoke   *framework.Spoke
	hubB    dynamic.Interface
	cluster string
	work    *framework.WorkAgent
}

// workName is the probe's ManifestWork name.
func (p *editProbe) workName() string { return editWorkPrefix + p.cluster }

// startEditProbe creates the ManifestWork on both hubs (and the cluster namespace on hub B, which the replicator
// would have copied), starts OCM's work agent on the agent's hub kubeconfig directory (StartWorkAgent fails the
// test when the agent does not start) and waits until it applied hub A's copy. It returns an error when the probe
// could not be set up: the repetition then measures figure (a) only.
func (b *bench) startEditProbe(t *testing.T, hubA, hubB *framework.Hub, a *agentProc) (*editProbe, error) {
	t.Helper()
	cluster := a.cfg.cluster
	if _, err := hubB.Kube.CoreV1().Namespaces().Create(b.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}},
		metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s on hub-b: %w", cluster, err)
	}
	p := &editProbe{spoke: a.cfg.spoke, hubB: dynamic.NewForConfigOrDie(hubB.AdminConfig), cluster: cluster}
	for _, hub := range []*framework.Hub{hubA, hubB} {
		u, err := configMapWork(cluster, p.workName(), editBefore)
		if err != nil {
			return nil, err
		}
		if _, err := dynamic.NewForConfigOrDie(hub.AdminConfig).Resource(manifestWorksResource).Namespace(cluster).
			Create(b.ctx, u, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("creating ManifestWork %s/%s on %s: %w", cluster, p.workName(), hub.Name, err)
		}
	}
	p.work = framework.StartWorkAgent(t, a.cfg.spoke, framework.WorkAgentOptions{
		ClusterName: cluster, HubKubeconfigDir: a.hubKubeconfigDir, AgentID: cluster,
	})
	if _, err := p.waitApplied(b.ctx, editBefore, editFirstApplyTimeout); err != nil {
		return nil, fmt.Errorf("before the failover: %w", err)
	}
	return p, nil
}

// editAndWait edits hub B's copy (its manifests only: editKey becomes editAfter), retrying until hub B takes the
// write, then polls the spoke every pollInterval until the ConfigMap shows the edit; it returns when it did, or
// an error after timeout or when ctx ends.
func (p *editProbe) editAndWait(ctx context.Context, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	client := p.hubB.Resource(manifestWorksResource).Namespace(p.cluster)
	want, err := configMapWork(p.cluster, p.workName(), editAfter)
	if err != nil {
		return time.Time{}, err
	}
	manifests, _, err := unstructured.NestedSlice(want.Object, "spec", "workload", "manifests")
	if err != nil {
		return time.Time{}, err
	}
	for {
		cur, err := client.Get(ctx, p.workName(), metav1.GetOptions{})
		if err == nil {
			if err = unstructured.SetNestedSlice(cur.Object, manifests, "spec", "workload", "manifests"); err == nil {
				if _, err = client.Update(ctx, cur, metav1.UpdateOptions{}); err == nil {
					break
				}
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return time.Time{}, fmt.Errorf("editing ManifestWork %s/%s on hub-b: %w", p.cluster, p.workName(), err)
		}
		time.Sleep(pollInterval)
	}
	return p.waitApplied(ctx, editAfter, time.Until(deadline))
}

// waitApplied polls the spoke every pollInterval until ConfigMap default/<cluster> has editKey want and returns
// the time it was first seen so, or an error after timeout.
func (p *editProbe) waitApplied(ctx context.Context, want string, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	got := "(no ConfigMap)"
	for {
		cm, err := p.spoke.Kube.CoreV1().ConfigMaps("default").Get(ctx, p.cluster, metav1.GetOptions{})
		if err == nil {
			got = cm.Data[editKey]
			if got == want {
				return time.Now(), nil
			}
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("ConfigMap default/%s on the spoke: %s is %q, not %q, after %s (work agent restarted %d times; log %s)",
				p.cluster, editKey, got, want, timeout, p.work.Restarts(), p.work.LogPath())
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// configMapWork returns ManifestWork name in namespace cluster holding ConfigMap default/<cluster> with editKey
// value.
func configMapWork(cluster, name, value string) (*unstructured.Unstructured, error) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: cluster, Namespace: "default"},
		Data:       map[string]string{editKey: value},
	}
	raw, err := json.Marshal(cm)
	if err != nil {
		return nil, err
	}
	mw := map[string]any{
		"apiVersion": workv1.GroupVersion.String(),
		"kind":       "ManifestWork",
		"metadata":   map[string]any{"name": name, "namespace": cluster},
		"spec":       map[string]any{"workload": map[string]any{"manifests": []any{json.RawMessage(raw)}}},
	}
	data, err := json.Marshal(mw)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("ManifestWork %s/%s: %w", cluster, name, err)
	}
	return u, nil
}
