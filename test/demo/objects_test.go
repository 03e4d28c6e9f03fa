//go:build demo

package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/failover"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// The hub resources the demo writes, as the replicator knows them.
var (
	mcKind      = mustKind(failoverv1alpha1.KindManagedCluster)
	setKind     = mustKind(failoverv1alpha1.KindManagedClusterSet)
	bindingKind = mustKind(failoverv1alpha1.KindManagedClusterSetBinding)
	workKind    = mustKind(failoverv1alpha1.KindManifestWork)

	appliedWorkGVR = schema.GroupVersionResource{Group: "work.open-cluster-management.io", Version: "v1", Resource: "appliedmanifestworks"}
)

func mustKind(name failoverv1alpha1.ReplicatedKind) mirror.Kind {
	k, ok := mirror.KindByName(name)
	if !ok {
		panic(fmt.Sprintf("no mirror.Kind %s", name))
	}
	return k
}

func resource(h *framework.Hub, k mirror.Kind, namespace string) dynamic.ResourceInterface {
	client := dynamic.NewForConfigOrDie(h.AdminConfig).Resource(k.GVR)
	if k.Namespaced {
		return client.Namespace(namespace)
	}
	return client
}

// measure writes with write on the source hub and times it until cond holds for the object on target, watched
// from before the write: one replication-lag sample, printed and added to lag.
func measure(t *demoT, ctx context.Context, tl *timeline, lag *lags, target *framework.Hub, k mirror.Kind, namespace, name, what string,
	cond func(*unstructured.Unstructured) bool, write func()) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, replicationTimeout)
	defer cancel()
	client := resource(target, k, namespace)
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = selector
			return client.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			return client.Watch(ctx, o)
		},
	}
	synced := make(chan struct{})
	type result struct {
		at  time.Time
		err error
	}
	seen := make(chan result, 1)
	go func() {
		_, err := watchtools.UntilWithSync(wctx, lw, &unstructured.Unstructured{}, func(store cache.Store) (bool, error) {
			close(synced)
			return false, nil
		}, func(ev watch.Event) (bool, error) {
			o, ok := ev.Object.(*unstructured.Unstructured)
			return ok && ev.Type != watch.Deleted && cond(o), nil
		})
		seen <- result{time.Now(), err}
	}()
	select {
	case <-synced:
	case r := <-seen:
		t.Fatalf("watching %s %s/%s on %s: %v", k.Name, namespace, name, target.Name, r.err)
	}
	written := time.Now()
	write()
	r := <-seen
	if r.err != nil {
		t.Fatalf("%s: not on %s within %s: %v", what, target.Name, replicationTimeout, r.err)
	}
	d := r.at.Sub(written)
	lag.add(d)
	tl.step("%s: written on hub-a, on %s %s later", what, target.Name, seconds(d))
}

// create creates obj on h, retrying while its namespace or CRD is not there yet.
func create(t *demoT, ctx context.Context, h *framework.Hub, k mirror.Kind, obj *unstructured.Unstructured) {
	t.Helper()
	client := resource(h, k, obj.GetNamespace())
	framework.Eventually(t, replicationTimeout, 100*time.Millisecond, func() (bool, error) {
		_, err := client.Create(ctx, obj, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), err
	}, "%s %s/%s created on %s", k.Name, obj.GetNamespace(), obj.GetName(), h.Name)
}

func ensureNamespace(t *demoT, ctx context.Context, h *framework.Hub, name string) {
	t.Helper()
	_, err := h.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s on %s: %v", name, h.Name, err)
	}
}

func managedClusterSet(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
		"metadata": map[string]any{"name": name},
	}}
}

func managedClusterSetBinding(namespace, set string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
		"metadata": map[string]any{"name": set, "namespace": namespace},
		"spec":     map[string]any{"clusterSet": set},
	}}
}

// labelCluster merges labels into the demo ManagedCluster on h.
func labelCluster(t *demoT, ctx context.Context, h *framework.Hub, labels map[string]string) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Cluster.ClusterV1().ManagedClusters().Patch(ctx, clusterName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("label ManagedCluster %s on %s: %v", clusterName, h.Name, err)
	}
}

// manifestWork returns ManifestWork cluster/name holding ConfigMap default/demo-settings (data.greeting) and
// Deployment default/demo-web. The spoke has no controllers, so the Deployment stays an object without pods,
// which is all the demo needs: its UID says whether it was recreated.
func manifestWork(t *demoT, cluster, name, greeting string) *unstructured.Unstructured {
	t.Helper()
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "demo-settings", Namespace: "default"},
		Data:       map[string]string{"greeting": greeting},
	}
	labels := map[string]string{"app": "demo-web"}
	deploy := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "demo-web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
	var manifests []workv1.Manifest
	for _, obj := range []any{cm, deploy} {
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	mw := &workv1.ManifestWork{
		TypeMeta:   metav1.TypeMeta{APIVersion: workv1.GroupVersion.String(), Kind: "ManifestWork"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster},
		Spec:       workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: manifests}},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(mw)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// workGreeting returns the greeting of the ConfigMap in a ManifestWork, "" when there is none.
func workGreeting(t *demoT, obj *unstructured.Unstructured) string {
	var mw workv1.ManifestWork
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &mw); err != nil {
		t.Fatal(err)
	}
	for _, m := range mw.Spec.Workload.Manifests {
		var cm corev1.ConfigMap
		if json.Unmarshal(m.Raw, &cm) == nil && cm.Kind == "ConfigMap" {
			return cm.Data["greeting"]
		}
	}
	return ""
}

// updateWork replaces the spec of the ManifestWork on h with want's.
func updateWork(t *demoT, ctx context.Context, h *framework.Hub, want *unstructured.Unstructured) {
	t.Helper()
	client := resource(h, workKind, want.GetNamespace())
	framework.Eventually(t, replicationTimeout, 100*time.Millisecond, func() (bool, error) {
		cur, err := client.Get(ctx, want.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cur.Object["spec"] = want.Object["spec"]
		_, err = client.Update(ctx, cur, metav1.UpdateOptions{})
		return err == nil, err
	}, "ManifestWork %s/%s updated on %s", want.GetNamespace(), want.GetName(), h.Name)
}

// waitObject waits until the object exists on h and cond holds for it, and returns it.
func waitObject(t *demoT, ctx context.Context, h *framework.Hub, k mirror.Kind, namespace, name string, timeout time.Duration,
	what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	client := resource(h, k, namespace)
	var last *unstructured.Unstructured
	framework.Eventually(t, timeout, 100*time.Millisecond, func() (bool, error) {
		checkInterrupted(t, ctx)
		obj, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = obj
		if cond(obj) {
			return true, nil
		}
		return false, fmt.Errorf("labels %v annotations %v", obj.GetLabels(), obj.GetAnnotations())
	}, "%s", what)
	return last
}

// appliedWorks returns the names of the spoke's AppliedManifestWorks, sorted.
func appliedWorks(t *demoT, ctx context.Context, spoke *framework.Spoke) []string {
	t.Helper()
	list, err := dynamic.NewForConfigOrDie(spoke.AdminConfig).Resource(appliedWorkGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list AppliedManifestWorks on the spoke: %v", err)
	}
	var names []string
	for _, i := range list.Items {
		names = append(names, i.GetName())
	}
	sort.Strings(names)
	return names
}

// waitEvictionStarted waits until every AppliedManifestWork of names has status.evictionStartTime, and returns
// the latest of those times.
func waitEvictionStarted(t *demoT, ctx context.Context, spoke *framework.Spoke, names []string, timeout time.Duration) time.Time {
	t.Helper()
	client := dynamic.NewForConfigOrDie(spoke.AdminConfig).Resource(appliedWorkGVR)
	var latest time.Time
	framework.Eventually(t, timeout, 100*time.Millisecond, func() (bool, error) {
		checkInterrupted(t, ctx)
		for _, name := range names {
			obj, err := client.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			s, _, _ := unstructured.NestedString(obj.Object, "status", "evictionStartTime")
			if s == "" {
				return false, nil
			}
			at, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return false, err
			}
			if at.After(latest) {
				latest = at
			}
		}
		return true, nil
	}, "the work agent started evicting AppliedManifestWork %v", names)
	return latest
}

// waitAppliedWorksGone waits until none of the AppliedManifestWorks names exists on the spoke.
func waitAppliedWorksGone(t *demoT, ctx context.Context, spoke *framework.Spoke, names []string, timeout time.Duration) {
	t.Helper()
	client := dynamic.NewForConfigOrDie(spoke.AdminConfig).Resource(appliedWorkGVR)
	framework.Eventually(t, timeout, 100*time.Millisecond, func() (bool, error) {
		checkInterrupted(t, ctx)
		for _, name := range names {
			_, err := client.Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				return false, nil
			}
			if !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		return true, nil
	}, "the work agent evicted AppliedManifestWork %v", names)
}

// agentEventReasons are the agent's events the timeline shows during a failover.
var agentEventReasons = map[string]bool{
	failover.ReasonHubUnreachable:         true,
	failover.ReasonHubLost:                true,
	failover.ReasonFailoverStarted:        true,
	failover.ReasonFailoverSucceeded:      true,
	failover.ReasonFailoverFailed:         true,
	failover.ReasonNoViableHub:            true,
	failover.ReasonPlannedSwitchRequested: true,
	failover.ReasonFailbackStarted:        true,
}

// watchAgentEvents prints, as they happen, the agent's events in agentEventReasons (each reason and message
// once) until the returned stop is called.
func watchAgentEvents(ctx context.Context, t *demoT, tl *timeline, spoke *framework.Spoke) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	client := spoke.Kube.CoreV1().Events(util.AgentNamespace)
	list, err := client.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list the agent's events: %v", err)
	}
	w, err := client.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("watch the agent's events: %v", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer w.Stop()
		printed := map[string]bool{}
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				e, isEvent := ev.Object.(*corev1.Event)
				if !isEvent || !agentEventReasons[e.Reason] || printed[e.Reason+e.Message] {
					continue
				}
				printed[e.Reason+e.Message] = true
				msg := e.Message
				if len(msg) > 150 {
					msg = msg[:150] + "…"
				}
				tl.step("agent event %s: %s", e.Reason, strings.TrimSpace(msg))
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}
