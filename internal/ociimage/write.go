package ociimage

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// DefaultRef is the tag make image gives the product image: "localhost/klusterlet-failover:dev". A "localhost/"
// reference keeps its name when containerd imports it (a bare "klusterlet-failover:dev" would become
// "docker.io/library/klusterlet-failover:dev").
const DefaultRef = "localhost/klusterlet-failover:dev"

// WriteTarball writes img to path as a docker-archive tarball (manifest.json with RepoTags [ref], the config and
// the layer blobs), the format `ctr -n k8s.io images import` and `docker load` read and tarball.ImageFromPath
// reloads. ref is parsed with name.NewTag ("localhost/klusterlet-failover:dev"; no tag means "latest").
//
// The write is atomic: a temporary file in path's directory is written, synced, made 0644 and renamed onto path,
// so path holds either its old contents or the whole new tarball. The directory must exist. Errors: an invalid
// ref (the error names it), and any error creating, writing or renaming the file (the error names path).
func WriteTarball(path string, ref string, img v1.Image) (err error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing image tarball %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := tarball.Write(tag, img, tmp); err != nil {
		return fmt.Errorf("writing image tarball %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing image tarball %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing image tarball %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing image tarball %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing image tarball %s: %w", path, err)
	}
	return nil
}

// TarballDigest returns the digest of the image manifest of the docker-archive tarball at path (as WriteTarball
// writes it): the digest a registry and containerd give the image. Two builds of one commit have the same one.
// It returns an error naming path when the tarball cannot be read.
func TarballDigest(path string) (v1.Hash, error) {
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("reading image tarball %s: %w", path, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("reading image tarball %s: %w", path, err)
	}
	return digest, nil
}
