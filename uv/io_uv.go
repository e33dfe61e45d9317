package uv

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// This file is an IO's libuv half: the event is a uvStream, a libuv stream
// handle (uv_tcp_t, uv_pipe_t, uv_tty_t) made with the kind kit, whose
// records feed the logic both drivers share (io.go).

// uvStream is an IO's event on the libuv driver.
type uvStream struct {
	core
	ioEvent
	// lz is the socket of a connection accepted unopened in libuv
	// (io_lazy_uv.go): h is 0 until openInLibuv. Kept after the opening
	// while the read lane's file owns the socket; nil otherwise.
	lz *lazySock
}

// newUVStream makes the event of an IO over transport on r; newCore then
// makes its handle.
func newUVStream(r *reactor.Reactor, transport string) *uvStream {
	s := &uvStream{}
	s.r, s.base, s.t, s.transport = r, &s.Base, s, transport
	return s
}

// adoptIO makes the IO of an accepted handle, on the loop.
func adoptIO(r *reactor.Reactor, h uvcgo.Handle, transport string) (*IO, error) {
	s := newUVStream(r, transport)
	// On the loop already: openCore, not newCore, so that none of the
	// set-up's functions is garbage left by every connection.
	if err := openCore(r, &s.core, s, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		l.Adopt(h, id)
		return h, nil
	}); err != nil {
		return nil, err
	}
	return newIO(s), nil
}

// wants: reads are wanted while a blocking Read or request waits, or reading
// runs ahead for them, started or not.
func (s *uvStream) wants(rec *uvcgo.Completion) bool { return rec.Kind == uvcgo.CompletionRead }

func (s *uvStream) completed(rec *uvcgo.Completion) {
	if s.closed {
		s.lingered(rec) // closing told every waiter already
		return
	}
	switch rec.Kind {
	case uvcgo.CompletionRead:
		if rec.Status < 0 {
			var err error = io.EOF
			if rec.Status != uvcgo.EOF {
				err = statusError("read", rec.Status)
			}
			s.readFailed(err)
			return
		}
		s.received(rec.Bytes(), func(rest []byte) chunk {
			data, release := uvcgo.Take(rec)
			return chunk{data: data, release: release, b: rest}
		})
	case uvcgo.CompletionWrite:
		n := int(rec.N)
		if rec.Status < 0 {
			n = int(rec.Aux) // what the kernel took before the failure
		}
		s.wrote(int(rec.N), n, statusError("write", rec.Status))
	case uvcgo.CompletionShutdown:
		s.shutDone(statusError("shutdown", rec.Status))
	case uvcgo.CompletionConnect:
		s.connected(statusError("connect", rec.Status))
	}
}

// statusError is the error of a record's status: nil for success; else
// the failed system call op's, as sysError says.
func statusError(op string, status int32) error {
	if status < 0 {
		return os.NewSyscallError(op, syscall.Errno(-status))
	}
	return nil
}

// sysError is err, a libuv error of a stream's operation, as package net
// and the pure-Go driver give it: an *os.SyscallError naming the system
// call (read, write, connect, shutdown, ...) with the errno, so that the
// same failure reads the same on both drivers ("read: connection reset by
// peer", not "read: ECONNRESET (connection reset by peer)") and matches
// the same syscall.Errno. Other errors are left as they are.
func sysError(op string, err error) error {
	if err == nil {
		return nil // the hot path: no allocation
	}
	var ue *uvcgo.Error
	if errors.As(err, &ue) {
		return os.NewSyscallError(op, ue.Unwrap())
	}
	return err
}

func (s *uvStream) open() bool         { return s.h != 0 || s.lz != nil }
func (s *uvStream) readsSettled() bool { return s.h == 0 || !s.host.ReadAhead(s.id) }
func (s *uvStream) readStart() error {
	if err := s.openInLibuv(); err != nil {
		return &openFailure{sysError("read", err)} // not the stream's: the next Start or Read tries again
	}
	return sysError("read", s.loop.ReadStart(s.h))
}
func (s *uvStream) readStop() {
	if s.h != 0 {
		s.loop.ReadStop(s.h)
	}
}
func (s *uvStream) tryWrite(p []byte) (int, error) {
	if s.unopened() {
		return s.lazyTryWrite(p)
	}
	n, err := s.loop.TryWrite(s.h, p)
	return n, sysError("write", err)
}
func (s *uvStream) write(p []byte) error {
	if err := s.openInLibuv(); err != nil {
		return &openFailure{sysError("write", err)} // not the stream's: the next write tries again
	}
	return sysError("write", s.loop.Write(s.h, p))
}
func (s *uvStream) flushTries() { s.loop.FlushTries() }

// deferTry defers the try of p to the loop's batch, behind this stream's
// tries already there. An unopened connection defers none: its try is a
// write(2) of Go's, no crossing to batch.
func (s *uvStream) deferTry(p []byte) bool {
	if s.h == 0 {
		return false
	}
	prev := -1
	if s.tries > 0 {
		prev = int(s.lastTry)
	}
	i := s.loop.DeferTry(s.h, p, prev, s)
	if i < 0 {
		return false
	}
	s.lastTry = int32(i)
	return true
}

// Tried implements uvcgo.Tried: the outcome of a deferred try.
func (s *uvStream) Tried(p []byte, n int, err error) { s.sendTried(p, n, sysError("write", err)) }
func (s *uvStream) queueSize() int {
	if s.h == 0 {
		return 0
	}
	return s.loop.WriteQueueSize(s.h)
}
func (s *uvStream) shutdown() error {
	if err := s.openInLibuv(); err != nil {
		return sysError("shutdown", err)
	}
	return sysError("shutdown", s.loop.ShutdownStream(s.h))
}
func (s *uvStream) refusal(shutdown bool) error {
	if shutdown {
		return errnoError("shutdown", syscall.ENOTCONN)
	}
	return errnoError("write", syscall.EPIPE)
}
func (s *uvStream) release(c chunk) { s.loop.Release(c.data, c.release) }
func (s *uvStream) noDelay(on bool) error {
	if s.unopened() {
		return s.lazyNoDelay(on)
	}
	return s.loop.TCPNoDelay(s.h, on)
}

// addresses reads the local and peer addresses of the IO. On the loop.
func (s *uvStream) addresses() (local, remote net.Addr) {
	if s.unopened() {
		return s.lazyAddresses()
	}
	local, _ = addrOf(s.transport, s.loop, s.h, false)
	remote, _ = addrOf(s.transport, s.loop, s.h, true)
	if remote == nil && s.transport == "tcp" {
		if fd, err := s.loop.Fileno(s.h); err == nil {
			remote = peerName(fd) // the peer reset the connection
		}
	}
	return local, remote
}

// laneFD: the socket's descriptor (uv_fileno, or an unopened
// connection's own), written to by a blocking Write's own goroutine while
// libuv holds no write of it (io_lane.go): libuv's write queue is empty
// then, and no libuv state is touched.
func (s *uvStream) laneFD() int {
	if s.transport != "tcp" && s.transport != "unix" {
		return -1
	}
	if s.lz != nil {
		return s.lz.fd // unopened, or opened over a duplicate: the socket is the lane file's
	}
	if s.h == 0 {
		return -1
	}
	fd, err := s.loop.Fileno(s.h)
	if err != nil {
		return -1
	}
	return fd
}

// laneFile makes a duplicate of the socket's descriptor an os.File in Go's
// netpoller, for the read lane (io_readlane.go): libuv keeps its own
// descriptor in its epoll set, and reads nothing of it while the lane is
// open. The duplicate is the lane's, closed as the handle closes
// (closeHandle): before libuv's when the loop closes it, so that the
// socket's end (a FIN or a reset) is not held back by it; after it, by the
// caller of the Close that closed the IO, when one did (handBack), which
// then makes the socket's end itself, before its Close returns. The
// duplicates the process's lanes hold
// at once are at most a quarter of its descriptor limit (RLIMIT_NOFILE):
// past that, nil, and the connection's Reads go through the loop, so that
// the lanes cannot take the descriptors a server needs for its
// connections.
func (s *uvStream) laneFile() (*os.File, *lazySock) {
	if s.unopened() {
		return s.lazyLaneFile()
	}
	fd := s.laneFD()
	if fd < 0 {
		return nil, nil
	}
	return laneDup(s.host, fd, s.transport)
}

// laneDup makes a duplicate of the descriptor fd of a libuv handle an
// os.File named name in Go's netpoller, for a read lane (an IO's, a
// UDP's), within the lanes' budget of duplicates; nil past it, or when the
// duplicate cannot be made. release closes it and gives its place back.
func laneDup(host kind.Host, fd int, name string) (*os.File, *lazySock) {
	if !laneDupAllowed(laneDups.Add(1)) {
		laneDups.Add(-1)
		return nil, nil
	}
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		laneDups.Add(-1)
		return nil, nil
	}
	f := newLaneFile(d, name)
	// The budget is given back once: by release when the handle closes,
	// or, when it never does (a reactor dropped without Close, whose
	// handles libuv closes in C, and which closes the duplicate first:
	// KeepFile), once the file is collected.
	freed := new(atomic.Bool)
	runtime.AddCleanup(f, returnLaneDup, freed)
	x := &lazySock{fd: d, f: f, freed: freed}
	x.keeper = host.KeepFile(x) // a reactor dropped without Close closes it before libuv's
	return f, x
}

// returnLaneDup gives a duplicate's place in the budget back, once.
func returnLaneDup(freed *atomic.Bool) {
	if freed.CompareAndSwap(false, true) {
		laneDups.Add(-1)
	}
}

// laneDups counts the libuv driver's read lanes' duplicate descriptors
// open, in every reactor.
var laneDups atomic.Int64

// laneDupBudgetSet, when not negative, stands for laneDupBudget's figure
// (tests).
var laneDupBudgetSet atomic.Int64

func init() { laneDupBudgetSet.Store(-1) }

// laneDupBudgetRead is laneDupBudget's figure as last read (0 before the
// first), and laneDupChecks counts laneDupAllowed's calls: the limit is
// read again at every 64th, and whenever the figure read says no, so that
// a connection's lane costs no getrlimit(2) and a limit raised or lowered
// still counts.
var laneDupBudgetRead, laneDupChecks atomic.Int64

// laneDupAllowed reports that the lanes may hold n duplicates.
func laneDupAllowed(n int64) bool {
	if laneDupChecks.Add(1)%64 != 0 && n <= laneDupBudgetRead.Load() && laneDupBudgetSet.Load() < 0 {
		return true
	}
	b := laneDupBudget()
	if laneDupBudgetSet.Load() < 0 {
		laneDupBudgetRead.Store(b)
	}
	return n <= b
}

// laneDupBudget is how many duplicates the lanes may hold at once: a
// quarter of the descriptor limit.
func laneDupBudget() int64 {
	if n := laneDupBudgetSet.Load(); n >= 0 {
		return n
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	return int64(lim.Cur / 4)
}

// laneFileAnywhere: an unopened connection's lane file is its socket
// (lazyLaneFile), made without the loop; an opened one's is a duplicate
// libuv's handle gives, on the loop.
func (s *uvStream) laneFileAnywhere() bool { return s.unopened() }
