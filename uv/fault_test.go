package uv_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

// fault is what a callback or a hook does wrong.
var faults = map[string]func(){
	"panic":       func() { panic("boom") },
	"panic nil":   func() { panic(nil) },
	"goexit":      runtime.Goexit,
	"panic error": func() { panic(errors.New("boom")) },
}

// A callback or a notify hook that panics or calls runtime.Goexit, on a
// trigger and on a timer, on both drivers: the loop goroutine may end
// (Goexit), but a later Run must take over and fire the next notification,
// the other subscriber of the same pass must be called (for a panic), and
// Close must return with nothing left.
func TestFaultsInCallbacksAndHooks(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for fname, fault := range faults {
			for _, where := range []string{"callback", "hook"} {
				for _, kindName := range []string{"trigger", "timer"} {
					t.Run(fname+"/"+where+"/"+kindName, func(t *testing.T) {
						faultInPass(t, d, fname, fault, where, kindName)
					})
				}
			}
		}
	})
}

func faultInPass(t *testing.T, d reactor.Driver, fname string, fault func(), where, kindName string) {
	r := uv.UvtNewReactorOn(t, d)
	defer r.Close()
	var ev event.Event
	var fire func()
	switch kindName {
	case "trigger":
		tr, err := uv.NewTrigger(r.Reactor)
		if err != nil {
			t.Fatal(err)
		}
		ev, fire = tr, func() { tr.Send() }
	case "timer":
		tm, err := r.Reactor.NewTimer(time.Millisecond, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		ev, fire = tm, func() {}
	}
	var faulted atomic.Bool
	var others atomic.Int32
	doFault := func() {
		if faulted.CompareAndSwap(false, true) {
			fault()
		}
	}
	if where == "hook" {
		if err := ev.SetNotifyHook(func(e event.Event, res any, err error) (any, error, bool) {
			if err == nil {
				doFault()
			}
			return res, err, true
		}); err != nil {
			t.Fatalf("SetNotifyHook: %v", err)
		}
	} else {
		event.Subscribe(ev, func(_ event.Event, _ any, err error) {
			if err == nil {
				doFault()
			}
		})
	}
	event.Subscribe(ev, func(_ event.Event, _ any, err error) {
		if err == nil {
			others.Add(1)
		}
	})
	if err := ev.Start(); err != nil {
		t.Fatal(err)
	}
	fire()
	// First run: it may end by Goexit; it must not hang past its context.
	first := make(chan struct{})
	go func() {
		defer close(first)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		for !faulted.Load() && ctx.Err() == nil {
			r.RunOnce(ctx)
		}
	}()
	select {
	case <-first:
	case <-time.After(raceSafety):
		t.Fatalf("the run that met a %s in a %s hung", fname, where)
	}
	if !faulted.Load() {
		t.Fatalf("the fault never ran")
	}
	// A later run takes over and delivers the next notification.
	before := others.Load()
	fire()
	second := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), raceSafety)
		defer cancel()
		var err error
		for others.Load() == before && ctx.Err() == nil {
			if err = r.RunOnce(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				break
			}
		}
		second <- err
	}()
	select {
	case err := <-second:
		if others.Load() == before {
			t.Errorf("after a %s in a %s: the next notification never came (RunOnce: %v)", fname, where, err)
		}
	case <-time.After(raceSafety + time.Second):
		t.Fatalf("after a %s in a %s: the next run hung", fname, where)
	}
	if fname != "goexit" && len(r.Reports()) == 0 {
		t.Errorf("a %s in a %s was not reported", fname, where)
	}
	if err := closeBounded(t, r.Reactor); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if s := r.Stats(); s.CHandles != 0 || s.Active != 0 {
		t.Errorf("after Close: CHandles=%d Active=%d", s.CHandles, s.Active)
	}
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count descriptors: %v", err)
	}
	return len(ents)
}

// A notify hook that panics or calls runtime.Goexit while the reactor's
// Close closes its events (the ErrClosed notification). A Goexit may end
// the goroutine calling Close (rule 9: it ends the goroutine owning the
// loop), but the reactor must be left so that another Close finishes the
// job: every event closed, a wait on the reactor ended with
// ErrReactorClosed, the loop freed and its descriptors closed.
func TestHookFaultDuringReactorClose(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for fname, fault := range faults {
			t.Run(fname, func(t *testing.T) {
				fds := openFDs(t)
				r := uv.UvtNewReactorOn(t, d)
				tr, err := uv.NewTrigger(r.Reactor)
				if err != nil {
					t.Fatal(err)
				}
				var faulted atomic.Bool
				tr.SetNotifyHook(func(e event.Event, res any, err error) (any, error, bool) {
					if errors.Is(err, event.ErrClosed) && faulted.CompareAndSwap(false, true) {
						fault()
					}
					return res, err, true
				})
				event.Subscribe(tr, func(event.Event, any, error) {})
				tr.Start()
				tm, _ := r.Reactor.NewTimer(time.Hour, 0)
				tm.Start()
				fut := event.NewFuture[int](r.Reactor.Owner())
				waitEnded := make(chan error, 1)
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					_, err := fut.Await(ctx)
					waitEnded <- err
				}()
				time.Sleep(10 * time.Millisecond) // let the wait register; not a decision
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := r.Close(); err != nil {
						t.Errorf("first Close = %v", err)
					}
				}()
				if !waitBounded(t, "first Close", &wg) {
					return
				}
				if err := closeBounded(t, r.Reactor); err != nil {
					t.Errorf("second Close: %v", err)
				}
				if !tm.Flags().Has(event.Closed) {
					t.Errorf("after a %s in a close notification and a second Close: the started timer is still open", fname)
				}
				select {
				case err := <-waitEnded:
					if !errors.Is(err, reactor.ErrReactorClosed) {
						t.Errorf("after a %s in a close notification: the wait on a future ended with %v, want ErrReactorClosed", fname, err)
					}
				case <-time.After(raceSafety):
					t.Errorf("the wait never ended")
				}
				if s := r.Stats(); s.CHandles != 0 || s.Active != 0 || s.Running {
					t.Errorf("after Close: CHandles=%d Active=%d Running=%v", s.CHandles, s.Active, s.Running)
				}
				runtime.GC()
				if n := openFDs(t); n > fds {
					t.Errorf("after a %s in a close notification: %d descriptors open, %d before the reactor: the loop was never freed", fname, n, fds)
				}
			})
		}
	})
}

// Await on typed nils, nil interfaces, closed events and no events at all:
// errors, never a panic or a hang.
func TestAwaitOddEvents(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := uv.UvtNewReactorOn(t, d).Reactor
		defer r.Close()
		var nilTr *uv.Trigger
		var nilTm *reactor.Timer
		var nilFut *event.Future[int]
		var nilTask *uv.Task[any]
		closedTr, _ := uv.NewTrigger(r)
		closedTr.Close()
		cases := map[string][]event.Event{
			"typed nil Trigger": {nilTr},
			"typed nil Timer":   {nilTm},
			"typed nil Future":  {nilFut},
			"typed nil Task":    {nilTask},
			"nil interface":     {nil},
			"mixed nil":         {closedTr, nilTr},
		}
		for name, evs := range cases {
			var err error
			if perr := callBounded(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				_, err = event.Await(ctx, event.Any(), evs...)
			}); perr != nil {
				t.Errorf("Await(%s): %v", name, perr)
				continue
			}
			if !errors.Is(err, event.ErrNilEvent) {
				t.Errorf("Await(%s) = %v, want ErrNilEvent", name, err)
			}
		}
		for _, m := range []event.Mode{event.Any(), event.All(), event.FirstSuccess(), event.AtLeast(1), event.AtLeast(-1), event.AtLeast(5)} {
			var err error
			var outs []event.Outcome
			if perr := callBounded(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				outs, err = event.Await(ctx, m, closedTr)
			}); perr != nil {
				t.Errorf("Await(%v, closed trigger): %v", m, perr)
				continue
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Await(%v, closed trigger) waited for its context: %v %v", m, outs, err)
			}
			if perr := callBounded(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				outs, err = event.Await(ctx, m)
			}); perr != nil {
				t.Errorf("Await(%v) with no events: %v", m, perr)
			} else if errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Await(%v) with no events waited for its context", m)
			}
		}
		if err := closeBounded(t, r); err != nil {
			t.Fatal(err)
		}
	})
}

// A reactor closed while goroutines wait on events of every kind: each
// wait ends with an error (whether it began before the Close or after), and
// none hangs.
func TestFaultCloseWithWaitersOnEveryKind(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		r := u.Reactor
		stop := uv.UvtServe(t, u)
		defer stop()
		var evs []event.Event
		add := func(ev event.Event, err error) {
			t.Helper()
			uv.UvtMust(t, err)
			evs = append(evs, ev)
		}
		tm, err := r.NewTimer(time.Hour, 0)
		add(tm, err)
		uv.UvtMust(t, tm.Start())
		tr, err := uv.NewTrigger(r)
		add(tr, err)
		uv.UvtMust(t, tr.Start())
		add(event.NewFuture[int](r.Owner()), nil)
		fds, err := uv.UvtSocketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		uv.UvtMust(t, err)
		defer unix.Close(fds[1])
		p, err := uv.NewPoll(r, fds[0], uv.Readable, uv.PollOptions{CloseFD: true})
		add(p, err)
		uv.UvtMust(t, p.Start())
		sig, err := uv.NewSignal(r, syscall.SIGUSR2)
		add(sig, err)
		uv.UvtMust(t, sig.Start())
		proc, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"/bin/sleep", "5"}})
		add(proc, err)
		defer proc.Kill(syscall.SIGKILL)
		task, err := uv.QueueTask(r, func(ctx context.Context) (any, error) { <-ctx.Done(); return nil, ctx.Err() })
		add(task, err)
		w, err := uv.NewFSEvent(r, t.TempDir(), uv.FSEventOptions{})
		add(w, err)
		uv.UvtMust(t, w.Start())

		ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		a, b, err := uv.Pipe(r)
		uv.UvtMust(t, err)
		udp, err := uv.ListenUDP(r, "udp4", "127.0.0.1:0")
		uv.UvtMust(t, err)

		errs := make(chan error, len(evs)+3)
		for _, ev := range evs {
			go func() {
				_, err := event.Await(context.Background(), event.Any(), ev)
				errs <- fmt.Errorf("%T: %w", ev, err)
			}()
		}
		go func() { _, err := ln.AcceptIO(context.Background()); errs <- fmt.Errorf("AcceptIO: %w", err) }()
		go func() { _, err := a.Read(make([]byte, 8)); errs <- fmt.Errorf("Read: %w", err) }()
		go func() { _, _, err := udp.ReadFrom(make([]byte, 8)); errs <- fmt.Errorf("ReadFrom: %w", err) }()
		stop()
		uv.UvtMust(t, r.Close())
		for range len(evs) + 3 {
			err := uv.UvtRecv(t, errs, "a waiter's end")
			if err == nil || errorsIsNil(err) {
				t.Errorf("a wait ended without an error: %v", err)
			}
		}
		b.Close()
	})
}

// errorsIsNil reports whether err only wraps nil (a wait that succeeded).
func errorsIsNil(err error) bool {
	u, ok := err.(interface{ Unwrap() error })
	return ok && u.Unwrap() == nil
}

// Descriptor exhaustion: with RLIMIT_NOFILE lowered and every descriptor
// taken, accept, dial, open and watch each fail with an error matching
// syscall.EMFILE, and a connection made before keeps being served. It runs
// in a child process (this test binary again), so that the lowered limit
// touches nothing else.
func TestFaultDescriptorExhaustion(t *testing.T) {
	if inChild(t, "UVEVENT_EMFILE_CHILD") {
		emfileChild(t)
	}
}

func emfileChild(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		defer stop()
		ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer ln.Close()
		// A served connection, made before the descriptors run out: an echo.
		client, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		defer client.Close()
		srv, err := ln.AcceptIO(context.Background())
		uv.UvtMust(t, err)
		defer srv.Close()
		echo := func() error {
			if _, err := client.Write([]byte("ping")); err != nil {
				return err
			}
			b := make([]byte, 4)
			if _, err := io.ReadFull(srv, b); err != nil {
				return err
			}
			_, err := srv.Write(b)
			if err == nil {
				_, err = io.ReadFull(client, b)
			}
			return err
		}
		uv.UvtMust(t, echo())

		// Take every descriptor left under a low limit.
		var old syscall.Rlimit
		uv.UvtMust(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old))
		lim := old
		uv.UvtSetRlimitCur(&lim.Cur, uv.UvtOpenFDs(t)+16)
		uv.UvtMust(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
		defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
		var hog []int
		for {
			fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			if err != nil {
				break
			}
			hog = append(hog, fd)
		}
		release := func() {
			for _, fd := range hog {
				syscall.Close(fd)
			}
			hog = nil
		}
		defer release()

		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		if _, err := uv.Dial(ctx, u.Reactor, "tcp4", ln.Addr().String()); !errors.Is(err, syscall.EMFILE) {
			t.Errorf("Dial with no descriptor left = %v, want EMFILE", err)
		}
		if _, err := uv.OpenFile(ctx, u.Reactor, "/dev/null", os.O_RDONLY, 0); !errors.Is(err, syscall.EMFILE) {
			t.Errorf("OpenFile with no descriptor left = %v, want EMFILE", err)
		}
		if w, err := uv.NewFSEvent(u.Reactor, t.TempDir(), uv.FSEventOptions{}); err == nil {
			if err := w.Start(); !errors.Is(err, syscall.EMFILE) {
				t.Errorf("FSEvent Start with no descriptor left = %v, want EMFILE", err)
			}
			w.Close()
		} else if !errors.Is(err, syscall.EMFILE) {
			t.Errorf("NewFSEvent with no descriptor left = %v, want EMFILE", err)
		}
		// A connection from the last descriptor: the server has none left
		// to accept it with.
		syscall.Close(hog[len(hog)-1])
		hog = hog[:len(hog)-1]
		waiting, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		defer waiting.Close()
		actx, acancel := context.WithTimeout(ctx, 200e6) // an accept that cannot get its descriptor fails or waits; either way it ends
		c, err := ln.AcceptIO(actx)
		acancel()
		switch {
		case err == nil:
			c.Close()
			t.Errorf("AcceptIO with no descriptor left succeeded")
		case errors.Is(err, syscall.EMFILE), errors.Is(err, context.DeadlineExceeded):
			t.Logf("AcceptIO with no descriptor left: %v", err)
		default:
			t.Errorf("AcceptIO with no descriptor left = %v, want EMFILE", err)
		}
		// The connection made before is still served.
		if err := echo(); err != nil {
			t.Errorf("the served connection, out of descriptors: %v", err)
		}
		release()
		if err := echo(); err != nil {
			t.Errorf("the served connection, descriptors back: %v", err)
		}
	})
}
