package reactor

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uvevent/uvevent/eventref"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/internal/waiting"
)

// The reactor's state, in named parts. Reactor embeds each part, so the
// code names a field as r.field; the part a field lives in says which lock
// guards it and which goroutine may touch it. "Owner" below is the
// goroutine that owns the loop (ownership): the loop goroutine inside Run,
// RunOnce, RunNoWait or Serve, the goroutine inside a direct operation (Call or Post
// on a loop nobody runs), or Close.

// ownership says who may touch the loop now, and how the others wait for
// it (owner.go).
//
// State, guarded by mu unless atomic:
//
//	owned    false → true (take: Run, Close or a direct operation) → false (letGoLocked)
//	serving  true only while owned by Run, RunOnce, RunNoWait or Serve
//	holder   gid of the goroutine acting as owner now, 0 when nobody. take
//	         and letGoLocked write it with mu held; the owner also lends it,
//	         without mu and blocked meanwhile, to a cooperative coroutine
//	         (baton.go) and hands it to the goroutine that finishes a Close
//	         (handOff). Any goroutine reads it and compares it with its own
//	         gid (ownedByCaller): only the owner can find them equal
//	closing  false → true when the first Shutdown begins; back to false only
//	         if every Shutdown gave up before closing (shutdowns == 0)
//	closed   false → true once, when Shutdown has ownership; never back
//
// Invariants: holder != 0 exactly when owned. closed implies closing. mu
// is never held while user code runs. A goroutine that wants ownership
// while someone has it (Run, Close) counts itself in acquiring and waits
// on free, which letGoLocked broadcasts; while acquiring > 0, release hands
// over at once instead of draining on.
type ownership struct {
	mu        sync.Mutex
	free      *sync.Cond // on mu: ownership was given up
	holder    atomic.Uintptr
	owned     bool
	serving   bool
	closed    bool
	closing   atomic.Bool // constructors and Start refuse while set
	shutdowns int         // Shutdowns in progress
	acquiring int         // Runs and Closes waiting for ownership
}

// queues hold what other goroutines hand the loop, and the wake-up that
// tells a parked loop about it (owner.go, handles.go).
//
// Three slices, for three ways work arrives (docs/architecture.md has the
// table of the ways to submit it):
//
//	queue      Call's and Post's work (both share it) from a goroutine that
//	           does not own the loop; run by the owner: in a turn, before a
//	           direct operation lets go (release), or at Close
//	turnQueue  kind.Host.Queue's work, from kinds; run only in a loop turn
//	           or at Close, never by a direct operation, as libuv delivers
//	           only inside uv_run
//	dropped    ids of C-owned events whose reference the collector took,
//	           handed in by kind.Host.Dropped; closed with queue's work
//
// queue, turnQueue and dropped are guarded by ownership.mu; any goroutine
// appends, the owner takes the whole slice. spare is the owner's alone (the
// last drained queue, handed back for reuse without the lock). pending is
// set whenever queue or dropped may be non-empty and turnPending whenever
// turnQueue may be, so that a turn with nothing queued takes no lock; both
// are cleared only by the owner, with mu held, as it takes the slices.
//
// How a sender wakes the loop depends on where it sleeps (sleep, wait.go):
// in the kernel, through kern's Wake, called by the one sender that moves
// sleep from inKernel to waking; parked in Go, through wake, a one-slot
// channel any goroutine sends to without blocking and only the parked loop
// goroutine receives from; awake, not at all (the loop looks at its queues
// before it sleeps again). Wake-ups coalesce either way. kern is written by
// the owner only while awake, and read by a sender only after it moved
// sleep to waking. stopReq (Stop) and ctxDone (the running Run's context
// ended) are the two reasons to wake that are not work; any goroutine sets
// them, the run clears them.
type queues struct {
	queue       []func()
	spare       []func()
	turnQueue   []func()
	dropped     []eventref.ID
	pending     atomic.Bool
	turnPending atomic.Bool
	wake        chan struct{}
	sleep       atomic.Int32
	kern        kind.Kernel
	stopReq     atomic.Bool
	ctxDone     atomic.Bool
}

// loopClock is the loop's time and what is due on it (run.go, timer.go).
// Owner only.
//
// now is the clock read at most once per turn: nowFresh is cleared at the
// start of each turn and of each direct operation, and now reads the clock
// on first use after that. Times are milliseconds since epoch on Go's
// monotonic clock. timers holds every started timer by due millisecond;
// park is the timer a parked loop waits on, made once and reset.
type loopClock struct {
	epoch    time.Time
	nowMS    int64
	nowFresh bool
	timers   wheel
	park     *time.Timer
}

// clock is the loop's time in milliseconds since the reactor was created.
func (c *loopClock) clock() int64 { return int64(time.Since(c.epoch) / time.Millisecond) }

// now is the loop's clock for this turn (libuv's uv_now): read on first use
// in a turn and cached for the rest of it, so a turn without timers pays no
// clock read at all.
func (c *loopClock) now() int64 {
	if !c.nowFresh {
		c.nowMS = c.clock()
		c.nowFresh = true
	}
	return c.nowMS
}

// driverState is what the loop turns besides its own queues and timers:
// libuv (loop, nil on the pure-Go driver) or the pure-Go driver's phase
// hooks (run.go, handles.go). Owner only.
//
// uvDirty says libuv has something to do and must be turned before the
// loop parks; uvDue is libuv's next timeout kept as a loop-clock deadline
// (-1: none), so that a park that begins later still wakes for it;
// everyTurn counts started hooks (prepare, check) that need libuv turned on
// every iteration. covered says the last wait looked at the kernel (or had
// the watcher look), so the next turn need not; goTurns counts the waits
// still to park in Go after a wake-up from another goroutine (goPark
// after each); yielded is
// when the loop last let other goroutines run (wait.go). deliverGo is
// deliverGoKernel as a func made once.
type driverState struct {
	loop      *uvcgo.Loop
	uvDue     int64
	uvDirty   bool
	everyTurn int
	hooks     turnHooks
	covered   bool
	goTurns   int
	goPark    int
	yielded   time.Time
	deliverGo func()
}

// watcher is the goroutine that watches the kernel's descriptor in Go's
// netpoller while the loop parks in Go (wait.go, wait_linux.go).
//
// backend is an epoll set of the reactor's own (outerFD), the one loop
// descriptor in the netpoller; watched is the kernel's descriptor while it
// is a member (-1: none), only during a streak of parks in Go. watching and
// polling are set once: watching when the watcher runs (made at the first
// park in Go with a kernel), polling when it could not start (then the loop
// parks at most 1 ms and looks at the kernel itself). fdArmed is the
// owner's: true while the watcher watches; while false (the loop keeps
// turning) the loop looks at the descriptor itself with one poll(2) into
// fdPoll. The watcher goroutine touches only fdReady (it sets it; the loop
// swaps it back), wake and fdRearm (the loop sends to rearm it, Close
// closes it to end it). fdReady is a pointer so that the watcher never
// reaches the Reactor (see drop.go).
type watcher struct {
	backend  *os.File
	outerFD  int
	watched  int
	fdReady  *atomic.Bool
	fdRearm  chan struct{}
	fdArmed  bool
	fdPoll   pollFds
	watching bool
	polling  bool
}

// registry is what lives on the loop: the events and goroutines the
// reactor knows, and the counts derived from them. Owner only.
//
// handles is the id table of C-owned events (and the pure-Go driver's
// handle-like ones), byKind their count by kind for Stats, ahead the
// records of the turn being dispatched that are still to come; closers and
// held are the Go-owned events Close must close (AddCloser, HoldPending);
// active counts active non-hidden events and Holds, what keeps Run going
// and rules out a deadlock; coros are the goroutines the reactor runs;
// work counts operations, timer firings and completions run so far (a turn
// that did nothing leaves it unchanged).
type registry struct {
	handles eventref.Table[kind.Handle]
	byKind  map[string]int
	ahead   []uvcgo.Completion // the records of the turn still to dispatch
	closers map[*closeHook]struct{}
	held    map[waiting.Pending]struct{}
	active  int
	coros   coroutines
	work    uint64
}

// closeState is what Close leaves and waits for (reactor.go, shutdown.go).
//
// waits are the Awaits on this reactor's events, registered from any
// goroutine under ownership.mu, ended by Close with ErrReactorClosed.
// lingers is the work Close waits for once every event is closed
// (kind.Host.Linger), under mu until lingerDone says Close stopped
// looking. finished is made when Close begins and closed when it is over
// (the loop freed, nothing lingering); closeErr is written before that and
// read after. final is what Stats reports after Close, endedAfterClose the
// coroutines that ended since (both under mu).
type closeState struct {
	waits      map[waiting.State]struct{}
	lingers    []lingering
	lingerDone bool
	finished   chan struct{}
	// cut is closed by the Shutdown whose context ends first: the
	// lingering closes left are reset (waitResettable), which closes
	// cutDone once they are (or when nothing was left to reset);
	// resetNames names those it reset. wakeable: the loop still takes
	// Wake (its keeper is open), so cut may wake it. All under mu.
	cut             chan struct{}
	cutDone         chan struct{}
	resetNames      []func() string
	wakeable        bool
	closeErr        error
	final           Stats
	endedAfterClose int
}
