package uv

import (
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"weak"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// This file is an IO's pure-Go half: the event is a goStream, a
// non-blocking stream descriptor that is a member of the reactor's epoll set
// (poller_go_linux.go), polled for input while reading is on and for output while
// writes, a shutdown or a connect wait. What epoll reports feeds the logic
// both drivers share (io.go), as libuv's records do on the other driver:
// reads of up to 64 KiB into pooled buffers, writes in order, one
// completion per queued write.

// goStream is an IO's event on the pure-Go driver.
type goStream struct {
	event.Base
	ioEvent
	keeper
	goPolled
	fd       int
	rd       bool      // reading is on
	wq       []goWrite // writes queued, oldest first
	queued   int       // their bytes not yet written
	shutting bool      // a shutdown waits for the queue to empty
	dialing  bool      // a connect is in flight
	term     *goTerm   // a terminal's mode (io_tty_go.go); nil for sockets
	noRead   bool      // the descriptor is open for writing only
	noWrite  bool      // open for reading only, or its writing side shut down
}

// goWrite is a queued write: a copy of the caller's bytes and how far it
// went.
type goWrite struct {
	p   []byte
	off int
}

// goReadSize is the size of a pure-Go read buffer, as libuv's are.
const goReadSize = 64 << 10

var goReadBufs = sync.Pool{New: func() any { b := make([]byte, goReadSize); return &b }}

type goStreamOps goStream

// newGoStream makes the event of an IO over fd on r, on the loop: fd joins
// the reactor's epoll set and is made non-blocking. accepted says fd is a
// socket accept4 made non-blocking: it reads and writes, and epoll watches
// it, which are not asked of the kernel then (see joinPollerSocket). On
// error fd is left open.
func newGoStream(r *reactor.Reactor, fd int, transport string, accepted bool) (*goStream, error) {
	if err := armable(r); err != nil {
		return nil, err
	}
	g := &goStream{fd: fd}
	g.r, g.base, g.t, g.transport = r, &g.Base, g, transport
	join := joinPollerSocket
	if !accepted {
		join = joinPoller
		// As libuv's uv_pipe_open: a descriptor opened for one direction
		// only (a pipe's end) refuses the other.
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
			g.noRead = fl&unix.O_ACCMODE == unix.O_WRONLY
			g.noWrite = fl&unix.O_ACCMODE == unix.O_RDONLY
		}
	}
	var err error
	if g.pl, err = join(r, fd, g); err != nil {
		return nil, err
	}
	eventkind.Init(&g.Base, (*goStreamOps)(g), true, event.GoOwned)
	return g, nil
}

// link makes c the reference for g: dropping c without Close closes g.
func (g *goStream) link(c *IO) {
	c.e = &g.ioEvent
	g.ref = weak.Make(c)
	trackGo(c, &c.handle, g.r, g)
}

// goIO makes the IO of fd on the pure-Go driver, on the loop (accepted:
// see newGoStream).
func goIO(r *reactor.Reactor, fd int, transport string, accepted bool) (*IO, error) {
	g, err := newGoStream(r, fd, transport, accepted)
	if err != nil {
		return nil, err
	}
	c := &IO{}
	g.link(c)
	return c, nil
}

// openGoIO is OpenPipe and the like on the pure-Go driver: the IO of fd,
// made on the loop.
func openGoIO(r *reactor.Reactor, fd int, transport string) (*IO, error) {
	var c *IO
	var err error
	if x := r.Call(func() {
		if _, err = unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			err = os.NewSyscallError("fcntl", err)
			return
		}
		c, err = goIO(r, fd, transport, false)
	}); x != nil {
		return nil, x
	}
	return c, err
}

// dialGo opens a socket for ep and starts connecting it, on the loop; c
// becomes its IO, and op completes when the connect does.
func dialGo(r *reactor.Reactor, ep endpoint, c *IO, op *ioOp) error {
	return onLoopWithSocket(r, ep.family, func(fd int) error {
		g, err := newGoStream(r, fd, ep.transport, false)
		if err != nil {
			return err
		}
		g.setNetwork(ep.network)
		g.link(c)
		g.conn = op
		eventkind.ActiveDelta(r.Owner(), 1)
		cerr := unix.Connect(fd, ep.sa)
		if cerr == unix.EINTR {
			cerr = unix.EINPROGRESS // the connect goes on: its outcome comes as for any other
		}
		if cerr == unix.EINPROGRESS {
			g.dialing = true
			if cerr = g.apply(); cerr == nil {
				return nil
			}
		}
		// Settled now: the future still completes on a later turn, as
		// libuv's connect callbacks do (a reactor closing closes g,
		// which fails it).
		kind.HostOf(r.Owner()).Queue(func() { g.connected(errnoError("connect", cerr)) })
		return nil
	})
}

// onLoopWithSocket runs fn on the loop with a new non-blocking stream
// socket of family; when fn fails, the socket is closed. A closing reactor
// is refused.
func onLoopWithSocket(r *reactor.Reactor, family int, fn func(fd int) error) error {
	var err error
	if x := r.Call(func() {
		if err = armable(r); err != nil {
			return
		}
		fd, serr := socket(family, unix.SOCK_STREAM, 0)
		if serr != nil {
			err = os.NewSyscallError("socket", serr)
			return
		}
		if err = fn(fd); err != nil {
			unix.Close(fd)
		}
	}); x != nil {
		return x
	}
	return err
}

// errnoError makes err (nil, an errno or an error already) the error of
// op, as package os does.
func errnoError(op string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(syscall.Errno); ok {
		return os.NewSyscallError(op, err)
	}
	return err
}

func (o *goStreamOps) Owner() event.Owner { return o.r.Owner() }
func (o *goStreamOps) Event() event.Event { return (*goStream)(o) }
func (o *goStreamOps) Describe() string   { return o.describe() }
func (o *goStreamOps) Subscribed()        { o.subscribed() }
func (o *goStreamOps) Disarm() {
	o.disarm()
	o.dropRef()
}

func (o *goStreamOps) Arm() error {
	if err := o.startable(o.r); err != nil {
		return err
	}
	return o.holdIfArmed(o.arm())
}

// Free fails what waits (closing), then takes the descriptor out of the
// epoll set and closes it.
func (o *goStreamOps) Free(bool) {
	g := (*goStream)(o)
	g.dropRef()
	g.closing(g)
	wq := g.wq
	g.wq, g.queued, g.shutting, g.dialing = nil, 0, false, false
	if g.leave(g.r.Owner(), g.fd) {
		g.closeFD(wq) // a lingering close goes on with a duplicate of fd (io_linger.go)
		if g.term != nil {
			forgetTTY(g.fd)
		}
		if l := g.rlane.Load(); l != nil {
			if !l.handBack() { // else the caller of the Close closing the IO closes it
				l.f.Close() // wakes a Read waiting in the netpoller; the descriptor closes once no read is in flight
			}
		} else {
			unix.Close(g.fd)
		}
	}
}

// apply polls the descriptor for what is wanted now: input while
// reading, output while writes, a shutdown or a connect wait; the IO is
// counted active while writes or a shutdown wait.
func (g *goStream) apply() error {
	busy := len(g.wq) > 0 || g.shutting
	return g.poll(g.r.Owner(), g.fd, g.rd, busy || g.dialing, busy)
}

// goPolled is a descriptor in the reactor's epoll set, as a pure-Go
// stream (goStream) or IPC (goIPC) polls it: the events polled for now,
// and whether work in flight counts the event active. Loop-owned.
type goPolled struct {
	pl   *goPoller // nil once closed
	mask uint32    // the epoll events polled for now
	busy bool      // work in flight: counted active
}

// poll polls fd for input when in and for output when out, and counts the
// event active in o while busy. Nothing once closed.
func (p *goPolled) poll(o event.Owner, fd int, in, out, busy bool) error {
	if p.pl == nil {
		return nil
	}
	p.setBusy(o, busy)
	var m uint32
	if in {
		m |= epollIn
	}
	if out {
		m |= epollOut
	}
	if err := p.pl.ctlMask(fd, p.mask, m); err != nil {
		return err
	}
	p.mask = m
	return nil
}

// setBusy counts the event active in o while work is in flight, as libuv
// counts its write and shutdown requests in flight: a Run does not end
// with bytes still queued (architecture §2, rule 6).
func (p *goPolled) setBusy(o event.Owner, b bool) {
	if b == p.busy {
		return
	}
	p.busy = b
	if b {
		eventkind.ActiveDelta(o, 1)
	} else {
		eventkind.ActiveDelta(o, -1)
	}
}

// leave counts the event idle and takes fd out of the epoll set; false if
// it was out already.
func (p *goPolled) leave(o event.Owner, fd int) bool {
	p.setBusy(o, false)
	pl := p.pl
	if pl == nil {
		return false
	}
	pl.ctlMask(fd, p.mask, 0)
	p.pl, p.mask = nil, 0
	pl.remove(fd)
	return true
}

// fired handles what epoll reported, on the loop. A callback it runs may
// close the IO: each step checks.
func (g *goStream) fired(events uint32) {
	const out = epollOut | epollErr | epollHup
	if g.pl == nil || g.closed {
		return
	}
	if g.dialing {
		if events&out != 0 {
			g.dialing = false
			err := socketError(g.fd)
			g.apply()
			g.connected(errnoError("connect", err))
		}
		return
	}
	if g.rd && events&(epollIn|epollErr|epollHup) != 0 {
		g.readReady()
	}
	if g.pl != nil && !g.closed && events&out != 0 && (len(g.wq) > 0 || g.shutting) {
		g.writeReady()
	}
}

// socketError is a socket's pending error (SO_ERROR): a connect's outcome.
func socketError(fd int) error {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return err
	}
	if v != 0 {
		return syscall.Errno(v)
	}
	return nil
}

// readReady reads while there is input and reading is on, as libuv does:
// a bounded number of full buffers per report, the rest on the next.
func (g *goStream) readReady() {
	for range 32 {
		if !g.rd || g.pl == nil || g.closed {
			return
		}
		bp := goReadBufs.Get().(*[]byte)
		n, err := ignoringEINTR(func() (int, error) { return unix.Read(g.fd, *bp) })
		switch {
		case err == unix.EAGAIN:
			goReadBufs.Put(bp)
			return
		case err != nil:
			goReadBufs.Put(bp)
			g.readFailed(os.NewSyscallError("read", err))
			return
		case n == 0:
			goReadBufs.Put(bp)
			g.readFailed(io.EOF)
			return
		}
		kept := false
		g.received((*bp)[:n], func(rest []byte) chunk {
			kept = true
			return chunk{buf: bp, b: rest}
		})
		if !kept {
			goReadBufs.Put(bp)
		}
		if n < goReadSize {
			return
		}
	}
}

// ignoringEINTR retries a system call interrupted by a signal.
func ignoringEINTR(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// writeReady writes the queue while the socket takes it, completing each
// write as it goes out, then a shutdown waiting for the queue.
func (g *goStream) writeReady() {
	for len(g.wq) > 0 {
		w := &g.wq[0]
		n, err := g.writeFD(w.p[w.off:])
		if err != nil {
			g.failWrites(err)
			return
		}
		if n == 0 {
			break // no room: wait for the next report
		}
		w.off += n
		g.queued -= n
		if w.off < len(w.p) {
			continue
		}
		size := len(w.p)
		g.wq[0] = goWrite{}
		g.wq = g.wq[1:]
		g.wrote(size, size, nil)
		if g.pl == nil || g.closed {
			return
		}
	}
	if len(g.wq) == 0 && g.shutting {
		g.shutting = false
		err := unix.Shutdown(g.fd, unix.SHUT_WR)
		g.apply()
		g.shutDone(errnoError("shutdown", err))
		return
	}
	g.apply()
}

// failWrites fails every queued write, and a shutdown waiting for them,
// with err: the first with the bytes of it the socket took before.
func (g *goStream) failWrites(err error) {
	wq := g.wq
	g.wq, g.queued = nil, 0
	for _, w := range wq {
		g.wrote(len(w.p), w.off, err)
		if g.pl == nil || g.closed {
			return
		}
	}
	if g.shutting {
		g.shutting = false
		g.shutDone(err)
	}
	g.apply()
}

// The transport, for the shared logic.

func (g *goStream) open() bool { return g.pl != nil }

func (g *goStream) readStart() error {
	if g.noRead {
		return errnoError("read", unix.ENOTCONN) // as libuv's uv_read_start
	}
	g.rd = true
	if err := g.apply(); err != nil {
		g.rd = false
		return err
	}
	return nil
}

func (g *goStream) readStop() {
	g.rd = false
	g.apply()
}

func (g *goStream) tryWrite(p []byte) (int, error) {
	if g.noWrite {
		return 0, errnoError("write", unix.EPIPE) // as libuv's uv_try_write
	}
	if len(g.wq) > 0 {
		return 0, nil // behind the queue
	}
	return g.writeFD(p)
}

// writeFD writes what the socket takes now (0 when it has no room).
func (g *goStream) writeFD(p []byte) (int, error) {
	n, err := ignoringEINTR(func() (int, error) { return unix.Write(g.fd, p) })
	if err == unix.EAGAIN {
		return 0, nil
	}
	if err != nil {
		return 0, os.NewSyscallError("write", err)
	}
	return n, nil
}

// deferTry: a try on the pure-Go driver is a write(2) of the loop's own,
// no crossing to save.
func (g *goStream) deferTry([]byte) bool { return false }
func (g *goStream) flushTries()          {}

func (g *goStream) write(p []byte) error {
	if g.noWrite {
		return errnoError("write", unix.EPIPE)
	}
	g.wq = append(g.wq, goWrite{p: append([]byte(nil), p...)})
	g.queued += len(p)
	if err := g.apply(); err != nil {
		// Not queued after all: the caller fails the write.
		g.wq[len(g.wq)-1] = goWrite{}
		g.wq = g.wq[:len(g.wq)-1]
		g.queued -= len(p)
		g.setBusy(g.r.Owner(), len(g.wq) > 0 || g.shutting)
		return err
	}
	return nil
}

func (g *goStream) queueSize() int { return g.queued }

// shutdown refuses a second shutdown, and one of a descriptor not open
// for writing, as libuv's uv_shutdown does; from now on writes are refused
// (those queued still go out first).
func (g *goStream) shutdown() error {
	if g.noWrite {
		return errnoError("shutdown", unix.ENOTCONN)
	}
	g.shutting = true
	if err := g.apply(); err != nil {
		g.shutting = false
		return err
	}
	g.noWrite = true
	return nil
}

func (g *goStream) refusal(shutdown bool) error {
	if shutdown {
		return errnoError("shutdown", unix.ENOTCONN)
	}
	return errnoError("write", unix.EPIPE)
}

func (g *goStream) release(c chunk) { goReadBufs.Put(c.buf) }

func (g *goStream) noDelay(on bool) error {
	if g.transport != "tcp" {
		return fmt.Errorf("uv: SetNoDelay on a %s IO: %w", g.transport, errInvalid)
	}
	return setNoDelay(g.fd, on)
}

// keepAlive sets the options on the socket, as package net does.
func (g *goStream) keepAlive(cfg net.KeepAliveConfig) error { return setKeepAlive(g.fd, cfg) }

func (g *goStream) addresses() (local, remote net.Addr) {
	return socketAddresses(g.fd, g.transport == "tcp")
}

// socketAddresses reads a stream socket's local and peer addresses, as
// package net gives them; a TCP socket whose peer reset the connection
// still tells its peer's (peerName). The pure-Go driver's connections, and
// the libuv driver's while unopened in libuv.
func socketAddresses(fd int, tcp bool) (local, remote net.Addr) {
	local, remote = socketAddr(fd, false), socketAddr(fd, true)
	if remote == nil && tcp {
		remote = peerName(fd) // the peer reset the connection
	}
	return local, remote
}

// socketAddr reads a stream socket's local address, or its peer's, as
// package net gives it (nil when it cannot be read).
func socketAddr(fd int, peer bool) net.Addr {
	// syscall's, not x/sys/unix's: for an Internet socket the latter asks
	// the socket's protocol too (getsockopt SO_PROTOCOL, for L2TP), one
	// system call more per address.
	get := syscall.Getsockname
	if peer {
		get = syscall.Getpeername
	}
	sa, err := get(fd)
	if err != nil {
		return nil
	}
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return tcpAddr(append([]byte(nil), a.Addr[:]...), a.Port, 0)
	case *syscall.SockaddrInet6:
		return tcpAddr(append([]byte(nil), a.Addr[:]...), a.Port, a.ZoneId)
	case *syscall.SockaddrUnix:
		return &net.UnixAddr{Name: unixName(a.Name), Net: "unix"}
	}
	return nil
}

// readsSettled: the pure-Go driver delivers a read as it makes it.
func (g *goStream) readsSettled() bool { return true }

// laneFD: a socket's descriptor, written to by a blocking Write's own
// goroutine while the loop holds no write (io_lane.go).
func (g *goStream) laneFD() int {
	if g.pl == nil || g.term != nil || g.transport != "tcp" && g.transport != "unix" {
		return -1
	}
	return g.fd
}

// laneFile makes a socket's descriptor an os.File in Go's netpoller, for
// the read lane (io_readlane.go); from now on the file closes it.
func (g *goStream) laneFile() (*os.File, *lazySock) {
	if g.laneFD() < 0 {
		return nil, nil
	}
	return newLaneFile(g.fd, g.transport), nil
}

// laneFileAnywhere: laneFile reads what the loop changes only at the
// IO's close.
func (g *goStream) laneFileAnywhere() bool { return true }
