package reactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventref"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/internal/waiting"
)

// Errors of the reactor itself. Event errors (ErrClosed, ErrDeadlock, ...)
// are those of package event.
var (
	// ErrRunning: Run, RunOnce, RunNoWait or Serve was called while the loop runs.
	ErrRunning = errors.New("reactor: loop already running")
	// ErrReactorClosed: the reactor was closed (or its Close has begun).
	ErrReactorClosed = errors.New("reactor: closed")
)

// ErrNoLibuv: the libuv driver was asked for in a program built without
// cgo, or a kind that has no pure-Go implementation was created on the
// pure-Go driver (every kind of package uv has one).
var ErrNoLibuv = uvcgo.ErrNoLibuv

// A Driver is what turns a reactor's loop: libuv, or pure Go.
type Driver uint8

const (
	// DriverAuto picks libuv when the program is built with cgo, the pure-Go
	// driver otherwise.
	DriverAuto Driver = iota
	// DriverLibuv is libuv's loop, through the C shim.
	DriverLibuv
	// DriverGo is the pure-Go driver: every kind of package uv, with an
	// epoll set per reactor that the loop goroutine waits on itself (see
	// Run) and goroutines for blocking work; a kind with no pure-Go
	// implementation refuses with ErrNoLibuv.
	DriverGo
)

// String names the driver: "auto", "libuv", "go".
func (d Driver) String() string {
	switch d {
	case DriverLibuv:
		return "libuv"
	case DriverGo:
		return "go"
	}
	return "auto"
}

// Set sets d from its name ("libuv", "go" or "auto"), so that a Driver is a
// flag.Value: flag.Var(&opts.Driver, "driver", "libuv, go or auto").
func (d *Driver) Set(name string) error {
	for _, x := range []Driver{DriverAuto, DriverLibuv, DriverGo} {
		if x.String() == name {
			*d = x
			return nil
		}
	}
	return fmt.Errorf("reactor: unknown driver %q (want libuv, go or auto): %w", name, syscall.EINVAL)
}

// Options configure a reactor. The zero value is fine.
type Options struct {
	// Driver chooses the loop's driver; the zero value picks libuv when
	// it is linked in (see Driver).
	Driver Driver
	// Logger receives reports (panicking callbacks, unhandled errors,
	// results never used) when OnReport is nil. Default: slog.Default().
	Logger *slog.Logger
	// OnReport, if set, receives every report instead of the logger. It
	// runs on the loop goroutine and must not block. Two reports come
	// from other goroutines: one made after Close (a failed future the
	// collector finds later), from the goroutine that makes it (or to
	// Logger), and the watchdog's report of a blocked loop, from the
	// watchdog's goroutine with a nil event (see BlockedAfter). Calls of
	// OnReport never overlap, whichever goroutines make them: one waits
	// for the other to return (a report made inside OnReport, on its own
	// goroutine, is handed over at once).
	OnReport func(ev event.Event, msg string, err error)
	// BlockedAfter is the watchdog's threshold: while Run or Serve drives
	// the loop, a callback that keeps it from finishing its turn for
	// longer is reported (a BlockedError,
	// matching ErrBlocked) while it blocks, and again with its event when
	// it returns; meanwhile Stats answers without waiting for the loop.
	// 0 means 1 second; a negative value turns the watchdog off. The
	// watchdog looks at the loop every quarter of it, and not at all while
	// the loop is parked: an idle reactor wakes nothing.
	BlockedAfter time.Duration
}

// A Reactor owns one libuv loop and drives it from one goroutine at a time:
// the goroutine inside Run, RunOnce, RunNoWait or Serve (the loop goroutine). Its
// Owner is the event.Owner of every event created on it. See the package
// documentation for the threading contract.
type Reactor struct {
	opts Options

	// The state, in named parts (state.go): each part's doc says which
	// lock guards its fields and which goroutine may touch them.
	ownership
	queues
	loopClock
	driverState
	watcher
	registry
	closeState

	reporting reportLock // one OnReport call at a time

	drop *dropped // what the collector frees if the reactor is dropped (drop.go)
	wd   watchdog // the blocked-loop watchdog (watchdog.go)

	// oneShot is what every timer that does not repeat points to
	// (Timer.c): a one-shot timer is one allocation, its Timer.
	oneShot timerConf

	stats struct {
		iterations, queued, wakeups, yields atomic.Uint64
	}
}

// New creates a reactor with its loop. A Driver that is none of DriverAuto,
// DriverLibuv and DriverGo is refused with an error matching syscall.EINVAL.
func New(opts Options) (*Reactor, error) {
	if opts.Driver > DriverGo {
		return nil, fmt.Errorf("reactor: New: unknown driver %d: %w", opts.Driver, syscall.EINVAL)
	}
	var loop *uvcgo.Loop
	if opts.Driver != DriverGo {
		var err error
		loop, err = uvcgo.NewLoop()
		switch {
		case err == nil:
			opts.Driver = DriverLibuv
		case opts.Driver == DriverAuto && errors.Is(err, uvcgo.ErrNoLibuv):
			opts.Driver = DriverGo
		default:
			return nil, err
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	r := &Reactor{
		opts:        opts,
		queues:      queues{wake: make(chan struct{}, 1)},
		loopClock:   loopClock{epoch: time.Now()},
		driverState: driverState{loop: loop, uvDue: -1, goPark: goParkTurns},
		watcher:     watcher{fdRearm: make(chan struct{}, 1), fdReady: new(atomic.Bool), watched: -1},
		registry:    registry{byKind: map[string]int{}},
	}
	if loop != nil {
		r.kern = &uvKernel{loop: loop}
	}
	r.oneShot.r = r
	r.deliverGo = r.deliverGoKernel
	r.trackDrop()
	r.coros.init()
	r.coros.arm = r.armReady // made once: a method value passed on allocates
	r.free = sync.NewCond(&r.mu)
	return r, nil
}

// Driver returns the driver that turns the loop: DriverLibuv or DriverGo
// (DriverAuto for a nil or zero Reactor, which no driver turns).
func (r *Reactor) Driver() Driver {
	if r == nil {
		return DriverAuto
	}
	return r.opts.Driver
}

// activeDelta counts active, non-hidden events (its owner's ActiveDelta,
// eventkind.OwnerHooks). Events call it on the loop goroutine; from any other
// goroutine the change is posted to the loop, so the count is never touched
// without ownership. Applications declare work the reactor cannot see with
// Hold instead.
func (r *Reactor) activeDelta(n int) {
	if r == nil {
		return
	}
	if r.ownedByCaller() {
		r.active += n
		return
	}
	r.Post(func() { r.active += n })
}

// report hands a report to Options.OnReport or logs it (event.Owner's
// Report). A panic in OnReport is logged, never propagated.
func (r *Reactor) report(ev event.Event, msg string, err error) {
	if r == nil {
		event.LogReport(nil, ev, msg, err)
		return
	}
	if r.opts.OnReport != nil {
		defer r.reporting.enter()()
		defer func() {
			if p := recover(); p != nil {
				r.opts.Logger.Error("uvevent: OnReport panicked", slog.Any("panic", p))
			}
		}()
		r.opts.OnReport(ev, msg, err)
		return
	}
	event.LogReport(r.opts.Logger, ev, msg, err)
}

// Hold marks work the reactor cannot see as pending, such as a goroutine
// outside the reactor that will resolve a future: until release is called,
// Run does not return for lack of active events and no deadlock is reported.
func (r *Reactor) Hold() (release func(), err error) {
	if err := r.Call(func() { r.active++ }); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { r.Post(func() { r.active-- }) }) }, nil
}

// addWait is the waiter registry event.Await looks for on an owner
// (internal/waiting.Registry): Close ends the waits still registered with
// ErrReactorClosed, so no waiter hangs on a closed reactor.
func (r *Reactor) addWait(w waiting.State) (remove func()) {
	if w == nil {
		return func() {}
	}
	if r.usable() != nil {
		w.Abort(ErrZeroReactor)
		return func() {}
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		w.Abort(ErrReactorClosed)
		return func() {}
	}
	if r.waits == nil {
		r.waits = map[waiting.State]struct{}{}
	}
	r.waits[w] = struct{}{}
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.waits, w)
		r.mu.Unlock()
	}
}

// abortWaits ends every registered wait; called by Close.
func (r *Reactor) abortWaits() {
	r.mu.Lock()
	waits := r.waits
	r.waits = nil
	r.mu.Unlock()
	for w := range waits {
		w.Abort(ErrReactorClosed)
	}
}

// Stats is a snapshot of a reactor's counters. Every figure is a number of
// things (handles, events, calls, turns), none a duration or a size;
// Publish serves it through expvar.
type Stats struct {
	// Gauges: what there is now.
	Handles    map[string]int // live handles, by kind ("tcp", "poll", ...): C handles, and the pure-Go driver's descriptors
	CHandles   int            // handles the C shim has allocated and not freed (0 on the pure-Go driver)
	Active     int            // active, non-hidden events: what keeps Run going
	Timers     int            // timers queued on the wheel, hidden ones too
	Coroutines int            // goroutines run by the reactor (Spawn, Go), not finished
	Waiting    int            // of those, how many wait in Await now
	Running    bool           // a goroutine drives the loop now (Run, RunOnce, RunNoWait or Serve)

	// Counters: totals since New, never decreasing (rates come from the
	// difference between two readings).
	Crossings  uint64 // calls from Go into the C shim (0 on the pure-Go driver)
	Iterations uint64 // loop turns
	Queued     uint64 // operations queued from other goroutines (Post, Call, and every method called off the loop)
	Wakeups    uint64 // times a parked loop was woken early

	// Blocked is how long a callback has blocked the loop, once the
	// watchdog reported it (0 otherwise); the loop-owned gauges above
	// (Handles to Waiting) are then left out rather than waited for.
	Blocked time.Duration
}

// Stats returns the reactor's counters. Safe from any goroutine, and after
// Close (which leaves the figures of its last turn). On the loop goroutine of
// another reactor, which may not wait for this loop, only the atomic counters
// (Iterations, Queued, Wakeups, Running) are filled in.
func (r *Reactor) Stats() Stats {
	if r.usable() != nil {
		return Stats{}
	}
	var s Stats
	if err := r.statsNow(&s); errors.Is(err, ErrReactorClosed) {
		r.mu.Lock()
		s = r.final
		s.Coroutines = max(0, s.Coroutines-r.endedAfterClose)
		s.Waiting = min(s.Waiting, s.Coroutines) // an ended coroutine waits no more
		r.mu.Unlock()
	}
	r.mu.Lock()
	s.Running = r.serving
	r.mu.Unlock()
	s.Iterations = r.stats.iterations.Load()
	s.Queued = r.stats.queued.Load()
	s.Wakeups = r.stats.wakeups.Load()
	s.Blocked = time.Duration(r.wd.blocked.Load())
	return s
}

// loopStats reads the loop-owned counters; call it with ownership.
func (r *Reactor) loopStats() Stats {
	s := Stats{Handles: make(map[string]int, len(r.byKind))}
	for k, n := range r.byKind {
		if n > 0 {
			s.Handles[k] = n
		}
	}
	if r.loop != nil {
		s.CHandles = r.loop.Handles()
		s.Crossings = r.loop.Crossings()
	}
	s.Active = r.active
	s.Timers = r.timers.count
	s.Coroutines = len(r.coros.live)
	s.Waiting = r.coros.waiting
	return s
}

// Close shuts the reactor down gracefully and frees its loop: it is
// Shutdown with no deadline.
func (r *Reactor) Close() error { return r.Shutdown(context.Background()) }

// Shutdown closes the reactor in one call, from any goroutine but the loop
// goroutine itself (ErrRunning there):
//
//  1. From its first moment, constructors and Start refuse with
//     ErrReactorClosed, so nothing a callback does can keep the reactor open.
//  2. A Run, RunOnce, RunNoWait or Serve running in another goroutine is stopped, and
//     Shutdown waits for it to return. If ctx ends in this step, its error
//     is returned and the reactor stays open, stopped, for a later Close.
//  3. Operations queued before run; then every event the reactor holds is
//     closed — started timers, C-owned events (their subscribers get
//     ErrClosed), Go-owned events — and the reactor is closed from here on.
//  4. Shutdown waits, blocked in libuv rather than spinning, for every
//     close callback and every libuv request in flight (a request whose
//     handle closed completes with ErrClosed; one already running on the
//     thread pool, such as a file read, cannot be taken back and runs to
//     its end), then frees the loop; waits still registered end with
//     ErrReactorClosed. (The pure-Go driver has no libuv: its file work
//     runs in goroutines that Shutdown does not wait for; so do lookups on
//     either driver, whose resolvers' contexts Shutdown cancels.)
//  5. It waits for the work that outlives the events it closed: a child
//     being terminated (a closed Command's, a KillOnClose Process's, one given
//     Terminate) is signalled, escalated to SIGKILL after its grace period,
//     and reaped before Shutdown returns, and its output read to its end,
//     for a bounded time when a process it started holds it (see
//     uv.OutputWait); and a connection's lingering close (uv.IO.Close with
//     bytes still queued) flushes, or is reset past its linger time.
//
// ctx bounds steps 4 and 5 too: if it ends first, every lingering close
// still pending is reset at once (its peer reads ECONNRESET; its drop, a
// uv.DropError with the bytes dropped, is reported to Options.OnReport
// before Shutdown returns), and Shutdown returns an error matching
// ErrCloseIncomplete and ctx.Err() whose text names the connections it
// reset and what is still running. The reactor is closed all the same;
// what was left finishes in the background (a request's completion, the
// kill of a child), and a later Close waits for it. Close, with no
// deadline, bounds each lingering close by its own linger time only. With a context that cannot end (Close), every
// step runs on the calling goroutine; otherwise steps 4 and 5, when there
// is something to wait for, run on a goroutine of their own, where close
// notifications that come late (a request's ErrClosed) run.
//
// Step 3 closes the pending futures that have subscribers and the
// channel and pool operations waiting in line too: their subscribers hear
// an error matching both event.ErrClosed and ErrReactorClosed (a wait on
// one ends with ErrReactorClosed, in step 4 or at its coroutine's end).
// Go-owned events that are not started (a timer never started, a future
// nobody subscribed to) are not known to the reactor; operations on them
// afterwards return ErrReactorClosed. Closing again waits, bounded by its
// ctx, for the end of the first Close, and returns nil.
func (r *Reactor) Shutdown(ctx context.Context) error {
	if err := r.usable(); err != nil {
		return err
	}
	if ctx == nil {
		return fmt.Errorf("reactor: Shutdown: %w", event.ErrNilContext)
	}
	me := uintptr(currentGID())
	if r.holder.Load() == me {
		return fmt.Errorf("reactor: Close from inside the loop: %w", ErrRunning)
	}
	if err := r.usable(); err != nil {
		return err
	}
	r.mu.Lock()
	if r.closed {
		// Closed already: wait for the end of that Close (a child it
		// terminates, a request it waits for), bounded by ctx.
		r.mu.Unlock()
		if err := r.waitClosed(ctx, nil); errors.Is(err, ErrCloseIncomplete) {
			return err
		}
		return nil
	}
	// closing stays set while any Shutdown is in progress: one whose
	// context ends gives up only its own claim.
	r.shutdowns++
	r.closing.Store(true)
	defer func() {
		r.mu.Lock()
		if r.shutdowns--; r.shutdowns == 0 && !r.closed {
			r.closing.Store(false)
		}
		r.mu.Unlock()
	}()
	// Stop whatever runs the loop and wait for ownership: a run may start
	// while a direct operation finishes (it checked closing before this
	// Shutdown set it), so look again each time ownership changes hands.
	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		r.free.Broadcast()
		r.mu.Unlock()
	})
	for r.owned && !r.closed {
		if r.serving {
			r.stopReq.Store(true)
			r.signal()
		}
		if err := ctx.Err(); err != nil {
			r.mu.Unlock()
			stop()
			return err
		}
		r.acquiring++
		r.free.Wait()
		r.acquiring--
	}
	stop()
	if err := r.acquire(me); err != nil {
		r.mu.Unlock()
		if errors.Is(err, ErrReactorClosed) {
			return nil // closed meanwhile by another Close
		}
		return err
	}
	// From here on nothing new is queued (Call and Post return
	// ErrReactorClosed); what was queued before runs now, and then
	// everything it may have opened is closed.
	r.closed = true
	r.finished = make(chan struct{})
	r.cut, r.cutDone = make(chan struct{}), make(chan struct{})
	r.mu.Unlock()
	finished := false
	defer func() {
		if !finished {
			// runtime.Goexit in a close notification is ending this
			// goroutine: close what is left and free the loop all the same.
			r.endResets()
			r.closeEvents()
			r.waitLibuv()
			r.closeErr = r.finishClose()
			close(r.finished)
		}
	}()
	r.drain()
	r.closeEvents()
	r.reportFailures() // the last turn's, and those of the close
	var pending []string
	if ctx.Done() != nil {
		pending = r.quiesce()
	}
	if ctx.Done() == nil || len(pending) == 0 && !r.anyLingering() {
		// Nothing to give up on: settle here.
		r.closeErr = r.settle()
		finished = true
		close(r.finished)
		return r.closeErr
	}
	r.handOff()
	finished = true
	return r.waitClosed(ctx, pending)
}

// finishClose frees the loop once everything is closed, gives up
// ownership, ends the waits still registered and stops the watcher.
func (r *Reactor) finishClose() error {
	final := r.loopStats()
	var err error
	if r.loop != nil {
		err = r.loop.Close()
	}
	r.mu.Lock()
	r.final = final
	r.mu.Unlock()
	r.drop.closedByClose()
	r.release()
	r.abortWaits()
	if r.watching {
		r.backend.Close()
		close(r.fdRearm) // the watcher goroutine sees the closed descriptor and ends
	}
	return err
}

// ErrZeroReactor: a Reactor that New did not make (the zero value) cannot
// be used. It matches syscall.EINVAL.
var ErrZeroReactor = fmt.Errorf("reactor: zero Reactor (use reactor.New): %w", syscall.EINVAL)

// usable refuses a nil or zero Reactor.
func (r *Reactor) usable() error {
	if r == nil || r.wake == nil {
		return ErrZeroReactor
	}
	return nil
}

// closeEvents closes every handle and timer, every Go-owned event
// registered with AddCloser and every pending one held (HoldPending), and
// runs what that queues. Nothing can be
// opened any more (closing is set), so each round leaves less behind and
// the rounds end. What libuv still has to do then is waitLibuv's.
func (r *Reactor) closeEvents() {
	for {
		r.handles.Each(func(id eventref.ID, h kind.Handle) { r.safely(func() { h.HandleEvent().Close() }) })
		for r.timers.count > 0 {
			r.timers.advance(maxDue, func(t *Timer) { r.safely(func() { t.Close() }) })
		}
		r.runClosers()
		r.closeHeld()
		r.drain()
		if r.timers.count == 0 && len(r.closers) == 0 && len(r.held) == 0 && r.allClosing() {
			break
		}
	}
}

// allClosing reports whether every handle in the table has been closed.
func (r *Reactor) allClosing() bool {
	all := true
	r.handles.Each(func(_ eventref.ID, h kind.Handle) {
		if !h.HandleEvent().Flags().Has(event.Closed) {
			all = false
		}
	})
	return all
}

// reportLock serializes the calls of Options.OnReport: reports come from
// the loop, from the watchdog and, after Close, from the goroutines of the
// collector's cleanups. The goroutine holding it may report again inside
// OnReport without waiting for itself.
type reportLock struct {
	mu     sync.Mutex
	holder atomic.Uintptr // the goroutine in OnReport, or 0
}

// enter takes the lock (unless the caller holds it) and returns its release.
func (l *reportLock) enter() (leave func()) {
	me := uintptr(currentGID())
	if l.holder.Load() == me {
		return func() {}
	}
	l.mu.Lock()
	l.holder.Store(me)
	return func() {
		l.holder.Store(0)
		l.mu.Unlock()
	}
}
