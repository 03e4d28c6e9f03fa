//go:build bench

package benchmark

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
)

// skippedReason is why a scenario left out of BENCH_SCENARIOS has no figures in a run: never a reason to drop an
// earlier run's samples.
const skippedReason = "skipped: not in BENCH_SCENARIOS"

// runInfo is one run of `make bench` some figure of the report comes from: when, how, on what, at which commit.
type runInfo struct {
	Date     string            `json:"date"`
	Command  string            `json:"command"`
	Duration string            `json:"duration,omitempty"`
	Commit   string            `json:"commit,omitempty"`
	Machine  machine           `json:"machine"`
	Versions map[string]string `json:"versions,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	Notes    []string          `json:"notes,omitempty"`
}

// commitRE finds the commit in the version string of our binary ("klusterlet-failover v… (commit 1a2b3c4, …").
var commitRE = regexp.MustCompile(`commit ([0-9a-f]{7,40})`)

// thisRun describes r's own run, from its top-level fields.
func (r *report) thisRun() runInfo {
	run := runInfo{Date: r.Date, Command: r.Command, Duration: r.Duration, Machine: r.Machine, Versions: r.Versions,
		Settings: r.Settings, Notes: r.Notes}
	for _, v := range r.Versions {
		if m := commitRE.FindStringSubmatch(v); m != nil {
			run.Commit = m[1]
		}
	}
	return run
}

// measured reports whether f holds samples of either agent.
func (f *figure) measured() bool {
	return len(f.samples[ours]) > 0 || len(f.samples[ocm]) > 0
}

// withEarlier returns a copy of r merged with the earlier reports r.earlier (mergeEarlier); r itself, whose
// figures the scenarios under way still add samples to, is not changed.
func (r *report) withEarlier() *report {
	out := &report{Date: r.Date, Command: r.Command, Duration: r.Duration, Machine: r.Machine, Versions: r.Versions,
		Settings: r.Settings, Notes: r.Notes, Scenarios: maps.Clone(r.Scenarios), Traffic: r.Traffic,
		ScaleRequests: r.ScaleRequests, Runs: slices.Clone(r.Runs), rerendered: r.rerendered, outDir: r.outDir,
		byID: map[string]*figure{}}
	if out.Scenarios == nil {
		out.Scenarios = map[string]string{}
	}
	for _, f := range r.Figures {
		c := *f
		c.samples = map[agentKind][]float64{ours: slices.Clone(f.samples[ours]), ocm: slices.Clone(f.samples[ocm])}
		c.Notes = slices.Clone(f.Notes)
		out.Figures = append(out.Figures, &c)
		out.byID[c.ID] = &c
	}
	out.mergeEarlier(r.earlier...)
	return out
}

// mergeEarlier folds into r, the report of the run under way (or one loaded to render again), the figures of
// earlier reports: for each figure, the newest run that measured it (took samples) wins, so a partial run
// replaces the figures of its scenarios and keeps the others, each with the run it comes from (figure.Run,
// listed in r.Runs). A figure the newest run tried and could not measure keeps the earlier samples, with the
// newer run's reason as a note. The scenario methods, the traffic and scale request breakdowns come with the
// run their scenario's figures come from. Reports whose runs r already lists are skipped.
func (r *report) mergeEarlier(earlier ...*report) {
	runs := map[string]runInfo{}
	for _, run := range r.Runs {
		runs[run.Date] = run
	}
	if _, ok := runs[r.Date]; !ok {
		runs[r.Date] = r.thisRun()
	}
	for _, f := range r.Figures {
		if f.Run == "" && f.measured() {
			f.Run = r.Date
		}
	}
	for _, e := range earlier {
		if e == nil {
			continue
		}
		for _, run := range e.Runs {
			if _, ok := runs[run.Date]; !ok {
				runs[run.Date] = run
			}
		}
		if _, ok := runs[e.Date]; !ok && len(e.Runs) == 0 {
			runs[e.Date] = e.thisRun()
		}
		for _, old := range e.Figures {
			if old.Run == "" {
				old.Run = e.Date
			}
			if !old.measured() {
				continue
			}
			cur, ok := r.byID[old.ID]
			switch {
			case !ok:
				r.Figures = append(r.Figures, old)
				r.byID[old.ID] = old
			case !cur.measured():
				kept := *old
				kept.measuredBy = cur.measuredBy
				kept.Notes = slices.Clone(old.Notes)
				for _, side := range []struct{ name, reason string }{{"ours", cur.OursMissing}, {"OCM", cur.OCMMissing}} {
					if side.reason != "" && side.reason != skippedReason {
						kept.Notes = append(kept.Notes, fmt.Sprintf("not measured again on %s (%s): %s", r.Date, side.name, side.reason))
					}
				}
				*cur = kept
			case cur.Run < old.Run && cur.Run != r.Date:
				// An earlier report of a later run (BENCH_MERGE_FROM); never over the run under way.
				measuredBy := cur.measuredBy
				*cur = *old
				cur.measuredBy = measuredBy
			default:
				continue
			}
			if m := e.Scenarios[old.Scenario]; m != "" && !r.scenarioMeasuredIn(old.Scenario, r.Date) {
				r.Scenarios[old.Scenario] = m
			}
		}
		// The breakdown tables come with the run their scenario's figures come from.
		if run := scenarioRun(r, scenarioTraffic); run != r.Date && run != "" && run == scenarioRun(e, scenarioTraffic) {
			r.Traffic = e.Traffic
		}
		if run := scenarioRun(r, scenarioScale); run != r.Date && run != "" && run == scenarioRun(e, scenarioScale) {
			r.ScaleRequests = e.ScaleRequests
		}
	}
	// The runs still referenced, newest first.
	used := map[string]bool{}
	for _, f := range r.Figures {
		if f.Run != "" {
			used[f.Run] = true
		}
	}
	r.Runs = r.Runs[:0]
	for date, run := range runs {
		if used[date] || date == r.Date {
			r.Runs = append(r.Runs, run)
		}
	}
	sort.Slice(r.Runs, func(i, j int) bool { return r.Runs[i].Date > r.Runs[j].Date })
}

// scenarioRun returns the run of the first measured figure of scenario sc in rep ("" for none).
func scenarioRun(rep *report, sc string) string {
	for _, f := range rep.Figures {
		if f.Scenario == sc && f.measured() {
			if f.Run != "" {
				return f.Run
			}
			return rep.Date
		}
	}
	return ""
}

// scenarioMeasuredIn reports whether some figure of scenario sc comes from the run of date.
func (r *report) scenarioMeasuredIn(sc, date string) bool {
	for _, f := range r.Figures {
		if f.Scenario == sc && f.Run == date {
			return true
		}
	}
	return false
}

// runOf returns the run of date among r.Runs.
func (r *report) runOf(date string) (runInfo, bool) {
	for _, run := range r.Runs {
		if run.Date == date {
			return run, true
		}
	}
	return runInfo{}, false
}

// loadEarlier returns the report in outDir (nil when there is none yet).
func loadEarlier(outDir string) (*report, error) {
	e, err := loadReport(outDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return e, err
}

// loadReports loads the report of each directory of dirs (BENCH_MERGE_FROM).
func loadReports(dirs []string) ([]*report, error) {
	var out []*report
	for _, d := range dirs {
		e, err := loadReport(filepath.Clean(d))
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
