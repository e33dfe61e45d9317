package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/examples/extest"
)

// start runs the program on driver with args.
func start(t *testing.T, driver string, args ...string) *extest.Program {
	t.Helper()
	return extest.Start(t, driver, run, append([]string{"-driver", driver}, args...)...)
}

// appendTo appends s to the file name, making it if it is not there.
func appendTo(t *testing.T, name, s string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestTailFollows follows two files, one missing at the start, through
// appends, a truncation and a rotation (the file renamed, then made anew),
// on each driver, watching the directory and polling: each step is taken
// once the output of the one before it is there, and the output is
// exactly what tail -F says (headers naming the file whose lines follow).
func TestTailFollows(t *testing.T) {
	for _, d := range extest.Drivers {
		for _, mode := range []string{"watch", "poll"} {
			t.Run(d+"/"+mode, func(t *testing.T) {
				dir := t.TempDir()
				a, b := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
				appendTo(t, a, "before the start, not printed\n")
				args := []string{a, b}
				if mode == "poll" {
					args = append([]string{"-poll", "5ms"}, args...)
				}
				p := start(t, d, args...)
				step := func(what string, do func(), want ...string) {
					t.Helper()
					if do != nil {
						do()
					}
					if diff := cmp.Diff(want, p.Next(t, len(want))); diff != "" {
						t.Fatalf("%s: output (-want +got):\n%s", what, diff)
					}
				}
				step("the start", nil, "[tail] "+a+": following", "[tail] "+b+": not there yet, waiting for it")
				step("an append", func() { appendTo(t, a, "a1\n") }, "==> "+a+" <==", "a1")
				step("the missing file made", func() { appendTo(t, b, "b1\n") },
					"[tail] "+b+": following a new file", "==> "+b+" <==", "b1")
				step("an append", func() { appendTo(t, a, "a2\na3\n") }, "==> "+a+" <==", "a2", "a3")
				step("a truncation", func() {
					if err := os.Truncate(a, 0); err != nil {
						t.Fatal(err)
					}
				}, "[tail] "+a+": file truncated")
				step("an append after it", func() { appendTo(t, a, "a4\n") }, "a4")
				step("a rotation", func() {
					if err := os.Rename(a, a+".1"); err != nil {
						t.Fatal(err)
					}
					appendTo(t, a, "a5\n")
				}, "[tail] "+a+": following a new file", "a5")
				step("an append to the new file", func() { appendTo(t, a, "a6\n") }, "a6")
				step("an append to the other", func() { appendTo(t, b, "b2\n") }, "==> "+b+" <==", "b2")
				p.Cancel()
				if rest := p.Rest(t); len(rest) > 0 {
					t.Errorf("more output after the last step: %q", rest)
				}
			})
		}
	}
}

func TestTailNeedsAFile(t *testing.T) {
	if err := run(context.Background(), nil, io.Discard); err == nil {
		t.Fatal("run with no file: nil error")
	}
}
