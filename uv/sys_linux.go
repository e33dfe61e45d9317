package uv

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Linux system calls that files built on every system make, each
// behind a name of its own; on the other systems (sys_other.go) each
// fails with syscall.ENOSYS, which matches errors.ErrUnsupported.

// tcpKeepIdle is the TCP option of the idle delay before keep-alive probes.
const tcpKeepIdle = unix.TCP_KEEPIDLE

// socket makes a non-blocking socket, closed on exec.
func socket(domain, typ, proto int) (int, error) {
	return unix.Socket(domain, typ|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, proto)
}

// socketpair makes a connected pair of non-blocking sockets, closed on exec.
func socketpair(domain, typ, proto int) ([2]int, error) {
	return unix.Socketpair(domain, typ|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, proto)
}

// socketpairBlocking makes a connected pair of blocking sockets, closed
// on exec (one end goes to a child, which reads it as it likes).
func socketpairBlocking(domain, typ, proto int) ([2]int, error) {
	return unix.Socketpair(domain, typ|unix.SOCK_CLOEXEC, proto)
}

// sockDomain is the address family of socket fd (getsockopt SO_DOMAIN).
func sockDomain(fd int) (int, error) {
	return unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
}

// msgCmsgCloexec is recvmsg(2)'s flag that makes the descriptors it
// receives close on exec.
const msgCmsgCloexec = unix.MSG_CMSG_CLOEXEC

// accept takes a connection waiting on fd, closed on exec, non-blocking if
// asked, with its peer's address in peer when peer is not nil. It makes
// no allocation (unix.Accept4 allocates room for an address and the
// address on every call, the last one finding nothing included).
func accept(fd int, nonblock bool, peer *unix.RawSockaddrAny) (int, error) {
	flags := unix.SOCK_CLOEXEC
	if nonblock {
		flags |= unix.SOCK_NONBLOCK
	}
	var n uint32
	var np *uint32
	if peer != nil {
		n, np = unix.SizeofSockaddrAny, &n
		peer.Addr.Family = unix.AF_UNSPEC
	}
	nfd, _, e := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(fd), uintptr(unsafe.Pointer(peer)), uintptr(unsafe.Pointer(np)), uintptr(flags), 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(nfd), nil
}

// getsockname reads socket fd's local address into rsa, with no
// allocation (package syscall's Getsockname allocates the address it
// gives).
func getsockname(fd int, rsa *unix.RawSockaddrAny) error {
	n := uint32(unix.SizeofSockaddrAny)
	_, _, e := unix.RawSyscall(unix.SYS_GETSOCKNAME, uintptr(fd), uintptr(unsafe.Pointer(rsa)), uintptr(unsafe.Pointer(&n)))
	if e != 0 {
		return e
	}
	return nil
}

// pipeCloexec makes a pipe whose ends are closed on exec.
func pipeCloexec(p *[2]int) error { return unix.Pipe2(p[:], unix.O_CLOEXEC) }

// gettid is the calling thread's id.
func gettid() int { return unix.Gettid() }

// fdatasync is fdatasync(2).
func fdatasync(fd int) error { return unix.Fdatasync(fd) }

// fileClone makes dst share src's blocks (ioctl FICLONE).
func fileClone(dst, src int) error { return unix.IoctlFileClone(dst, src) }

// futimens sets fd's times, as utimensat(fd, NULL, ts, 0) does (libuv's
// futime).
func futimens(fd int, ts *[2]unix.Timespec) error {
	_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), 0, uintptr(unsafe.Pointer(ts)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// recvmmsg reads up to n datagrams into msgs with one recvmmsg(2), without
// blocking.
func recvmmsg(fd int, msgs *mmsghdr, n int) (int, syscall.Errno) {
	got, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(msgs)), uintptr(n), 0, 0, 0)
	return int(got), errno
}

// recvfrom receives one datagram into p with recvfrom(2), its sender into
// from (*fromLen bytes long), without blocking (the socket is
// non-blocking): a longer datagram is cut to len(p), and n says what was
// copied.
func recvfrom(fd int, p []byte, from *unix.RawSockaddrAny, fromLen *uint32) (int, syscall.Errno) {
	n, _, errno := unix.Syscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), 0,
		uintptr(unsafe.Pointer(from)), uintptr(unsafe.Pointer(fromLen)))
	return int(n), errno
}

// getsockoptPeerName is getsockopt(SO_PEERNAME) into rsa, *n bytes long.
func getsockoptPeerName(fd int, rsa *unix.RawSockaddrAny, n *uint32) error {
	_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_PEERNAME,
		uintptr(unsafe.Pointer(rsa)), uintptr(unsafe.Pointer(n)), 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// getTermios is tcgetattr(3).
func getTermios(fd int) (*unix.Termios, error) { return unix.IoctlGetTermios(fd, unix.TCGETS) }

// setTermiosDrain is tcsetattr(3) with TCSADRAIN: output written so far
// goes out in the old mode.
func setTermiosDrain(fd int, t *unix.Termios) error { return unix.IoctlSetTermios(fd, unix.TCSETSW, t) }

// watchable refuses a descriptor epoll cannot watch (a regular file, a
// directory, /dev/null): libuv would abort the process at its first read,
// and the pure-Go driver's poller refuses it. Both drivers refuse it the
// same way, before anything is made of it: EPERM from epoll_ctl, or
// EBADF for no descriptor.
func watchable(fd int) error {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return os.NewSyscallError("epoll_create1", err)
	}
	defer unix.Close(ep)
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN}); err != nil {
		return fmt.Errorf("uv: descriptor %d cannot be watched as a stream: %w", fd, os.NewSyscallError("epoll_ctl", err))
	}
	return nil
}

// statTimes is where st keeps the times of the last access, change of the
// content and change of the status, in that order.
func statTimes(st *syscall.Stat_t) [3]*syscall.Timespec {
	return [3]*syscall.Timespec{&st.Atim, &st.Mtim, &st.Ctim}
}
