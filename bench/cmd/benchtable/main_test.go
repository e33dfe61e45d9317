// Tests for benchtable's result-line parsing, benchmark-line parsing, ratio
// formatting and table rendering.
package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseResultLine(t *testing.T) {
	tests := []struct {
		line    string
		want    Result
		wantErr bool
	}{
		{
			line: "T1 raw-c wall_ns=2983152829 peak_rss_kib=157656 fired=1000000",
			want: Result{Workload: "T1", Impl: "raw-c", Metrics: []Metric{
				{"wall_ns", 2983152829}, {"peak_rss_kib", 157656}, {"fired", 1000000},
			}},
		},
		{
			line: "  X1\tgo-chan rtt_ns=893  rounds=200000\n",
			want: Result{Workload: "X1", Impl: "go-chan", Metrics: []Metric{
				{"rtt_ns", 893}, {"rounds", 200000},
			}},
		},
		{
			line: "M1 raw-c delta=-8",
			want: Result{Workload: "M1", Impl: "raw-c", Metrics: []Metric{{"delta", -8}}},
		},
		{line: "", wantErr: true},
		{line: "T1 raw-c", wantErr: true},
		{line: "T1 raw-c wall_ns", wantErr: true},
		{line: "T1 raw-c =5", wantErr: true},
		{
			line: "E1 raw-c msgs_per_s=107570 server_cpu_us_per_msg=6.35 delta=-0.5",
			want: Result{Workload: "E1", Impl: "raw-c", Metrics: []Metric{
				{"msgs_per_s", 107570}, {"server_cpu_us_per_msg", 6.35}, {"delta", -0.5},
			}},
		},
		{line: "T1 raw-c wall_ns=", wantErr: true},
		{line: "T1 raw-c wall_ns=.5", wantErr: true},
		{line: "T1 raw-c wall_ns=5.", wantErr: true},
		{line: "T1 raw-c wall_ns=+5", wantErr: true},
		{line: "T1 raw-c wall_ns=-", wantErr: true},
		{line: "T1 raw-c wall_ns=1e3", wantErr: true},
		{line: "T1 raw-c wall_ns=NaN", wantErr: true},
		{line: "T1 raw-c wall_ns=Inf", wantErr: true},
		{line: "T1 raw-c wall_ns=0x10", wantErr: true},
		{line: "T1 raw-c wall_ns=1_000", wantErr: true},
		{line: "T1 raw-c wall_ns=1.2.3", wantErr: true},
		{line: "T1 raw-c wall_ns=1 wall_ns=2", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseResultLine(tt.line)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseResultLine(%q) error = %v, wantErr %v", tt.line, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); !tt.wantErr && diff != "" {
			t.Errorf("parseResultLine(%q) mismatch (-want +got):\n%s", tt.line, diff)
		}
	}
}

func TestParseBenchLine(t *testing.T) {
	tests := []struct {
		line   string
		want   Result
		wantOK bool
	}{
		{
			line:   "BenchmarkX1Post-8   \t  100000\t     12.5 ns/op\t  16 B/op\t  1 allocs/op\t  987 rtt_ns",
			wantOK: true,
			want: Result{Workload: "BenchmarkX1Post", Impl: "uvevent", Metrics: []Metric{
				{"ns/op", 12.5}, {"B/op", 16}, {"allocs/op", 1}, {"rtt_ns", 987},
			}},
		},
		{
			line:   "BenchmarkTimer/n=1000 \t 50 \t 2000 ns/op",
			wantOK: true,
			want: Result{Workload: "BenchmarkTimer/n=1000", Impl: "uvevent", Metrics: []Metric{
				{"ns/op", 2000},
			}},
		},
		{line: "BenchmarkFoo-8", wantOK: false},
		{line: "BenchmarkFoo-8 \t --- FAIL: boom", wantOK: false},
		{line: "BenchmarkFoo-8 10 5 ns/op 3", wantOK: false},
		{line: "goos: linux", wantOK: false},
		{line: "ok  \tgithub.com/uvevent/uvevent\t1.2s", wantOK: false},
		{line: "PASS", wantOK: false},
	}
	for _, tt := range tests {
		got, ok := parseBenchLine(tt.line, "uvevent")
		if ok != tt.wantOK {
			t.Errorf("parseBenchLine(%q) ok = %v, want %v", tt.line, ok, tt.wantOK)
			continue
		}
		if diff := cmp.Diff(tt.want, got); ok && diff != "" {
			t.Errorf("parseBenchLine(%q) mismatch (-want +got):\n%s", tt.line, diff)
		}
	}
}

func TestTrimProcs(t *testing.T) {
	tests := map[string]string{
		"BenchmarkA-8":       "BenchmarkA",
		"BenchmarkA-16":      "BenchmarkA",
		"BenchmarkA":         "BenchmarkA",
		"BenchmarkA/raw-c":   "BenchmarkA/raw-c",
		"BenchmarkA/x-1-4":   "BenchmarkA/x-1",
		"BenchmarkTrailing-": "BenchmarkTrailing-",
	}
	for in, want := range tests {
		if got := trimProcs(in); got != want {
			t.Errorf("trimProcs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFormatRatio(t *testing.T) {
	tests := []struct {
		v, base float64
		want    string
	}{
		{42, 100, "0.42×"},
		{100, 100, "1.00×"},
		{2929107164, 2983152829, "0.98×"},
		{300, 100, "3.00×"},
		{1, 3, "0.33×"},
		{2, 3, "0.67×"},
		{0, 0, "1.00×"},
		{5, 0, "n/a"},
	}
	for _, tt := range tests {
		if got := formatRatio(tt.v, tt.base); got != tt.want {
			t.Errorf("formatRatio(%v, %v) = %q, want %q", tt.v, tt.base, got, tt.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	tests := map[float64]string{
		2983152829:             "2983152829",
		0:                      "0",
		-8:                     "-8",
		12.5:                   "12.5",
		65.77:                  "65.77",
		0.9989999999999999:     "0.999",
		0.00019999999999999998: "0.0002",
		0.99895:                "0.999",
	}
	for in, want := range tests {
		if got := formatValue(in); got != want {
			t.Errorf("formatValue(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestRenderTables(t *testing.T) {
	var results []Result
	for _, line := range []string{
		"X1 go-chan rtt_ns=900 rounds=200000",
		"T1 time-afterfunc wall_ns=300 peak_rss_kib=200 fired=10",
		"T1 raw-c wall_ns=100 peak_rss_kib=400 fired=10",
		"T1 uvevent wall_ns=50 fired=10 extra=7",
		"E1 go-net msgs_per_s=120 server_cpu_us_per_msg=7.5",
		"E1 raw-c msgs_per_s=100 server_cpu_us_per_msg=6.25",
	} {
		r, err := parseResultLine(line)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	want := strings.Join([]string{
		"### E1",
		"",
		"| impl | msgs_per_s | server_cpu_us_per_msg |",
		"|---|---:|---:|",
		"| raw-c | 100 | 6.25 |",
		"| go-net | 120 (1.20×) | 7.5 (1.20×) |",
		"",
		"No uvevent row in this run.",
		"",
		"### E1 targets (medians of this run)",
		"",
		"| target | figure | met? |",
		"|---|---|---|",
		"| CPU/msg, libuv driver ≤ 1.05× raw C | - | not measured in this run |",
		"| CPU/msg, pure-Go driver ≤ gnet's | - | not measured in this run |",
		"| CPU/msg, libuv driver below nbio's | - | not measured in this run |",
		"| CPU/msg, libuv driver below net's | - | not measured in this run |",
		"| CPU/msg, pure-Go driver below nbio's | - | not measured in this run |",
		"| CPU/msg, pure-Go driver below net's | - | not measured in this run |",
		"| msgs/s, libuv driver ≥ 0.95× raw C | - | not measured in this run |",
		"| msgs/s, pure-Go driver ≥ 0.95× raw C | - | not measured in this run |",
		"| context switches/msg, libuv driver ≤ 1.5× raw C | - | not measured in this run |",
		"| context switches/msg, pure-Go driver ≤ 1.5× raw C | - | not measured in this run |",
		"| 0 allocations on the callback path, libuv driver (BenchmarkIOPingPong) | - | not measured in this run |",
		"| 0 allocations on the callback path, pure-Go driver (BenchmarkIOPingPong) | - | not measured in this run |",
		"| CPU/msg through net.Conn, libuv driver ≤ net's | - | not measured in this run |",
		"| CPU/msg through net.Conn, pure-Go driver ≤ net's | - | not measured in this run |",
		"",
		"### T1",
		"",
		"| impl | wall_ns | peak_rss_kib | fired | extra |",
		"|---|---:|---:|---:|---:|",
		"| raw-c | 100 | 400 | 10 | - |",
		"| time-afterfunc | 300 (3.00×) | 200 (0.50×) | 10 (1.00×) | - |",
		"| uvevent | 50 (0.50×) | - | 10 (1.00×) | 7 |",
		"",
		"### T1 targets (medians of this run)",
		"",
		"| target | figure | met? |",
		"|---|---|---|",
		"| wall time, libuv driver ≤ 0.15× raw C | 0.50× (50 against 100) | **no** |",
		"| wall time, pure-Go driver ≤ 0.15× raw C | - | not measured in this run |",
		"| wall time, libuv driver below time.AfterFunc's | 0.17× (50 against 300) | yes |",
		"| wall time, pure-Go driver below time.AfterFunc's | - | not measured in this run |",
		"| peak RSS, libuv driver ≤ 0.75× raw C | - | not measured in this run |",
		"| peak RSS, pure-Go driver ≤ 0.75× raw C | - | not measured in this run |",
		"",
		"### X1",
		"",
		"| impl | rtt_ns | rounds |",
		"|---|---:|---:|",
		"| go-chan | 900 | 200000 |",
		"",
	}, "\n")
	if got := renderTables(results, nil); got != want {
		t.Errorf("renderTables mismatch:\ngot:\n%s\nwant:\n%s", got, want)
	}
}

func TestParseBenchOutput(t *testing.T) {
	out := strings.Join([]string{
		"goos: linux",
		"pkg: github.com/uvevent/uvevent/loop",
		"BenchmarkPost-2 \t 1000 \t 65.77 ns/op \t 8 B/op \t 1 allocs/op \t 120 rtt_ns",
		"PASS",
		"pkg: github.com/uvevent/uvevent",
		"BenchmarkTimers-2 \t 10 \t 5000 ns/op",
		"ok  \tgithub.com/uvevent/uvevent\t1.0s",
	}, "\n")
	want := []Result{
		{Workload: "BenchmarkPost", Impl: "loop", Metrics: []Metric{
			{"ns/op", 65.77}, {"B/op", 8}, {"allocs/op", 1}, {"rtt_ns", 120},
		}},
		{Workload: "BenchmarkTimers", Impl: "uvevent", Metrics: []Metric{{"ns/op", 5000}}},
	}
	if diff := cmp.Diff(want, parseBenchOutput([]byte(out))); diff != "" {
		t.Errorf("parseBenchOutput mismatch (-want +got):\n%s", diff)
	}
}

func TestParseOutput(t *testing.T) {
	got, notes, err := parseOutput([]byte("\nX1 raw-c rtt_ns=17000 rounds=20000\n# X1 how it was taken\n\n"))
	if err != nil || len(got) != 1 || got[0].Impl != "raw-c" {
		t.Errorf("parseOutput = %+v, %v; want one raw-c result", got, err)
	}
	if diff := cmp.Diff([]Note{{"X1", "how it was taken"}}, notes); diff != "" {
		t.Errorf("parseOutput's notes (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"", "\n\n", "X1 raw-c rtt_ns=1\nsome log line\n", "# X1 only a note\n", "X1 raw-c rtt_ns=1\n#X1 no space\n"} {
		if _, _, err := parseOutput([]byte(bad)); err == nil {
			t.Errorf("parseOutput(%q) succeeded, want error", bad)
		}
	}
}

func TestMedianResults(t *testing.T) {
	parse := func(lines ...string) []Result {
		var rs []Result
		for _, l := range lines {
			r, err := parseResultLine(l)
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, r)
		}
		return rs
	}
	runs := [][]Result{
		parse("D1 raw-c lookups_per_s=90 x=1", "D1 raw-c-b lookups_per_s=5"),
		parse("D1 raw-c lookups_per_s=10 x=2", "D1 raw-c-b lookups_per_s=6"),
		parse("D1 raw-c lookups_per_s=50 x=3", "D1 raw-c-b lookups_per_s=7"),
	}
	spread := func(rs []Result, runs int, sp ...map[string]Spread) []Result {
		for i := range rs {
			rs[i].Runs, rs[i].Spread = runs, sp[i]
		}
		return rs
	}
	want := spread(parse("D1 raw-c lookups_per_s=50 x=2", "D1 raw-c-b lookups_per_s=6"), 3,
		map[string]Spread{"lookups_per_s": {10, 90, 3}, "x": {1, 3, 3}},
		map[string]Spread{"lookups_per_s": {5, 7, 3}})
	got, err := medianResults(runs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("median of three runs mismatch (-want +got):\n%s", diff)
	}

	got, err = medianResults(runs[:2])
	want = spread(parse("D1 raw-c lookups_per_s=50 x=1.5", "D1 raw-c-b lookups_per_s=5.5"), 2,
		map[string]Spread{"lookups_per_s": {10, 90, 2}, "x": {1, 2, 2}},
		map[string]Spread{"lookups_per_s": {5, 6, 2}})
	if diff := cmp.Diff(want, got); err != nil || diff != "" {
		t.Errorf("median of two runs = %v, mismatch (-want +got):\n%s", err, diff)
	}

	// A key some runs did not print: the median of those that did, its
	// count in the spread; keys in the order they first appear.
	got, err = medianResults([][]Result{
		parse("E1 x msgs_per_s=3"),
		parse("E1 x msgs_per_s=1 syscalls_per_msg=2"),
		parse("E1 x msgs_per_s=2 syscalls_per_msg=4"),
	})
	want = spread(parse("E1 x msgs_per_s=2 syscalls_per_msg=3"), 3,
		map[string]Spread{"msgs_per_s": {1, 3, 3}, "syscalls_per_msg": {2, 4, 2}})
	if diff := cmp.Diff(want, got); err != nil || diff != "" {
		t.Errorf("median with a key missing from a run = %v, mismatch (-want +got):\n%s", err, diff)
	}

	got, err = medianResults(runs[2:])
	if diff := cmp.Diff(runs[2], got); err != nil || diff != "" {
		t.Errorf("median of one run = %v, mismatch (-want +got):\n%s", err, diff)
	}

	for name, bad := range map[string][][]Result{
		"no run":         nil,
		"missing line":   {runs[0], runs[1][:1]},
		"other impl":     {runs[0], parse("D1 go lookups_per_s=1 x=1", "D1 raw-c-b lookups_per_s=5")},
		"other workload": {runs[0], parse("D2 raw-c lookups_per_s=1 x=1", "D1 raw-c-b lookups_per_s=5")},
	} {
		if _, err := medianResults(bad); err == nil {
			t.Errorf("%s: medianResults succeeded", name)
		}
	}
}
