package ociimage

import (
	"archive/tar"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// tarEntry is what the tests check of a layer entry.
type tarEntry struct {
	Name     string
	Type     byte
	Mode     int64
	UID, GID int
	Data     string
}

// writeFile writes data to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// layerEntries returns the entries of img's single layer, in tar order, and fails on a wrong mtime.
func layerEntries(t *testing.T, img v1.Image) []tarEntry {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var got []tarEntry
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if !hdr.ModTime.Equal(Epoch) {
			t.Errorf("entry %s: mtime %s, want %s", hdr.Name, hdr.ModTime, Epoch)
		}
		got = append(got, tarEntry{Name: hdr.Name, Type: hdr.Typeflag, Mode: hdr.Mode, UID: hdr.Uid, GID: hdr.Gid, Data: string(data)})
	}
	return got
}

func mustBuild(t *testing.T, spec Spec) v1.Image {
	t.Helper()
	img, err := Build(spec)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return img
}

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fixed are the entries every layer has, by name.
var fixed = map[string]tarEntry{
	"etc/":          {Name: "etc/", Type: tar.TypeDir, Mode: 0o755},
	"etc/group":     {Name: "etc/group", Type: tar.TypeReg, Mode: 0o644, Data: "root:x:0:\nnonroot:x:65532:\n"},
	"etc/passwd":    {Name: "etc/passwd", Type: tar.TypeReg, Mode: 0o644, Data: "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"},
	"home/":         {Name: "home/", Type: tar.TypeDir, Mode: 0o755},
	"home/nonroot/": {Name: "home/nonroot/", Type: tar.TypeDir, Mode: 0o700, UID: 65532, GID: 65532},
	"root/":         {Name: "root/", Type: tar.TypeDir, Mode: 0o700},
	"tmp/":          {Name: "tmp/", Type: tar.TypeDir, Mode: 0o1777},
}

// withFixed returns the fixed entries and extra, sorted as the layer holds them.
func withFixed(extra ...tarEntry) []tarEntry {
	byName := map[string]tarEntry{}
	for n, e := range fixed {
		byName[n] = e
	}
	for _, e := range extra {
		byName[e.Name] = e
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	// The layer sorts by path without the trailing "/" of directories.
	sortByPath(names)
	out := make([]tarEntry, 0, len(names))
	for _, n := range names {
		out = append(out, byName[n])
	}
	return out
}

func sortByPath(names []string) {
	key := func(n string) string { return strings.TrimSuffix(n, "/") }
	for i := 1; i < len(names); i++ {
		for j := i; j > 0 && key(names[j]) < key(names[j-1]); j-- {
			names[j], names[j-1] = names[j-1], names[j]
		}
	}
}

func TestLayerEntries(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, dir, "bin", "\x7fELF binary")
	conf := writeFile(t, dir, "conf", "key: value\n")

	tests := []struct {
		name  string
		files []File
		want  []tarEntry
	}{{
		name: "no files: only the fixed entries",
		want: withFixed(),
	}, {
		name:  "a binary at the root",
		files: []File{{Path: "/klusterlet-failover", Source: bin, Mode: 0o755}},
		want:  withFixed(tarEntry{Name: "klusterlet-failover", Type: tar.TypeReg, Mode: 0o755, Data: "\x7fELF binary"}),
	}, {
		name: "nested files get their parent directories; mode 0 means 0644; a file may go into /etc",
		files: []File{
			{Path: "/usr/local/bin/tool", Source: bin, Mode: 0o700},
			{Path: "/etc/tool/conf.yaml", Source: conf},
			{Path: "/usr/share/x", Source: conf, Mode: 0o4755},
		},
		want: withFixed(
			tarEntry{Name: "etc/tool/", Type: tar.TypeDir, Mode: 0o755},
			tarEntry{Name: "etc/tool/conf.yaml", Type: tar.TypeReg, Mode: 0o644, Data: "key: value\n"},
			tarEntry{Name: "usr/", Type: tar.TypeDir, Mode: 0o755},
			tarEntry{Name: "usr/local/", Type: tar.TypeDir, Mode: 0o755},
			tarEntry{Name: "usr/local/bin/", Type: tar.TypeDir, Mode: 0o755},
			tarEntry{Name: "usr/local/bin/tool", Type: tar.TypeReg, Mode: 0o700, Data: "\x7fELF binary"},
			tarEntry{Name: "usr/share/", Type: tar.TypeDir, Mode: 0o755},
			tarEntry{Name: "usr/share/x", Type: tar.TypeReg, Mode: 0o4755, Data: "key: value\n"},
		),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			layer, err := Layer(tt.files)
			if err != nil {
				t.Fatalf("Layer: %v", err)
			}
			mt, err := layer.MediaType()
			if err != nil || mt != types.DockerLayer {
				t.Errorf("media type %q (%v), want %q", mt, err, types.DockerLayer)
			}
			img := mustBuild(t, Spec{Files: tt.files, Cmd: []string{"true"}})
			if diff := cmp.Diff(tt.want, layerEntries(t, img)); diff != "" {
				t.Errorf("layer entries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, dir, "bin", "binary")

	tests := []struct {
		name     string
		spec     Spec
		want     v1.Config
		wantFile string // the tar name of the spec's one file, mode 0755
	}{{
		name:     "AgentSpec",
		spec:     AgentSpec(bin),
		want:     v1.Config{Entrypoint: []string{"/klusterlet-failover"}, Cmd: []string{"agent", "failover"}, User: "65532:65532"},
		wantFile: "klusterlet-failover",
	}, {
		name:     "OCMSpec registration",
		spec:     OCMSpec("registration", bin),
		want:     v1.Config{Cmd: []string{"/registration"}, User: "65532:65532"},
		wantFile: "registration",
	}, {
		name:     "OCMSpec registration-operator",
		spec:     OCMSpec("registration-operator", bin),
		want:     v1.Config{Cmd: []string{"/registration-operator"}, User: "65532:65532"},
		wantFile: "registration-operator",
	}, {
		name:     "PauseSpec",
		spec:     PauseSpec(bin),
		want:     v1.Config{Entrypoint: []string{"/pause"}, User: "65535:65535"},
		wantFile: "pause",
	}, {
		name: "every config field",
		spec: Spec{
			Files:      []File{{Path: "/bin/app", Source: bin, Mode: 0o755}},
			Entrypoint: []string{"/bin/app", "--flag"},
			Cmd:        []string{"serve"},
			User:       "nonroot",
			Env:        []string{"PATH=/bin", "EMPTY="},
			WorkingDir: "/tmp",
			Labels:     map[string]string{"org.opencontainers.image.title": "app"},
		},
		want: v1.Config{
			Entrypoint: []string{"/bin/app", "--flag"}, Cmd: []string{"serve"}, User: "nonroot",
			Env: []string{"PATH=/bin", "EMPTY="}, WorkingDir: "/tmp",
			Labels: map[string]string{"org.opencontainers.image.title": "app"},
		},
		wantFile: "bin/app",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img := mustBuild(t, tt.spec)
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cf.Config); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
				t.Errorf("platform %s/%s, want linux/%s", cf.OS, cf.Architecture, runtime.GOARCH)
			}
			if !cf.Created.Time.Equal(Epoch) {
				t.Errorf("created %s, want %s", cf.Created.Time, Epoch)
			}
			if len(cf.RootFS.DiffIDs) != 1 || cf.RootFS.Type != "layers" || len(cf.History) != 1 {
				t.Errorf("rootfs %+v, history %+v: want one layer and one history entry", cf.RootFS, cf.History)
			}
			mt, err := img.MediaType()
			if err != nil || mt != types.DockerManifestSchema2 {
				t.Errorf("manifest media type %q (%v), want %q", mt, err, types.DockerManifestSchema2)
			}
			found := false
			for _, e := range layerEntries(t, img) {
				if e.Name == tt.wantFile {
					found = true
					if e.Type != tar.TypeReg || e.Mode != 0o755 || e.UID != 0 || e.GID != 0 || e.Data != "binary" {
						t.Errorf("entry %s: %+v, want a 0755 root-owned file holding the binary", e.Name, e)
					}
				}
			}
			if !found {
				t.Errorf("layer has no %s", tt.wantFile)
			}
		})
	}
}

func TestReproducible(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	a := writeFile(t, dirA, "bin", "binary v1")
	b := writeFile(t, dirB, "other-name", "binary v1") // same bytes, another host path and mtime
	if err := os.Chtimes(b, time.Now(), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	changed := writeFile(t, dirA, "changed", "binary v2")
	base := AgentSpec(a)
	edit := func(f func(*Spec)) Spec { s := AgentSpec(a); f(&s); return s }

	tests := []struct {
		name string
		spec Spec
		same bool
	}{
		{name: "same inputs", spec: AgentSpec(a), same: true},
		{name: "same bytes from another host file", spec: AgentSpec(b), same: true},
		{name: "different content", spec: AgentSpec(changed)},
		{name: "different mode", spec: edit(func(s *Spec) { s.Files[0].Mode = 0o750 })},
		{name: "different path", spec: edit(func(s *Spec) { s.Files[0].Path = "/bin/kf"; s.Entrypoint = []string{"/bin/kf"} })},
		{name: "different cmd", spec: edit(func(s *Spec) { s.Cmd = []string{"version"} })},
		{name: "different user", spec: edit(func(s *Spec) { s.User = "0:0" })},
		{name: "different label", spec: edit(func(s *Spec) { s.Labels = map[string]string{"a": "b"} })},
	}
	want := digest(t, mustBuild(t, base))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := digest(t, mustBuild(t, tt.spec))
			if (got == want) != tt.same {
				t.Errorf("digest %s, base %s: want same=%v", got, want, tt.same)
			}
		})
	}
}

func TestWriteTarball(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, dir, "bin", "binary")
	img := mustBuild(t, AgentSpec(bin))
	out := filepath.Join(dir, "image.tar")
	if err := os.WriteFile(out, []byte("stale"), 0o600); err != nil { // replaced atomically
		t.Fatal(err)
	}

	for _, ref := range []string{DefaultRef, "quay.io/klusterlet-failover/klusterlet-failover:v0.2.0"} {
		t.Run(ref, func(t *testing.T) {
			if err := WriteTarball(out, ref, img); err != nil {
				t.Fatalf("WriteTarball: %v", err)
			}
			fi, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o644 {
				t.Errorf("mode %v, want 0644", fi.Mode().Perm())
			}
			m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(out) })
			if err != nil {
				t.Fatalf("LoadManifest: %v", err)
			}
			if len(m) != 1 || !cmp.Equal(m[0].RepoTags, []string{ref}) {
				t.Errorf("manifest.json %+v, want one image with RepoTags [%s]", m, ref)
			}
			loaded, err := tarball.ImageFromPath(out, nil)
			if err != nil {
				t.Fatalf("ImageFromPath: %v", err)
			}
			if got, want := digest(t, loaded), digest(t, img); got != want {
				t.Errorf("reloaded digest %s, want %s", got, want)
			}
			cf, err := loaded.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal(cf.Config.Entrypoint, []string{"/klusterlet-failover"}) || cf.Config.User != NonrootUser {
				t.Errorf("reloaded config %+v", cf.Config)
			}
			if diff := cmp.Diff(layerEntries(t, img), layerEntries(t, loaded)); diff != "" {
				t.Errorf("reloaded layer (-built +reloaded):\n%s", diff)
			}
			left, _ := filepath.Glob(filepath.Join(dir, ".image.tar.tmp-*"))
			if len(left) != 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

func TestWriteTarballErrors(t *testing.T) {
	dir := t.TempDir()
	img := mustBuild(t, AgentSpec(writeFile(t, dir, "bin", "binary")))
	tests := []struct {
		name, path, ref string
		want            string
	}{
		{name: "invalid ref", path: filepath.Join(dir, "a.tar"), ref: "Not A Ref!", want: `image reference "Not A Ref!"`},
		{name: "digest ref", path: filepath.Join(dir, "b.tar"), ref: "localhost/x@sha256:" + strings.Repeat("0", 64), want: `image reference "localhost/x@sha256:`},
		{name: "missing directory", path: filepath.Join(dir, "no", "c.tar"), ref: DefaultRef, want: filepath.Join(dir, "no", "c.tar")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteTarball(tt.path, tt.ref, img)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if _, err := os.Stat(tt.path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s exists after a failed write (%v)", tt.path, err)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, dir, "bin", "binary")
	missing := filepath.Join(dir, "missing")
	file := func(p string) File { return File{Path: p, Source: bin, Mode: 0o755} }
	spec := func(files ...File) Spec { return Spec{Files: files, Cmd: []string{"true"}} }

	tests := []struct {
		name     string
		spec     Spec
		want     string
		notExist bool
	}{
		{name: "empty path", spec: spec(file("")), want: "Spec.Files[0].Path is empty"},
		{name: "relative path", spec: spec(file("registration")), want: `Spec.Files[0].Path "registration": not absolute`},
		{name: "unclean path", spec: spec(file("/a/../b")), want: `Spec.Files[0].Path "/a/../b": not clean (want "/b")`},
		{name: "trailing slash", spec: spec(file("/a/")), want: `Spec.Files[0].Path "/a/": not clean`},
		{name: "root", spec: spec(file("/")), want: `Spec.Files[0].Path "/": the root directory`},
		{name: "OCMSpec with an empty name", spec: OCMSpec("", bin), want: `Spec.Files[0].Path "/"`},
		{name: "duplicate path", spec: spec(file("/x"), file("/y"), file("/x")), want: `Spec.Files[2].Path "/x": duplicate of Files[0].Path`},
		{name: "reserved path", spec: spec(file("/etc/passwd")), want: `Spec.Files[0].Path "/etc/passwd": reserved`},
		{name: "reserved directory", spec: spec(file("/tmp")), want: `Spec.Files[0].Path "/tmp": reserved`},
		{name: "parent is a file", spec: spec(file("/a"), file("/a/b")), want: `Spec.Files[1].Path "/a/b": parent "/a" is a file (Files[0].Path)`},
		{name: "parent is a fixed file", spec: spec(file("/etc/passwd/x")), want: `Spec.Files[0].Path "/etc/passwd/x": parent "/etc/passwd" is a file (a fixed entry)`},
		{name: "path is a directory", spec: spec(file("/a/b"), file("/a")), want: `Spec.Files[1].Path "/a": already a directory (a parent of Files[0].Path)`},
		{name: "bad mode", spec: spec(File{Path: "/x", Source: bin, Mode: 0o10755}), want: `Spec.Files[0].Mode 010755: not permission bits`},
		{name: "negative mode", spec: spec(File{Path: "/x", Source: bin, Mode: -1}), want: `Spec.Files[0].Mode`},
		{name: "empty source", spec: spec(File{Path: "/x"}), want: `Spec.Files[0].Source is empty (Path "/x")`},
		{name: "missing source", spec: spec(File{Path: "/x", Source: missing}), want: `Spec.Files[0].Source "` + missing + `"`, notExist: true},
		{name: "AgentSpec with a missing binary", spec: AgentSpec(missing), want: `Spec.Files[0].Source "` + missing + `"`, notExist: true},
		{name: "source is a directory", spec: spec(File{Path: "/x", Source: dir}), want: `Spec.Files[0].Source "` + dir + `": not a regular file`},
		{name: "no entrypoint nor cmd", spec: Spec{Files: []File{file("/x")}}, want: "Spec has neither Entrypoint nor Cmd"},
		{name: "empty command", spec: Spec{Entrypoint: []string{""}}, want: "Spec.Entrypoint[0] is empty"},
		{name: "entrypoint not in files", spec: Spec{Files: []File{file("/x")}, Entrypoint: []string{"/y"}}, want: `Spec.Entrypoint[0] "/y": no Spec.Files entry has that Path`},
		{name: "cmd not in files", spec: Spec{Files: []File{file("/x")}, Cmd: []string{"/registration", "agent"}}, want: `Spec.Cmd[0] "/registration": no Spec.Files entry`},
		{name: "bad user", spec: Spec{Cmd: []string{"true"}, User: "65532: 65532"}, want: `Spec.User "65532: 65532"`},
		{name: "bad env", spec: Spec{Cmd: []string{"true"}, Env: []string{"A=1", "NOVALUE"}}, want: `Spec.Env[1] "NOVALUE": want KEY=value`},
		{name: "empty env key", spec: Spec{Cmd: []string{"true"}, Env: []string{"=1"}}, want: `Spec.Env[0] "=1"`},
		{name: "relative working dir", spec: Spec{Cmd: []string{"true"}, WorkingDir: "tmp"}, want: `Spec.WorkingDir "tmp": not absolute`},
		{name: "empty label key", spec: Spec{Cmd: []string{"true"}, Labels: map[string]string{"": "x"}}, want: "Spec.Labels has an empty key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := Build(tt.spec)
			if err == nil {
				t.Fatalf("Build succeeded (%v), want an error containing %q", img, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want one containing %q", err, tt.want)
			}
			if tt.notExist && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %q does not wrap fs.ErrNotExist", err)
			}
		})
	}
}

// TestArchitecture: Spec.Architecture sets the config's architecture; empty means the builder's; ELFArchitecture
// reads it from a binary and refuses a file that is not ELF.
func TestArchitecture(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, dir, "bin", "x")
	for _, tc := range []struct{ arch, want string }{{"", runtime.GOARCH}, {"arm64", "arm64"}} {
		spec := AgentSpec(bin)
		spec.Architecture = tc.arch
		cf, err := mustBuild(t, spec).ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != tc.want {
			t.Errorf("Architecture %q: config architecture %q, want %q", tc.arch, cf.Architecture, tc.want)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ELFArchitecture(self); err != nil || got != runtime.GOARCH {
		t.Errorf("ELFArchitecture(test binary) = %q, %v; want %q", got, err, runtime.GOARCH)
	}
	if _, err := ELFArchitecture(bin); err == nil || !strings.Contains(err.Error(), "not an ELF binary") {
		t.Errorf("ELFArchitecture(text file) error %v, want one saying it is not an ELF binary", err)
	}
}
