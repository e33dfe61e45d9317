//go:build !linux

package uv

import "syscall"

// checkSysProcAttr refuses every child here: a Process watches its child
// with a pidfd or waitid(2), which are Linux's (process_linux.go).
func checkSysProcAttr(*syscall.SysProcAttr) error {
	return unsupported("StartProcess (pidfd, waitid)")
}

// Never reached: StartProcess refuses before it forks.
func setPidFD(*syscall.SysProcAttr, *int) {}
func waitExited(int)                      {}
func reapLater(*Process, int) bool        { return false }
