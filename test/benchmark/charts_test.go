//go:build bench

package benchmark

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// chartsDir is the directory, beside benchmarks.md, of the report's charts.
const chartsDir = "benchmarks-charts"

// chart is one SVG of the report: its title (the image's alternative text) and its path relative to the report.
type chart struct {
	title, file string
}

// chartKind is how a chart shows its figures.
type chartKind int

const (
	// perRepetition: one figure, a bar per repetition for each agent, side by side (the spread a median hides).
	perRepetition chartKind = iota
	// medians: several figures of one unit, a bar per figure for each agent (its median).
	medians
	// cdf: one figure whose samples are per cluster, the share of clusters done by each time, one line per agent.
	cdf
)

// chartSpecs are the report's charts, drawn from the figures they name when some of them were measured.
var chartSpecs = []struct {
	file, title string
	kind        chartKind
	// ids are the figures drawn; for a cdf, pattern picks the figure instead: of those matching, the one of
	// the largest agent count (its first number).
	ids     []string
	pattern *regexp.Regexp
}{
	{"failover-total.svg", "Failover time per repetition, hub A's apiserver killed (s): ours beside OCM's", perRepetition,
		[]string{"failover_total"}, nil},
	{"detection.svg", "Fault on hub A to Available on hub B, by fault (s, median)", medians,
		[]string{"detection_available_kill", "detection_available_sigstop", "detection_available_blackhole", "detection_available_linkcut"}, nil},
	{"memory.svg", "Memory (MiB, median): peak and steady resident set, pod working set and anonymous memory", medians,
		[]string{"rss_peak_small", "rss_steady_small", "rss_peak_nodes", "rss_steady_nodes", "pod_working_set", "pod_anon"}, nil},
	{"mass-failover-cdf.svg", "Mass failover (processes): share of clusters Available on hub B by time after hub A's loss", cdf,
		nil, regexp.MustCompile(`^mass_failover_(\d+)_per_cluster$`)},
	{"hollow-failover-cdf.svg", "A thousand clusters (hollow agents): share Available on hub B by time after hub A's loss", cdf,
		nil, regexp.MustCompile(`^hollow_(\d+)_failover_per_cluster$`)},
}

// agentColors are the colors of the two agents in every chart.
var agentColors = map[agentKind]color.Color{
	ours: color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	ocm:  color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
}

// writeCharts draws the charts of chartSpecs whose figures hold samples into outDir/benchmarks-charts, removes
// the ones that have none, and returns those drawn.
func (r *report) writeCharts() ([]chart, error) {
	dir := filepath.Join(r.outDir, chartsDir)
	var out []chart
	for _, spec := range chartSpecs {
		var figs []*figure
		for _, id := range spec.ids {
			if f, ok := r.byID[id]; ok && f.measured() {
				figs = append(figs, f)
			}
		}
		if spec.pattern != nil {
			best := -1
			for _, f := range r.Figures {
				m := spec.pattern.FindStringSubmatch(f.ID)
				if m == nil || !f.measured() {
					continue
				}
				if n, _ := strconv.Atoi(m[1]); n > best {
					best, figs = n, []*figure{f}
				}
			}
		}
		path := filepath.Join(dir, spec.file)
		if len(figs) == 0 {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				return nil, err
			}
			continue
		}
		p := plot.New()
		// The title names the runs the figures come from (one report keeps figures of several runs).
		var runs []string
		for _, f := range figs {
			if label := r.runLabel(f.Run); !slices.Contains(runs, label) {
				runs = append(runs, label)
			}
		}
		p.Title.Text = spec.title + "\nrun " + strings.Join(runs, ", ")
		p.Legend.Top = true
		var err error
		switch spec.kind {
		case perRepetition:
			err = repetitionBars(p, figs[0])
		case medians:
			err = medianBars(p, figs)
		case cdf:
			err = cdfLines(p, figs[0])
		}
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", spec.file, err)
		}
		if spec.kind == cdf {
			p.Legend.Top = false
		} else {
			// Room above the bars for the legend.
			p.Y.Min, p.Y.Max = 0, p.Y.Max*1.3
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := p.Save(18*vg.Centimeter, 10*vg.Centimeter, path); err != nil {
			return nil, fmt.Errorf("chart %s: %w", spec.file, err)
		}
		out = append(out, chart{title: spec.title, file: chartsDir + "/" + spec.file})
	}
	return out, nil
}

// repetitionBars draws f's samples, a bar per repetition for each agent.
func repetitionBars(p *plot.Plot, f *figure) error {
	p.X.Label.Text = "repetition"
	p.Y.Label.Text = f.Unit
	w := vg.Points(10)
	var names []string
	values := map[agentKind]plotter.Values{}
	for _, kind := range []agentKind{ours, ocm} {
		s := f.samples[kind]
		if len(s) > 0 {
			values[kind] = s
		}
		for i := len(names); i < len(s); i++ {
			names = append(names, fmt.Sprint(i+1))
		}
	}
	return agentBars(p, values, w, names)
}

// agentBars adds, for each agent with values, its bars (width w, side by side) and its legend entry, and names
// the x positions.
func agentBars(p *plot.Plot, values map[agentKind]plotter.Values, w vg.Length, names []string) error {
	offset := -w / 2
	for _, kind := range []agentKind{ours, ocm} {
		v, ok := values[kind]
		if !ok {
			continue
		}
		bars, err := plotter.NewBarChart(v, w)
		if err != nil {
			return err
		}
		bars.Color, bars.LineStyle.Width, bars.Offset = agentColors[kind], 0, offset
		offset += w
		p.Add(bars)
		p.Legend.Add(agentName(kind), bars)
	}
	p.NominalX(names...)
	return nil
}

// medianBars draws the median of each figure of figs, a bar for each agent.
func medianBars(p *plot.Plot, figs []*figure) error {
	p.Y.Label.Text = figs[0].Unit
	w := vg.Points(12)
	// Each bar is named by its figure's ID without the part all of them share ("detection_available_kill" → "kill").
	prefix := figs[0].ID
	for _, f := range figs[1:] {
		for !strings.HasPrefix(f.ID, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	prefix = prefix[:strings.LastIndex(prefix, "_")+1]
	names := make([]string, len(figs))
	for i, f := range figs {
		names[i] = strings.TrimPrefix(f.ID, prefix)
	}
	values := map[agentKind]plotter.Values{}
	for _, kind := range []agentKind{ours, ocm} {
		v := make(plotter.Values, len(figs))
		measured := false
		for i, f := range figs {
			if st := summarize(f.samples[kind]); st != nil {
				v[i], measured = st.Median, true
			}
		}
		if measured {
			values[kind] = v
		}
	}
	return agentBars(p, values, w, names)
}

// cdfLines draws, for each agent, the share of f's samples (one per cluster) at or below each value.
func cdfLines(p *plot.Plot, f *figure) error {
	p.X.Label.Text = f.Unit
	p.Y.Label.Text = "share of clusters"
	for _, kind := range []agentKind{ours, ocm} {
		s := slices.Sorted(slices.Values(f.samples[kind]))
		if len(s) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(s))
		for i, v := range s {
			pts[i] = plotter.XY{X: v, Y: float64(i+1) / float64(len(s))}
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = agentColors[kind]
		p.Add(line)
		p.Legend.Add(agentName(kind), line)
	}
	return nil
}

// agentName is an agent's name in charts.
func agentName(kind agentKind) string {
	if kind == ours {
		return "klusterlet-failover"
	}
	return "OCM's agent"
}
