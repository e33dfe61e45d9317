package uv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestBadInputRefusedWithEINVAL: what no program can mean is refused at
// once with an error matching syscall.EINVAL, naming the call: a signal Go
// cannot deliver to a program (the synchronous faults SIGSEGV, SIGBUS,
// SIGFPE and SIGILL, which the Go runtime turns into panics, and SIGKILL
// and SIGSTOP, which no process can catch), and a task pool larger than
// libuv's own limit of 1,024 threads.
func TestBadInputRefusedWithEINVAL(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		for _, sig := range []syscall.Signal{syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGKILL, syscall.SIGSTOP} {
			if _, err := uv.NewSignal(u.Reactor, syscall.SIGINT, sig); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("NewSignal(SIGINT, %v) = %v, want EINVAL", sig, err)
			}
		}
		for _, n := range []int{1025, 1 << 40} {
			if _, err := uv.NewTaskPool(n); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("NewTaskPool(%d) = %v, want EINVAL", n, err)
			}
		}
		if p, err := uv.NewTaskPool(1024); err != nil || p == nil {
			t.Errorf("NewTaskPool(1024) = %v, %v; want a pool", p, err)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// TestListenNegativeBacklog: a negative Backlog asks for the system's
// maximum, as listen(2) takes it (the kernel bounds it by somaxconn): the
// listener listens with somaxconn's backlog (read back from the kernel on
// Linux) and accepts, on both drivers.
func TestListenNegativeBacklog(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ln, err := uv.ListenConfig{Backlog: -1}.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		checkBacklog(t, ln)
		c, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		s, err := ln.AcceptIO(ctx)
		uv.UvtMust(t, err)
		uv.UvtMust(t, s.Close())
		uv.UvtMust(t, c.Close())
		uv.UvtMust(t, ln.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// Nil arguments given to a live reactor, and a zero Reactor given where a
// reactor is wanted, are refused at the call with a clear error, on both
// drivers: never a panic then or later on the loop.
func TestNilArgumentsOnLiveReactorRefused(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		dir := t.TempDir()
		f, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var nilCtx context.Context // the bad input under test
		for _, c := range []struct {
			name string
			err  error
			want error
		}{
			{"Call(nil)", u.Call(nil), syscall.EINVAL},
			{"Post(nil)", u.Post(nil), syscall.EINVAL},
			{"Run(nil)", u.Run(nilCtx), event.ErrNilContext},
			{"RunOnce(nil)", u.RunOnce(nilCtx), event.ErrNilContext},
			{"Shutdown(nil)", u.Shutdown(nilCtx), event.ErrNilContext},
			{"Dial(nil ctx)", second(uv.Dial(nilCtx, u.Reactor, "tcp", "127.0.0.1:1")), event.ErrNilContext},
			{"Stat(nil ctx)", second(uv.Stat(nilCtx, u.Reactor, ".")), event.ErrNilContext},
			{"OpenAsync(nil ctx)", second(uv.OpenAsync(nilCtx, u.Reactor, ".", os.O_RDONLY, 0)), event.ErrNilContext},
			{"NewTimer(zero Reactor)", second((&reactor.Reactor{}).NewTimer(1, 0)), reactor.ErrZeroReactor},
			{"NewSignal(zero Reactor)", second(uv.NewSignal(&reactor.Reactor{}, syscall.SIGUSR1)), reactor.ErrZeroReactor},
			{"NewTrigger(zero Reactor)", second(uv.NewTrigger(&reactor.Reactor{})), reactor.ErrZeroReactor},
			{"Listen(zero Reactor)", second(uv.Listen(&reactor.Reactor{}, "tcp", "127.0.0.1:0")), reactor.ErrZeroReactor},
		} {
			if !errors.Is(c.err, c.want) {
				t.Errorf("%s = %v, want an error matching %v", c.name, c.err, c.want)
			}
		}
		// Nothing refused was queued: a turn runs clean.
		if err := u.RunNoWait(context.Background()); err != nil {
			t.Errorf("RunNoWait after the refusals: %v", err)
		}
		uv.UvtShutdown(t, u, false)
	})
}

func second[T any](_ T, err error) error { return err }

// Bad input across the kinds, on both drivers: each call returns an error
// (no panic, no hang), and the reactor keeps running afterwards (a trigger
// still fires) with nothing left at Close.
func TestBadInputAcrossKinds(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := uv.UvtNewReactorOn(t, d).Reactor
		defer r.Close()
		closedTr, err := uv.NewTrigger(r)
		if err != nil {
			t.Fatal(err)
		}
		closedTr.Close()
		cases := map[string]func() error{
			"NewTimer negative timeout": func() error { _, err := r.NewTimer(-time.Second, 0); return err },
			"NewTimer negative repeat":  func() error { _, err := r.NewTimer(0, -time.Second); return err },
			"Timer.Reset negative": func() error {
				tm, err := r.NewTimer(time.Second, 0)
				if err != nil {
					return nil
				}
				defer tm.Close()
				return tm.Reset(-1)
			},
			"Timer.SetRepeat negative": func() error {
				tm, err := r.NewTimer(time.Second, 0)
				if err != nil {
					return nil
				}
				defer tm.Close()
				return tm.SetRepeat(-1)
			},
			"NewSignal 0":       func() error { _, err := uv.NewSignal(r, 0); return err },
			"NewSignal -1":      func() error { _, err := uv.NewSignal(r, -1); return err },
			"NewSignal 65":      func() error { _, err := uv.NewSignal(r, 65); return err },
			"NewSignal 1<<20":   func() error { _, err := uv.NewSignal(r, 1<<20); return err },
			"NewSignal SIGKILL": func() error { _, err := uv.NewSignal(r, syscall.SIGKILL); return err },
			"NewSignal SIGSTOP": func() error { _, err := uv.NewSignal(r, syscall.SIGSTOP); return err },
			"QueueTask nil":     func() error { _, err := uv.QueueTask[any](r, nil); return err },
			"NewThread nil":     func() error { _, err := uv.NewThread[any](r, nil); return err },
			"reactor.Go nil": func() error {
				_, err := reactor.Go[int](context.Background(), r, nil)
				return err
			},
			"reactor.Spawn nil": func() error {
				_, err := reactor.Spawn[int](context.Background(), r, nil)
				return err
			},
			"reactor.Go nil ctx": func() error {
				//lint:ignore SA1012 the nil context is the point of the case
				_, err := reactor.Go(nil, r, func(context.Context) (int, error) { return 0, nil })
				return err
			},
			"Spawn empty Args": func() error { _, err := uv.StartProcess(r, uv.ProcessOptions{}); return err },
			"Spawn bad Dir": func() error {
				_, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"/bin/true"}, Dir: "/nonexistent/dir"})
				return err
			},
			"NewCommand empty": func() error { _, err := uv.NewCommand(r, "", uv.CommandOptions{}); return err },
			"NewCommand bad shell": func() error {
				_, err := uv.NewCommand(r, "true", uv.CommandOptions{Shell: "/nonexistent/sh"})
				return err
			},
			"NewCommand neg timeout": func() error { _, err := uv.NewCommand(r, "true", uv.CommandOptions{Timeout: -1}); return err },
			"NewCommand bad mode":    func() error { _, err := uv.NewCommand(r, "true", uv.CommandOptions{Mode: 200}); return err },
			"NewTaskPool 0":          func() error { _, err := uv.NewTaskPool(0); return err },
			"NewTaskPool negative":   func() error { _, err := uv.NewTaskPool(-3); return err },
			"AddCallback nil":        func() error { tr, _ := uv.NewTrigger(r); defer tr.Close(); return tr.AddCallback(nil) },
			"DelCallback nil":        func() error { tr, _ := uv.NewTrigger(r); defer tr.Close(); return tr.DelCallback(nil) },
			"Replay nil":             func() error { tr, _ := uv.NewTrigger(r); defer tr.Close(); return tr.Replay(nil) },
			"NewCallback nil fn": func() error {
				tr, _ := uv.NewTrigger(r)
				defer tr.Close()
				if err := tr.AddCallback(event.NewCallback(nil)); err != nil {
					return err
				}
				tr.Start()
				tr.Send()
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				r.RunOnce(ctx)
				return errors.New("accepted (delivered without panic)")
			},
			"Send closed":  func() error { return closedTr.Send() },
			"Start closed": func() error { return closedTr.Start() },
			"AddCallback closed": func() error {
				return closedTr.AddCallback(event.NewCallback(func(event.Event, any, error) {}))
			},
			"LookupProcess 0":  func() error { _, err := uv.LookupProcess(r, 0); return err },
			"LookupProcess -1": func() error { _, err := uv.LookupProcess(r, -1); return err },
			"LookupProcess self": func() error {
				_, err := uv.LookupProcess(r, syscall.Getpid())
				return err
			},
		}
		for name, fn := range cases {
			t.Run(name, func(t *testing.T) {
				var got error
				if perr := callBounded(func() { got = fn() }); perr != nil {
					t.Errorf("%s: %v", name, perr)
					return
				}
				if got == nil {
					t.Errorf("%s: accepted (nil error), want an error", name)
				}
			})
		}
		// Still running: a trigger fires.
		tr, err := uv.NewTrigger(r)
		if err != nil {
			t.Fatalf("NewTrigger after bad input: %v", err)
		}
		fired := make(chan struct{}, 1)
		event.Subscribe(tr, func(_ event.Event, _ any, err error) {
			if err == nil {
				select {
				case fired <- struct{}{}:
				default:
				}
			}
		})
		tr.Start()
		tr.Send()
		ctx, cancel := context.WithTimeout(context.Background(), raceSafety)
		defer cancel()
		go r.Run(ctx)
		select {
		case <-fired:
		case <-time.After(raceSafety):
			t.Errorf("reactor no longer fires triggers after bad input")
		}
		tr.Close()
		if err := closeBounded(t, r); err != nil {
			t.Fatal(err)
		}
		if s := r.Stats(); s.CHandles != 0 {
			t.Errorf("CHandles=%d after Close", s.CHandles)
		}
	})
}

// nilInputFuncs are the package's exported functions, by name.
var nilInputFuncs = map[string]any{
	"Dial": uv.Dial, "DialAsync": uv.DialAsync, "Listen": uv.Listen, "ListenUDP": uv.ListenUDP,
	"LookupProcess": uv.LookupProcess, "NewAddrInfo": uv.NewAddrInfo, "NewCheck": uv.NewCheck,
	"NewCommand": uv.NewCommand, "NewFSEvent": uv.NewFSEvent, "NewFSPoll": uv.NewFSPoll, "NewIdle": uv.NewIdle,
	"NewNameInfo": uv.NewNameInfo, "NewPoll": uv.NewPoll, "NewPollProxy": uv.NewPollProxy,
	"NewPrepare": uv.NewPrepare, "NewSignal": uv.NewSignal, "NewTaskPool": uv.NewTaskPool,
	"NewThread": uv.NewThread[any], "NewTrigger": uv.NewTrigger,
	"OpenFile": uv.OpenFile, "OpenPipe": uv.OpenPipe, "OpenIPC": uv.OpenIPC, "ReadLines": uv.ReadLines, "OpenTTY": uv.OpenTTY, "Pipe": uv.Pipe,
	"QueueTask": uv.QueueTask[any], "QueueTaskIn": uv.QueueTaskIn[any], "StartProcess": uv.StartProcess,
	"StdioFile": uv.StdioFile, "StdioWriter": uv.StdioWriter, "IOOf": uv.IOOf, "UDPOf": uv.UDPOf,
	"ResetTTYMode": uv.ResetTTYMode,
	"Access":       uv.Access, "Chmod": uv.Chmod, "Chown": uv.Chown, "CopyFile": uv.CopyFile, "Lchown": uv.Lchown,
	"Link": uv.Link, "Lstat": uv.Lstat, "Mkdir": uv.Mkdir, "MkdirTemp": uv.MkdirTemp, "OpenAsync": uv.OpenAsync,
	"ReadDir": uv.ReadDir, "Readlink": uv.Readlink, "Realpath": uv.Realpath, "RenameFile": uv.RenameFile,
	"Rmdir": uv.Rmdir, "Stat": uv.Stat, "Statfs": uv.Statfs, "Symlink": uv.Symlink, "Unlink": uv.Unlink,
	"Utime": uv.Utime,
}

// Every exported function and method of the package, called with nil and
// zero input (zero values, nil arguments), refuses with a clear error and
// never panics.
func TestNilInputsRefused(t *testing.T) {
	conform.CheckNilInputs(t, conform.NilInputs{
		Dir:   ".",
		Funcs: nilInputFuncs,
		Types: []any{
			(*uv.AddrInfo)(nil), (*uv.DNSError)(nil), (*uv.Dialer)(nil), (*uv.Command)(nil), (*uv.OutputMode)(nil),
			(*uv.FSEvent)(nil), (*uv.FSEvents)(nil), (*uv.FSPoll)(nil), (*uv.FSRequest[[]byte])(nil), (*uv.File)(nil),
			(*uv.IO)(nil), (*uv.ListenConfig)(nil), (*uv.Listener)(nil),
			(*uv.NameInfo)(nil), (*uv.Phase)(nil), (*uv.Poll)(nil), (*uv.PollEvents)(nil),
			(*uv.PollProxy)(nil), (*uv.Process)(nil), (*uv.Signal)(nil), (*uv.Task[any])(nil),
			(*uv.TaskPool)(nil), (*uv.Thread[any])(nil), (*uv.Trigger)(nil), (*uv.UDP)(nil),
			(*uv.TTYMode)(nil), (*uv.CopyFlag)(nil), (*uv.StatFS)(nil), (*uv.IPC)(nil), (*uv.Passed)(nil),
			(*uv.DropError)(nil),
		},
		Refusals: []error{event.ErrNilEvent, reactor.ErrZeroReactor, syscall.EINVAL},
		MaySucceed: map[string]string{
			"ResetTTYMode":          "with no terminal mode changed there is nothing to reset",
			"zero DNSError.Unwrap":  "a zero code is no error",
			"zero DropError.Unwrap": "a zero drop has no cause",
			"zero Passed.Close":     "a zero Passed holds no handle: nothing to close",
		},
	})
}

// Every constructor of the package, given a live reactor and nil or zero
// other arguments, refuses or makes something usable, on both drivers:
// never a panic, never a nil result without an error.
func TestNilArgumentsOnLiveReactor(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		uv.UvtServe(t, u)
		conform.CheckNilArgs(t, u.Reactor, nilInputFuncs, map[string]string{
			"OpenPipe": "descriptor 0 is the test's standard input, not a nil input",
			"OpenTTY":  "descriptor 0 is the test's standard input, not a nil input",
			"OpenIPC":  "descriptor 0 is the test's standard input, not a nil input",
		})
	})
}

// callBounded runs fn in a goroutine and reports a panic or a hang as an error.
func callBounded(fn func()) (err error) {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("panic: %v", p)
			}
		}()
		fn()
		done <- nil
	}()
	select {
	case err = <-done:
		return err
	case <-time.After(3 * time.Second):
		return errors.New("hang: no return within 3s")
	}
}

func TestZeroReactorIsRefused(t *testing.T) {
	ctx := context.Background()
	cases := map[string]func(r *reactor.Reactor){
		"Run":      func(r *reactor.Reactor) { _ = r.Run(ctx) },
		"RunOnce":  func(r *reactor.Reactor) { _ = r.RunOnce(ctx) },
		"Call":     func(r *reactor.Reactor) { _ = r.Call(func() {}) },
		"Post":     func(r *reactor.Reactor) { _ = r.Post(func() {}) },
		"Close":    func(r *reactor.Reactor) { _ = r.Close() },
		"Stats":    func(r *reactor.Reactor) { _ = r.Stats() },
		"Now":      func(r *reactor.Reactor) { _ = r.Now() },
		"Alive":    func(r *reactor.Reactor) { _ = r.Alive() },
		"Stop":     func(r *reactor.Reactor) { r.Stop() },
		"Hold":     func(r *reactor.Reactor) { _, _ = r.Hold() },
		"NewTimer": func(r *reactor.Reactor) { _, _ = r.NewTimer(time.Millisecond, 0) },
		"Trigger":  func(r *reactor.Reactor) { _, _ = uv.NewTrigger(r) },
		"Signal":   func(r *reactor.Reactor) { _, _ = uv.NewSignal(r, 10) },
	}
	for name, fn := range cases {
		// A fresh zero value per case: one failure must not hide the next.
		if err := callBounded(func() { fn(&reactor.Reactor{}) }); err != nil {
			t.Errorf("zero reactor.Reactor: %s: %v", name, err)
		}
	}
}
func TestNilReactorIsRefused(t *testing.T) {
	var r *reactor.Reactor
	cases := map[string]func() error{
		"NewTrigger": func() error { _, err := uv.NewTrigger(r); return err },
		"NewTimer":   func() error { _, err := r.NewTimer(time.Millisecond, 0); return err },
		"NewSignal":  func() error { _, err := uv.NewSignal(r, 10); return err },
		"NewIdle":    func() error { _, err := uv.NewIdle(r); return err },
		"Spawn": func() error {
			_, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"/bin/true"}})
			return err
		},
		"NewCommand": func() error { _, err := uv.NewCommand(r, "true", uv.CommandOptions{}); return err },
		"QueueTask": func() error {
			_, err := uv.QueueTask(r, func(context.Context) (any, error) { return nil, nil })
			return err
		},
		"NewThread": func() error {
			_, err := uv.NewThread(r, func(context.Context) (any, error) { return nil, nil })
			return err
		},
		"rSpawn": func() error {
			_, err := reactor.Spawn(context.Background(), r, func(context.Context) (int, error) { return 0, nil })
			return err
		},
		"rGo": func() error {
			_, err := reactor.Go(context.Background(), r, func(context.Context) (int, error) { return 0, nil })
			return err
		},
		"NewFuture": func() error { f := event.NewFuture[int](r.Owner()); return f.Start() },
	}
	for name, fn := range cases {
		var got error
		if err := callBounded(func() { got = fn() }); err != nil {
			t.Errorf("nil reactor: %s: %v", name, err)
			continue
		}
		if got == nil {
			t.Errorf("nil reactor: %s returned nil error", name)
		}
	}
}

func TestZeroValueEventsAreRefused(t *testing.T) {
	cases := map[string]func(){
		"Trigger.Send":    func() { var tr uv.Trigger; _ = tr.Send() },
		"Trigger.Start":   func() { var tr uv.Trigger; _ = tr.Start() },
		"Trigger.Close":   func() { var tr uv.Trigger; _ = tr.Close() },
		"Trigger.Dispose": func() { var tr uv.Trigger; tr.Dispose() },
		"Trigger.Info":    func() { var tr uv.Trigger; _ = tr.Info() },
		"Poll.Flags":      func() { var p uv.Poll; _ = p.Flags() },
		"Poll.Target":     func() { var p uv.Poll; _ = p.Target() },
		"Poll.AddCallback": func() {
			var p uv.Poll
			_ = p.AddCallback(event.NewCallback(func(event.Event, any, error) {}))
		},
		"Timer.Start":   func() { var tm reactor.Timer; _ = tm.Start() },
		"Timer.Reset":   func() { var tm reactor.Timer; _ = tm.Reset(time.Second) },
		"Timer.Close":   func() { var tm reactor.Timer; _ = tm.Close() },
		"Signal.Start":  func() { var s uv.Signal; _ = s.Start() },
		"Process.Close": func() { var p uv.Process; _ = p.Close() },
		"Task.Start":    func() { var tk uv.Task[any]; _ = tk.Start() },
		"Phase.Start":   func() { var p uv.Phase; _ = p.Start() },
		"Await zero Trigger": func() {
			var tr uv.Trigger
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, _ = event.Await(ctx, event.Any(), &tr)
		},
	}
	for name, fn := range cases {
		t.Run(name, func(t *testing.T) {
			if err := callBounded(fn); err != nil {
				t.Errorf("zero value: %s: %v", name, err)
			}
		})
	}
}

// A zero Process has pid 0, and kill(2) with pid 0 signals the caller's
// whole process group: Kill on it must refuse, not signal this process (and
// its parent, go test, and every sibling in the group). SIGWINCH is ignored
// by default, so the probe harms nobody; SIGKILL here would kill the group.
func TestZeroProcessKillDoesNotSignalOwnGroup(t *testing.T) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	defer signal.Stop(ch)
	var p uv.Process
	var err error
	if perr := callBounded(func() { err = p.Kill(syscall.SIGWINCH) }); perr != nil {
		t.Fatalf("zero Process.Kill: %v", perr)
	}
	select {
	case <-ch:
		t.Errorf("zero Process.Kill(SIGWINCH) (err=%v) signalled this process's own group (kill(0, sig))", err)
	case <-time.After(200 * time.Millisecond):
		// Not a timing decision about the code under test: a signal sent by
		// kill(2) to our own group is pending before kill returns, and the
		// relay goroutine needs only to be scheduled.
	}
	if err == nil {
		t.Errorf("zero Process.Kill returned nil, want an error")
	}
}

// event.Deref of an event reference that stands for no event (a zero value
// of a reference kind, held in an event.Event) gives an event whose methods
// refuse with ErrNilEvent, as the reference's own do: never a nil interface
// whose first method call panics.
func TestDerefOfZeroReferenceRefuses(t *testing.T) {
	for name, ev := range map[string]event.Event{
		"zero FSEvent": &uv.FSEvent{}, "zero IO": &uv.IO{}, "zero Listener": &uv.Listener{},
		"zero Phase": &uv.Phase{}, "zero Poll": &uv.Poll{}, "zero Trigger": &uv.Trigger{},
		"zero UDP": &uv.UDP{},
	} {
		var start, closeErr error
		if err := callBounded(func() {
			d := event.Deref(ev)
			_ = d.Info()
			_ = d.Flags()
			start = d.Start()
			closeErr = d.Close()
			d.Dispose()
		}); err != nil {
			t.Errorf("%s: methods of event.Deref's result: %v", name, err)
			continue
		}
		if !errors.Is(start, event.ErrNilEvent) {
			t.Errorf("%s: event.Deref(ev).Start() = %v, want ErrNilEvent", name, start)
		}
		if closeErr != nil && !errors.Is(closeErr, event.ErrNilEvent) {
			t.Errorf("%s: event.Deref(ev).Close() = %v, want nil or ErrNilEvent", name, closeErr)
		}
	}
}
