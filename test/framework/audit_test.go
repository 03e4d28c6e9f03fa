package framework

import (
	"os"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAuditFlags(t *testing.T) {
	if flags, path := auditFlags(t, "hub-x", nil); flags != nil || path != "" {
		t.Fatalf("auditFlags(nil) = %v, %q; want no flags and no path", flags, path)
	}
	policy := []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n")
	flags, path := auditFlags(t, "hub-x", policy)
	got := map[string]string{}
	for _, f := range flags {
		got[f.name] = f.value
	}
	if got["audit-log-path"] != path || path == "" {
		t.Errorf("audit-log-path = %q, returned path %q; want equal and not empty", got["audit-log-path"], path)
	}
	written, err := os.ReadFile(got["audit-policy-file"])
	if err != nil {
		t.Fatalf("reading the policy file: %v", err)
	}
	if diff := cmp.Diff(string(policy), string(written)); diff != "" {
		t.Errorf("policy file (-want +got):\n%s", diff)
	}
	if got["audit-log-format"] != "json" || got["audit-log-mode"] != "blocking" {
		t.Errorf("format/mode = %q/%q; want json/blocking", got["audit-log-format"], got["audit-log-mode"])
	}
	// 0 is lumberjack's default of 100 MB: a benchmark's audit file would rotate and its readers miss events.
	if size, err := strconv.Atoi(got["audit-log-maxsize"]); err != nil || size < 100_000 {
		t.Errorf("audit-log-maxsize = %q; want at least 100000 (MB), so that the file never rotates", got["audit-log-maxsize"])
	}
}
