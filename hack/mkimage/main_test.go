package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	// A real ELF binary of this machine: the test binary itself.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "klusterlet-failover")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "sub", "image.tar")

	errTests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no -o", args: []string{"-binary", bin}, want: "-o is required"},
		{name: "no -binary", args: []string{"-o", out}, want: "-binary is required"},
		{name: "missing binary", args: []string{"-o", out, "-binary", filepath.Join(dir, "nope")}, want: `-binary "` + filepath.Join(dir, "nope") + `"`},
		{name: "directory as binary", args: []string{"-o", out, "-binary", dir}, want: "not a regular file"},
		{name: "bad tag", args: []string{"-o", out, "-binary", bin, "-tag", "Bad Tag"}, want: `-tag "Bad Tag"`},
		{name: "stray argument", args: []string{"-o", out, "-binary", bin, "extra"}, want: "unexpected arguments"},
		{name: "not an ELF binary", args: []string{"-o", out, "-binary", script}, want: "not an ELF binary"},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(tt.args, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("%s written by a failed run", out)
	}

	var stdout bytes.Buffer
	if err := run([]string{"-o", out, "-binary", bin}, &stdout); err != nil {
		t.Fatal(err)
	}
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(out) })
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || len(m[0].RepoTags) != 1 || m[0].RepoTags[0] != "localhost/klusterlet-failover:dev" {
		t.Errorf("manifest.json %+v, want RepoTags [localhost/klusterlet-failover:dev]", m)
	}
	img, err := tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Architecture != runtime.GOARCH || cf.OS != "linux" {
		t.Errorf("image platform %s/%s, want linux/%s (the binary's)", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	if !strings.Contains(stdout.String(), "digest "+digest.String()) || !strings.Contains(stdout.String(), "wrote "+out) {
		t.Errorf("stdout %q, want the digest %s and the path %s", stdout.String(), digest, out)
	}
}
