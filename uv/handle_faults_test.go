package uv_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
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
