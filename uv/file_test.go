package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

// TestFileWriteRead writes a file through File's requests and reads it
// back, at offsets and sequentially, and checks it with package os, on
// each driver.
func TestFileWriteRead(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "data")
		f, err := uv.OpenFile(ctx, u.Reactor, path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
		uv.UvtMust(t, err)
		data := bytes.Repeat([]byte("uvevent file "), 100_000) // 1.3 MB
		if n, err := f.Write(data); n != len(data) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
		if n, err := f.WriteAt([]byte("HEAD"), 0); n != 4 || err != nil {
			t.Fatalf("WriteAt = %d, %v", n, err)
		}
		copy(data, "HEAD")
		got := make([]byte, len(data)+10)
		n, err := f.ReadAt(got, 0)
		if err != io.EOF || !bytes.Equal(got[:n], data) {
			t.Errorf("ReadAt = %d bytes, %v; want the %d written and io.EOF", n, err, len(data))
		}
		q, err := f.ReadAsync(context.Background(), 4, 4)
		uv.UvtMust(t, err)
		out, err := event.Await(ctx, event.Any(), q)
		uv.UvtMust(t, err)
		if got, _ := out[0].Result.([]byte); string(got) != string(data[4:8]) {
			t.Errorf("ReadAsync(4, 4) = %q", out[0].Result)
		}
		if re := regexp.MustCompile(`^FS\(read .*data\)$`); !re.MatchString(q.Info()) {
			t.Errorf("Info = %q, want %s", q.Info(), re)
		}
		// At the end of the file: an empty read, then io.EOF for Read.
		q, err = f.ReadAsync(context.Background(), 4, int64(len(data)))
		uv.UvtMust(t, err)
		out, err = event.Await(ctx, event.Any(), q)
		if got, ok := out[0].Result.([]byte); err != nil || !ok || len(got) != 0 {
			t.Errorf("ReadAsync at the end = %#v, %v; want an empty []byte", out[0].Result, err)
		}
		uv.UvtMust(t, f.Close())
		if err := f.Close(); !errors.Is(err, os.ErrClosed) {
			t.Errorf("second Close = %v, want os.ErrClosed", err)
		}
		if _, err := f.Read(make([]byte, 1)); !errors.Is(err, os.ErrClosed) {
			t.Errorf("Read after Close = %v", err)
		}
		onDisk, err := os.ReadFile(path)
		uv.UvtMust(t, err)
		if !bytes.Equal(onDisk, data) {
			t.Error("the file on disk differs from what was written")
		}
		// Sequential reads give the whole file; -1 reads and writes at the
		// descriptor's position.
		f, err = uv.OpenFile(ctx, u.Reactor, path, os.O_RDWR, 0)
		uv.UvtMust(t, err)
		all, err := io.ReadAll(f)
		if err != nil || !bytes.Equal(all, data) {
			t.Errorf("ReadAll = %d bytes, %v", len(all), err)
		}
		w, err := f.WriteAsync(context.Background(), []byte("TAIL"), -1)
		uv.UvtMust(t, err)
		if out, err := event.Await(ctx, event.Any(), w); err != nil || out[0].Result != 4 {
			t.Errorf("WriteAsync at the position = %v, %v; want 4", out[0].Result, err)
		}
		uv.UvtMust(t, f.Close())
		// Read reads at the descriptor's position, as read(2): after
		// ReadAll it is the end, where the write went.
		if onDisk, _ := os.ReadFile(path); string(onDisk) != string(data)+"TAIL" {
			t.Errorf("a write at the position after ReadAll left %q at the end, want TAIL", onDisk[max(len(onDisk)-4, 0):])
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// errShape is what a test compares of a File's error: the call libuv (or
// the pure-Go driver in its name) made, the errno, and what it matches.
type errShape struct {
	PathOp        string // the *os.PathError's Op
	UvOp          string // the *uvcgo.Error's Op, for a failed system call
	Errno         syscall.Errno
	Closed        bool // matches os.ErrClosed
	ReactorClosed bool // matches reactor.ErrReactorClosed
}

func shapeOf(err error) errShape {
	var s errShape
	var pe *os.PathError
	if errors.As(err, &pe) {
		s.PathOp = pe.Op
	}
	var ue *uvcgo.Error
	if errors.As(err, &ue) {
		s.UvOp = ue.Op
	}
	errors.As(err, &s.Errno)
	s.Closed = errors.Is(err, os.ErrClosed)
	s.ReactorClosed = errors.Is(err, reactor.ErrReactorClosed)
	return s
}

// awaitErr returns the error a request completes with (or the one that
// refused it).
func awaitErr[T any](q *uv.FSRequest[T], err error) error {
	if err != nil {
		return err
	}
	out, err := event.Await(context.Background(), event.Any(), q)
	if err != nil {
		return err
	}
	return out[0].Err
}

// TestFileErrors gives File bad input on each driver and checks each
// error against the same table, so the drivers agree: clear errors, the
// reactor still serving afterwards, nothing left at Close.
func TestFileErrors(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ctx := context.Background()
		dir := t.TempDir()
		path := filepath.Join(dir, "ro")
		uv.UvtMust(t, os.WriteFile(path, []byte("x"), 0o600))
		ro, err := uv.OpenFile(ctx, u.Reactor, path, os.O_RDONLY, 0)
		uv.UvtMust(t, err)
		defer ro.Close()
		closed, err := uv.OpenFile(ctx, u.Reactor, path, os.O_RDONLY, 0)
		uv.UvtMust(t, err)
		uv.UvtMust(t, closed.Close())
		d, err := uv.OpenFile(ctx, u.Reactor, dir, os.O_RDONLY, 0)
		uv.UvtMust(t, err)
		defer d.Close()
		one := []byte("y")
		cases := []struct {
			name string
			err  func() error
			want errShape
		}{
			{"open a missing file", func() error {
				_, err := uv.OpenFile(ctx, u.Reactor, filepath.Join(dir, "missing"), os.O_RDONLY, 0)
				return err
			}, errShape{PathOp: "open", UvOp: "uv_fs_open", Errno: syscall.ENOENT}},
			{"open a directory to write", func() error {
				_, err := uv.OpenFile(ctx, u.Reactor, dir, os.O_RDWR, 0)
				return err
			}, errShape{PathOp: "open", UvOp: "uv_fs_open", Errno: syscall.EISDIR}},
			{"write a read-only file", func() error { _, err := ro.Write(one); return err },
				errShape{PathOp: "write", UvOp: "uv_fs_write", Errno: syscall.EBADF}},
			{"read a directory", func() error { return awaitErr(d.ReadAsync(context.Background(), 1, 0)) },
				errShape{PathOp: "read", UvOp: "uv_fs_read", Errno: syscall.EISDIR}},
			{"read a bad descriptor", func() error { return awaitErr(uv.UvtFSRead(u.Reactor, 1<<20)) },
				errShape{PathOp: "read", UvOp: "uv_fs_read", Errno: syscall.EBADF}},
			{"ReadAsync of 0 bytes", func() error { _, err := ro.ReadAsync(context.Background(), 0, 0); return err },
				errShape{PathOp: "read", Errno: syscall.EINVAL}},
			{"ReadAsync at -2", func() error { _, err := ro.ReadAsync(context.Background(), 1, -2); return err },
				errShape{PathOp: "read", Errno: syscall.EINVAL}},
			{"WriteAsync of nothing", func() error { _, err := ro.WriteAsync(context.Background(), nil, 0); return err },
				errShape{PathOp: "write", Errno: syscall.EINVAL}},
			{"WriteAsync at -5", func() error { _, err := ro.WriteAsync(context.Background(), one, -5); return err },
				errShape{PathOp: "write", Errno: syscall.EINVAL}},
			{"ReadAt at -1", func() error { _, err := ro.ReadAt(make([]byte, 1), -1); return err },
				errShape{PathOp: "read", Errno: syscall.EINVAL}},
			{"WriteAt at -1", func() error { _, err := ro.WriteAt(one, -1); return err },
				errShape{PathOp: "write", Errno: syscall.EINVAL}},
			{"ReadAsync of a closed file", func() error { _, err := closed.ReadAsync(context.Background(), 1, 0); return err },
				errShape{PathOp: "read", Closed: true}},
			{"WriteAsync of a closed file", func() error { _, err := closed.WriteAsync(context.Background(), one, 0); return err },
				errShape{PathOp: "write", Closed: true}},
			{"ReadAt of a closed file", func() error { _, err := closed.ReadAt(make([]byte, 1), -1); return err },
				errShape{PathOp: "read", Closed: true}},
			{"Write to a closed file", func() error { _, err := closed.Write(one); return err },
				errShape{PathOp: "write", Closed: true}},
			{"Close a closed file", closed.Close, errShape{PathOp: "close", Closed: true}},
			{"open with no reactor", func() error {
				_, err := uv.OpenFile(ctx, nil, path, os.O_RDONLY, 0)
				return err
			}, errShape{PathOp: "open", Errno: syscall.EINVAL}},
		}
		for _, c := range cases {
			if diff := cmp.Diff(c.want, shapeOf(c.err())); diff != "" {
				t.Errorf("%s: error differs (-want +got):\n%s", c.name, diff)
			}
		}
		// The reactor still serves: the file reads.
		buf := make([]byte, 1)
		if n, err := ro.ReadAt(buf, 0); n != 1 || err != nil || buf[0] != 'x' {
			t.Errorf("ReadAt after the bad input = %d, %v, %q", n, err, buf)
		}
		uv.UvtMust(t, ro.Close())
		uv.UvtMust(t, d.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestFileAfterReactorClose: a File outlives its reactor only to be
// closed. Its requests are refused with ErrReactorClosed, and Close gives
// its descriptor back all the same.
func TestFileAfterReactorClose(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, _, fds int) {
		stop := uv.UvtServe(t, u)
		f, err := uv.OpenFile(context.Background(), u.Reactor, filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o600)
		uv.UvtMust(t, err)
		stop()
		uv.UvtShutdown(t, u, false)
		want := errShape{PathOp: "write", ReactorClosed: true}
		if _, err := f.WriteAsync(context.Background(), []byte("late"), 0); !cmp.Equal(shapeOf(err), want) {
			t.Errorf("WriteAsync after the reactor's Close = %v, want ErrReactorClosed", err)
		}
		if err := f.Close(); !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("Close after the reactor's Close = %v, want ErrReactorClosed", err)
		}
		if got := uv.UvtOpenFDs(t); got > fds {
			t.Errorf("%d descriptors open after Close, want %d: the File's was not given back", got, fds)
		}
	})
}

// conformFS runs a file read request through the table on both
// drivers: a request runs from creation and completes by itself.
func conformFS(t *testing.T) conform.Kind {
	path := filepath.Join(t.TempDir(), "f")
	uv.UvtMust(t, os.WriteFile(path, []byte("conformance"), 0o600))
	return conform.Kind{
		Name:    "fs",
		OneShot: true,
		NoStart: true,
		New: func(r *reactor.Reactor) (event.Event, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { f.Close() })
			return uv.UvtFSRead(r, f.Fd())
		},
		Info: regexp.MustCompile(`^FS\(read \S+\)$`),
	}
}

// A file request counts as "fs" in Stats().Handles while in flight, on both
// drivers alike, and not once it has completed.
func TestFSRequestCounted(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		f, err := uv.OpenFile(context.Background(), u.Reactor, filepath.Join(t.TempDir(), "x"), os.O_CREATE|os.O_RDWR, 0o600)
		uv.UvtMust(t, err)
		var q *uv.FSRequest[int]
		var inFlight map[string]int
		uv.UvtMust(t, u.Call(func() {
			// Submitted on the loop: it cannot complete before a later turn.
			q, err = f.WriteAsync(context.Background(), []byte("x"), 0)
			inFlight = u.Stats().Handles
		}))
		uv.UvtMust(t, err)
		if diff := cmp.Diff(map[string]int{"fs": 1}, inFlight); diff != "" {
			t.Errorf("a file request in flight (-want +got):\n%s", diff)
		}
		if _, err := event.Await(waitCtx(t), event.Any(), q); err != nil {
			t.Fatal(err)
		}
		if n := u.Stats().Handles["fs"]; n != 0 {
			t.Errorf("a completed file request still counts: fs=%d", n)
		}
		uv.UvtMust(t, f.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestFileFIFOReadWrite: a FIFO opened as a File reads and writes with
// Read and Write (at the descriptor's position, as read(2) and write(2)),
// where positional calls fail with ESPIPE.
func TestFileFIFOReadWrite(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		defer stop()
		fifo := filepath.Join(t.TempDir(), "fifo")
		uv.UvtMust(t, unix.Mkfifo(fifo, 0o600))
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		f, err := uv.OpenFile(ctx, u.Reactor, fifo, os.O_RDWR, 0) // O_RDWR: no wait for a peer
		uv.UvtMust(t, err)
		defer f.Close()
		if n, err := f.Write([]byte("hello")); n != 5 || err != nil {
			t.Errorf("Write to a FIFO = %d, %v; want 5, nil", n, err)
		}
		buf := make([]byte, 16)
		if n, err := f.Read(buf); string(buf[:n]) != "hello" || err != nil {
			t.Errorf("Read from a FIFO = %q, %v; want \"hello\", nil", buf[:n], err)
		}
	})
}

func init() { uv.UvtRegisterChild("fifo-sigpipe", fifoSigpipe) }

// fifoSigpipe writes with a File to a FIFO whose reader has gone and
// prints the error: the process must live to print it.
func fifoSigpipe() int {
	d, _ := strconv.Atoi(os.Getenv("UVT_DRIVER"))
	// A child process has no testing.T for UvtNewReactorOn; it reports by
	// its output and exit status.
	r, err := reactor.New(reactor.Options{Driver: reactor.Driver(d)})
	if err != nil {
		fmt.Println("reactor.New:", err)
		return 1
	}
	ctx, stop := context.WithCancel(context.Background())
	go r.Serve(ctx)
	defer stop()
	dir, err := os.MkdirTemp("", "uvfifo")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer os.RemoveAll(dir)
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		fmt.Println(err)
		return 1
	}
	rd, err := unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	f, err := uv.OpenFile(ctx, r, fifo, os.O_WRONLY, 0)
	if err != nil {
		fmt.Println("OpenFile:", err)
		return 1
	}
	unix.Close(rd)
	q, err := f.WriteAsync(context.Background(), []byte("nobody reads this"), -1)
	if err != nil {
		fmt.Println("WriteAsync:", err)
		return 1
	}
	out, err := event.Await(ctx, event.Any(), q)
	if err == nil {
		err = out[0].Err
	}
	fmt.Println(errors.Is(err, syscall.EPIPE))
	return 0
}

// TestFileFIFOBrokenPipe: a File's write to a FIFO whose reader has gone
// fails with EPIPE; SIGPIPE does not end the process (on libuv the write
// runs on a pool thread, which blocks it). In a child process, so that a
// death fails the test rather than ending the test binary.
func TestFileFIFOBrokenPipe(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		out := uv.UvtRunChild(t, "fifo-sigpipe", fmt.Sprintf("UVT_DRIVER=%d", int(d)))
		if out != "true\n" {
			t.Errorf("the write to a FIFO with no reader: child printed %q, want EPIPE (true)", out)
		}
	})
}

// TestOpenFileAbandonedLeaksNothing: OpenFile calls whose context ends
// (nil, cancelled before, or a deadline that passes while the open runs) leave
// no descriptor open, whether the open completes before or after the
// request's close: counted in /proc/self/fd once the reactor closed.
func TestOpenFileAbandonedLeaksNothing(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		name := filepath.Join(t.TempDir(), "f")
		uv.UvtMust(t, os.WriteFile(name, []byte("x"), 0o600))
		_, base := uv.UvtBaseline(t)
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		var wg sync.WaitGroup
		for i := range 200 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var ctx context.Context // nil for one in three: refused at once
				switch i % 3 {
				case 1:
					c, cancel := context.WithCancel(context.Background())
					cancel()
					ctx = c
				case 2:
					c, cancel := context.WithTimeout(context.Background(), time.Duration(i%50)*10*time.Microsecond)
					defer cancel()
					ctx = c
				}
				if f, err := uv.OpenFile(ctx, u.Reactor, name, os.O_RDONLY, 0); err == nil {
					f.Close()
				}
			}()
		}
		wg.Wait()
		stop()
		uv.UvtShutdown(t, u, false)
		fdsBackTo(t, base, "200 abandoned opens and the reactor's Close")
	})
}

// TestReactorCloseWithOpensAndDials: the reactor's Close with opens and
// dials in flight leaves no descriptor open.
func TestReactorCloseWithOpensAndDials(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		name := filepath.Join(t.TempDir(), "f")
		uv.UvtMust(t, os.WriteFile(name, []byte("x"), 0o600))
		_, base := uv.UvtBaseline(t)
		peer, err := net.Listen("tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer peer.Close()
		u := uv.UvtNewReactorOn(t, d)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		served := make(chan error, 1)
		go func() { served <- u.Serve(ctx) }() // ends with the reactor's Close, whatever it says
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					if f, err := uv.OpenFile(ctx, u.Reactor, name, os.O_RDONLY, 0); err == nil {
						f.Close()
					}
					return
				}
				if c, err := uv.Dial(ctx, u.Reactor, "tcp4", peer.Addr().String()); err == nil {
					c.Close()
				}
			}()
		}
		time.Sleep(time.Millisecond) // some in flight; the count must hold wherever Close falls
		u.Close()
		wg.Wait()
		uv.UvtRecv(t, served, "Serve's end")
		peer.Close()
		fdsBackTo(t, base, "the reactor's Close with opens and dials in flight")
	})
}

// fdsBackTo waits for the open descriptors to come back to base (a pool
// job that finished after its request closed closes its descriptor a
// little later) and fails the test if they do not.
func fdsBackTo(t *testing.T, base int, after string) {
	t.Helper()
	deadline := time.Now().Add(uv.UvtSafety)
	for {
		got := uv.UvtOpenFDs(t)
		if got <= base {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d descriptors open after %s, %d before: %s", got, after, base, fdTargets())
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// fdTargets names what the open descriptors are, for a leak report.
func fdTargets() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var b strings.Builder
	for _, e := range ents {
		target, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		fmt.Fprintf(&b, "%s=%s ", e.Name(), target)
	}
	return b.String()
}

// TestFileCloseQueuedAtReactorClose: a File's Close whose close(2) still
// waits in the pool when the reactor closes: the reactor's Close takes the
// job back (the pool's task and the request both close, in either order),
// and the descriptor is closed all the same, as libuv's shim closes it
// when its close request is cancelled. Repeated: the reactor closes what
// it holds in no fixed order.
func TestFileCloseQueuedAtReactorClose(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		name := filepath.Join(t.TempDir(), "f")
		uv.UvtMust(t, os.WriteFile(name, []byte("x"), 0o600))
		u.Close()
		for range 16 {
			u := uv.UvtNewReactorOn(t, u.Driver())
			stop := uv.UvtServe(t, u)
			f, err := uv.OpenFile(context.Background(), u.Reactor, name, os.O_RDONLY, 0)
			uv.UvtMust(t, err)
			_, _, release := holdPool(t, u)
			uv.UvtWaitFor(t, "the pool to be held", poolHeld)
			closed := make(chan error, 1)
			before := u.Stats().Handles["fs"]
			go func() { closed <- f.Close() }()
			uv.UvtWaitFor(t, "the close to be queued", func() bool { return u.Stats().Handles["fs"] > before })
			stop()
			// libuv's loop closes only once the blockers are done: the
			// reactor's Close waits for them, after it took the close back.
			done := make(chan error, 1)
			go func() { done <- u.Close() }()
			// The waiter hears its request closed, or the reactor closed,
			// whichever it sees first.
			if err := uv.UvtRecv(t, closed, "File.Close"); !errors.Is(err, event.ErrClosed) && !errors.Is(err, reactor.ErrReactorClosed) {
				t.Errorf("File.Close cut short by the reactor's Close = %v, want ErrClosed or ErrReactorClosed", err)
			}
			release()()
			uv.UvtMust(t, uv.UvtRecv(t, done, "the reactor's Close"))
		}
		uv.UvtNoLeaks(t, base, fds)
	})
}

// openatNumbers is openat(2)'s system call number by architecture, as
// /proc/<pid>/task/<tid>/syscall shows it.
var openatNumbers = map[string]string{"amd64": "257", "arm64": "56", "riscv64": "56", "386": "295"}

// threadsInFIFOOpen counts this process's threads blocked opening a FIFO:
// the kernel's wait channel says wait_for_partner, or the thread is in
// openat (nothing else in a test process opens for long).
func threadsInFIFOOpen(t testing.TB) int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		wchan, _ := os.ReadFile(task + "/wchan")
		sc, _ := os.ReadFile(task + "/syscall")
		nr, _, _ := strings.Cut(string(sc), " ")
		if string(wchan) == "wait_for_partner" || nr != "" && nr == openatNumbers[runtime.GOARCH] {
			n++
		}
	}
	return n
}

// Shutdown honours its context on both drivers while a file request is
// stuck on the pool (an open of a FIFO nobody writes to): it returns the
// context's error while the open still blocks — before the blocker ends,
// whatever the time — says what is still running, and the reactor is
// closed all the same. Once the blocker ends, a second Close waits for the
// rest and nothing is left.
func TestShutdownContextBoundsPoolRequest(t *testing.T) {
	if _, ok := openatNumbers[runtime.GOARCH]; !ok {
		t.Skipf("no openat number known for %s: cannot tell when the open blocks", runtime.GOARCH)
	}
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		fifo := filepath.Join(t.TempDir(), "fifo")
		uv.UvtMust(t, unix.Mkfifo(fifo, 0o600))
		before := threadsInFIFOOpen(t)
		q, err := uv.UvtFSOpen(u.Reactor, fifo, unix.O_RDONLY)
		uv.UvtMust(t, err)
		uv.UvtWaitFor(t, "the open to block on the pool", func() bool { return threadsInFIFOOpen(t) > before })
		info := q.Info()
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the bound: nothing may be waited for
		err = u.Shutdown(ctx)
		blocked := threadsInFIFOOpen(t) > before // the blocker has not ended
		if !blocked {
			t.Fatal("the open ended by itself")
		}
		switch {
		case u.Driver() == reactor.DriverLibuv:
			// libuv cannot take back a running request: Close would wait.
			if !errors.Is(err, context.Canceled) || !errors.Is(err, reactor.ErrCloseIncomplete) {
				t.Errorf("Shutdown = %v, want context.Canceled and ErrCloseIncomplete", err)
			} else if !strings.Contains(err.Error(), info) {
				t.Errorf("Shutdown = %q, want it to name %s", err, info)
			}
		case err != nil: // the pure-Go driver does not wait for its workers
			t.Errorf("Shutdown = %v, want nil on the pure-Go driver", err)
		}
		if _, err := uv.UvtFSOpen(u.Reactor, fifo, unix.O_RDONLY); !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("a request after Shutdown = %v, want ErrReactorClosed", err)
		}
		w, err := unix.Open(fifo, unix.O_RDWR|unix.O_CLOEXEC, 0) // ends the blocker
		uv.UvtMust(t, err)
		defer unix.Close(w)
		uv.UvtShutdown(t, u, false) // waits for the rest; nothing is left
		unix.Close(w)
		uv.UvtNoLeaks(t, base, fds)
	})
}

// deadlineSoon is a deadline that ends a test's stray wait.
func deadlineSoon() time.Time { return time.Now().Add(100 * time.Millisecond) }

// TestFileHugeRead: a read request for far more than the file holds (4 GiB
// and more, 1 TiB) completes with the file's bytes: no 32-bit truncation
// (libuv's buffer length), no allocation of the size asked for (which ended
// the process on the pure-Go driver).
func TestFileHugeRead(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		defer stop()
		name := filepath.Join(t.TempDir(), "f")
		want := []byte("hello world")
		uv.UvtMust(t, os.WriteFile(name, want, 0o600))
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		f, err := uv.OpenFile(ctx, u.Reactor, name, os.O_RDONLY, 0)
		uv.UvtMust(t, err)
		defer f.Close()
		for _, n := range []int{1<<32 + 1, 1 << 40} {
			q, err := f.ReadAsync(context.Background(), n, 0)
			if err != nil {
				t.Errorf("ReadAsync(%d) = %v", n, err)
				continue
			}
			out, err := event.Await(ctx, event.Any(), q)
			if err == nil {
				err = out[0].Err
			}
			if err != nil || !bytes.Equal(out[0].Result.([]byte), want) {
				t.Errorf("ReadAsync(%d) of an 11-byte file = %q, %v; want %q", n, out[0].Result, err, want)
			}
		}
	})
}

// TestIOHugeReadAsync: a stream read request for 1 TiB completes with the
// bytes there are.
func TestIOHugeReadAsync(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		uv.UvtMust(t, s.Send([]byte("hi")))
		f, err := c.ReadAsync(1 << 40)
		uv.UvtMust(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		if b, err := event.AwaitValue(ctx, f); string(b) != "hi" || err != nil {
			t.Errorf("ReadAsync(1<<40) = %q, %v; want \"hi\"", b, err)
		}
		v.finish(t, c, s)
	})
}

// closeSoon runs f.Close on another goroutine and returns its error, failing
// the test if it does not return before the safety deadline: a Close
// waiting for a loop that does not run.
func closeSoon(t *testing.T, f *uv.File) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f.Close() }()
	return uv.UvtRecv(t, done, "File.Close")
}

// fdsOn counts this process's descriptors open on the file at path.
func fdsOn(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	uv.UvtMust(t, err)
	n := 0
	for _, e := range ents {
		if target, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); target == path {
			n++
		}
	}
	return n
}

// TestFileCloseAfterRun: a deferred Close after Run returned (no loop runs
// any more) closes the file at once, and a second Close says it is closed,
// as *os.File's does.
func TestFileCloseAfterRun(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		name := filepath.Join(t.TempDir(), "f")
		q, err := uv.OpenAsync(context.Background(), u.Reactor, name, os.O_RDWR|os.O_CREATE, 0o600)
		uv.UvtMust(t, err)
		uv.UvtMust(t, u.Run(context.Background()))
		f, err := q.Await(context.Background())
		uv.UvtMust(t, err)
		if err := closeSoon(t, f); err != nil {
			t.Errorf("Close after Run returned = %v, want nil", err)
		}
		if err := closeSoon(t, f); !errors.Is(err, os.ErrClosed) {
			t.Errorf("second Close = %v, want os.ErrClosed", err)
		}
		if n := fdsOn(t, name); n != 0 {
			t.Errorf("%d descriptors open on the file after Close, want 0", n)
		}
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}

// TestFileCloseLeftToRequest: a Close while no loop runs and a read of the
// file is still in flight returns at once, and leaves the descriptor open
// for the read, which reads what comes (not EBADF, nor another file's
// bytes); the descriptor is closed once the read is done, whether a Run
// completes it or the reactor's Close does.
func TestFileCloseLeftToRequest(t *testing.T) {
	for _, end := range []string{"run", "reactor close"} {
		t.Run(end, func(t *testing.T) {
			eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
				f, read, fifo := fifoRead(t, u)
				if err := closeSoon(t, f); err != nil {
					t.Errorf("Close with a read in flight = %v, want nil", err)
				}
				if err := closeSoon(t, f); !errors.Is(err, os.ErrClosed) {
					t.Errorf("second Close = %v, want os.ErrClosed", err)
				}
				if n := fdsOn(t, fifo); n != 1 {
					t.Errorf("%d descriptors open on the FIFO after Close, want the read's 1", n)
				}
				if _, err := f.ReadAsync(context.Background(), 1, -1); !errors.Is(err, os.ErrClosed) {
					t.Errorf("ReadAsync after Close = %v, want os.ErrClosed", err)
				}
				writeFIFO(t, fifo)
				if end == "run" {
					uv.UvtMust(t, u.Run(context.Background()))
					got, err := read.Await(context.Background())
					if string(got) != "x" || err != nil {
						t.Errorf("the read = %q, %v, want \"x\", nil", got, err)
					}
				} else {
					uv.UvtShutdown(t, u, false)
				}
				uv.UvtWaitFor(t, "the descriptor closed after the read", func() bool { return fdsOn(t, fifo) == 0 })
				uv.UvtShutdown(t, u, false)
				uv.UvtNoLeaks(t, base, fds)
			})
		})
	}
}

// TestFileCloseOnLoop: a File closed in a callback (on the loop goroutine),
// by Close or CloseAsync, is closed at once for its user (a request after
// it, and a second Close, are refused with os.ErrClosed) and its
// descriptor is closed by the time Run returns, Run waiting for the close;
// CloseAsync's request completes with close(2)'s outcome. On each driver.
func TestFileCloseOnLoop(t *testing.T) {
	for _, how := range []string{"Close", "CloseAsync"} {
		t.Run(how, func(t *testing.T) {
			eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
				name := filepath.Join(t.TempDir(), "f")
				open, err := uv.OpenAsync(context.Background(), u.Reactor, name, os.O_RDWR|os.O_CREATE, 0o600)
				uv.UvtMust(t, err)
				var heard []string
				_, err = open.OnDone(func(f *uv.File, err error) {
					uv.UvtMust(t, err)
					if how == "Close" {
						heard = append(heard, fmt.Sprintf("Close: %v", f.Close()))
					} else {
						q, err := f.CloseAsync(context.Background())
						heard = append(heard, fmt.Sprintf("CloseAsync: %v", err))
						_, err = q.OnDone(func(_ struct{}, err error) { heard = append(heard, fmt.Sprintf("closed: %v", err)) })
						uv.UvtMust(t, err)
					}
					_, err = f.ReadAsync(context.Background(), 1, 0)
					heard = append(heard, fmt.Sprintf("ReadAsync after it: ErrClosed %v", errors.Is(err, os.ErrClosed)))
					heard = append(heard, fmt.Sprintf("Close again: ErrClosed %v", errors.Is(f.Close(), os.ErrClosed)))
				})
				uv.UvtMust(t, err)
				uv.UvtMust(t, u.Run(context.Background()))
				want := []string{"Close: <nil>", "ReadAsync after it: ErrClosed true", "Close again: ErrClosed true"}
				if how == "CloseAsync" {
					want = []string{"CloseAsync: <nil>", "ReadAsync after it: ErrClosed true", "Close again: ErrClosed true", "closed: <nil>"}
				}
				if diff := cmp.Diff(want, heard); diff != "" {
					t.Errorf("in the callback (-want +got):\n%s", diff)
				}
				if n := fdsOn(t, name); n != 0 {
					t.Errorf("%d descriptors open on the file once Run returned, want 0", n)
				}
				uv.UvtShutdown(t, u, false)
				uv.UvtNoLeaks(t, base, fds)
			})
		})
	}
}

// TestFileCloseAsyncWaitsForRequests: CloseAsync on the loop goroutine
// while a read of the file is in flight leaves the descriptor to the read
// (which reads what comes) and completes once the read is done with it and
// it is closed; a CloseAsync whose context ends first completes with the
// context's error, and the descriptor is closed all the same. On each
// driver.
func TestFileCloseAsyncWaitsForRequests(t *testing.T) {
	for _, end := range []string{"closed", "context ended"} {
		t.Run(end, func(t *testing.T) {
			eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
				f, read, fifo := fifoRead(t, u)
				stop := uv.UvtServe(t, u)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var q *uv.FSRequest[struct{}]
				var err error
				uv.UvtMust(t, u.Call(func() {
					q, err = f.CloseAsync(ctx)
				}))
				uv.UvtMust(t, err)
				if _, ok, _ := q.Outcome(); ok {
					t.Errorf("the close completed with the read still in flight")
				}
				if n := fdsOn(t, fifo); n != 1 {
					t.Errorf("%d descriptors open on the FIFO after CloseAsync, want the read's 1", n)
				}
				if end == "context ended" {
					cancel()
					if _, err := q.Await(waitCtx(t)); !errors.Is(err, context.Canceled) {
						t.Errorf("the close whose context ended = %v, want context.Canceled", err)
					}
				}
				writeFIFO(t, fifo)
				if got, err := read.Await(waitCtx(t)); string(got) != "x" || err != nil {
					t.Errorf("the read = %q, %v, want \"x\", nil", got, err)
				}
				if end == "closed" {
					if _, err := q.Await(waitCtx(t)); err != nil {
						t.Errorf("the close = %v, want nil", err)
					}
					if n := fdsOn(t, fifo); n != 0 {
						t.Errorf("%d descriptors open on the FIFO once the close completed, want 0", n)
					}
				}
				uv.UvtWaitFor(t, "the descriptor closed after the read", func() bool { return fdsOn(t, fifo) == 0 })
				stop()
				uv.UvtShutdown(t, u, false)
				uv.UvtNoLeaks(t, base, fds)
			})
		})
	}
}

// TestFileCloseFailureReported: a close(2) that fails after Close
// returned (Close in a callback) is reported, as the reactor reports
// failures nobody waits for: "File close failed", with the *fs.PathError
// of the close matching the errno. On each driver.
func TestFileCloseFailureReported(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		name := filepath.Join(t.TempDir(), "f")
		stop := uv.UvtServe(t, u)
		f, err := uv.OpenFile(context.Background(), u.Reactor, name, os.O_RDWR|os.O_CREATE, 0o600)
		uv.UvtMust(t, err)
		// A number above any descriptor limit: its close(2) fails with
		// EBADF, and no other descriptor can have it.
		unix.Close(uv.UvtSwapFD(f, 1<<30))
		var closeErr error
		uv.UvtMust(t, u.Call(func() { closeErr = f.Close() }))
		if closeErr != nil {
			t.Errorf("Close on the loop goroutine = %v, want nil", closeErr)
		}
		uv.UvtWaitFor(t, "the report", func() bool { return len(u.Reports()) > 0 })
		stop()
		reps := u.Reports()
		var pe *fs.PathError
		if len(reps) != 1 || reps[0].Msg != "File close failed" || !errors.Is(reps[0].Err, syscall.EBADF) ||
			!errors.As(reps[0].Err, &pe) || pe.Op != "close" || pe.Path != name {
			t.Errorf("reports %v, want one \"File close failed\" with the close's PathError matching EBADF", reps)
		}
		uv.UvtShutdown(t, u, true)
		uv.UvtNoLeaks(t, base, fds)
	})
}

// fifoRead opens a new FIFO as a File of u (its loop served meanwhile)
// and starts a read of one byte of it, which blocks its worker until
// writeFIFO writes to the FIFO.
func fifoRead(t *testing.T, u *uv.UvtReactor) (f *uv.File, read *uv.FSRequest[[]byte], fifo string) {
	t.Helper()
	fifo = filepath.Join(t.TempDir(), "fifo")
	uv.UvtMust(t, unix.Mkfifo(fifo, 0o600))
	stop := uv.UvtServe(t, u)
	f, err := uv.OpenFile(context.Background(), u.Reactor, fifo, os.O_RDWR, 0)
	uv.UvtMust(t, err)
	stop()
	read, err = f.ReadAsync(context.Background(), 1, -1)
	uv.UvtMust(t, err)
	return f, read, fifo
}

// writeFIFO writes "x" to the FIFO fifo, which a reader has open.
func writeFIFO(t *testing.T, fifo string) {
	t.Helper()
	w, err := unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	uv.UvtMust(t, err)
	defer unix.Close(w)
	_, err = unix.Write(w, []byte("x"))
	uv.UvtMust(t, err)
}
