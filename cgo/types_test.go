//go:build cgo

package uvcgo

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The pure-Go constants of types.go mirror the C enums.
func TestCompletionKindsMatchC(t *testing.T) {
	for name, v := range cConstants() {
		if v[0] != v[1] {
			t.Errorf("%s: Go %d, C %d", name, v[0], v[1])
		}
	}
}

// zstub_nocgo.go is what the generator makes of today's cgo files.
func TestNoCgoStubsUpToDate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "z.go")
	cmd := exec.Command("go", "run", "./internal/gennocgo", "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gennocgo: %v\n%s", err, b)
	}
	want, _ := os.ReadFile(out)
	got, err := os.ReadFile("zstub_nocgo.go")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatal("zstub_nocgo.go is stale: run go generate ./cgo/")
	}
}
