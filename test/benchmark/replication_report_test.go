//go:build bench

package benchmark

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Files of the replication scenario's report, in BENCH_OUT_DIR: separate from benchmarks.{md,json}, so that a
// replication-only run leaves the agent figures alone.
const (
	replReportJSON = "benchmarks-replication.json"
	replReportMD   = "benchmarks-replication.md"
)

// replFigure is one measured quantity of the replication scenario.
type replFigure struct {
	ID    string   `json:"id"`
	Title string   `json:"title"`
	Unit  string   `json:"unit"`
	Value *float64 `json:"value,omitempty"`
	// Target is the target as text; Limit, when set, is its upper bound in Unit (pass: Value ≤ Limit).
	Target string   `json:"target,omitempty"`
	Limit  *float64 `json:"limit,omitempty"`
	Pass   *bool    `json:"pass,omitempty"`
	// Failed marks a figure with a target that could not be measured because the target was missed (e.g. more
	// changes than the percentile allows were never observed).
	Failed  bool   `json:"failed,omitempty"`
	Missing string `json:"notMeasured,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// replRequestRow counts one identity's requests to one hub in one phase (audit log).
type replRequestRow struct {
	Hub      string  `json:"hub"`
	Phase    string  `json:"phase"`
	Seconds  float64 `json:"seconds"`
	Requests int     `json:"requests"`
	Reads    int     `json:"reads"`
	Watches  int     `json:"watches"`
	Writes   int     `json:"writes"`
	Errors   int     `json:"errors"`
	PerSec   float64 `json:"requestsPerSecond"`
}

// replBreakdownRow is one verb and resource of the replicator's requests to one hub over the whole run.
type replBreakdownRow struct {
	Hub     string `json:"hub"`
	Request string `json:"request"`
	Count   int    `json:"count"`
}

// replAnchorRow is one ACM backup schedule and the changes it can lose.
type replAnchorRow struct {
	Schedule    string  `json:"schedule"`
	Interval    string  `json:"interval"`
	WorstCaseS  float64 `json:"worstCaseLostChangesSeconds"`
	VersusOurs  float64 `json:"timesOurLagP99,omitempty"`
	Description string  `json:"description"`
}

// replReport is docs/benchmarks-replication.{md,json}.
type replReport struct {
	Date      string             `json:"date"`
	Command   string             `json:"command"`
	Duration  string             `json:"duration,omitempty"`
	Machine   machine            `json:"machine"`
	Versions  map[string]string  `json:"versions"`
	Settings  map[string]string  `json:"settings"`
	Notes     []string           `json:"notes,omitempty"`
	Figures   []*replFigure      `json:"figures"`
	Requests  []replRequestRow   `json:"requests,omitempty"`
	Breakdown []replBreakdownRow `json:"requestBreakdown,omitempty"`
	Anchor    []replAnchorRow    `json:"anchor,omitempty"`
	Analysis  []string           `json:"analysis,omitempty"`
	Method    []string           `json:"method,omitempty"`
	Failure   string             `json:"failure,omitempty"`

	mu     sync.Mutex
	start  time.Time
	outDir string
	byID   map[string]*replFigure
}

func newReplReport(outDir, command string, settings, versions map[string]string) *replReport {
	return &replReport{
		Date: time.Now().UTC().Format(time.RFC3339), Command: command, Machine: describeMachine(),
		Versions: versions, Settings: settings, start: time.Now(), outDir: outDir, byID: map[string]*replFigure{},
	}
}

// declare adds a figure, not measured until set. limit ≤ 0 means no numeric bound.
func (r *replReport) declare(id, title, unit, target string, limit float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := &replFigure{ID: id, Title: title, Unit: unit, Target: target}
	if limit > 0 {
		f.Limit = &limit
	}
	r.byID[id] = f
	r.Figures = append(r.Figures, f)
}

// set records the value of figure id, with an optional detail.
func (r *replReport) set(id string, v float64, detailFormat string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.figure(id)
	f.Value = &v
	f.Missing = ""
	if detailFormat != "" {
		f.Detail = fmt.Sprintf(detailFormat, args...)
	}
}

// missing records why figure id has no value; failed says whether its target is missed all the same.
func (r *replReport) missing(id string, failed bool, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.figure(id)
	if f.Value != nil {
		return
	}
	f.Failed = failed
	if f.Missing == "" {
		f.Missing = fmt.Sprintf(format, args...)
	}
}

// value returns the value of figure id, if measured.
func (r *replReport) value(id string) (float64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.figure(id)
	if f.Value == nil {
		return 0, false
	}
	return *f.Value, true
}

func (r *replReport) figure(id string) *replFigure {
	f, ok := r.byID[id]
	if !ok {
		panic("benchmark: undeclared replication figure " + id)
	}
	return f
}

func (r *replReport) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

func (r *replReport) analysis(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Analysis = append(r.Analysis, fmt.Sprintf(format, args...))
}

func (r *replReport) method(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Method = append(r.Method, fmt.Sprintf(format, args...))
}

func (r *replReport) setRequests(rows []replRequestRow, breakdown []replBreakdownRow) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Requests, r.Breakdown = rows, breakdown
}

func (r *replReport) setAnchor(rows []replAnchorRow) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Anchor = rows
}

func (r *replReport) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Failure == "" {
		r.Failure = fmt.Sprintf(format, args...)
	}
}

// write computes pass/fail and writes both files. It is called at each step, so a run cut short leaves what
// was measured.
func (r *replReport) write() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Duration = time.Since(r.start).Round(time.Second).String()
	r.Machine.LoadAtEnd = loadAverage()
	for _, f := range r.Figures {
		f.Pass = nil
		switch {
		case f.Value != nil && f.Limit != nil:
			pass := *f.Value <= *f.Limit
			f.Pass = &pass
		case f.Value == nil && f.Failed:
			pass := false
			f.Pass = &pass
		}
	}
	if err := os.MkdirAll(r.outDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", r.outDir, err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the replication report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(r.outDir, replReportJSON), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", replReportJSON, err)
	}
	if err := os.WriteFile(filepath.Join(r.outDir, replReportMD), []byte(r.markdown()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", replReportMD, err)
	}
	return nil
}

func (r *replReport) markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Benchmark: the hub-side replicator (`klusterlet-failover replicator`)\n\n")
	w("Generated by `make bench-replication` (hack/bench.sh → test/benchmark, build tag `bench`, scenario `replication`).\n")
	w("Every number below was measured in the run described here, except the ACM backup recovery points, which follow from\n")
	w("ACM's backup design and the schedules named (nothing of ACM ran). A figure that could not be measured says so and why.\n\n")
	w("- Date: %s (run took %s)\n", r.Date, r.Duration)
	w("- Command: `%s`\n", r.Command)
	w("- Machine: %d CPUs (%s), %s GiB memory, kernel %s, %s; load average %s at start, %s at end\n",
		r.Machine.CPUs, r.Machine.CPUModel, r.Machine.MemoryGiB, r.Machine.Kernel, r.Machine.GoVersion, r.Machine.LoadAtStart, r.Machine.LoadAtEnd)
	parts := []string{}
	for _, k := range sortedKeys(r.Versions) {
		parts = append(parts, fmt.Sprintf("%s %s", k, r.Versions[k]))
	}
	w("- Versions: %s\n", strings.Join(parts, "; "))
	parts = parts[:0]
	for _, k := range sortedKeys(r.Settings) {
		parts = append(parts, fmt.Sprintf("%s=%s", k, r.Settings[k]))
	}
	w("- Settings: %s\n\n", strings.Join(parts, ", "))
	if r.Failure != "" {
		w("> **The scenario did not complete:** %s\n\n", r.Failure)
	}
	for _, n := range r.Notes {
		w("> %s\n>\n", n)
	}

	w("\n## Results\n\n| figure | measured | target | pass |\n|---|---|---|---|\n")
	for _, f := range r.Figures {
		measured := "not measured"
		if f.Value != nil {
			measured = fmt.Sprintf("%s %s", replNum(*f.Value), f.Unit)
		} else if f.Missing != "" {
			measured = "not measured: " + f.Missing
		}
		pass := "—"
		if f.Pass != nil {
			pass = "yes"
			if !*f.Pass {
				pass = "**NO**"
			}
		}
		w("| %s | %s | %s | %s |\n", f.Title, measured, f.Target, pass)
	}
	w("\n")
	details := false
	for _, f := range r.Figures {
		if f.Detail != "" {
			if !details {
				w("Details:\n\n")
				details = true
			}
			w("- **%s**: %s\n", f.Title, f.Detail)
		}
	}
	if details {
		w("\n")
	}

	w("## Recovery point: the replicator against ACM's backup (the anchor)\n\n")
	w("ACM's cluster backup (BackupSchedule → Velero) copies the hub's resources on a cron schedule; a passive hub restores\n")
	w("the newest backup and, with syncRestoreWithNewBackups, checks for a newer one every restoreSyncInterval (30 min by\n")
	w("default). A change made on the active hub just after a backup is on the passive hub only after the next backup and the\n")
	w("next restore sync: the changes it can lose when the active hub dies are up to one schedule interval plus 30 min. With\n")
	w("the replicator a change is on the standby hub after the replication lag measured above.\n\n")
	if len(r.Anchor) > 0 {
		w("| ACM backup schedule | interval | changes lost, worst case | × our measured lag p99 |\n|---|---|---|---|\n")
		for _, a := range r.Anchor {
			ratio := "—"
			if a.VersusOurs > 0 {
				ratio = fmt.Sprintf("%.0f×", a.VersusOurs)
			}
			w("| %s | %s | %s | %s |\n", a.Schedule, a.Interval, a.Description, ratio)
		}
		w("\n")
	}

	if len(r.Requests) > 0 {
		w("## Requests to each hub\n\n")
		w("The replicator's own requests (its identity only), from each hub's kube-apiserver audit log; watches are counted when opened.\n\n")
		w("| hub | phase | seconds | requests | reads (get/list) | watches | writes | errors (HTTP ≥ 400) | requests/s |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, row := range r.Requests {
			w("| %s | %s | %.0f | %d | %d | %d | %d | %d | %.1f |\n", row.Hub, row.Phase, row.Seconds, row.Requests, row.Reads,
				row.Watches, row.Writes, row.Errors, row.PerSec)
		}
		w("\n")
		if len(r.Breakdown) > 0 {
			w("Whole run, by verb and resource:\n\n| hub | request | count |\n|---|---|---|\n")
			for _, row := range r.Breakdown {
				w("| %s | %s | %d |\n", row.Hub, row.Request, row.Count)
			}
			w("\n")
		}
	}

	if len(r.Analysis) > 0 {
		w("## Analysis\n\n")
		for _, a := range r.Analysis {
			w("- %s\n", a)
		}
		w("\n")
	}
	if len(r.Method) > 0 {
		w("## Method\n\n")
		for _, m := range r.Method {
			w("%s\n\n", m)
		}
	}
	w("## Not measured\n\n")
	listed := false
	for _, f := range r.Figures {
		if f.Value == nil {
			reason := f.Missing
			if reason == "" {
				reason = "the run ended before it"
			}
			w("- %s: %s\n", f.Title, reason)
			listed = true
		}
	}
	if !listed {
		w("Nothing: every figure was measured.\n")
	}
	return b.String()
}

// replNum formats a figure: three decimals below 1 (lags are milliseconds), else as num.
func replNum(v float64) string {
	if math.Abs(v) < 1 {
		return fmt.Sprintf("%.3f", v)
	}
	return num(v)
}
