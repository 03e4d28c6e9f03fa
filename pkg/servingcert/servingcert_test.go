package servingcert

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/controller/controllercmd"
	"github.com/spf13/pflag"
	"k8s.io/utils/clock"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/version"
)

// TestUseGenerated: without --config, controllercmd reads the generated configuration and serves with
// its ECDSA certificate (it does not fall back to generating its own); the key file is 0600 and matches the
// certificate.
func TestUseGenerated(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cmdConfig := controllercmd.NewControllerCommandConfig("test", version.Get(), nil, clock.RealClock{})
	cmd := cmdConfig.NewCommandWithContext(context.Background())
	if err := UseGenerated(cmd.Flags()); err != nil {
		t.Fatal(err)
	}
	configFile := cmd.Flags().Lookup("config").Value.String()
	if !strings.HasPrefix(configFile, tmp+string(filepath.Separator)) {
		t.Fatalf("--config = %q, want a file under %s", configFile, tmp)
	}
	_, config, content, err := cmdConfig.Config()
	if err != nil {
		t.Fatalf("controllercmd cannot read %s: %v", configFile, err)
	}
	certFile, keyFile := config.ServingInfo.CertFile, config.ServingInfo.KeyFile
	if _, _, err := cmdConfig.AddDefaultRotationToConfig(config, content); err != nil {
		t.Fatal(err)
	}
	if config.ServingInfo.CertFile != certFile || config.ServingInfo.KeyFile != keyFile || certFile == "" {
		t.Errorf("controllercmd serves with %q/%q, want the generated %q/%q", config.ServingInfo.CertFile, config.ServingInfo.KeyFile, certFile, keyFile)
	}
	if info, err := os.Stat(keyFile); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("key file %s: %v, mode %v; want 0600", keyFile, err, info.Mode().Perm())
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatalf("serving certificate and key do not load as a pair: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pub, ok := leaf.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		t.Errorf("serving key %T, want ECDSA P-256", leaf.PublicKey)
	}
	now := time.Now()
	if !slices.Equal(leaf.DNSNames, []string{"localhost"}) || !slices.Equal(leaf.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) ||
		now.Before(leaf.NotBefore) || now.Add(300*24*time.Hour).After(leaf.NotAfter) {
		t.Errorf("serving certificate DNS %v, usages %v, valid %s to %s; want localhost, server auth, valid now for about a year",
			leaf.DNSNames, leaf.ExtKeyUsage, leaf.NotBefore, leaf.NotAfter)
	}
}

// TestUseGeneratedKeepsTheUsersConfig: a --config given on the command line, or a flag set without
// --config, is left alone and nothing is written.
func TestUseGeneratedKeepsTheUsersConfig(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	flags := pflag.NewFlagSet("test", pflag.ContinueOnError)
	flags.String("config", "", "")
	if err := flags.Set("config", "/etc/agent/config.yaml"); err != nil {
		t.Fatal(err)
	}
	if err := UseGenerated(flags); err != nil {
		t.Fatal(err)
	}
	if got := flags.Lookup("config").Value.String(); got != "/etc/agent/config.yaml" {
		t.Errorf("--config = %q, want the user's", got)
	}
	if err := UseGenerated(pflag.NewFlagSet("none", pflag.ContinueOnError)); err != nil {
		t.Errorf("flag set without --config: %v", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("wrote %d entries into TMPDIR, want none", len(entries))
	}
}
