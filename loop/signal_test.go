package loop_test

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
)

// A signal sent to the process after OnSignal reaches the callback; the
// callback's OffSignal ends the watch, and Run with it.
func TestOnSignal(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		var got []syscall.Signal
		var offs []bool
		must(t, l.OnSignal(syscall.SIGUSR1, func(syscall.Signal) { t.Error("replaced callback called") }, loop.SignalOptions{}))
		must(t, l.OnSignal(syscall.SIGUSR1, func(sig syscall.Signal) {
			got = append(got, sig)
			offs = append(offs, l.OffSignal(sig), l.OffSignal(sig))
		}, loop.SignalOptions{}))
		must(t, syscall.Kill(os.Getpid(), syscall.SIGUSR1))
		run(t, l)
		if len(got) != 1 || got[0] != syscall.SIGUSR1 || len(offs) != 2 || !offs[0] || offs[1] {
			t.Errorf("calls %v, OffSignal results %v; want [SIGUSR1] and [true false]", got, offs)
		}
		if err := l.OnSignal(syscall.SIGKILL, func(syscall.Signal) {}, loop.SignalOptions{}); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("OnSignal(SIGKILL) = %v, want EINVAL", err)
		}
		if err := l.OnSignal(syscall.SIGUSR2, nil, loop.SignalOptions{}); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("OnSignal(nil) = %v, want EINVAL", err)
		}
	})
}

// A coroutine suspended until a timer's callback resumes it gets the value;
// one suspended with nothing left to resume it is told it is deadlocked.
func TestSuspension(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		s := l.Suspension()
		co, err := reactor.Go(context.Background(), l.Reactor(), func(ctx context.Context) (any, error) {
			return s.Suspend(ctx)
		})
		must(t, err)
		_, err = l.Delay(time.Millisecond, func() { s.Resume("woken") })
		must(t, err)
		run(t, l)
		if v, ok, err := co.Outcome(); !ok || err != nil || v != "woken" {
			t.Errorf("coroutine outcome = %v, %v, %v; want woken", v, ok, err)
		}

		stuck := l.Suspension()
		co, err = reactor.Go(context.Background(), l.Reactor(), func(ctx context.Context) (any, error) {
			return stuck.Suspend(ctx)
		})
		must(t, err)
		run(t, l)
		if _, ok, err := co.Outcome(); !ok || !errors.Is(err, event.ErrDeadlock) {
			t.Errorf("stuck coroutine: done=%v err=%v, want ErrDeadlock", ok, err)
		}
		l.mu.Lock()
		l.reports = nil // the deadlock report is expected
		l.mu.Unlock()
	})
}
