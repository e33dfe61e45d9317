//go:build !linux

package uv

import (
	"errors"
	"fmt"
	"runtime"
)

// unsupported is the error of what this package does with a Linux
// interface (epoll, inotify, pidfd...) asked for on another system: it
// matches errors.ErrUnsupported.
func unsupported(what string) error {
	return fmt.Errorf("uv: %s needs Linux, not %s: %w", what, runtime.GOOS, errors.ErrUnsupported)
}
