package loop

import (
	"context"
	"fmt"
	"syscall"
	"weak"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Options configure a Loop. The zero value makes a loop on a new reactor
// with the best driver available (libuv when the program is built with
// cgo, the pure-Go driver otherwise).
type Options struct {
	// Reactor, if set, is the reactor the loop runs on; the loop's Close
	// does not close it. Otherwise New makes one from ReactorOptions and
	// the loop's Close closes it.
	Reactor *reactor.Reactor
	// ReactorOptions configure the reactor New makes (ignored with
	// Reactor): ReactorOptions.Driver picks the driver (reactor.DriverAuto,
	// DriverLibuv, DriverGo).
	ReactorOptions reactor.Options
}

// A Loop is EventInterface's event loop over a reactor: timers by id
// (Delay, Repeat), readiness of descriptors (OnReadable, OnWritable), signals
// (OnSignal), Run and Stop, and Suspension. Every registration is an event
// of the reactor like any other (a reactor.Timer, a uv.PollProxy, a
// uv.Signal), so it shows in Stats and in deadlock reports, and the
// reactor's rules hold for it.
//
// Every method is safe from any goroutine. Callbacks run on the loop
// goroutine, one at a time; a callback that blocks stalls the loop. The
// registration tables are loop-owned: each method runs on the loop
// (reactor.Call), at once when called from a callback.
type Loop struct {
	r   *reactor.Reactor
	own bool // the loop made r and closes it

	// Loop-owned (touched only inside r.Call or callbacks).
	nextID  uint64
	delays  map[DelayID]*reactor.Timer
	repeats map[RepeatID]*reactor.Timer
	fds     map[int]*fdEntry
	signals map[syscall.Signal]*uv.Signal
	streams map[uint64]weak.Pointer[Stream] // streams not closed (stream_lifetime.go)
	unhook  func()                          // forgets the reactor-close hook that closes the streams
}

// New makes a loop. With opts.Reactor nil it creates a reactor from
// opts.ReactorOptions; asking for reactor.DriverLibuv in a program built
// without cgo fails with an error matching reactor.ErrNoLibuv.
func New(opts Options) (*Loop, error) {
	l := &Loop{
		r:       opts.Reactor,
		delays:  map[DelayID]*reactor.Timer{},
		repeats: map[RepeatID]*reactor.Timer{},
		fds:     map[int]*fdEntry{},
		signals: map[syscall.Signal]*uv.Signal{},
	}
	if l.r == nil {
		r, err := reactor.New(opts.ReactorOptions)
		if err != nil {
			return nil, fmt.Errorf("loop: New: %w", err)
		}
		l.r, l.own = r, true
	}
	return l, nil
}

// Reactor returns the reactor the loop runs on, for the event kinds the
// interface does not cover (uv.Process, async.Channel, ...).
func (l *Loop) Reactor() *reactor.Reactor {
	if l == nil {
		return nil
	}
	return l.r
}

// Driver returns the driver that turns the loop: reactor.DriverLibuv or
// reactor.DriverGo.
func (l *Loop) Driver() reactor.Driver { return l.Reactor().Driver() }

// Run drives the loop until nothing is left that can happen (no timer,
// watched descriptor, signal or other active event), Stop is called, or
// ctx is done. It returns ctx's error in the last case, and nil otherwise.
// Watched descriptors and signals count as active: a loop serving a socket
// runs until Stop.
func (l *Loop) Run(ctx context.Context) error {
	if err := l.usable("Run"); err != nil {
		return err
	}
	return l.r.Run(ctx)
}

// Stop makes the running Run return after the current turn (from a
// callback or any goroutine). A Stop while Run is not running makes the
// next Run return after one turn.
func (l *Loop) Stop() { l.Reactor().Stop() }

// Suspension returns a new suspension on the loop: a goroutine parks in
// Suspend until a callback calls Resume(v) or Throw(err). A coroutine
// (reactor.Go, reactor.Spawn) suspended with nothing left to resume it is
// reported as deadlocked instead of hanging.
func (l *Loop) Suspension() *async.Suspension[any] {
	s, _ := async.NewSuspension[any](l.Reactor()) // fails only on a nil or zero loop
	return s
}

// Close removes every registration (timers, descriptors, signals), closes
// the loop's streams (each hears OnClose; a CloseFD one closes its
// descriptor) and, if the loop made its reactor, closes the reactor. Other
// descriptors are left open: they belong to the caller. Close from a
// callback is refused when the loop owns its reactor (reactor.ErrRunning).
// Closing twice is a no-op.
func (l *Loop) Close() error {
	if err := l.usable("Close"); err != nil {
		return err
	}
	if l.own {
		return l.r.Close() // its closer closes the streams
	}
	l.r.Call(func() {
		l.closeStreams()
		if l.unhook != nil {
			l.unhook()
			l.streams, l.unhook = nil, nil
		}
		l.deleteAllTimers()
		for fd := range l.fds {
			l.offFD(fd, dirRead)
			l.offFD(fd, dirWrite)
		}
		for sig := range l.signals {
			l.offSignal(sig)
		}
	})
	return nil
}

// exec runs fn on the loop and returns its error, or the reactor's refusal.
func (l *Loop) exec(op string, fn func() error) error {
	if err := l.usable(op); err != nil {
		return err
	}
	var err error
	if e := l.r.Call(func() { err = fn() }); e != nil {
		return fmt.Errorf("loop: %s: %w", op, e)
	}
	return err
}

// off runs fn on the loop and returns what it says was removed; false when
// the reactor is closed (everything was removed then).
func (l *Loop) off(fn func() bool) bool {
	if l.usable("") != nil {
		return false
	}
	var ok bool
	l.r.Call(func() { ok = fn() })
	return ok
}

// usable refuses a nil Loop, or a zero one (New did not make it), with an
// error matching reactor.ErrZeroReactor.
func (l *Loop) usable(op string) error {
	if l == nil || l.r == nil || l.fds == nil {
		return fmt.Errorf("loop: %s on a Loop New did not make: %w", op, reactor.ErrZeroReactor)
	}
	return nil
}

// errNilFunc is the error of a registration without a callback.
func errNilFunc(op string) error {
	return fmt.Errorf("loop: %s: nil callback: %w", op, syscall.EINVAL)
}
