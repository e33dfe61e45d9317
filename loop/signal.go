package loop

import (
	"fmt"
	"syscall"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// OnSignal calls fn(sig) on the loop goroutine each time the process
// receives sig (EventInterface's onSignal), through a uv.Signal event: os/signal
// underneath, on both drivers, never libuv's signal handlers (see
// docs/signals.md). Signals that arrive while a call is queued coalesce
// into it. A second OnSignal for the same signal replaces the callback (and
// its options). By default, while a signal is watched, Run does not end for
// lack of events: stop it with Stop, or OffSignal; with opts.Unref, the
// watch does not keep Run going (as Node's signal listeners). Signals
// that cannot be caught or that the Go runtime keeps (SIGKILL, SIGSTOP,
// SIGPROF, ...) are refused with an error matching syscall.EINVAL.
func (l *Loop) OnSignal(sig syscall.Signal, fn func(sig syscall.Signal), opts SignalOptions) error {
	if fn == nil {
		return errNilFunc("OnSignal")
	}
	return l.exec("OnSignal", func() error {
		s, err := uv.NewSignal(l.r, sig)
		if err != nil {
			return fmt.Errorf("loop: OnSignal: %w", err)
		}
		if _, err := event.Subscribe(s, func(_ event.Event, _ any, err error) {
			if err == nil && l.signals[sig] == s {
				fn(sig)
			}
		}); err != nil {
			s.Close()
			return err
		}
		if opts.Unref {
			if err := s.SetHidden(true); err != nil {
				s.Close()
				return err
			}
		}
		if err := s.Start(); err != nil {
			s.Close()
			return err
		}
		l.offSignal(sig)
		l.signals[sig] = s
		return nil
	})
}

// OffSignal stops calling the callback of sig and reports whether there
// was one. At the last listener of sig in the process, sig's handling goes
// back to what it was before (os/signal's signal.Stop).
func (l *Loop) OffSignal(sig syscall.Signal) bool {
	return l.off(func() bool { return l.offSignal(sig) })
}

func (l *Loop) offSignal(sig syscall.Signal) bool {
	s, ok := l.signals[sig]
	if ok {
		delete(l.signals, sig)
		s.Close()
	}
	return ok
}

// SignalOptions configure how OnSignal watches its signal. The zero value
// is the default: the watch keeps Run going.
type SignalOptions struct {
	// Unref makes the watch not count toward keeping Run going: libuv's
	// uv_unref, and what Node's signal listeners do. Run ends when nothing
	// else is active; while it runs, the callback is called as usual.
	Unref bool
}
