package uv

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
)

// This file is an IPC's pure-Go half: the pipe is a non-blocking Unix
// stream socket in the reactor's epoll set (poller_go_linux.go), polled for input
// while the IPC is started and for output while passes wait for room. A
// pass is a sendmsg(2) of its byte with the descriptor as SCM_RIGHTS; a
// recvmsg(2) takes what comes, each descriptor with the byte that carried
// it, as libuv's ipc pipes do.

// goIPC is an IPC's event on the pure-Go driver.
type goIPC struct {
	event.Base
	ipcEvent
	keeper
	goPolled
	rd   bool     // started: reading
	outq []goPass // passes waiting for room, oldest first
}

// goPass is a pass waiting for room: the duplicate it carries, and its byte.
type goPass struct {
	fd  int
	tag byte
}

type goIPCOps goIPC

// ipcRecvBatch bounds the messages one report reads, as libuv bounds a
// stream's reads per turn.
const ipcRecvBatch = 32

// openGoIPC makes p an IPC over fd on the pure-Go driver, on the loop.
func openGoIPC(r *reactor.Reactor, fd int, p *IPC) error {
	var err error
	if x := r.Call(func() {
		if err = armable(r); err != nil {
			return
		}
		g := &goIPC{}
		g.init(r, g, &g.Base, g, fd)
		if g.pl, err = joinPoller(r, fd, g); err != nil {
			return
		}
		eventkind.Init(&g.Base, (*goIPCOps)(g), true, event.GoOwned)
		p.e = &g.ipcEvent
		trackGo(p, &p.handle, r, g)
	}); x != nil {
		return x
	}
	return err
}

func (o *goIPCOps) Owner() event.Owner { return o.r.Owner() }
func (o *goIPCOps) Event() event.Event { return (*goIPC)(o) }
func (o *goIPCOps) Describe() string   { return o.describe() }
func (o *goIPCOps) Subscribed()        { o.subscribed() }

func (o *goIPCOps) Arm() error {
	if err := o.startable(o.r); err != nil {
		return err
	}
	g := (*goIPC)(o)
	g.rd = g.ended == nil
	g.subscribed()
	return o.holdIfArmed(g.apply())
}

func (o *goIPCOps) Disarm() {
	g := (*goIPC)(o)
	g.rd = false
	g.apply()
	o.dropRef()
}

// Free fails what waits (closing), closes the duplicates still queued,
// then takes the socket out of the epoll set and closes it.
func (o *goIPCOps) Free(bool) {
	g := (*goIPC)(o)
	g.dropRef()
	g.closing()
	for _, p := range g.outq {
		unix.Close(p.fd)
	}
	g.outq = nil
	if g.leave(g.r.Owner(), g.fd) {
		unix.Close(g.fd)
	}
}

// apply polls the socket for what is wanted now: input while started,
// output while passes wait for room; the IPC is counted active while
// passes wait, as libuv counts its write requests in flight.
func (g *goIPC) apply() error {
	busy := len(g.outq) > 0
	return g.poll(g.r.Owner(), g.fd, g.rd && !g.stalled, busy, busy)
}

// reading polls for input again, or stops, for the queue for Receive
// (ipcEvent.stalled, which apply reads).
func (g *goIPC) reading(on bool) {
	if g.pl == nil {
		return
	}
	if err := g.apply(); err != nil && on {
		g.end(err) // as the libuv driver's reading: receiving ends, told
	}
}

// pass sends fd at once when nothing waits before it and the socket has
// room; otherwise it waits for room, in order.
func (g *goIPC) pass(fd int, tag byte) error {
	if g.pl == nil {
		unix.Close(fd)
		return ErrClosed
	}
	g.outq = append(g.outq, goPass{fd: fd, tag: tag})
	if len(g.outq) == 1 {
		g.flush()
	}
	return g.apply()
}

// flush sends the passes waiting while the socket takes them; each ends
// (sendDone) when sent or failed, and its duplicate is closed.
func (g *goIPC) flush() {
	for len(g.outq) > 0 && g.pl != nil {
		p := g.outq[0]
		err := sendPass(g.fd, p)
		if err == unix.EAGAIN {
			return
		}
		unix.Close(p.fd)
		g.outq = g.outq[1:]
		g.sendDone(errnoError("sendmsg", err))
	}
}

// sendPass sends p's byte with its descriptor.
func sendPass(fd int, p goPass) error {
	for {
		_, err := unix.SendmsgN(fd, []byte{p.tag}, unix.UnixRights(p.fd), nil, unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT)
		if err != unix.EINTR {
			return err
		}
	}
}

// fired sends what waits for room, and receives while started, on the
// loop. A callback may stop or close the IPC: each step checks.
func (g *goIPC) fired(events uint32) {
	if g.pl == nil {
		return
	}
	if events&(epollOut|epollErr|epollHup) != 0 && len(g.outq) > 0 {
		g.flush()
		g.apply()
	}
	if events&(epollIn|epollErr|epollHup) != 0 {
		g.receive()
	}
}

// receive reads what came while the IPC is started and open: up to
// ipcRecvBatch messages, each descriptor with its byte.
func (g *goIPC) receive() {
	var buf [64]byte
	oob := make([]byte, unix.CmsgSpace(4*8))
	for range ipcRecvBatch {
		if g.pl == nil || !g.rd || g.stalled || eventkind.LoopRefs(g) == 0 || g.Flags().Has(event.Closed) {
			return
		}
		n, oobn, flags, _, err := unix.Recvmsg(g.fd, buf[:], oob, msgCmsgCloexec|unix.MSG_DONTWAIT)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return
		case err != nil:
			g.end(os.NewSyscallError("recvmsg", err))
			return
		}
		fds := receivedFDs(oob[:oobn])
		if n == 0 && len(fds) == 0 {
			g.end(io.EOF)
			return
		}
		if flags&unix.MSG_CTRUNC != 0 {
			g.deliver(Passed{}, fmt.Errorf("uv: IPC: descriptors cut off (MSG_CTRUNC): %w", errInvalid))
		}
		for i, fd := range fds {
			var tag byte
			if i < n {
				tag = buf[i]
			}
			p, err := g.adopt(fd, tag)
			if err != nil {
				unix.Close(fd)
			}
			g.deliver(p, err)
		}
	}
}

// end ends receiving with err, told once, and stops polling for input.
func (g *goIPC) end(err error) {
	g.rd = false
	g.deliver(Passed{}, endWith(err))
	g.apply()
}

// adopt makes an IO or Listener of a descriptor that came with tag.
func (g *goIPC) adopt(fd int, tag byte) (Passed, error) {
	transport, err := transportOf(fd)
	if err != nil {
		return Passed{}, err
	}
	return passedOf(tag, transport,
		func() (*IO, error) { return goIO(g.r, fd, transport, false) },
		func() (*Listener, error) {
			ln := &Listener{}
			_, err := goListenerOn(g.r, ln, fd, transport, endpoint{transport: transport}, 511)
			if err != nil {
				return nil, err
			}
			return ln, nil
		})
}

// receivedFDs returns the descriptors of SCM_RIGHTS messages in oob.
func receivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for i := range msgs {
		if got, err := unix.ParseUnixRights(&msgs[i]); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}
