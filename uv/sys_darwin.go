package uv

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// tcpKeepIdle is the TCP option of the idle delay before keep-alive probes
// (TCP_KEEPALIVE on Darwin).
const tcpKeepIdle = unix.TCP_KEEPALIVE

// statTimes is where st keeps the times of the last access, change of the
// content and change of the status, in that order.
func statTimes(st *syscall.Stat_t) [3]*syscall.Timespec {
	return [3]*syscall.Timespec{&st.Atimespec, &st.Mtimespec, &st.Ctimespec}
}
