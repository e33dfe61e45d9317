// Tests for the ratios of workloads without a raw C row (H1, M2, E1's
// scaling) and for the ratios between workloads (K1).
package main

import (
	"strings"
	"testing"
)

func TestRenderTablesFirstRowBaseline(t *testing.T) {
	got := renderTables(nil, nil)
	if got != "" {
		t.Errorf("renderTables of nothing = %q", got)
	}
	got = renderTables(mustParse(t,
		"M2 go-net conns=10000 rss_bytes_per_conn=8000",
		"M2 uvevent conns=10000 rss_bytes_per_conn=1200",
	), nil)
	want := strings.Join([]string{
		"### M2",
		"",
		"| impl | conns | rss_bytes_per_conn |",
		"|---|---:|---:|",
		"| go-net | 10000 | 8000 |",
		"| uvevent | 10000 (1.00×) | 1200 (0.15×) |",
		"",
	}, "\n")
	if got != want {
		t.Errorf("renderTables:\ngot:\n%s\nwant:\n%s", got, want)
	}
}

func TestRenderDerived(t *testing.T) {
	rs := []Result{
		{Workload: "BenchmarkK1ChanPingPong", Impl: "reactor", Metrics: []Metric{{"ns/op", 330}}},
		{Workload: "BenchmarkK1CoroutineSwitch", Impl: "reactor", Metrics: []Metric{{"ns/op", 660}}},
		{Workload: "BenchmarkK1Futures", Impl: "reactor", Metrics: []Metric{{"ns/op", 990}}},
	}
	// The handoff exchange (BenchmarkK1CoroutineSwitch) first, then the
	// future-per-hand-over one.
	want := "\n### Ratios\n\n| ratio | value |\n|---|---:|\n" +
		"| K1 coroutine switch / channel ping-pong (timed apart; judged on BenchmarkK1Alternating) (ns/op) | 2.00× |\n" +
		"| K1 with a future per hand-over / channel ping-pong (not judged) (ns/op) | 3.00× |\n"
	if got := renderDerived(rs); got != want {
		t.Errorf("renderDerived = %q, want %q", got, want)
	}
	if got := renderDerived(rs[:1]); got != "" {
		t.Errorf("renderDerived without the switch = %q, want nothing", got)
	}
}

func TestRetag(t *testing.T) {
	rs := mustParse(t, "T1 raw-c wall_ns=1", "X1 raw-c rtt_ns=1")
	ns := []Note{{"T1", "a"}, {"X1", "b"}}
	retag("t1@1e4-raw-c", rs, ns)
	if rs[0].Workload != "T1@1e4" || rs[1].Workload != "X1" {
		t.Errorf("after retag: workloads %q, %q; want T1@1e4, X1", rs[0].Workload, rs[1].Workload)
	}
	if ns[0].Workload != "T1@1e4" || ns[1].Workload != "X1" {
		t.Errorf("after retag: notes' workloads %q, %q; want T1@1e4, X1", ns[0].Workload, ns[1].Workload)
	}
	rs = mustParse(t, "T1 raw-c wall_ns=1")
	retag("t1-raw-c", rs, nil)
	if rs[0].Workload != "T1" {
		t.Errorf("retag without a tag renamed T1 to %q", rs[0].Workload)
	}
}
