package uv

import (
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/reactor"
)

// What the external tests of File need to reach inside the package.

// UvtFSOpen submits the open of name without waiting for it (OpenFile
// waits), so that a test can hold a request in flight.
func UvtFSOpen(r *reactor.Reactor, name string, flag int) (*FSRequest, error) {
	return submitFS(r, &File{r: r, name: name, fd: -1}, fsOp{name: "open", path: name, flag: flag | unix.O_CLOEXEC})
}

// UvtPoolSize is how many file operations run at once on either driver:
// libuv's pool and DefaultTaskPool have the same size (4, or what a valid
// UV_THREADPOOL_SIZE says).
func UvtPoolSize() int { return DefaultTaskPool.workers }
