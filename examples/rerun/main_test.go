package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uvevent/uvevent/reactor"
)

// safety bounds every wait: a test that reaches it has hung, and fails.
const safety = 30 * time.Second

var drivers = []string{"libuv", "go"}

// lines runs the program with args and gives its output line by line; the
// cleanup cancels it and checks that it returned nil. A driver this build
// lacks skips the test with the reason.
func lines(t *testing.T, driver string, args ...string) <-chan string {
	t.Helper()
	needDriver(t, driver)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"-driver", driver}, args...), pw)
		pw.Close()
		done <- err
	}()
	out := make(chan string, 100)
	go func() {
		defer close(out)
		for sc := bufio.NewScanner(pr); sc.Scan(); {
			out <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cancel()
		for range out {
		}
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return out
}

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

// expect reads lines until one starts with want. Lines before it are let
// pass: how a burst of changes splits into restarts depends on timing.
func expect(t *testing.T, out <-chan string, want string) {
	t.Helper()
	deadline := time.After(safety)
	for {
		select {
		case got, ok := <-out:
			if !ok {
				t.Fatalf("output ended; want %q", want)
			}
			if strings.HasPrefix(got, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no line %q", want)
		}
	}
}

func TestRerunRestartsOnChange(t *testing.T) {
	for _, d := range drivers {
		t.Run(d, func(t *testing.T) {
			dir := t.TempDir()
			deep := filepath.Join(dir, "a", "b")
			if err := os.MkdirAll(deep, 0o755); err != nil {
				t.Fatal(err)
			}
			out := lines(t, d, "-dir", dir, "-debounce", "10ms",
				"echo run; ls -R "+dir+" | grep -c file; sleep 60")
			expect(t, out, "run")
			expect(t, out, "0")

			// a burst of changes deep down: one restart
			for _, name := range []string{"file1", "file2", "file3"} {
				if err := os.WriteFile(filepath.Join(deep, name), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			expect(t, out, "[rerun] exit")
			expect(t, out, "run")
			expect(t, out, "3")

			// a directory made after the start is watched too
			if err := os.Mkdir(filepath.Join(dir, "new"), 0o755); err != nil {
				t.Fatal(err)
			}
			expect(t, out, "[rerun] exit")
			expect(t, out, "run")
			expect(t, out, "3")
			if err := os.WriteFile(filepath.Join(dir, "new", "file4"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			expect(t, out, "[rerun] exit")
			expect(t, out, "run")
			expect(t, out, "4")
		})
	}
}

func TestRerunNeedsACommand(t *testing.T) {
	if err := run(context.Background(), []string{"-dir", t.TempDir()}, io.Discard); err == nil {
		t.Fatal("run with no command: nil error")
	}
}
