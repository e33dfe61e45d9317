package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Every public package of the module has the znilsafe.go the generator
// makes of today's sources, and none where nothing is promoted: a kind that
// embeds a new event method, or a new kind, without `go generate` fails
// here.
func TestGeneratedFilesCurrent(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() || !isPublicPackage(dir) {
			continue
		}
		checked++
		want, err := Generate(dir, "github.com/uvevent/uvevent/event.ErrNilEvent")
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		got, err := os.ReadFile(filepath.Join(dir, "znilsafe.go"))
		switch {
		case want == nil && err == nil:
			t.Errorf("%s/znilsafe.go declares nothing the package needs: remove it", e.Name())
		case want != nil && !bytes.Equal(got, want):
			t.Errorf("%s/znilsafe.go is stale: run go generate ./%s/", e.Name(), e.Name())
		}
	}
	if checked < 5 {
		t.Fatalf("found %d public packages under %s: the walk is looking in the wrong place", checked, root)
	}
}

// isPublicPackage reports whether dir, a directory at the module's root,
// holds a package a program may import: Go files, outside internal/ and
// the trees that are not the module's API.
func isPublicPackage(dir string) bool {
	switch filepath.Base(dir) {
	case "internal", "third_party", "testdata", "bench", "cmd", "scripts", "docs":
		return false
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return len(names) > 0
}
