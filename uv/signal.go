package uv

import (
	"fmt"
	"math/bits"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// A Signal is an event notified on the loop goroutine each time the process
// receives one of its POSIX signals (one or several), while it is started.
// Its callbacks get the signal that came (a syscall.Signal) as the result,
// so one Signal and one callback can serve SIGINT and SIGTERM alike.
//
// Signals reach the loop through os/signal, never through libuv's
// uv_signal_t: libuv installs its handlers without SA_ONSTACK, which can
// crash a Go program when a signal lands on a goroutine's stack, and its
// last uv_signal_stop sets SIG_DFL instead of restoring what was there (see
// docs/signals.md). One process-wide dispatcher serves every reactor: per
// signal number it registers one channel with signal.Notify at the first
// Start of any Signal event, and calls signal.Stop on it at the last Stop,
// which hands the signal back to what the Go runtime did before (its
// default action, or SIG_IGN if the program started with the signal
// ignored). A signal the program had ignored with signal.Ignore before the
// first Start is the exception: the dispatcher never calls signal.Ignore
// (it would cancel the signal.Notify registrations of other code, and
// os/signal does not tell whether there are any), so at the last Stop it
// keeps its registration and drops what arrives: the signal stays without
// effect on the process, but signal.Ignored reports false and children
// started afterwards do not inherit SIG_IGN (docs/signals.md).
//
// Listeners of one signal are notified in the order they were started.
// Deliveries coalesce: a signal that arrives while a listener's previous
// notification of that same signal is still queued on its loop is folded
// into it. The contract is that every signal that arrives after Start has
// returned is followed by at least one notification, carrying it, of every
// started listener of that signal. A Signal of several signals is never
// told one for another: those queued together are told one after the
// other, by signal number.
//
// A Signal is a Go-owned event (flag GoOwned). While started it is held by
// the dispatcher and counts as active: Run does not end while a Signal is
// started. Stop it (or Close it) when done; the reactor's Close closes
// every Signal of it ever started (its subscribers hear event.ErrClosed)
// and so releases their signals too.
type Signal struct {
	event.Base
	r       *reactor.Reactor
	signums []syscall.Signal // one or more, each once, in the order given

	// pending has bit n set while signal n+1 is to be told on the loop: a
	// notification is queued and has not started, and an arrival of that
	// signal meanwhile coalesces into it. Set by the dispatcher, taken on
	// the loop.
	pending atomic.Uint64
	// closer closes the event at the reactor's Close (from its first Start
	// until it closes).
	closer reactorCloser
}

type signalOps Signal

// NewSignal returns a Signal event for signum and the more signals given
// (NewSignal(r, syscall.SIGINT, syscall.SIGTERM)) on r; a signal listed
// twice is watched once. It is not started. Numbers that are not signals
// (0, negative, above 64), signals that cannot be caught (SIGKILL,
// SIGSTOP), the synchronous faults Go cannot deliver to a program (SIGSEGV,
// SIGBUS, SIGFPE, SIGILL: the runtime makes them panics of the goroutine
// that faulted), and those the Go runtime keeps for itself (SIGPROF; SIGURG,
// which it sends to preempt goroutines, so a listener would hear arrivals
// no one sent; the C library's 32 and 33) are refused with an error
// matching syscall.EINVAL: one such signal in the list refuses it all.
func NewSignal(r *reactor.Reactor, signum syscall.Signal, more ...syscall.Signal) (*Signal, error) {
	if err := checkReactor("NewSignal", r); err != nil {
		return nil, err
	}
	signums := []syscall.Signal{signum}
	for _, sig := range more {
		if !slices.Contains(signums, sig) {
			signums = append(signums, sig)
		}
	}
	for _, sig := range signums {
		if why := signalRefused(sig); why != "" {
			return nil, fmt.Errorf("uv: NewSignal(%d): %s: %w", int(sig), why, syscall.EINVAL)
		}
	}
	s := &Signal{r: r, signums: signums}
	eventkind.Init(&s.Base, (*signalOps)(s), true, event.GoOwned)
	return s, nil
}

// signalRefused says why signum cannot be listened to, or "" if it can.
func signalRefused(signum syscall.Signal) string {
	switch {
	case signum <= 0 || signum > 64:
		return "not a signal number"
	case signum == syscall.SIGKILL || signum == syscall.SIGSTOP:
		return "cannot be caught"
	case signum == syscall.SIGSEGV || signum == syscall.SIGBUS || signum == syscall.SIGFPE || signum == syscall.SIGILL:
		return "a synchronous fault, which the Go runtime turns into a panic of the faulting goroutine"
	case signum == syscall.SIGPROF:
		return "reserved by the Go runtime's profiler"
	case signum == syscall.SIGURG:
		return "sent by the Go runtime to preempt goroutines"
	case signum == 32 || signum == 33:
		return "reserved by the C library's threads"
	}
	return ""
}

// Signum returns the signal the event listens to: the first given to
// NewSignal.
func (s *Signal) Signum() syscall.Signal {
	if s == nil || len(s.signums) == 0 {
		return 0
	}
	return s.signums[0]
}

// deliverSignal runs on the loop for a delivery the dispatcher queued: it
// tells each signal pending, by number, while the event is started.
func (s *Signal) deliverSignal() {
	for mask := s.pending.Swap(0); mask != 0; mask &= mask - 1 {
		if eventkind.LoopRefs(s) == 0 || s.Flags().Has(event.Closed) {
			return
		}
		eventkind.Notify(&s.Base, syscall.Signal(bits.TrailingZeros64(mask)+1), nil)
	}
}

func (o *signalOps) Owner() event.Owner { return o.r.Owner() }
func (o *signalOps) Event() event.Event { return (*Signal)(o) }

// Arm adds the event to its signal's listeners (registering the signal
// with os/signal if it is the first) and arranges for the reactor's Close
// to close it.
func (o *signalOps) Arm() error {
	if err := onReactorClose(&o.closer, o.r, (*Signal)(o)); err != nil {
		return err
	}
	signals.add((*Signal)(o))
	return nil
}

// Disarm removes the event from its signal's listeners; the last one
// gives the signal back (signal.Stop).
func (o *signalOps) Disarm() { signals.remove((*Signal)(o)) }

func (o *signalOps) Free(bool) { o.closer.forget() }

func (o *signalOps) Describe() string {
	nums := make([]string, len(o.signums))
	for i, sig := range o.signums {
		nums[i] = fmt.Sprint(int(sig))
	}
	return "Signal(signum=" + strings.Join(nums, ",") + ")"
}

// signals is the process-wide dispatcher: one line per signal number in
// use, shared by every reactor.
var signals = dispatcher{lines: map[syscall.Signal]*signalLine{}}

type dispatcher struct {
	mu    sync.Mutex
	lines map[syscall.Signal]*signalLine
}

// A signalLine is one signal number in use: its os/signal channel, the
// goroutine forwarding from it, and its listeners in subscription order.
// listeners is copied on write, so the forwarder reads it without the lock.
// A line without listeners is parked: it exists only for a signal that was
// ignored before its first Start, and drops what arrives.
type signalLine struct {
	signum     syscall.Signal
	ch         chan os.Signal
	quit       chan struct{}
	listeners  atomic.Pointer[[]*Signal]
	wasIgnored bool // signal.Ignored before the line registered
}

// add appends s to the listeners of each of its signals, opening lines
// as needed.
func (d *dispatcher) add(s *Signal) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, signum := range s.signums {
		d.addTo(s, signum)
	}
}

func (d *dispatcher) addTo(s *Signal, signum syscall.Signal) {
	l := d.lines[signum]
	if l == nil {
		l = &signalLine{signum: signum, ch: make(chan os.Signal, 1), quit: make(chan struct{})}
		l.wasIgnored = signal.Ignored(signum)
		l.listeners.Store(&[]*Signal{})
		d.lines[signum] = l
		go l.forward()
	}
	old := *l.listeners.Load()
	if len(old) == 0 {
		// A new line registers; a parked one registers again, since a
		// signal.Ignore or signal.Reset meanwhile cancelled its
		// registration (Notify of a registered channel changes nothing).
		signal.Notify(l.ch, signum)
	}
	ls := append(slices.Clone(old), s)
	l.listeners.Store(&ls)
}

// remove takes s out of its signal's listeners; removing the last closes
// the line: signal.Stop gives the signal back to the runtime's default (or
// the SIG_IGN the program started with). The line of a signal the program
// had ignored with signal.Ignore before is parked instead (see Signal).
// Removing a listener that is not there does nothing. A Signal of
// several signals is taken out of each line.
func (d *dispatcher) remove(s *Signal) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, signum := range s.signums {
		d.removeFrom(s, signum)
	}
}

func (d *dispatcher) removeFrom(s *Signal, signum syscall.Signal) {
	l := d.lines[signum]
	if l == nil {
		return
	}
	old := *l.listeners.Load()
	i := slices.Index(old, s)
	if i < 0 {
		return
	}
	ls := slices.Delete(slices.Clone(old), i, i+1)
	l.listeners.Store(&ls)
	if len(ls) > 0 || l.wasIgnored {
		return
	}
	delete(d.lines, signum)
	signal.Stop(l.ch)
	close(l.quit)
}

// listening returns how many signal numbers have listeners now (parked
// lines do not count).
func (d *dispatcher) listening() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, l := range d.lines {
		if len(*l.listeners.Load()) > 0 {
			n++
		}
	}
	return n
}

// forward passes each arrival to every listener's loop, in subscription
// order. A listener whose previous notification is still queued is not
// queued again (the arrival, its bit set, coalesces into it).
//
// It queues with kind.Host.Queue, not Reactor.Post: Post runs its function
// at once in the caller when no goroutine runs the loop, and a
// notification delivered there, outside any turn, is one a RunOnce called
// right after never sees (it then waits for something that already
// happened). Queued, it runs in the next turn.
func (l *signalLine) forward() {
	for {
		select {
		case <-l.ch:
		case <-l.quit:
			return
		}
		bit := uint64(1) << (l.signum - 1)
		for _, s := range *l.listeners.Load() {
			if s.pending.Or(bit) == 0 { // nothing was queued: queue it
				if kind.HostOf(s.r.Owner()).Queue(s.deliverSignal) != nil {
					s.pending.Store(0) // reactor closed: its Close closed s
				}
			}
		}
	}
}
