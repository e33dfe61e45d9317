package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/uvevent/uvevent/examples/extest"
)

// start runs the program on driver with args.
func start(t *testing.T, driver string, args ...string) *extest.Program {
	t.Helper()
	return extest.Start(t, driver, run, append([]string{"-driver", driver}, args...)...)
}

func TestRerunRestartsOnChange(t *testing.T) {
	for _, d := range extest.Drivers {
		t.Run(d, func(t *testing.T) {
			dir := t.TempDir()
			deep := filepath.Join(dir, "a", "b")
			if err := os.MkdirAll(deep, 0o755); err != nil {
				t.Fatal(err)
			}
			p := start(t, d, "-dir", dir, "-debounce", "10ms",
				"echo run; ls -R "+dir+" | grep -c file; sleep 60")
			p.Expect(t, "run")
			p.Expect(t, "0")

			// a burst of changes deep down: one restart
			for _, name := range []string{"file1", "file2", "file3"} {
				if err := os.WriteFile(filepath.Join(deep, name), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p.Expect(t, "[rerun] exit")
			p.Expect(t, "run")
			p.Expect(t, "3")

			// a directory made after the start is watched too
			if err := os.Mkdir(filepath.Join(dir, "new"), 0o755); err != nil {
				t.Fatal(err)
			}
			p.Expect(t, "[rerun] exit")
			p.Expect(t, "run")
			p.Expect(t, "3")
			if err := os.WriteFile(filepath.Join(dir, "new", "file4"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			p.Expect(t, "[rerun] exit")
			p.Expect(t, "run")
			p.Expect(t, "4")
		})
	}
}

// The watched directory removed: rerun says so, ends the command and
// returns.
func TestRerunExitsWhenTheDirectoryGoes(t *testing.T) {
	for _, d := range extest.Drivers {
		t.Run(d, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "w")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			p := start(t, d, "-dir", dir, "-debounce", "10ms", "echo run; sleep 60")
			p.Expect(t, "run")
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			p.Expect(t, "[rerun] the watched directory is gone")
			p.Expect(t, "[rerun] exit")
			p.Wait(t)
		})
	}
}

func TestRerunNeedsACommand(t *testing.T) {
	if err := run(context.Background(), []string{"-dir", t.TempDir()}, io.Discard); err == nil {
		t.Fatal("run with no command: nil error")
	}
}
