//go:build bench

package benchmark

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// agentKind names one of the two agents compared.
type agentKind string

const (
	// ours is klusterlet-failover's `agent failover`.
	ours agentKind = "ours"
	// ocm is OCM's `registration agent` (open-cluster-management.io/ocm v1.2.0).
	ocm agentKind = "ocm"
)

// scenario names, in the order of the report: join, failover, traffic, memory, scale (docs/design.md §8).
const (
	scenarioJoin     = "join"
	scenarioFailover = "failover"
	scenarioTraffic  = "traffic"
	scenarioMemory   = "memory"
	scenarioScale    = "scale"
	// scenarioReplication is the hub-side replicator's scenario; it has its own report
	// (docs/benchmarks-replication.{md,json}, replication_report_test.go).
	scenarioReplication = "replication"
)

// stats summarizes the samples of one figure for one agent.
type stats struct {
	N       int       `json:"n"`
	Median  float64   `json:"median"`
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
	Samples []float64 `json:"samples"`
}

// figure is one measured quantity for both agents.
type figure struct {
	ID       string `json:"id"`
	Scenario string `json:"scenario"`
	Title    string `json:"title"`
	Unit     string `json:"unit"`
	Target   string `json:"target,omitempty"`
	Ours     *stats `json:"ours,omitempty"`
	OCM      *stats `json:"ocm,omitempty"`
	// Ratio is the median of ours divided by the median of OCM's, when both were measured.
	Ratio *float64 `json:"ratioOursToOCM,omitempty"`
	// OursMissing and OCMMissing say why an agent's side has no (or fewer) samples.
	OursMissing string   `json:"oursNotMeasured,omitempty"`
	OCMMissing  string   `json:"ocmNotMeasured,omitempty"`
	Notes       []string `json:"notes,omitempty"`
	// Run is the date of the run that took the samples (one of report.Runs); "" when not measured.
	Run string `json:"run,omitempty"`

	// measuredBy is the scenario whose run takes the samples (Scenario is where the report lists the figure).
	measuredBy string
	samples    map[agentKind][]float64
}

// breakdownRow is one line of a per-request breakdown (hub traffic).
type breakdownRow struct {
	Request string  `json:"request"`
	Ours    float64 `json:"oursPerClusterHour"`
	OCM     float64 `json:"ocmPerClusterHour"`
}

// report is docs/benchmarks.{md,json}.
type report struct {
	Date      string            `json:"date"`
	Command   string            `json:"command"`
	Duration  string            `json:"duration,omitempty"`
	Machine   machine           `json:"machine"`
	Versions  map[string]string `json:"versions"`
	Settings  map[string]string `json:"settings"`
	Notes     []string          `json:"notes"`
	Scenarios map[string]string `json:"scenarioMethods"`
	Figures   []*figure         `json:"figures"`
	Traffic   []breakdownRow    `json:"trafficBreakdown,omitempty"`
	// ScaleRequests are the hub requests per agent while a scale batch joined, by request, one entry per N.
	ScaleRequests []scaleBreakdown `json:"scaleRequestBreakdown,omitempty"`
	// Runs are the runs the figures come from, newest first: the one that wrote the report, and each earlier
	// one whose figures a partial run kept (mergeEarlier). The fields above describe the newest.
	Runs []runInfo `json:"runs,omitempty"`

	// earlier are the reports merged into this one when it is written: the one in outDir before this run
	// started, or for a rendering, those of BENCH_MERGE_FROM.
	earlier []*report

	mu sync.Mutex
	// rerendered is set for a report loaded from benchmarks.json: its date, duration and load stay as measured.
	rerendered bool
	start      time.Time
	outDir     string
	byID       map[string]*figure
	order      []string
	scOrder    []string
}

func newReport(outDir, command string, settings, versions map[string]string) *report {
	return &report{
		Date: time.Now().UTC().Format(time.RFC3339), Command: command, Machine: describeMachine(),
		Versions: versions, Settings: settings, Scenarios: map[string]string{},
		start: time.Now(), outDir: outDir, byID: map[string]*figure{},
	}
}

// loadReport reads benchmarks.json from outDir so that the Markdown can be rendered again from the measured
// samples, without measuring anything.
func loadReport(outDir string) (*report, error) {
	data, err := os.ReadFile(filepath.Join(outDir, "benchmarks.json"))
	if err != nil {
		return nil, fmt.Errorf("reading the report to render again: %w", err)
	}
	r := &report{}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", filepath.Join(outDir, "benchmarks.json"), err)
	}
	r.rerendered, r.outDir, r.byID = true, outDir, map[string]*figure{}
	if r.Scenarios == nil {
		r.Scenarios = map[string]string{}
	}
	for _, f := range r.Figures {
		f.samples = map[agentKind][]float64{}
		if f.Ours != nil {
			f.samples[ours] = f.Ours.Samples
		}
		if f.OCM != nil {
			f.samples[ocm] = f.OCM.Samples
		}
		r.byID[f.ID] = f
	}
	return r, nil
}

// declare adds a figure listed and measured by scenario sc, not measured until samples arrive.
func (r *report) declare(id, sc, title, unit, target string) {
	r.declareMeasuredBy(id, sc, sc, title, unit, target)
}

// declareMeasuredBy adds a figure listed under scenario sc whose samples the run of scenario by takes.
func (r *report) declareMeasuredBy(id, sc, by, title, unit, target string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := &figure{ID: id, Scenario: sc, Title: title, Unit: unit, Target: target, measuredBy: by, samples: map[agentKind][]float64{}}
	r.byID[id] = f
	r.Figures = append(r.Figures, f)
}

// add records one sample of figure id for kind.
func (r *report) add(id string, kind agentKind, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.mustFigure(id)
	f.samples[kind] = append(f.samples[kind], v)
}

// hasValue reports whether figure id has a sample of kind.
func (r *report) hasValue(id string, kind agentKind) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.mustFigure(id).samples[kind]) > 0
}

// missing records why (some of) kind's samples of figure id are missing; the first reason per side wins.
func (r *report) missing(id string, kind agentKind, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.mustFigure(id)
	switch kind {
	case ours:
		if f.OursMissing == "" {
			f.OursMissing = reason
		}
	case ocm:
		if f.OCMMissing == "" {
			f.OCMMissing = reason
		}
	}
}

// missingScenario marks every figure measured by scenario sc without samples on a side as not measured, for
// reason.
func (r *report) missingScenario(sc, reason string) {
	r.mu.Lock()
	ids := []string{}
	for _, f := range r.Figures {
		if f.measuredBy == sc {
			ids = append(ids, f.ID)
		}
	}
	r.mu.Unlock()
	for _, id := range ids {
		for _, k := range []agentKind{ours, ocm} {
			r.mu.Lock()
			n := len(r.byID[id].samples[k])
			r.mu.Unlock()
			if n == 0 {
				r.missing(id, k, reason)
			}
		}
	}
}

// noteScenario adds a note to every figure measured by scenario sc.
func (r *report) noteScenario(sc, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.Figures {
		if f.measuredBy == sc {
			f.Notes = append(f.Notes, fmt.Sprintf(format, args...))
		}
	}
}

// note adds a note to figure id.
func (r *report) note(id, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.mustFigure(id)
	f.Notes = append(f.Notes, fmt.Sprintf(format, args...))
}

// method sets the method description of scenario sc.
func (r *report) method(sc, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Scenarios[sc] = fmt.Sprintf(format, args...)
}

// globalNote adds a note to the whole report.
func (r *report) globalNote(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

func (r *report) mustFigure(id string) *figure {
	f, ok := r.byID[id]
	if !ok {
		panic("benchmark: undeclared figure " + id)
	}
	return f
}

// summarize returns median, min and max of samples (nil for none).
func summarize(samples []float64) *stats {
	if len(samples) == 0 {
		return nil
	}
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return &stats{N: len(s), Median: med, Min: s[0], Max: s[len(s)-1], Samples: samples}
}

// scaleBreakdown is the per-request breakdown of one scale batch size: requests per agent (the batch's count
// divided by N) from the first start to all Available; Ours and OCM of each row hold those per-agent counts.
type scaleBreakdown struct {
	N    int            `json:"n"`
	Rows []breakdownRow `json:"rows"`
}

// setScaleRequests sets the breakdown of batch size n for one agent kind (rows of the other kind are kept).
func (r *report) setScaleRequests(n int, kind agentKind, perAgent map[string]float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := sort.Search(len(r.ScaleRequests), func(i int) bool { return r.ScaleRequests[i].N >= n })
	if i == len(r.ScaleRequests) || r.ScaleRequests[i].N != n {
		r.ScaleRequests = append(r.ScaleRequests, scaleBreakdown{})
		copy(r.ScaleRequests[i+1:], r.ScaleRequests[i:])
		r.ScaleRequests[i] = scaleBreakdown{N: n}
	}
	sb := &r.ScaleRequests[i]
	rows := map[string]breakdownRow{}
	for _, row := range sb.Rows {
		if kind == ours {
			row.Ours = 0
		} else {
			row.OCM = 0
		}
		rows[row.Request] = row
	}
	for req, v := range perAgent {
		row := rows[req]
		row.Request = req
		if kind == ours {
			row.Ours = v
		} else {
			row.OCM = v
		}
		rows[req] = row
	}
	sb.Rows = sb.Rows[:0]
	for _, row := range rows {
		if row.Ours != 0 || row.OCM != 0 {
			sb.Rows = append(sb.Rows, row)
		}
	}
	sort.Slice(sb.Rows, func(a, c int) bool {
		x, y := sb.Rows[a], sb.Rows[c]
		if dx, dy := x.Ours-x.OCM, y.Ours-y.OCM; dx != dy {
			return dx > dy
		}
		return x.Request < y.Request
	})
}

// setTraffic replaces the hub-traffic breakdown table.
func (r *report) setTraffic(rows []breakdownRow) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Traffic = rows
}

// write computes the statistics and writes benchmarks.json and benchmarks.md into the output directory. It is
// called after every scenario, so a run cut short still leaves what was measured.
func (r *report) write() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.rerendered {
		r.Duration = time.Since(r.start).Round(time.Second).String()
		r.Machine.LoadAtEnd = loadAverage()
	}
	// The file holds this run's figures and, for the scenarios it did not measure, the earlier runs' (one report).
	out := r.withEarlier()
	for _, f := range out.Figures {
		f.Ours, f.OCM, f.Ratio = summarize(f.samples[ours]), summarize(f.samples[ocm]), nil
		// A ratio of a negative or zero median (e.g. a failover faster than its timeout) means nothing.
		if f.Ours != nil && f.OCM != nil && f.OCM.Median > 0 && f.Ours.Median >= 0 {
			ratio := f.Ours.Median / f.OCM.Median
			f.Ratio = &ratio
		}
	}
	if err := os.MkdirAll(r.outDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", r.outDir, err)
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(r.outDir, "benchmarks.json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing benchmarks.json: %w", err)
	}
	charts, err := out.writeCharts()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.outDir, "benchmarks.md"), []byte(out.markdown(charts)), 0o644); err != nil {
		return fmt.Errorf("writing benchmarks.md: %w", err)
	}
	return nil
}

// scenarioTitles orders and names the scenarios in the Markdown report, numbered 1–5 in the order of the
// scenario constants.
var scenarioTitles = []struct{ id, title string }{
	{scenarioJoin, "1. Join latency"},
	{scenarioFailover, "2. Failover time"},
	{scenarioTraffic, "3. Hub traffic in steady state"},
	{scenarioMemory, "4. Memory"},
	{scenarioScale, "5. Scale (simulated)"},
	{scenarioPods, "6. Memory as a pod on a node"},
	{scenarioDetection, "7. Hub loss detection by fault"},
	{scenarioMassFailover, "8. Mass failover (a hub lost with all its clusters)"},
	{scenarioHollow, "9. A thousand clusters (hollow agents)"},
}

func (r *report) markdown(charts []chart) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Benchmarks: klusterlet-failover vs OCM's registration agent\n\n")
	w("Generated by `make bench` (hack/bench.sh → test/benchmark, build tag `bench`). One report: a run of some scenarios\n")
	w("(`BENCH_SCENARIOS`) replaces their figures and keeps the others, each with the run that measured it (the\n")
	w("`run` column, and [Runs](#runs) below). A figure that could not be measured says so and why. The replicator's\n")
	w("benchmark (`make bench-replication`) has its report beside this one: [benchmarks-replication.md](benchmarks-replication.md).\n\n")
	w("## Summary\n\n")
	w("Median (min–max, n) per agent; ratio = median ours / median OCM (below 1 means ours is lower).\n\n")
	w("| scenario | figure | ours | OCM | ours/OCM | target | met | run |\n|---|---|---|---|---|---|---|---|\n")
	for _, sc := range scenarioTitles {
		for _, f := range r.Figures {
			if f.Scenario != sc.id {
				continue
			}
			ratio := "—"
			if f.Ratio != nil {
				ratio = fmt.Sprintf("%.2f", *f.Ratio)
			}
			w("| %s | %s | %s | %s | %s | %s | %s | %s |\n", sc.title, f.Title, cell(f.Ours, f.Unit, f.OursMissing),
				cell(f.OCM, f.Unit, f.OCMMissing), ratio, f.Target, ratioTargetMet(f), r.runLabel(f.Run))
		}
	}
	w("\n")
	for _, c := range charts {
		w("![%s](%s)\n\n", c.title, c.file)
	}
	for _, sc := range scenarioTitles {
		w("## %s\n\n", sc.title)
		if m := r.Scenarios[sc.id]; m != "" {
			w("%s\n\n", m)
		}
		for _, f := range r.Figures {
			if f.Scenario != sc.id {
				continue
			}
			if len(f.Notes) == 0 && f.OursMissing == "" && f.OCMMissing == "" && f.Ours == nil && f.OCM == nil {
				continue
			}
			w("- **%s**", f.Title)
			if f.Ours != nil {
				w("; ours samples %s", samplesText(f.Ours.Samples))
			}
			if f.OCM != nil {
				w("; OCM samples %s", samplesText(f.OCM.Samples))
			}
			w("\n")
			switch {
			case f.OursMissing != "" && f.OursMissing == f.OCMMissing:
				w("  - not measured (or fewer samples), both agents: %s\n", f.OursMissing)
			default:
				if f.OursMissing != "" {
					w("  - ours not measured (or fewer samples): %s\n", f.OursMissing)
				}
				if f.OCMMissing != "" {
					w("  - OCM not measured (or fewer samples): %s\n", f.OCMMissing)
				}
			}
			for _, n := range f.Notes {
				w("  - %s\n", n)
			}
		}
		if sc.id == scenarioTraffic && len(r.Traffic) > 0 {
			w("\nRequests per cluster-hour by verb and resource (window scaled to an hour):\n\n")
			w("| request | ours | OCM |\n|---|---|---|\n")
			for _, row := range r.Traffic {
				w("| %s | %.0f | %.0f |\n", row.Request, row.Ours, row.OCM)
			}
		}
		if sc.id == scenarioScale {
			for _, sb := range r.ScaleRequests {
				w("\nHub requests per agent while %d agents joined (first start → all Available; hub audit log, both "+
					"identities of each agent; sorted by how many more ours sent):\n\n", sb.N)
				w("| request | ours | OCM | ours − OCM |\n|---|---|---|---|\n")
				var to, tc float64
				for _, row := range sb.Rows {
					w("| %s | %.1f | %.1f | %+.1f |\n", row.Request, row.Ours, row.OCM, row.Ours-row.OCM)
					to, tc = to+row.Ours, tc+row.OCM
				}
				w("| all | %.1f | %.1f | %+.1f |\n", to, tc, to-tc)
			}
		}
		w("\n")
	}
	w("## Not measured or incomplete\n\n")
	listed := false
	for _, f := range r.Figures {
		for _, side := range []struct {
			name    string
			s       *stats
			missing string
		}{{"ours", f.Ours, f.OursMissing}, {"OCM", f.OCM, f.OCMMissing}} {
			switch {
			case side.s == nil && side.missing == "":
				w("- %s (%s): not measured: the run ended before it\n", f.Title, side.name)
			case side.missing != "":
				w("- %s (%s): %s\n", f.Title, side.name, side.missing)
			default:
				continue
			}
			listed = true
		}
	}
	if !listed {
		w("Nothing: every figure was measured for both agents.\n")
	}
	w("\n## Runs\n\n")
	for _, run := range r.Runs {
		w("### %s\n\n", r.runLabel(run.Date))
		w("- Date: %s (run took %s)\n", run.Date, run.Duration)
		w("- Command: `%s`\n", run.Command)
		w("- Machine: %d CPUs (%s), %s GiB memory, kernel %s, %s; load average %s at start, %s at end\n",
			run.Machine.CPUs, run.Machine.CPUModel, run.Machine.MemoryGiB, run.Machine.Kernel, run.Machine.GoVersion,
			run.Machine.LoadAtStart, run.Machine.LoadAtEnd)
		keys := sortedKeys(run.Versions)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %s", k, run.Versions[k]))
		}
		w("- Versions: %s\n", strings.Join(parts, "; "))
		keys = sortedKeys(run.Settings)
		parts = parts[:0]
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%s", k, run.Settings[k]))
		}
		w("- Settings: %s\n\n", strings.Join(parts, ", "))
		for _, n := range run.Notes {
			w("> %s\n>\n", n)
		}
		w("\n")
	}
	return b.String()
}

// runLabel names the run of date in the report: its start, to the minute, and commit ("2026-12-03 05:59 1a2b3c4"),
// or "—" for none.
func (r *report) runLabel(date string) string {
	if date == "" {
		return "—"
	}
	run, _ := r.runOf(date)
	label := date
	if t, err := time.Parse(time.RFC3339, date); err == nil {
		label = t.UTC().Format("2006-01-02 15:04")
	}
	if run.Commit != "" {
		label += " " + run.Commit
	}
	return label
}

// ratioTargetMet says whether a figure whose target is a bound on the ratio ("≤ 0.6× OCM's…") meets it: "yes",
// "no", or "" for other targets and for figures without a ratio.
func ratioTargetMet(f *figure) string {
	if f.Ratio == nil || !strings.HasPrefix(f.Target, "≤ ") {
		return ""
	}
	bound, rest, ok := strings.Cut(strings.TrimPrefix(f.Target, "≤ "), "×")
	if !ok || !strings.HasPrefix(strings.TrimSpace(rest), "OCM") {
		return ""
	}
	b, err := strconv.ParseFloat(bound, 64)
	if err != nil {
		return ""
	}
	if *f.Ratio <= b {
		return "yes"
	}
	return "no"
}

func cell(s *stats, unit, missing string) string {
	if s == nil {
		return "not measured"
	}
	sep := "–"
	if s.Min < 0 {
		sep = " to " // "-4.61–-4.39" reads badly
	}
	text := fmt.Sprintf("%s %s (%s%s%s, n=%d)", num(s.Median), unit, num(s.Min), sep, num(s.Max), s.N)
	if missing != "" {
		text += " ⚠"
	}
	return text
}

func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// maxSamplesListed is how many samples of a figure the Markdown lists; a figure with more (one per cluster) is
// summed up, and charted.
const maxSamplesListed = 20

func samplesText(samples []float64) string {
	if len(samples) > maxSamplesListed {
		return fmt.Sprintf("(%d samples, in benchmarks.json)", len(samples))
	}
	parts := make([]string, len(samples))
	for i, v := range samples {
		parts[i] = num(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
