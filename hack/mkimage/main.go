// Command mkimage writes the klusterlet-failover container image (internal/ociimage.AgentSpec) as a docker-archive
// tarball without a container engine; make image runs it. Import the tarball with
// `ctr -n k8s.io images import <tarball>` (containerd) or `docker load -i <tarball>`.
//
//	go run ./hack/mkimage -binary _output/bin/klusterlet-failover -o _output/klusterlet-failover-image.tar \
//	    [-tag localhost/klusterlet-failover:dev]
//
// It prints the image's manifest digest, its config digest (the image ID) and the tarball's path. A docker-archive
// carries no manifest, so `ctr images import` writes its own and lists another digest; the image ID is the same
// (ctr lists it as the image's second name, sha256:<image ID>).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/klusterlet-failover/klusterlet-failover/internal/ociimage"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("mkimage", flag.ContinueOnError)
	out := fs.String("o", "", "path of the image tarball to write (required)")
	tag := fs.String("tag", ociimage.DefaultRef, "image reference recorded in the tarball (RepoTags)")
	binary := fs.String("binary", "", "the static klusterlet-failover binary to put at /klusterlet-failover (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	case *out == "":
		return errors.New("-o is required: the path of the image tarball to write")
	case *binary == "":
		return errors.New("-binary is required: the klusterlet-failover binary (make build writes _output/bin/klusterlet-failover)")
	}
	if _, err := name.NewTag(*tag); err != nil {
		return fmt.Errorf("-tag %q: %w", *tag, err)
	}
	if fi, err := os.Stat(*binary); err != nil {
		return fmt.Errorf("-binary %q: %w", *binary, err)
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("-binary %q: not a regular file", *binary)
	}
	spec := ociimage.AgentSpec(*binary)
	// The image's architecture is the binary's (GOARCH=arm64 make image), not mkimage's own.
	arch, err := ociimage.ELFArchitecture(*binary)
	if err != nil {
		return fmt.Errorf("-binary %q: %w", *binary, err)
	}
	spec.Architecture = arch
	img, err := ociimage.Build(spec)
	if err != nil {
		return fmt.Errorf("-binary %q: %w", *binary, err)
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return fmt.Errorf("-o %q: %w", *out, err)
	}
	if err := ociimage.WriteTarball(*out, *tag, img); err != nil {
		return fmt.Errorf("-o %q: %w", *out, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	id, err := img.ConfigName()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "image %s\ndigest %s\nimage ID %s\nwrote %s\n", *tag, digest, id, *out)
	return nil
}
