//go:build !linux

package uv

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// The Linux system calls of sys_linux.go, each failing here with
// syscall.ENOSYS, which matches errors.ErrUnsupported.

func socket(int, int, int) (int, error)                   { return -1, syscall.ENOSYS }
func socketpair(int, int, int) ([2]int, error)            { return [2]int{-1, -1}, syscall.ENOSYS }
func socketpairBlocking(int, int, int) ([2]int, error)    { return [2]int{-1, -1}, syscall.ENOSYS }
func sockDomain(int) (int, error)                         { return -1, syscall.ENOSYS }
func accept(int, bool, *unix.RawSockaddrAny) (int, error) { return -1, syscall.ENOSYS }
func getsockname(int, *unix.RawSockaddrAny) error         { return syscall.ENOSYS }
func pipeCloexec(*[2]int) error                           { return syscall.ENOSYS }
func gettid() int                                         { return -1 } // no thread id to give
func fdatasync(int) error                                 { return syscall.ENOSYS }
func fileClone(int, int) error                            { return syscall.ENOSYS }
func futimens(int, *[2]unix.Timespec) error               { return syscall.ENOSYS }
func recvmmsg(int, *mmsghdr, int) (int, syscall.Errno)    { return 0, syscall.ENOSYS }
func recvfrom(int, []byte, *unix.RawSockaddrAny, *uint32) (int, syscall.Errno) {
	return 0, syscall.ENOSYS
}
func getsockoptPeerName(int, *unix.RawSockaddrAny, *uint32) error { return syscall.ENOSYS }
func getTermios(int) (*unix.Termios, error)                       { return nil, syscall.ENOSYS }
func setTermiosDrain(int, *unix.Termios) error                    { return syscall.ENOSYS }
func watchable(int) error                                         { return unsupported("watching a stream descriptor (epoll)") }

// Never reached: a descriptor is received only by an IPC in a reactor's
// epoll set, which no descriptor joins here (poller_go_other.go).
const msgCmsgCloexec = 0
