// Command benchtable builds and runs the benchmark comparators (raw C libuv
// programs in bench/c, Go standard-library programs in bench/cmd), the
// commands it is given (our programs) and optionally `go test -bench`, then
// prints one markdown table per workload with ratios to the raw-c row. Run it
// from the module root.
//
// Usage:
//
//	benchtable [-cc gcc] [-out table.md] [-svg dir] [-only e1,t1] [-e1-rounds 5] [-seed N] [-gobench pattern -gopkgs ./...] [NAME=[VAR=value ...] program arg ...]...
//
// In a command line, the word {c:NAME} stands for bench/c/NAME.c and
// {go:NAME} for ./bench/cmd/NAME, built by benchtable before the command
// runs; leading VAR=value words go to the program's environment. The
// comparators are command lines of the same form (see comparators). NAME
// starts with the workload and a "-" (e1-uvevent): the programs of one
// workload run one after the other, ours right after its comparators; a
// workload that runs in rounds (see rounds: E1, U1, S1, D1) runs all its
// programs once per round, in an order shuffled each round (seeded by
// -seed, printed), and its figures are the medians over the rounds, with
// their spread, the load average at each round's start noted under its
// table. A workload with a tag (t1@1e4-uvevent) makes a table of its own
// for programs run with other parameters (see retag). It reports on stderr
// which program runs and how long the run has taken so far. Every
// non-empty line a program prints on stdout is a result line:
//
//	WORKLOAD IMPL key=value ...
//
// with decimal values (digits, an optional fraction), or a note for the
// reader of the workload's table, printed under it once:
//
//	# WORKLOAD text
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

const (
	cmdTimeout    = 5 * time.Minute
	goTestTimeout = 30 * time.Minute
)

func main() {
	cc := flag.String("cc", "gcc", "C compiler for bench/c/*.c")
	out := flag.String("out", "", "also write the markdown tables to this file")
	svgDir := flag.String("svg", "", "also draw the plots (see plots) as SVG files into this directory")
	gobench := flag.String("gobench", "", "if set, run go test -bench with this pattern")
	gopkgs := flag.String("gopkgs", "./...", "packages for -gobench (space separated)")
	e1Rounds := flag.Int("e1-rounds", rounds["e1"], "rounds of E1 (the E1 targets are judged on at least 5)")
	seed := flag.Uint64("seed", 0, "seed of the rounds' shuffled orders (0: from the clock)")
	only := flag.String("only", "", "run only these workloads (comma separated, as in NAME: e1,e1@scale)")
	flag.Parse()
	rounds["e1"] = max(1, *e1Rounds)
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	fmt.Fprintf(os.Stderr, "benchtable: rounds shuffled with -seed %d\n", *seed)
	if err := run(*cc, *out, *svgDir, *gobench, *gopkgs, *seed, keepOnly(slices.Concat(comparators, flag.Args()), *only)); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

// run runs the programs of args, NAME=command arguments, and -gobench.
func run(cc, out, svgDir, gobench, gopkgs string, seed uint64, args []string) error {
	if _, err := os.Stat(filepath.Join("bench", "c")); err != nil {
		return fmt.Errorf("run from the module root: %w", err)
	}
	tmp, err := os.MkdirTemp("", "benchtable-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var failures []error
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		failures = append(failures, err)
	}

	// Build everything first, so that no compiler runs between the
	// programs of a workload.
	b := newBuilder(cc, tmp)
	var cmds []command
	for _, arg := range runOrder(args) {
		c, err := parseCommand(arg)
		if err == nil {
			c, err = expand(c, b.build)
		}
		if err != nil {
			fail(err)
			continue
		}
		cmds = append(cmds, c)
	}
	var results []Result
	var notes []Note
	start := time.Now()
	total := 0
	for _, g := range workloadGroups(cmds) {
		total += len(g) * max(1, rounds[workloadOf(g[0].name)])
	}
	done := 0
	for _, g := range workloadGroups(cmds) {
		n := max(1, rounds[workloadOf(g[0].name)])
		runs := make([][][]Result, len(g))
		var loads []string
		for _, order := range roundOrders(len(g), n, seed) {
			loads = append(loads, loadAverage())
			for _, i := range order {
				done++
				fmt.Fprintf(os.Stderr, "benchtable: [%d/%d, %s] %s\n", done, total,
					time.Since(start).Round(time.Second), g[i].name)
				rs, ns, err := runOnce(g[i])
				if err != nil {
					fail(err)
					continue
				}
				runs[i] = append(runs[i], rs)
				notes = append(notes, ns...)
			}
		}
		workloads := make(map[string]bool)
		for i, c := range g {
			if len(runs[i]) == 0 {
				continue
			}
			rs, err := medianResults(runs[i])
			if err != nil {
				fail(fmt.Errorf("%s: %v", c.name, err))
				continue
			}
			for _, r := range rs {
				if !workloads[r.Workload] {
					workloads[r.Workload] = true
					if n > 1 {
						notes = append(notes, roundsNote(r.Workload, n, seed, loads))
					}
				}
			}
			results = append(results, rs...)
		}
	}

	if gobench != "" {
		fmt.Fprintf(os.Stderr, "benchtable: [%s] go test -bench %s\n", time.Since(start).Round(time.Second), gobench)
		argv := append([]string{"go", "test", "-run", "^$", "-bench", gobench, "-benchmem"},
			strings.Fields(gopkgs)...)
		stdout, err := execute(command{name: "go test -bench", argv: argv}, goTestTimeout)
		if err != nil {
			fail(err)
		}
		// Keep whatever benchmarks completed even if some package failed.
		results = append(results, parseBenchOutput(stdout)...)
	}

	table := renderTables(results, notes)
	fmt.Print(table)
	if svgDir != "" {
		for _, f := range plots(results) {
			path := filepath.Join(svgDir, f.name)
			if err := os.WriteFile(path, []byte(f.svg), 0o644); err != nil {
				fail(err)
				continue
			}
			fmt.Fprintf(os.Stderr, "benchtable: wrote %s\n", path)
		}
	}
	fmt.Fprintf(os.Stderr, "benchtable: done in %s\n", time.Since(start).Round(time.Second))
	if out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			fail(err)
		}
	}
	if len(failures) > 0 {
		return fmt.Errorf("%d failure(s)", len(failures))
	}
	return nil
}

// runOnce runs c and returns its results and notes, retagged (retag).
func runOnce(c command) ([]Result, []Note, error) {
	stdout, err := execute(c, cmdTimeout)
	if err != nil {
		return nil, nil, err
	}
	rs, ns, err := parseOutput(stdout)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", c.name, err)
	}
	retag(c.name, rs, ns)
	return rs, ns, nil
}

// execute runs c with a timeout and returns its stdout. On failure the error
// includes the command's stderr.
func execute(c command, timeout time.Duration) ([]byte, error) {
	fmt.Fprintf(os.Stderr, "benchtable: %s: %s\n", c.name, strings.Join(slices.Concat(c.env, c.argv), " "))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	if len(c.env) > 0 {
		cmd.Env = append(os.Environ(), c.env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %v", timeout)
	}
	if err != nil {
		return stdout.Bytes(), fmt.Errorf("%s failed: %v\n%s%s", c.name, err, stderr.String(), stdout.String())
	}
	os.Stderr.Write(stdout.Bytes())
	return stdout.Bytes(), nil
}

// parseOutput parses every non-empty line of a comparator's stdout as a
// note ("# WORKLOAD text") or a result line; it must contain at least one
// result line.
func parseOutput(stdout []byte) ([]Result, []Note, error) {
	var rs []Result
	var ns []Note
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		if n, ok := parseNoteLine(sc.Text()); ok {
			ns = append(ns, n)
			continue
		}
		r, err := parseResultLine(sc.Text())
		if err != nil {
			return nil, nil, err
		}
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		return nil, nil, errors.New("no result line in output")
	}
	return rs, ns, nil
}

// parseBenchOutput extracts the benchmark lines from `go test -bench`
// output, using the last path element of the preceding "pkg:" line as impl.
func parseBenchOutput(stdout []byte) []Result {
	var rs []Result
	pkg := "go-test"
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = filepath.Base(strings.TrimSpace(p))
			continue
		}
		if r, ok := parseBenchLine(line, pkg); ok {
			rs = append(rs, r)
		}
	}
	return rs
}
