// Command benchtable builds and runs the benchmark comparators (raw C libuv
// programs in bench/c, Go comparators in bench/cmd, extra commands and
// optionally `go test -bench`), then prints one markdown table per workload
// with ratios to the raw-c row. Run it from the module root.
//
// Usage:
//
//	benchtable [-cc gcc] [-out table.md] [-gobench pattern -gopkgs ./...] [NAME=cmd arg ...]...
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
	"strings"
	"time"
)

const (
	cmdTimeout     = 5 * time.Minute
	goTestTimeout  = 30 * time.Minute
	cSourcesGlob   = "bench/c/*.c"
	goCmdDirPrefix = "./bench/cmd/"
)

// goComparators are the Go programs under bench/cmd that are built and run.
var goComparators = []string{"t1afterfunc", "x1chan"}

// command is one program to run; its stdout holds result lines.
type command struct {
	name string
	argv []string
}

func main() {
	cc := flag.String("cc", "gcc", "C compiler for bench/c/*.c")
	out := flag.String("out", "", "also write the markdown tables to this file")
	gobench := flag.String("gobench", "", "if set, run go test -bench with this pattern")
	gopkgs := flag.String("gopkgs", "./...", "packages for -gobench (space separated)")
	flag.Parse()
	if err := run(*cc, *out, *gobench, *gopkgs, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(cc, out, gobench, gopkgs string, extra []string) error {
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

	cmds, err := buildAll(cc, tmp, fail)
	if err != nil {
		return err
	}
	for _, arg := range extra {
		name, line, ok := strings.Cut(arg, "=")
		argv := strings.Fields(line)
		if !ok || name == "" || len(argv) == 0 {
			fail(fmt.Errorf("extra command %q: want NAME=cmd arg ...", arg))
			continue
		}
		cmds = append(cmds, command{name: name, argv: argv})
	}

	var results []Result
	for _, c := range cmds {
		stdout, err := execute(c, cmdTimeout)
		if err != nil {
			fail(err)
			continue
		}
		rs, err := parseOutput(stdout)
		if err != nil {
			fail(fmt.Errorf("%s: %v", c.name, err))
			continue
		}
		results = append(results, rs...)
	}

	if gobench != "" {
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

// buildAll compiles every bench/c/*.c program and every Go comparator into
// dir and returns the commands to run them. Build failures are reported via
// fail and the program is skipped.
func buildAll(cc, dir string, fail func(error)) ([]command, error) {
	sources, err := filepath.Glob(cSourcesGlob)
	if err != nil {
		return nil, err
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("no %s found; run from the module root", cSourcesGlob)
	}
	pc, err := exec.Command("pkg-config", "--static", "--cflags", "--libs", "libuv-static").Output()
	if err != nil {
		return nil, fmt.Errorf("pkg-config libuv-static: %w", err)
	}
	uvFlags := strings.Fields(string(pc))

	var cmds []command
	for _, src := range sources {
		name := strings.TrimSuffix(filepath.Base(src), ".c")
		bin := filepath.Join(dir, name)
		argv := append([]string{cc, "-O2", "-o", bin, src}, uvFlags...)
		if _, err := execute(command{name: "build " + src, argv: argv}, cmdTimeout); err != nil {
			fail(err)
			continue
		}
		cmds = append(cmds, command{name: "c/" + name, argv: []string{bin}})
	}
	for _, name := range goComparators {
		bin := filepath.Join(dir, "go-"+name)
		argv := []string{"go", "build", "-o", bin, goCmdDirPrefix + name}
		if _, err := execute(command{name: "build " + name, argv: argv}, cmdTimeout); err != nil {
			fail(err)
			continue
		}
		cmds = append(cmds, command{name: "go/" + name, argv: []string{bin}})
	}
	return cmds, nil
}

// execute runs c with a timeout and returns its stdout. On failure the error
// includes the command's stderr.
func execute(c command, timeout time.Duration) ([]byte, error) {
	fmt.Fprintf(os.Stderr, "benchtable: %s: %s\n", c.name, strings.Join(c.argv, " "))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
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
