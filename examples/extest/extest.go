// Package extest is the test scaffolding the example programs' tests share:
// the driver list, a skip with its reason for a driver the build lacks, and
// one run of a program's run function in a goroutine, its output read line
// by line and every wait bounded. It is for tests only, not part of
// uvevent's API. It is not internal because examples/twins.sh runs each
// example's test, against its standard-library twin, from a module of its
// own.
package extest

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/uvevent/uvevent/reactor"
)

// Safety bounds every wait: a test that reaches it has hung, and fails.
const Safety = 30 * time.Second

// Drivers are the names of the drivers every example's test runs on.
var Drivers = []string{"libuv", "go"}

// NeedDriver skips the test when this build lacks the named driver, with
// the reason.
func NeedDriver(t testing.TB, name string) {
	t.Helper()
	var d reactor.Driver
	if err := d.Set(name); err != nil {
		t.Fatal(err)
	}
	r, err := reactor.New(reactor.Options{Driver: d})
	if errors.Is(err, reactor.ErrNoLibuv) {
		t.Skipf("the %s driver is not in this build: %v", name, err)
	} else if err != nil {
		t.Fatal(err)
	}
	r.Close()
}

// RunFunc is an example program's run: it runs with the command-line
// arguments args, writes its output to stdout, and returns once ctx is
// done or the program ends.
type RunFunc func(ctx context.Context, args []string, stdout io.Writer) error

// Program is one run of a program, started by Start.
type Program struct {
	// Out gives the program's output line by line; it is closed once run
	// has returned.
	Out <-chan string
	// Cancel ends the run's context: the program shuts down.
	Cancel context.CancelFunc

	returned chan struct{} // closed when run has returned, with err set
	err      error
	waited   bool
}

// Start skips the test when this build lacks driver, then runs run with
// args in a goroutine. The test's cleanup cancels the run, waits (within
// Safety) for run to return, and checks that it returned nil unless Wait
// did already. args carry the driver themselves (a twin has no -driver).
func Start(t testing.TB, driver string, run RunFunc, args ...string) *Program {
	t.Helper()
	NeedDriver(t, driver)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	out := make(chan string, 100)
	p := &Program{Out: out, Cancel: cancel, returned: make(chan struct{})}
	go func() {
		p.err = run(ctx, args, pw)
		pw.Close()
		close(p.returned)
	}()
	go func() {
		defer close(out)
		for sc := bufio.NewScanner(pr); sc.Scan(); {
			out <- sc.Text()
		}
		io.Copy(io.Discard, pr) // a line too long for the scanner
	}()
	t.Cleanup(func() {
		cancel()
		go p.discard()
		select {
		case <-p.returned:
			if p.err != nil && !p.waited {
				t.Errorf("run: %v", p.err)
			}
		case <-time.After(Safety):
			t.Errorf("run did not return")
		}
	})
	return p
}

// discard reads the rest of the output, so that the program never blocks
// writing it.
func (p *Program) discard() {
	for range p.Out {
	}
}

// Wait waits for run to return and fails the test unless it returned nil.
func (p *Program) Wait(t testing.TB) {
	t.Helper()
	p.waited = true
	select {
	case <-p.returned:
		if p.err != nil {
			t.Fatalf("run: %v", p.err)
		}
	case <-time.After(Safety):
		t.Fatal("run did not return")
	}
}

// Listening reads the program's first line, "listening on ADDR", returns
// ADDR, and lets the rest of the output go.
func (p *Program) Listening(t testing.TB) string {
	t.Helper()
	select {
	case line, ok := <-p.Out:
		if !ok {
			p.Wait(t)
			t.Fatal("run returned nil before it listened")
		}
		go p.discard()
		addr, found := strings.CutPrefix(line, "listening on ")
		if !found {
			t.Fatalf("first line %q, want listening on ADDR", line)
		}
		return strings.TrimSpace(addr)
	case <-time.After(Safety):
		t.Fatal("no line listening on ADDR")
	}
	return ""
}

// Expect reads lines until one starts with prefix, and returns it. Lines
// before it pass.
func (p *Program) Expect(t testing.TB, prefix string) string {
	t.Helper()
	deadline := time.After(Safety)
	for {
		select {
		case got, ok := <-p.Out:
			if !ok {
				t.Fatalf("output ended; want %q", prefix)
			}
			if strings.HasPrefix(got, prefix) {
				return got
			}
		case <-deadline:
			t.Fatalf("no line %q", prefix)
		}
	}
}

// ExpectAll reads lines until it has seen every line of want, in any order;
// other lines pass.
func (p *Program) ExpectAll(t testing.TB, want ...string) {
	t.Helper()
	deadline := time.After(Safety)
	missing := map[string]bool{}
	for _, w := range want {
		missing[w] = true
	}
	for len(missing) > 0 {
		select {
		case got, ok := <-p.Out:
			if !ok {
				t.Fatalf("output ended; missing %v", missing)
			}
			delete(missing, got)
		case <-deadline:
			t.Fatalf("no lines %v", missing)
		}
	}
}

// Next reads the next n lines and returns them (fewer if the output
// ends first).
func (p *Program) Next(t testing.TB, n int) []string {
	t.Helper()
	deadline := time.After(Safety)
	var got []string
	for len(got) < n {
		select {
		case line, ok := <-p.Out:
			if !ok {
				return got
			}
			got = append(got, line)
		case <-deadline:
			t.Fatalf("%d lines of %d before the safety deadline: %q", len(got), n, got)
		}
	}
	return got
}

// Rest waits for run to return, as Wait does, and returns the lines it
// printed that were not read yet.
func (p *Program) Rest(t testing.TB) []string {
	t.Helper()
	p.Wait(t)
	var rest []string
	for line := range p.Out {
		rest = append(rest, line)
	}
	return rest
}
