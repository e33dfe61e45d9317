// Command benchtable builds and runs the benchmark comparators (raw C libuv
// programs in bench/c, Go standard-library programs in bench/cmd), the
// commands it is given (our programs) and optionally `go test -bench`, then
// prints one markdown table per workload with ratios to the raw-c row. Run it
// from the module root.
//
// Usage:
//
//	benchtable [-cc gcc] [-out table.md] [-svg dir] [-gobench pattern -gopkgs ./...] [NAME=[VAR=value ...] program arg ...]...
//
// In a command line, the word {c:NAME} stands for bench/c/NAME.c and
// {go:NAME} for ./bench/cmd/NAME, built by benchtable before the command
// runs; leading VAR=value words go to the program's environment. The
// comparators are command lines of the same form (see comparators). NAME
// starts with the workload and a "-" (e1-uvevent): the programs of one
// workload run one after the other, ours right after its comparators. A
// workload with a tag (t1@1e4-uvevent) makes a table of its own for
// programs run with other parameters (see retag). It reports on stderr
// which program runs and how long the run has taken so far. Every
// non-empty line a program prints on stdout is a result line:
//
//	WORKLOAD IMPL key=value ...
//
// with decimal values (digits, an optional fraction).
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
	flag.Parse()
	if err := run(*cc, *out, *svgDir, *gobench, *gopkgs, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(cc, out, svgDir, gobench, gopkgs string, extra []string) error {
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
	for _, arg := range runOrder(slices.Concat(comparators, extra)) {
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
	start := time.Now()
	for i, c := range cmds {
		fmt.Fprintf(os.Stderr, "benchtable: [%d/%d, %s] %s\n", i+1, len(cmds),
			time.Since(start).Round(time.Second), c.name)
		rs, err := runRepeated(c, max(1, repeats[workloadOf(c.name)]))
		if err != nil {
			fail(err)
			continue
		}
		retag(c.name, rs)
		results = append(results, rs...)
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

	table := renderTables(results)
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

// runRepeated runs c n times and returns its results, the median of the
// runs metric by metric.
func runRepeated(c command, n int) ([]Result, error) {
	var runs [][]Result
	for range n {
		stdout, err := execute(c, cmdTimeout)
		if err != nil {
			return nil, err
		}
		rs, err := parseOutput(stdout)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", c.name, err)
		}
		runs = append(runs, rs)
	}
	rs, err := medianResults(runs)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.name, err)
	}
	return rs, nil
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
// result line; it must contain at least one.
func parseOutput(stdout []byte) ([]Result, error) {
	var rs []Result
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		r, err := parseResultLine(sc.Text())
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		return nil, errors.New("no result line in output")
	}
	return rs, nil
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
