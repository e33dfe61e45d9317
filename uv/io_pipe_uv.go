package uv

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// This file is the pipe transport's libuv half (uv_pipe_t): the calls a
// "unix" endpoint makes, a pipe handle's addresses, and OpenPipe's handle.

// pipeCalls are a socket path's calls on the libuv driver.
func pipeCalls(path string) uvCalls {
	return uvCalls{
		newHandle: func(l *uvcgo.Loop, id uint64, listener bool) (uvcgo.Handle, error) {
			return l.NewPipe(id, listener)
		},
		bind:    func(l *uvcgo.Loop, h uvcgo.Handle) error { return bindPipe(l, h, path) },
		connect: func(l *uvcgo.Loop, h uvcgo.Handle) error { return l.ConnectPipe(h, path) },
	}
}

// bindPipe binds a pipe handle to path. libuv's uv_pipe_bind reports a
// missing directory as EACCES; bind(2), and so the pure-Go driver and
// package net, say ENOENT (or ENOTDIR): so does this.
func bindPipe(l *uvcgo.Loop, h uvcgo.Handle, path string) error {
	err := l.BindPipe(h, path)
	if errors.Is(err, syscall.EACCES) {
		var errno syscall.Errno
		if _, serr := os.Stat(filepath.Dir(path)); errors.As(serr, &errno) && (errno == syscall.ENOENT || errno == syscall.ENOTDIR) {
			return uvcgo.ErrorOf("uv_pipe_bind", -int(errno))
		}
	}
	return err
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
		h, err := l.NewPipe(id, false)
		if err != nil {
			return 0, err
		}
		if err := l.OpenPipe(h, fd); err != nil {
			l.CloseHandle(h)
			return 0, err
		}
		return h, nil
	}); err != nil {
		return nil, err
	}
	return newIO(s), nil
}
