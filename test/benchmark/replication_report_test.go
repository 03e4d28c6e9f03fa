//go:build bench

package benchmark

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Files of the replication scenario's report, in BENCH_OUT_DIR: separate from benchmarks.{md,json}, so that a
// replication-only run leaves the agent figures alone. replPreviousJSON, in docs/, is the report of the run the
// figures are compared with (a copy of an earlier benchmarks-replication.json; BENCH_REPL_PREVIOUS overrides it).
const (
	replReportJSON   = "benchmarks-replication.json"
	replReportMD     = "benchmarks-replication.md"
	replPreviousJSON = "benchmarks-replication-previous.json"
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
	// Missing, when set, says why the counts measured nothing (the audit log does not hold the phase, auditGap):
	// the table shows the row as not measured.
	Missing string `json:"notMeasured,omitempty"`
}

// replBreakdownRow is one verb and resource of the replicator's requests to one hub in one phase.
type replBreakdownRow struct {
	Hub     string `json:"hub"`
	Phase   string `json:"phase,omitempty"`
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

// replReportFile is docs/benchmarks-replication.{md,json}: every size of one run side by side, and the figures
// of the previous run (replPreviousJSON) beside them.
type replReportFile struct {
	Date     string            `json:"date"`
	Command  string            `json:"command"`
	Duration string            `json:"duration,omitempty"`
	Machine  machine           `json:"machine"`
	Versions map[string]string `json:"versions"`
	Settings map[string]string `json:"settings"`
	Notes    []string          `json:"notes,omitempty"`
	Sizes    []*replReport     `json:"sizes"`
	Previous *replPrevious     `json:"previous,omitempty"`

	mu     sync.Mutex
	start  time.Time
	outDir string
}

// replPrevious is what the report shows of the previous run: its figures by id.
type replPrevious struct {
	File     string             `json:"file"`
	Date     string             `json:"date"`
	Command  string             `json:"command"`
	Version  string             `json:"version"`
	Shape    string             `json:"shape"`
	Settings map[string]string  `json:"settings,omitempty"`
	Values   map[string]float64 `json:"values"`
	// Titles are the previous run's figure titles, for rows the current run does not declare.
	Titles map[string]string `json:"titles,omitempty"`
	Units  map[string]string `json:"units,omitempty"`
}

// replReport is one size's part of the report: its figures, request counts, analysis and method.
type replReport struct {
	Name      string             `json:"name"`
	Title     string             `json:"title"`
	Duration  string             `json:"duration,omitempty"`
	Notes     []string           `json:"notes,omitempty"`
	Figures   []*replFigure      `json:"figures"`
	Requests  []replRequestRow   `json:"requests,omitempty"`
	Breakdown []replBreakdownRow `json:"requestBreakdown,omitempty"`
	Anchor    []replAnchorRow    `json:"anchor,omitempty"`
	Analysis  []string           `json:"analysis,omitempty"`
	Method    []string           `json:"method,omitempty"`
	Failure   string             `json:"failure,omitempty"`

	mu   sync.Mutex
	file *replReportFile
	byID map[string]*replFigure
	// started and ended bound the size's run (zero until it starts, ends).
	started, ended time.Time
}

// replPreviousAliases maps figure ids of this report to the ids the previous report used for the same
// quantity (it had one standby, hub-b).
var replPreviousAliases = map[string]string{
	"requests_initial_sync_hub-b": "requests_b_initial_sync",
	"requests_per_change_hub-b":   "requests_b_per_change",
}

func newReplReportFile(outDir, command string, settings, versions map[string]string) *replReportFile {
	return &replReportFile{
		Date: time.Now().UTC().Format(time.RFC3339), Command: command, Machine: describeMachine(),
		Versions: versions, Settings: settings, start: time.Now(), outDir: outDir,
	}
}

// addSize adds the part of one size, named name (e.g. 3500x10x2) and titled title.
func (f *replReportFile) addSize(name, title string) *replReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := &replReport{Name: name, Title: title, file: f, byID: map[string]*replFigure{}}
	f.Sizes = append(f.Sizes, r)
	return r
}

func (f *replReportFile) note(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Notes = append(f.Notes, fmt.Sprintf(format, args...))
}

// loadPrevious reads the previous run's report (the single-size format of commit c02ce66, or this format, of
// which it takes the size of the same shape as shape, else the last size). A missing file leaves the previous
// column out and says so.
func (f *replReportFile) loadPrevious(file, shape string) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		f.note("No previous run to compare with: %s does not exist.", file)
		return
	}
	if err != nil {
		f.note("The previous run's report %s could not be read: %v", file, err)
		return
	}
	var raw struct {
		Date     string            `json:"date"`
		Command  string            `json:"command"`
		Versions map[string]string `json:"versions"`
		Settings map[string]string `json:"settings"`
		Figures  []*replFigure     `json:"figures"`
		Sizes    []*replReport     `json:"sizes"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		f.note("The previous run's report %s could not be parsed: %v", file, err)
		return
	}
	p := &replPrevious{File: file, Date: raw.Date, Command: raw.Command, Settings: raw.Settings,
		Values: map[string]float64{}, Titles: map[string]string{}, Units: map[string]string{}}
	for k, v := range raw.Versions {
		if strings.Contains(k, "replicator") {
			p.Version = v
		}
	}
	figures := raw.Figures
	switch {
	case len(raw.Sizes) > 0:
		chosen := raw.Sizes[len(raw.Sizes)-1]
		for _, s := range raw.Sizes {
			if s.Name == shape {
				chosen = s
			}
		}
		figures, p.Shape = chosen.Figures, chosen.Name
	default:
		standbys := "1"
		if v := raw.Settings["BENCH_REPL_STANDBYS"]; v != "" {
			standbys = v
		}
		p.Shape = raw.Settings["BENCH_REPL_CLUSTERS"] + "x" + raw.Settings["BENCH_REPL_WORKS"] + "x" + standbys
	}
	for _, fig := range figures {
		if fig.Value != nil {
			p.Values[fig.ID] = *fig.Value
		}
		p.Titles[fig.ID], p.Units[fig.ID] = fig.Title, fig.Unit
	}
	f.Previous = p
}

// previousValue returns the previous run's value of figure id (or of its alias there).
func (f *replReportFile) previousValue(id string) (float64, bool) {
	if f.Previous == nil {
		return 0, false
	}
	if v, ok := f.Previous.Values[id]; ok {
		return v, true
	}
	v, ok := f.Previous.Values[replPreviousAliases[id]]
	return v, ok
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

// declared reports whether figure id is declared.
func (r *replReport) declared(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.byID[id]
	return ok
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

// addDetail appends text to the detail of figure id.
func (r *replReport) addDetail(id, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.figure(id)
	if f.Detail != "" {
		f.Detail += "; "
	}
	f.Detail += text
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

// write writes the whole report (every size); it is called at each step, so a run cut short leaves what was
// measured.
func (r *replReport) write() error { return r.file.write() }

// write computes pass/fail and writes both files.
func (f *replReportFile) write() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Duration = time.Since(f.start).Round(time.Second).String()
	f.Machine.LoadAtEnd = loadAverage()
	for _, r := range f.Sizes {
		r.mu.Lock()
		defer r.mu.Unlock()
		switch {
		case !r.ended.IsZero():
			r.Duration = r.ended.Sub(r.started).Round(time.Second).String()
		case !r.started.IsZero():
			r.Duration = time.Since(r.started).Round(time.Second).String()
		}
		r.judge()
	}
	if err := os.MkdirAll(f.outDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", f.outDir, err)
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the replication report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(f.outDir, replReportJSON), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", replReportJSON, err)
	}
	if err := os.WriteFile(filepath.Join(f.outDir, replReportMD), []byte(f.markdown()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", replReportMD, err)
	}
	return nil
}

// judge sets every figure's verdict: met when measured within its limit, missed when measured above it or not
// measured because its target was missed (Failed), none otherwise (no target, or not measured). r.mu held.
func (r *replReport) judge() {
	for _, fig := range r.Figures {
		fig.Pass = nil
		switch {
		case fig.Value != nil && fig.Limit != nil:
			pass := *fig.Value <= *fig.Limit
			fig.Pass = &pass
		case fig.Value == nil && fig.Failed:
			pass := false
			fig.Pass = &pass
		}
	}
}

// missingReason is why fig has no value, for the report.
func missingReason(fig *replFigure) string {
	if fig.Missing != "" {
		return fig.Missing
	}
	return "the run ended before it"
}

// targetsLine summarizes the size's targets as judged (judge): "N of M targets met", M counting only the
// targets met or missed, then those missed and those not measured (a figure with a target, no value and no
// verdict: it counts neither way). "" when the size has no target. r.mu held.
func (r *replReport) targetsLine() string {
	var met, missed, unmeasured []string
	for _, fig := range r.Figures {
		switch {
		case fig.Pass != nil && *fig.Pass:
			met = append(met, fig.Title)
		case fig.Pass != nil:
			missed = append(missed, fig.Title)
		case fig.Value == nil && (fig.Limit != nil || fig.Target != ""):
			unmeasured = append(unmeasured, fmt.Sprintf("%s (%s)", fig.Title, missingReason(fig)))
		}
	}
	if len(met)+len(missed)+len(unmeasured) == 0 {
		return ""
	}
	line := fmt.Sprintf("%d of %d targets met", len(met), len(met)+len(missed))
	if len(missed) > 0 {
		line += "; missed: " + strings.Join(missed, "; ")
	}
	if len(unmeasured) > 0 {
		line += "; not measured, counted neither way: " + strings.Join(unmeasured, "; ")
	}
	return line
}

// replRow is one row of the side-by-side results table: a figure id and the first declaration of it.
type replRow struct {
	id, title, unit, target string
}

// rows returns every figure id declared by some size, in the order of first declaration (sizes in order).
func (f *replReportFile) rows() []replRow {
	var out []replRow
	seen := map[string]bool{}
	for _, r := range f.Sizes {
		for _, fig := range r.Figures {
			if !seen[fig.ID] {
				seen[fig.ID] = true
				out = append(out, replRow{id: fig.ID, title: fig.Title, unit: fig.Unit, target: fig.Target})
			}
		}
	}
	return out
}

// cell renders figure id of size r for the results table.
func (r *replReport) cell(id string) string {
	fig, ok := r.byID[id]
	if !ok {
		return "—"
	}
	text := "not measured"
	if fig.Value != nil {
		text = fmt.Sprintf("%s %s", replNum(*fig.Value), fig.Unit)
	}
	if fig.Pass != nil {
		if *fig.Pass {
			text += " ✓"
		} else {
			text += " **✗**"
		}
	}
	return text
}

func (f *replReportFile) markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Benchmark: the hub-side replicator (`klusterlet-failover replicator`)\n\n")
	w("Generated by `make bench-replication` (hack/bench.sh → test/benchmark, build tag `bench`, scenario `replication`).\n")
	w("Every number below was measured in the run described here, except the previous run's column (copied from its\n")
	w("report) and the ACM backup recovery points, which follow from ACM's backup design and the schedules named (nothing\n")
	w("of ACM ran). A figure that could not be measured says so and why. The sizes ran one after the other, each on hubs\n")
	w("of its own that were stopped before the next size started.\n\n")
	w("- Date: %s (run took %s)\n", f.Date, f.Duration)
	w("- Command: `%s`\n", f.Command)
	w("- Machine: %d CPUs (%s), %s GiB memory, kernel %s, %s; load average %s at start, %s at end\n",
		f.Machine.CPUs, f.Machine.CPUModel, f.Machine.MemoryGiB, f.Machine.Kernel, f.Machine.GoVersion, f.Machine.LoadAtStart, f.Machine.LoadAtEnd)
	parts := []string{}
	for _, k := range sortedKeys(f.Versions) {
		parts = append(parts, fmt.Sprintf("%s %s", k, f.Versions[k]))
	}
	w("- Versions: %s\n", strings.Join(parts, "; "))
	parts = parts[:0]
	for _, k := range sortedKeys(f.Settings) {
		parts = append(parts, fmt.Sprintf("%s=%s", k, f.Settings[k]))
	}
	w("- Settings: %s\n", strings.Join(parts, ", "))
	for _, r := range f.Sizes {
		status := "complete"
		switch {
		case r.Failure != "":
			status = "**did not complete**: " + r.Failure
		case r.started.IsZero():
			status = "not run yet"
		case r.ended.IsZero():
			status = "running"
		}
		duration := ""
		if r.Duration != "" {
			duration = fmt.Sprintf(", took %s", r.Duration)
		}
		w("- Size %s (%s%s): %s\n", r.Name, r.Title, duration, status)
	}
	prevHeader := ""
	if p := f.Previous; p != nil {
		prevHeader = fmt.Sprintf("previous run (%s)", p.Shape)
		w("- Previous run: %s, %s, `%s`, %s (from %s)\n", p.Date, p.Version, p.Command, p.Shape, filepath.Base(p.File))
	}
	w("\n")
	for _, n := range f.Notes {
		w("> %s\n>\n", n)
	}

	rows := f.rows()
	w("\n## Results\n\n")
	w("Sizes are written clusters × ManifestWorks per cluster × standby hubs. ✓ / **✗**: the target is met / missed;\n")
	w("a target whose figure was not measured is neither (the size's section says why) and counts in neither number below.\n\n")
	header := "| figure |"
	sep := "|---|"
	for _, r := range f.Sizes {
		header += fmt.Sprintf(" %s |", r.Name)
		sep += "---|"
	}
	if prevHeader != "" {
		header += " " + prevHeader + " |"
		sep += "---|"
	}
	w("%s target |\n%s---|\n", header, sep)
	for _, row := range rows {
		line := fmt.Sprintf("| %s |", row.title)
		for _, r := range f.Sizes {
			line += " " + r.cell(row.id) + " |"
		}
		if prevHeader != "" {
			prev := "—"
			if v, ok := f.previousValue(row.id); ok {
				prev = fmt.Sprintf("%s %s", replNum(v), row.unit)
			}
			line += " " + prev + " |"
		}
		w("%s %s |\n", line, row.target)
	}
	w("\n")
	for _, r := range f.Sizes {
		if line := r.targetsLine(); line != "" {
			w("- **%s**: %s.\n", r.Name, line)
		}
	}
	w("\n")

	w("## Recovery point: the replicator against ACM's backup (the anchor)\n\n")
	w("ACM's cluster backup (BackupSchedule → Velero) copies the hub's resources on a cron schedule; a passive hub restores\n")
	w("the newest backup and, with syncRestoreWithNewBackups, checks for a newer one every restoreSyncInterval (30 min by\n")
	w("default). A change made on the active hub just after a backup is on the passive hub only after the next backup and the\n")
	w("next restore sync: the changes it can lose when the active hub dies are up to one schedule interval plus 30 min. With\n")
	w("the replicator a change is on every standby hub after the replication lag measured above (worst of the three kinds\n")
	w("of change, p99, until the change is on every standby).\n\n")
	var anchorSizes []*replReport
	for _, r := range f.Sizes {
		if len(r.Anchor) > 0 {
			anchorSizes = append(anchorSizes, r)
		}
	}
	if len(anchorSizes) > 0 {
		w("| ACM backup schedule | interval | changes lost, worst case |")
		for _, r := range anchorSizes {
			w(" × our lag p99, %s |", r.Name)
		}
		w("\n|---|---|---|%s\n", strings.Repeat("---|", len(anchorSizes)))
		for i, a := range anchorSizes[0].Anchor {
			w("| %s | %s | %s |", a.Schedule, a.Interval, a.Description)
			for _, r := range anchorSizes {
				ratio := "—"
				if i < len(r.Anchor) && r.Anchor[i].VersusOurs > 0 {
					ratio = fmt.Sprintf("%.0f×", r.Anchor[i].VersusOurs)
				}
				w(" %s |", ratio)
			}
			w("\n")
		}
		w("\n")
	}

	for _, r := range f.Sizes {
		r.markdown(&b)
	}
	return b.String()
}

// markdown writes the size's own section: notes, details, requests, analysis, method and what was not measured.
func (r *replReport) markdown(b *strings.Builder) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## Size %s: %s\n\n", r.Name, r.Title)
	if r.Failure != "" {
		w("> **This size did not complete:** %s\n\n", r.Failure)
	}
	for _, n := range r.Notes {
		w("> %s\n>\n", n)
	}
	if len(r.Notes) > 0 {
		w("\n")
	}
	details := false
	for _, f := range r.Figures {
		if f.Detail != "" {
			if !details {
				w("### Details\n\n")
				details = true
			}
			w("- **%s**: %s\n", f.Title, f.Detail)
		}
	}
	if details {
		w("\n")
	}
	if len(r.Requests) > 0 {
		w("### Requests to each hub\n\n")
		w("The replicator's own requests (its identity only), from each hub's kube-apiserver audit log; watches are counted when\n")
		w("opened. The write floor's client uses the same identity, after the replicator has stopped: its rows are the floor's.\n\n")
		w("| hub | phase | seconds | requests | reads (get/list) | watches | writes | errors (HTTP ≥ 400) | requests/s |\n|---|---|---|---|---|---|---|---|---|\n")
		var gaps []replRequestRow
		for _, row := range r.Requests {
			if row.Missing != "" {
				w("| %s | %s | %.0f | not measured ² | — | — | — | — | — |\n", row.Hub, row.Phase, row.Seconds)
				gaps = append(gaps, row)
				continue
			}
			w("| %s | %s | %.0f | %d | %d | %d | %d | %d | %.1f |\n", row.Hub, row.Phase, row.Seconds, row.Requests, row.Reads,
				row.Watches, row.Writes, row.Errors, row.PerSec)
		}
		w("\n")
		for _, row := range gaps {
			w("² %s, %s: not measured: %s.\n\n", row.Hub, row.Phase, row.Missing)
		}
		if len(r.Breakdown) > 0 {
			w("By verb and resource (the initial sync, the replicator's whole run, and the write floor):\n\n| hub | phase | request | count |\n|---|---|---|---|\n")
			for _, row := range r.Breakdown {
				w("| %s | %s | %s | %d |\n", row.Hub, row.Phase, row.Request, row.Count)
			}
			w("\n")
		}
	}
	if len(r.Analysis) > 0 {
		w("### Analysis\n\n")
		for _, a := range r.Analysis {
			w("- %s\n", a)
		}
		w("\n")
	}
	if len(r.Method) > 0 {
		w("### Method\n\n")
		for _, m := range r.Method {
			w("%s\n\n", m)
		}
	}
	w("### Not measured\n\n")
	listed := false
	for _, f := range r.Figures {
		if f.Value == nil {
			w("- %s: %s\n", f.Title, missingReason(f))
			listed = true
		}
	}
	if !listed {
		w("Nothing: every figure was measured.\n")
	}
	w("\n")
}

// replNum formats a figure: three decimals below 1 (lags are milliseconds), else as num.
func replNum(v float64) string {
	if math.Abs(v) < 1 {
		return fmt.Sprintf("%.3f", v)
	}
	return num(v)
}
