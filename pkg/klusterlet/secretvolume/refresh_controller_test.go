package secretvolume

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/internal/synctesting"
)

const (
	testNamespace = "agent-ns"
	testSecret    = "hub-kubeconfig-secret"
)

var (
	t0          = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	podResource = schema.GroupResource{Resource: "pods"}
)

func newSecret(data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testSecret}, Data: data}
}

func secretVolume(secretName string) corev1.Volume {
	return corev1.Volume{Name: "v-" + secretName, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secretName}}}
}

func projectedVolume(secretName string) corev1.Volume {
	return corev1.Volume{Name: "p-" + secretName, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "ca"}}},
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: secretName}}},
		},
	}}}
}

func configMapVolume(name string) corev1.Volume {
	return corev1.Volume{Name: "cm-" + name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}
}

// newPod returns pod name in testNamespace with UID "uid-<name>", the given volumes and annotations.
func newPod(name string, annotations map[string]string, volumes ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name, UID: types.UID("uid-" + name), Annotations: annotations},
		Spec:       corev1.PodSpec{Volumes: volumes},
	}
}

func deleting(p *corev1.Pod) *corev1.Pod {
	now := metav1.NewTime(t0)
	p.DeletionTimestamp = &now
	p.Finalizers = []string{"example.com/keep"}
	return p
}

func TestNeedsRefresh(t *testing.T) {
	const hash = "0123456789abcdef0123456789abcdef"
	cases := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"secret volume", newPod("p", nil, configMapVolume("x"), secretVolume(testSecret)), true},
		{"projected volume with the secret", newPod("p", nil, projectedVolume(testSecret)), true},
		{"secret volume of another secret", newPod("p", nil, secretVolume("other"), projectedVolume("other")), false},
		{"configMap volume of the same name only", newPod("p", nil, configMapVolume(testSecret)), false},
		{"no volumes", newPod("p", nil), false},
		{"being deleted", deleting(newPod("p", nil, secretVolume(testSecret))), false},
		{"annotation already holds the hash", newPod("p", map[string]string{ContentHashAnnotation: hash}, secretVolume(testSecret)), false},
		{"annotation holds an old hash", newPod("p", map[string]string{ContentHashAnnotation: "ffffffffffffffffffffffffffffffff"}, projectedVolume(testSecret)), true},
		{"other annotations only", newPod("p", map[string]string{"a": hash}, secretVolume(testSecret)), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := NeedsRefresh(tc.pod, testSecret, hash); got != tc.want {
				t.Errorf("NeedsRefresh = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestContentHash(t *testing.T) {
	// Two maps with the same content built in opposite insertion orders (with enough keys that Go's map
	// iteration order would differ between them).
	forward, backward := map[string][]byte{}, map[string][]byte{}
	keys := []string{"kubeconfig", "tls.crt", "tls.key", "ca.crt", "cluster-name", "agent-name", "a", "b", "c", "d"}
	for _, k := range keys {
		forward[k] = []byte("value of " + k)
	}
	for _, k := range slices.Backward(keys) {
		backward[k] = []byte("value of " + k)
	}
	base := map[string][]byte{"kubeconfig": []byte("k"), "tls.key": []byte("key")}

	cases := []struct {
		name  string
		a, b  map[string][]byte
		equal bool
	}{
		{"same data, different insertion order", forward, backward, true},
		{"same data, fresh copies", base, map[string][]byte{"tls.key": []byte("key"), "kubeconfig": []byte("k")}, true},
		{"changed value", base, map[string][]byte{"kubeconfig": []byte("k"), "tls.key": []byte("key2")}, false},
		{"added key", base, map[string][]byte{"kubeconfig": []byte("k"), "tls.key": []byte("key"), "x": nil}, false},
		{"renamed key", map[string][]byte{"a": []byte("v")}, map[string][]byte{"b": []byte("v")}, false},
		{"byte moved from key to value", map[string][]byte{"ab": []byte("c")}, map[string][]byte{"a": []byte("bc")}, false},
		{"byte moved between entries", map[string][]byte{"a": []byte("b"), "c": []byte("d")}, map[string][]byte{"a": []byte("bc"), "": []byte("d")}, false},
		{"separator-like bytes in a value", map[string][]byte{"a": []byte("1:b=1:c")}, map[string][]byte{"a": []byte("1:b"), "b": []byte("c")}, false},
		{"empty value vs no key", map[string][]byte{"a": {}}, map[string][]byte{}, false},
		{"nil and empty map", nil, map[string][]byte{}, true},
		{"nil and empty value", map[string][]byte{"a": nil}, map[string][]byte{"a": {}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ha, hb := ContentHash(tc.a), ContentHash(tc.b)
			if (ha == hb) != tc.equal {
				t.Errorf("ContentHash(%q) = %s, ContentHash(%q) = %s; want equal: %t", tc.a, ha, tc.b, hb, tc.equal)
			}
		})
	}

	hexRE := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for _, data := range []map[string][]byte{nil, {}, base, forward} {
		if h := ContentHash(data); !hexRE.MatchString(h) {
			t.Errorf("ContentHash(%q) = %q, want 32 lower-case hex characters", data, h)
		}
	}
	// Stable across calls, and the same for nil and an empty map (the SHA-256 of nothing, first 16 bytes).
	const emptyHash = "e3b0c44298fc1c149afbf4c8996fb924"
	if got := ContentHash(nil); got != emptyHash || ContentHash(map[string][]byte{}) != emptyHash || ContentHash(nil) != got {
		t.Errorf("ContentHash(nil) = %s, want stable %s", got, emptyHash)
	}
	if ContentHash(base) != ContentHash(base) {
		t.Error("ContentHash is not stable across calls")
	}
}

type harness struct {
	clock    *clocktesting.FakeClock
	c        *RefreshController
	client   *kubefake.Clientset
	secrets  cache.Indexer
	recorder events.InMemoryRecorder
	syncCtx  *synctesting.SyncContext
}

// newHarness returns a controller for testNamespace/testSecret whose lister holds secret (none when nil) and
// whose fake clientset holds pods.
func newHarness(t *testing.T, secret *corev1.Secret, pods ...runtime.Object) *harness {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if secret != nil {
		if err := indexer.Add(secret); err != nil {
			t.Fatal(err)
		}
	}
	client := kubefake.NewClientset(pods...)
	recorder := events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(t0))
	clock := clocktesting.NewFakeClock(t0)
	return &harness{
		clock: clock,
		c: &RefreshController{namespace: testNamespace, name: testSecret, secrets: corev1listers.NewSecretLister(indexer), pods: client.CoreV1(),
			clock: clock},
		client:   client,
		secrets:  indexer,
		recorder: recorder,
		syncCtx:  synctesting.New(testNamespace+"/"+testSecret, recorder),
	}
}

func (h *harness) sync(t *testing.T) error {
	t.Helper()
	h.client.ClearActions()
	return h.c.sync(context.Background(), h.syncCtx)
}

// setSecret replaces the Secret in the lister.
func (h *harness) setSecret(t *testing.T, data map[string][]byte) {
	t.Helper()
	if err := h.secrets.Update(newSecret(data)); err != nil {
		t.Fatal(err)
	}
}

type patchBody struct {
	Metadata struct {
		UID         string            `json:"uid"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

// patches returns, per patched pod name, the decoded merge patch sent since the last sync started; it fails the
// test on a patch that is not a merge patch of a pod in testNamespace.
func (h *harness) patches(t *testing.T) map[string]patchBody {
	t.Helper()
	got := map[string]patchBody{}
	for _, a := range h.client.Actions() {
		if a.GetVerb() != "patch" {
			continue
		}
		p, ok := a.(clienttesting.PatchAction)
		if !ok {
			t.Fatalf("patch action %T", a)
		}
		if p.GetResource().Resource != "pods" || p.GetNamespace() != testNamespace {
			t.Errorf("patched %s in %q, want pods in %s", p.GetResource(), p.GetNamespace(), testNamespace)
		}
		if p.GetPatchType() != types.MergePatchType {
			t.Errorf("patch of %s has type %s, want %s", p.GetName(), p.GetPatchType(), types.MergePatchType)
		}
		var body patchBody
		if err := json.Unmarshal(p.GetPatch(), &body); err != nil {
			t.Fatalf("patch of %s: %v: %s", p.GetName(), err, p.GetPatch())
		}
		if _, dup := got[p.GetName()]; dup {
			t.Errorf("pod %s patched twice in one sync", p.GetName())
		}
		got[p.GetName()] = body
	}
	return got
}

// writes returns the verbs other than get, list and watch sent since the last sync started.
func (h *harness) writes() []string {
	var verbs []string
	for _, a := range h.client.Actions() {
		if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
			verbs = append(verbs, v+" "+a.GetResource().Resource)
		}
	}
	return verbs
}

func (h *harness) podAnnotation(t *testing.T, name string) string {
	t.Helper()
	p, err := h.client.CoreV1().Pods(testNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Annotations[ContentHashAnnotation]
}

type event struct{ Type, Reason string }

func (h *harness) events() []event {
	var got []event
	for _, e := range h.recorder.Events() {
		got = append(got, event{e.Type, e.Reason})
	}
	return got
}

func forbiddenReactor(verb string, names ...string) clienttesting.ReactionFunc {
	return func(a clienttesting.Action) (bool, runtime.Object, error) {
		if n, ok := a.(interface{ GetName() string }); ok && len(names) > 0 && !slices.Contains(names, n.GetName()) {
			return false, nil, nil
		}
		return true, nil, apierrors.NewForbidden(podResource, "", errors.New(`User "agent" cannot `+verb+` resource "pods"`))
	}
}

var testData = map[string][]byte{"kubeconfig": []byte("kubeconfig of hub2"), "tls.crt": []byte("crt"), "tls.key": []byte("key")}

// fixturePods: a and b mount the Secret (b through a projected volume) and need the annotation; the others do
// not mount it, already carry the current hash, or are being deleted.
func fixturePods(hash string) []runtime.Object {
	return []runtime.Object{
		newPod("a-work-agent", map[string]string{"keep": "me"}, configMapVolume("x"), secretVolume(testSecret)),
		newPod("b-addon", map[string]string{ContentHashAnnotation: "0000000000000000000000000000dead"}, projectedVolume(testSecret)),
		newPod("c-unrelated", nil, secretVolume("other"), configMapVolume(testSecret)),
		newPod("d-current", map[string]string{ContentHashAnnotation: hash}, secretVolume(testSecret)),
		deleting(newPod("e-deleting", nil, secretVolume(testSecret))),
	}
}

func TestSync(t *testing.T) {
	hash := ContentHash(testData)

	t.Run("secret missing", func(t *testing.T) {
		h := newHarness(t, nil, fixturePods(hash)...)
		if err := h.sync(t); err != nil {
			t.Fatal(err)
		}
		if len(h.client.Actions()) != 0 || len(h.recorder.Events()) != 0 {
			t.Errorf("without the Secret: actions %v, events %v", h.client.Actions(), h.events())
		}
	})

	t.Run("secret of another name only", func(t *testing.T) {
		h := newHarness(t, nil, fixturePods(hash)...)
		other := newSecret(testData)
		other.Name = "other"
		if err := h.secrets.Add(other); err != nil {
			t.Fatal(err)
		}
		if err := h.sync(t); err != nil {
			t.Fatal(err)
		}
		if len(h.client.Actions()) != 0 || len(h.recorder.Events()) != 0 {
			t.Errorf("with another Secret only: actions %v, events %v", h.client.Actions(), h.events())
		}
	})

	t.Run("patches the pods that mount it, then nothing", func(t *testing.T) {
		h := newHarness(t, newSecret(testData), fixturePods(hash)...)
		if err := h.sync(t); err != nil {
			t.Fatal(err)
		}
		patches := h.patches(t)
		if diff := cmp.Diff([]string{"a-work-agent", "b-addon"}, slices.Sorted(maps.Keys(patches))); diff != "" {
			t.Fatalf("patched pods (-want +got):\n%s", diff)
		}
		for name, body := range patches {
			if body.Metadata.UID != "uid-"+name {
				t.Errorf("patch of %s carries uid %q, want %q", name, body.Metadata.UID, "uid-"+name)
			}
			if diff := cmp.Diff(map[string]string{ContentHashAnnotation: hash}, body.Metadata.Annotations); diff != "" {
				t.Errorf("patch of %s annotations (-want +got):\n%s", name, diff)
			}
			if got := h.podAnnotation(t, name); got != hash {
				t.Errorf("pod %s annotation %q after sync, want %q", name, got, hash)
			}
		}
		if p, err := h.client.CoreV1().Pods(testNamespace).Get(context.Background(), "a-work-agent", metav1.GetOptions{}); err != nil || p.Annotations["keep"] != "me" {
			t.Errorf("other annotations of a-work-agent: %v, err %v", p.Annotations, err)
		}
		if got := h.podAnnotation(t, "c-unrelated"); got != "" {
			t.Errorf("c-unrelated annotated: %q", got)
		}
		if diff := cmp.Diff([]event{{corev1.EventTypeNormal, ReasonSecretVolumesRefreshed}}, h.events()); diff != "" {
			t.Fatalf("events (-want +got):\n%s", diff)
		}
		msg := h.recorder.Events()[0].Message
		if diff := cmp.Diff([]string{"a-work-agent", "b-addon"}, eventPods(t, msg)); diff != "" {
			t.Errorf("pods named by the event (-want +got):\n%s", diff)
		}
		for _, want := range []string{hash, testNamespace + "/" + testSecret} {
			if !strings.Contains(msg, want) {
				t.Errorf("event message %q does not mention %q", msg, want)
			}
		}
		for _, notWant := range []string{"c-unrelated", "d-current", "e-deleting"} {
			if strings.Contains(msg, notWant) {
				t.Errorf("event message %q mentions %q", msg, notWant)
			}
		}

		// Second sync over the pods as the fake client now holds them: nothing left to do.
		if err := h.sync(t); err != nil {
			t.Fatal(err)
		}
		if w := h.writes(); len(w) != 0 {
			t.Errorf("second sync wrote %v", w)
		}
		if n := len(h.recorder.Events()); n != 1 {
			t.Errorf("second sync emitted events: %v", h.events())
		}

		// New content: both pods are patched again, with the new hash.
		newData := map[string][]byte{"kubeconfig": []byte("kubeconfig of hub3"), "tls.crt": []byte("crt"), "tls.key": []byte("key")}
		h.setSecret(t, newData)
		if err := h.sync(t); err != nil {
			t.Fatal(err)
		}
		// d-current now carries an old hash too.
		if diff := cmp.Diff([]string{"a-work-agent", "b-addon", "d-current"}, slices.Sorted(maps.Keys(h.patches(t)))); diff != "" {
			t.Errorf("patched pods after the Secret changed (-want +got):\n%s", diff)
		}
		if got := h.podAnnotation(t, "a-work-agent"); got != ContentHash(newData) {
			t.Errorf("a-work-agent annotation %q, want %q", got, ContentHash(newData))
		}
		if n := len(h.recorder.Events()); n != 2 {
			t.Errorf("events after the Secret changed: %v", h.events())
		}
	})

	t.Run("list forbidden: one warning per content", func(t *testing.T) {
		h := newHarness(t, newSecret(testData), fixturePods(hash)...)
		h.client.PrependReactor("list", "pods", forbiddenReactor("list"))
		for i := range 2 {
			if err := h.sync(t); err != nil {
				t.Fatalf("sync %d: %v", i, err)
			}
			if w := h.writes(); len(w) != 0 {
				t.Errorf("sync %d wrote %v", i, w)
			}
		}
		if diff := cmp.Diff([]event{{corev1.EventTypeWarning, ReasonSecretVolumeRefreshForbidden}}, h.events()); diff != "" {
			t.Fatalf("events after two syncs of one content (-want +got):\n%s", diff)
		}
		if msg := h.recorder.Events()[0].Message; !strings.Contains(msg, testNamespace) || !strings.Contains(msg, "forbidden") {
			t.Errorf("warning %q does not name the namespace and the error", msg)
		}

		h.setSecret(t, map[string][]byte{"kubeconfig": []byte("rotated")})
		if err := h.sync(t); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]event{{corev1.EventTypeWarning, ReasonSecretVolumeRefreshForbidden}, {corev1.EventTypeWarning, ReasonSecretVolumeRefreshForbidden}}, h.events()); diff != "" {
			t.Errorf("events after the Secret changed (-want +got):\n%s", diff)
		}
	})

	t.Run("patch forbidden", func(t *testing.T) {
		h := newHarness(t, newSecret(testData), fixturePods(hash)...)
		h.client.PrependReactor("patch", "pods", forbiddenReactor("patch"))
		for i := range 2 {
			if err := h.sync(t); err != nil {
				t.Fatalf("sync %d: %v", i, err)
			}
		}
		if diff := cmp.Diff([]event{{corev1.EventTypeWarning, ReasonSecretVolumeRefreshForbidden}}, h.events()); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if got := h.podAnnotation(t, "a-work-agent"); got != "" {
			t.Errorf("a-work-agent annotated despite Forbidden: %q", got)
		}
	})

	t.Run("patch NotFound for one pod", func(t *testing.T) {
		h := newHarness(t, newSecret(testData), fixturePods(hash)...)
		// a-work-agent is deleted between the list and the patch.
		h.client.PrependReactor("patch", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
			if a.(clienttesting.PatchAction).GetName() == "a-work-agent" {
				return true, nil, apierrors.NewNotFound(podResource, "a-work-agent")
			}
			return false, nil, nil
		})
		if err := h.sync(t); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"a-work-agent", "b-addon"}, slices.Sorted(maps.Keys(h.patches(t)))); diff != "" {
			t.Errorf("patch attempts (-want +got):\n%s", diff)
		}
		if got := h.podAnnotation(t, "b-addon"); got != hash {
			t.Errorf("b-addon annotation %q, want %q", got, hash)
		}
		if diff := cmp.Diff([]event{{corev1.EventTypeNormal, ReasonSecretVolumesRefreshed}}, h.events()); diff != "" {
			t.Fatalf("events (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"b-addon"}, eventPods(t, h.recorder.Events()[0].Message)); diff != "" {
			t.Errorf("pods named by the event (-want +got):\n%s", diff)
		}
	})

	t.Run("patch Invalid for a re-created pod", func(t *testing.T) {
		h := newHarness(t, newSecret(testData), fixturePods(hash)...)
		// a-work-agent was re-created under its name: the apiserver refuses the patch's old UID (immutable).
		h.client.PrependReactor("patch", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
			if a.(clienttesting.PatchAction).GetName() == "a-work-agent" {
				return true, nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "a-work-agent",
					field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), "old", "field is immutable")})
			}
			return false, nil, nil
		})
		if err := h.sync(t); err != nil {
			t.Fatalf("sync: %v, want nil: a replaced pod is skipped", err)
		}
		if got := h.podAnnotation(t, "b-addon"); got != hash {
			t.Errorf("b-addon annotation %q, want %q: the other pods are still annotated", got, hash)
		}
		if diff := cmp.Diff([]string{"b-addon"}, eventPods(t, h.recorder.Events()[0].Message)); diff != "" {
			t.Errorf("pods named by the event (-want +got):\n%s", diff)
		}
	})

	t.Run("patch fails for one pod, the others are annotated", func(t *testing.T) {
		h := newHarness(t, newSecret(testData), fixturePods(hash)...)
		h.client.PrependReactor("patch", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
			if a.(clienttesting.PatchAction).GetName() == "a-work-agent" {
				return true, nil, apierrors.NewInternalError(errors.New("boom"))
			}
			return false, nil, nil
		})
		if err := h.sync(t); err == nil || !strings.Contains(err.Error(), "boom") {
			t.Errorf("sync error %v, want the patch error (library-go retries)", err)
		}
		if got := h.podAnnotation(t, "b-addon"); got != hash {
			t.Errorf("b-addon annotation %q, want %q", got, hash)
		}
		if diff := cmp.Diff([]event{{corev1.EventTypeNormal, ReasonSecretVolumesRefreshed}}, h.events()); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("secret lister fails", func(t *testing.T) {
		h := newHarness(t, nil, fixturePods(hash)...)
		h.c.secrets = failingSecretLister{err: errors.New("cache broken")}
		err := h.sync(t)
		if err == nil || !strings.Contains(err.Error(), "cache broken") || !strings.Contains(err.Error(), testNamespace+"/"+testSecret) {
			t.Errorf("sync error %v, want one naming the Secret and the cause", err)
		}
		if len(h.client.Actions()) != 0 || len(h.recorder.Events()) != 0 {
			t.Errorf("failed Secret get: actions %v, events %v", h.client.Actions(), h.events())
		}
	})

	t.Run("list fails otherwise", func(t *testing.T) {
		h := newHarness(t, newSecret(testData), fixturePods(hash)...)
		h.client.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewServiceUnavailable("etcd is down")
		})
		err := h.sync(t)
		if err == nil || !strings.Contains(err.Error(), testNamespace) || !strings.Contains(err.Error(), "etcd is down") {
			t.Errorf("sync error %v, want one naming %s and the cause", err, testNamespace)
		}
		if w := h.writes(); len(w) != 0 || len(h.recorder.Events()) != 0 {
			t.Errorf("failed list: writes %v, events %v", w, h.events())
		}
	})

	t.Run("patch fails otherwise", func(t *testing.T) {
		h := newHarness(t, newSecret(testData), fixturePods(hash)...)
		h.client.PrependReactor("patch", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewInternalError(errors.New("boom"))
		})
		if err := h.sync(t); err == nil || !strings.Contains(err.Error(), "boom") {
			t.Errorf("sync error %v, want the patch error", err)
		}
		if len(h.recorder.Events()) != 0 {
			t.Errorf("events %v", h.events())
		}
	})
}

// TestNewRefreshController: the controller built by the constructor reads the Secret through the given informer
// and patches pods through the given client.
func TestNewRefreshController(t *testing.T) {
	hash := ContentHash(testData)
	client := kubefake.NewClientset(fixturePods(hash)...)
	secrets := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(testNamespace)).Core().V1().Secrets()
	if err := secrets.Informer().GetStore().Add(newSecret(testData)); err != nil {
		t.Fatal(err)
	}
	recorder := events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(t0))
	c := NewRefreshController(testNamespace, testSecret, secrets, client.CoreV1(), 0, recorder)
	if err := c.Sync(context.Background(), synctesting.New("key", recorder)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a-work-agent", "b-addon"} {
		p, err := client.CoreV1().Pods(testNamespace).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || p.Annotations[ContentHashAnnotation] != hash {
			t.Errorf("pod %s annotations %v, err %v; want %s=%s", name, p.Annotations, err, ContentHashAnnotation, hash)
		}
	}
}

// eventPods returns, sorted, the pod names listed in a ReasonSecretVolumesRefreshed message ("annotated pod(s)
// [a b]"); the order of the list follows the API's list order, which the fake clientset does not fix.
func eventPods(t *testing.T, msg string) []string {
	t.Helper()
	m := regexp.MustCompile(`pod\(s\) \[([^\]]*)\]`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("event message %q lists no pods", msg)
	}
	return slices.Sorted(slices.Values(strings.Fields(m[1])))
}

// failingSecretLister answers every Get and List with err.
type failingSecretLister struct{ err error }

func (l failingSecretLister) List(labels.Selector) ([]*corev1.Secret, error) { return nil, l.err }
func (l failingSecretLister) Secrets(string) corev1listers.SecretNamespaceLister {
	return l
}
func (l failingSecretLister) Get(string) (*corev1.Secret, error) { return nil, l.err }

// inBackOff sets pod's container name to waiting in the kubelet's restart back-off after restarts restarts.
func inBackOff(pod *corev1.Pod, name string, restarts int32) *corev1.Pod {
	pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: name, RestartCount: restarts,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: crashLoopBackOff,
			Message: "back-off 20s restarting failed container=" + name}}})
	return pod
}

// TestSyncReportsBackOff: a sync that annotates pods opens a check window of syncs every backOffCheckInterval; in
// it, a container of an annotated pod that waits in CrashLoopBackOff is reported once per restart, with the
// kubelet's message; containers of pods not annotated, running containers, other waiting reasons and anything
// outside a window are not.
func TestSyncReportsBackOff(t *testing.T) {
	hash := ContentHash(testData)
	running := newPod("b-running", nil, secretVolume(testSecret))
	running.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "addon", RestartCount: 4,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	pulling := newPod("c-pulling", nil, projectedVolume(testSecret))
	pulling.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "addon",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
	h := newHarness(t, newSecret(testData),
		inBackOff(newPod("a-work-agent", nil, secretVolume(testSecret)), "work", 2),
		running, pulling,
		inBackOff(newPod("d-unrelated", nil, secretVolume("other")), "other", 7),
		// Mounts the Secret but already had the content: not annotated, not the switch's doing.
		inBackOff(newPod("e-current", map[string]string{ContentHashAnnotation: hash}, secretVolume(testSecret)), "addon", 5))

	backOffEvents := func() []string {
		var got []string
		for _, e := range h.recorder.Events() {
			if e.Reason == ReasonHubKubeconfigConsumerBackOff {
				got = append(got, e.Type+": "+e.Message)
			}
		}
		return got
	}
	if err := h.sync(t); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{backOffCheckInterval}, h.syncCtx.Delays()); diff != "" {
		t.Errorf("requeues after annotating a pod (-want +got):\n%s", diff)
	}
	got := backOffEvents()
	if len(got) != 1 || !strings.HasPrefix(got[0], "Warning: container work of pod a-work-agent") ||
		!strings.Contains(got[0], "after 2 restarts") || !strings.Contains(got[0], "back-off 20s restarting failed container=work") {
		t.Fatalf("back-off events %q, want one Warning about container work of pod a-work-agent after 2 restarts with the kubelet's message", got)
	}

	// The same restart is not reported twice; the checks go on every interval until the window ends.
	h.clock.Step(backOffCheckWindow - time.Second)
	if err := h.sync(t); err != nil {
		t.Fatal(err)
	}
	if n := len(backOffEvents()); n != 1 {
		t.Errorf("%d back-off events after a second sync of the same state, want 1", n)
	}
	if n := len(h.syncCtx.Delays()); n != 2 {
		t.Errorf("%d requeues within the check window, want 2", n)
	}
	h.clock.Step(time.Second)
	if err := h.sync(t); err != nil {
		t.Fatal(err)
	}
	if n := len(h.syncCtx.Delays()); n != 2 {
		t.Errorf("%d requeues in all, want 2: none once the check window is over", n)
	}

	// The next restart that ends in back-off is not reported outside a check window (a consumer crash-looping
	// for its own reasons is not the switch's doing), and is reported in the window of the next annotation.
	p, err := h.client.CoreV1().Pods(testNamespace).Get(context.Background(), "a-work-agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.ContainerStatuses[0].RestartCount = 3
	if _, err := h.client.CoreV1().Pods(testNamespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.sync(t); err != nil {
		t.Fatal(err)
	}
	if got := backOffEvents(); len(got) != 1 {
		t.Errorf("back-off events %q outside a check window, want only the first", got)
	}
	h.setSecret(t, map[string][]byte{"kubeconfig": []byte("kubeconfig of hub3")})
	if err := h.sync(t); err != nil {
		t.Fatal(err)
	}
	// Now every pod that mounts the Secret was annotated, e-current too.
	got = backOffEvents()
	if len(got) != 3 || !slices.ContainsFunc(got[1:], func(m string) bool {
		return strings.Contains(m, "of pod a-work-agent") && strings.Contains(m, "after 3 restarts")
	}) || !slices.ContainsFunc(got[1:], func(m string) bool { return strings.Contains(m, "container addon of pod e-current") }) {
		t.Errorf("back-off events %q, want two more: a-work-agent after 3 restarts and e-current", got)
	}
}
