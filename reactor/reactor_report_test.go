package reactor_test

import (
	"bytes"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// Every report of a reactor goes to its handler (OnReport, else Logger),
// whenever it is made: also after the reactor's Close.

// rejectAndDrop makes a failed future of r that nobody observes, and drops
// it.
//
//go:noinline
func rejectAndDrop(t *testing.T, r *reactor.Reactor, err error) {
	if rerr := event.NewFuture[int](r).Reject(err); rerr != nil {
		t.Fatal(rerr)
	}
}

// syncBuffer is a log destination safe from the cleanup goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestReportAfterCloseGoesToHandler(t *testing.T) {
	errLost := errors.New("nobody looked")
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		t.Run("OnReport", func(t *testing.T) {
			rep := &reports{}
			r, err := reactor.New(reactor.Options{Driver: d, OnReport: rep.add})
			if err != nil {
				t.Fatal(err)
			}
			rejectAndDrop(t, r, errLost)
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the collected future's report", func() bool {
				runtime.GC()
				_, errs := rep.snapshot()
				return len(errs) > 0
			})
			msgs, errs := rep.snapshot()
			if !strings.Contains(msgs[0], "unhandled error") || !errors.Is(errs[0], errLost) {
				t.Errorf("report = %q, %v; want the unhandled error %v", msgs[0], errs[0], errLost)
			}
		})
		t.Run("Logger", func(t *testing.T) {
			var buf syncBuffer
			r, err := reactor.New(reactor.Options{Driver: d, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
			if err != nil {
				t.Fatal(err)
			}
			rejectAndDrop(t, r, errLost)
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the collected future's report in the logger", func() bool {
				runtime.GC()
				return strings.Contains(buf.String(), errLost.Error())
			})
		})
	})
}

// A panic's report carries the stack of the panic, to OnReport (in the
// *event.PanicError) and to the logger.
//
//go:noinline
func panicInPostedOperation() { panic("posted boom") }

func TestPanicReportCarriesStack(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		t.Run("OnReport", func(t *testing.T) {
			rep := &reports{}
			r, err := reactor.New(reactor.Options{Driver: d, OnReport: rep.add})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if err := r.Post(panicInPostedOperation); err != nil {
				t.Fatal(err)
			}
			if err := r.RunNoWait(runCtx(t)); err != nil {
				t.Fatal(err)
			}
			_, errs := rep.snapshot()
			var pe *event.PanicError
			if len(errs) != 1 || !errors.As(errs[0], &pe) {
				t.Fatalf("reports = %v, want one *event.PanicError", errs)
			}
			if !strings.Contains(string(pe.Stack), "panicInPostedOperation") {
				t.Errorf("the panic's stack does not name the panicking function:\n%s", pe.Stack)
			}
		})
		t.Run("Logger", func(t *testing.T) {
			var buf syncBuffer
			r, err := reactor.New(reactor.Options{Driver: d, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if err := r.Post(panicInPostedOperation); err != nil {
				t.Fatal(err)
			}
			if err := r.RunNoWait(runCtx(t)); err != nil {
				t.Fatal(err)
			}
			if s := buf.String(); !strings.Contains(s, "panicInPostedOperation") {
				t.Errorf("the logged report has no stack naming the panicking function: %s", s)
			}
		})
	})
}

//go:noinline
func panicInCallback(event.Event, any, error) { panic("callback boom") }

// A callback's panic is reported with its stack too.
func TestCallbackPanicReportCarriesStack(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		rep := &reports{}
		r, err := reactor.New(reactor.Options{Driver: d, OnReport: rep.add})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		f := event.NewFuture[int](r)
		if _, err := event.Subscribe(f, panicInCallback); err != nil {
			t.Fatal(err)
		}
		if err := f.Resolve(1); err != nil {
			t.Fatal(err)
		}
		if err := r.RunNoWait(runCtx(t)); err != nil {
			t.Fatal(err)
		}
		_, errs := rep.snapshot()
		var pe *event.PanicError
		if len(errs) != 1 || !errors.As(errs[0], &pe) || !strings.Contains(string(pe.Stack), "panicInCallback") {
			t.Errorf("reports = %v, want one *event.PanicError whose stack names panicInCallback", errs)
		}
	})
}
