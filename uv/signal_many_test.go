package uv_test

import (
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// One Signal watches several signals: each arrival notifies it once with
// the signal that came, so one callback serves SIGINT and SIGTERM alike.
// Started, it holds a dispatcher line per signal; stopped, it gives each
// back. Both drivers.
func TestSignalMany(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		s, err := uv.NewSignal(u.Reactor, syscall.SIGUSR2, syscall.SIGUSR1, syscall.SIGUSR2)
		uv.UvtMust(t, err)
		if got, want := s.Info(), "Signal(signum=12,10)"; got != want {
			t.Errorf("Info = %q, want %q (a signal listed twice is watched once)", got, want)
		}
		if s.Signum() != syscall.SIGUSR2 {
			t.Errorf("Signum = %d, want the first, %d", s.Signum(), syscall.SIGUSR2)
		}
		var got []syscall.Signal
		arrived := make(chan struct{}, 8)
		event.On(s, func(sig syscall.Signal, err error) {
			got = append(got, sig)
			arrived <- struct{}{}
		})
		uv.UvtMust(t, s.Start())
		if n := uv.UvtSignalLines(); n != 2 {
			t.Errorf("dispatcher lines = %d, want 2", n)
		}
		stop := uv.UvtServe(t, u)
		raise(t, syscall.SIGUSR1)
		uv.UvtRecv(t, arrived, "SIGUSR1's notification")
		raise(t, syscall.SIGUSR2)
		uv.UvtRecv(t, arrived, "SIGUSR2's notification")
		stop()
		// Both arrive while the loop is held: neither is folded into the
		// other; each is told once, in the order of their numbers.
		uv.UvtMust(t, u.Call(func() {
			raise(t, syscall.SIGUSR2)
			raise(t, syscall.SIGUSR1)
			uv.UvtWaitFor(t, "both queued", func() bool { return uv.UvtSignalsQueued(s) == 2 })
		}))
		stop = uv.UvtServe(t, u)
		uv.UvtRecv(t, arrived, "the first queued notification")
		uv.UvtRecv(t, arrived, "the second queued notification")
		stop()
		want := []syscall.Signal{syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGUSR1, syscall.SIGUSR2}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("signals told (-want +got):\n%s", diff)
		}
		uv.UvtMust(t, s.Stop())
		if n := uv.UvtSignalLines(); n != 0 {
			t.Errorf("dispatcher lines after Stop = %d, want 0", n)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// One signal of the list that cannot be watched refuses the whole
// Signal, with EINVAL.
func TestSignalManyRefused(t *testing.T) {
	u := uv.UvtNewReactor(t)
	for _, sigs := range [][]syscall.Signal{{syscall.SIGKILL}, {syscall.SIGUSR1, syscall.SIGKILL}, {syscall.SIGUSR1, 0}} {
		if s, err := uv.NewSignal(u.Reactor, syscall.SIGINT, sigs...); s != nil || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("NewSignal(SIGINT, %v) = %v, %v; want EINVAL", sigs, s, err)
		}
	}
	uv.UvtShutdown(t, u, false)
}
