package clientcert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corev1informers "k8s.io/client-go/informers/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
)

// Mode of the mirrored files (they hold the private key) and of the directory when this package creates it.
const (
	mirrorFileMode os.FileMode = 0o600
	mirrorDirMode  os.FileMode = 0o700
)

// ReasonHubKubeconfigSecretMirrored is the event reason when the mirror controller changed files in the dir.
const ReasonHubKubeconfigSecretMirrored = "HubKubeconfigSecretMirrored"

// MirrorToDir writes every key of data as the file dir/<key> with mode 0600, creating dir (0700) if needed.
// A file is written only when its content differs (a file with the right content but another mode is
// chmod-ed), atomically: a temporary file in dir, fsync, rename. Files for keys not in data are left alone.
// changed reports whether any file was written or chmod-ed. A key that is not a plain file name ("", ".",
// "..", or containing a path separator) is an error and nothing is written for it.
func MirrorToDir(data map[string][]byte, dir string) (changed bool, err error) {
	if err := os.MkdirAll(dir, mirrorDirMode); err != nil {
		return false, fmt.Errorf("mirror to %s: %w", dir, err)
	}
	keys := make([]string, 0, len(data))
	for key := range data {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if key == "" || key == "." || key == ".." || strings.ContainsAny(key, `/\`) {
			return changed, fmt.Errorf("mirror to %s: key %q is not a file name", dir, key)
		}
		wrote, err := writeFileIfChanged(filepath.Join(dir, key), data[key])
		if err != nil {
			return changed, fmt.Errorf("mirror to %s: %w", dir, err)
		}
		changed = changed || wrote
	}
	return changed, nil
}

// writeFileIfChanged writes content to path (mode 0600) through a temporary file and a rename, unless path
// already holds content; then it only fixes the mode.
func writeFileIfChanged(path string, content []byte) (bool, error) {
	existing, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(existing, content):
		info, err := os.Stat(path)
		if err != nil {
			return false, err
		}
		if info.Mode().Perm() == mirrorFileMode {
			return false, nil
		}
		return true, os.Chmod(path, mirrorFileMode)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, err
	}

	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, err
	}
	tmpName := tmp.Name()
	cleanup := func() { _ = os.Remove(tmpName) }
	if err := tmp.Chmod(mirrorFileMode); err != nil {
		_ = tmp.Close()
		cleanup()
		return false, err
	}
	if _, err := tmp.Write(content); err != nil {
		_ = tmp.Close()
		cleanup()
		return false, err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		cleanup()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		cleanup()
		return false, err
	}
	if err := os.Rename(tmpName, path); err != nil {
		cleanup()
		return false, err
	}
	return true, nil
}

// hubKubeconfigSecretMirrorController mirrors one Secret into a directory.
type hubKubeconfigSecretMirrorController struct {
	namespace, name, dir string
	lister               corev1listers.SecretLister
}

// NewHubKubeconfigSecretMirrorController returns a controller that mirrors Secret namespace/name (read from
// secretInformer, which may be scoped to namespace) into dir with MirrorToDir whenever it changes, and
// resyncs every resync (0 disables the periodic resync) to repair edited files. A missing Secret is not an
// error and leaves the files in place (they may still hold the last good credentials). Each sync that changes
// files emits HubKubeconfigSecretMirrored; write errors are returned (requeued with rate limiting).
func NewHubKubeconfigSecretMirrorController(namespace, name, dir string, secretInformer corev1informers.SecretInformer,
	resync time.Duration, recorder events.Recorder) factory.Controller {
	c := &hubKubeconfigSecretMirrorController{
		namespace: namespace,
		name:      name,
		dir:       dir,
		lister:    secretInformer.Lister(),
	}
	f := factory.New().
		WithFilteredEventsInformers(factory.NamesFilter(name), secretInformer.Informer()).
		WithSync(c.sync)
	if resync > 0 {
		f = f.ResyncEvery(resync)
	}
	return f.ToController("HubKubeconfigSecretMirrorController", recorder)
}

func (c *hubKubeconfigSecretMirrorController) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	logger := klog.FromContext(ctx).WithValues("secret", klog.KRef(c.namespace, c.name), "dir", c.dir)
	secret, err := c.lister.Secrets(c.namespace).Get(c.name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("Hub kubeconfig Secret not found; nothing to mirror")
		return nil
	}
	if err != nil {
		return fmt.Errorf("get secret %s/%s: %w", c.namespace, c.name, err)
	}
	changed, err := MirrorToDir(secret.Data, c.dir)
	if err != nil {
		return fmt.Errorf("mirror secret %s/%s: %w", c.namespace, c.name, err)
	}
	if changed {
		logger.Info("Mirrored hub kubeconfig Secret", "keys", len(secret.Data))
		syncCtx.Recorder().Eventf(ReasonHubKubeconfigSecretMirrored, "Secret %s/%s mirrored to %s", c.namespace, c.name, c.dir)
	}
	return nil
}
