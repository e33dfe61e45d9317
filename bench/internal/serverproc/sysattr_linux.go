package serverproc

import "syscall"

// sysProcAttr gives the server a process group of its own and has the
// kernel kill it should its parent die.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
