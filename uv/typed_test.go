package uv_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

// Every kind of uv, reactor and async is an event.Source of its result
// type, and every kind that stores a result an event.Typed: the compiler
// checks the list.
var (
	_ event.Source[*uv.IO]            = (*uv.Listener)(nil)
	_ event.Source[[]byte]            = (*uv.IO)(nil)
	_ event.Source[uv.Datagram]       = (*uv.UDP)(nil)
	_ event.Source[uv.FSEventResult]  = (*uv.FSEvent)(nil)
	_ event.Source[uv.PollEvents]     = (*uv.Poll)(nil)
	_ event.Source[uv.PollEvents]     = (*uv.PollProxy)(nil)
	_ event.Source[syscall.Signal]    = (*uv.Signal)(nil)
	_ event.Source[struct{}]          = (*uv.Phase)(nil)
	_ event.Source[struct{}]          = (*uv.Trigger)(nil)
	_ event.Source[struct{}]          = (*reactor.Timer)(nil)
	_ event.Source[struct{}]          = (*async.Timeout)(nil)
	_ event.Source[int]               = (*reactor.Coroutine[int])(nil)
	_ event.Source[int]               = (*event.Future[int])(nil)
	_ event.Source[int]               = (*async.Op[int])(nil)
	_ event.Typed[int]                = (*uv.Task[int])(nil)
	_ event.Typed[string]             = (*uv.Thread[string])(nil)
	_ event.Typed[int]                = (*uv.Process)(nil)
	_ event.Typed[*uv.CommandResult]  = (*uv.Command)(nil)
	_ event.Typed[[]netip.AddrPort]   = (*uv.AddrInfo)(nil)
	_ event.Typed[uv.NameInfoResult]  = (*uv.NameInfo)(nil)
	_ event.Source[int]               = (*uv.Task[int])(nil)
	_ event.Source[string]            = (*uv.Thread[string])(nil)
	_ event.Source[int]               = (*uv.Process)(nil)
	_ event.Source[*uv.CommandResult] = (*uv.Command)(nil)
	_ event.Source[[]netip.AddrPort]  = (*uv.AddrInfo)(nil)
	_ event.Source[uv.NameInfoResult] = (*uv.NameInfo)(nil)
	_ event.Typed[[]byte]             = (*uv.FSRequest[[]byte])(nil)
	_ event.Typed[int]                = (*uv.FSRequest[int])(nil)
	_ event.Source[[]byte]            = (*uv.FSRequest[[]byte])(nil)
	_ event.Source[int]               = (*uv.FSRequest[int])(nil)
)

// The typed waits take a slice of one kind as it is, and give values (and
// errors) by position: tasks, threads, processes, commands, lookups.
func TestTypedWaitsTakeEveryStoringKind(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		uv.UvtServe(t, u)
		ctx := t.Context()
		boom := errors.New("boom")

		var tasks []*uv.Task[int]
		for i := range 3 {
			tk, err := uv.QueueTask(u.Reactor, func(context.Context) (int, error) { return i * 10, nil })
			uv.UvtMust(t, err)
			tasks = append(tasks, tk)
		}
		vs, err := event.AwaitAll(ctx, tasks...)
		if diff := cmp.Diff([]int{0, 10, 20}, vs); diff != "" || err != nil {
			t.Errorf("AwaitAll(tasks) (-want +got), err %v:\n%s", err, diff)
		}
		if v, ok, err := tasks[2].Outcome(); v != 20 || !ok || err != nil {
			t.Errorf("Task.Outcome = %d, %v, %v; want 20, true, nil", v, ok, err)
		}

		ths := make([]*uv.Thread[string], 2)
		ths[0], err = uv.NewThread(u.Reactor, func(context.Context) (string, error) { return "", boom })
		uv.UvtMust(t, err)
		ths[1], err = uv.NewThread(u.Reactor, func(context.Context) (string, error) { return "b", nil })
		uv.UvtMust(t, err)
		svs, errs, err := event.AwaitAllSettled(ctx, ths...)
		if diff := cmp.Diff([]string{"", "b"}, svs); diff != "" || err != nil {
			t.Errorf("AwaitAllSettled(threads) values (-want +got), err %v:\n%s", err, diff)
		}
		if diff := cmp.Diff([]error{boom, nil}, errs, cmpopts.EquateErrors()); diff != "" {
			t.Errorf("AwaitAllSettled(threads) errors (-want +got):\n%s", diff)
		}

		var procs []*uv.Process
		for _, code := range []string{"exit 0", "exit 3"} {
			p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{"/bin/sh", "-c", code}})
			uv.UvtMust(t, err)
			procs = append(procs, p)
		}
		statuses, err := event.AwaitAll(ctx, procs...)
		if diff := cmp.Diff([]int{0, 3}, statuses); diff != "" || err != nil {
			t.Errorf("AwaitAll(processes) (-want +got), err %v:\n%s", err, diff)
		}

		ex, err := uv.NewCommand(u.Reactor, "echo typed", uv.CommandOptions{Mode: uv.CaptureAll})
		uv.UvtMust(t, err)
		res, err := event.AwaitValue(ctx, ex)
		if err != nil || res == nil || string(res.Output) != "typed\n" {
			t.Errorf("AwaitValue(exec) = %+v, %v; want output \"typed\\n\"", res, err)
		}

		lookups := make([]*uv.AddrInfo, 2)
		for i := range lookups {
			lookups[i], err = uv.NewAddrInfo(u.Reactor, "127.0.0.1", "80", uv.AddrInfoHints{Network: "tcp4"})
			uv.UvtMust(t, err)
		}
		winner, addrs, err := event.AwaitFirst(ctx, lookups...)
		want := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:80")}
		if diff := cmp.Diff(want, addrs, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); winner < 0 || diff != "" || err != nil {
			t.Errorf("AwaitFirst(lookups) = %d, %v, %v; want 127.0.0.1:80", winner, addrs, err)
		}
		ni, err := uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("127.0.0.1:80"), uv.NameInfoHints{})
		uv.UvtMust(t, err)
		if _, err := event.AwaitValue(ctx, ni); err != nil {
			t.Errorf("AwaitValue(nameinfo) = %v", err)
		}
		if _, ok, err := ni.Outcome(); !ok || err != nil {
			t.Errorf("NameInfo.Outcome after the wait = %v, %v; want a stored outcome", ok, err)
		}
	})
}

// Outcome says "not yet" before a kind has its result.
func TestTypedOutcomeBeforeCompletion(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		gate := make(chan struct{})
		tk, err := uv.QueueTask(u.Reactor, func(context.Context) (int, error) { <-gate; return 1, nil })
		uv.UvtMust(t, err)
		if v, ok, err := tk.Outcome(); ok || v != 0 || err != nil {
			t.Errorf("Outcome of a running task = %d, %v, %v; want 0, false, nil", v, ok, err)
		}
		ai, err := uv.NewAddrInfo(u.Reactor, "localhost", "", uv.AddrInfoHints{})
		uv.UvtMust(t, err)
		if _, ok, _ := ai.Outcome(); ok {
			t.Error("Outcome of a lookup before the loop ran: ok, want not yet")
		}
		close(gate)
		uv.UvtMust(t, u.Run(context.Background()))
		if v, ok, err := tk.Outcome(); v != 1 || !ok || err != nil {
			t.Errorf("Outcome after Run = %d, %v, %v; want 1, true, nil", v, ok, err)
		}
	})
}

// heard collects what a typed callback got, as text, and whether a close's
// notification (event.ErrClosed) ever reached it.
type heard struct {
	got    chan string
	closed atomic.Bool
}

func newHeard() *heard { return &heard{got: make(chan string, 64)} }

func (h *heard) add(v any, err error) {
	if errors.Is(err, event.ErrClosed) {
		h.closed.Store(true)
	}
	select {
	case h.got <- fmt.Sprint(v, " ", err):
	default:
	}
}

func (h *heard) next(t *testing.T, what string) string {
	t.Helper()
	return uv.UvtRecv(t, h.got, what)
}

// expect receives one notification and compares it with want.
func (h *heard) expect(t *testing.T, what, want string) {
	t.Helper()
	if got := h.next(t, what); got != want {
		t.Errorf("%s: fn got %q, want %q", what, got, want)
	}
}

// noClose checks, after the event's Close has returned, that fn never
// heard the close.
func (h *heard) noClose(t *testing.T, what string) {
	t.Helper()
	if h.closed.Load() {
		t.Errorf("%s: fn heard the close's ErrClosed without event.WithClose", what)
	}
}

// Each kind's typed On method gives fn the kind's result type and leaves
// out the notification its Close sends.
func TestOnMethodsPerKind(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		uv.UvtServe(t, u)
		ctx := t.Context()
		r := u.Reactor

		t.Run("Listener.OnAccept", func(t *testing.T) {
			l, err := uv.Listen(r, "tcp", "127.0.0.1:0")
			uv.UvtMust(t, err)
			h := newHeard()
			_, err = l.OnAccept(func(c *uv.IO, err error) {
				h.add(c != nil, err)
				if c != nil {
					c.Close()
				}
			})
			uv.UvtMust(t, err)
			uv.UvtMust(t, l.Start())
			c, err := uv.Dial(ctx, r, "tcp", l.Addr().String())
			uv.UvtMust(t, err)
			h.expect(t, "accept", "true <nil>")
			c.Close()
			uv.UvtMust(t, l.Close())
			h.noClose(t, "Listener")
		})

		t.Run("IO.OnRead", func(t *testing.T) {
			a, b, err := uv.Pipe(r)
			uv.UvtMust(t, err)
			h := newHeard()
			_, err = b.OnRead(func(p []byte, err error) { h.add(string(p), err) })
			uv.UvtMust(t, err)
			uv.UvtMust(t, b.Start())
			_, err = a.Write([]byte("hi"))
			uv.UvtMust(t, err)
			h.expect(t, "read", "hi <nil>")
			uv.UvtMust(t, a.Close())
			h.expect(t, "end of stream", " "+io.EOF.Error())
			uv.UvtMust(t, b.Close())
			h.noClose(t, "IO")
		})

		t.Run("UDP.OnDatagram", func(t *testing.T) {
			s, err := uv.ListenUDP(r, "udp", "127.0.0.1:0")
			uv.UvtMust(t, err)
			c, err := uv.ListenUDP(r, "udp", "127.0.0.1:0")
			uv.UvtMust(t, err)
			h := newHeard()
			_, err = s.OnDatagram(func(d uv.Datagram, err error) { h.add(string(d.Data), err) })
			uv.UvtMust(t, err)
			uv.UvtMust(t, s.Start())
			_, err = c.WriteTo([]byte("dg"), s.LocalAddr())
			uv.UvtMust(t, err)
			h.expect(t, "datagram", "dg <nil>")
			uv.UvtMust(t, c.Close())
			uv.UvtMust(t, s.Close())
			h.noClose(t, "UDP")
		})

		t.Run("FSEvent.OnChange", func(t *testing.T) {
			dir := t.TempDir()
			f, err := uv.NewFSEvent(r, dir, uv.FSEventOptions{})
			uv.UvtMust(t, err)
			h := newHeard()
			_, err = f.OnChange(func(ch uv.FSEventResult, err error) { h.add(ch.Name, err) })
			uv.UvtMust(t, err)
			uv.UvtMust(t, f.Start())
			uv.UvtMust(t, os.WriteFile(filepath.Join(dir, "x"), []byte("1"), 0o600))
			h.expect(t, "change", "x <nil>")
			uv.UvtMust(t, f.Close())
			h.noClose(t, "FSEvent")
		})

		t.Run("Poll.OnReady", func(t *testing.T) {
			// While proxies exist the poll's own callbacks are not
			// notified: one poll alone, then one with a proxy.
			for _, proxied := range []bool{false, true} {
				var fds [2]int
				uv.UvtMust(t, uv.UvtPipe2(fds[:], unix.O_NONBLOCK|unix.O_CLOEXEC))
				p, err := uv.NewPoll(r, fds[0], uv.Readable, uv.PollOptions{CloseFD: true})
				uv.UvtMust(t, err)
				h := newHeard()
				if proxied {
					x, err := uv.NewPollProxy(p, uv.Readable)
					uv.UvtMust(t, err)
					_, err = x.OnReady(func(ev uv.PollEvents, err error) { h.add(ev, err); x.Stop() })
					uv.UvtMust(t, err)
					uv.UvtMust(t, x.Start())
				} else {
					_, err = p.OnReady(func(ev uv.PollEvents, err error) { h.add(ev, err); p.Stop() })
					uv.UvtMust(t, err)
					uv.UvtMust(t, p.Start())
				}
				unix.Write(fds[1], []byte("!"))
				h.expect(t, fmt.Sprint("ready, proxied ", proxied), uv.Readable.String()+" <nil>")
				uv.UvtMust(t, p.Close()) // closes its proxies
				unix.Close(fds[1])
				h.noClose(t, fmt.Sprint("Poll, proxied ", proxied))
			}
		})

		t.Run("Signal.OnSignal", func(t *testing.T) {
			s, err := uv.NewSignal(r, syscall.SIGUSR1)
			uv.UvtMust(t, err)
			h := newHeard()
			_, err = s.OnSignal(func(sig syscall.Signal, err error) { h.add(sig == syscall.SIGUSR1, err) })
			uv.UvtMust(t, err)
			uv.UvtMust(t, s.Start())
			uv.UvtMust(t, syscall.Kill(os.Getpid(), syscall.SIGUSR1))
			h.expect(t, "signal", "true <nil>")
			uv.UvtMust(t, s.Close())
			h.noClose(t, "Signal")
		})

		t.Run("Timer.OnFire", func(t *testing.T) {
			tm, err := r.NewTimer(time.Millisecond, time.Millisecond)
			uv.UvtMust(t, err)
			h := newHeard()
			_, err = tm.OnFire(func(err error) { h.add("fired", err) })
			uv.UvtMust(t, err)
			uv.UvtMust(t, tm.Start())
			h.expect(t, "fire", "fired <nil>")
			uv.UvtMust(t, tm.Close())
			h.noClose(t, "Timer")
		})

		t.Run("Trigger", func(t *testing.T) {
			tr, err := uv.NewTrigger(r)
			uv.UvtMust(t, err)
			h := newHeard()
			_, err = event.On(tr, func(v struct{}, err error) { h.add(v, err) })
			uv.UvtMust(t, err)
			uv.UvtMust(t, tr.Start())
			uv.UvtMust(t, tr.Send())
			h.expect(t, "trigger", "{} <nil>")
			uv.UvtMust(t, tr.Close())
			h.noClose(t, "Trigger")
		})

		t.Run("Process.OnExit", func(t *testing.T) {
			p, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"/bin/sh", "-c", "exit 7"}})
			uv.UvtMust(t, err)
			h := newHeard()
			_, err = p.OnExit(func(status int, err error) { h.add(status, err) })
			uv.UvtMust(t, err)
			h.expect(t, "exit", "7 <nil>")
			// A late subscriber hears the stored status at once.
			_, err = p.OnExit(func(status int, err error) { h.add(status, err) })
			uv.UvtMust(t, err)
			h.expect(t, "replayed exit", "7 <nil>")
		})

		t.Run("Command.OnDone", func(t *testing.T) {
			ex, err := uv.NewCommand(r, "echo on", uv.CommandOptions{Mode: uv.CaptureAll})
			uv.UvtMust(t, err)
			h := newHeard()
			_, err = ex.OnDone(func(res *uv.CommandResult, err error) { h.add(string(res.Output), err) })
			uv.UvtMust(t, err)
			h.expect(t, "command", "on\n <nil>")
		})

		t.Run("Task.OnDone", func(t *testing.T) {
			tk, err := uv.QueueTask(r, func(context.Context) (int, error) { return 5, nil })
			uv.UvtMust(t, err)
			h := newHeard()
			_, err = tk.OnDone(func(v int, err error) { h.add(v, err) })
			uv.UvtMust(t, err)
			h.expect(t, "task", "5 <nil>")
		})

		t.Run("Thread.OnDone", func(t *testing.T) {
			th, err := uv.NewThread(r, func(context.Context) (string, error) { return "t", nil })
			uv.UvtMust(t, err)
			h := newHeard()
			_, err = th.OnDone(func(v string, err error) { h.add(v, err) })
			uv.UvtMust(t, err)
			h.expect(t, "thread", "t <nil>")
		})

		t.Run("Op.OnDone", func(t *testing.T) {
			ch, err := async.NewChannel[int](r, 1)
			uv.UvtMust(t, err)
			recv := ch.Recv()
			h := newHeard()
			_, err = recv.OnDone(func(v int, err error) { h.add(v, err) })
			uv.UvtMust(t, err)
			uv.UvtMust(t, recv.Start())
			send := ch.Send(9)
			uv.UvtMust(t, send.Start())
			h.expect(t, "receive", "9 <nil>")
			uv.UvtMust(t, ch.Close())
		})
	})
}

// A task its reactor's Close takes back is heard only with WithClose.
func TestOnDoneHearsTheCloseWhenAsked(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		gate := make(chan struct{})
		defer close(gate)
		pool, err := uv.NewTaskPool(1)
		uv.UvtMust(t, err)
		busy, err := uv.QueueTaskIn(pool, u.Reactor, func(context.Context) (int, error) { <-gate; return 0, nil })
		uv.UvtMust(t, err)
		queued, err := uv.QueueTaskIn(pool, u.Reactor, func(context.Context) (int, error) { return 1, nil })
		uv.UvtMust(t, err)
		plain, with := newHeard(), newHeard()
		_, err = queued.OnDone(func(v int, err error) { plain.add(v, err) })
		uv.UvtMust(t, err)
		_, err = queued.OnDone(func(v int, err error) { with.add(v, err) }, event.WithClose)
		uv.UvtMust(t, err)
		uv.UvtMust(t, queued.Close())
		if len(plain.got) != 0 {
			t.Errorf("OnDone without WithClose heard %q", <-plain.got)
		}
		with.expect(t, "close with WithClose", "0 "+event.ErrClosed.Error())
		busy.Close()
	})
}
