package uv

// The libuv driver's IPC pipe: a uv_pipe_t made with ipc = 1
// (internal/cgo/ipc.c). A pass is a uv_write2 of one byte with a stand-in
// handle over a duplicate of the descriptor, so the sender's own handle is
// never libuv's concern and may close at any time; what comes in is taken
// with uv_pipe_pending_count, uv_pipe_pending_type and uv_accept into a
// new handle, adopted here as an IO; a listening socket's handle gives a
// duplicate of its descriptor to a Listener made as Listen makes one, and
// closes.

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// uvIPC is an IPC's event on the libuv driver.
type uvIPC struct {
	core
	ipcEvent
}

// openUVIPC makes p an IPC over a libuv pipe handle opened on fd.
func openUVIPC(r *reactor.Reactor, fd int, p *IPC) error {
	e := &uvIPC{}
	e.init(r, e, &e.Base, e, fd)
	if err := newCore(r, &e.core, e, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		return openedPipe(l, fd, func() (uvcgo.Handle, error) { return l.NewIPC(id) })
	}); err != nil {
		return err
	}
	p.e = &e.ipcEvent
	track(p, &p.handle, &e.core)
	return nil
}

func (e *uvIPC) pass(fd int, tag byte) error {
	if e.h == 0 {
		unix.Close(fd)
		return ErrClosed
	}
	return e.loop.IPCSend(e.h, fd, tag)
}

func (e *uvIPC) arm() error {
	e.subscribed()
	if len(e.held) > 0 {
		go e.r.Post(e.flushHeld) // a notification cannot run inside Start
	}
	if e.ended != nil || e.stalled {
		return nil // libuv read to the end, or the queue for Receive is full
	}
	return e.loop.IPCReadStart(e.h)
}

func (e *uvIPC) disarm() {
	if e.h != 0 && e.ended == nil {
		e.loop.ReadStop(e.h)
	}
}

// reading starts libuv's reads again while the IPC is started, or stops
// them, for the queue for Receive (ipcEvent.stalled).
func (e *uvIPC) reading(on bool) {
	switch {
	case e.h == 0 || e.ended != nil:
	case !on:
		e.loop.ReadStop(e.h)
	case eventkind.LoopRefs(e) > 0 && !e.Flags().Has(event.Closed):
		if err := e.loop.IPCReadStart(e.h); err != nil {
			e.deliver(Passed{}, endWith(err))
		}
	}
}

// wants: libuv takes every handle of a read in one go, so a callback that
// stops the IPC leaves the read's later handles taken: they are held for
// the next Start rather than dropped.
func (e *uvIPC) wants(rec *uvcgo.Completion) bool {
	return rec.Kind == uvcgo.CompletionHandle && rec.Status >= 0
}

// flushHeld hands the handles held while stopped to the callbacks, in
// order, while the IPC is started and open.
func (e *uvIPC) flushHeld() {
	for len(e.held) > 0 && eventkind.LoopRefs(e) > 0 && !e.Flags().Has(event.Closed) {
		p := e.held[0]
		e.held[0] = Passed{}
		e.held = e.held[1:]
		e.deliver(p, nil)
	}
	e.tellEnd() // after the handles that came before it
}

func (e *uvIPC) completed(rec *uvcgo.Completion) {
	switch rec.Kind {
	case uvcgo.CompletionWrite:
		var err error
		if rec.Status < 0 {
			err = statusError("sendmsg", rec.Status)
		}
		e.sendDone(err)
	case uvcgo.CompletionRead:
		err := error(io.EOF)
		if rec.Status != uvcgo.EOF {
			err = statusError("recvmsg", rec.Status)
		}
		e.deliver(Passed{}, endWith(err))
	case uvcgo.CompletionHandle:
		if rec.Status < 0 {
			e.deliver(Passed{}, uvcgo.ErrorOf("uv_accept", int(rec.Status)))
			return
		}
		data, _ := uvcgo.Take(rec)
		h := uvcgo.Handle(data)
		transport := "unix"
		if rec.N == uvcgo.HandleTypeTCP {
			transport = "tcp"
		}
		p, err := passedOf(byte(rec.Aux), transport,
			func() (*IO, error) { return adoptIO(e.r, h, transport) },
			func() (*Listener, error) { return e.listenerOf(h, transport) })
		if err != nil || p.Listener != nil {
			e.loop.CloseHandle(h) // a listener keeps a duplicate of its socket
		}
		if err != nil {
			e.deliver(Passed{}, err)
			return
		}
		if eventkind.LoopRefs(e) == 0 || len(e.held) > 0 {
			e.held = append(e.held, p) // see wants; behind those held already
			return
		}
		e.deliver(p, nil)
	}
}

// listenerOf makes a Listener of the listening socket that came in h, a
// stream handle libuv accepted it into: a duplicate of its descriptor
// becomes a listener as Listen makes one (uvListenerOn: the shim watches
// it, and accepts), left stopped as a new listener is. h stays the
// caller's to close. The socket listens already (the sender's listen(2)
// holds for every descriptor of it).
func (e *uvIPC) listenerOf(h uvcgo.Handle, transport string) (*Listener, error) {
	fd, err := e.loop.Fileno(h)
	if err != nil {
		return nil, err
	}
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("fcntl F_DUPFD_CLOEXEC", err)
	}
	ln := &Listener{}
	if _, err := uvListenerOn(e.r, ln, dup, transport, endpoint{transport: transport}, 511); err != nil {
		unix.Close(dup)
		return nil, err
	}
	return ln, nil
}

// listenerFD returns the descriptor of a listener's event, on the loop.
func listenerFD(ev event.Event) (int, error) {
	switch e := ev.(type) {
	case *uvListener:
		if e.h == 0 {
			return -1, ErrClosed
		}
		return e.loop.Fileno(e.h)
	case *goListener:
		if e.pl == nil {
			return -1, ErrClosed
		}
		return e.fd, nil
	}
	return -1, syscall.EINVAL
}
