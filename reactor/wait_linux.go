package reactor

import (
	"os"

	"golang.org/x/sys/unix"
)

// watchKernel puts the kernel's descriptor in the watcher's epoll set, the
// one descriptor of the loop that sits in Go's netpoller, for a streak of
// parks in Go; unwatchKernel takes it out when the loop blocks in the
// kernel again, so that I/O the loop waits for in the kernel never wakes
// the netpoller too. The set and the watcher are made on first use; if
// they cannot be, the loop falls back to looking every millisecond
// (polling) and watchKernel reports false.
func (r *Reactor) watchKernel() bool {
	if r.polling {
		return false
	}
	fd := r.kern.FD()
	if r.watched == fd {
		return true
	}
	if !r.watching && !r.startWatcher() {
		return false
	}
	r.unwatchKernel()
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	if err := unix.EpollCtl(r.outerFD, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		r.polling = true
		r.report(nil, "cannot watch the loop's descriptor; looking at it every millisecond instead", os.NewSyscallError("epoll_ctl", err))
		return false
	}
	r.watched = fd
	return true
}

func (r *Reactor) unwatchKernel() {
	if r.watched < 0 {
		return
	}
	var ev unix.EpollEvent
	unix.EpollCtl(r.outerFD, unix.EPOLL_CTL_DEL, r.watched, &ev) // a descriptor closed meanwhile left by itself
	r.watched = -1
}

// startWatcher makes the watcher's epoll set, puts it in Go's netpoller
// and starts the watcher goroutine (watch), resting until armed.
func (r *Reactor) startWatcher() bool {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err == nil {
		if err = unix.SetNonblock(fd, true); err != nil {
			unix.Close(fd)
		}
	}
	if err == nil {
		f := os.NewFile(uintptr(fd), "uvevent loop watcher")
		raw, err2 := f.SyscallConn()
		if err2 != nil {
			f.Close()
			err = err2
		} else {
			r.backend, r.outerFD, r.watching = f, fd, true
			r.drop.watcherStarted(f, r.fdRearm)
			go watch(raw, r.fdReady, r.wake, r.fdRearm)
			return true
		}
	}
	r.polling = true
	r.report(nil, "cannot watch the loop's descriptor; looking at it every millisecond instead", err)
	return false
}
