package clientcert_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert"
	clientcerttesting "github.com/klusterlet-failover/klusterlet-failover/pkg/klusterlet/clientcert/testing"
)

// readDir returns the regular files of dir with their content and permission bits.
func readDir(t *testing.T, dir string) (map[string]string, map[string]os.FileMode) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	contents, modes := map[string]string{}, map[string]os.FileMode{}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		content, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		contents[e.Name()] = string(content)
		modes[e.Name()] = info.Mode().Perm()
	}
	return contents, modes
}

func TestMirrorToDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hub-kubeconfig")
	data := map[string][]byte{"kubeconfig": []byte("k"), "tls.crt": []byte("c"), "tls.key": []byte("secret key")}

	changed, err := clientcert.MirrorToDir(data, dir)
	if err != nil || !changed {
		t.Fatalf("first mirror: changed %t, err %v", changed, err)
	}
	contents, modes := readDir(t, dir)
	if diff := cmp.Diff(map[string]string{"kubeconfig": "k", "tls.crt": "c", "tls.key": "secret key"}, contents); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	for name, mode := range modes {
		if mode != 0o600 {
			t.Errorf("%s mode %o, want 600", name, mode)
		}
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, err %v; want 700", info.Mode().Perm(), err)
	}

	// Same content: nothing written.
	changed, err = clientcert.MirrorToDir(data, dir)
	if err != nil || changed {
		t.Errorf("unchanged mirror: changed %t, err %v", changed, err)
	}

	// Wrong mode on a file with the right content is repaired.
	if err := os.Chmod(filepath.Join(dir, "tls.key"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err = clientcert.MirrorToDir(data, dir)
	if _, modes := readDir(t, dir); err != nil || !changed || modes["tls.key"] != 0o600 {
		t.Errorf("mode repair: changed %t, err %v, mode %o", changed, err, modes["tls.key"])
	}

	// Changed content is replaced; no temporary files are left behind; other files stay.
	if err := os.WriteFile(filepath.Join(dir, "extra"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	changed, err = clientcert.MirrorToDir(map[string][]byte{"tls.crt": []byte("c2")}, dir)
	if err != nil || !changed {
		t.Fatalf("update: changed %t, err %v", changed, err)
	}
	contents, modes = readDir(t, dir)
	if diff := cmp.Diff(map[string]string{"kubeconfig": "k", "tls.crt": "c2", "tls.key": "secret key", "extra": "x"}, contents); diff != "" {
		t.Errorf("files after update (-want +got):\n%s", diff)
	}
	if modes["tls.crt"] != 0o600 {
		t.Errorf("tls.crt mode %o after update", modes["tls.crt"])
	}

	for _, bad := range []string{"../escape", "a/b", "..", ""} {
		if _, err := clientcert.MirrorToDir(map[string][]byte{bad: []byte("x")}, dir); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape")); !os.IsNotExist(err) {
		t.Errorf("a file escaped the directory: %v", err)
	}
}

func TestHubKubeconfigSecretMirrorControllerSync(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data := map[string][]byte{"kubeconfig": []byte("k"), "tls.key": []byte("key")}
	client := kubefake.NewClientset()
	informer := informers.NewSharedInformerFactory(client, 0).Core().V1().Secrets()
	recorder := events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(testNow))
	c := clientcert.NewHubKubeconfigSecretMirrorController("agent-ns", "hub-kubeconfig-secret", dir, informer, 0, recorder)
	syncCtx := factory.NewSyncContext("test", recorder)

	// No Secret: nothing happens.
	if err := c.Sync(ctx, syncCtx); err != nil {
		t.Fatal(err)
	}
	if contents, _ := readDir(t, dir); len(contents) != 0 || len(recorder.Events()) != 0 {
		t.Fatalf("without a Secret: files %v, events %d", contents, len(recorder.Events()))
	}

	if err := informer.Informer().GetStore().Add(clientcerttesting.NewSecret("agent-ns", "hub-kubeconfig-secret", data)); err != nil {
		t.Fatal(err)
	}
	// A Secret of another name is not mirrored.
	if err := informer.Informer().GetStore().Add(clientcerttesting.NewSecret("agent-ns", "other", map[string][]byte{"other": []byte("o")})); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := c.Sync(ctx, syncCtx); err != nil {
			t.Fatal(err)
		}
	}
	contents, modes := readDir(t, dir)
	if diff := cmp.Diff(map[string]string{"kubeconfig": "k", "tls.key": "key"}, contents); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if modes["tls.key"] != 0o600 {
		t.Errorf("tls.key mode %o", modes["tls.key"])
	}
	var reasons []string
	for _, e := range recorder.Events() {
		reasons = append(reasons, e.Reason)
	}
	if diff := cmp.Diff([]string{clientcert.ReasonHubKubeconfigSecretMirrored}, reasons); diff != "" {
		t.Errorf("events (one per change) (-want +got):\n%s", diff)
	}
}
