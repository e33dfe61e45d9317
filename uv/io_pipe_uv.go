package uv

import (
	"net"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// This file is the pipe transport's libuv half (uv_pipe_t): the calls a
// "unix" endpoint makes, a pipe handle's addresses, and OpenPipe's handle.

// pipeCalls are a socket path's calls on the libuv driver.
func pipeCalls(path string) uvCalls {
	return uvCalls{
		newHandle: func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) { return l.NewPipe(id) },
		connect:   func(l *uvcgo.Loop, h uvcgo.Handle) error { return l.ConnectPipe(h, path) },
	}
}

// unixAddrOf reads a pipe handle's socket name, or its peer's.
func unixAddrOf(l *uvcgo.Loop, h uvcgo.Handle, peer bool) (net.Addr, error) {
	name, err := l.PipeName(h, peer)
	if err != nil {
		return nil, err
	}
	return &net.UnixAddr{Name: name, Net: "unix"}, nil
}

// openUVPipe is OpenPipe on the libuv driver: a pipe handle opened on fd.
func openUVPipe(r *reactor.Reactor, fd int) (*IO, error) {
	s := newUVStream(r, "unix")
	if err := newCore(r, &s.core, s, 0, func(l *uvcgo.Loop, id uint64) (uvcgo.Handle, error) {
		return openedPipe(l, fd, func() (uvcgo.Handle, error) { return l.NewPipe(id) })
	}); err != nil {
		return nil, err
	}
	return newIO(s), nil
}

// openedPipe gives the pipe handle mk makes the descriptor fd, which the
// handle owns from then on; on failure the handle is closed and fd stays
// the caller's.
func openedPipe(l *uvcgo.Loop, fd int, mk func() (uvcgo.Handle, error)) (uvcgo.Handle, error) {
	h, err := mk()
	if err != nil {
		return 0, err
	}
	if err := l.OpenPipe(h, fd); err != nil {
		l.CloseHandle(h)
		return 0, err
	}
	return h, nil
}
