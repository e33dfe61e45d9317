package uv

import (
	"bytes"
	"context"
	"errors"
	"io"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// The pure-Go driver's file requests. libuv runs a uv_fs_* request on its
// thread pool and reports it to the loop; here an FSRequest is a Go-owned
// event whose operation is a job of DefaultTaskPool (libuv's pool model,
// with goroutines for threads, shared with QueueTask as libuv's pool is
// shared with uv_queue_work). The job makes the system call libuv's worker
// would make, by libuv's rules (uv__fs_work), and hands the outcome to the
// loop, which delivers it on its next turn (kind.Host.Queue): as libuv
// delivers only inside uv_run, a request completes only while the loop
// runs, never in the worker or in another goroutine's operation on a loop
// nobody runs. While the job is queued or running it is an active Task,
// and then its timer is active, so Run waits for it, as it waits for
// libuv's requests in flight. The request is registered with the reactor's Close, which closes
// it (its waiters hear event.ErrClosed) and takes back its job if that has
// not started; a job that has started runs to the end, and an outcome
// nobody takes any more is let go (a descriptor an open gave is closed).
// Nothing holds a request but its job and the queued outcome, so one
// dropped in flight is collected once it has completed.

// goFSOps implements eventkind.Ops for an FSRequest on the pure-Go driver.
type goFSOps[T any] FSRequest[T]

// submitGo makes q the pure-Go driver's request for op and queues op's job,
// on the loop; it refuses a closing reactor with ErrReactorClosed. With
// later, it makes the request and queues nothing: a close left to the
// file's requests in flight, queued by begin when the last is done with
// the descriptor (on either driver: the job is DefaultTaskPool's).
func (q *FSRequest[T]) submitGo(r *reactor.Reactor, op fsOp, later bool) error {
	host := kind.HostOf(r.Owner())
	q.entry = entry{r: r, host: host, ev: q}
	q.b = &q.Base
	eventkind.Init(&q.Base, (*goFSOps[T])(q), false, event.GoOwned)
	var err error
	if x := r.Call(func() {
		if err = onReactorClose(&q.closer, r, q); err != nil {
			return
		}
		if !later {
			if err = q.queueJob(op); err != nil {
				q.closer.forget()
				return
			}
		}
		// Counted while in flight, as libuv's request is in the
		// reactor's table; Free gives the count back.
		host.CountHandle(q.kindName(), 1)
		q.counted = true
	}); x != nil {
		return x
	}
	return err
}

// queueJob queues the job running op on DefaultTaskPool, on the loop.
func (q *FSRequest[T]) queueJob(op fsOp) (err error) {
	// WriteAsync's caller may reuse p at once (libuv's path copies it into
	// the request's C memory).
	op.P = bytes.Clone(op.P)
	q.closing = op.FD // for a close taken back before it ran (Free)
	host := q.host
	q.job, err = QueueTask(q.r, func(context.Context) (any, error) {
		res, errno := op.run()
		q.giveBack()
		var ferr error
		if errno != 0 {
			res, ferr = nil, q.failure(-int(errno))
		}
		if host.Queue(func() { q.landed(res, ferr) }) != nil {
			q.unclaimed(res) // the reactor has closed, and q with it
		}
		return nil, nil
	})
	return err
}

// begin queues the close of fd that q, made by submitGo with later, stood
// for: from the goroutine of the request that gave the descriptor back
// last. A q closed meanwhile (its context ended, Close, the reactor's
// Close) or a job refused leaves fd to be closed here: the descriptor is
// closed whatever became of its request.
func (q *FSRequest[T]) begin(fd int) {
	queued := false
	q.r.Call(func() {
		if q.Flags().Has(event.Closed) {
			return
		}
		if err := q.queueJob(fsOp{uvcgo.FSArgs{Op: "close", FD: fd}}); err != nil {
			q.settle(nil, q.pathError(err))
			return
		}
		queued = true
	})
	if !queued {
		unix.Close(fd)
	}
}

// landed delivers the outcome of q's job, on the loop: to q's waiters, or,
// if q closed first, to nobody. A descriptor held (hold) and then not
// delivered is taken back from q.held before it is closed, so that a
// waiter's abandon, which closes what q.held has, cannot close it again
// (by then perhaps another file's number).
func (q *FSRequest[T]) landed(res any, err error) {
	if !q.hold(res) {
		q.unclaimed(res)
		return
	}
	if err == nil {
		res = q.delivered(q.result(res))
	}
	if !q.settle(res, err) {
		q.letGo()
	}
}

func (o *goFSOps[T]) Owner() event.Owner         { return o.r.Owner() }
func (o *goFSOps[T]) Event() event.Event         { return (*FSRequest[T])(o) }
func (o *goFSOps[T]) Arm() error                 { return nil }
func (o *goFSOps[T]) Disarm()                    {}
func (o *goFSOps[T]) Describe() string           { return (*FSRequest[T])(o).describe() }
func (o *goFSOps[T]) Stored() (any, error, bool) { return (*reqCoreOps)(&o.reqCore).Stored() }

// Free runs when the request has closed (completed, or closed first by
// Close, Dispose or the reactor's Close): a job that has not started is
// taken back (a close's descriptor is then closed here, as libuv's shim
// closes it when its close request is cancelled); one that has runs on,
// and its outcome is let go (landed). The reactor's Close may have taken
// the job back already, closing its Task before this request: what
// counts is that the job never ran, not who took it back.
func (o *goFSOps[T]) Free(bool) {
	o.closer.forget()
	o.ctx.end()
	if o.job != nil {
		o.job.Cancel()
		if o.job.neverRan() {
			(*FSRequest[T])(o).giveBack()
			if o.op == "close" {
				// The descriptor is still open, and its File has let
				// go of it.
				unix.Close(o.closing)
			}
		}
	}
	if o.counted {
		o.counted = false
		o.host.CountHandle((*FSRequest[T])(o).kindName(), -1)
	}
}

// run makes the operation's system call, as libuv's worker does
// (uv__fs_work): a read or write at a negative offset uses the
// descriptor's position (read, write) rather than pread and pwrite; a
// write is repeated until all of p is written or it fails; calls
// interrupted by a signal are repeated, except close (the descriptor is
// gone whatever close(2) returned). It returns the result (a descriptor,
// the bytes read, a count, a *syscall.Stat_t, a StatFS, the directory's
// entries as []uvcgo.FSDirent, a path; nil for a request whose result is
// none), as file_uv.go's done reads libuv's, or the errno.
func (op *fsOp) run() (any, syscall.Errno) {
	var err error
	switch op.Op {
	case "open":
		return retried(func() (int, error) { return unix.Open(op.Path, op.Flags, uint32(op.Mode)) })
	case "read":
		buf := make([]byte, op.readSize())
		n, errno := retried(func() (int, error) {
			if op.Off < 0 {
				return unix.Read(op.FD, buf)
			}
			return unix.Pread(op.FD, buf, op.Off)
		})
		if errno != 0 {
			return nil, errno
		}
		if n < len(buf)/2 {
			return bytes.Clone(buf[:n]), 0 // what libuv's path gives: no more memory than the bytes read
		}
		return buf[:n:n], 0
	case "write":
		return op.writeAll()
	case "close":
		return nil, errnoOf(unix.Close(op.FD))
	case "stat", "lstat", "fstat":
		st := new(syscall.Stat_t)
		switch op.Op {
		case "stat":
			err = syscall.Stat(op.Path, st)
		case "lstat":
			err = syscall.Lstat(op.Path, st)
		default:
			err = syscall.Fstat(op.FD, st)
		}
		return st, errnoOf(err)
	case "statfs":
		var st unix.Statfs_t
		if err = unix.Statfs(op.Path, &st); err != nil {
			return nil, errnoOf(err)
		}
		return StatFS{Type: uint64(st.Type), BlockSize: uint64(st.Bsize), Blocks: st.Blocks, BlocksFree: st.Bfree,
			BlocksAvail: uint64(st.Bavail), Files: st.Files, FilesFree: uint64(st.Ffree)}, 0
	case "scandir":
		return op.scandir()
	case "readlink":
		return op.readlink()
	case "realpath":
		return op.realpath()
	case "mkdtemp":
		return op.mkdtemp()
	case "copyfile":
		return nil, op.copyFile()
	case "ftruncate":
		err = unix.Ftruncate(op.FD, op.Off)
	case "utime", "futime":
		var ts [2]unix.Timespec
		ts[0].Sec, ts[0].Nsec = timespec(op.Atime)
		ts[1].Sec, ts[1].Nsec = timespec(op.Mtime)
		if op.Op == "utime" {
			err = unix.UtimesNanoAt(unix.AT_FDCWD, op.Path, ts[:], 0)
		} else {
			err = futimens(op.FD, &ts)
		}
	case "access":
		err = unix.Access(op.Path, uint32(op.Mode))
	case "chmod":
		err = unix.Chmod(op.Path, uint32(op.Mode))
	case "fchmod":
		err = unix.Fchmod(op.FD, uint32(op.Mode))
	case "fsync":
		err = unix.Fsync(op.FD)
	case "fdatasync":
		err = fdatasync(op.FD)
	case "unlink":
		err = unix.Unlink(op.Path)
	case "rmdir":
		err = unix.Rmdir(op.Path)
	case "mkdir":
		err = unix.Mkdir(op.Path, uint32(op.Mode))
	case "rename":
		err = unix.Rename(op.Path, op.Path2)
	case "link":
		err = unix.Link(op.Path, op.Path2)
	case "symlink":
		err = unix.Symlink(op.Path, op.Path2)
	case "chown":
		err = unix.Chown(op.Path, op.UID, op.GID)
	case "fchown":
		err = unix.Fchown(op.FD, op.UID, op.GID)
	case "lchown":
		err = unix.Lchown(op.Path, op.UID, op.GID)
	default:
		return nil, syscall.EINVAL
	}
	if err == unix.EINTR {
		return op.run() // as libuv's worker repeats them (close is above)
	}
	return nil, errnoOf(err)
}

// readSize is the buffer a read is given: op.n, but no more than a
// regular file holds past the offset (and a page, should it grow
// meanwhile): a Go buffer is zeroed as it is made, and a huge request on a
// small file must not cost its size. A short read is a read's right.
func (op *fsOp) readSize() int {
	var st unix.Stat_t
	if unix.Fstat(op.FD, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return op.N
	}
	at := op.Off
	if at < 0 {
		var err error
		if at, err = unix.Seek(op.FD, 0, io.SeekCurrent); err != nil {
			return op.N
		}
	}
	return int(min(int64(op.N), max(st.Size-at, 0)+4096))
}

// writeAll writes op.p whole, as uv__fs_write_all does: a short write is
// followed by another with the rest; an error after some bytes were
// written ends it with their count, an error before any is the outcome.
func (op *fsOp) writeAll() (any, syscall.Errno) {
	done := 0
	for done < len(op.P) {
		k, errno := retried(func() (int, error) {
			if op.Off < 0 {
				return unix.Write(op.FD, op.P[done:])
			}
			return unix.Pwrite(op.FD, op.P[done:], op.Off+int64(done))
		})
		if errno != 0 && done == 0 {
			return nil, errno
		}
		if errno != 0 || k == 0 {
			break
		}
		done += k
	}
	return done, 0
}

// retried is ignoringEINTR (io_go.go) giving the errno.
func retried(call func() (int, error)) (int, syscall.Errno) {
	n, err := ignoringEINTR(call)
	return n, errnoOf(err)
}

// errnoOf returns err's errno: 0 for nil; EIO for an error that holds
// none.
func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return syscall.EIO
}
