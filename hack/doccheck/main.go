// Command doccheck checks the documentation a user reads (README.md and docs/**/*.md, from the repository root
// it runs in): every relative link resolves — the file or directory exists and, for a Markdown target, the
// #anchor is one of its headings (GitHub's slugs) —, every `make <target>` in code names a target of the
// Makefile, and every --flag in code is one of the product's commands (the klusterlet-failover command tree and
// hollow-agents) or of the external tools listed in externalFlags. It prints each problem as
// file:line: message and exits 1 when there is one. make verify runs it (hack/verify.sh).
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/klusterlet-failover/klusterlet-failover/pkg/cmd"
	"github.com/klusterlet-failover/klusterlet-failover/test/hollow"
)

// externalFlags are flags the documentation names of commands that are not ours, by tool. A prefix ends in "-".
var externalFlags = map[string][]string{
	"kubectl":              {"all", "context", "from-file", "overwrite", "type", "kubeconfig", "namespace", "force", "server-side", "for", "timeout", "output", "selector"},
	"OCM's agents":         {"appliedmanifestwork-eviction-grace-period", "workload-source-config", "auto-approved-csr-users", "grpc-", "deployment-replicas"},
	"library-go":           {"leader-election-", "listen", "terminate-on-files", "config"},
	"hack/install scripts": {"check"},
	"kube-proxy":           {"cleanup"},
	// docs/install.md's examples of unknown flags that `registration agent` refuses or ignores.
	"unknown to the agent": {"registration-driver", "name"},
}

var (
	linkRE     = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	codeSpanRE = regexp.MustCompile("`[^`]+`")
	makeRE     = regexp.MustCompile(`(?:^|[\s;&|(])make\s+([a-z][a-z0-9-]*)`)
	flagRE     = regexp.MustCompile(`(?:^|[\s\[=(])--([a-z][a-z0-9-]*)`)
	targetRE   = regexp.MustCompile(`^([a-zA-Z0-9_-]+):`)
)

func main() {
	files := []string{"README.md"}
	if err := filepath.WalkDir("docs", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	targets, err := makeTargets("Makefile")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	flags := productFlags()
	var problems []string
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		p, err := checkFile(f, targets, flags, anchors)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		problems = append(problems, p...)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Printf("doccheck: %d problems in README.md and docs/\n", len(problems))
		os.Exit(1)
	}
}

// checkFile returns the problems of the Markdown file path. anchors caches the heading slugs of the files read.
func checkFile(path string, targets, flags map[string]bool, anchors map[string]map[string]bool) ([]string, error) {
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	var problems []string
	inFence := false
	for i, line := range lines {
		at := fmt.Sprintf("%s:%d", path, i+1)
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		var code []string
		if inFence {
			// A shell comment in a code block is prose ("# make sure …").
			if !strings.HasPrefix(strings.TrimSpace(line), "#") {
				code = []string{line}
			}
		} else {
			code = codeSpanRE.FindAllString(line, -1)
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				if msg := checkLink(path, m[1], anchors); msg != "" {
					problems = append(problems, at+": "+msg)
				}
			}
		}
		for _, c := range code {
			c = strings.Trim(c, "`")
			for _, m := range makeRE.FindAllStringSubmatch(c, -1) {
				if !targets[m[1]] {
					problems = append(problems, fmt.Sprintf("%s: make %s: no such target in the Makefile", at, m[1]))
				}
			}
			for _, m := range flagRE.FindAllStringSubmatch(c, -1) {
				if !knownFlag(m[1], flags) {
					problems = append(problems, fmt.Sprintf("%s: --%s: not a flag of klusterlet-failover, hollow-agents or a tool doccheck knows", at, m[1]))
				}
			}
		}
	}
	return problems, nil
}

// checkLink returns what is wrong with link, found in file from: "" when it is external or resolves.
func checkLink(from, link string, anchors map[string]map[string]bool) string {
	if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
		return ""
	}
	target, anchor, _ := strings.Cut(link, "#")
	path := from
	if target != "" {
		path = filepath.Join(filepath.Dir(from), filepath.FromSlash(target))
		if _, err := os.Stat(path); err != nil {
			return fmt.Sprintf("link %s: %s does not exist", link, path)
		}
	}
	if anchor == "" || !strings.HasSuffix(path, ".md") {
		return ""
	}
	slugs, ok := anchors[path]
	if !ok {
		lines, err := readLines(path)
		if err != nil {
			return fmt.Sprintf("link %s: %v", link, err)
		}
		slugs = headingSlugs(lines)
		anchors[path] = slugs
	}
	if !slugs[anchor] {
		return fmt.Sprintf("link %s: %s has no heading #%s", link, path, anchor)
	}
	return ""
}

// headingSlugs returns the anchors GitHub gives the headings of a Markdown file: lower case, characters other
// than letters, digits, spaces, hyphens and underscores dropped, spaces made hyphens; a repeated slug gets -1,
// -2, … Headings inside fenced code are not headings.
func headingSlugs(lines []string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// knownFlag reports whether name (without "--") is a flag of ours or of an external tool listed.
func knownFlag(name string, flags map[string]bool) bool {
	if flags[name] {
		return true
	}
	for _, list := range externalFlags {
		for _, f := range list {
			if f == name || (strings.HasSuffix(f, "-") && strings.HasPrefix(name, f)) {
				return true
			}
		}
	}
	return false
}

// productFlags returns the names of every flag of the klusterlet-failover command tree and of hollow-agents.
func productFlags() map[string]bool {
	out := map[string]bool{}
	add := func(fs *pflag.FlagSet) { fs.VisitAll(func(f *pflag.Flag) { out[f.Name] = true }) }
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		add(c.Flags())
		add(c.PersistentFlags())
		add(c.InheritedFlags())
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd.NewRootCommand())
	var o hollow.Options
	fs := pflag.NewFlagSet("hollow-agents", pflag.ContinueOnError)
	o.AddFlags(fs)
	add(fs)
	return out
}

// makeTargets returns the targets the Makefile defines.
func makeTargets(path string) (map[string]bool, error) {
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, l := range lines {
		if m := targetRE.FindStringSubmatch(l); m != nil {
			out[m[1]] = true
		}
	}
	return out, nil
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1024*1024), 1024*1024)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	return lines, s.Err()
}
