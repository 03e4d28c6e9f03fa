package framework

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindBinariesDir(t *testing.T) {
	complete := t.TempDir()
	for _, name := range allBinaries() {
		if err := os.WriteFile(filepath.Join(complete, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	partial := t.TempDir()
	if err := os.WriteFile(filepath.Join(partial, BinaryEtcd), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(partial, BinaryKubectl), []byte("not executable"), 0o644); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name        string
		assets      string
		names       []string
		wantDir     string
		wantErrPart []string
	}{
		{name: "complete KUBEBUILDER_ASSETS wins", assets: complete, names: allBinaries(), wantDir: complete},
		{name: "KUBEBUILDER_ASSETS holding the named binaries wins", assets: partial, names: []string{BinaryEtcd}, wantDir: partial},
		{
			name:   "partial KUBEBUILDER_ASSETS and empty cache name what is missing",
			assets: partial,
			names:  allBinaries(),
			wantErrPart: []string{
				"KUBEBUILDER_ASSETS=" + partial + " lacks kube-apiserver, kube-controller-manager, kubectl, kubelet, kube-proxy, kube-scheduler, registration, work, registration-operator, addon",
				"hack/build-test-binaries.sh --check found no cache entry holding kube-apiserver, kube-controller-manager, kubectl, kubelet, kube-proxy, kube-scheduler, etcd,",
				"build them with",
			},
		},
		{
			name:        "a named binary that is not executable is missing",
			assets:      partial,
			names:       []string{BinaryEtcd, BinaryKubectl},
			wantErrPart: []string{"KUBEBUILDER_ASSETS=" + partial + " lacks kubectl;", "found no cache entry holding etcd, kubectl"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvKubebuilderAssets, tc.assets)
			t.Setenv("KF_TEST_BINARIES_CACHE", t.TempDir()) // an empty cache: --check fails
			dir, err := findBinariesDir(tc.names)
			if len(tc.wantErrPart) == 0 {
				if err != nil || dir != tc.wantDir {
					t.Fatalf("findBinariesDir() = %q, %v; want %q, nil", dir, err, tc.wantDir)
				}
				return
			}
			if err == nil {
				t.Fatalf("findBinariesDir() = %q, nil; want an error", dir)
			}
			for _, part := range tc.wantErrPart {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not contain %q", err, part)
				}
			}
		})
	}
}

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "test", "framework", "binaries.go")); err != nil {
		t.Errorf("RepoRoot() = %q, which does not hold test/framework: %v", root, err)
	}
}
