package loop_test

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/loop"
)

// By default a watched signal keeps Run going; with SignalOptions.Unref it does not
// count (as Node's signal listeners), and its callback is still called
// while something else keeps the loop running.
func TestOnSignalUnref(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		must(t, l.OnSignal(syscall.SIGUSR2, func(syscall.Signal) {}, loop.SignalOptions{}))
		if n := l.Reactor().Stats().Active; n != 1 {
			t.Errorf("a watched signal: Active = %d, want 1", n)
		}
		var got []syscall.Signal
		must(t, l.OnSignal(syscall.SIGUSR2, func(sig syscall.Signal) { got = append(got, sig) }, loop.SignalOptions{Unref: true}))
		if n := l.Reactor().Stats().Active; n != 0 {
			t.Errorf("a signal watched with Unref: Active = %d, want 0", n)
		}
		run(t, l) // ends at once: nothing counts

		// Something else keeps Run going: the signal is delivered, and its
		// callback ends what kept the loop.
		var keep loop.DelayID
		must(t, l.OnSignal(syscall.SIGUSR2, func(sig syscall.Signal) {
			got = append(got, sig)
			l.OffDelay(keep)
		}, loop.SignalOptions{Unref: true}))
		var err error
		keep, err = l.Delay(time.Hour, func() { t.Error("the keeping timer fired") })
		must(t, err)
		must(t, syscall.Kill(os.Getpid(), syscall.SIGUSR2))
		run(t, l)
		if len(got) != 1 || got[0] != syscall.SIGUSR2 {
			t.Errorf("calls %v, want [SIGUSR2]", got)
		}
		if !l.OffSignal(syscall.SIGUSR2) {
			t.Error("OffSignal found no watch")
		}
	})
}
