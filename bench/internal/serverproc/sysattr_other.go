//go:build !linux

package serverproc

import "syscall"

// sysProcAttr gives the server a process group of its own (no parent-death
// signal off Linux).
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
