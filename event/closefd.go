//go:build !windows

package event

import "syscall"

// closeFD closes the descriptor of an event with CloseFD.
func closeFD(fd int) { syscall.Close(fd) }
