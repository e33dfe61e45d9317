package uv_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"weak"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

// The IPC tests pass handles to a real child: the test binary re-executed
// in a role (main_test.go), on the reactor driver UVT_IPC_DRIVER names,
// with its IPC pipe at uv.IPCFD.

const ipcDriverEnv = "UVT_IPC_DRIVER"

func init() {
	uv.UvtRegisterChild("ipc-serve", func() int { return ipcChild(ipcServe) })
	uv.UvtRegisterChild("ipc-echo", func() int { return ipcChild(ipcEcho) })
	uv.UvtRegisterChild("ipc-die", func() int { return ipcChild(ipcDie) })
}

// ipcChild runs a child role: a served reactor on the driver asked for,
// the IPC pipe opened on uv.IPCFD, then fn. It returns the exit code.
func ipcChild(fn func(ctx context.Context, p *uv.IPC) error) int {
	var d reactor.Driver
	if err := d.Set(os.Getenv(ipcDriverEnv)); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	r, err := reactor.New(reactor.Options{Driver: d})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: reactor.New:", err)
		return 2
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()
	defer func() { cancel(); <-served }()
	p, err := uv.OpenIPC(r, uv.IPCFD)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: OpenIPC:", err)
		return 1
	}
	defer p.Close()
	if err := fn(ctx, p); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// ipcServe takes a listener, answers one connection on it with its pid,
// and waits for the end of the pipe.
func ipcServe(ctx context.Context, p *uv.IPC) error {
	got, err := p.Receive(ctx)
	if err != nil {
		return err
	}
	if got.Listener == nil {
		return fmt.Errorf("received %+v, want a listener", got)
	}
	defer got.Listener.Close()
	c, err := got.Listener.AcceptIO(ctx)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(c, "served by %d\n", os.Getpid()); err != nil {
		return err
	}
	c.Close()
	return ipcUntilEOF(ctx, p)
}

// ipcEcho takes a connection and echoes it until its end, then waits for
// the end of the pipe.
func ipcEcho(ctx context.Context, p *uv.IPC) error {
	got, err := p.Receive(ctx)
	if err != nil {
		return err
	}
	if got.IO == nil {
		return fmt.Errorf("received %+v, want a connection", got)
	}
	c := got.IO
	defer c.Close()
	buf := make([]byte, 512)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	c.Close()
	return ipcUntilEOF(ctx, p)
}

// ipcDie takes a connection, reads one byte from it, and dies by SIGKILL
// with the handles passed after it still in flight.
func ipcDie(ctx context.Context, p *uv.IPC) error {
	got, err := p.Receive(ctx)
	if err != nil {
		return err
	}
	if got.IO == nil {
		return fmt.Errorf("received %+v, want a connection", got)
	}
	if _, err := got.IO.Read(make([]byte, 1)); err != nil {
		return err
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// ipcUntilEOF waits for the parent to close the pipe: Receive gives io.EOF.
func ipcUntilEOF(ctx context.Context, p *uv.IPC) error {
	got, err := p.Receive(ctx)
	if err != io.EOF {
		got.Close()
		return fmt.Errorf("after the pass: Receive = %+v, %v; want io.EOF", got, err)
	}
	return nil
}

// startIPCChild starts the test binary in role with an IPC pipe, its
// reactor on driver d; the child's standard error is reported if the test
// fails.
func startIPCChild(t *testing.T, r *reactor.Reactor, role string, d reactor.Driver) *uv.Process {
	t.Helper()
	var stderr strings.Builder
	p, err := uv.StartProcess(r, uv.ProcessOptions{
		Args: []string{os.Args[0], "-test.run=^$"},
		// Inherited rather than ignored: the tests count descriptors, and
		// an ignored stream opens the process's /dev/null for good.
		Stdin:       uv.StdioInherit,
		Stdout:      uv.StdioInherit,
		Env:         append(os.Environ(), "UVEVENT_TEST_CHILD="+role, ipcDriverEnv+"="+d.String()),
		Stderr:      uv.StdioWriter(&syncBuilder{b: &stderr}),
		IPC:         true,
		KillOnClose: true,
	})
	if err != nil {
		t.Fatalf("StartProcess: %v", err)
	}
	if p.IPC() == nil {
		t.Fatal("Process.IPC() = nil with ProcessOptions.IPC")
	}
	t.Cleanup(func() {
		p.Close()
		<-p.Exited()
		if t.Failed() {
			t.Logf("child %s stderr:\n%s", role, stderr.String())
		}
	})
	return p
}

// syncBuilder is a strings.Builder written by the Process's copy goroutine
// and read after the child is gone.
type syncBuilder struct{ b *strings.Builder }

func (s *syncBuilder) Write(p []byte) (int, error) { return s.b.Write(p) }

// ipcExit waits for the child's end and returns its status.
func ipcExit(t *testing.T, p *uv.Process) int {
	t.Helper()
	uv.UvtRecv(t, p.Exited(), "the child's end")
	st, _ := p.ExitStatus()
	return st
}

// otherDriver is the driver the child of a cross-driver test runs: the
// other one where this build has both.
func otherDriver(d reactor.Driver) reactor.Driver {
	if !conform.Available(reactor.DriverLibuv) {
		return d
	}
	if d == reactor.DriverGo {
		return reactor.DriverLibuv
	}
	return reactor.DriverGo
}

// TestIPCPassListener: a child given the parent's listener serves on it.
// The parent closes its own copy after the pass (the child's goes on
// listening), dials, and reads the child's answer.
func TestIPCPassListener(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := startIPCChild(t, u.Reactor, "ipc-serve", u.Driver())
		ipc := p.IPC()
		if err := ipc.SendListener(ctx, ln); err != nil {
			t.Fatalf("SendListener: %v", err)
		}
		addr := ln.Addr().String()
		if err := ln.Close(); err != nil {
			t.Fatalf("closing the sender's listener: %v", err)
		}
		c, err := net.Dial("tcp4", addr)
		if err != nil {
			t.Fatalf("dialling the passed listener: %v", err)
		}
		c.SetDeadline(time.Now().Add(uv.UvtSafety))
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if diff := cmp.Diff(fmt.Sprintf("served by %d\n", p.Pid()), line); diff != "" || err != nil {
			t.Fatalf("answer (-want +got):\n%s(err %v)", diff, err)
		}
		ipc.Close() // the child reads io.EOF and exits 0
		if st := ipcExit(t, p); st != 0 {
			t.Fatalf("child exit status %d, want 0", st)
		}
		p.Close()
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestIPCPassConnection: a child given a connection echoes on it, its
// reactor on the other driver where the build has both (the wire is the
// same). The sender's IO stays the sender's: it writes after the pass, and
// the peer reads that first, then the child's echo.
func TestIPCPassConnection(t *testing.T) {
	for _, transport := range []string{"tcp4", "unix"} {
		t.Run(transport, func(t *testing.T) {
			ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
				ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
				defer cancel()
				var client, server *uv.IO
				if transport == "unix" {
					var err error
					if client, server, err = uv.Pipe(v.u.Reactor); err != nil {
						t.Fatal(err)
					}
				} else {
					client, server = v.pair(t)
				}
				p := startIPCChild(t, v.u.Reactor, "ipc-echo", otherDriver(v.u.Driver()))
				ipc := p.IPC()
				if err := ipc.SendIO(ctx, server); err != nil {
					t.Fatalf("SendIO: %v", err)
				}
				if _, err := server.Write([]byte("parent\n")); err != nil {
					t.Fatalf("the sender's IO after the pass: Write: %v", err)
				}
				server.Close()
				if _, err := client.Write([]byte("ping\n")); err != nil {
					t.Fatal(err)
				}
				if err := client.CloseWrite(); err != nil {
					t.Fatal(err)
				}
				client.SetReadDeadline(time.Now().Add(uv.UvtSafety))
				got, err := io.ReadAll(client)
				if diff := cmp.Diff("parent\nping\n", string(got)); diff != "" || err != nil {
					t.Fatalf("read (-want +got):\n%s(err %v)", diff, err)
				}
				ipc.Close()
				if st := ipcExit(t, p); st != 0 {
					t.Fatalf("child exit status %d, want 0", st)
				}
				v.finish(t, client, p)
			})
		})
	}
}

// TestIPCChildDiesMidPass: the child takes one connection and dies while a
// second one is in flight. The in-flight descriptor goes with the child's
// socket (its peer reads the end), a pass after the death fails with the
// pipe's error and leaves the handle the sender's, and the parent holds no
// descriptor more than before.
func TestIPCChildDiesMidPass(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		// Go's netpoller, made at its first use, holds descriptors of its
		// own for good: made now, it is in both counts.
		if r, w, err := os.Pipe(); err == nil {
			r.Close()
			w.Close()
		}
		before := fdNames()
		v := newIOEnv(t, d, "tcp4")
		p := startIPCChild(t, v.u.Reactor, "ipc-die", v.u.Driver())
		ipc := p.IPC()
		c1, s1 := v.pair(t)
		c2, s2 := v.pair(t)
		c3, s3 := v.pair(t)
		for _, s := range []*uv.IO{s1, s2} {
			if err := ipc.SendIO(ctx, s); err != nil {
				t.Fatalf("SendIO while the child lives: %v", err)
			}
			s.Close()
		}
		if _, err := c1.Write([]byte("x")); err != nil { // the child dies on reading it
			t.Fatal(err)
		}
		if st := ipcExit(t, p); st != -int(syscall.SIGKILL) {
			t.Fatalf("child exit status %d, want %d", st, -int(syscall.SIGKILL))
		}
		err := ipc.SendIO(ctx, s3)
		if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("SendIO after the child died = %v, want EPIPE or ECONNRESET", err)
		}
		// The failed pass left s3 the sender's.
		if _, err := s3.Write([]byte("still mine")); err != nil {
			t.Fatalf("the sender's IO after a failed pass: %v", err)
		}
		buf := make([]byte, 10)
		c3.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		if _, err := io.ReadFull(c3, buf); err != nil || string(buf) != "still mine" {
			t.Fatalf("peer of the unpassed IO read %q, %v", buf, err)
		}
		// The child's copy and the in-flight one are gone with it.
		for i, c := range []*uv.IO{c1, c2} {
			c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
			if n, err := c.Read(buf); err != io.EOF {
				t.Errorf("peer of pass %d: Read = %d, %v; want io.EOF", i+1, n, err)
			}
		}
		for _, c := range []interface{ Close() error }{c1, c2, c3, s3, ipc, p} {
			c.Close()
		}
		v.finish(t)
		waitFDs(t, before)
	})
}

// TestIPCRefusals: what cannot be passed or opened is refused with a clear
// error, and a closed IPC refuses with ErrClosed.
func TestIPCRefusals(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := uv.OpenIPC(u.Reactor, int(f.Fd())); !errors.Is(err, syscall.ENOTSOCK) {
			t.Errorf("OpenIPC(/dev/null) = %v, want ENOTSOCK", err)
		}
		a, b, err := uv.Pipe(u.Reactor)
		if err != nil {
			t.Fatal(err)
		}
		fds, err := uv.UvtSocketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		ipc, err := uv.OpenIPC(u.Reactor, fds[0])
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fds[1])
		var nilCtx context.Context
		if err := ipc.SendIO(nilCtx, a); !errors.Is(err, event.ErrNilContext) {
			t.Errorf("SendIO(nil ctx) = %v, want ErrNilContext", err)
		}
		if err := ipc.SendIO(ctx, &uv.IO{}); err == nil {
			t.Error("SendIO(zero IO) = nil, want an error")
		}
		var pp [2]int
		if err := uv.UvtPipe2(pp[:], syscall.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(pp[1])
		end, err := uv.OpenPipe(u.Reactor, pp[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := ipc.SendIO(ctx, end); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("SendIO(a pipe's end) = %v, want EINVAL", err)
		}
		end.Close()
		a.Close()
		if err := ipc.SendIO(ctx, a); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("SendIO(closed IO) = %v, want ErrClosed", err)
		}
		ipc.Close()
		if err := ipc.SendIO(ctx, b); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("SendIO on a closed IPC = %v, want ErrClosed", err)
		}
		if _, err := ipc.Receive(ctx); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("Receive on a closed IPC = %v, want ErrClosed", err)
		}
		b.Close()
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// fdNames lists this process's open descriptors, each with what it is.
func fdNames() map[string]string {
	// The children's reaper's set is the program's, not a test's: made
	// with a child, it goes 100 ms after the last one, so a count taken
	// while it lingered would wait for it in vain (TestIPCChildDiesMidPass
	// failed so in a full run, its baseline taken just after another
	// test's child had ended).
	reaperBefore := strconv.Itoa(uv.UvtReaperFD())
	ents, _ := os.ReadDir("/proc/self/fd")
	reaperAfter := strconv.Itoa(uv.UvtReaperFD())
	m := map[string]string{}
	for _, e := range ents {
		if e.Name() == reaperBefore || e.Name() == reaperAfter {
			continue
		}
		l, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err == nil { // ReadDir's own is gone by now
			m[e.Name()] = l
		}
	}
	return m
}

// waitFDs waits until the process holds the descriptors of before again (a
// closed IO's descriptor may close on the loop a moment after Close
// returns), failing at the safety deadline with the difference.
func waitFDs(t *testing.T, before map[string]string) {
	t.Helper()
	deadline := time.Now().Add(uv.UvtSafety)
	for {
		now := fdNames()
		diff := cmp.Diff(before, now)
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("descriptors (-before +after):\n%s", diff)
		}
		time.Sleep(time.Millisecond)
	}
}

// conformIPC runs an IPC pipe through the table: its peer is the raw other
// end of a socket pair, which fires it by passing a connection (one end of
// a new socket pair) as another process would.
func conformIPC(t *testing.T) conform.Kind {
	var mu sync.Mutex
	peers := map[weak.Pointer[uv.IPC]]int{} // weak: the table drops its events
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, fd := range peers {
			unix.Close(fd)
		}
	})
	pass := func(peer int) error {
		sp, err := uv.UvtSocketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(sp[0])
		defer unix.Close(sp[1])
		return unix.Sendmsg(peer, []byte{'c'}, unix.UnixRights(sp[0]), nil, 0)
	}
	return conform.Kind{
		Name: "ipc",
		New: func(r *reactor.Reactor) (event.Event, error) {
			fds, err := uv.UvtSocketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
			if err != nil {
				return nil, err
			}
			p, err := uv.OpenIPC(r, fds[0])
			if err != nil {
				unix.Close(fds[0])
				unix.Close(fds[1])
				return nil, err
			}
			mu.Lock()
			peers[weak.Make(p)] = fds[1]
			mu.Unlock()
			return p, nil
		},
		Fire: func(ev event.Event) error {
			mu.Lock()
			peer := peers[weak.Make(ev.(*uv.IPC))]
			mu.Unlock()
			return pass(peer)
		},
		Detach: func(ev event.Event) func() error {
			mu.Lock()
			peer := peers[weak.Make(ev.(*uv.IPC))]
			mu.Unlock()
			return func() error { return pass(peer) }
		},
		Info: regexp.MustCompile(`^IPC\(fd=\d+, sent=\d+, received=\d+, failed=\d+\)$`),
	}
}

// TestIPCReceiveWaits: a Receive whose context ends while it waits
// returns the context's error and the handle passed later goes to the
// next Receive; a Receive waiting while its IPC closes returns ErrClosed;
// so does a Receive once the reactor is closed.
func TestIPCReceiveWaits(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		from, to := ipcPair(t, u)

		waiting := func(p *uv.IPC) func() bool {
			return func() bool { return eventkind.LoopRefs(p) > 0 }
		}
		receive := func(ctx context.Context) <-chan error {
			errs := make(chan error, 1)
			go func() {
				got, err := to.Receive(ctx)
				got.Close()
				errs <- err
			}()
			return errs
		}

		wctx, wcancel := context.WithCancel(ctx)
		errs := receive(wctx)
		uv.UvtWaitFor(t, "the Receive to start the IPC", waiting(to))
		wcancel()
		if err := uv.UvtRecv(t, errs, "the cancelled Receive"); !errors.Is(err, context.Canceled) {
			t.Errorf("Receive cancelled while waiting = %v, want context.Canceled", err)
		}

		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		uv.UvtMust(t, from.SendIO(ctx, a))
		got, err := to.Receive(ctx)
		uv.UvtMust(t, err)
		if got.IO == nil {
			t.Errorf("Receive after the cancel = %+v, want the IO passed", got)
		}
		got.Close()
		a.Close()
		b.Close()

		// Whether the Close comes before the Receive's wait is queued or
		// after, the Receive hears ErrClosed.
		errs = receive(ctx)
		to.Close()
		if err := uv.UvtRecv(t, errs, "the Receive its IPC's Close ended"); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("Receive while the IPC closes = %v, want ErrClosed", err)
		}

		stop()
		uv.UvtShutdown(t, u, false)
		if _, err := from.Receive(ctx); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("Receive on a closed reactor = %v, want ErrClosed", err)
		}
	})
}
