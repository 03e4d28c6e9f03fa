// Package replicator_test runs `klusterlet-failover replicator` (in-process, Options.RunWithClients, the same
// code as the command) against real hubs — kube-apiserver, etcd, kube-controller-manager and OCM's hub
// registration controller v1.2.0 each — with, where a test needs it, the failover agent and OCM's work agent
// v1.2.0 on a real spoke.
//
// Run: KUBEBUILDER_ASSETS=$(hack/build-test-binaries.sh | tail -n1) go test ./test/integration/replicator/ -count=1 -v
package replicator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	workv1 "open-cluster-management.io/api/work/v1"

	failoverv1alpha1 "github.com/klusterlet-failover/klusterlet-failover/pkg/apis/failover/v1alpha1"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/client/clientset/versioned"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator"
	"github.com/klusterlet-failover/klusterlet-failover/pkg/replicator/mirror"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
	"github.com/klusterlet-failover/klusterlet-failover/test/integration/util"
)

// Timings of the suite.
const (
	// replicationTimeout bounds how long a change takes to reach the other hubs on a loaded machine.
	replicationTimeout = 60 * time.Second
	// replicatorNamespace holds the ReplicationConfig and the hubs' kubeconfig Secrets.
	replicatorNamespace = "open-cluster-management-replicator"
	configName          = replicator.DefaultConfigName
)

var (
	workGVR = mustKind(failoverv1alpha1.KindManifestWork).GVR
	mcGVR   = mustKind(failoverv1alpha1.KindManagedCluster).GVR
)

// mustKind returns the mirror.Kind named name: a built-in kind, or the test's custom kind widgetKind.
func mustKind(name failoverv1alpha1.ReplicatedKind) mirror.Kind {
	if name == widgetKind.Name() {
		return mirror.CustomKindOf(widgetKind)
	}
	k, ok := mirror.KindByName(name)
	if !ok {
		panic(fmt.Sprintf("no mirror.Kind %s", name))
	}
	return k
}

// namedHub is a hub of the test with the name the ReplicationConfig gives it.
type namedHub struct {
	name string
	hub  *framework.Hub
	// kubeconfig, when set, is the replicator's kubeconfig for the hub (default: util.ReplicatorKubeconfig's, the
	// ServiceAccount and ClusterRole of manifests/replicator/hub).
	kubeconfig []byte
}

// replicatorRun is the replicator running in-process with its ReplicationConfig on host.
type replicatorRun struct {
	t        *testing.T
	host     *framework.Hub
	opts     *replicator.Options
	recorder events.Recorder
	// clock is the replicator's clock (default: the real one).
	clock  clock.WithTicker
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// offsetClock is the real clock read as if the machine's clock were off by offset.
type offsetClock struct {
	clock.RealClock
	offset time.Duration
}

func (c offsetClock) Now() time.Time                  { return c.RealClock.Now().Add(c.offset) }
func (c offsetClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// now reads the replicator's clock: the times it writes, in-step reports' among them, are on it.
func (r *replicatorRun) now() time.Time {
	if r.clock == nil {
		return time.Now()
	}
	return r.clock.Now()
}

// setUpReplicator installs the ReplicationConfig CRD on host, the namespace, one kubeconfig Secret per hub (the
// replicator's least privilege there, unless namedHub.kubeconfig is set) and the ReplicationConfig listing hubs in order (util.InstallReplication); it does not start the replicator.
func setUpReplicator(t *testing.T, host *framework.Hub, spec failoverv1alpha1.ReplicationConfigSpec, hubs ...namedHub) *replicatorRun {
	t.Helper()
	named := make([]util.NamedHub, 0, len(hubs))
	for _, h := range hubs {
		named = append(named, util.NamedHub{Name: h.name, Hub: h.hub, Kubeconfig: h.kubeconfig})
	}
	util.InstallReplication(t, host, replicatorNamespace, configName, spec, named...)

	o := replicator.NewOptions()
	o.Namespace = replicatorNamespace
	o.HubProbeInterval = 2 * time.Second
	o.StatusInterval = 2 * time.Second
	o.IncarnationInterval = 2 * time.Second
	return &replicatorRun{t: t, host: host, opts: o, recorder: events.NewInMemoryRecorder("replicator", clock.RealClock{})}
}

func replClient(h *framework.Hub) versioned.Interface {
	return versioned.NewForConfigOrDie(h.AdminConfig)
}

// start runs the replicator until stop or the end of the test.
func (r *replicatorRun) start() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	ctx = klog.NewContext(ctx, klog.Background().WithValues("test", r.t.Name()))
	done := make(chan struct{})
	r.cancel, r.done = cancel, done
	kube := r.host.Kube
	repl := replClient(r.host)
	go func() {
		defer close(done)
		clk := r.clock
		if clk == nil {
			clk = clock.RealClock{}
		}
		if err := r.opts.RunWithClients(ctx, kube, repl, r.recorder, clk); err != nil {
			r.t.Errorf("replicator returned: %v", err)
		}
	}()
	r.t.Cleanup(r.stop)
}

// stop stops the replicator and waits for it to return.
func (r *replicatorRun) stop() {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.cancel = nil
	r.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		r.t.Errorf("replicator did not stop within 60 s")
	}
}

// events returns the messages of the replicator's events with reason.
func (r *replicatorRun) events(reason string) []string {
	rec, ok := r.recorder.(events.InMemoryRecorder)
	if !ok {
		return nil
	}
	var out []string
	for _, e := range rec.Events() {
		if e.Reason == reason {
			out = append(out, e.Message)
		}
	}
	return out
}

// status returns the ReplicationConfig's status.
func (r *replicatorRun) status() (failoverv1alpha1.ReplicationConfigStatus, error) {
	rc, err := replClient(r.host).FailoverV1alpha1().ReplicationConfigs(replicatorNamespace).Get(context.Background(), configName, metav1.GetOptions{})
	if err != nil {
		return failoverv1alpha1.ReplicationConfigStatus{}, err
	}
	return rc.Status, nil
}

// waitStatus waits until cond holds for the ReplicationConfig's status.
func (r *replicatorRun) waitStatus(timeout time.Duration, what string, cond func(failoverv1alpha1.ReplicationConfigStatus) bool) failoverv1alpha1.ReplicationConfigStatus {
	r.t.Helper()
	var last failoverv1alpha1.ReplicationConfigStatus
	framework.Eventually(r.t, timeout, util.PollInterval, func() (bool, error) {
		s, err := r.status()
		if err != nil {
			return false, err
		}
		last = s
		if cond(s) {
			return true, nil
		}
		data, _ := json.Marshal(s)
		return false, fmt.Errorf("status %s", data)
	}, "ReplicationConfig status: %s", what)
	return last
}

// hubStatus returns the status entry of hub name.
func hubStatus(s failoverv1alpha1.ReplicationConfigStatus, name string) failoverv1alpha1.ReplicationHubStatus {
	for _, h := range s.Hubs {
		if h.Name == name {
			return h
		}
	}
	return failoverv1alpha1.ReplicationHubStatus{}
}

// dyn returns a dynamic client for gvr on hub.
func dyn(h *framework.Hub) dynamic.Interface { return dynamic.NewForConfigOrDie(h.AdminConfig) }

// configMapWork returns ManifestWork name in namespace cluster holding one ConfigMap per entry of data
// (ConfigMap name → its "value" key), all in the spoke's default namespace.
func configMapWork(t *testing.T, cluster, name string, data map[string]string) *unstructured.Unstructured {
	t.Helper()
	var manifests []workv1.Manifest
	for cmName, value := range data {
		cm := &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: cmName, Namespace: "default"},
			Data:       map[string]string{"value": value},
		}
		raw, err := json.Marshal(cm)
		if err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	mw := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster},
		Spec:       workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: manifests}},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(mw)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(workv1.GroupVersion.String())
	u.SetKind("ManifestWork")
	return u
}

// createWork creates the ManifestWork on hub, retrying until its namespace exists.
func createWork(t *testing.T, h *framework.Hub, work *unstructured.Unstructured) {
	t.Helper()
	client := dyn(h).Resource(workGVR).Namespace(work.GetNamespace())
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		_, err := client.Create(context.Background(), work, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), err
	}, "ManifestWork %s/%s created on hub %s", work.GetNamespace(), work.GetName(), h.Name)
}

// getObj returns the object of gvr at namespace/name on hub, or nil when absent.
func getObj(h *framework.Hub, k mirror.Kind, namespace, name string) (*unstructured.Unstructured, error) {
	var client dynamic.ResourceInterface = dyn(h).Resource(k.GVR)
	if k.Namespaced {
		client = dyn(h).Resource(k.GVR).Namespace(namespace)
	}
	obj, err := client.Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// waitObj waits until cond holds for the object (nil when absent) on hub.
func waitObj(t *testing.T, h *framework.Hub, kind failoverv1alpha1.ReplicatedKind, namespace, name string, timeout time.Duration,
	what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	k := mustKind(kind)
	var last *unstructured.Unstructured
	framework.Eventually(t, timeout, util.PollInterval, func() (bool, error) {
		obj, err := getObj(h, k, namespace, name)
		if err != nil {
			return false, err
		}
		last = obj
		if cond(obj) {
			return true, nil
		}
		if obj == nil {
			return false, fmt.Errorf("absent")
		}
		return false, fmt.Errorf("labels %v annotations %v", obj.GetLabels(), obj.GetAnnotations())
	}, "%s %s/%s on hub %s: %s", kind, namespace, name, h.Name, what)
	return last
}

// copiedFrom returns a condition: the object exists and is a copy made from hub source.
func copiedFrom(source string) func(*unstructured.Unstructured) bool {
	return func(obj *unstructured.Unstructured) bool {
		return obj != nil && obj.GetLabels()[mirror.LabelReplicatedFrom] == source
	}
}

// absent is the condition "the object does not exist".
func absent(obj *unstructured.Unstructured) bool { return obj == nil }

// workConfigMapValues returns, for a ManifestWork, the "value" of each ConfigMap it holds.
func workConfigMapValues(t *testing.T, work *unstructured.Unstructured) map[string]string {
	t.Helper()
	var mw workv1.ManifestWork
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(work.Object, &mw); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range mw.Spec.Workload.Manifests {
		var cm corev1.ConfigMap
		if err := json.Unmarshal(m.Raw, &cm); err != nil {
			t.Fatal(err)
		}
		out[cm.Name] = cm.Data["value"]
	}
	return out
}

// sameValues is the condition "a ManifestWork whose ConfigMaps hold want".
func sameValues(t *testing.T, want map[string]string) func(*unstructured.Unstructured) bool {
	return func(obj *unstructured.Unstructured) bool {
		if obj == nil {
			return false
		}
		got := workConfigMapValues(t, obj)
		if len(got) != len(want) {
			return false
		}
		for k, v := range want {
			if got[k] != v {
				return false
			}
		}
		return true
	}
}

// updateWork replaces the ConfigMaps of ManifestWork namespace/name on hub with data.
func updateWork(t *testing.T, h *framework.Hub, namespace, name string, data map[string]string) {
	t.Helper()
	client := dyn(h).Resource(workGVR).Namespace(namespace)
	framework.Eventually(t, replicationTimeout, util.PollInterval, func() (bool, error) {
		cur, err := client.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		next := configMapWork(t, namespace, name, data)
		cur.Object["spec"] = next.Object["spec"]
		_, err = client.Update(context.Background(), cur, metav1.UpdateOptions{})
		return err == nil, err
	}, "ManifestWork %s/%s updated on hub %s", namespace, name, h.Name)
}

// deleteObj deletes the object on hub (absent is fine).
func deleteObj(t *testing.T, h *framework.Hub, kind failoverv1alpha1.ReplicatedKind, namespace, name string) {
	t.Helper()
	k := mustKind(kind)
	var client dynamic.ResourceInterface = dyn(h).Resource(k.GVR)
	if k.Namespaced {
		client = dyn(h).Resource(k.GVR).Namespace(namespace)
	}
	if err := client.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("deleting %s %s/%s on hub %s: %v", kind, namespace, name, h.Name, err)
	}
}

// applyUnstructured creates obj on hub (namespace created if missing).
func applyUnstructured(t *testing.T, h *framework.Hub, kind failoverv1alpha1.ReplicatedKind, obj map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	k := mustKind(kind)
	ctx := context.Background()
	if ns := u.GetNamespace(); ns != "" {
		if _, err := h.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	var client dynamic.ResourceInterface = dyn(h).Resource(k.GVR)
	if k.Namespaced {
		client = dyn(h).Resource(k.GVR).Namespace(u.GetNamespace())
	}
	framework.Eventually(t, 30*time.Second, util.PollInterval, func() (bool, error) {
		_, err := client.Create(ctx, u, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), err
	}, "%s %s/%s created on hub %s", kind, u.GetNamespace(), u.GetName(), h.Name)
}

// patchManagedCluster applies mutate to ManagedCluster name on hub.
func patchManagedCluster(t *testing.T, h *framework.Hub, name string, mutate func(*unstructured.Unstructured)) {
	t.Helper()
	client := dyn(h).Resource(mcGVR)
	framework.Eventually(t, 30*time.Second, util.PollInterval, func() (bool, error) {
		cur, err := client.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		mutate(cur)
		_, err = client.Update(context.Background(), cur, metav1.UpdateOptions{})
		return err == nil, err
	}, "ManagedCluster %s updated on hub %s", name, h.Name)
}

func describe(obj *unstructured.Unstructured) string {
	if obj == nil {
		return "<absent>"
	}
	return fmt.Sprintf("%s labels=%v annotations=%v", obj.GetName(), obj.GetLabels(), strings.Join(keys(obj.GetAnnotations()), ","))
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// startWorkAgent starts OCM's work agent of cluster on spoke once agent wrote the hub kubeconfig it reads (the
// work agent restarts when it changes), with evictionGrace as its AppliedManifestWork eviction grace period.
func startWorkAgent(t *testing.T, spoke *framework.Spoke, agent *util.Agent, cluster string, evictionGrace time.Duration) *framework.WorkAgent {
	t.Helper()
	kubeconfigFile := filepath.Join(agent.Options.HubKubeconfigDir, framework.HubKubeconfigFile)
	framework.Eventually(t, 30*time.Second, util.PollInterval, func() (bool, error) {
		_, err := os.Stat(kubeconfigFile)
		return err == nil, err
	}, "hub kubeconfig %s written by the agent", kubeconfigFile)
	return framework.StartWorkAgent(t, spoke, framework.WorkAgentOptions{
		ClusterName: cluster, HubKubeconfigDir: agent.Options.HubKubeconfigDir, EvictionGracePeriod: evictionGrace,
	})
}
