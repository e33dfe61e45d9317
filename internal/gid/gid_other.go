//go:build !amd64 && !arm64

package gid

import (
	"runtime"
	"strconv"
	"strings"
)

// Current identifies the calling goroutine by the number the runtime prints
// in stack traces. It is slow (about a microsecond) and used only where no
// assembly version exists.
func Current() ID {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	if i := strings.IndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	n, _ := strconv.ParseUint(s, 10, 64)
	return ID(n)
}
