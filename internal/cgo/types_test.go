//go:build cgo

package uvcgo

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The pure-Go constants (types.go, types_io.go, types_sys.go) mirror C's.
func TestConstantsMatchC(t *testing.T) {
	for _, table := range []map[string][2]int{cConstants(), sysConstants(), udpConstants()} {
		for name, v := range table {
			if v[0] != v[1] {
				t.Errorf("%s: Go %d, C %d", name, v[0], v[1])
			}
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
		t.Fatal("zstub_nocgo.go is stale: run go generate ./internal/cgo/")
	}
}
