// Package monitoring holds the PrometheusRules of klusterlet-failover's alerts (the replicator's and the
// agent's); its test runs promtool's rule unit tests on them.
package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestAlertRules checks the PrometheusRules (replicator-rules.yaml, agent-rules.yaml) with promtool: their groups,
// written as one Prometheus rule file, must pass `promtool check rules` (every expression parses, every alert has a summary and a
// description) and the unit tests of testdata/alerts-test.yaml (each alert fires on what should raise it and not on
// what should not). promtool is $PROMTOOL, else the one on PATH; make test installs it (hack/install-promtool.sh,
// from Debian's prometheus package).
func TestAlertRules(t *testing.T) {
	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		path, err := exec.LookPath("promtool")
		if err != nil {
			t.Fatalf("promtool not found ($PROMTOOL unset, none on PATH): run PROMTOOL=$(hack/install-promtool.sh) go test ./manifests/monitoring/ (make test does)")
		}
		promtool = path
	}
	var groups []map[string]any
	for _, file := range []string{"replicator-rules.yaml", "agent-rules.yaml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var rule struct {
			APIVersion string         `json:"apiVersion"`
			Kind       string         `json:"kind"`
			Metadata   map[string]any `json:"metadata"`
			Spec       struct {
				Groups []map[string]any `json:"groups"`
			} `json:"spec"`
		}
		if err := yaml.UnmarshalStrict(data, &rule); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if rule.APIVersion != "monitoring.coreos.com/v1" || rule.Kind != "PrometheusRule" || len(rule.Spec.Groups) == 0 {
			t.Fatalf("%s: %s %s with %d groups, want a monitoring.coreos.com/v1 PrometheusRule with groups", file, rule.APIVersion, rule.Kind, len(rule.Spec.Groups))
		}
		groups = append(groups, rule.Spec.Groups...)
	}
	rules, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("testdata", "alerts-test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, content := range map[string][]byte{"rules.yaml": rules, "alerts-test.yaml": tests} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "alerts-test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
