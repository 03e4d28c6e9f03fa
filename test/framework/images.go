package framework

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/klusterlet-failover/klusterlet-failover/internal/ociimage"
)

// Images the node suite imports into its containerd. Their tags are on localhost, so an accidental pull can only
// ever try loopback, and not "latest", so that imagePullPolicy defaults to IfNotPresent.
const (
	// AgentImageRef is our image's tag: make image's default (ociimage.DefaultRef).
	AgentImageRef = ociimage.DefaultRef
	// OCMRegistrationImageRef, OCMWorkImageRef and OCMOperatorImageRef are OCM v1.2.0's registration, work and
	// registration-operator images, built the same way from the cached v1.2.0 binaries.
	OCMRegistrationImageRef = "localhost/open-cluster-management/registration:v1.2.0"
	OCMWorkImageRef         = "localhost/open-cluster-management/work:v1.2.0"
	OCMOperatorImageRef     = "localhost/open-cluster-management/registration-operator:v1.2.0"
	// PauseImageRef is the pod sandbox image (test/images/pause), containerd's sandbox_image.
	PauseImageRef = "localhost/pause:kf"
	// DialImageRef is the connectivity probe (test/images/dial): it reports which host:port arguments it reached.
	DialImageRef = "localhost/dial:kf"
)

// NodeImageSet holds the paths of the image tarballs NodeImages built.
type NodeImageSet struct {
	// Agent is AgentImageRef's tarball; Registration, Work and Operator are OCM's.
	Agent, Registration, Work, Operator string
}

// All returns every tarball of the set, for StartNode.
func (s NodeImageSet) All() []string { return []string{s.Agent, s.Registration, s.Work, s.Operator} }

var (
	nodeImagesOnce = sync.OnceValues(buildNodeImages)
	pauseImageOnce = sync.OnceValues(buildPauseImage)
	dialImageOnce  = sync.OnceValues(func() (string, error) { return buildCommandImage("dial", DialImageRef) })

	// imageDirsMu guards imageDirs, the temporary directories the image builds wrote.
	imageDirsMu sync.Mutex
	imageDirs   []string
)

// RemoveNodeImages removes the image tarballs NodeImages and PauseImage built (about 120 MB per test binary);
// a suite's TestMain calls it after m.Run.
func RemoveNodeImages() {
	imageDirsMu.Lock()
	defer imageDirsMu.Unlock()
	for _, d := range imageDirs {
		_ = os.RemoveAll(d)
	}
	imageDirs = nil
}

// imageDir creates a temporary directory for image tarballs and records it for RemoveNodeImages.
func imageDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	imageDirsMu.Lock()
	imageDirs = append(imageDirs, dir)
	imageDirsMu.Unlock()
	return dir, nil
}

// NodeImages builds, once per test binary, the image tarballs of the node suite: ours is the tarball `make image`
// writes (MakeImage), imported as is; OCM's registration, work and registration-operator are built from the
// binaries cache. It fails t when a build fails.
func NodeImages(t testing.TB) NodeImageSet {
	t.Helper()
	set, err := nodeImagesOnce()
	if err != nil {
		t.Fatalf("node images: %v", err)
	}
	return set
}

// PauseImage returns the path of the pause image's tarball, built once per test binary from test/images/pause.
func PauseImage() (string, error) { return pauseImageOnce() }

func buildNodeImages() (NodeImageSet, error) {
	binDir, err := BinariesDir(BinaryRegistration, BinaryWork, BinaryRegistrationOperator)
	if err != nil {
		return NodeImageSet{}, err
	}
	dir, err := imageDir("kf-images-")
	if err != nil {
		return NodeImageSet{}, err
	}
	write := func(ref, file string, spec ociimage.Spec) (string, error) {
		img, err := ociimage.Build(spec)
		if err != nil {
			return "", fmt.Errorf("building image %s: %w", ref, err)
		}
		path := filepath.Join(dir, file+".tar")
		if err := ociimage.WriteTarball(path, ref, img); err != nil {
			return "", err
		}
		return path, nil
	}
	var set NodeImageSet
	if set.Agent, err = MakeImage(dir); err != nil {
		return set, err
	}
	for _, c := range []struct {
		out  *string
		ref  string
		name string
	}{
		{&set.Registration, OCMRegistrationImageRef, BinaryRegistration},
		{&set.Work, OCMWorkImageRef, BinaryWork},
		{&set.Operator, OCMOperatorImageRef, BinaryRegistrationOperator},
	} {
		if *c.out, err = write(c.ref, c.name, ociimage.OCMSpec(c.name, filepath.Join(binDir, c.name))); err != nil {
			return set, err
		}
	}
	return set, nil
}

func buildPauseImage() (string, error) {
	bin, dir, err := buildTestImageBinary("pause")
	if err != nil {
		return "", err
	}
	img, err := ociimage.Build(ociimage.PauseSpec(bin))
	if err != nil {
		return "", fmt.Errorf("building image %s: %w", PauseImageRef, err)
	}
	path := filepath.Join(dir, "pause.tar")
	return path, ociimage.WriteTarball(path, PauseImageRef, img)
}

// DialImage returns the path of the connectivity probe's image tarball (DialImageRef), built once per test binary
// from test/images/dial; import it with Node.ImportImage.
func DialImage() (string, error) { return dialImageOnce() }

// buildCommandImage builds test/images/<name> into an image tagged ref (ociimage.CommandSpec) and returns its
// tarball's path.
func buildCommandImage(name, ref string) (string, error) {
	bin, dir, err := buildTestImageBinary(name)
	if err != nil {
		return "", err
	}
	img, err := ociimage.Build(ociimage.CommandSpec(name, bin))
	if err != nil {
		return "", fmt.Errorf("building image %s: %w", ref, err)
	}
	path := filepath.Join(dir, name+".tar")
	return path, ociimage.WriteTarball(path, ref, img)
}

// buildTestImageBinary builds ./test/images/<name> as a static binary into a new directory recorded for
// RemoveNodeImages, and returns the binary's path and the directory.
func buildTestImageBinary(name string) (string, string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", "", err
	}
	dir, err := imageDir("kf-" + name + "-")
	if err != nil {
		return "", "", err
	}
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, "./test/images/"+name)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building the %s binary (go build ./test/images/%s): %v\n%s", name, name, err, out)
	}
	return bin, dir, nil
}

// MakeImage runs `make image` in the repository, with its binary and tarball under dir, and returns the tarball's
// path: the image a user builds and ships, with the Makefile's build flags. The error holds make's output.
func MakeImage(dir string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	tarball := filepath.Join(dir, "klusterlet-failover-image.tar")
	cmd := exec.Command("make", "--no-print-directory", "image", "BIN_DIR="+filepath.Join(dir, "bin"), "IMAGE_TAR="+tarball, "IMAGE_REF="+AgentImageRef)
	cmd.Dir = root
	// Not a sub-make of the make that may run the tests: none of its job server or flags.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "MAKEFLAGS" || name == "MFLAGS" || name == "MAKELEVEL" || name == "MAKEFILES"
	})
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("make image: %v\n%s", err, out)
	}
	return tarball, nil
}
