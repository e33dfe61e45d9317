//go:build cgo

package uvcgo

import "testing"

// The pure-Go constants of types_sys.go are libuv's and the C library's.
func TestSysConstantsMatchC(t *testing.T) {
	for name, v := range sysConstants() {
		if v[0] != v[1] {
			t.Errorf("%s: Go %d, C %d", name, v[0], v[1])
		}
	}
}
