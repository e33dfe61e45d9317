package uv

import (
	"net"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// inotifyChildWatches counts the child watchers of recursive FSEvents on
// u's inotify descriptor.
func inotifyChildWatches(u *UvtReactor) int {
	n := 0
	u.Call(func() {
		in, ok := inotifies.Load(u.Reactor)
		if !ok {
			return
		}
		for _, l := range in.(*inotify).byWD {
			for _, w := range l.watchers {
				if w.child {
					n++
				}
			}
		}
	})
	return n
}

// uvtPoller is u's poller, nil if it has none.
func uvtPoller(u *UvtReactor) *goPoller {
	goPollers.Lock()
	defer goPollers.Unlock()
	return goPollers.m[u.Reactor]
}

// The Linux system calls the tests make themselves, each behind a name of
// its own; off Linux (export_other_test.go) each fails with
// syscall.ENOSYS, as sys_other.go's do.

// UvtSocket makes a blocking socket, closed on exec.
func UvtSocket(domain, typ, proto int) (int, error) {
	return unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
}

// UvtPipe2 is pipe2(2), with flags of unix.O_CLOEXEC and unix.O_NONBLOCK.
func UvtPipe2(p []int, flags int) error { return unix.Pipe2(p, flags) }

// UvtEventfd makes an eventfd, closed on exec; non-blocking with nonblock.
func UvtEventfd(nonblock bool) (int, error) {
	flags := unix.EFD_CLOEXEC
	if nonblock {
		flags |= unix.EFD_NONBLOCK
	}
	return unix.Eventfd(0, flags)
}

// UvtEpollCreate makes an epoll descriptor, closed on exec.
func UvtEpollCreate() (int, error) { return unix.EpollCreate1(unix.EPOLL_CLOEXEC) }

// UvtDup3 duplicates oldfd as newfd, closed on exec.
func UvtDup3(oldfd, newfd int) error { return unix.Dup3(oldfd, newfd, unix.O_CLOEXEC) }

// UvtTgkill sends sig to thread tid of process pid.
func UvtTgkill(pid, tid int, sig syscall.Signal) error { return unix.Tgkill(pid, tid, sig) }

// UvtReaperRunning reports whether the children's reaper has a set (and
// its goroutine) now.
func UvtReaperRunning() bool {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	return reaper.cur != nil
}

// UvtReaperFD returns the descriptor of the children's reaper's epoll set,
// or -1 when there is none: a descriptor of the program's that comes with
// the first child and goes 100 ms after the last, which a test comparing
// descriptors before and after leaves out.
func UvtReaperFD() int {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	if reaper.cur == nil {
		return -1
	}
	return reaper.cur.epfd
}

// UvtConnectUDP connects u's socket to to with connect(2), behind the
// UDP's back (it has no Connect): the kernel then reports the ICMP errors
// of what u sends there to u's receiver, as to a connected socket of
// package net's.
func UvtConnectUDP(t *testing.T, u *UDP, to *net.UDPAddr) {
	t.Helper()
	var err error
	UvtMust(t, u.e.r.Call(func() {
		fd := -1
		switch e := u.e.drv.(type) {
		case *goUDP:
			fd = e.fd
		case *udpEvent:
			fd, err = e.loop.Fileno(e.h)
		}
		if err == nil {
			err = unix.Connect(fd, &unix.SockaddrInet4{Port: to.Port, Addr: [4]byte(to.IP.To4())})
		}
	}))
	UvtMust(t, err)
}
