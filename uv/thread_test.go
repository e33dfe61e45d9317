package uv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// newThread starts a Thread or fails the test.
func newThread(t testing.TB, u *uv.UvtReactor, fn func(context.Context) (any, error)) *uv.Thread[any] {
	t.Helper()
	th, err := uv.NewThread(u.Reactor, fn)
	if err != nil {
		t.Fatalf("NewThread: %v", err)
	}
	return th
}

// The lifecycle: the function runs on one OS thread of its own for its
// whole run (whatever it yields), the result comes on the loop and is
// replayed, the thread ends with the function; errors and panics are
// outcomes.
func TestThreadLifecycle(t *testing.T) {
	u := uv.UvtNewReactor(t)
	runtime.LockOSThread() // this thread is the test's: the function cannot run on it
	defer runtime.UnlockOSThread()
	testTID := uv.UvtGettid()
	errBoom := errors.New("boom")
	var th, failed, panicked *uv.Thread[any]
	var calls *uv.UvtCounter
	uv.UvtMust(t, u.Call(func() { // nothing completes before the subscriptions
		th = newThread(t, u, func(context.Context) (any, error) {
			tid := uv.UvtGettid()
			for range 100 {
				runtime.Gosched()
				runtime.GC()
				if uv.UvtGettid() != tid {
					return nil, fmt.Errorf("moved from thread %d to %d", tid, uv.UvtGettid())
				}
			}
			return tid, nil
		})
		failed = newThread(t, u, func(context.Context) (any, error) { return nil, errBoom })
		panicked = newThread(t, u, func(context.Context) (any, error) { panic("oops") })
		calls = uv.UvtSubscribe(t, th, u.Owner().Owned)
		uv.UvtSubscribe(t, failed, u.Owner().Owned)
		uv.UvtSubscribe(t, panicked, u.Owner().Owned)
	}))
	uv.UvtMust(t, u.Run(context.Background()))
	c := calls.Calls()
	if len(c) != 1 || c[0].Err != nil || !c[0].OnLoop {
		t.Fatalf("notifications %+v, want one result on the loop", c)
	}
	tid := c[0].Result.(int)
	if tid == testTID || tid != th.ThreadID() {
		t.Errorf("ran on thread %d (test %d, ThreadID %d)", tid, testTID, th.ThreadID())
	}
	if got, want := th.Info(), fmt.Sprintf("Thread(tid=%d, done)", tid); got != want {
		t.Errorf("Info = %q, want %q", got, want)
	}
	if res, _ := replayed(t, th); res != tid {
		t.Errorf("replay %v, want %d", res, tid)
	}
	if _, err := replayed(t, failed); !errors.Is(err, errBoom) {
		t.Errorf("failed thread: %v", err)
	}
	var pe *event.PanicError
	if _, err := replayed(t, panicked); !errors.As(err, &pe) {
		t.Errorf("panicking thread: %v, want a PanicError", err)
	}
	// The locked thread ends with its goroutine, unless it was the main
	// thread, which the runtime parks for good instead.
	if tid != os.Getpid() {
		uv.UvtWaitFor(t, "the thread's end", func() bool {
			_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid))
			return err != nil
		})
	}
	uv.UvtShutdown(t, u, false)
}

// Close while the function runs: its context is canceled, subscribers
// hear ErrClosed, the result is stored when it comes. Bad input is refused.
func TestThreadCloseWhileBusyAndBadInput(t *testing.T) {
	u := uv.UvtNewReactor(t)
	if _, err := uv.NewThread[any](u.Reactor, nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("nil function: %v, want EINVAL", err)
	}
	if _, err := uv.NewThread(nil, func(context.Context) (any, error) { return nil, nil }); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("nil reactor: %v, want EINVAL", err)
	}
	stop := uv.UvtServe(t, u)
	started := make(chan struct{})
	th, err := uv.NewThread(u.Reactor, func(ctx context.Context) (any, error) {
		close(started)
		<-ctx.Done()
		return "stopped", nil
	})
	uv.UvtMust(t, err)
	calls := uv.UvtSubscribe(t, th, u.Owner().Owned)
	<-started
	if got, want := th.Info(), fmt.Sprintf("Thread(tid=%d, running)", th.ThreadID()); got != want {
		t.Errorf("Info = %q, want %q", got, want)
	}
	uv.UvtMust(t, th.Close())
	if c := calls.Next(t); !errors.Is(c.Err, event.ErrClosed) {
		t.Errorf("notification %+v, want ErrClosed", c)
	}
	uv.UvtWaitFor(t, "the stored result", func() bool { return th.Replay(event.NewCallback(func(event.Event, any, error) {})) == nil })
	if res, _ := replayed(t, th); res != "stopped" {
		t.Errorf("stored %v, want stopped", res)
	}
	stop()
	uv.UvtShutdown(t, u, false)
}

// Threads dropped without Close under GOGC=10 leave no goroutine behind.
func TestThreadDropWithoutClose(t *testing.T) {
	uv.UvtDropWithoutClose(t, 100, func(u *uv.UvtReactor, i int) error {
		_, err := uv.NewThread(u.Reactor, func(context.Context) (any, error) { return i, nil })
		return err
	})
}
