package uv

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// checkSysProcAttr refuses attributes StartProcess cannot honour: a PidFD,
// which is the Process's own.
func checkSysProcAttr(attr *syscall.SysProcAttr) error {
	if attr != nil && attr.PidFD != nil {
		return fmt.Errorf("uv: StartProcess: SysProcAttr.PidFD is the Process's own: %w", syscall.EINVAL)
	}
	return nil
}

// setPidFD asks fork for a pidfd of the child, written to *pidfd.
func setPidFD(sys *syscall.SysProcAttr, pidfd *int) { sys.PidFD = pidfd }

// waitExited blocks until the child pid has ended, without reaping it
// (waitid with WNOWAIT).
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != syscall.EINTR {
			return
		}
	}
}
