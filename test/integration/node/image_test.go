package node_test

import (
	"testing"

	"github.com/klusterlet-failover/klusterlet-failover/internal/ociimage"
	"github.com/klusterlet-failover/klusterlet-failover/test/framework"
)

// TestMakeImageIsReproducible: the image the node suite runs is the tarball `make image` writes, and a second
// `make image` of the same commit writes an image with the same digest (no build time in the binary or the image).
// An agent image built any other way (a binary without the Makefile's ldflags) would differ from the second build.
func TestMakeImageIsReproducible(t *testing.T) {
	first := framework.NodeImages(t).Agent
	second, err := framework.MakeImage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, err := ociimage.TarballDigest(first)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ociimage.TarballDigest(second)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("two make image builds of one commit: digests %s and %s, want one", a, b)
	}
	t.Logf("make image digest %s, twice", a)
}
