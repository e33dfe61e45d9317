// The plots benchtable draws from a run's results, as SVG written here (no
// plotting library or service): bar charts of one figure per
// implementation, and line charts of figures against a parameter.
package main

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
)

// plotFile is one SVG file to write.
type plotFile struct {
	name string // file name, no directory
	svg  string
}

// plots returns the SVG files drawn from results: E1's messages per second
// and CPU per message per server (bench-e1.svg), the same for E1 at 1 and 2
// reactors or event loops (bench-e1-scaling.svg), T1's wall time against
// the number of timers (bench-t1.svg), and L1's lateness distribution
// (bench-l1.svg). A plot whose results are missing is left out.
func plots(results []Result) []plotFile {
	byWorkload := func(w string) []Result {
		var rs []Result
		for _, r := range results {
			if r.Workload == w {
				rs = append(rs, r)
			}
		}
		return rs
	}
	e1Panels := []panel{
		{key: "msgs_per_s", title: "messages per second (more is better)"},
		{key: "server_cpu_us_per_msg", title: "server CPU µs per message (less is better)"},
	}
	var out []plotFile
	if rs := byWorkload("E1"); len(rs) > 0 {
		out = append(out, plotFile{"bench-e1.svg", barPanels("E1 echo, 50 connections, 1 KiB ping-pong", rs, e1Panels)})
	}
	if rs := byWorkload("E1@scale"); len(rs) > 0 {
		out = append(out, plotFile{"bench-e1-scaling.svg", barPanels("E1 at 1 and 2 reactors / event loops (SO_REUSEPORT)", rs, e1Panels)})
	}
	if s := t1Series(results); len(s) > 0 {
		out = append(out, plotFile{"bench-t1.svg", lineChart(chart{
			title: "T1 wall time against one-shot timers in [0,100) ms", xLabel: "timers",
			yLabel: "wall time, s", logX: true, logY: true, series: s,
		})})
	}
	if s := l1Series(byWorkload("L1")); len(s) > 0 {
		out = append(out, plotFile{"bench-l1.svg", lineChart(chart{
			title: "L1 timer lateness, 10,000 timers in [0,20) ms (cumulative)", xLabel: "fired this long after the timeout, µs",
			yLabel: "fraction of timers", series: s,
		})})
	}
	return out
}

// t1Series is T1's wall time in seconds per implementation against the
// timer count, from the workloads T1@1e4, T1@1e5 and T1 (10⁶ timers).
func t1Series(results []Result) []series {
	counts := map[string]float64{"T1@1e4": 1e4, "T1@1e5": 1e5, "T1": 1e6}
	var out []series
	for _, r := range results {
		n, ok := counts[r.Workload]
		wall, ok2 := r.metric("wall_ns")
		if !ok || !ok2 {
			continue
		}
		i := slices.IndexFunc(out, func(s series) bool { return s.name == r.Impl })
		if i < 0 {
			out = append(out, series{name: r.Impl})
			i = len(out) - 1
		}
		out[i].points = append(out[i].points, point{n, wall / 1e9})
	}
	for i := range out {
		slices.SortFunc(out[i].points, func(a, b point) int { return int(a.x - b.x) })
	}
	return out
}

// l1Quantiles are the keys of an L1 line that are quantiles of the
// lateness, with their fraction.
var l1Quantiles = []struct {
	key string
	q   float64
}{
	{"min_us", 0}, {"p10_us", 0.1}, {"p25_us", 0.25}, {"p50_us", 0.5},
	{"p75_us", 0.75}, {"p90_us", 0.9}, {"p99_us", 0.99}, {"max_us", 1},
}

// l1Series is each implementation's lateness distribution: the fraction of
// timers (y) that fired at most x µs after their timeout.
func l1Series(rs []Result) []series {
	var out []series
	for _, r := range rs {
		s := series{name: r.Impl}
		for _, q := range l1Quantiles {
			if v, ok := r.metric(q.key); ok {
				s.points = append(s.points, point{v, q.q})
			}
		}
		if len(s.points) > 1 {
			out = append(out, s)
		}
	}
	return out
}

// Layout of every plot, in SVG user units.
const (
	plotWidth  = 720
	marginLeft = 150
	rowHeight  = 22
	titleSpace = 40
	fontStyle  = `font-family="sans-serif" font-size="12"`
)

// colors are the series' colors, in order; ours are drawn in the first.
var colors = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// barColor is the color of an implementation's bar: ours blue, raw C
// libuv's grey, the other comparators orange.
func barColor(impl string) string {
	switch {
	case strings.HasPrefix(impl, oursPrefix):
		return colors[0]
	case impl == baselineImpl:
		return colors[7]
	}
	return colors[1]
}

// panel is one bar chart of a barPanels plot: the metric key and the
// panel's title.
type panel struct{ key, title string }

// barPanels draws one horizontal bar chart per panel, stacked, each with a
// bar per result (those that have the panel's metric), the value printed at
// the bar's end.
func barPanels(title string, rs []Result, panels []panel) string {
	var body strings.Builder
	y := titleSpace
	for _, p := range panels {
		var labels []string
		var values []float64
		for _, r := range rs {
			if v, ok := r.metric(p.key); ok {
				labels = append(labels, r.Impl)
				values = append(values, v)
			}
		}
		if len(values) == 0 {
			continue
		}
		fmt.Fprintf(&body, `<text x="%d" y="%d" %s font-weight="bold">%s</text>`+"\n", marginLeft, y, fontStyle, html.EscapeString(p.title))
		y += 8
		top := slices.Max(values)
		if top <= 0 {
			top = 1
		}
		barSpace := float64(plotWidth - marginLeft - 90)
		for i, v := range values {
			w := math.Max(0, v/top*barSpace)
			fmt.Fprintf(&body, `<text x="%d" y="%d" %s text-anchor="end">%s</text>`+"\n", marginLeft-6, y+15, fontStyle, html.EscapeString(labels[i]))
			fmt.Fprintf(&body, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", marginLeft, y+3, w, rowHeight-6, barColor(labels[i]))
			fmt.Fprintf(&body, `<text x="%.1f" y="%d" %s>%s</text>`+"\n", float64(marginLeft)+w+4, y+15, fontStyle, formatShort(v))
			y += rowHeight
		}
		y += 24
	}
	return svgDocument(title, y, body.String())
}

// point is one point of a series; series is one line of a lineChart.
type point struct{ x, y float64 }

type series struct {
	name   string
	points []point
}

// chart is a line chart: series drawn against shared axes, logarithmic where
// asked.
type chart struct {
	title, xLabel, yLabel string
	logX, logY            bool
	series                []series
}

// lineChart draws c: axes with ticks, one polyline with markers per series,
// and a legend.
func lineChart(c chart) string {
	const height, plotTop, plotBottom, left, right = 420, titleSpace + 10, 360, 80, plotWidth - 170
	tx := func(v float64) float64 { return v }
	ty := tx
	if c.logX {
		tx = math.Log10
	}
	if c.logY {
		ty = math.Log10
	}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.series {
		for _, p := range s.points {
			xmin, xmax = math.Min(xmin, tx(p.x)), math.Max(xmax, tx(p.x))
			ymin, ymax = math.Min(ymin, ty(p.y)), math.Max(ymax, ty(p.y))
		}
	}
	if !c.logY && ymin > 0 {
		ymin = 0
	}
	xmin, xmax = widen(xmin, xmax, c.logX)
	ymin, ymax = widen(ymin, ymax, c.logY)
	sx := func(v float64) float64 { return left + (tx(v)-xmin)/(xmax-xmin)*(right-left) }
	sy := func(v float64) float64 { return plotBottom - (ty(v)-ymin)/(ymax-ymin)*(plotBottom-plotTop) }

	var b strings.Builder
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", left, plotTop, right-left, plotBottom-plotTop)
	for _, t := range ticks(xmin, xmax, c.logX) {
		x := sx(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, plotTop, x, plotBottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" %s text-anchor="middle">%s</text>`+"\n", x, plotBottom+16, fontStyle, formatShort(t))
	}
	for _, t := range ticks(ymin, ymax, c.logY) {
		y := sy(t)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, y, right, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" %s text-anchor="end">%s</text>`+"\n", left-6, y+4, fontStyle, formatShort(t))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" %s text-anchor="middle">%s</text>`+"\n", (left+right)/2, plotBottom+36, fontStyle, html.EscapeString(c.xLabel))
	fmt.Fprintf(&b, `<text x="16" y="%d" %s text-anchor="middle" transform="rotate(-90 16 %d)">%s</text>`+"\n",
		(plotTop+plotBottom)/2, fontStyle, (plotTop+plotBottom)/2, html.EscapeString(c.yLabel))
	for i, s := range c.series {
		color := colors[i%len(colors)]
		var pts []string
		for _, p := range s.points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", sx(p.x), sy(p.y)))
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), color)
		for _, p := range s.points {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", sx(p.x), sy(p.y), color)
		}
		ly := plotTop + 10 + i*20
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", right+12, ly, right+32, ly, color)
		fmt.Fprintf(&b, `<text x="%d" y="%d" %s>%s</text>`+"\n", right+38, ly+4, fontStyle, html.EscapeString(s.name))
	}
	return svgDocument(c.title, height, b.String())
}

// widen returns [lo, hi] made a little wider (a decade for a logarithmic
// axis's exact bounds), never empty.
func widen(lo, hi float64, log bool) (float64, float64) {
	if log {
		return math.Floor(lo), math.Max(math.Ceil(hi), math.Floor(lo)+1)
	}
	if hi <= lo {
		return lo - 1, lo + 1
	}
	pad := (hi - lo) * 0.05
	if lo == 0 {
		return 0, hi + pad
	}
	return lo - pad, hi + pad
}

// ticks returns the tick values of an axis from lo to hi, as data values:
// each power of ten on a logarithmic axis (lo and hi are its exponents),
// else about six round values.
func ticks(lo, hi float64, log bool) []float64 {
	var out []float64
	if log {
		for e := math.Ceil(lo); e <= hi; e++ {
			out = append(out, math.Pow(10, e))
		}
		return out
	}
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/6)))
	for _, m := range []float64{1, 2, 5, 10} {
		if (hi-lo)/(step*m) <= 8 {
			step *= m
			break
		}
	}
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		out = append(out, v)
	}
	return out
}

// formatShort prints v in a few significant digits, with k and M for
// thousands and millions.
func formatShort(v float64) string {
	if v == 0 {
		v = 0 // not -0
	}
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return trimZeros(fmt.Sprintf("%.2f", v/1e6)) + "M"
	case a >= 1e4:
		return trimZeros(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case a >= 100 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	}
	return trimZeros(fmt.Sprintf("%.3g", v))
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") && !strings.ContainsAny(s, "e") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// svgDocument wraps body in an SVG document of the plot width and the given
// height, with a white background and the title on top.
func svgDocument(title string, height int, body string) string {
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n"+
		`<rect width="100%%" height="100%%" fill="white"/>`+"\n"+
		`<text x="%d" y="22" font-family="sans-serif" font-size="15" font-weight="bold" text-anchor="middle">%s</text>`+"\n"+
		"%s</svg>\n", plotWidth, height, plotWidth, height, plotWidth/2, html.EscapeString(title), body)
}
