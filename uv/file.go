package uv

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	uvcgo "github.com/uvevent/uvevent/cgo"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A File is a file opened through libuv (uv_fs_* requests on its thread
// pool): the file side of I/O. Every operation is a one-shot request event
// (an *FSRequest: ReadAsync, WriteAsync), and the goroutine-blocking
// methods (ReadAt, WriteAt, Read, Write, Close) wait for one; the reactor
// must be running. Files are not streams: no handle watches them, so a
// File is no IO; it holds only a descriptor, which Close releases (and the
// collector, should the File be dropped open). Close it only once its
// requests have completed: a descriptor closed under a request in flight
// may be reused by the time it runs.
type File struct {
	r    *reactor.Reactor
	name string

	mu    sync.Mutex // guards fd (-1 once closed) and off
	fd    int
	off   int64
	clean runtime.Cleanup
}

// An FSRequest is one file operation in flight, as an event: it completes
// with the operation's result (the bytes read, a []byte the receiver owns;
// the count written, an int; the descriptor opened, an int) or its error.
// Closing it before it completes cancels it where libuv still can; its
// waiters get event.ErrClosed either way.
type FSRequest struct {
	reqCore
	op string
	fs *File // the file, for Info
}

func (q *FSRequest) kindName() string { return "fs" }

func (q *FSRequest) describe() string {
	name := "?"
	if q.fs != nil {
		name = q.fs.name
	}
	return fmt.Sprintf("FS(%s %s)", q.op, name)
}

func (q *FSRequest) done(rec *uvcgo.Completion) (any, error) {
	if rec.Status < 0 {
		return nil, uvcgo.ErrorOf("uv_fs_"+q.op, int(rec.Status))
	}
	if q.op == "read" {
		return append([]byte{}, rec.Bytes()...), nil
	}
	return int(rec.N), nil
}

func (q *FSRequest) cancel(req uvcgo.Request) { q.loop.CancelFS(req) }

// submitFS makes and submits one request.
func submitFS(r *reactor.Reactor, f *File, op string, submit func(l *uvcgo.Loop, id uint64) (uvcgo.Request, error)) (*FSRequest, error) {
	q := &FSRequest{op: op, fs: f}
	if err := submitReq(r, &q.reqCore, q, submit); err != nil {
		return nil, &os.PathError{Op: op, Path: f.name, Err: err}
	}
	return q, nil
}

// await waits for q and returns its result.
func (q *FSRequest) await(ctx context.Context) (any, error) {
	out, err := event.Await(ctx, event.Any(), q)
	if err != nil {
		q.Close()
		return nil, err
	}
	return out[0].Result, out[0].Err
}

// OpenFile opens name with os.OpenFile's flags and permissions, on libuv's
// thread pool, and waits for it (or ctx).
func OpenFile(ctx context.Context, r *reactor.Reactor, name string, flag int, perm os.FileMode) (*File, error) {
	f := &File{r: r, name: name, fd: -1}
	q, err := submitFS(r, f, "open", func(l *uvcgo.Loop, id uint64) (uvcgo.Request, error) {
		return l.FSOpen(id, name, flag|unix.O_CLOEXEC, int(perm.Perm()))
	})
	if err != nil {
		return nil, err
	}
	res, err := q.await(ctx)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	f.fd = res.(int)
	// A File dropped open gives its descriptor back: no C memory is held.
	f.clean = runtime.AddCleanup(f, func(fd int) { unix.Close(fd) }, f.fd)
	return f, nil
}

// Name returns the name the file was opened with.
func (f *File) Name() string { return f.name }

// descriptor returns the open descriptor, or ErrClosed.
func (f *File) descriptor() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fd < 0 {
		return -1, os.ErrClosed
	}
	return f.fd, nil
}

// ReadAsync reads up to n bytes at off (-1: at the descriptor's position)
// and completes with them (an empty []byte at the end of the file).
func (f *File) ReadAsync(n int, off int64) (*FSRequest, error) {
	fd, err := f.descriptor()
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: f.name, Err: err}
	}
	if n <= 0 {
		return nil, &os.PathError{Op: "read", Path: f.name, Err: syscall.EINVAL}
	}
	return submitFS(f.r, f, "read", func(l *uvcgo.Loop, id uint64) (uvcgo.Request, error) {
		return l.FSRead(id, fd, n, off)
	})
}

// WriteAsync writes p at off (-1: at the descriptor's position) and
// completes with the count written. p is copied: reuse it at once.
func (f *File) WriteAsync(p []byte, off int64) (*FSRequest, error) {
	fd, err := f.descriptor()
	if err != nil {
		return nil, &os.PathError{Op: "write", Path: f.name, Err: err}
	}
	if len(p) == 0 {
		return nil, &os.PathError{Op: "write", Path: f.name, Err: syscall.EINVAL}
	}
	return submitFS(f.r, f, "write", func(l *uvcgo.Loop, id uint64) (uvcgo.Request, error) {
		return l.FSWrite(id, fd, p, off)
	})
}

// ReadAt reads len(p) bytes at off, as io.ReaderAt: fewer only at the end
// of the file (with io.EOF) or on an error.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		q, err := f.ReadAsync(len(p)-n, off+int64(n))
		if err != nil {
			return n, err
		}
		res, err := q.await(context.Background())
		if err != nil {
			return n, &os.PathError{Op: "read", Path: f.name, Err: err}
		}
		b := res.([]byte)
		if len(b) == 0 {
			return n, io.EOF
		}
		n += copy(p[n:], b)
	}
	return n, nil
}

// WriteAt writes p at off, as io.WriterAt.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		q, err := f.WriteAsync(p[n:], off+int64(n))
		if err != nil {
			return n, err
		}
		res, err := q.await(context.Background())
		if err != nil {
			return n, &os.PathError{Op: "write", Path: f.name, Err: err}
		}
		n += res.(int)
	}
	return n, nil
}

// Read reads at the File's offset and advances it (io.Reader).
func (f *File) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	f.mu.Lock()
	off := f.off
	f.mu.Unlock()
	q, err := f.ReadAsync(len(p), off)
	if err != nil {
		return 0, err
	}
	res, err := q.await(context.Background())
	if err != nil {
		return 0, &os.PathError{Op: "read", Path: f.name, Err: err}
	}
	n := copy(p, res.([]byte))
	if n == 0 {
		return 0, io.EOF
	}
	f.mu.Lock()
	f.off += int64(n)
	f.mu.Unlock()
	return n, nil
}

// Write writes at the File's offset and advances it (io.Writer).
func (f *File) Write(p []byte) (int, error) {
	f.mu.Lock()
	off := f.off
	f.mu.Unlock()
	n, err := f.WriteAt(p, off)
	f.mu.Lock()
	f.off += int64(n)
	f.mu.Unlock()
	return n, err
}

// Close closes the descriptor (uv_fs_close) and waits for it. Closing
// twice returns an error matching os.ErrClosed, as *os.File does.
func (f *File) Close() error {
	f.mu.Lock()
	fd := f.fd
	f.fd = -1
	f.mu.Unlock()
	if fd < 0 {
		return &os.PathError{Op: "close", Path: f.name, Err: os.ErrClosed}
	}
	f.clean.Stop()
	q, err := submitFS(f.r, f, "close", func(l *uvcgo.Loop, id uint64) (uvcgo.Request, error) {
		return l.FSClose(id, fd)
	})
	if err != nil {
		unix.Close(fd) // the reactor is gone: close it here
		return err
	}
	if _, err := q.await(context.Background()); err != nil {
		return &os.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}
