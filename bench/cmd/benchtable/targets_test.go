// Tests for the E1 and U1 targets and for the spread and notes under a
// table.
package main

import (
	"strings"
	"testing"
)

// TestRenderTargets judges every E1 target on fixed figures: met, not met,
// a strict bound met with equality (not met), and a figure missing.
func TestRenderTargets(t *testing.T) {
	rs := mustParse(t,
		"E1 raw-c msgs_per_s=100000 server_cpu_us_per_msg=5 ctxsw_per_msg=0.06",
		"E1 gnet msgs_per_s=90000 server_cpu_us_per_msg=5.5",
		"E1 nbio msgs_per_s=90000 server_cpu_us_per_msg=6",
		"E1 go-net msgs_per_s=90000 server_cpu_us_per_msg=7",
		"E1 uvevent msgs_per_s=95000 server_cpu_us_per_msg=7 ctxsw_per_msg=0.25",
		"E1 uvevent-go msgs_per_s=94000 server_cpu_us_per_msg=5.5 ctxsw_per_msg=0.09",
		"E1 uvevent-conn msgs_per_s=90000 server_cpu_us_per_msg=6.9",
		"BenchmarkIOPingPong/libuv uv ns/op=900 allocs/op=1",
		"BenchmarkIOPingPong/go uv ns/op=800 allocs/op=0",
	)
	checkTargets(t, "E1", rs,
		"| CPU/msg, libuv driver ≤ 1.05× raw C | 1.40× (7 against 5) | **no** |",
		"| CPU/msg, pure-Go driver ≤ gnet's | 1.00× (5.5 against 5.5) | yes |",
		"| CPU/msg, libuv driver below nbio's | 1.17× (7 against 6) | **no** |",
		"| CPU/msg, libuv driver below net's | 1.00× (7 against 7) | **no** |",
		"| CPU/msg, pure-Go driver below nbio's | 0.92× (5.5 against 6) | yes |",
		"| CPU/msg, pure-Go driver below net's | 0.79× (5.5 against 7) | yes |",
		"| msgs/s, libuv driver ≥ 0.95× raw C | 0.95× (95000 against 100000) | yes |",
		"| msgs/s, pure-Go driver ≥ 0.95× raw C | 0.94× (94000 against 100000) | **no** |",
		"| context switches/msg, libuv driver ≤ 1.5× raw C | 4.17× (0.25 against 0.06) | **no** |",
		"| context switches/msg, pure-Go driver ≤ 1.5× raw C | 1.50× (0.09 against 0.06) | yes |",
		"| 0 allocations on the callback path, libuv driver (BenchmarkIOPingPong) | 1 allocs/op | **no** |",
		"| 0 allocations on the callback path, pure-Go driver (BenchmarkIOPingPong) | 0 allocs/op | yes |",
		"| CPU/msg through net.Conn, libuv driver ≤ net's | 0.99× (6.9 against 7) | yes |",
		"| CPU/msg through net.Conn, pure-Go driver ≤ net's | - | not measured in this run |",
	)
}

// TestRenderU1Targets judges U1's targets on fixed figures: each driver
// against raw C and net, for datagrams per second and the share received,
// met with equality (the bound is ≥), not met, and a row missing; a
// workload without targets renders none.
func TestRenderU1Targets(t *testing.T) {
	rs := mustParse(t,
		"U1 raw-c dgrams_per_s=100000 share=0.5",
		"U1 net dgrams_per_s=80000 share=0.6",
		"U1 uvevent dgrams_per_s=100000 share=0.55",
	)
	checkTargets(t, "U1", rs,
		"| datagrams/s, libuv driver ≥ raw C | 1.00× (100000 against 100000) | yes |",
		"| datagrams/s, libuv driver ≥ net's | 1.25× (100000 against 80000) | yes |",
		"| datagrams/s, pure-Go driver ≥ raw C | - | not measured in this run |",
		"| datagrams/s, pure-Go driver ≥ net's | - | not measured in this run |",
		"| share received, libuv driver ≥ raw C's | 1.10× (0.55 against 0.5) | yes |",
		"| share received, libuv driver ≥ net's | 0.92× (0.55 against 0.6) | **no** |",
		"| share received, pure-Go driver ≥ raw C's | - | not measured in this run |",
		"| share received, pure-Go driver ≥ net's | - | not measured in this run |",
	)
	if got := renderTargets("T1", rs); got != "" {
		t.Errorf("renderTargets of a workload without targets = %q, want nothing", got)
	}
}

// TestRenderH1Targets judges H1C's targets on fixed figures: requests per
// second met with equality, CPU per request not met, p99 within 1.1× and
// beyond it, a driver's row missing; H1 has the same targets.
func TestRenderH1Targets(t *testing.T) {
	rs := mustParse(t,
		"H1C go-net reqs_per_s=16000 p50_us=900 p99_us=2000 server_cpu_us_per_req=45",
		"H1C uvevent reqs_per_s=16000 p50_us=950 p99_us=2200 server_cpu_us_per_req=50",
	)
	checkTargets(t, "H1C", rs,
		"| requests/s, libuv driver ≥ net/http's | 1.00× (16000 against 16000) | yes |",
		"| CPU/request, libuv driver ≤ net/http's | 1.11× (50 against 45) | **no** |",
		"| p99, libuv driver ≤ 1.1× net/http's | 1.10× (2200 against 2000) | yes |",
		"| requests/s, pure-Go driver ≥ net/http's | - | not measured in this run |",
		"| CPU/request, pure-Go driver ≤ net/http's | - | not measured in this run |",
		"| p99, pure-Go driver ≤ 1.1× net/http's | - | not measured in this run |",
	)
	if got := renderTargets("H1", rs); !strings.Contains(got, "### H1 targets") || strings.Count(got, "not measured in this run") != 6 {
		t.Errorf("renderTargets(H1) on H1C's figures = %q: want H1's six targets, none measured", got)
	}
}

// TestRenderBenchTargets judges K1 on BenchmarkK1Alternating's median
// ratio, X1's round trip on each driver's BenchmarkX1Alternating and X1's
// idle CPU on BenchmarkX1Idle's two medians, and C1 on BenchmarkC1Notify/1's
// time per callback and allocations, as go test prints them.
func TestRenderBenchTargets(t *testing.T) {
	rs := parseBenchOutput([]byte("pkg: github.com/uvevent/uvevent/event\n" +
		"BenchmarkC1Notify/1-2   100000000   6.5 ns/op   6.5 ns/callback   0 B/op   0 allocs/op\n" +
		"BenchmarkC1Notify/8-2   50000000   24.0 ns/op   3.0 ns/callback   0 B/op   1 allocs/op\n" +
		"pkg: github.com/uvevent/uvevent/reactor\n" +
		"BenchmarkK1Alternating-2   1   1453811675 ns/op   297.7 chan_ns/trip   2.137 ratio   659.9 switch_ns/trip\n" +
		"BenchmarkX1Idle-2   1   2500000000 ns/op   990 baseline_cpu_us/s   900 serving_cpu_us/s\n" +
		"BenchmarkX1Alternating/libuv-2   2   837991954 ns/op   847.6 call_ns/trip   347.5 chan_ns/trip   2.463 ratio\n" +
		"BenchmarkX1Alternating/go-2   2   796480426 ns/op   1092.3 call_ns/trip   327.7 chan_ns/trip   3.333 ratio\n"))
	for _, c := range []struct{ name, want string }{
		{k1Bench, "| coroutine switch ≤ 2× a channel ping-pong (median of alternating rounds) | 2.137 ratio | **no** |"},
		{idleBench, "| an idle serving reactor's CPU ≤ the runtime's idle baseline | 0.91× (900 against 990) | yes |"},
		{x1LibuvBench, "| round trip another goroutine → loop → back ≤ 3× a channel ping-pong, libuv driver (median of alternating rounds) | 2.463 ratio | yes |"},
		{x1GoBench, "| round trip another goroutine → loop → back ≤ 3× a channel ping-pong, pure-Go driver (median of alternating rounds) | 3.333 ratio | **no** |"},
		{c1Bench, "| a notification to 1 subscriber ≤ 5 ns per delivered callback | 6.5 ns/callback | **no** |"},
		{c1Bench, "| no allocation per notification | 0 allocs/op | yes |"},
	} {
		if got := renderTargets(c.name, rs); !strings.Contains(got, c.want) {
			t.Errorf("renderTargets(%s) = %q, want a row %q", c.name, got, c.want)
		}
	}
}

// TestRenderSpreadAndNotes: a median of rounds shows its spread (and how
// many rounds printed a key when some did not); the workload's notes
// follow its table, each once; another workload's do not.
func TestRenderSpreadAndNotes(t *testing.T) {
	runs := [][]Result{
		mustParse(t, "M2 go-net rss=8000 idle=3"),
		mustParse(t, "M2 go-net rss=8200"),
		mustParse(t, "M2 go-net rss=7900 idle=5"),
	}
	rs, err := medianResults(runs)
	if err != nil {
		t.Fatal(err)
	}
	notes := []Note{{"M2", "counted by perf"}, {"X1", "elsewhere"}, {"M2", "counted by perf"}, {"M2", "second"}}
	want := strings.Join([]string{
		"### M2",
		"",
		"| impl | rss | idle |",
		"|---|---:|---:|",
		"| go-net | 8000 [7900–8200] | 4 [3–5, 2 of 3 runs] |",
		"",
		"- counted by perf",
		"- second",
		"",
	}, "\n")
	if got := renderTables(rs, notes); got != want {
		t.Errorf("renderTables:\ngot:\n%s\nwant:\n%s", got, want)
	}
}

// checkTargets checks that renderTargets renders workload's targets on rs
// as a table of rows.
func checkTargets(t *testing.T, workload string, rs []Result, rows ...string) {
	t.Helper()
	want := "\n### " + workload + " targets (medians of this run)\n\n| target | figure | met? |\n|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
	if got := renderTargets(workload, rs); got != want {
		t.Errorf("renderTargets:\ngot:\n%s\nwant:\n%s", got, want)
	}
}
