//go:build !unix

package uvcgo

import "syscall"

// errnoName has no table of names on this system: errors read with the
// errno's text instead.
func errnoName(syscall.Errno) string { return "" }
