package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckFile: a broken link, a missing anchor, an unknown make target and an unknown flag are each reported;
// links to a file, a directory and a heading (of another file and of the same one), a known target and flags of
// ours and of kubectl are not.
func TestCheckFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("docs/other.md", "# Other page\n\n## Hot standby credentials\n\n```sh\n# not a heading\n```\n")
	good := write("good.md", "# Top\n\nSee [the page](docs/other.md#hot-standby-credentials), [docs](docs/), [top](#top).\n"+
		"Run `make test` and `klusterlet-failover agent failover --cluster-name c1`; `kubectl get ns --all`.\n"+
		"```sh\n# make sure the --cache is warm\nmake verify\nhollow-agents --shards 3\n```\nPlain text make anything --anything is prose.\n")
	bad := write("bad.md", "# Bad\n\n[gone](docs/missing.md), [anchor](docs/other.md#not-a-heading), [code](docs/other.md#not-a-heading-1).\n"+
		"Run `make nothing` with `--no-such-flag`.\n")
	targets := map[string]bool{"test": true, "verify": true}
	flags := productFlags()
	if got, err := checkFile(good, targets, flags, map[string]map[string]bool{}); err != nil || len(got) != 0 {
		t.Errorf("problems of a good file: %q (err %v), want none", got, err)
	}
	got, err := checkFile(bad, targets, flags, map[string]map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"docs/missing.md does not exist", "has no heading #not-a-heading", "has no heading #not-a-heading-1",
		"make nothing: no such target", "--no-such-flag: not a flag"}
	if len(got) != len(want) {
		t.Errorf("problems of a bad file: %q, want %d", got, len(want))
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.Contains(g, w)
		}
		if !found {
			t.Errorf("no problem %q among %q", w, got)
		}
	}
}

// TestHeadingSlugs: GitHub's anchors, with punctuation dropped and repeats numbered.
func TestHeadingSlugs(t *testing.T) {
	got := headingSlugs([]string{"# Events, metrics and alerts", "## In step: the agent joins a hub", "## Notes", "## Notes", "### `make chaos` (seeds)"})
	for _, want := range []string{"events-metrics-and-alerts", "in-step-the-agent-joins-a-hub", "notes", "notes-1", "make-chaos-seeds"} {
		if !got[want] {
			t.Errorf("no slug %q in %v", want, got)
		}
	}
}
