// Parsing of benchmark result lines and rendering of the markdown tables
// printed by benchtable.
package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Metric is one named measurement of a result.
type Metric struct {
	Key   string
	Value float64
}

// Result is one parsed result line: a workload, the implementation that ran
// it, and its metrics in the order they were printed. A result combined from
// several runs (medianResults) holds each metric's median, its Spread over
// the runs by key, and the number of Runs.
type Result struct {
	Workload string
	Impl     string
	Metrics  []Metric
	Spread   map[string]Spread
	Runs     int
}

// Spread is how a metric ranged over the runs whose median a Result holds:
// its smallest and largest value, and in how many runs it was printed.
type Spread struct {
	Min, Max float64
	N        int
}

// Note is a line a program printed for the reader of a workload's table:
// "# WORKLOAD text" (how a figure was taken, or why it is missing).
type Note struct {
	Workload string
	Text     string
}

// parseNoteLine parses "# WORKLOAD text"; ok is false for a line that is
// not a note.
func parseNoteLine(line string) (n Note, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "# ")
	if !ok {
		return Note{}, false
	}
	w, text, _ := strings.Cut(strings.TrimSpace(rest), " ")
	text = strings.TrimSpace(text)
	if w == "" || text == "" {
		return Note{}, false
	}
	return Note{Workload: w, Text: text}, true
}

// metric returns the value of key and whether the result has it.
func (r Result) metric(key string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Key == key {
			return m.Value, true
		}
	}
	return 0, false
}

// parseResultLine parses "<WORKLOAD> <impl> key=value ..." where every value
// is a decimal number: an optional minus sign, digits, and optionally a point
// and more digits.
func parseResultLine(line string) (Result, error) {
	fields := strings.Fields(line)
	if len(fields) < 3 {
		return Result{}, fmt.Errorf("result line %q: want workload, impl and at least one key=value", line)
	}
	r := Result{Workload: fields[0], Impl: fields[1]}
	seen := make(map[string]bool)
	for _, f := range fields[2:] {
		key, val, ok := strings.Cut(f, "=")
		if !ok || key == "" {
			return Result{}, fmt.Errorf("result line %q: field %q is not key=value", line, f)
		}
		if seen[key] {
			return Result{}, fmt.Errorf("result line %q: duplicate key %q", line, key)
		}
		seen[key] = true
		v, err := strconv.ParseFloat(val, 64)
		if !isDecimal(val) || err != nil {
			return Result{}, fmt.Errorf("result line %q: value of %q is not a decimal number", line, key)
		}
		r.Metrics = append(r.Metrics, Metric{Key: key, Value: v})
	}
	return r, nil
}

// medianResults combines the results of several runs of one program into
// one set: each metric's value is its median over the runs that printed it
// (the mean of the two middle values for an even count), with its Spread;
// the keys are those of every run, in the order they first appear. Every
// run must print the same workloads and impls in the same order. A single
// run is returned as it is.
func medianResults(runs [][]Result) ([]Result, error) {
	if len(runs) == 0 {
		return nil, errors.New("no run")
	}
	if len(runs) == 1 {
		return runs[0], nil
	}
	out := make([]Result, len(runs[0]))
	for i, r := range runs[0] {
		values := make(map[string][]float64)
		var keys []string
		for k, run := range runs {
			if len(run) != len(runs[0]) || run[i].Workload != r.Workload || run[i].Impl != r.Impl {
				return nil, fmt.Errorf("run %d printed other lines than run 1", k+1)
			}
			for _, m := range run[i].Metrics {
				if _, ok := values[m.Key]; !ok {
					keys = append(keys, m.Key)
				}
				values[m.Key] = append(values[m.Key], m.Value)
			}
		}
		out[i] = Result{Workload: r.Workload, Impl: r.Impl, Spread: make(map[string]Spread), Runs: len(runs)}
		for _, key := range keys {
			v := values[key]
			out[i].Metrics = append(out[i].Metrics, Metric{Key: key, Value: median(v)})
			out[i].Spread[key] = Spread{Min: slices.Min(v), Max: slices.Max(v), N: len(v)}
		}
	}
	return out, nil
}

// median returns the median of values (not empty), which it sorts.
func median(values []float64) float64 {
	slices.Sort(values)
	n := len(values)
	if n%2 == 1 {
		return values[n/2]
	}
	return (values[n/2-1] + values[n/2]) / 2
}

// isDecimal reports whether s is digits with an optional leading minus sign
// and an optional fraction (a point followed by digits): no exponent, no
// NaN or infinity.
func isDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, hasPoint := strings.Cut(s, ".")
	return allDigits(whole) && (!hasPoint || allDigits(frac))
}

// allDigits reports whether s is one or more ASCII digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// parseBenchLine parses one line of `go test -bench` output, such as
// "BenchmarkX1-8  100000  1234 ns/op  0 B/op  0 allocs/op  987 rtt_ns".
// The workload is the benchmark name without its -GOMAXPROCS suffix and the
// impl is the given package name. ok is false for any other kind of line.
func parseBenchLine(line, pkg string) (r Result, ok bool) {
	fields := strings.Fields(line)
	if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") || len(fields)%2 != 0 {
		return Result{}, false
	}
	if _, err := strconv.ParseInt(fields[1], 10, 64); err != nil {
		return Result{}, false // not an iteration count
	}
	r = Result{Workload: trimProcs(fields[0]), Impl: pkg}
	for i := 2; i < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			return Result{}, false
		}
		r.Metrics = append(r.Metrics, Metric{Key: fields[i+1], Value: v})
	}
	return r, true
}

// trimProcs removes a trailing "-<digits>" GOMAXPROCS suffix from a
// benchmark name.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}

// formatValue prints a value rounded to four decimals (the precision of
// the per-message counts; a median of two runs, their mean, has more), in
// the shortest decimal form, without a fraction for integers.
func formatValue(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}

// formatRatio formats v relative to the baseline base, e.g. "0.42×".
func formatRatio(v, base float64) string {
	if base == 0 {
		if v == 0 {
			return "1.00×"
		}
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", v/base)
}

// baselineImpl is the implementation every other row is compared against.
const baselineImpl = "raw-c"

// oursPrefix starts the impl of every row of ours.
const oursPrefix = "uvevent"

// renderTables groups results by workload (sorted by name) and renders one
// markdown table per workload. Rows keep their input order, except that the
// raw-c row comes first; each other cell also shows the ratio to the first
// row's (raw-c's, or where there is none the first comparator's). A median
// of several runs shows its spread, [min–max]. A workload with a raw-c row
// (one of docs/benchmarks.md's workloads) but no row of ours gets a line saying so under its
// table, then the workload's notes, each once, and under E1's and U1's
// their targets (workloadTargets). The ratios between workloads that a target names
// (derivedRatios) follow the tables.
func renderTables(results []Result, notes []Note) string {
	groups := make(map[string][]Result)
	var names []string
	for _, r := range results {
		if _, ok := groups[r.Workload]; !ok {
			names = append(names, r.Workload)
		}
		groups[r.Workload] = append(groups[r.Workload], r)
	}
	sort.Strings(names)

	var b strings.Builder
	for i, name := range names {
		if i > 0 {
			b.WriteString("\n")
		}
		rows := groups[name]
		sort.SliceStable(rows, func(i, j int) bool {
			return rows[i].Impl == baselineImpl && rows[j].Impl != baselineImpl
		})
		// The raw-c row, or where there is none the first row (the first
		// comparator run: go-net for H1 and M2, gnet-1 for E1's scaling).
		base := &rows[0]
		var keys []string
		seen := make(map[string]bool)
		for _, r := range rows {
			for _, m := range r.Metrics {
				if !seen[m.Key] {
					seen[m.Key] = true
					keys = append(keys, m.Key)
				}
			}
		}

		fmt.Fprintf(&b, "### %s\n\n| impl | %s |\n|---|%s\n", name,
			strings.Join(keys, " | "), strings.Repeat("---:|", len(keys)))
		for ri, r := range rows {
			cells := []string{r.Impl}
			for _, k := range keys {
				v, ok := r.metric(k)
				if !ok {
					cells = append(cells, "-")
					continue
				}
				cell := formatValue(v) + formatSpread(r, k)
				if bv, bok := base.metricOf(k); bok && ri > 0 {
					cell += " (" + formatRatio(v, bv) + ")"
				}
				cells = append(cells, cell)
			}
			fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
		}
		if base.Impl == baselineImpl && !slices.ContainsFunc(rows, func(r Result) bool {
			return strings.HasPrefix(r.Impl, oursPrefix)
		}) {
			fmt.Fprintf(&b, "\nNo %s row in this run.\n", oursPrefix)
		}
		b.WriteString(renderNotes(name, notes))
		b.WriteString(renderTargets(name, results))
	}
	b.WriteString(renderDerived(results))
	return b.String()
}

// formatSpread shows how r's metric key ranged over the runs of its
// median: " [min–max]", with the count of runs that printed it when some
// did not; nothing for a single run.
func formatSpread(r Result, key string) string {
	sp, ok := r.Spread[key]
	if !ok || r.Runs < 2 {
		return ""
	}
	s := " [" + formatValue(sp.Min) + "–" + formatValue(sp.Max)
	if sp.N < r.Runs {
		s += fmt.Sprintf(", %d of %d runs", sp.N, r.Runs)
	}
	return s + "]"
}

// renderNotes renders the notes of workload, each text once, as a list.
func renderNotes(workload string, notes []Note) string {
	var b strings.Builder
	seen := make(map[string]bool)
	for _, n := range notes {
		if n.Workload != workload || seen[n.Text] {
			continue
		}
		if len(seen) == 0 {
			b.WriteString("\n")
		}
		seen[n.Text] = true
		fmt.Fprintf(&b, "- %s\n", n.Text)
	}
	return b.String()
}

// derivedRatios compare two workloads' figures: num's key over den's, each
// benchmark run on its own. K1's target is judged on
// BenchmarkK1Alternating's rounds (k1Targets), which take the two in turn;
// the first row is the same exchange (two coroutines handing values over
// through handoffs) timed apart, the second the exchange with a future
// made per hand-over.
var derivedRatios = []struct {
	name, num, den, key string
}{
	{"K1 coroutine switch / channel ping-pong (timed apart; judged on BenchmarkK1Alternating)", "BenchmarkK1CoroutineSwitch", "BenchmarkK1ChanPingPong", "ns/op"},
	{"K1 with a future per hand-over / channel ping-pong (not judged)", "BenchmarkK1Futures", "BenchmarkK1ChanPingPong", "ns/op"},
}

// renderDerived renders the derivedRatios whose two figures are both in
// results, as a table; nothing when none is.
func renderDerived(results []Result) string {
	find := func(workload, key string) (float64, bool) {
		for _, r := range results {
			if r.Workload == workload {
				return r.metric(key)
			}
		}
		return 0, false
	}
	var b strings.Builder
	for _, d := range derivedRatios {
		num, ok1 := find(d.num, d.key)
		den, ok2 := find(d.den, d.key)
		if !ok1 || !ok2 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n### Ratios\n\n| ratio | value |\n|---|---:|\n")
		}
		fmt.Fprintf(&b, "| %s (%s) | %s |\n", d.name, d.key, formatRatio(num, den))
	}
	return b.String()
}

// metricOf is metric on a possibly nil baseline.
func (r *Result) metricOf(key string) (float64, bool) {
	if r == nil {
		return 0, false
	}
	return r.metric(key)
}
