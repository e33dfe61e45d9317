package uv

import (
	"net"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// This file is the libuv driver's unopened connection: a TCP connection
// a listener accepted is left unopened in libuv (internal/cgo/stream.c's
// uvev__accepted) and served through its lanes, the read lane's file
// owning the socket itself (no duplicate), until something needs libuv: a
// Start, a read parked on the loop, a write libuv must queue, a shutdown,
// keep-alive. Only then is it opened in a uv_tcp_t (openInLibuv), over a
// duplicate of the socket when the read lane's file holds it (the lane and
// libuv then own one descriptor each, as a connection opened at once
// does), over the socket itself otherwise. A connection served by
// blocking Reads and Writes only (net/http's) thus costs no uv_tcp_t, no
// ioctl(FIONBIO), no duplicate with its F_DUPFD_CLOEXEC and close, and no
// EPOLL_CTL_DEL at its close.

// lazySock is an unopened connection's socket: its descriptor, owned by
// the lazySock until the read lane's file takes it (f) or libuv does
// (openInLibuv, without a lane), and closed once, by close: the IO's close
// on the loop, the caller of the Close that closed the IO (the lane's file
// handed back), or the cleanup of a reactor dropped without Close
// (kind.Host.KeepFile), whichever comes first.
//
// A read lane's duplicate of an opened connection's socket is one too
// (uvStream.laneFile): f made at once, and freed, its place in the
// duplicates' budget, given back at its Close. Either is the lane's
// release (readLane.release).
type lazySock struct {
	fd     int
	f      *os.File // the read lane's file, which owns fd, once made (on the loop, or by the goroutine of the Accept that takes the connection: makeAcceptedLane)
	done   atomic.Bool
	keeper kind.FileKeeper // of the reactor's dropped-reactor cleanup, which keeps it (KeepFile) until it is closed
	freed  *atomic.Bool    // a duplicate's: its place in the budget given back (returnLaneDup); nil for a socket
}

// Close closes the socket, once (the read lane's file when it has one).
// Safe from any goroutine; a second call does nothing.
func (x *lazySock) Close() error {
	if !x.done.CompareAndSwap(false, true) {
		return nil
	}
	var err error
	if x.f != nil {
		err = x.f.Close()
	} else {
		err = unix.Close(x.fd)
	}
	x.keeper.ForgetFile(x)
	if x.freed != nil {
		returnLaneDup(x.freed)
	}
	return err
}

// lazyOpens counts the unopened connections opened in libuv, in every
// reactor (tests).
var lazyOpens atomic.Int64

// adoptLazyIO makes the IO of fd, a TCP connection the listener accepted,
// left unopened in libuv; on error fd is still the caller's. On the loop.
func adoptLazyIO(r *reactor.Reactor, fd int) (*IO, error) {
	s := newUVStream(r, "tcp")
	if err := openCore(r, &s.core, s, 0, func(*uvcgo.Loop, uint64) (uvcgo.Handle, error) { return 0, nil }); err != nil {
		return nil, err
	}
	x := &lazySock{fd: fd}
	x.keeper = s.host.KeepFile(x) // a reactor dropped without Close closes it
	s.lz = x
	return newIO(s), nil
}

// unopened reports a connection not opened in libuv, still open.
func (s *uvStream) unopened() bool { return s.h == 0 && s.lz != nil }

// openInLibuv opens an unopened connection in libuv, for what needs it;
// nothing for one opened already. On the loop.
func (s *uvStream) openInLibuv() error {
	if s.h != 0 {
		return nil
	}
	x := s.lz
	if x == nil || s.closed {
		return ErrClosed
	}
	fd := x.fd
	if x.f != nil {
		// The lane's file keeps the socket: libuv gets a duplicate.
		d, err := unix.FcntlInt(uintptr(x.fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return os.NewSyscallError("fcntl", err)
		}
		fd = d
	}
	h, err := s.loop.OpenTCPFD(uint64(s.id), fd)
	if err != nil {
		if fd != x.fd {
			unix.Close(fd)
		}
		return err
	}
	s.h = h
	lazyOpens.Add(1)
	if x.f == nil {
		// libuv owns the socket now: its close closes it, and so does
		// the loop of a reactor dropped without Close.
		x.done.Store(true)
		x.keeper.ForgetFile(x)
		s.lz = nil
	}
	return nil
}

// closeUnopened closes an unopened connection's socket, as the IO's close
// asks (in place of closeHandle, which a connection with no handle never
// reaches), and retires its entry in the reactor's table at once: no close
// callback of libuv's will. The read lane's file goes to the caller of the
// Close closing the IO when it takes it (handBack), as closeHandle leaves
// it; an Abort (or SetLinger(0)) resets the connection first, and reports
// the writes queued behind a held write lane, which a reset never hands to
// the transport (dropUnsent). Nothing else can be queued (a write handed
// over opens the connection), so nothing lingers. On the loop.
func (s *uvStream) closeUnopened() {
	x := s.lz
	s.lz = nil
	if mode, _ := s.closeMode(); mode == closeReset {
		reset := setNoLinger(x.fd) == nil
		s.dropped(s, s.unsent(), reset, ErrAborted)
	}
	if l := s.rlane.Load(); l == nil || !l.handBack() {
		x.Close()
	}
	s.host.DropHandle(s.id)
}

// The transport's calls on an unopened connection: what the socket can do
// itself is done on it, the rest opens it in libuv first.

func (s *uvStream) lazyTryWrite(p []byte) (int, error) {
	n, err := ignoringEINTR(func() (int, error) { return syscall.Write(s.lz.fd, p) })
	switch {
	case err == syscall.EAGAIN:
		return 0, nil
	case err != nil:
		return 0, os.NewSyscallError("write", err)
	}
	return n, nil
}

func (s *uvStream) lazyNoDelay(on bool) error { return setNoDelay(s.lz.fd, on) }

func (s *uvStream) lazyAddresses() (local, remote net.Addr) {
	return socketAddresses(s.lz.fd, true)
}

// lazyLaneFile makes the socket itself the read lane's file: no
// duplicate, so no place in the duplicates' budget. The file is closed by
// the lazySock's Close (the lane's release).
func (s *uvStream) lazyLaneFile() (*os.File, *lazySock) {
	x := s.lz
	x.f = newLaneFile(x.fd, s.transport)
	return x.f, x
}
