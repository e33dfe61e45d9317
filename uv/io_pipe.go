package uv

import (
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/reactor"
)

// This file holds the pipe transport (uv_pipe_t): Unix domain stream
// sockets, named ("unix" to Listen and Dial) or a connected pair (Pipe),
// and descriptors opened as streams (OpenPipe). Such an IO's transport, in
// its Info and its addresses, is "unix". Its libuv half is io_pipe_uv.go.

// unixEndpoint is a socket path as an endpoint to listen on or dial.
func unixEndpoint(path string) (endpoint, error) {
	switch {
	case path == "":
		return endpoint{}, fmt.Errorf("uv: empty socket path: %w", errInvalid)
	case strings.IndexByte(path, 0) >= 0:
		// The kernel would take the name up to the NUL: another file.
		return endpoint{}, fmt.Errorf("uv: socket path %q holds a NUL byte: %w", path, errInvalid)
	case len(path) > maxUnixPath:
		// libuv would cut it to fit sun_path: another file.
		return endpoint{}, fmt.Errorf("uv: socket path of %d bytes, over %d: %w", len(path), maxUnixPath, errInvalid)
	}
	return endpoint{
		transport: "unix",
		addr:      &net.UnixAddr{Name: path, Net: "unix"},
		family:    unix.AF_UNIX,
		sa:        &unix.SockaddrUnix{Name: path},
		uvCalls:   pipeCalls(path),
	}, nil
}

// maxUnixPath is the longest socket path: sun_path's 108 bytes, the last
// for the NUL that ends the name.
const maxUnixPath = 107

// unixName is the name of a Unix socket as golang.org/x/sys/unix reads it,
// made what libuv's uv_pipe_getsockname gives: that package writes an
// unnamed socket's name (it has none) as "@", as if it were an abstract
// one, where libuv gives "".
func unixName(name string) string {
	if name == "@" {
		return ""
	}
	return name
}

// OpenPipe makes an IO of fd, a stream descriptor (a socket, a pipe's end,
// a terminal's descriptor used as a plain stream): the IO owns fd from then
// on and closes it when it closes (on error, fd stays the caller's). fd is
// made non-blocking. A descriptor epoll cannot watch (a regular file, a
// directory, /dev/null) is refused on both drivers with an error matching
// syscall.EPERM (open such a file with OpenFile).
func OpenPipe(r *reactor.Reactor, fd int) (*IO, error) {
	if err := reactorMade("OpenPipe", r); err != nil {
		return nil, err
	}
	if err := watchable(fd); err != nil {
		return nil, err
	}
	if r.Driver() == reactor.DriverGo {
		return openGoIO(r, fd, "unix")
	}
	return openUVPipe(r, fd)
}

// Pipe returns the two ends of a connected pair of Unix stream sockets
// (socketpair(2)), each an IO: what one writes, the other reads.
func Pipe(r *reactor.Reactor) (a, b *IO, err error) {
	fds, err := socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	fa, fb := fds[0], fds[1]
	if a, err = OpenPipe(r, fa); err != nil {
		unix.Close(fa)
		unix.Close(fb)
		return nil, nil, err
	}
	if b, err = OpenPipe(r, fb); err != nil {
		a.Close()
		unix.Close(fb)
		return nil, nil, err
	}
	return a, b, nil
}
