package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/reactor"
)

// safety bounds every wait: a test that reaches it has hung, and fails.
const safety = 30 * time.Second

var drivers = []string{"libuv", "go"}

// needDriver skips the test when this build lacks the driver, with the reason.
func needDriver(t *testing.T, name string) {
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

// program is one run of the program: its output line by line, and run's error.
type program struct {
	out  chan string
	done chan error
}

func start(t *testing.T, driver string, args ...string) *program {
	t.Helper()
	needDriver(t, driver)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pr, pw := io.Pipe()
	p := &program{out: make(chan string, 100), done: make(chan error, 1)}
	go func() {
		err := run(ctx, append([]string{"-driver", driver}, args...), pw)
		pw.Close()
		p.done <- err
	}()
	go func() {
		defer close(p.out)
		for sc := bufio.NewScanner(pr); sc.Scan(); {
			p.out <- sc.Text()
		}
	}()
	return p
}

// expect reads lines until it has seen every line of want, in any order (a
// child's exit may come before its output); other lines (ticks, other
// changes) pass.
func (p *program) expect(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.After(safety)
	missing := map[string]bool{}
	for _, w := range want {
		missing[w] = true
	}
	for len(missing) > 0 {
		select {
		case got, ok := <-p.out:
			if !ok {
				t.Fatalf("output ended; missing %v", missing)
			}
			delete(missing, got)
		case <-deadline:
			t.Fatalf("no lines %v", missing)
		}
	}
}

// ends waits for run to return nil after its last line, "bye".
func (p *program) ends(t *testing.T) {
	t.Helper()
	p.expect(t, "bye")
	for line := range p.out {
		if strings.HasPrefix(line, "tick") || line == "bye" {
			t.Errorf("%q after bye", line)
		}
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(safety):
		t.Fatal("run did not return")
	}
}

// TestNodePortWatchSpawnSIGINT sends SIGINT to the test process: safe here,
// because the program watches SIGINT (through os/signal) from before its
// first tick until it has handled the signal.
func TestNodePortWatchSpawnSIGINT(t *testing.T) {
	for _, d := range drivers {
		t.Run(d, func(t *testing.T) {
			dir := t.TempDir()
			p := start(t, d, "-dir", dir, "-cmd", "echo files: $(ls | wc -l)", "-tick", "5ms", "-limit", "1h")
			p.expect(t, "tick 1")
			p.expect(t, "tick 2")
			if err := os.WriteFile(filepath.Join(dir, "new"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			p.expect(t, "rename new")
			p.expect(t, "files: 1", "echo files: $(ls | wc -l): exit 0")
			if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			p.ends(t)
		})
	}
}

func TestNodePortLimit(t *testing.T) {
	for _, d := range drivers {
		t.Run(d, func(t *testing.T) {
			p := start(t, d, "-dir", t.TempDir(), "-tick", "1h", "-limit", "1ms")
			p.ends(t)
		})
	}
}

func TestNodePortCommandFails(t *testing.T) {
	for _, d := range drivers {
		t.Run(d, func(t *testing.T) {
			dir := t.TempDir()
			p := start(t, d, "-dir", dir, "-cmd", "exit 3", "-tick", "5ms", "-limit", "1h")
			p.expect(t, "tick 1")
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			p.expect(t, "rename sub")
			p.expect(t, "exit 3: exit 3")
			if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			p.ends(t)
		})
	}
}
