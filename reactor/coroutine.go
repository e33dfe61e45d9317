package reactor

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/caller"
	"github.com/uvevent/uvevent/internal/waiting"
)

// A Coroutine is a function run by the reactor, and the event of its
// result: a future completed with what the function returns (or the panic it
// raised, as a *event.PanicError). It replays its result to late waiters,
// and event.AwaitValue, AwaitAll and AwaitFirst give that result as a T.
//
// There are two kinds, made by two functions:
//
//   - Spawn makes a cooperative coroutine. It runs only while it holds the
//     loop's baton: never at the same time as the reactor's callbacks or
//     its other cooperative coroutines. It gives the baton back when it
//     waits in event.Await (with the context it was given) and gets it
//     again when the wait ends, so its code may touch loop-owned state
//     without locks. Like a callback, it must not block in any other way.
//   - Go makes a goroutine that runs in parallel with the loop: it may
//     block, and it reaches loop state through the events' methods.
//
// While either waits in event.Await, the reactor knows it: when every
// coroutine of the reactor waits, no operation is queued and no active
// event remains, nothing can ever wake them, and each wait ends with an
// error matching event.ErrDeadlock (a *DeadlockError carrying the report).
//
// Cancel cancels the coroutine's context; Close cancels the context of every
// coroutine still running.
//
// A coroutine whose error nobody takes is reported, as Node reports an
// unhandled rejection: "unhandled error", with an *event.UnhandledError
// naming the line that spawned it. One made on the loop while a run drives
// it (in a callback, a queued operation or a cooperative coroutine) is
// reported once, at the end of the loop turn in which it failed, unless a
// callback, a waiter (Await) or a read of its Outcome was attached by then.
// One made from another goroutine (main before Run, a Go coroutine) is its
// maker's, who may Await it after that turn: it is reported only if it is
// collected, or disposed, with its error never read. A coroutine that
// fails with the end of its own context (an error matching
// context.Canceled or the context's cause: Cancel, a cancelled parent,
// Close) is never reported: the program asked for it.
type Coroutine[T any] struct {
	event.Typed[T] // the result: a future only the coroutine completes
	f              *event.Future[T]
	co             *coroutine
}

// coroutine is the reactor's record of one coroutine, whatever its T.
type coroutine struct {
	r      *Reactor
	id     int
	coop   bool
	onLoop bool   // made on the loop while a run drove it (see unhandled.go)
	site   string // where it was made
	cancel context.CancelCauseFunc

	ctx  context.Context // its own, as fn gets it
	done <-chan struct{} // ctx.Done()

	mu      sync.Mutex
	current waiting.State // the wait in progress, for abortWait

	// Loop-owned.
	state coState
	on    []event.Event
	wait  waiting.State
	inOne bool // the wait in progress (wait) is one of ParkOne, for abortWait

	goid int64 // its goroutine's number, as stack dumps show it

	// The baton of a cooperative coroutine (see step).
	wake  func()        // schedule, as a function value made once
	gid   uintptr       // its goroutine (set before fn runs)
	run   signal        // true: the loop lends the baton; false: run on without one (closed)
	yield chan struct{} // its goroutine has started (Spawn waits for it)
	lent  bool          // it holds a lent baton (touched by its goroutine only)
	spare waiting.Spare // its last wait's state, reused (touched by its goroutine only)
}

type coState uint8

const (
	coReady coState = iota
	coRunning
	coWaiting
	coDone
)

var coStateNames = [...]string{"ready", "running", "waiting", "done"}

// coroutines is the reactor's roll of coroutines not finished (loop-owned)
// and the cooperative ones ready to run: those the loop's owner made ready
// during a pass of runReady (loop-owned), and the others (under mu).
type coroutines struct {
	waiting int
	nextID  int
	live    map[*coroutine]struct{} // len is their number

	// Loop-owned: the pass of runReady.
	run    []*coroutine // run[head:] are ready, in order (next takes from the front)
	head   int
	passes int    // steps in this pass
	inPass bool   // runReady is stepping coroutines
	timer  *Timer // hidden, one-shot: its firing runs a pass (see armReady)

	mu    sync.Mutex
	ready []*coroutine // made ready elsewhere, or outside a pass
	armed bool         // a hidden timer will run the ready ones
	arm   func()       // r.armReady, made once (set before any coroutine)

	back signal // the baton comes back to the loop

	// Loop-owned: the coroutines made on the loop that failed in this
	// turn, checked at its end (reportFailures).
	failed []failure
}

func (c *coroutines) init() {
	c.live = map[*coroutine]struct{}{}
	c.back.init()
}

// Spawn makes fn a cooperative coroutine of r and returns its event. It
// first runs on a turn of the loop (Run, RunOnce, RunNoWait, Serve), holding the
// baton; fn gets a context to pass to event.Await, cancelled when fn
// returns, by Cancel, or by r's Close. From the moment r's Close begins
// (in a close notification too) it refuses with ErrReactorClosed. An error
// nobody takes is reported (see Coroutine): at the end of the turn it
// failed in when Spawn was called on the loop, at collection otherwise.
func Spawn[T any](ctx context.Context, r *Reactor, fn func(ctx context.Context) (T, error)) (*Coroutine[T], error) {
	return start(ctx, r, fn, true)
}

// Go runs fn in a new goroutine, in parallel with the loop, as a coroutine
// of r, and returns its event. fn gets a context to pass to event.Await,
// cancelled when fn returns, by Cancel, or by r's Close. Like Spawn, it
// refuses with ErrReactorClosed once r's Close has begun, and its error,
// if nobody takes it, is reported as Spawn's is (see Coroutine).
func Go[T any](ctx context.Context, r *Reactor, fn func(ctx context.Context) (T, error)) (*Coroutine[T], error) {
	return start(ctx, r, fn, false)
}

func start[T any](ctx context.Context, r *Reactor, fn func(context.Context) (T, error), coop bool) (*Coroutine[T], error) {
	switch {
	case r == nil:
		return nil, fmt.Errorf("reactor: coroutine on a nil reactor: %w", syscall.EINVAL)
	case ctx == nil:
		return nil, fmt.Errorf("reactor: coroutine with a nil context: %w", syscall.EINVAL)
	case fn == nil:
		return nil, fmt.Errorf("reactor: nil coroutine function: %w", syscall.EINVAL)
	}
	co := &coroutine{r: r, coop: coop, site: caller.Site(), state: coRunning}
	f := event.NewFuture[T](r)
	link.MakerReports(&f.Base) // see unhandled.go
	c := &Coroutine[T]{Typed: f, f: f, co: co}
	var refused error
	onLoop := r.ownedByCaller()
	if err := r.Call(func() {
		// From the first moment of Close on, nothing new starts: a
		// coroutine started by a close notification would run without
		// the baton, beside Close's callbacks, on a reactor being freed.
		if r.closing.Load() {
			refused = ErrReactorClosed
			return
		}
		r.coros.nextID++
		co.id = r.coros.nextID
		r.coros.live[co] = struct{}{}
		if onLoop {
			r.mu.Lock()
			co.onLoop = r.serving // made on the loop while a run drives it
			r.mu.Unlock()
		}
	}); err != nil || refused != nil {
		return nil, cmp.Or(err, refused)
	}
	var w any = (*coWaiter)(co)
	if coop {
		co.state = coReady
		co.run.init()
		co.yield = make(chan struct{})
		co.wake = co.schedule
		w = (*coopWaiter)(co)
	}
	cctx, cancel := context.WithCancelCause(ctx)
	cctx = waiting.Bind(cctx, w)
	co.cancel, co.ctx, co.done = cancel, cctx, cctx.Done()
	// The end of the coroutine's context ends its current wait: Await need
	// not watch that context for each wait (see the parker of package event).
	stopWatch := context.AfterFunc(cctx, func() { co.abortWait(context.Cause(cctx)) })
	// Close ends what is registered with the reactor's waits: for a
	// coroutine, that cancels its context.
	unregister := r.addWait(closer{co})
	go func() {
		defer cancel(nil)
		defer unregister()
		defer stopWatch()
		co.goid = caller.Goroutine()
		co.gid = uintptr(currentGID())
		if coop {
			// While it holds the baton the coroutine owns the loop: the
			// deadlock guard of Call must know it (see loopOwners).
			loopOwners.Store(co.gid, r)
			defer loopOwners.CompareAndDelete(co.gid, r)
			co.yield <- struct{}{} // Spawn may schedule now
			co.takeBaton()
		}
		// finish runs however fn ends: by returning, panicking (callFn
		// recovers), or runtime.Goexit, which no recover stops: the
		// coroutine then fails with ErrGoexit and the baton still goes back.
		v, err := *new(T), error(ErrGoexit)
		defer func() {
			quit := quit(cctx, err) // before the deferred cancel(nil)
			f.Settle(v, err)
			err := err // a copy for the closure: the variable stays on the stack
			// The outcome first: the roll is updated after it (the queue is
			// in order), so Run cannot end before the outcome is delivered.
			if r.Post(func() {
				co.state = coDone
				delete(r.coros.live, co)
				if err != nil {
					if w := co.failed(c, &f.Base, err, quit); w != nil {
						watchCollected(c, w)
					}
				}
			}) != nil {
				r.coroutineEndedAfterClose()
				if err != nil && !quit {
					watchCollected(c, &collected{r: r, b: &f.Base, err: err, site: co.site})
				}
			}
			if coop {
				co.giveBack() // for good
			}
		}()
		v, err = callFn(cctx, fn)
	}()
	if coop {
		<-co.yield
		co.schedule()
	}
	return c, nil
}

// callFn runs fn, turning a panic into its error.
func callFn[T any](ctx context.Context, fn func(context.Context) (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicError(p)
		}
	}()
	return fn(ctx)
}

// Done reports whether the coroutine has finished and its result is
// delivered.
func (c *Coroutine[T]) Done() bool { return c.usable() && c.f.Done() }

// Cancel cancels the coroutine's context (with context.Canceled). A
// coroutine waiting in event.Await with it wakes with that error.
func (c *Coroutine[T]) Cancel() {
	if c.usable() {
		c.co.cancel(nil)
	}
}

// ID returns the coroutine's number, unique within its reactor.
func (c *Coroutine[T]) ID() int {
	if !c.usable() {
		return 0
	}
	return c.co.id
}

// Info describes the coroutine: its kind, number, where it was made and
// what it does now, e.g. "Coroutine 3 spawned at app/main.go:10, waiting at
// app/main.go:14 on Timer(timeout=1s)". Parallel ones (Go) are
// "Goroutine"s. Where a coroutine waits is read from a dump of the
// goroutines' stacks: Info is for reports and debugging, not a hot path.
//
// The stacks are dumped outside the loop, between two looks at the
// coroutine: a first one that finds it waiting, and the one described.
func (c *Coroutine[T]) Info() string {
	if !c.usable() {
		return "event(" + event.ErrNilEvent.Error() + ")"
	}
	var s string
	var waits bool
	if err := c.co.r.Call(func() { s, waits = c.co.describe(nil), c.co.state == coWaiting }); err != nil || !waits {
		if err != nil {
			return c.co.name() + " (" + err.Error() + ")"
		}
		return s
	}
	sites := caller.Waiting()
	if err := c.co.r.Call(func() { s = c.co.describe(sites) }); err != nil {
		return c.co.name() + " (" + err.Error() + ")"
	}
	return s
}

func (co *coroutine) name() string {
	kind := "Goroutine"
	if co.coop {
		kind = "Coroutine"
	}
	return fmt.Sprintf("%s %d spawned at %s", kind, co.id, co.site)
}

// describe runs with the loop held; sites maps goroutines to where they
// wait (caller.Waiting), nil when not known.
func (co *coroutine) describe(sites map[int64]string) string {
	if co.state != coWaiting {
		return co.name() + ", " + coStateNames[co.state]
	}
	infos := make([]string, len(co.on))
	for i, ev := range co.on {
		infos[i] = describeEvent(ev)
	}
	where := ""
	if w := sites[co.goid]; w != "" {
		where = " at " + w
	}
	return co.name() + ", waiting" + where + " on " + strings.Join(infos, ", ")
}

// record returns the reactor's record of the coroutine.
func (c *Coroutine[T]) record() *coroutine { return c.co }

// describeEvent is ev's Info, but for a coroutine without what it waits on
// (coroutines that wait on each other would describe each other forever).
// It runs with the loop held.
func describeEvent(ev event.Event) string {
	if c, ok := ev.(interface{ record() *coroutine }); ok {
		co := c.record()
		return co.name() + ", " + coStateNames[co.state]
	}
	return ev.Info()
}

// coWaiter is the waiter (internal/waiting) a parallel coroutine's context carries.
type coWaiter coroutine

func (w *coWaiter) BeginWait(events []event.Event, ws waiting.State) {
	co := (*coroutine)(w)
	if !co.own() {
		return // another goroutine waits with the coroutine's context: not the coroutine's wait
	}
	co.setCurrent(ws)
	// A wait that ends by itself, or on an event of another owner (which
	// this reactor cannot see), can never be part of this reactor's deadlock.
	if ws.Bounded() || slices.ContainsFunc(events, func(ev event.Event) bool {
		return event.OwnerOf(ev) != co.r.Owner()
	}) {
		return
	}
	if co.r.ownedByCaller() {
		co.begin(events, ws)
	} else {
		co.r.Post(func() { co.begin(events, ws) })
	}
}

func (co *coroutine) begin(events []event.Event, ws waiting.State) {
	co.state = coWaiting
	co.on = events
	co.wait = ws
	co.r.coros.waiting++
}

func (w *coWaiter) EndWait() {
	co := (*coroutine)(w)
	if !co.own() {
		return
	}
	co.setCurrent(nil)
	if co.r.ownedByCaller() {
		co.end()
	} else {
		co.r.Post(co.end)
	}
}

func (co *coroutine) end() {
	if co.state == coWaiting {
		co.state = coRunning
		co.r.coros.waiting--
	}
	co.on, co.wait, co.inOne = nil, nil, false
}

// own reports whether the caller is the coroutine's own goroutine.
func (co *coroutine) own() bool { return uintptr(currentGID()) == co.gid }

// setCurrent records the wait in progress; a wait that begins after the
// coroutine's context ended is aborted at once.
func (co *coroutine) setCurrent(ws waiting.State) {
	co.mu.Lock()
	co.current = ws
	co.mu.Unlock()
	if ws != nil {
		select {
		case <-co.done:
			co.abortWait(context.Cause(co.ctx))
		default:
		}
	}
}

// abortWait ends the wait in progress when the coroutine's context ends.
func (co *coroutine) abortWait(cause error) {
	co.mu.Lock()
	ws := co.current
	co.mu.Unlock()
	if ws != nil {
		ws.Abort(cause)
	}
	if co.coop {
		// A wait of ParkOne is loop-owned: it is aborted on the loop, or
		// here once the reactor has closed (nothing runs the loop then).
		abort := func() {
			if co.inOne {
				co.wait.Abort(cause)
			}
		}
		if co.r.Post(abort) != nil {
			abort()
		}
	}
}

// Covers tells Await that the coroutine's own cancellation ends its waits
// on this reactor's events when the reactor closes: they need no
// registration of their own.
func (w *coWaiter) Covers(o event.Owner) bool {
	ow, ok := o.(*owner) // a type check: no interface comparison on Await's fast path
	return ok && (*Reactor)(ow) == w.r
}

// closer is the coroutine as the reactor's Close sees it: a wait to end,
// which cancels the coroutine's context.
type closer struct{ co *coroutine }

func (c closer) Abort(err error) { c.co.cancel(err) }
func (c closer) Done() bool      { return false }
func (c closer) Bounded() bool   { return false }

// coroutineEndedAfterClose counts a coroutine that ended after its
// reactor's Close (it ran on, blocked outside Await): the figures Stats
// reports after Close must not keep it alive.
func (r *Reactor) coroutineEndedAfterClose() {
	r.mu.Lock()
	r.endedAfterClose++
	r.mu.Unlock()
}
