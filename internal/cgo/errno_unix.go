//go:build unix

package uvcgo

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// errnoName is the errno's symbolic name ("ENOENT"), or "" when it has none.
func errnoName(e syscall.Errno) string { return unix.ErrnoName(e) }
