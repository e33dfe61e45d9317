// The programs benchtable runs: the comparators it always runs, the
// NAME=command arguments it is given, and the building of the programs those
// command lines name.
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// comparators are the programs run beside ours, as NAME=command arguments
// (see parseCommand) whose NAME starts with the workload and a "-" (see
// runOrder). Each prints result lines whose impl is raw-c for the raw C
// libuv program, and otherwise names the Go standard-library mechanism or
// the Go library (gnet, nbio, each a module of its own under bench/cmd).
var comparators = []string{
	"t1-raw-c={c:t1_timers}",
	"t1-afterfunc={go:t1afterfunc}",
	"t1@1e4-raw-c={c:t1_timers} 10000",
	"t1@1e4-afterfunc={go:t1afterfunc} -n 10000",
	"t1@1e5-raw-c={c:t1_timers} 100000",
	"t1@1e5-afterfunc={go:t1afterfunc} -n 100000",
	"x1-raw-c={c:x1_async}",
	"x1-chan={go:x1chan}",
	"m1-raw-c={c:m1_sizes}",
	"e1-raw-c={go:e1load} -impl raw-c {c:e1_echo}",
	"e1-net={go:e1load} -impl go-net {go:e1net}",
	"e1-gnet={go:e1load} -impl gnet {go:e1gnet}",
	"e1-nbio={go:e1load} -impl nbio {go:e1nbio}",
	"e1@scale-gnet-1={go:e1load} -impl gnet-1 -duration 2s {go:e1gnet} -loops 1",
	"e1@scale-gnet-2={go:e1load} -impl gnet-2 -duration 2s {go:e1gnet} -loops 2",
	"h1-net={go:h1load} -impl go-net {go:h1serve}",
	"h1c-net={go:h1load} -impl go-net -close -requests 10000 {go:h1serve}",
	"m2-net={go:m2load} -impl go-net {go:e1net}",
	"s1-raw-c={c:s1_spawn}",
	"s1-exec={go:s1exec}",
	"d1-raw-c={c:d1_getaddrinfo}",
	"d1-go-pure={go:d1resolver} -resolver go",
	"d1-go-cgo=GODEBUG=netdns=cgo {go:d1resolver} -resolver cgo",
	"l1-raw-c={c:l1_timers}",
	"u1-raw-c={c:u1_udp} {c:u1_send} 1000000 64",
	"u1-net={go:u1net} -sender {c:u1_send}",
}

// rounds is how many rounds a workload runs in, by workload (1 if absent):
// each round runs every program of the workload once, in an order shuffled
// for the round (roundOrders), and a program's figures are the medians over
// the rounds, metric by metric. E1, U1, H1 and H1C run in rounds because their
// targets are judged on the median of at least 5 shuffled rounds (the load
// of a shared machine moves within a run, and a program run always first or
// last would meet it at one end; U1's share received moves with whatever
// else the 2 cores run); S1 and D1 because a run of theirs lasts under a
// second or so, where a moment's load would decide a figure.
var rounds = map[string]int{"e1": 5, "u1": 5, "h1": 5, "h1c": 5, "s1": 3, "d1": 5}

// roundOrders returns the order the n programs of a workload run in, for
// each of its rounds: the given order when there is one round (comparators
// first), else a permutation drawn for each round from seed, the same for
// the same seed.
func roundOrders(n, rounds int, seed uint64) [][]int {
	if rounds <= 1 {
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		return [][]int{order}
	}
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	orders := make([][]int, rounds)
	for i := range orders {
		orders[i] = rng.Perm(n)
	}
	return orders
}

// workloadGroups splits cmds, in runOrder's order, into runs of the same
// workload.
func workloadGroups(cmds []command) [][]command {
	var groups [][]command
	for i, c := range cmds {
		if i == 0 || workloadOf(c.name) != workloadOf(cmds[i-1].name) {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], c)
	}
	return groups
}

// loadAverage returns the one-minute load average, as /proc/loadavg gives
// it, or "?" when it cannot be read.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return parseLoadAverage(string(b))
}

// parseLoadAverage returns the first field of /proc/loadavg's text, or "?".
func parseLoadAverage(text string) string {
	if f := strings.Fields(text); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// roundsNote is the note under a workload's table that says how its rounds
// ran: how many, the seed of their orders, and the load average at each
// one's start.
func roundsNote(workload string, n int, seed uint64, loads []string) Note {
	return Note{Workload: workload, Text: fmt.Sprintf(
		"medians of %d rounds, [min–max] their spread; each round ran the programs in a shuffled order (-seed %d); load average (1 min) at each round's start: %s",
		n, seed, strings.Join(loads, ", "))}
}

// workloadOf returns the workload of a NAME=command argument or of a NAME:
// the part of NAME before its first "-".
func workloadOf(arg string) string {
	name, _, _ := strings.Cut(arg, "=")
	w, _, _ := strings.Cut(name, "-")
	return w
}

// keepOnly returns the NAME=command arguments of args whose workload is in
// only, a comma-separated list; all of args when only is empty.
func keepOnly(args []string, only string) []string {
	if only == "" {
		return args
	}
	keep := strings.Split(only, ",")
	return slices.DeleteFunc(slices.Clone(args), func(arg string) bool {
		return !slices.Contains(keep, workloadOf(arg))
	})
}

// retag renames the workload of results and notes printed by the command
// name when its workload carries a tag: under "t1@1e4-raw-c", result lines
// of workload T1 become T1@1e4, so that one program run with other
// parameters makes a table of its own. Other workloads are left as printed.
func retag(name string, rs []Result, ns []Note) {
	base, tag, ok := strings.Cut(workloadOf(name), "@")
	if !ok {
		return
	}
	for i := range rs {
		if strings.EqualFold(rs[i].Workload, base) {
			rs[i].Workload += "@" + tag
		}
	}
	for i := range ns {
		if strings.EqualFold(ns[i].Workload, base) {
			ns[i].Workload += "@" + tag
		}
	}
}

// runOrder returns the command-line arguments args in the order they run:
// grouped by workload (workloadOf), so that every program of a workload runs
// close in time to the others; groups in the order their workloads first
// appear, the arguments within a group in their given order.
func runOrder(args []string) []string {
	first := make(map[string]int)
	for i, arg := range args {
		if _, ok := first[workloadOf(arg)]; !ok {
			first[workloadOf(arg)] = i
		}
	}
	ordered := slices.Clone(args)
	slices.SortStableFunc(ordered, func(a, b string) int {
		return first[workloadOf(a)] - first[workloadOf(b)]
	})
	return ordered
}

// command is one program to run; its stdout holds result lines.
type command struct {
	name string
	env  []string // added to benchtable's own environment
	argv []string
}

// parseCommand parses "NAME=[VAR=value ...] program [arg ...]". Words are
// separated by white space (no quoting); the leading words of the form
// VAR=value are set in the program's environment. Words of the form {c:NAME}
// and {go:NAME} are left for expand.
func parseCommand(arg string) (command, error) {
	name, line, ok := strings.Cut(arg, "=")
	if !ok || strings.TrimSpace(name) == "" {
		return command{}, fmt.Errorf("command %q: want NAME=[VAR=value ...] program [arg ...]", arg)
	}
	c := command{name: name}
	words := strings.Fields(line)
	for len(words) > 0 && isEnvAssignment(words[0]) {
		c.env = append(c.env, words[0])
		words = words[1:]
	}
	if len(words) == 0 {
		return command{}, fmt.Errorf("command %q: no program", arg)
	}
	c.argv = words
	return c, nil
}

// isEnvAssignment reports whether w has the form VAR=value, VAR being a
// shell variable name.
func isEnvAssignment(w string) bool {
	v, _, ok := strings.Cut(w, "=")
	if !ok || v == "" || (v[0] >= '0' && v[0] <= '9') {
		return false
	}
	for _, r := range v {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// program is a program a command line names by its source: {c:NAME} is
// bench/c/NAME.c, {go:NAME} is ./bench/cmd/NAME.
type program struct {
	kind string // "c" or "go"
	name string
}

// parseProgram recognizes a {c:NAME} or {go:NAME} word.
func parseProgram(w string) (program, bool) {
	if len(w) < 2 || w[0] != '{' || w[len(w)-1] != '}' {
		return program{}, false
	}
	inner := w[1 : len(w)-1]
	kind, name, ok := strings.Cut(inner, ":")
	if !ok || (kind != "c" && kind != "go") || name == "" || strings.ContainsAny(name, "/{}") {
		return program{}, false
	}
	return program{kind: kind, name: name}, true
}

// source returns the path, from the module root, that p is built from.
func (p program) source() string {
	if p.kind == "c" {
		return filepath.Join("bench", "c", p.name+".c")
	}
	return "./" + filepath.Join("bench", "cmd", p.name)
}

// expand returns c with every {c:NAME} and {go:NAME} word of its argv
// replaced by the path build returns for it.
func expand(c command, build func(program) (string, error)) (command, error) {
	argv := make([]string, len(c.argv))
	for i, w := range c.argv {
		argv[i] = w
		if p, ok := parseProgram(w); ok {
			path, err := build(p)
			if err != nil {
				return command{}, fmt.Errorf("%s: %w", c.name, err)
			}
			argv[i] = path
		}
	}
	c.argv = argv
	return c, nil
}

// builder compiles programs into dir, each once. It is used from one
// goroutine.
type builder struct {
	cc  string
	dir string

	uvFlags    []string // nil until asked for
	uvFlagsErr error

	built map[program]buildResult
}

type buildResult struct {
	path string
	err  error
}

func newBuilder(cc, dir string) *builder {
	return &builder{cc: cc, dir: dir, built: make(map[program]buildResult)}
}

// build returns the path of p's binary, building it on first use. C
// programs are compiled with -O2 against libuv linked statically
// (pkg-config libuv-static); Go programs with go build, inside the
// program's directory when it holds a go.mod of its own (the gnet and nbio
// comparators, whose dependencies stay out of uvevent's go.mod).
func (b *builder) build(p program) (string, error) {
	if r, ok := b.built[p]; ok {
		return r.path, r.err
	}
	path := filepath.Join(b.dir, p.kind+"-"+p.name)
	var argv []string
	var err error
	switch p.kind {
	case "c":
		if _, err = os.Stat(p.source()); err != nil {
			break
		}
		var flags []string
		if flags, err = b.libuvFlags(); err != nil {
			break
		}
		argv = append([]string{b.cc, "-O2", "-o", path, p.source()}, flags...)
	case "go":
		argv = []string{"go", "build", "-o", path, p.source()}
		if _, serr := os.Stat(filepath.Join(p.source(), "go.mod")); serr == nil {
			// A module of its own (a comparator with dependencies that
			// uvevent's go.mod does not take): built inside it.
			if path, err = filepath.Abs(path); err == nil {
				argv = []string{"go", "build", "-C", p.source(), "-o", path, "."}
			}
		}
	}
	if err == nil {
		_, err = execute(command{name: "build " + p.source(), argv: argv}, cmdTimeout)
	}
	if err != nil {
		path = ""
	}
	b.built[p] = buildResult{path, err}
	return path, err
}

// libuvFlags returns the compiler and linker flags for libuv, linked
// statically.
func (b *builder) libuvFlags() ([]string, error) {
	if b.uvFlags == nil && b.uvFlagsErr == nil {
		out, err := exec.Command("pkg-config", "--static", "--cflags", "--libs", "libuv-static").Output()
		if err != nil {
			b.uvFlagsErr = fmt.Errorf("pkg-config libuv-static: %w", err)
		} else {
			b.uvFlags = strings.Fields(string(out))
		}
	}
	return b.uvFlags, b.uvFlagsErr
}
