package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/examples/extest"
)

// start runs the program on driver with args.
func start(t *testing.T, driver string, args ...string) *extest.Program {
	t.Helper()
	return extest.Start(t, driver, run, append([]string{"-driver", driver}, args...)...)
}

// ends waits for run to return nil after its last line, "bye".
func ends(t *testing.T, p *extest.Program) {
	t.Helper()
	p.ExpectAll(t, "bye")
	for line := range p.Out {
		if strings.HasPrefix(line, "tick") || line == "bye" {
			t.Errorf("%q after bye", line)
		}
	}
	p.Wait(t)
}

// TestNodePortWatchSpawnSIGINT sends SIGINT to the test process: safe here,
// because the program watches SIGINT (through os/signal) from before its
// first tick until it has handled the signal.
func TestNodePortWatchSpawnSIGINT(t *testing.T) {
	for _, d := range extest.Drivers {
		t.Run(d, func(t *testing.T) {
			dir := t.TempDir()
			p := start(t, d, "-dir", dir, "-cmd", "echo files: $(ls | wc -l)", "-tick", "5ms", "-limit", "1h")
			p.ExpectAll(t, "tick 1")
			p.ExpectAll(t, "tick 2")
			if err := os.WriteFile(filepath.Join(dir, "new"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			p.ExpectAll(t, "rename new")
			p.ExpectAll(t, "files: 1", "echo files: $(ls | wc -l): exit 0")
			if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			ends(t, p)
		})
	}
}

func TestNodePortLimit(t *testing.T) {
	for _, d := range extest.Drivers {
		t.Run(d, func(t *testing.T) {
			p := start(t, d, "-dir", t.TempDir(), "-tick", "1h", "-limit", "1ms")
			ends(t, p)
		})
	}
}

func TestNodePortCommandFails(t *testing.T) {
	for _, d := range extest.Drivers {
		t.Run(d, func(t *testing.T) {
			dir := t.TempDir()
			p := start(t, d, "-dir", dir, "-cmd", "exit 3", "-tick", "5ms", "-limit", "1h")
			p.ExpectAll(t, "tick 1")
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			p.ExpectAll(t, "rename sub")
			p.ExpectAll(t, "exit 3: exit 3")
			if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			ends(t, p)
		})
	}
}
