package uv

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/gid"
	"github.com/uvevent/uvevent/reactor"
)

// A File is a file whose operations run off the loop, on a thread pool:
// the file side of I/O. Every operation is a one-shot request event (an
// *FSRequest[[]byte] from ReadAsync, an *FSRequest[int] from WriteAsync), and the goroutine-blocking methods
// (ReadAt, WriteAt, Read, Write; Close off the loop goroutine) wait for
// one, the reactor running; Close in a callback starts the close and
// returns (see Close). Files are not streams: no handle watches them, so a File is no
// IO; it holds only a descriptor, which Close releases (and the collector,
// should the File be dropped open). A Close with requests in flight leaves
// the descriptor open until they are done with it (see Close).
//
// On the libuv driver the operations are uv_fs_* requests on libuv's thread
// pool; on the pure-Go driver they are system calls run by DefaultTaskPool's
// goroutines (file_go.go), libuv's model, with the same results, errors and
// lifetime.
type File struct {
	r    *reactor.Reactor
	name string

	mu    sync.Mutex // guards fd (-1 once closed), busy and orphan
	fd    int
	clean runtime.Cleanup
	// busy counts the requests in flight on fd (all but the open and the
	// close); a Close while there are any leaves the descriptor, as
	// orphan (orphaned), to the last of them: it closes it, or hands it to
	// then, the close request waiting for it (CloseAsync).
	busy     int
	orphan   int
	orphaned bool
	then     func(fd int)
}

// An FSRequest is one file system request in flight (libuv's uv_fs_*), as
// an event typed by its result T: it completes with the request's result
// (an fs.FileInfo for a stat, the []byte read, a *File opened, ...: each
// request's function says) or its error, an *fs.PathError (an
// *os.LinkError for the requests naming two paths) whose Op is libuv's name
// for the request without "uv_fs_" (stat, unlink, ...), whose Err wraps
// libuv's error (Op uv_fs_stat, ...) on either driver and matches
// fs.ErrNotExist, fs.ErrExist, fs.ErrPermission and the syscall.Errno. It
// stores its result: Await, Outcome and OnDone give it as a T, and a late
// subscriber has it replayed. It runs from its submission (Start and Stop
// do nothing) and counts as work in flight until it completes, so Run
// waits for it.
//
// Closing it before it completes cancels it if the pool has not started it
// (uv_cancel): it never runs; its waiters get event.ErrClosed either way,
// and a descriptor an open cancelled too late gives is closed. The context
// a request was made with does the same when it ends first, but the
// request then completes with the context's error (in its *fs.PathError).
// A request the pool has started runs to its end: a mutating one (write,
// rename, unlink, ...) may take effect although its waiters heard it was
// closed or its context ended.
type FSRequest[T any] struct {
	event.Base
	reqCore
	op    string
	path  string // the path, or the file's name, for errors and Info
	path2 string // the new path of rename, link, symlink, copyfile
	fs    *File  // open: the File the descriptor goes to; the file of a descriptor's request
	ctx   lookupContext
	// onFD: the request uses its file's descriptor, counted in the File's
	// busy until it is done with it (gaveBack).
	onFD     bool
	gaveBack atomic.Bool

	// The pure-Go driver's (file_go.go): the pool job running the
	// operation, and the registration with the reactor's Close.
	job     *Task[any]
	closer  reactorCloser
	closing int  // a close's descriptor
	counted bool // in the reactor's count of fs requests (Free takes it out)

	// An open's descriptor, between the loop delivering it and a waiter
	// that gave up (abandon): whichever comes second closes it.
	mu     sync.Mutex
	gaveUp bool
	held   int // the descriptor delivered, or -1
}

// fsOp is one file system request with its arguments, as either driver
// runs it: submitted to libuv (submit, file_uv.go) or run by a pool
// goroutine (run, file_go.go).
type fsOp struct{ uvcgo.FSArgs }

func (q *FSRequest[T]) kindName() string { return "fs" }

func (q *FSRequest[T]) describe() string {
	if q.path2 != "" {
		return fmt.Sprintf("FS(%s %s %s)", q.op, q.path, q.path2)
	}
	return fmt.Sprintf("FS(%s %s)", q.op, q.path)
}

func (q *FSRequest[T]) stopContext() { q.ctx.end() }

// hold records the descriptor an open delivers, for abandon to close
// should its waiter give up after all; it reports false when the waiter
// gave up already: nobody will take it.
func (q *FSRequest[T]) hold(res any) bool {
	fd, ok := res.(int)
	if !ok || q.op != "open" {
		return true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.gaveUp {
		return false
	}
	q.held = fd
	return true
}

// delivered turns an open's descriptor, held, into its *File, which
// closes it when dropped; any other result is delivered as it is.
func (q *FSRequest[T]) delivered(res any) any {
	if fd, ok := res.(int); ok && q.op == "open" {
		q.fs.adopt(fd)
		return q.fs
	}
	return res
}

// failure is the error of a request that failed with status, a negated
// errno (libuv's convention), the same on both drivers.
func (q *FSRequest[T]) failure(status int) error {
	return q.pathError(uvcgo.ErrorOf("uv_fs_"+q.op, status))
}

// pathError is err as the request's error: an *os.LinkError for a request
// naming two paths, an *fs.PathError otherwise.
func (q *FSRequest[T]) pathError(err error) error {
	if q.path2 != "" {
		return &os.LinkError{Op: q.op, Old: q.path, New: q.path2, Err: err}
	}
	return &fs.PathError{Op: q.op, Path: q.path, Err: err}
}

// unclaimed lets go of the result of an operation whose request closed
// first: a descriptor an open gave is closed, since nobody will.
func (q *FSRequest[T]) unclaimed(res any) {
	if fd, ok := res.(int); ok && q.op == "open" {
		unix.Close(fd)
	}
}

// submitFS makes one request for op on r and submits it, to libuv or, on
// the pure-Go driver, to the pool (submitGo): the one path every file
// system request takes. f is the request's file (nil for a request naming
// paths only); ctx bounds the request (see FSRequest). A nil or already
// done context refuses it: nothing is submitted. A request of f other than
// its open and close runs on f's descriptor, taken here (File.use) and
// given back when the request is done with it, or refused.
func submitFS[T any](ctx context.Context, r *reactor.Reactor, f *File, op fsOp) (_ *FSRequest[T], err error) {
	q := &FSRequest[T]{op: op.Op, path: op.Path, path2: op.Path2, fs: f, held: -1}
	if f != nil {
		q.path = f.name
		if op.Op != "open" && op.Op != "close" {
			if op.FD, err = f.use(); err != nil {
				return nil, &os.PathError{Op: op.Op, Path: f.name, Err: err}
			}
			q.onFD = true
		}
	}
	defer func() {
		if err != nil {
			q.giveBack()
		}
	}()
	if strings.IndexByte(op.Path+op.Path2, 0) >= 0 {
		// The system would take the path up to the NUL: another file.
		return nil, q.pathError(syscall.EINVAL)
	}
	if ctx == nil {
		return nil, q.pathError(event.ErrNilContext)
	}
	if ctx.Err() != nil {
		return nil, q.pathError(ctx.Err())
	}
	if r != nil && r.Driver() == reactor.DriverGo {
		err = q.submitGo(r, op, false)
	} else {
		err = submitReq(r, &q.Base, &q.reqCore, q, op.submit)
	}
	if err != nil {
		return nil, q.pathError(err)
	}
	if ctx.Done() != nil {
		q.ctx.watchWith(r, &q.reqCore, ctx, q.pathError)
	}
	return q, nil
}

// giveBack tells q's File that q no longer uses its descriptor (its
// operation has run, or never will): once, from whichever path sees it
// first.
func (q *FSRequest[T]) giveBack() {
	if q.onFD && q.gaveBack.CompareAndSwap(false, true) {
		q.fs.release()
	}
}

// await waits for q and returns its result, as Await does. When the wait
// ends first (ctx, or a nil one, or the reactor closing), q is abandoned:
// closed, and an outcome it had already given, which nobody takes now, is
// let go (a descriptor an open gave is closed).
func (q *FSRequest[T]) await(ctx context.Context) (T, error) {
	out, err := event.Await(ctx, event.Any(), q)
	if err != nil {
		q.abandon()
		var zero T
		return zero, err
	}
	return as[T](out[0].Result), out[0].Err
}

// abandon closes q for a waiter that gave up. A descriptor an open
// delivered already is closed here; one still to come is closed where it
// is delivered (hold), whether the loop runs it before or after the
// request's close, and even with the reactor closed meanwhile.
func (q *FSRequest[T]) abandon() {
	q.mu.Lock()
	q.gaveUp = true
	q.mu.Unlock()
	q.letGo()
	q.Close()
}

// letGo closes the descriptor q.held has, if any, taking it out first:
// whoever takes it closes it, once. The File it went to lets go of it.
func (q *FSRequest[T]) letGo() {
	q.mu.Lock()
	fd := q.held
	q.held = -1
	q.mu.Unlock()
	if fd >= 0 {
		q.fs.drop()
	}
}

// OpenAsync opens name with os.OpenFile's flags and permissions, on the
// thread pool (uv_fs_open), and completes with the *File: a request that
// completes with a File nobody takes (its event dropped) closes the
// descriptor when the File is collected. ctx bounds the open (see
// FSRequest): one cancelled too late has its descriptor closed.
func OpenAsync(ctx context.Context, r *reactor.Reactor, name string, flag int, perm os.FileMode) (*FSRequest[*File], error) {
	f := &File{r: r, name: name, fd: -1}
	return submitFS[*File](ctx, r, f, fsOp{uvcgo.FSArgs{Op: "open", Path: name, Flags: flag | unix.O_CLOEXEC, Mode: int(perm.Perm())}})
}

// adopt makes fd f's descriptor, which f closes when it is collected
// open.
func (f *File) adopt(fd int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fd = fd
	// A File dropped open gives its descriptor back: no C memory is held.
	f.clean = runtime.AddCleanup(f, func(fd int) { unix.Close(fd) }, fd)
}

// drop closes f's descriptor, if it still has it: its open was abandoned.
func (f *File) drop() {
	f.mu.Lock()
	fd := f.fd
	f.fd = -1
	f.mu.Unlock()
	if fd >= 0 {
		f.clean.Stop()
		unix.Close(fd)
	}
}

// OpenFile opens name with os.OpenFile's flags and permissions, on the
// thread pool, and waits for it (or ctx: the open is then cancelled, and a
// descriptor it gives all the same is closed).
func OpenFile(ctx context.Context, r *reactor.Reactor, name string, flag int, perm os.FileMode) (*File, error) {
	q, err := OpenAsync(context.Background(), r, name, flag, perm)
	if err != nil {
		return nil, err
	}
	f, err := q.await(ctx)
	if err != nil {
		return nil, fileError("open", name, err)
	}
	return f, nil
}

// fileError is err as the error of a File's op: as it is when it is the
// request's own *fs.PathError, else in one.
func fileError(op, name string, err error) error {
	if _, ok := err.(*fs.PathError); ok {
		return err
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// Name returns the name the file was opened with.
func (f *File) Name() string {
	if f == nil {
		return ""
	}
	return f.name
}

// descriptor returns the open descriptor, or ErrClosed.
func (f *File) descriptor() (int, error) {
	if f.zero() {
		return -1, errZero("File")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fd < 0 {
		return -1, os.ErrClosed
	}
	return f.fd, nil
}

// ReadAsync reads up to n bytes at off (-1: at the descriptor's position)
// and completes with them (an empty []byte at the end of the file). One
// request reads at most maxFileIO (1 GiB, as package os bounds a read):
// its buffer is made up front. ctx bounds the read as every file system
// request's (see FSRequest): one whose ctx ends before the pool starts it
// never reads. A closed File is refused with an error matching
// os.ErrClosed; n < 1 or an offset below -1 with one matching
// syscall.EINVAL.
func (f *File) ReadAsync(ctx context.Context, n int, off int64) (*FSRequest[[]byte], error) {
	if err := f.usable("read", n > 0, off); err != nil {
		return nil, err
	}
	n = min(n, maxFileIO)
	return submitFS[[]byte](ctx, f.r, f, fsOp{uvcgo.FSArgs{Op: "read", N: n, Off: off}})
}

// WriteAsync writes p at off (-1: at the descriptor's position) and
// completes with the count written: at most maxFileIO (1 GiB) in one
// request, as ReadAsync reads (WriteAt and Write go on with the rest). p is
// copied: reuse it at once. ctx bounds the write as ReadAsync's bounds the
// read: one whose ctx ends before the pool starts it writes nothing; one
// already started may write although it completes with ctx's error. It is
// refused as ReadAsync is, and an empty p with syscall.EINVAL.
func (f *File) WriteAsync(ctx context.Context, p []byte, off int64) (*FSRequest[int], error) {
	if err := f.usable("write", len(p) > 0, off); err != nil {
		return nil, err
	}
	p = p[:min(len(p), maxFileIO)]
	return submitFS[int](ctx, f.r, f, fsOp{uvcgo.FSArgs{Op: "write", P: p, Off: off}})
}

// maxFileIO bounds the bytes of one read or write request: libuv's
// uv_buf_t holds a 32-bit length, and a buffer is made up front.
const maxFileIO = 1 << 30

// zero reports a File that OpenFile did not make (a zero value, or nil).
func (f *File) zero() bool { return f == nil || f.r == nil }

// usable checks an operation's arguments (ok: the caller found them
// right), returning the error refusing it.
func (f *File) usable(op string, ok bool, off int64) error {
	if f == nil {
		return errZero("File")
	}
	_, err := f.descriptor()
	if err == nil && (!ok || off < -1) {
		err = syscall.EINVAL
	}
	if err != nil {
		return &os.PathError{Op: op, Path: f.name, Err: err}
	}
	return nil
}

// use returns the open descriptor for a request that will run on it,
// counted in busy until the request gives it back (release); a closed
// File refuses it with os.ErrClosed.
func (f *File) use() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fd < 0 {
		return -1, os.ErrClosed
	}
	f.busy++
	return f.fd, nil
}

// release gives back the descriptor a request used: the last one closes
// it, or hands it to the close request waiting for it, if Close left it to
// them.
func (f *File) release() {
	f.mu.Lock()
	f.busy--
	last, fd, then := f.busy == 0 && f.orphaned, f.orphan, f.then
	if last {
		f.orphaned, f.then = false, nil
	}
	f.mu.Unlock()
	switch {
	case !last:
	case then != nil:
		then(fd)
	default:
		unix.Close(fd)
	}
}

// ReadAt reads len(p) bytes at off, as io.ReaderAt: fewer only at the end
// of the file (with io.EOF) or on an error. A closed File is refused with
// an error matching os.ErrClosed, a negative off (as *os.File refuses it)
// with one matching syscall.EINVAL.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if err := f.usable("read", off >= 0, off); err != nil {
		return 0, err
	}
	n := 0
	for n < len(p) {
		q, err := f.ReadAsync(context.Background(), len(p)-n, off+int64(n))
		if err != nil {
			return n, err
		}
		res, err := q.await(context.Background())
		if err != nil {
			return n, fileError("read", f.name, err)
		}
		if len(res) == 0 {
			return n, io.EOF
		}
		n += copy(p[n:], res)
	}
	return n, nil
}

// WriteAt writes p at off, as io.WriterAt; a negative off is refused as
// ReadAt refuses it.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	if err := f.usable("write", off >= 0, off); err != nil {
		return 0, err
	}
	n := 0
	for n < len(p) {
		q, err := f.WriteAsync(context.Background(), p[n:], off+int64(n))
		if err != nil {
			return n, err
		}
		res, err := q.await(context.Background())
		if err != nil {
			return n, fileError("write", f.name, err)
		}
		n += res
	}
	return n, nil
}

// Read reads at the descriptor's position and advances it (io.Reader),
// as read(2) does: a FIFO, a terminal or a socket opened as a file reads
// as well as a regular file.
func (f *File) Read(p []byte) (int, error) {
	if f.zero() {
		return 0, &os.PathError{Op: "read", Err: errZero("File")}
	}
	if len(p) == 0 {
		return 0, nil
	}
	q, err := f.ReadAsync(context.Background(), len(p), -1)
	if err != nil {
		return 0, err
	}
	res, err := q.await(context.Background())
	if err != nil {
		return 0, fileError("read", f.name, err)
	}
	n := copy(p, res)
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// Write writes p whole at the descriptor's position and advances it
// (io.Writer), as write(2) does, whatever the descriptor is.
func (f *File) Write(p []byte) (int, error) {
	if f.zero() {
		return 0, &os.PathError{Op: "write", Err: errZero("File")}
	}
	if _, err := f.descriptor(); err != nil {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: err}
	}
	n := 0
	for n < len(p) {
		q, err := f.WriteAsync(context.Background(), p[n:], -1)
		if err != nil {
			return n, err
		}
		res, err := q.await(context.Background())
		if err != nil {
			return n, fileError("write", f.name, err)
		}
		if res == 0 {
			return n, &os.PathError{Op: "write", Path: f.name, Err: io.ErrShortWrite}
		}
		n += res
	}
	return n, nil
}

// Close closes the descriptor, as *os.File's Close: closing twice returns
// an error matching os.ErrClosed. The File is unusable from the moment
// Close is called: its later requests are refused with os.ErrClosed.
// Close never waits for the loop on the loop goroutine, nor for a loop
// that does not run, so a Close in a callback, and a deferred Close after
// Run returned (or after the reactor's Close), close the file; and it
// never closes the descriptor under a request that still uses it:
//   - On the loop goroutine (in a callback), Close starts the close
//     (CloseAsync) and returns nil; should close(2) fail, the error is
//     reported as the reactor reports other failures nobody waits for
//     (reactor.Options.OnReport, or its logger: "File close failed",
//     with the *fs.PathError).
//   - Off it, with requests of the file in flight (a ReadAsync not yet
//     completed, ...), Close returns nil at once and the close runs
//     when the last of them is done with the descriptor, a failure
//     reported as on the loop goroutine.
//   - Otherwise, while a loop runs the reactor, Close waits for the
//     close (uv_fs_close on libuv's pool, or close(2) by a pool goroutine
//     on the pure-Go driver) and returns its error. Should that run be
//     stopped first, Close waits for the next one, or the reactor's Close.
//   - While no loop runs, Close makes close(2) itself and returns its
//     error; after the reactor's Close, it returns an error matching
//     reactor.ErrReactorClosed, the descriptor closed all the same.
func (f *File) Close() error {
	if f.zero() { // its fd is 0, which is not its own
		return &os.PathError{Op: "close", Err: errZero("File")}
	}
	if f.r.Owner().Owned() {
		q, _, err := f.closeAsync(context.Background())
		if err != nil {
			return err
		}
		f.reportFailure(q)
		return nil
	}
	if idle, err := loopless(f.r); idle {
		return f.closeHere(err)
	}
	q, later, err := f.closeAsync(context.Background())
	if err != nil {
		return err
	}
	if later {
		f.reportFailure(q)
		return nil
	}
	if _, err := q.await(context.Background()); err != nil {
		return fileError("close", f.name, err)
	}
	return nil
}

// closeHere closes the descriptor on the calling goroutine, no loop
// running (err: the reactor's Close has been, which runs none either),
// or leaves it to the requests still using it, as Close says.
func (f *File) closeHere(err error) error {
	fd, busy := f.take(nil)
	switch {
	case busy:
		return nil
	case fd < 0:
		return &os.PathError{Op: "close", Path: f.name, Err: os.ErrClosed}
	}
	req := &FSRequest[struct{}]{op: "close", path: f.name}
	op := fsOp{uvcgo.FSArgs{Op: "close", FD: fd}}
	// Nothing else has the descriptor, and no loop would complete a
	// request: close it here, as the pool would.
	if _, errno := op.run(); errno != 0 && err == nil {
		err = req.failure(-int(errno))
	}
	if err != nil {
		return req.pathError(err)
	}
	return nil
}

// take takes the descriptor from f, which is closed from here on, and
// returns it (-1 if f was closed already). With requests in flight on it
// (busy), the last of them gets it (release), to hand it to then, or
// close it when then is nil.
func (f *File) take(then func(fd int)) (fd int, busy bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fd, f.fd = f.fd, -1
	if fd < 0 {
		return -1, false
	}
	f.clean.Stop()
	if f.busy > 0 {
		f.orphan, f.orphaned, f.then = fd, true, then
		return fd, true
	}
	return fd, false
}

// CloseAsync closes the descriptor on the thread pool (uv_fs_close) and
// returns the request, which completes when the descriptor is closed,
// with close(2)'s error if it fails. It never blocks, so it serves on the
// loop goroutine as anywhere: wait for it with Await off the loop, or
// subscribe with OnDone on it. The File is closed from the call on (its
// later requests, and a second Close or CloseAsync, are refused with
// os.ErrClosed); with requests of the file in flight, the close runs once
// the last of them is done with the descriptor (on DefaultTaskPool, on
// either driver). ctx bounds the request as every file system request's
// (see FSRequest), but a close has no undo: a close request closed, or
// whose ctx ends, before it ran still has the descriptor closed, on the
// goroutine that cancelled it or on the one giving the descriptor back.
// A nil or done ctx refuses the call, the File left open.
func (f *File) CloseAsync(ctx context.Context) (*FSRequest[struct{}], error) {
	q, _, err := f.closeAsync(ctx)
	return q, err
}

// closeAsync is CloseAsync, also telling whether the close waits for
// requests in flight (later).
func (f *File) closeAsync(ctx context.Context) (_ *FSRequest[struct{}], later bool, err error) {
	if f.zero() {
		return nil, false, &os.PathError{Op: "close", Err: errZero("File")}
	}
	switch {
	case ctx == nil:
		err = event.ErrNilContext
	case ctx.Err() != nil:
		err = ctx.Err()
	}
	if err != nil {
		return nil, false, &os.PathError{Op: "close", Path: f.name, Err: err}
	}
	f.mu.Lock()
	fd, busy := f.fd, f.busy > 0
	if fd >= 0 && !busy {
		f.fd = -1
		f.clean.Stop()
	}
	f.mu.Unlock()
	switch {
	case fd < 0:
		return nil, false, &os.PathError{Op: "close", Path: f.name, Err: os.ErrClosed}
	case !busy:
		q, err := submitFS[struct{}](ctx, f.r, f, fsOp{uvcgo.FSArgs{Op: "close", FD: fd}})
		if err != nil {
			unix.Close(fd) // the reactor is gone: close it here
			return nil, false, err
		}
		return q, false, nil
	}
	// Requests are in flight: the close request is made first, and the
	// last of them begins it (or this call, should they all be done by
	// then).
	q := &FSRequest[struct{}]{op: "close", path: f.name, fs: f, held: -1}
	if err := q.submitGo(f.r, fsOp{}, true); err != nil {
		// The reactor is gone: the requests close the descriptor, or
		// this call if they are done.
		if fd, busy := f.take(nil); fd >= 0 && !busy {
			unix.Close(fd)
		}
		return nil, false, q.pathError(err)
	}
	fd, busy = f.take(q.begin)
	switch {
	case fd < 0:
		q.Close()
		return nil, false, &os.PathError{Op: "close", Path: f.name, Err: os.ErrClosed}
	case !busy:
		q.begin(fd)
	}
	if ctx.Done() != nil {
		q.ctx.watchWith(f.r, &q.reqCore, ctx, q.pathError)
	}
	return q, true, nil
}

// reportFailure reports q's failure, should the close fail, as the
// reactor reports failures nobody waits for.
func (f *File) reportFailure(q *FSRequest[struct{}]) {
	q.OnDone(func(_ struct{}, err error) {
		if err != nil {
			eventkind.Report(f.r.Owner(), q, "File close failed", err)
		}
	})
}

// loopless reports whether no goroutine runs r's loop: an operation on it
// runs on the caller, who does not own it already (a callback, or another
// operation); err says the reactor is closed, which runs no loop either.
// A loop that starts after it answered finds no request to complete.
func loopless(r *reactor.Reactor) (idle bool, err error) {
	if r.Owner().Owned() {
		return false, nil
	}
	me := gid.Current()
	if err := r.Call(func() { idle = gid.Current() == me }); err != nil {
		return true, err
	}
	return idle, nil
}
