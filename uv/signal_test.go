package uv_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

// newSignal creates a Signal event or fails the test.
func newSignal(t testing.TB, r *reactor.Reactor, sig syscall.Signal) *uv.Signal {
	t.Helper()
	s, err := uv.NewSignal(r, sig)
	if err != nil {
		t.Fatalf("NewSignal(%d): %v", sig, err)
	}
	return s
}

// raise sends sig to this process.
func raise(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Fatalf("kill: %v", err)
	}
}

// The whole lifecycle: created, started (Active, counted), a signal
// notifies every callback in subscription order on the loop goroutine with
// the signal as result, stopped (the dispatcher lets go of the signal),
// started again, closed (subscribers hear ErrClosed, Start refused).
func TestSignalLifecycle(t *testing.T) {
	u := uv.UvtNewReactor(t)
	s := newSignal(t, u.Reactor, syscall.SIGUSR1)
	if got, want := s.Info(), "Signal(signum=10)"; got != want {
		t.Errorf("Info = %q, want %q", got, want)
	}
	if got := event.StateOf(s); got != event.Created {
		t.Errorf("state = %v, want created", got)
	}
	var mu sync.Mutex
	var order []int
	ch := make(chan struct{}, 16)
	for i := range 3 {
		event.Subscribe(s, func(ev event.Event, res any, err error) {
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			if i == 2 {
				ch <- struct{}{}
			}
		})
	}
	calls := uv.UvtSubscribe(t, s, u.Owner().Owned)
	uv.UvtMust(t, s.Start())
	if got := u.Stats().Active; got != 1 {
		t.Errorf("Active = %d after Start, want 1", got)
	}
	if got := uv.UvtSignalLines(); got != 1 {
		t.Errorf("dispatcher lines = %d, want 1", got)
	}
	stop := uv.UvtServe(t, u)
	raise(t, syscall.SIGUSR1)
	got := calls.Next(t)
	want := uv.UvtCall{Event: s, Result: syscall.SIGUSR1, OnLoop: true}
	if diff := cmp.Diff(want, got, eqEvent, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("notification (-want +got):\n%s", diff)
	}
	uv.UvtRecv(t, ch, "third callback")
	stop()
	mu.Lock()
	if diff := cmp.Diff([]int{0, 1, 2}, order[:3]); diff != "" {
		t.Errorf("callback order (-want +got):\n%s", diff)
	}
	mu.Unlock()

	uv.UvtMust(t, s.Stop())
	if got := event.StateOf(s); got != event.Stopped {
		t.Errorf("state = %v after Stop, want stopped", got)
	}
	if got := uv.UvtSignalLines(); got != 0 {
		t.Errorf("dispatcher lines = %d after the last Stop, want 0", got)
	}
	if got := u.Stats().Active; got != 0 {
		t.Errorf("Active = %d after Stop, want 0", got)
	}

	// Restart: delivered again.
	uv.UvtMust(t, s.Start())
	uv.UvtMust(t, s.Start()) // counts only
	n := calls.N()
	raise(t, syscall.SIGUSR1)
	uv.UvtTurnUntil(t, u, "a notification after restart", func() bool { return calls.N() > n })
	uv.UvtMust(t, s.Stop())
	if got := uv.UvtSignalLines(); got != 1 {
		t.Errorf("dispatcher lines = %d with one Start left, want 1", got)
	}

	uv.UvtMust(t, s.Close())
	last := calls.Calls()[calls.N()-1]
	if !errors.Is(last.Err, event.ErrClosed) {
		t.Errorf("last notification err = %v, want ErrClosed", last.Err)
	}
	if err := s.Start(); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
	uv.UvtMust(t, s.Close()) // double close: no-op
	if got := uv.UvtSignalLines(); got != 0 {
		t.Errorf("dispatcher lines = %d after Close, want 0", got)
	}
	uv.UvtShutdown(t, u, false)
}

// Listeners on two reactors and two events of one reactor all hear one
// signal; on one reactor, in the order they were started.
func TestSignalManyListeners(t *testing.T) {
	u1, u2 := uv.UvtNewReactor(t), uv.UvtNewReactor(t)
	var mu sync.Mutex
	var seq []string
	record := func(name string) event.CallbackFunc {
		return func(event.Event, any, error) {
			mu.Lock()
			seq = append(seq, name)
			mu.Unlock()
		}
	}
	b := newSignal(t, u1.Reactor, syscall.SIGUSR2)
	a := newSignal(t, u1.Reactor, syscall.SIGUSR2)
	c := newSignal(t, u2.Reactor, syscall.SIGUSR2)
	event.Subscribe(a, record("a"))
	event.Subscribe(b, record("b"))
	ca := uv.UvtSubscribe(t, a, u1.Owner().Owned)
	cc := uv.UvtSubscribe(t, c, u2.Owner().Owned)
	uv.UvtMust(t, b.Start()) // b before a: b is notified first
	uv.UvtMust(t, a.Start())
	uv.UvtMust(t, c.Start())
	if got := uv.UvtSignalLines(); got != 1 {
		t.Errorf("dispatcher lines = %d for one signal, want 1", got)
	}
	raise(t, syscall.SIGUSR2)
	uv.UvtTurnUntil(t, u1, "reactor 1's listeners", func() bool { return ca.N() > 0 })
	uv.UvtTurnUntil(t, u2, "reactor 2's listener", func() bool { return cc.N() > 0 })
	mu.Lock()
	if diff := cmp.Diff([]string{"b", "a"}, seq[:2]); diff != "" {
		t.Errorf("order on one reactor (-want +got):\n%s", diff)
	}
	mu.Unlock()
	if !cc.Calls()[0].OnLoop {
		t.Error("reactor 2's listener did not run on its loop")
	}
	for _, s := range []*uv.Signal{a, b, c} {
		uv.UvtMust(t, s.Close())
	}
	if got := uv.UvtSignalLines(); got != 0 {
		t.Errorf("dispatcher lines = %d, want 0", got)
	}
	uv.UvtShutdown(t, u1, false)
	uv.UvtShutdown(t, u2, false)
}

// Numbers that are no signal, or that cannot or must not be caught, are
// refused with EINVAL; the reactor keeps working.
func TestSignalBadInput(t *testing.T) {
	u := uv.UvtNewReactor(t)
	for _, sig := range []syscall.Signal{0, -1, 65, 1000, syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGPROF, syscall.SIGURG, 32, 33} {
		s, err := uv.NewSignal(u.Reactor, sig)
		if !errors.Is(err, syscall.EINVAL) || s != nil {
			t.Errorf("NewSignal(%d) = %v, %v; want nil, EINVAL", sig, s, err)
		}
	}
	if _, err := uv.NewSignal(nil, syscall.SIGUSR1); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("NewSignal(nil reactor) = %v, want EINVAL", err)
	}
	// Still serving: a good signal works.
	s := newSignal(t, u.Reactor, syscall.SIGUSR1)
	c := uv.UvtSubscribe(t, s, u.Owner().Owned)
	uv.UvtMust(t, s.Start())
	raise(t, syscall.SIGUSR1)
	uv.UvtTurnUntil(t, u, "a notification", func() bool { return c.N() > 0 })
	uv.UvtMust(t, s.Close())
	uv.UvtShutdown(t, u, false)
}

// os/signal.Notify used elsewhere in the program keeps working beside a
// Signal event: both hear the signal, and after the event's last Stop the
// other channel still does.
func TestSignalBesideNotify(t *testing.T) {
	u := uv.UvtNewReactor(t)
	theirs := make(chan os.Signal, 8)
	signal.Notify(theirs, syscall.SIGUSR2)
	defer signal.Stop(theirs)

	s := newSignal(t, u.Reactor, syscall.SIGUSR2)
	c := uv.UvtSubscribe(t, s, u.Owner().Owned)
	uv.UvtMust(t, s.Start())
	raise(t, syscall.SIGUSR2)
	uv.UvtTurnUntil(t, u, "the event's notification", func() bool { return c.N() > 0 })
	if got := uv.UvtRecv(t, theirs, "the other channel's signal"); got != syscall.SIGUSR2 {
		t.Errorf("other channel got %v", got)
	}
	uv.UvtMust(t, s.Stop())
	raise(t, syscall.SIGUSR2)
	if got := uv.UvtRecv(t, theirs, "the other channel's signal after Stop"); got != syscall.SIGUSR2 {
		t.Errorf("other channel got %v", got)
	}
	uv.UvtMust(t, s.Close())
	uv.UvtShutdown(t, u, false)
}

func init() {
	// Ignores SIGHUP, listens to it, and while it listens other code calls
	// signal.Notify for it too. After the last Stop that code must keep
	// hearing SIGHUP, and SIGHUP must stay without effect (before and after
	// that code stops listening): the process prints and exits 0.
	uv.UvtRegisterChild("sighup-ignored", func() int {
		signal.Ignore(syscall.SIGHUP)
		// A child process: no testing.T for UvtNewReactorOn.
		r, err := reactor.New(reactor.Options{})
		if err != nil {
			return 4
		}
		defer r.Close()
		s, err := uv.NewSignal(r, syscall.SIGHUP)
		if err != nil {
			return 4
		}
		heard := make(chan struct{}, 1)
		event.Subscribe(s, func(_ event.Event, _ any, err error) {
			if err == nil {
				heard <- struct{}{}
			}
		})
		s.Start()
		syscall.Kill(os.Getpid(), syscall.SIGHUP)
		for len(heard) == 0 {
			r.RunOnce(context.Background())
		}
		theirs := make(chan os.Signal, 1)
		signal.Notify(theirs, syscall.SIGHUP)
		s.Stop()
		syscall.Kill(os.Getpid(), syscall.SIGHUP)
		select {
		case <-theirs:
		case <-time.After(uv.UvtSafety / 2): // a safety bound, inside the parent's: the signal is on its way
			fmt.Println("the other channel lost SIGHUP at the last Stop")
			return 5
		}
		signal.Stop(theirs)
		syscall.Kill(os.Getpid(), syscall.SIGHUP) // the default would end the process here
		fmt.Println("survived")
		return 0
	})
}

// A signal ignored with signal.Ignore before the first Start stays without
// effect after the last Stop, and the dispatcher never cancels what other
// code registered with signal.Notify meanwhile (signal.Ignore would).
func TestSignalIgnoredBeforeStartBesideNotify(t *testing.T) {
	if out := uv.UvtRunChild(t, "sighup-ignored"); out != "survived\n" {
		t.Errorf("child printed %q, want survived", out)
	}
}

func init() {
	// Listens to SIGHUP, hears one, stops, then raises SIGHUP again: the
	// runtime's default action for it (exit by the signal) must be back.
	uv.UvtRegisterChild("sighup-default", func() int {
		// A child process: no testing.T for UvtNewReactorOn.
		ignored := signal.Ignored(syscall.SIGHUP) // inherited (nohup)
		r, err := reactor.New(reactor.Options{})
		if err != nil {
			return 4
		}
		s, _ := uv.NewSignal(r, syscall.SIGHUP)
		heard := make(chan struct{}, 1)
		event.Subscribe(s, func(event.Event, any, error) { heard <- struct{}{} })
		s.Start()
		syscall.Kill(os.Getpid(), syscall.SIGHUP)
		for len(heard) == 0 {
			r.RunOnce(context.Background())
		}
		s.Stop()
		syscall.Kill(os.Getpid(), syscall.SIGHUP)
		if ignored {
			// Ignored before: ignored again, and the process lives on
			// (a signal a process sends itself, unblocked, is acted on
			// before kill returns).
			fmt.Println("survived")
			return 0
		}
		select {} // the signal ends the process
	})
}

// After the last Stop the signal's disposition is what it was before: for
// SIGHUP the Go runtime's default, which ends the process by the signal.
// A test process started with SIGHUP ignored (under nohup) passes that on
// to its child, whose disposition before was then "ignored": the child
// must survive the SIGHUP it raises after the last Stop.
func TestSignalLastStopRestoresDefault(t *testing.T) {
	cmd := uv.UvtChildCmd(t, "sighup-default")
	if signal.Ignored(syscall.SIGHUP) {
		t.Log("SIGHUP is ignored in this process (nohup?), and so in its child: the child must survive it")
		out, err := cmd.Output()
		if err != nil || string(out) != "survived\n" {
			t.Fatalf("child with SIGHUP ignored from its start: %q, %v; want it to survive", out, err)
		}
		return
	}
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child: %v, want death by SIGHUP", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGHUP {
		t.Fatalf("child status %v, want killed by SIGHUP", ws)
	}
}

// Closing a Signal while deliveries are queued: no notification after the
// ErrClosed one, and the dispatcher lets go.
func TestSignalCloseWhileBusy(t *testing.T) {
	u := uv.UvtNewReactor(t)
	s := newSignal(t, u.Reactor, syscall.SIGUSR1)
	c := uv.UvtSubscribe(t, s, u.Owner().Owned)
	uv.UvtMust(t, s.Start())
	stop := uv.UvtServe(t, u)
	for range 200 {
		raise(t, syscall.SIGUSR1)
	}
	uv.UvtMust(t, s.Close())
	n := c.N()
	for range 50 {
		raise(t, syscall.SIGUSR1)
	}
	stop()
	calls := c.Calls()
	if len(calls) != n || !errors.Is(calls[n-1].Err, event.ErrClosed) {
		t.Errorf("%d notifications (%d at Close), last %+v; want none after the ErrClosed one", len(calls), n, calls[len(calls)-1])
	}
	if got := uv.UvtSignalLines(); got != 0 {
		t.Errorf("dispatcher lines = %d, want 0", got)
	}
	uv.UvtShutdown(t, u, false)
}

// Closing the reactor releases the signals of its started events; signals
// created and dropped without Close leave nothing (GOGC=10).
func TestSignalDropAndReactorClose(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	base, fds := uv.UvtBaseline(t)
	u := uv.UvtNewReactor(t)
	for i := range 1000 {
		s := newSignal(t, u.Reactor, syscall.SIGUSR1+syscall.Signal(i/3%2*2)) // SIGUSR1, SIGUSR2
		if i%3 == 0 {
			uv.UvtMust(t, s.Start())
			if i%9 == 0 {
				uv.UvtMust(t, s.Stop())
			}
		}
	}
	runtime.GC()
	if got := uv.UvtSignalLines(); got != 2 {
		t.Errorf("dispatcher lines = %d with started events, want 2", got)
	}
	uv.UvtShutdown(t, u, false)
	if got := uv.UvtSignalLines(); got != 0 {
		t.Errorf("dispatcher lines = %d after the reactor closed, want 0", got)
	}
	uv.UvtNoLeaks(t, base, fds)
}

// A signal that arrives while no goroutine runs the loop is notified in
// the next turn, never on the dispatcher's goroutine: a caller that looks
// at its state and then calls RunOnce must find the notification there
// (were it delivered in between, outside any turn, RunOnce would wait for
// something that had already happened).
func TestSignalArrivalWaitsForATurn(t *testing.T) {
	u := uv.UvtNewReactor(t)
	s := newSignal(t, u.Reactor, syscall.SIGUSR1)
	c := uv.UvtSubscribe(t, s, u.Owner().Owned)
	uv.UvtMust(t, s.Start())
	for i := 1; i <= 3; i++ {
		raise(t, syscall.SIGUSR1)
		uv.UvtWaitFor(t, "queued notification", func() bool { return uv.UvtSignalQueued(s) })
		if got := c.N(); got != i-1 {
			t.Fatalf("arrival %d: %d notifications before a turn, want %d", i, got, i-1)
		}
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		uv.UvtMust(t, u.RunOnce(ctx)) // must find the queued notification
		cancel()
		if got := c.N(); got != i {
			t.Fatalf("arrival %d: %d notifications after a turn, want %d", i, got, i)
		}
	}
	uv.UvtMust(t, s.Close())
	uv.UvtShutdown(t, u, false)
}

// The last Dispose closes a started Signal and lets go of the signal; a
// panicking callback is reported and the next signal is delivered all the
// same.
func TestSignalDisposeAndPanic(t *testing.T) {
	u := uv.UvtNewReactor(t)
	s := newSignal(t, u.Reactor, syscall.SIGUSR1)
	event.Subscribe(s, func(event.Event, any, error) { panic("callback fault") })
	c := uv.UvtSubscribe(t, s, u.Owner().Owned)
	uv.UvtMust(t, s.Start())
	raise(t, syscall.SIGUSR1)
	uv.UvtTurnUntil(t, u, "the first notification", func() bool { return c.N() == 1 })
	raise(t, syscall.SIGUSR1)
	uv.UvtTurnUntil(t, u, "the second notification", func() bool { return c.N() == 2 })
	reps := u.Reports()
	if len(reps) != 2 || reps[0].Msg != "callback panicked" {
		t.Errorf("reports %v, want two panics reported", reps)
	}
	s.Retain()
	s.Dispose() // not the last reference
	if got := uv.UvtSignalLines(); got != 1 {
		t.Errorf("dispatcher lines = %d while referenced, want 1", got)
	}
	s.Dispose()
	if !s.Flags().Has(event.Closed) || uv.UvtSignalLines() != 0 {
		t.Errorf("after the last Dispose: flags %v, dispatcher lines %d; want Closed, 0", s.Flags(), uv.UvtSignalLines())
	}
	uv.UvtShutdown(t, u, true)
}

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

// The storm's size: signals sent, goroutines allocating meanwhile.
const (
	stormSignals    = 50_000
	stormAllocators = 8
)

// stormListener is one event of the storm and what it heard.
type stormListener struct {
	name string
	sig  syscall.Signal
	n    atomic.Int64
}

func init() { uv.UvtRegisterChild("signal-storm", signalStorm) }

// signalStorm is the child process of TestSignalStorm. Two reactors, five
// Signal events on SIGUSR1 and SIGUSR2 and an os/signal channel on SIGUSR1
// listen while eight goroutines allocate, another runs the collector, and
// the main goroutine sends stormSignals signals, to the process and to
// single threads of it (so that they land on goroutine stacks, in Go code
// and in syscalls alike). Then one last signal of each kind must reach
// every listener: no listener may have fallen off. It prints one line per
// listener, "name=count", and exits 0 if all went well.
func signalStorm() int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, format+"\n", a...)
		return 1
	}
	var rs [2]*reactor.Reactor
	for i := range rs {
		// A child process has no testing.T for UvtNewReactorOn; it reports by
		// its output and exit status.
		r, err := reactor.New(reactor.Options{})
		if err != nil {
			return fail("reactor.New: %v", err)
		}
		rs[i] = r
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var listeners []*stormListener
	var events []*uv.Signal
	add := func(r *reactor.Reactor, name string, sig syscall.Signal) error {
		l := &stormListener{name: name, sig: sig}
		s, err := uv.NewSignal(r, sig)
		if err != nil {
			return err
		}
		event.Subscribe(s, func(event.Event, any, error) { l.n.Add(1) })
		listeners, events = append(listeners, l), append(events, s)
		return s.Start()
	}
	for i, spec := range []struct {
		r   int
		sig syscall.Signal
	}{{0, syscall.SIGUSR1}, {0, syscall.SIGUSR1}, {0, syscall.SIGUSR2}, {1, syscall.SIGUSR1}, {1, syscall.SIGUSR2}} {
		if err := add(rs[spec.r], fmt.Sprintf("r%d.%s.%d", spec.r, unix.SignalName(spec.sig), i), spec.sig); err != nil {
			return fail("listener %d: %v", i, err)
		}
	}
	notified := &stormListener{name: "os-signal.SIGUSR1", sig: syscall.SIGUSR1}
	listeners = append(listeners, notified)
	theirs := make(chan os.Signal, 1)
	signal.Notify(theirs, syscall.SIGUSR1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-theirs:
				notified.n.Add(1)
			case <-ctx.Done():
				return
			}
		}
	}()
	served := make(chan error, len(rs))
	for _, r := range rs {
		go func() { served <- r.Serve(ctx) }()
	}
	for range stormAllocators {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var keep [][]byte
			for i := 0; ctx.Err() == nil; i++ {
				keep = append(keep, make([]byte, 64+i%4096))
				if len(keep) > 256 {
					keep = keep[:0]
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			runtime.GC()
		}
	}()

	pid := os.Getpid()
	for i := range stormSignals {
		sig := syscall.SIGUSR1
		if i%4 == 3 {
			sig = syscall.SIGUSR2
		}
		if i%8 == 0 {
			if tids := threads(); len(tids) > 0 {
				uv.UvtTgkill(pid, tids[rand.IntN(len(tids))], sig)
				continue
			}
		}
		if err := syscall.Kill(pid, sig); err != nil {
			return fail("kill: %v", err)
		}
	}
	// The last round: every listener must hear a signal sent after the
	// storm, so none fell off on the way.
	before := make([]int64, len(listeners))
	for i, l := range listeners {
		before[i] = l.n.Load()
	}
	deadline := time.Now().Add(uv.UvtSafety)
	for i, l := range listeners {
		for l.n.Load() == before[i] {
			if time.Now().After(deadline) {
				return fail("listener %s heard nothing after the storm", l.name)
			}
			syscall.Kill(pid, l.sig)
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	for range rs {
		<-served
	}
	wg.Wait()
	signal.Stop(theirs)
	for _, s := range events {
		s.Close()
	}
	for _, r := range rs {
		if err := r.Close(); err != nil {
			return fail("reactor Close: %v", err)
		}
	}
	if n := uv.UvtSignalLines(); n != 0 {
		return fail("dispatcher lines = %d at the end, want 0", n)
	}
	for _, l := range listeners {
		fmt.Printf("%s=%d\n", l.name, l.n.Load())
	}
	return 0
}

// threads lists the process's thread ids.
func threads() []int {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids
}

// A storm of signals while goroutines allocate and the collector runs: the
// process survives, and every listener (Signal events on two reactors, an
// os/signal channel beside them) was notified, during the storm and after
// it. Deliveries coalesce, so the counts are at most the signals sent.
func TestSignalStorm(t *testing.T) {
	out := uv.UvtRunChild(t, "signal-storm")
	lines := strings.Fields(out)
	if len(lines) != 6 {
		t.Fatalf("child printed %q, want 6 listener counts", out)
	}
	for _, line := range lines {
		name, count, _ := strings.Cut(line, "=")
		n, err := strconv.Atoi(count)
		if err != nil || n < 2 || n > stormSignals+1000 {
			t.Errorf("listener %s heard %q notifications, want between 2 and about %d", name, count, stormSignals)
		}
	}
	t.Logf("notifications per listener (of %d signals, coalesced): %s", stormSignals, strings.Join(lines, " "))
}
