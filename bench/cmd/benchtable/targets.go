// The targets of E1, U1, H1, H1C, K1 and X1's round trip and idle CPU (docs/benchmarks.md),
// judged on the figures of one run: the medians of its shuffled rounds
// (E1, U1, H1, H1C) or of a benchmark's alternating rounds (K1, X1).
package main

import (
	"fmt"
	"strings"
)

// ref names one figure of a run: a metric of a workload's row.
type ref struct {
	workload, impl, key string
}

// target is a target on the figures of a run: num's figure over den's, or
// num's alone when den is the zero ref, compared by op ("≤", "<" or "≥")
// with bound.
type target struct {
	name  string
	num   ref
	den   ref
	op    string
	bound float64
}

// The E1 rows' impls and keys.
const (
	e1CPU   = "server_cpu_us_per_msg"
	e1Msgs  = "msgs_per_s"
	e1Ctxsw = "ctxsw_per_msg"
)

func e1(impl, key string) ref { return ref{"E1", impl, key} }

// e1Targets are E1's targets: CPU per message against raw C libuv, gnet,
// nbio and goroutine-per-connection net; messages per second and context
// switches per message against raw C; no allocation on the callback path
// (uv's BenchmarkIOPingPong, per driver); the net.Conn adapter's CPU per
// message against net's.
var e1Targets = []target{
	{"CPU/msg, libuv driver ≤ 1.05× raw C", e1("uvevent", e1CPU), e1("raw-c", e1CPU), "≤", 1.05},
	{"CPU/msg, pure-Go driver ≤ gnet's", e1("uvevent-go", e1CPU), e1("gnet", e1CPU), "≤", 1},
	{"CPU/msg, libuv driver below nbio's", e1("uvevent", e1CPU), e1("nbio", e1CPU), "<", 1},
	{"CPU/msg, libuv driver below net's", e1("uvevent", e1CPU), e1("go-net", e1CPU), "<", 1},
	{"CPU/msg, pure-Go driver below nbio's", e1("uvevent-go", e1CPU), e1("nbio", e1CPU), "<", 1},
	{"CPU/msg, pure-Go driver below net's", e1("uvevent-go", e1CPU), e1("go-net", e1CPU), "<", 1},
	{"msgs/s, libuv driver ≥ 0.95× raw C", e1("uvevent", e1Msgs), e1("raw-c", e1Msgs), "≥", 0.95},
	{"msgs/s, pure-Go driver ≥ 0.95× raw C", e1("uvevent-go", e1Msgs), e1("raw-c", e1Msgs), "≥", 0.95},
	{"context switches/msg, libuv driver ≤ 1.5× raw C", e1("uvevent", e1Ctxsw), e1("raw-c", e1Ctxsw), "≤", 1.5},
	{"context switches/msg, pure-Go driver ≤ 1.5× raw C", e1("uvevent-go", e1Ctxsw), e1("raw-c", e1Ctxsw), "≤", 1.5},
	{"0 allocations on the callback path, libuv driver (BenchmarkIOPingPong)", ref{"BenchmarkIOPingPong/libuv", "uv", "allocs/op"}, ref{}, "≤", 0},
	{"0 allocations on the callback path, pure-Go driver (BenchmarkIOPingPong)", ref{"BenchmarkIOPingPong/go", "uv", "allocs/op"}, ref{}, "≤", 0},
	{"CPU/msg through net.Conn, libuv driver ≤ net's", e1("uvevent-conn", e1CPU), e1("go-net", e1CPU), "≤", 1},
	{"CPU/msg through net.Conn, pure-Go driver ≤ net's", e1("uvevent-go-conn", e1CPU), e1("go-net", e1CPU), "≤", 1},
}

// The U1 rows' keys.
const (
	u1Rate  = "dgrams_per_s"
	u1Share = "share"
)

func u1(impl, key string) ref { return ref{"U1", impl, key} }

// u1Targets are U1's targets: each driver receives at least as many
// datagrams per second as raw C libuv and as a goroutine on net.UDPConn,
// and at least as large a share of the burst.
var u1Targets = []target{
	{"datagrams/s, libuv driver ≥ raw C", u1("uvevent", u1Rate), u1("raw-c", u1Rate), "≥", 1},
	{"datagrams/s, libuv driver ≥ net's", u1("uvevent", u1Rate), u1("net", u1Rate), "≥", 1},
	{"datagrams/s, pure-Go driver ≥ raw C", u1("uvevent-go", u1Rate), u1("raw-c", u1Rate), "≥", 1},
	{"datagrams/s, pure-Go driver ≥ net's", u1("uvevent-go", u1Rate), u1("net", u1Rate), "≥", 1},
	{"share received, libuv driver ≥ raw C's", u1("uvevent", u1Share), u1("raw-c", u1Share), "≥", 1},
	{"share received, libuv driver ≥ net's", u1("uvevent", u1Share), u1("net", u1Share), "≥", 1},
	{"share received, pure-Go driver ≥ raw C's", u1("uvevent-go", u1Share), u1("raw-c", u1Share), "≥", 1},
	{"share received, pure-Go driver ≥ net's", u1("uvevent-go", u1Share), u1("net", u1Share), "≥", 1},
}

// The H1 and H1C rows' keys.
const (
	h1Reqs = "reqs_per_s"
	h1CPU  = "server_cpu_us_per_req"
	h1P99  = "p99_us"
)

// h1Targets are the targets of net/http over uv.Listener in workload
// (H1, keep-alive, or H1C, a connection per request), per driver, against
// net/http over net.Listen: at least its requests per second, at most its
// CPU per request, a p99 latency at most 1.1× its.
func h1Targets(workload string) []target {
	var ts []target
	for _, d := range []struct{ impl, name string }{{"uvevent", "libuv driver"}, {"uvevent-go", "pure-Go driver"}} {
		r := func(impl, key string) ref { return ref{workload, impl, key} }
		ts = append(ts,
			target{"requests/s, " + d.name + " ≥ net/http's", r(d.impl, h1Reqs), r("go-net", h1Reqs), "≥", 1},
			target{"CPU/request, " + d.name + " ≤ net/http's", r(d.impl, h1CPU), r("go-net", h1CPU), "≤", 1},
			target{"p99, " + d.name + " ≤ 1.1× net/http's", r(d.impl, h1P99), r("go-net", h1P99), "≤", 1.1},
		)
	}
	return ts
}

// The go test benchmarks whose figures a target reads, as benchtable
// names their rows: the benchmark's name without its -GOMAXPROCS suffix.
const (
	k1Bench      = "BenchmarkK1Alternating"
	idleBench    = "BenchmarkX1Idle"
	x1LibuvBench = "BenchmarkX1Alternating/libuv"
	x1GoBench    = "BenchmarkX1Alternating/go"
	c1Bench      = "BenchmarkC1Notify/1"
)

// c1Targets are C1's targets on a notification to one subscriber: the time
// per delivered callback, and no allocation.
var c1Targets = []target{
	{"a notification to 1 subscriber ≤ 5 ns per delivered callback", ref{c1Bench, "event", "ns/callback"}, ref{}, "≤", 5},
	{"no allocation per notification", ref{c1Bench, "event", "allocs/op"}, ref{}, "≤", 0},
}

// k1Targets is K1's target: the median of the rounds' ratios of a
// coroutine switch's round trip to a channel ping-pong's, the two taken in
// turn in each round.
var k1Targets = []target{
	{"coroutine switch ≤ 2× a channel ping-pong (median of alternating rounds)", ref{k1Bench, "reactor", "ratio"}, ref{}, "≤", 2},
}

// idleTargets is X1's idle target: the process's CPU per second with a
// serving idle reactor at most the runtime's own baseline, medians of
// alternating windows.
var idleTargets = []target{
	{"an idle serving reactor's CPU ≤ the runtime's idle baseline", ref{idleBench, "reactor", "serving_cpu_us/s"}, ref{idleBench, "reactor", "baseline_cpu_us/s"}, "≤", 1},
}

// x1Targets is X1's round-trip target on a driver's sub-benchmark of
// BenchmarkX1Alternating: the median of the rounds' ratios of another
// goroutine's Call to the loop and back to a channel ping-pong's, the two
// taken in turn in each round.
func x1Targets(driver string) []target {
	bench := x1LibuvBench
	if driver == "pure-Go" {
		bench = x1GoBench
	}
	return []target{
		{"round trip another goroutine → loop → back ≤ 3× a channel ping-pong, " + driver + " driver (median of alternating rounds)", ref{bench, "reactor", "ratio"}, ref{}, "≤", 3},
	}
}

// workloadTargets are the targets judged under a workload's table, by
// workload.
var workloadTargets = map[string][]target{
	"E1": e1Targets, "U1": u1Targets,
	"H1": h1Targets("H1"), "H1C": h1Targets("H1C"),
	k1Bench: k1Targets, idleBench: idleTargets,
	x1LibuvBench: x1Targets("libuv"), x1GoBench: x1Targets("pure-Go"),
	c1Bench: c1Targets,
}

// find returns the figure r names in results.
func find(results []Result, r ref) (float64, bool) {
	for _, res := range results {
		if res.Workload == r.workload && res.Impl == r.impl {
			return res.metric(r.key)
		}
	}
	return 0, false
}

// judge returns t's figure in results, formatted, and whether it is met;
// measured is false when a figure it needs is not in results.
func (t target) judge(results []Result) (figure string, met, measured bool) {
	num, ok := find(results, t.num)
	if !ok {
		return "", false, false
	}
	v := num
	figure = formatValue(num) + " " + t.num.key
	if t.den != (ref{}) {
		den, ok := find(results, t.den)
		if !ok || den == 0 {
			return "", false, false
		}
		v = num / den
		figure = fmt.Sprintf("%.2f× (%s against %s)", v, formatValue(num), formatValue(den))
	}
	switch t.op {
	case "≤":
		met = v <= t.bound
	case "<":
		met = v < t.bound
	case "≥":
		met = v >= t.bound
	}
	return figure, met, true
}

// renderTargets renders workload's targets (workloadTargets) judged on
// results, as a table; nothing for a workload without targets.
func renderTargets(workload string, results []Result) string {
	targets := workloadTargets[workload]
	if len(targets) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %s targets (medians of this run)\n\n| target | figure | met? |\n|---|---|---|\n", workload)
	for _, t := range targets {
		figure, met, measured := t.judge(results)
		verdict := "yes"
		switch {
		case !measured:
			figure, verdict = "-", "not measured in this run"
		case !met:
			verdict = "**no**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.name, figure, verdict)
	}
	return b.String()
}
