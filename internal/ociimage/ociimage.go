// Package ociimage builds small container images without a container engine: one layer holding a few static
// binaries plus the minimum a non-root Linux process expects (/etc/passwd, /etc/group, a writable /tmp), written as
// a docker-archive tarball that `ctr -n k8s.io images import` (containerd) and `docker load` accept.
//
// Images are reproducible: every timestamp is the Unix epoch, entries are sorted and owned by fixed ids, so the
// same inputs give the same layer, config and manifest digests (with the same Go toolchain, whose compress/gzip
// produces the layer blob).
package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const (
	// NonrootUID is the uid and gid of the "nonroot" entry in the image's /etc/passwd and /etc/group; its home
	// is /home/nonroot (owned by it, mode 0700).
	NonrootUID = 65532
	// NonrootUser is the Spec.User that runs as NonrootUID ("65532:65532").
	NonrootUser = "65532:65532"
	// PauseUser is the Spec.User of PauseSpec ("65535:65535"), the user Kubernetes' own pause image runs as.
	PauseUser = "65535:65535"
	// DefaultFileMode is the mode of a File whose Mode is 0 (0644).
	DefaultFileMode = 0o644
)

// Epoch is the modification and creation time of every layer entry, the config and its history: the Unix epoch
// (1970-01-01T00:00:00Z), so that builds are reproducible.
var Epoch = time.Unix(0, 0).UTC()

// passwd and group are the contents of /etc/passwd and /etc/group: root (0) and nonroot (65532), no login shell.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\n" +
		"nonroot:x:65532:\n"
)

// File is one regular file copied from the host into the image, owned by root (0:0).
type File struct {
	// Path is the file's absolute, clean path in the image, e.g. "/registration". Its parent directories are
	// created (0755, root); it must not be "/" nor one of the entries every image has (/etc, /etc/passwd,
	// /etc/group, /tmp, /root, /home, /home/nonroot) or lie below /etc/passwd or /etc/group.
	Path string
	// Source is the host path of a regular file (symbolic links are followed) whose bytes the image file holds.
	Source string
	// Mode is the permission bits (at most 07777, e.g. 0755 for a binary); 0 means DefaultFileMode (0644).
	Mode int64
}

// Spec describes an image: its files and the config a runtime starts the container with.
type Spec struct {
	// Files are the files of the image's single layer, besides the fixed entries Layer documents.
	Files []File
	// Entrypoint is the config's Entrypoint, e.g. ["/klusterlet-failover"]; a Kubernetes container's command
	// replaces it.
	Entrypoint []string
	// Cmd is the config's Cmd, the default arguments after Entrypoint (or the command when Entrypoint is empty);
	// a Kubernetes container's args replace it.
	Cmd []string
	// User is the config's User, "uid[:gid]" or "name[:group]", e.g. NonrootUser; empty means root.
	User string
	// Env is the config's environment, each element "KEY=value".
	Env []string
	// WorkingDir is the config's working directory, an absolute path; empty means "/".
	WorkingDir string
	// Labels are the config's labels.
	Labels map[string]string
	// Architecture is the config's architecture, a GOARCH value such as "amd64" or "arm64"; empty means
	// runtime.GOARCH of the builder. ELFArchitecture reads it from a binary.
	Architecture string
}

// elfArchitectures maps the ELF machines of Linux binaries to GOARCH names.
var elfArchitectures = map[elf.Machine]string{
	elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64", elf.EM_386: "386", elf.EM_ARM: "arm",
	elf.EM_PPC64: "ppc64le", elf.EM_S390: "s390x", elf.EM_RISCV: "riscv64",
}

// ELFArchitecture returns the GOARCH name of the ELF binary at path (e.g. "amd64" for EM_X86_64). The error names
// the path when it is not an ELF file or its machine is not one of amd64, arm64, 386, arm, ppc64le, s390x and
// riscv64.
func ELFArchitecture(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s: not an ELF binary: %w", path, err)
	}
	defer f.Close()
	arch, ok := elfArchitectures[f.Machine]
	if !ok {
		return "", fmt.Errorf("%s: ELF machine %s is not a supported architecture", path, f.Machine)
	}
	return arch, nil
}

// AgentSpec is the klusterlet-failover product image: binary at /klusterlet-failover (0755), Entrypoint
// ["/klusterlet-failover"], Cmd ["agent", "failover"], User NonrootUser. The klusterlet operator sets only args
// (["/registration", "agent", ...]); they replace Cmd and follow the entrypoint, and the binary takes a first
// argument "/registration" as OCM's registration command line, so the image needs no /registration file.
func AgentSpec(binary string) Spec {
	return Spec{
		Files:      []File{{Path: "/klusterlet-failover", Source: binary, Mode: 0o755}},
		Entrypoint: []string{"/klusterlet-failover"},
		Cmd:        []string{"agent", "failover"},
		User:       NonrootUser,
	}
}

// OCMSpec is an image of an Open Cluster Management component (binaryName "registration", "work",
// "registration-operator", ...): binary at /<binaryName> (0755), no Entrypoint, Cmd ["/<binaryName>"], User
// NonrootUser. OCM's manifests set only args whose first element is the binary's path (["/registration", "agent",
// ...]), so the binary sits at the image root. binaryName must be a single path element; Build rejects the Spec
// otherwise (e.g. "" gives Path "/").
func OCMSpec(binaryName, binary string) Spec {
	p := "/" + binaryName
	return Spec{
		Files: []File{{Path: p, Source: binary, Mode: 0o755}},
		Cmd:   []string{p},
		User:  NonrootUser,
	}
}

// CommandSpec is an image that runs one command (a test bed's probe): binary at /<binaryName> (0755), Entrypoint
// ["/<binaryName>"], User NonrootUser; a pod's args follow the entrypoint. binaryName must be a single path
// element; Build rejects the Spec otherwise.
func CommandSpec(binaryName, binary string) Spec {
	p := "/" + binaryName
	return Spec{
		Files:      []File{{Path: p, Source: binary, Mode: 0o755}},
		Entrypoint: []string{p},
		User:       NonrootUser,
	}
}

// PauseSpec is a pod sandbox image (the kubelet's --pod-infra-container-image): binary at /pause (0755),
// Entrypoint ["/pause"], User PauseUser (65535:65535, as Kubernetes' pause image).
func PauseSpec(binary string) Spec {
	return Spec{
		Files:      []File{{Path: "/pause", Source: binary, Mode: 0o755}},
		Entrypoint: []string{"/pause"},
		User:       PauseUser,
	}
}

// entry is one tar entry of the layer.
type entry struct {
	dir      bool
	mode     int64
	uid, gid int
	data     []byte // fixed contents, or nil when source is set
	source   string // host file to copy
	size     int64  // size of source when it was checked
	field    string // the Spec field that asked for the entry, for errors; "" for fixed entries
}

// fixedEntries are the entries every layer holds.
func fixedEntries() map[string]*entry {
	return map[string]*entry{
		"/etc":          {dir: true, mode: 0o755},
		"/etc/passwd":   {mode: 0o644, data: []byte(passwd)},
		"/etc/group":    {mode: 0o644, data: []byte(group)},
		"/tmp":          {dir: true, mode: 0o1777},
		"/root":         {dir: true, mode: 0o700},
		"/home":         {dir: true, mode: 0o755},
		"/home/nonroot": {dir: true, mode: 0o700, uid: NonrootUID, gid: NonrootUID},
	}
}

// Layer builds one gzip-compressed layer (media type application/vnd.docker.image.rootfs.diff.tar.gzip) holding
// files and these fixed entries: /etc (0755), /etc/passwd and /etc/group (0644) with root (0) and nonroot (65532),
// /tmp (01777), /root (0700), /home (0755) and /home/nonroot (0700, owned by 65532:65532). Files and the
// directories they need (0755) are owned by root; every entry's time is Epoch; entries are sorted by path and
// their tar names carry no leading "/" (directories end in "/").
//
// Errors name the offending element, e.g. `Files[1].Path "bin/x": not absolute`: an empty, relative or unclean
// Path, "/", a Path used twice, taken by a fixed entry or already a directory (the parent of another File), a Path
// whose parent is a file, a Mode outside 0..07777,
// and a Source that is missing (the error wraps the *fs.PathError, so errors.Is(err, fs.ErrNotExist) holds), is
// not a regular file or changes size while it is read.
func Layer(files []File) (v1.Layer, error) {
	entries := fixedEntries()
	for i, f := range files {
		field := fmt.Sprintf("Files[%d]", i)
		if err := addFile(entries, field, f); err != nil {
			return nil, err
		}
	}

	paths := make([]string, 0, len(entries))
	for p := range entries {
		paths = append(paths, p)
	}
	sort.Strings(paths)

	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, p := range paths {
		if err := writeEntry(tw, p, entries[p]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing layer tar: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("closing layer gzip: %w", err)
	}
	blob := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(blob)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return layer, nil
}

// addFile validates f and adds it, with its missing parent directories, to entries.
func addFile(entries map[string]*entry, field string, f File) error {
	switch {
	case f.Path == "":
		return fmt.Errorf("%s.Path is empty", field)
	case !path.IsAbs(f.Path):
		return fmt.Errorf("%s.Path %q: not absolute", field, f.Path)
	case path.Clean(f.Path) != f.Path:
		return fmt.Errorf("%s.Path %q: not clean (want %q)", field, f.Path, path.Clean(f.Path))
	case f.Path == "/":
		return fmt.Errorf("%s.Path %q: the root directory is not a file", field, f.Path)
	}
	if e, ok := entries[f.Path]; ok {
		switch {
		case e.field == "":
			return fmt.Errorf("%s.Path %q: reserved (every image has it)", field, f.Path)
		case e.dir:
			return fmt.Errorf("%s.Path %q: already a directory (a parent of %s.Path)", field, f.Path, e.field)
		default:
			return fmt.Errorf("%s.Path %q: duplicate of %s.Path", field, f.Path, e.field)
		}
	}
	mode := f.Mode
	if mode == 0 {
		mode = DefaultFileMode
	}
	if mode < 0 || mode > 0o7777 {
		return fmt.Errorf("%s.Mode %#o: not permission bits (0..07777)", field, f.Mode)
	}
	if f.Source == "" {
		return fmt.Errorf("%s.Source is empty (Path %q)", field, f.Path)
	}
	fi, err := os.Stat(f.Source)
	if err != nil {
		return fmt.Errorf("%s.Source %q: %w", field, f.Source, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s.Source %q: not a regular file (%s)", field, f.Source, fi.Mode().Type())
	}
	// Parents, from the top: each must be a directory (created when missing).
	for dir, rest := "", strings.TrimPrefix(path.Dir(f.Path), "/"); rest != ""; {
		elem, tail, _ := strings.Cut(rest, "/")
		dir, rest = dir+"/"+elem, tail
		e, ok := entries[dir]
		if !ok {
			entries[dir] = &entry{dir: true, mode: 0o755, field: field}
			continue
		}
		if !e.dir {
			by := "a fixed entry"
			if e.field != "" {
				by = e.field + ".Path"
			}
			return fmt.Errorf("%s.Path %q: parent %q is a file (%s)", field, f.Path, dir, by)
		}
	}
	entries[f.Path] = &entry{mode: mode, source: f.Source, size: fi.Size(), field: field}
	return nil
}

// writeEntry writes the tar entry of p.
func writeEntry(tw *tar.Writer, p string, e *entry) error {
	hdr := &tar.Header{
		Name:    strings.TrimPrefix(p, "/"),
		Mode:    e.mode,
		Uid:     e.uid,
		Gid:     e.gid,
		ModTime: Epoch,
	}
	if e.dir {
		hdr.Typeflag = tar.TypeDir
		hdr.Name += "/"
		return tw.WriteHeader(hdr)
	}
	hdr.Typeflag = tar.TypeReg
	if e.source == "" {
		hdr.Size = int64(len(e.data))
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("layer entry %q: %w", p, err)
		}
		_, err := tw.Write(e.data)
		return err
	}
	hdr.Size = e.size
	src, err := os.Open(e.source)
	if err != nil {
		return fmt.Errorf("%s.Source %q: %w", e.field, e.source, err)
	}
	defer src.Close()
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("layer entry %q: %w", p, err)
	}
	n, err := io.Copy(tw, io.LimitReader(src, e.size+1))
	if err != nil {
		return fmt.Errorf("%s.Source %q: %w", e.field, e.source, err)
	}
	if n != e.size {
		return fmt.Errorf("%s.Source %q: size changed while building the layer (%d bytes, then %d)", e.field, e.source, e.size, n)
	}
	return nil
}

// userRE matches a config User: "uid", "name", "uid:gid", "name:group".
var userRE = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_.-]*(:[A-Za-z0-9_.][A-Za-z0-9_.-]*)?$`)

// Build builds a single-layer linux/<spec.Architecture> image (runtime.GOARCH when empty) from spec: empty.Image, plus the Layer of spec.Files,
// with spec's Entrypoint, Cmd, User, Env, WorkingDir and Labels in the config, created at Epoch, one history entry.
// The manifest and layer are of Docker media types (schema 2), which containerd and docker load both import.
//
// Besides Layer's errors (prefixed "Spec."), Build rejects a Spec with neither Entrypoint nor Cmd, whose command
// (Entrypoint[0], else Cmd[0]) is an absolute path no File provides or is empty, with a User not of the form
// "uid[:gid]", an Env element without "KEY=", a relative WorkingDir or an empty label key; the error names the
// field and value, e.g. `Spec.Entrypoint[0] "/x": no Spec.Files entry has that Path`.
func Build(spec Spec) (v1.Image, error) {
	if err := validate(spec); err != nil {
		return nil, err
	}
	layer, err := Layer(spec.Files)
	if err != nil {
		return nil, fmt.Errorf("Spec.%w", err)
	}
	img, err := mutate.Append(empty.Image, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: Epoch},
			CreatedBy: "klusterlet-failover internal/ociimage",
			Comment:   fmt.Sprintf("%d files", len(spec.Files)),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("appending layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: Epoch}
	cf.OS = "linux"
	cf.Architecture = runtime.GOARCH
	if spec.Architecture != "" {
		cf.Architecture = spec.Architecture
	}
	cf.Config = v1.Config{
		Entrypoint: clone(spec.Entrypoint),
		Cmd:        clone(spec.Cmd),
		User:       spec.User,
		Env:        clone(spec.Env),
		WorkingDir: spec.WorkingDir,
	}
	if len(spec.Labels) > 0 {
		cf.Config.Labels = make(map[string]string, len(spec.Labels))
		for k, v := range spec.Labels {
			cf.Config.Labels[k] = v
		}
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("setting config: %w", err)
	}
	return img, nil
}

// validate checks spec's config fields; Layer checks the files.
func validate(spec Spec) error {
	field, args := "Spec.Entrypoint", spec.Entrypoint
	if len(args) == 0 {
		field, args = "Spec.Cmd", spec.Cmd
	}
	if len(args) == 0 {
		return fmt.Errorf("Spec has neither Entrypoint nor Cmd: the image would run nothing")
	}
	if args[0] == "" {
		return fmt.Errorf("%s[0] is empty", field)
	}
	if path.IsAbs(args[0]) {
		found := false
		for _, f := range spec.Files {
			found = found || f.Path == args[0]
		}
		if !found {
			return fmt.Errorf("%s[0] %q: no Spec.Files entry has that Path", field, args[0])
		}
	}
	if spec.User != "" && !userRE.MatchString(spec.User) {
		return fmt.Errorf("Spec.User %q: want uid[:gid] (or name[:group]), e.g. %q", spec.User, NonrootUser)
	}
	for i, kv := range spec.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("Spec.Env[%d] %q: want KEY=value", i, kv)
		}
	}
	if spec.WorkingDir != "" && !path.IsAbs(spec.WorkingDir) {
		return fmt.Errorf("Spec.WorkingDir %q: not absolute", spec.WorkingDir)
	}
	for k := range spec.Labels {
		if k == "" {
			return fmt.Errorf("Spec.Labels has an empty key")
		}
	}
	return nil
}

func clone(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}
